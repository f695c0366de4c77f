#!/usr/bin/env python3
"""Helm's own test charts and golden `helm template` commands, out of sample:
what Helm v4.2.3's repository tests with, run through BINARY
(`navique-operator template`) and compared with real Helm.

  python3 scripts/helm_testcharts.py charts BINARY [--helm-git DIR]
      every chart (directory or .tgz) under Helm's testdata directories at
      tag v4.2.3, installed client-side by real Helm (helm-python-sdk, dry
      run, memory storage) and rendered by `BINARY template rel CHART -n
      default --no-hooks`: the manifest (or the error) must be the same.
  python3 scripts/helm_testcharts.py golden BINARY [--helm-git DIR]
      the commands of pkg/cmd/template_test.go, run by BINARY in
      pkg/cmd, against their golden files (real Helm's output, stdout and
      stderr together, as Helm's tests compare them).

Helm's sources come from the bare mirror (default
/work/.mirror/helm+helm/repo). Prints each difference and a count; exits 1
when any differ. tests/helm_testcharts.rs runs both over the same mirror.
"""
import argparse, json, os, shlex, shutil, subprocess, sys, tempfile

TAG = "v4.2.3"
DEFAULT_GIT = "/work/.mirror/helm+helm/repo"

# pkg/cmd/template_test.go (TestTemplateCmd) at v4.2.3: arguments, golden file.
CHART = "testdata/testcharts/subchart"
GOLDEN = [
    (f"template '{CHART}'", "template.txt"),
    (f"template '{CHART}' --set service.name=apache", "template-set.txt"),
    (f"template '{CHART}' --values '{CHART}/charts/subchartA/values.yaml'", "template-values-files.txt"),
    (f"template '{CHART}' --name-template='foobar-{{{{ b64enc \"abc\" | lower }}}}-baz'", "template-name-template.txt"),
    # ("template", "template-no-args.txt"): the command's own name and usage.
    ("template 'testdata/testcharts/lib-chart'", "template-lib-chart.txt"),
    ("template 'testdata/testcharts/chart-bad-type'", "template-chart-bad-type.txt"),
    ("template 'testdata/testcharts/chart-with-template-lib-dep'", "template-chart-with-template-lib-dep.txt"),
    ("template 'testdata/testcharts/chart-with-template-lib-archive-dep'",
     "template-chart-with-template-lib-archive-dep.txt"),
    (f"template --kube-version 1.16.0 '{CHART}'", "template-with-kube-version.txt"),
    (f"template --api-versions helm.k8s.io/test,helm.k8s.io/test2 '{CHART}'", "template-with-api-version.txt"),
    (f"template --api-versions helm.k8s.io/test --api-versions helm.k8s.io/test2 '{CHART}'",
     "template-with-api-version.txt"),
    (f"template '{CHART}' --include-crds", "template-with-crds.txt"),
    (f"template '{CHART}' --show-only templates/service.yaml", "template-show-only-one.txt"),
    (f"template '{CHART}' --show-only templates/service.yaml --show-only charts/subcharta/templates/service.yaml",
     "template-show-only-multiple.txt"),
    (f"template '{CHART}' --show-only templates/subdir/role*", "template-show-only-glob.txt"),
    ("template 'testdata/testcharts/object-order'", "object-order.txt"),
    ("template 'testdata/testcharts/chart-with-template-with-invalid-yaml'", "template-with-invalid-yaml.txt"),
    ("template 'testdata/testcharts/chart-with-template-with-invalid-yaml' --debug",
     "template-with-invalid-yaml-debug.txt"),
    (f"template '{CHART}' --skip-tests", "template-skip-tests.txt"),
    ("template 'testdata/testcharts/issue-9027'", "issue-9027.txt"),
    (f"template '{CHART}' --set configmap.enabled=true --set subchartb.enabled=true", "template-subchart-cm.txt"),
    (f"template '{CHART}' --set configmap.enabled=true --set subchartb.enabled=true --set configmap.value=baz",
     "template-subchart-cm-set.txt"),
    (f"template '{CHART}' -f {CHART}/extra_values.yaml", "template-subchart-cm-set-file.txt"),
]

HELM_INSTALL = r"""
import json, sys, helm_python
cfg = helm_python.Config(storage_driver="memory")
out = []
for path in json.load(sys.stdin):
    try:
        rel = cfg.install(path, "rel", dry_run="client", namespace="default")
        out.append({"manifest": rel.get("manifest", "")})  # omitted when empty
    except helm_python.HelmError as e:
        out.append({"error": str(e)})
    except Exception as e:  # what the SDK itself refuses (not Helm's words)
        out.append({"sdk": f"{type(e).__name__}: {e}"})
print(json.dumps(out))
"""

SDK_DEPS = "chart dependencies are missing; run dependency update/build first: "
CLI_DEPS = ("an error occurred while checking for chart dependencies. You may need to run "
            "'helm dependency build' to fetch missing dependencies: ")
DEBUG_HINT = "\n\nUse --debug flag to render out invalid YAML"


