#!/usr/bin/env python3
"""The operator against real Helm v4.2.3 (helm-python-sdk), same embedded API
server build, same run.

    cargo build --release
    python3 benches/operator_bench.py [--rounds 3] [--many 200]

Ours: `navique-operator run` as its own process on a fresh navique-sandbox;
the clock starts when a managed PostgresCluster is created and stops when it
reports phase Ready, which takes cert-manager and CloudNativePG installed and
Ready first (their Deployments made Ready by the sandbox after 20 ms) and the
CNPG Cluster emitted; this script plays CloudNativePG and marks that Cluster
Ready as soon as it appears (no CNPG controller runs here). CPU: the operator
process's user+system time over that interval (/proc/PID/stat); the process's
start-up (before the PostgresCluster exists) is excluded from that figure and
reported separately.

Helm: the same two charts installed one after the other with --wait
(watcher), cert-manager with crds.enabled=true as the operator sets it,
in-process through the SDK's shared library on a fresh sandbox of its own;
CPU is this Python process's CPU time around the two installs.

RSS: the operator's VmRSS once converged and idle, then with --many managed
PostgresClusters (10 namespaces) all Ready, and its peak (VmHWM). The free
tier allows two PostgresClusters, so the operator runs with a license key of
this script's (openssl makes it and signs the license: no limits, valid an hour).
"""
import argparse, json, os, re, statistics, subprocess, tempfile, threading, time, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(ROOT, "../shared/charts")
# The binaries measured: the release build; NAVIQUE_BENCH_BIN_DIR points
# elsewhere for a smoke run of the script (its figures then mean nothing).
BIN_DIR = os.environ.get("NAVIQUE_BENCH_BIN_DIR", os.path.join(ROOT, "target/release"))
TICKS = os.sysconf("SC_CLK_TCK")


