#!/usr/bin/env python3
"""Random, mostly broken, YAML texts read by real Helm (v4.2.3 through
helm-python-sdk): each text goes through `fromYaml` (sigs.k8s.io/yaml over
go-yaml v2, the reader Helm uses for values, Chart.yaml and manifests), which
prints the value or go-yaml's error.

  python3 scripts/yaml_random.py emit N SEED
      JSON {"texts": [base64...], "helm": [line...]} on stdout: what
      tests/properties.rs compares with our engine.
  python3 scripts/yaml_random.py compare N SEED BINARY
      renders the same texts with BINARY (`navique-operator template`) and
      prints how many differ, and the first few.
  python3 scripts/yaml_random.py compare-values N SEED BINARY
      the same with each text as a chart's values.yaml (cut into documents
      by Kubernetes' YAMLReader first): one chart, and one process, a text.
  python3 scripts/yaml_random.py compare-manifests N SEED BINARY
      each text printed by a template as a manifest: Helm's install (client
      dry run) against BINARY's `template --no-hooks`, as
      tests/helm_install_compat.rs compares them.
"""
import base64, json, os, random, shutil, subprocess, sys, tempfile

# base64 keeps the manifest valid YAML whatever the texts read as.
TEMPLATE = 'r:\n{{ range .Values.t }}- {{ fromYaml (b64dec .) | toJson | b64enc }}\n{{ end }}'