def extract(git, into):
    """Helm's testdata directories at TAG."""
    names = subprocess.run(["git", "--git-dir", git, "ls-tree", "-r", "--name-only", TAG],
                           capture_output=True, text=True, check=True).stdout.split("\n")
    dirs = sorted({n.split("/testdata/")[0] + "/testdata" for n in names if "/testdata/" in n})
    arch = subprocess.run(["git", "--git-dir", git, "archive", TAG, "--"] + dirs,
                          capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", into], input=arch, check=True)


def charts_in(root):
    """Every chart Helm's tests keep: a directory with Chart.yaml, or a
    .tgz, that is not itself inside another chart's charts/."""
    found = []
    for d, subdirs, files in os.walk(root):
        parts = os.path.relpath(d, root).split(os.sep)
        if "charts" in parts[:-1] or (parts and parts[-1] == "charts" and os.path.exists(
                os.path.join(os.path.dirname(d), "Chart.yaml"))):
            continue
        if "Chart.yaml" in files:
            found.append(d)
            subdirs[:] = []
            continue
        found += [os.path.join(d, f) for f in files if f.endswith(".tgz")]
    return sorted(found)


def ours_template(binary, args, cwd=None):
    out = subprocess.run([binary] + args, capture_output=True, text=True, cwd=cwd)
    return out.returncode, out.stdout, out.stderr


def run_charts(binary, root):
    charts = charts_in(root)
    def helm():
        done = subprocess.run([sys.executable, "-c", HELM_INSTALL], input=json.dumps(charts),
                              capture_output=True, text=True, check=True)
        return json.loads(done.stdout)
    # Rendered twice: lines that differ between Helm's own two renders are
    # random (randAlphaNum passwords, generated certificates) and masked.
    want, again = helm(), helm()
    diffs, skipped = [], []
    for path, w, w2 in zip(charts, want, again):
        code, stdout, stderr = ours_template(binary, ["template", "rel", path, "-n", "default", "--no-hooks"])
        # The command ends its error with a newline of its own.
        got = ("ok", stdout) if code == 0 else ("err", stderr.removesuffix("\n").removeprefix("Error: "))
        if "sdk" in w:
            skipped.append((os.path.relpath(path, root), w["sdk"]))
            continue
        if "manifest" in w:
            exp = ("ok", w["manifest"].strip() + "\n")
        else:
            e = w["error"]
            exp = ("err", CLI_DEPS + e[len(SDK_DEPS):] if e.startswith(SDK_DEPS) else e)
        if exp[0] == got[0] == "ok" and w.get("manifest") != w2.get("manifest"):
            a, b, g = exp[1].split("\n"), (w2.get("manifest", "").strip() + "\n").split("\n"), got[1].split("\n")
            if len(a) == len(b) == len(g):
                random = {i for i in range(len(a)) if a[i] != b[i]}
                mask = lambda lines: "\n".join("<random>" if i in random else x for i, x in enumerate(lines))
                exp, got = ("ok", mask(a)), ("ok", mask(g))
        same = exp == got or (exp[0] == got[0] == "err" and got[1].removesuffix(DEBUG_HINT) == exp[1])
        if not same:
            diffs.append((os.path.relpath(path, root), exp, got))
    for name, why in skipped:
        print(f"skipped {name}: the SDK refused it: {why}")
    return len(charts) - len(skipped), diffs


def run_golden(binary, root):
    cwd = os.path.join(root, "pkg", "cmd")
    diffs = []
    for cmd, golden in GOLDEN:
        with open(os.path.join(cwd, "testdata", "output", golden)) as f:
            want = f.read()
        # Helm's tests run with client-go's default version of a test build
        # (v1.20.0); a built Helm v4.2.3 has v1.36.0, as we do.
        want = want.replace('kube-version/minor: "20"', 'kube-version/minor: "36"').replace(
            'kube-version/version: "v1.20.0"', 'kube-version/version: "v1.36.0"')
        code, stdout, stderr = ours_template(binary, shlex.split(cmd), cwd=cwd)
        got = stdout + stderr
        if got != want:
            diffs.append((cmd, want, got))
    return len(GOLDEN), diffs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["charts", "golden"])
    ap.add_argument("binary")
    ap.add_argument("--helm-git", default=DEFAULT_GIT)
    a = ap.parse_args()
    root = tempfile.mkdtemp(prefix="helm-testdata-")
    try:
        extract(a.helm_git, root)
        n, diffs = (run_charts if a.what == "charts" else run_golden)(os.path.abspath(a.binary), root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    import difflib
    for name, want, got in diffs:
        if isinstance(want, tuple):
            want, got = f"{want[0]}: {want[1]}", f"{got[0]}: {got[1]}"
        print(f"=== {name}")
        print("".join(difflib.unified_diff(want.splitlines(True), got.splitlines(True), "helm", "ours", n=1))[:3000])
    print(f"{a.what}: {n - len(diffs)}/{n} the same")
    sys.exit(1 if diffs else 0)


if __name__ == "__main__":
    main()
