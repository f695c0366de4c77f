#!/usr/bin/env python3
"""`list -A -a` over many large release Secrets: navique-operator against real
Helm v4.2.3 (helm-python-sdk), same embedded API server, same run.

    cargo build --release
    python3 benches/list_bench.py [--releases 1000] [--kb 460] [--rounds 3]

Each release is one Secret of about --kb KB (Helm's record: base64 of the gzip
of its JSON, with an incompressible values blob), spread over 50 namespaces,
written straight to the server. Both sides are whole processes: `navique-operator
list -A -a -o json`, and a Python process that imports helm_python and calls
`Config.list(all_states=True, all_namespaces=True)` (Python with helm_python
loaded and no list is reported as Helm's baseline). Peak RSS: the child's
maximum resident set (getrusage RUSAGE_CHILDREN, one wrapper per run).
"""
import argparse, base64, gzip, json, os, random, statistics, string, subprocess, sys, tempfile, time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("NAVIQUE_BIN", os.path.join(ROOT, "target", "release", "navique-operator"))
SANDBOX = os.environ.get("NAVIQUE_SANDBOX_BIN", os.path.join(ROOT, "target", "release", "navique-sandbox"))

HELM_LIST = r"""
import sys, helm_python
cfg = helm_python.Config(kubeconfig_path=sys.argv[1])
if sys.argv[2] == "list":
    n = len(cfg.list(all_states=True, all_namespaces=True))
    assert n == int(sys.argv[3]), n
"""

MEASURE = r"""
import resource, subprocess, sys, time
t = time.perf_counter()
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
wall = time.perf_counter() - t
print(wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def measured(cmd):
    out = subprocess.run([sys.executable, "-c", MEASURE] + cmd, capture_output=True, text=True, check=True)
    wall, rss = out.stdout.split()
    return float(wall), int(rss) / 1024


def record(name, ns, kb, rng):
    blob = "".join(rng.choices(string.ascii_letters + string.digits, k=kb * 1024 * 3 // 4))
    rel = {"name": name, "namespace": ns, "version": 1,
           "info": {"first_deployed": "2026-12-01T10:00:00Z", "last_deployed": "2026-12-01T10:00:00Z",
                    "deleted": "", "description": "Install complete", "status": "deployed"},
           "chart": {"metadata": {"name": "big", "version": "1.2.3", "appVersion": "9.9", "apiVersion": "v2"}},
           "config": {"blob": blob},
           "manifest": f"---\n# Source: big/templates/cm.yaml\nkind: ConfigMap\nmetadata:\n  name: {name}\n"}
    payload = base64.b64encode(gzip.compress(json.dumps(rel).encode(), 1)).decode()
    return {"apiVersion": "v1", "kind": "Secret", "type": "helm.sh/release.v1",
            "metadata": {"name": f"sh.helm.release.v1.{name}.v1", "namespace": ns,
                         "labels": {"name": name, "owner": "helm", "status": "deployed", "version": "1"}},
            "data": {"release": base64.b64encode(payload.encode()).decode()}}


def post(server, path, body):
    req = urllib.request.Request(server + path, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req).read()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--releases", type=int, default=1000)
    ap.add_argument("--kb", type=int, default=460)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp()
    kubeconfig = os.path.join(tmp, "kubeconfig")
    server = subprocess.Popen([SANDBOX, "--kubeconfig", kubeconfig, "--no-simulate"], stdout=subprocess.DEVNULL)
    try:
        while not os.path.exists(kubeconfig) or not open(kubeconfig).read().strip():
            time.sleep(0.05)
        url = next(l.split("server:")[1].strip() for l in open(kubeconfig) if "server:" in l)
        rng = random.Random(7)
        namespaces = [f"list-{i:02d}" for i in range(50)]
        for ns in namespaces:
            post(url, "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        t = time.perf_counter()
        for i in range(a.releases):
            ns = namespaces[i % len(namespaces)]
            post(url, f"/api/v1/namespaces/{ns}/secrets", record(f"rel-{i:04d}", ns, a.kb, rng))
        print(f"seeded {a.releases} release Secrets of ~{a.kb} KB in {time.perf_counter() - t:.1f} s", flush=True)
        ours, helm = [], []
        for _ in range(a.rounds):
            ours.append(measured([BIN, "list", "-A", "-a", "-o", "json", "--kubeconfig", kubeconfig]))
            helm.append(measured([sys.executable, "-c", HELM_LIST, kubeconfig, "list", str(a.releases)]))
            print(f"ours {ours[-1][0]:6.2f} s {ours[-1][1]:7.1f} MB   helm {helm[-1][0]:6.2f} s {helm[-1][1]:7.1f} MB", flush=True)
        baseline = measured([sys.executable, "-c", HELM_LIST, kubeconfig, "none", "0"])[1]
        med = lambda xs, i: statistics.median(x[i] for x in xs)
        summary = (f"| {a.releases} x ~{a.kb} KB | {med(ours, 0):.2f} | {med(helm, 0):.2f} | {med(helm, 0) / med(ours, 0):.1f}x "
                   f"| {max(x[1] for x in ours):.1f} | {max(x[1] for x in helm):.1f} | {baseline:.1f} |")
        print(summary)
        if a.out:
            with open(a.out, "a") as f:
                f.write("\n## `list -A -a` over many large releases: navique-operator vs Helm v4.2.3\n\n")
                f.write(f"Reproduce: `cargo build --release && python3 benches/list_bench.py --releases {a.releases} --kb {a.kb} "
                        f"--rounds {a.rounds}`. Release Secrets written straight to the embedded API server (50 namespaces); "
                        "both sides whole processes, medians of the rounds, peak RSS the maximum. Ours pages through the "
                        "Secrets' metadata and reads one body per release; Helm lists every Secret whole.\n\n")
                f.write("| releases | ours s | Helm s | speed-up | ours peak MB | Helm peak MB | Helm baseline MB |\n"
                        "|---|---:|---:|---:|---:|---:|---:|\n")
                f.write(summary + "\n")
    finally:
        server.terminate()


if __name__ == "__main__":
    main()