FRAGMENTS = [
    "a", "b", "k", "key", "1", "-1", "0x1F", "1.5", "1e3", "true", "no", "null", "~", "2001-12-14",
    ": ", ":", " ", "  ", "\n", "\n", "\n", "\n  ", "\n    ", "\n- ", "- ", "-", "--",
    "[", "]", "{", "}", ", ", ",", "'", "''", "\"", "\\", "\\n", "\\x4", "\\u00e9", "\\q",
    "!", "!!", "!!str ", "!!int ", "!!float ", "!!null ", "!!bool ", "!!binary ", "!!timestamp ",
    "!t!", "!t!!str ", "!<x> ", "!<tag:yaml.org,2002:int> ", "!x!y ", "!'", "!a'b ", "!%41 ", "!%ff ",
    "!foo ", "! ", "&a ", "*a", "&", "*", "&x [*x]", "&b ", "*b", "<<: ", "<<: *a",
    "#c", " #c", "|", ">", "|-", ">+2", "|0", "\t", " \t", "...", "\n...\n", "...\n", "---", "\n---\n",
    "--- ", "%YAML 1.1\n", "%YAML 1.2\n", "%TAG !t! tag:x,2000:\n", "%TAG ! !\n", "%FOO\n",
    "?", "? ", "@", "`", "%", "=", "é", "日本", "\u2028", "\u0085", "\ufeff", "\r\n", "\r",
    "\x00", "\x07", "\x7f", "\x1b", "\x85", "\u00a0",
]
BAD_BYTES = [b"\xff", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xc0\x80", b"\xf4\x90\x80\x80", b"\xfe"]
VALID_LINES = ["k%d: v%d\n", "k%d:\n  - %d\n", "k%d: [%d, x]\n", "k%d: {a: %d}\n", "# comment %d %d\n",
               "k%d: 'q %d'\n", "k%d: |\n  text %d\n"]


def gen(seed, n):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        parts = []
        if rng.random() < 0.25:
            # A valid head long enough to push the damage past go-yaml's
            # 512-byte reader buffer.
            target = rng.randint(300, 1400)
            size = 0
            i = 0
            while size < target:
                line = (rng.choice(VALID_LINES) % (i, i)).encode()
                parts.append(line)
                size += len(line)
                i += 1
        if rng.random() < 0.5:
            # Fragments strung together.
            for _ in range(rng.randint(1, 12)):
                if rng.random() < 0.03:
                    parts.append(rng.choice(BAD_BYTES))
                else:
                    parts.append(rng.choice(FRAGMENTS).encode())
            text = b"".join(parts)
        else:
            # A valid text with a damage or two.
            for i in range(rng.randint(1, 8)):
                parts.append((rng.choice(VALID_LINES) % (i + 100, i)).encode())
            text = b"".join(parts)
            for _ in range(rng.randint(0, 2)):
                at = rng.randint(0, len(text))
                r = rng.random()
                if r < 0.6:
                    frag = rng.choice(FRAGMENTS).encode() if rng.random() > 0.05 else rng.choice(BAD_BYTES)
                    text = text[:at] + frag + text[at:]
                elif at < len(text):
                    text = text[:at] + text[at + 1:]
        if rng.random() < 0.2:
            text += b"\n"
        if rng.random() < 0.03:
            text = rng.choice([b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff"]) + text
        out.append(text)
    return out


def write_chart(d, texts):
    os.makedirs(os.path.join(d, "templates"))
    with open(os.path.join(d, "Chart.yaml"), "w") as f:
        f.write("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    with open(os.path.join(d, "templates", "t.yaml"), "w") as f:
        f.write(TEMPLATE)
    with open(os.path.join(d, "values.yaml"), "w") as f:
        json.dump({"t": [base64.b64encode(t).decode() for t in texts]}, f)


def helm_lines(texts):
    import helm_python
    d = tempfile.mkdtemp(prefix="yr-")
    try:
        write_chart(d, texts)
        out = list(helm_python.Chart.load(d).render(name="r", namespace="ns").values())[0]
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return lines_of(out, len(texts))


def lines_of(out, n):
    return [base64.b64decode(l[2:]).decode("utf-8", "replace")
            for l in out.split("\n") if l.startswith("- ")][:n]


def ours_lines(binary, texts):
    d = tempfile.mkdtemp(prefix="yr-")
    try:
        write_chart(d, texts)
        out = subprocess.run([binary, "template", "r", d], capture_output=True, text=True, errors="replace")
        if out.returncode != 0:
            raise SystemExit(out.stderr)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return lines_of(out.stdout, len(texts))


VALUES_TEMPLATE = "x: {{ toJson .Values | b64enc }}\n"


def values_outcomes(texts, binary=None):
    """What loading and rendering a chart with each text as its values.yaml
    gives: the values as JSON, or the error."""
    import helm_python
    out = []
    d = tempfile.mkdtemp(prefix="yv-")
    try:
        os.makedirs(os.path.join(d, "templates"))
        with open(os.path.join(d, "Chart.yaml"), "w") as f:
            f.write("apiVersion: v2\nname: c\nversion: 0.1.0\n")
        with open(os.path.join(d, "templates", "t.yaml"), "w") as f:
            f.write(VALUES_TEMPLATE)
        for t in texts:
            with open(os.path.join(d, "values.yaml"), "wb") as f:
                f.write(t)
            if binary is None:
                try:
                    r = list(helm_python.Chart.load(d).render(name="r", namespace="ns").values())[0]
                except helm_python.HelmError as e:
                    out.append("error: " + str(e))
                    continue
                except UnicodeDecodeError:
                    # The SDK cannot hand over an error holding bytes that
                    # are not UTF-8: such a text is left out.
                    out.append(None)
                    continue
            else:
                # Bytes: text mode would turn a lone CR into LF.
                p = subprocess.run([binary, "template", "r", d], capture_output=True)
                if p.returncode != 0:
                    err = p.stderr.decode("utf-8", "replace").removesuffix("\n")
                    out.append("error: " + err.removeprefix("Error: "))
                    continue
                r = p.stdout.decode("utf-8", "replace")
            line = [l for l in r.split("\n") if l.startswith("x: ")][0]
            out.append(base64.b64decode(line[3:]).decode("utf-8", "replace"))
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return out


DEBUG_HINT = "\n\nUse --debug flag to render out invalid YAML"


def manifest_outcomes(texts, binary=None):
    import helm_python
    cfg = helm_python.Config(storage_driver="memory")
    out = []
    d = tempfile.mkdtemp(prefix="ym-")
    try:
        os.makedirs(os.path.join(d, "templates"))
        with open(os.path.join(d, "Chart.yaml"), "w") as f:
            f.write("apiVersion: v2\nname: mychart\nversion: 0.1.0\n")
        for t in texts:
            with open(os.path.join(d, "templates", "t.yaml"), "w") as f:
                f.write('{{ b64dec "%s" }}' % base64.b64encode(t).decode())
            if binary is None:
                try:
                    rel = cfg.install(helm_python.Chart.load(d), "rel", dry_run="client", namespace="ns")
                    out.append("ok: " + rel.get("manifest", "").strip() + "\n")
                except helm_python.HelmError as e:
                    out.append("error: " + str(e))
                except UnicodeDecodeError:
                    out.append(None)
            else:
                p = subprocess.run([binary, "template", "rel", d, "-n", "ns", "--no-hooks"], capture_output=True)
                if p.returncode == 0:
                    out.append("ok: " + p.stdout.decode("utf-8", "replace"))
                else:
                    err = p.stderr.decode("utf-8", "replace").removesuffix("\n").removeprefix("Error: ")
                    out.append("error: " + err.removesuffix(DEBUG_HINT))
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return out


def main():
    mode, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    texts = gen(seed, n)
    if mode == "compare-manifests":
        helm = manifest_outcomes(texts)
        ours = manifest_outcomes(texts, sys.argv[4])
        bad = [(t, h, o) for t, h, o in zip(texts, helm, ours)
               if h is not None and h != o and not (b"\x00" in t and o.startswith(h))]
        for t, h, o in bad[:15]:
            print(repr(t)[:300])
            print("  helm:", repr(h[:300]))
            print("  ours:", repr(o[:300]))
        n = sum(1 for h in helm if h is not None)
        print(f"{len(bad)} of {n} manifests read differently")
        return
    if mode == "compare-values":
        helm = values_outcomes(texts)
        ours = values_outcomes(texts, sys.argv[4])
        # The SDK hands errors over as C strings: one holding a NUL is cut.
        bad = [(t, h, o) for t, h, o in zip(texts, helm, ours)
               if h is not None and h != o and not (b"\x00" in t and o.startswith(h))]
        for t, h, o in bad[:15]:
            print(repr(t)[:300])
            print("  helm:", h[:300])
            print("  ours:", o[:300])
        n = sum(1 for h in helm if h is not None)
        print(f"{len(bad)} of {n} values files read differently")
        return
    helm = helm_lines(texts)
    if mode == "emit":
        json.dump({"texts": [base64.b64encode(t).decode() for t in texts], "helm": helm}, sys.stdout)
        return
    ours = ours_lines(sys.argv[4], texts)
    bad = [(t, h, o) for t, h, o in zip(texts, helm, ours) if h != o]
    for t, h, o in bad[:15]:
        print(repr(t)[:300])
        print("  helm:", h[:300])
        print("  ours:", o[:300])
    print(f"{len(bad)} of {len(texts)} texts read differently")


if __name__ == "__main__":
    main()