class Server:
    def __init__(self):
        self.tmp = tempfile.mkdtemp()
        self.kubeconfig = os.path.join(self.tmp, "kubeconfig")
        self.proc = subprocess.Popen([os.path.join(BIN_DIR, "navique-sandbox"), "--kubeconfig", self.kubeconfig,
                                      "--ready-delay-ms", "20"], stderr=subprocess.DEVNULL)
        while not os.path.exists(self.kubeconfig):
            time.sleep(0.01)
        text = open(self.kubeconfig).read()
        self.url = re.search(r"server: (\S+)", text).group(1)
        self.token = re.search(r"token: (\S+)", text).group(1)

    def req(self, method, path, body=None, ctype="application/json"):
        data = None if body is None else json.dumps(body).encode()
        r = urllib.request.Request(self.url + path, data=data, method=method,
                                   headers={"Authorization": f"Bearer {self.token}", "Content-Type": ctype})
        try:
            with urllib.request.urlopen(r) as resp:
                return json.loads(resp.read() or b"null")
        except urllib.error.HTTPError as e:
            if e.code == 404:
                return None
            raise

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def status_kib(pid, key):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def ensure_namespace(s, ns):
    if s.req("GET", f"/api/v1/namespaces/{ns}") is None:
        s.req("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})


def create_pg(s, ns, name):
    s.req("POST", f"/apis/core.navique.com/v1alpha1/namespaces/{ns}/postgresclusters",
          {"apiVersion": "core.navique.com/v1alpha1", "kind": "PostgresCluster", "metadata": {"name": name, "namespace": ns},
           "spec": {"mode": "managed", "managed": {"instances": 1}}})


def play_cnpg(s, stop):
    """What CloudNativePG would do: mark every Cluster Ready."""
    done = set()
    while not stop.is_set():
        lst = s.req("GET", "/apis/postgresql.cnpg.io/v1/clusters")
        for c in (lst or {}).get("items", []):
            key = (c["metadata"]["namespace"], c["metadata"]["name"])
            if key in done:
                continue
            status = {"apiVersion": "postgresql.cnpg.io/v1", "kind": "Cluster", "metadata": {"name": key[1]},
                      "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "ClusterIsReady", "message": "",
                                                 "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}
            s.req("PATCH", f"/apis/postgresql.cnpg.io/v1/namespaces/{key[0]}/clusters/{key[1]}/status?fieldManager=bench-cnpg&force=true",
                  status, "application/apply-patch+yaml")
            done.add(key)
        time.sleep(0.01)


def ready_count(s, names):
    lst = s.req("GET", "/apis/core.navique.com/v1alpha1/postgresclusters") or {"items": []}
    ready = {(p["metadata"]["namespace"], p["metadata"]["name"]) for p in lst["items"] if p.get("status", {}).get("phase") == "Ready"}
    return len(ready & names)


def license(s, features=()):
    """A key pair of this run's and the license Secret it signs (no limits,
    these features); returns the public key's path."""
    import base64, datetime
    key, pub = os.path.join(s.tmp, "license.pem"), os.path.join(s.tmp, "license.pub")
    subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", key], check=True, capture_output=True)
    subprocess.run(["openssl", "pkey", "-in", key, "-pubout", "-out", pub], check=True, capture_output=True)
    expires = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    payload = json.dumps({"licensee": "benchmark", "tier": "enterprise", "expires": expires, "features": list(features)}).encode()
    body = os.path.join(s.tmp, "license.json")
    open(body, "wb").write(payload)
    sig = subprocess.run(["openssl", "pkeyutl", "-sign", "-inkey", key, "-rawin", "-in", body],
                         check=True, capture_output=True).stdout
    ensure_namespace(s, "navique-system")
    s.req("POST", "/api/v1/namespaces/navique-system/secrets", {
        "apiVersion": "v1", "kind": "Secret", "metadata": {"name": "navique-license"},
        "data": {"license.json": base64.b64encode(payload).decode(), "license.sig": base64.b64encode(base64.b64encode(sig)).decode()}})
    return pub


# The benchmarks' operator: no leader election, polls every 200 ms, no metrics port.
BENCH_FLAGS = ("--leader-elect=false", "--metrics-bind", "0", "--health-bind", "0", "--poll-ms", "200")


def start_operator(s, flags=BENCH_FLAGS, features=()):
    """`navique-operator run` on `s`, licensed with this run's key for
    `features`; returns once its Capability objects exist, with the time
    that took."""
    cmd = [os.path.join(BIN_DIR, "navique-operator"), "run", "--kubeconfig", s.kubeconfig, *flags,
           "--license-public-key", license(s, features),
           "--charts-dir", SHARED, "--charts-dir", os.path.join(SHARED, "extra")]
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stderr=subprocess.DEVNULL)
    while s.req("GET", "/apis/core.navique.com/v1alpha1/capabilities/cloudnative-pg") is None:
        time.sleep(0.01)
    return p, time.perf_counter() - t


def tear_down(s, stop, op):
    """Stops the upstream players, the operator (SIGTERM) and the server."""
    stop.set()
    if op:
        op.terminate()
        op.wait()
    s.stop()


def ours_round(many):
    s = Server()
    op = None
    stop = threading.Event()
    try:
        op, startup = start_operator(s)
        startup_cpu = cpu_seconds(op.pid)
        threading.Thread(target=play_cnpg, args=(s, stop), daemon=True).start()
        ensure_namespace(s, "team-a")
        c0 = cpu_seconds(op.pid)
        t = time.perf_counter()
        create_pg(s, "team-a", "app-db")
        while ready_count(s, {("team-a", "app-db")}) < 1:
            time.sleep(0.01)
        out = {"wall": time.perf_counter() - t, "cpu": cpu_seconds(op.pid) - c0, "startup_wall": startup, "startup_cpu": startup_cpu}
        if many:
            time.sleep(5)
            out["idle_rss_kib"] = status_kib(op.pid, "VmRSS")
            names = set()
            for i in range(many):
                ns = f"team-{i % 10}"
                ensure_namespace(s, ns)
                create_pg(s, ns, f"db-{i}")
                names.add((ns, f"db-{i}"))
            t = time.perf_counter()
            while ready_count(s, names) < many:
                time.sleep(0.1)
            out["many_wall"] = time.perf_counter() - t
            time.sleep(5)
            out["many_rss_kib"] = status_kib(op.pid, "VmRSS")
            out["peak_rss_kib"] = status_kib(op.pid, "VmHWM")
        return out
    finally:
        tear_down(s, stop, op)


def helm_round():
    import helm_python
    s = Server()
    try:
        cfg = helm_python.Config(kubeconfig_path=s.kubeconfig)
        c = time.process_time()
        t = time.perf_counter()
        cfg.install(os.path.join(SHARED, "cert-manager-v1.21.1.tgz"), "cert-manager", {"crds": {"enabled": True}},
                    namespace="cert-manager", create_namespace=True, wait="watcher", timeout=120)
        cfg.install(os.path.join(SHARED, "cloudnative-pg-0.29.0.tgz"), "cloudnative-pg", {},
                    namespace="cnpg-system", create_namespace=True, wait="watcher", timeout=120)
        return {"wall": time.perf_counter() - t, "cpu": time.process_time() - c}
    finally:
        s.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--many", type=int, default=200)
    ap.add_argument("--out")
    a = ap.parse_args()
    ours, helm = [], []
    for i in range(a.rounds):
        ours.append(ours_round(a.many if i == 0 else 0))
        helm.append(helm_round())
    med = lambda rows, k: statistics.median(r[k] for r in rows)
    ow, oc, hw, hc = med(ours, "wall"), med(ours, "cpu"), med(helm, "wall"), med(helm, "cpu")
    lines = [
        f"| managed PostgresCluster to Ready (median of {a.rounds}) | navique-operator | Helm (cert-manager + CloudNativePG, --wait) | ratio |",
        "|---|---:|---:|---:|",
        f"| wall | {ow*1000:.0f} ms | {hw*1000:.0f} ms | {hw/ow:.1f}x |",
        f"| CPU | {oc*1000:.0f} ms | {hc*1000:.0f} ms | {hc/oc:.1f}x |",
        "",
        f"Operator process start-up (not in the figures above): {med(ours, 'startup_wall')*1000:.0f} ms wall to its Capability objects, "
        f"{med(ours, 'startup_cpu')*1000:.0f} ms CPU.",
    ]
    first = ours[0]
    if "idle_rss_kib" in first:
        lines += ["",
                  f"Operator RSS: {first['idle_rss_kib']/1024:.1f} MiB idle after converging; with {a.many} managed PostgresClusters "
                  f"all Ready: {first['many_rss_kib']/1024:.1f} MiB (peak {first['peak_rss_kib']/1024:.1f} MiB); "
                  f"the {a.many} took {first['many_wall']:.1f} s to be Ready."]
    text = "\n".join(lines) + "\n"
    print(text)
    print(json.dumps({"ours": ours, "helm": helm}))
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
