#!/usr/bin/env python3
"""The operator at scale on the embedded API server: 1,000 external and 100
managed PostgresClusters across 50 namespaces.

    cargo build --release
    python3 benches/scale_bench.py [--external 1000] [--managed 100] [--namespaces 50] [--idle 300]

`navique-operator run` runs as its own release-mode process, as deployed
(leader election on, the default 2 s poll), against a fresh release-mode
`navique-sandbox` (Deployments Ready after 20 ms). Every PostgresCluster is
created at once; the clock runs until all report phase Ready. The managed
ones need cert-manager and CloudNativePG installed first, then a CNPG
Cluster each: no CloudNativePG runs here, so this script plays it and marks
each Cluster Ready as it appears (as the operator benchmark does).

Reported: the time until all are Ready; PostgresCluster reconciles per
second over it (the operator's navique_reconcile_total); the operator's RSS
once converged and its peak (VmHWM); the API requests it made per
reconcile (counted by the server, /sandbox/requests, watches apart); and
the requests it made in --idle seconds of steady state once converged, by
verb and resource (the goal: none beyond watches and the leader's Lease).
"""
import argparse, json, os, re, socket, sys, threading, time, urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import operator_bench as ob  # noqa: E402  (Server, license, play_cnpg, /proc readers)

AGENT = "navique-operator"
API = "/apis/core.navique.com/v1alpha1"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def requests(s):
    """The server's count of the operator's requests, by (verb, resource)."""
    out = {}
    for c in s.req("GET", "/sandbox/requests") or []:
        if c["agent"] == AGENT:
            out[(c["verb"], c["resource"])] = c["count"]
    return out


def beyond_watches(counts):
    return sum(n for (verb, _), n in counts.items() if verb != "watch")


def diff(after, before):
    return {k: n - before.get(k, 0) for k, n in after.items() if n != before.get(k, 0)}


def reconciles(metrics_port, kind="PostgresCluster"):
    text = urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics").read().decode()
    return sum(float(m.group(1)) for m in re.finditer(
        r'^navique_reconcile_total\{kind="%s",result="[a-z]+"\} (\S+)$' % kind, text, re.M))


def ready_names(s):
    lst = s.req("GET", f"{API}/postgresclusters") or {"items": []}
    return {(p["metadata"]["namespace"], p["metadata"]["name"]) for p in lst["items"]
            if p.get("status", {}).get("phase") == "Ready"}


def create_all(s, a):
    names = set()
    for n in range(a.namespaces):
        ns = f"scale-{n}"
        ob.ensure_namespace(s, ns)
        s.req("POST", f"/api/v1/namespaces/{ns}/secrets", {
            "apiVersion": "v1", "kind": "Secret", "metadata": {"name": "pg-conn"},
            "stringData": {"host": "db.example", "port": "5432", "username": "app", "password": "bench", "dbname": "app"}})
    for i in range(a.external + a.managed):
        ns = f"scale-{i % a.namespaces}"
        name = f"ext-{i}" if i < a.external else f"man-{i}"
        spec = ({"mode": "external", "external": {"connectionSecretRef": {"name": "pg-conn"}}} if i < a.external
                else {"mode": "managed", "managed": {"instances": 1}})
        s.req("POST", f"{API}/namespaces/{ns}/postgresclusters",
              {"apiVersion": "core.navique.com/v1alpha1", "kind": "PostgresCluster",
               "metadata": {"name": name, "namespace": ns}, "spec": spec})
        names.add((ns, name))
    return names


def settle(s, quiet=3.0, limit=120.0):
    """Waits until the operator has made no request beyond watches for `quiet` seconds."""
    last, since, start = beyond_watches(requests(s)), time.perf_counter(), time.perf_counter()
    while time.perf_counter() - since < quiet and time.perf_counter() - start < limit:
        time.sleep(0.25)
        now = beyond_watches(requests(s))
        if now != last:
            last, since = now, time.perf_counter()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--external", type=int, default=1000)
    ap.add_argument("--managed", type=int, default=100)
    ap.add_argument("--namespaces", type=int, default=50)
    ap.add_argument("--idle", type=float, default=300, help="seconds of steady state to count requests over")
    ap.add_argument("--out")
    a = ap.parse_args()

    s = ob.Server()
    stop = threading.Event()
    op = None
    try:
        port = free_port()
        # As deployed: leader election and the default poll.
        op, _ = ob.start_operator(s, flags=("--metrics-bind", f"127.0.0.1:{port}", "--health-bind", "0"))
        settle(s)
        threading.Thread(target=ob.play_cnpg, args=(s, stop), daemon=True).start()

        r0, q0 = reconciles(port), requests(s)
        t = time.perf_counter()
        names = create_all(s, a)
        created = time.perf_counter() - t
        while len(ready_names(s) & names) < len(names):
            time.sleep(0.5)
        wall = time.perf_counter() - t
        r1 = reconciles(port)
        settle(s)
        steady_rss = ob.status_kib(op.pid, "VmRSS")
        r2, q2 = reconciles(port), requests(s)
        time.sleep(a.idle)
        r3, q3 = reconciles(port), requests(s)
        peak = ob.status_kib(op.pid, "VmHWM")

        during = r2 - r0
        made = beyond_watches(q2) - beyond_watches(q0)
        idle = diff(q3, q2)
        idle_beyond = {k: n for k, n in idle.items() if k[0] != "watch"}
        idle_text = ", ".join(f"{v} {r}: {n}" for (v, r), n in sorted(idle_beyond.items())) or "none"
        total = a.external + a.managed
        lines = [
            f"| {a.external} external + {a.managed} managed PostgresClusters, {a.namespaces} namespaces | navique-operator |",
            "|---|---:|",
            f"| created (this script, {total} POSTs) | {created:.1f} s |",
            f"| all Ready, from the first create | {wall:.1f} s |",
            f"| PostgresCluster reconciles until all Ready | {r1 - r0:.0f} ({(r1 - r0) / wall:.0f}/s) |",
            f"| API requests beyond watches until settled | {made} ({made / max(during, 1):.1f} per reconcile, {made / total:.1f} per PostgresCluster) |",
            f"| RSS converged / peak | {steady_rss / 1024:.1f} MiB / {peak / 1024:.1f} MiB |",
            f"| idle {a.idle:.0f} s: reconciles, requests beyond watches | {r3 - r2:.0f}, {sum(idle_beyond.values())} ({idle_text}) |",
        ]
        text = "\n".join(lines) + "\n"
        print(text)
        print(json.dumps({"requests_until_settled": {f"{v} {r}": n for (v, r), n in sorted(diff(q2, q0).items())},
                          "idle": {f"{v} {r}": n for (v, r), n in sorted(idle.items())}}, indent=1))
        if a.out:
            with open(a.out, "w") as f:
                f.write(text)
    finally:
        ob.tear_down(s, stop, op)


if __name__ == "__main__":
    main()
