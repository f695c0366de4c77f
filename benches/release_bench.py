#!/usr/bin/env python3
"""Install and upgrade of a chart by navique-operator and by real Helm v4.2.3
(helm-python-sdk) against the same embedded API server, in one run.

    cargo build --release
    python3 benches/release_bench.py [--chart ../shared/charts/cert-manager-v1.21.1.tgz] [--rounds 5]

Client CPU time: for navique-operator, the child process's user+system time
(getrusage RUSAGE_CHILDREN); for Helm, this Python process's own CPU time
around the call (Helm runs in-process through the SDK's shared library).
Wall time: the whole action. Both sides wait for readiness (Helm's watcher
wait; our --wait) against simulated controllers with a 20 ms delay, and both
install with crds.enabled=true (crds.keep=false, so each round's uninstall
removes them) so the CRDs go through the same path.
"""
import argparse, json, os, resource, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def ours(args, kubeconfig):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run([os.path.join(ROOT, "target/release/navique-operator"), *args, "--kubeconfig", kubeconfig],
                   check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def helm(fn):
    c = time.process_time()
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t, time.process_time() - c


def main():
    import helm_python
    ap = argparse.ArgumentParser()
    ap.add_argument("--chart", default=os.path.join(ROOT, "../shared/charts/cert-manager-v1.21.1.tgz"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp()
    kubeconfig = os.path.join(tmp, "kubeconfig")
    server = subprocess.Popen([os.path.join(ROOT, "target/release/navique-sandbox"), "--kubeconfig", kubeconfig,
                               "--ready-delay-ms", "20"], stderr=subprocess.DEVNULL)
    try:
        while not os.path.exists(kubeconfig):
            time.sleep(0.02)
        results = {k: [] for k in ["ours install", "ours upgrade", "helm install", "helm upgrade"]}
        for i in range(a.rounds):
            ns = f"bench-ours-{i}"
            results["ours install"].append(ours(["install", "cm", a.chart, "-n", ns, "--create-namespace", "--wait",
                                                 "--set", "crds.enabled=true", "--set", "crds.keep=false"], kubeconfig))
            results["ours upgrade"].append(ours(["upgrade", "cm", a.chart, "-n", ns, "--wait", "--set", "crds.enabled=true", "--set", "crds.keep=false",
                                                 "--set", "replicaCount=2"], kubeconfig))
            ours(["uninstall", "cm", "-n", ns], kubeconfig)
            ns = f"bench-helm-{i}"
            cfg = helm_python.Config(kubeconfig_path=kubeconfig, namespace=ns)
            results["helm install"].append(helm(lambda: cfg.install(a.chart, "cm", {"crds": {"enabled": True, "keep": False}}, namespace=ns,
                                                                      create_namespace=True, wait="watcher", timeout=120)))
            results["helm upgrade"].append(helm(lambda: cfg.upgrade(a.chart, "cm", {"crds": {"enabled": True, "keep": False}, "replicaCount": 2},
                                                                      namespace=ns, wait="watcher", timeout=120)))
            cfg.uninstall("cm", wait="watcher", timeout=120)
        med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in results.items()}
        chart = os.path.basename(a.chart)
        lines = [f"| action ({chart}, median of {a.rounds}) | navique-operator wall | Helm wall | wall ratio | navique-operator CPU | Helm CPU | CPU ratio |",
                 "|---|---:|---:|---:|---:|---:|---:|"]
        for action in ["install", "upgrade"]:
            (ow, oc), (hw, hc) = med[f"ours {action}"], med[f"helm {action}"]
            lines.append(f"| {action} | {ow*1000:.0f} ms | {hw*1000:.0f} ms | {hw/ow:.1f}x | {oc*1000:.0f} ms | {hc*1000:.0f} ms | {hc/oc:.1f}x |")
        text = "\n".join(lines) + "\n"
        print(text)
        if a.out:
            with open(a.out, "w") as f:
                f.write(text)
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
