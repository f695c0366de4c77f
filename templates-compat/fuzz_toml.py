#!/usr/bin/env python3
"""Random comparison of fromToml with real Helm: mutated TOML texts.

Usage: python3 templates-compat/fuzz_toml.py [N] [SEED] [OUTDIR]

Mutates the documents of cases.py (TOML_VALUES, TOML_ERRORS), renders each
through Helm v4.2.3 (helm_python) and writes OUTDIR/fuzz.json in the format
of expected/*.json. Compare with our engine:

  TC_EXPECTED_DIR=OUTDIR cargo test --test templates_compat templates_compat_corpus
"""
import json, os, random, shutil, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import helm_python  # noqa: E402
from cases import TOML_VALUES, TOML_ERRORS, toml_case  # noqa: E402
from regenerate import CHART_YAML, render_case  # noqa: E402

ALPHABET = [b'"', b"'", b'\\', b'.', b'=', b'[', b']', b'{', b'}', b',', b'#', b'\n', b' ', b'\t', b'-', b'+',
            b'_', b':', b'T', b'Z', b'e', b'0', b'1', b'9', b'x', b'a', b'\r', b'\x00', b'\x01', b'\xff', b'\xc3',
            b'\xc3\xa9', b'"""', b"'''", b'\\u', b'\\x', b'inf', b'nan', b'1979-05-27', b'07:32:00', b'[[', b']]',
            b'true', b'\x7f']


def mutate(rng, doc):
    b = bytearray(doc)
    for _ in range(rng.randint(1, 6)):
        op = rng.randrange(5)
        i = rng.randint(0, len(b))
        if op == 0 or not b:
            b[i:i] = rng.choice(ALPHABET)
        elif op == 1:
            del b[i:i + rng.randint(1, 3)]
        elif op == 2:
            b[i:i + 1] = rng.choice(ALPHABET)
        elif op == 3:
            j = rng.randint(0, len(b))
            b[i:i] = b[min(i, j):max(i, j)][:20]
        else:
            other = rng.choice(TOML_VALUES + TOML_ERRORS)
            b[i:i] = other[:rng.randint(0, len(other))]
    return bytes(b)


def render_batch(cases):
    d = tempfile.mkdtemp(prefix="tf-")
    try:
        os.makedirs(os.path.join(d, "templates"))
        with open(os.path.join(d, "Chart.yaml"), "w") as f:
            f.write(CHART_YAML)
        open(os.path.join(d, "values.yaml"), "w").close()
        for i, c in enumerate(cases):
            with open(os.path.join(d, "templates", f"t{i:04d}.yaml"), "w") as f:
                f.write(c["template"])
        try:
            out = helm_python.Chart.load(d).render(None, name="rel", namespace="ns")
        except helm_python.HelmError:
            return None
        return [{"output": {"mychart/templates/t.yaml": out[f"mychart/templates/t{i:04d}.yaml"]}}
                for i in range(len(cases))]
    finally:
        shutil.rmtree(d, ignore_errors=True)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    outdir = sys.argv[3] if len(sys.argv) > 3 else "/tmp/tomlfuzz"
    rng = random.Random(seed)
    seeds = TOML_VALUES + TOML_ERRORS
    cases = [{"name": f"fuzz-{i:05d}", "template": toml_case(mutate(rng, rng.choice(seeds)))} for i in range(n)]
    out = []
    for k in range(0, n, 100):
        chunk = cases[k:k + 100]
        res = render_batch(chunk) or [render_case(c) for c in chunk]
        for c, r in zip(chunk, res):
            rec = dict(c)
            rec.update(r)
            out.append(rec)
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "fuzz.json"), "w") as f:
        json.dump({"helm": helm_python.helm_sdk_version(), "cases": out}, f, indent=1, ensure_ascii=False)
    print(f"{n} cases -> {outdir}/fuzz.json")


if __name__ == "__main__":
    main()
