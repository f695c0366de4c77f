#!/usr/bin/env python3
"""The whole platform: the operator against real Helm v4.2.3 (helm-python-sdk),
same embedded API server build, same run.

    cargo build --release
    python3 benches/platform_bench.py [--rounds 3]

Ours: `navique-operator run` as its own process on a fresh navique-sandbox,
licensed (a key pair of this run's, openssl; Observability is beyond the free
tier). The clock starts when PostgresCluster (managed), ClickHouseCluster
(clickhouse, managed), Gateway (two models, on the database), ChatUI,
SecretsManagement (a vault), MeilisearchInstance (its master key from that
vault) and Observability are created together, and stops when all seven
report Ready: cert-manager, CloudNativePG, the ClickHouse operator, the
LiteLLM operator and external-secrets installed and Ready, their objects
emitted, the three workload releases installed. No upstream operator runs
here: this script plays CloudNativePG, the ClickHouse operator, the LiteLLM
operator and external-secrets (it marks their objects Ready as soon as they
appear, and writes CNPG's app Secret and each ExternalSecret's target). CPU: the operator process's user+system time over that interval
(its start-up excluded; operator_bench.py reports what start-up costs).
Memory: the operator's peak RSS (VmHWM) when all are Ready, and its RSS
split into anonymous and file pages 5 s later.

Helm: the same eight charts installed one after the other with --wait
(watcher), with the values the operator computes, in-process through the
SDK's shared library on a fresh sandbox of its own; CPU is this Python
process's CPU time around the eight installs. Helm does not emit the CNPG,
ClickHouse, LiteLLM or external-secrets objects (a Helm user applies those separately): that
work is in our figure only.
"""
import argparse, json, os, statistics, threading, time

from operator_bench import SHARED, Server, cpu_seconds, ensure_namespace, start_operator, status_kib, tear_down

NS = "team-a"
CORE = "/apis/core.navique.com/v1alpha1/namespaces/" + NS
CLUSTER_SCOPED = {"SecretsManagement"}


def collection(kind, plural):
    if kind in CLUSTER_SCOPED:
        return "/apis/core.navique.com/v1alpha1/" + plural
    return f"{CORE}/{plural}"
RESOURCES = [
    ("postgresclusters", "PostgresCluster", "app-db", {"mode": "managed", "managed": {"instances": 1}}),
    ("clickhouseclusters", "ClickHouseCluster", "analytics",
     {"type": "clickhouse", "mode": "managed", "managed": {"keeper": {"replicas": 1}}}),
    ("gateways", "Gateway", "team-gw", {"postgresClusterRef": {"name": "app-db"},
        "masterKey": {"secretKeyRef": {"name": "litellm-master", "key": "key"}},
        "models": [{"name": "gpt-4o", "model": "openai/gpt-4o", "apiKey": {"secretKeyRef": {"name": "openai", "key": "api-key"}}},
                   {"name": "llama3", "model": "ollama/llama3", "apiBase": "http://ollama:11434"}]}),
    ("chatuis", "ChatUI", "web", {"gatewayRef": {"name": "team-gw"}}),
    ("secretsmanagements", "SecretsManagement", "corp-vault",
     {"vault": {"server": "https://vault.corp.example:8200", "path": "secret",
                "auth": {"kubernetes": {"mountPath": "kubernetes", "role": "navique"}}}}),
    ("meilisearchinstances", "MeilisearchInstance", "search",
     {"masterKey": {"vault": {"store": "corp-vault", "path": "search/meilisearch", "property": "master-key"}}}),
    ("observabilities", "Observability", "obs", {"postgresClusterRef": {"name": "app-db"}, "clickHouseClusterRef": {"name": "analytics"}}),
]


def secrets(s):
    for name, data in [("litellm-master", {"key": "sk"}), ("openai", {"api-key": "sk"}), ("meili", {"MEILI_MASTER_KEY": "m"}),
                       ("lf-keys", {"salt": "s", "encryption-key": "0" * 64, "nextauth-secret": "n"})]:
        s.req("POST", f"/api/v1/namespaces/{NS}/secrets",
              {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}, "stringData": data})


def play_upstream(s, stop):
    """What CloudNativePG, the ClickHouse operator, the LiteLLM operator and
    external-secrets would do (external-secrets: its stores and ExternalSecrets
    Ready, each ExternalSecret's target Secret written)."""
    done = set()
    kinds = [("postgresql.cnpg.io/v1", "clusters", "Cluster"), ("clickhouse.com/v1alpha1", "keeperclusters", "KeeperCluster"),
             ("clickhouse.com/v1alpha1", "clickhouseclusters", "ClickHouseCluster"),
             ("litellm.home-operations.com/v1alpha1", "litellmproxies", "LiteLLMProxy"),
             ("external-secrets.io/v1", "clustersecretstores", "ClusterSecretStore"),
             ("external-secrets.io/v1", "externalsecrets", "ExternalSecret")]
    while not stop.is_set():
        for gv, plural, kind in kinds:
            base = f"/apis/{gv}" if kind == "ClusterSecretStore" else f"/apis/{gv}/namespaces/{NS}"
            try:
                lst = s.req("GET", f"{base}/{plural}")
            except Exception:
                continue
            for o in (lst or {}).get("items", []):
                name = o["metadata"]["name"]
                if (plural, name) in done:
                    continue
                if kind == "Cluster":
                    s.req("POST", f"/api/v1/namespaces/{NS}/secrets", {"apiVersion": "v1", "kind": "Secret",
                          "metadata": {"name": f"{name}-app"},
                          "stringData": {"host": f"{name}-rw", "port": "5432", "username": "app", "password": "p", "dbname": "app"}})
                if kind == "ExternalSecret":
                    target = o["spec"].get("target", {}).get("name", name)
                    keys = {d["secretKey"]: "v" for d in o["spec"].get("data", [])}
                    s.req("POST", f"/api/v1/namespaces/{NS}/secrets", {"apiVersion": "v1", "kind": "Secret",
                          "metadata": {"name": target}, "stringData": keys})
                body = {"apiVersion": gv, "kind": kind, "metadata": {"name": name},
                        "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Ready", "message": "",
                                                   "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}
                s.req("PATCH", f"{base}/{plural}/{name}/status?fieldManager=bench-upstream&force=true",
                      body, "application/apply-patch+yaml")
                done.add((plural, name))
        time.sleep(0.02)


def ready(s):
    n = 0
    for plural, kind, name, _ in RESOURCES:
        o = s.req("GET", f"{collection(kind, plural)}/{name}")
        n += bool(o and o.get("status", {}).get("phase") == "Ready")
    return n


def ours_round():
    s = Server()
    stop = threading.Event()
    op = None
    try:
        ensure_namespace(s, NS)
        secrets(s)
        op, _ = start_operator(s, features=["Observability", "SecretsManagement"])
        threading.Thread(target=play_upstream, args=(s, stop), daemon=True).start()
        c0 = cpu_seconds(op.pid)
        t = time.perf_counter()
        for plural, kind, name, spec in RESOURCES:
            s.req("POST", collection(kind, plural), {"apiVersion": "core.navique.com/v1alpha1", "kind": kind,
                                               "metadata": {"name": name}, "spec": spec})
        while ready(s) < len(RESOURCES):
            if time.perf_counter() - t > 300:
                raise SystemExit("the platform did not become Ready in 300 s")
            time.sleep(0.05)
        out = {"wall": time.perf_counter() - t, "cpu": cpu_seconds(op.pid) - c0,
               "peak_mib": status_kib(op.pid, "VmHWM") / 1024}
        time.sleep(5)
        out |= {f"idle_{k}_mib": status_kib(op.pid, k) / 1024 for k in ("VmRSS", "RssAnon", "RssFile")}
        return out
    finally:
        tear_down(s, stop, op)


def helm_round():
    import helm_python
    s = Server()
    try:
        ensure_namespace(s, NS)
        secrets(s)
        cfg = helm_python.Config(kubeconfig_path=s.kubeconfig)
        endpoint = f"http://team-gw.{NS}.svc:4000"
        steps = [
            ("cert-manager-v1.21.1.tgz", "cert-manager", "cert-manager", {"crds": {"enabled": True}}),
            ("cloudnative-pg-0.29.0.tgz", "cloudnative-pg", "cnpg-system", {}),
            ("clickhouse-operator-helm-0.0.1.tgz", "clickhouse-operator", "clickhouse-operator-system", {"certManager": {"install": False}}),
            ("litellm-operator-0.0.15.tgz", "litellm-operator", "litellm-operator-system", {}),
            ("extra/external-secrets-2.9.0.tgz", "external-secrets", "external-secrets", {}),
            ("chat-ui-0.0.1-latest.tgz", "chat-ui-web", NS, {"replicas": 1, "envVars": {"OPENAI_BASE_URL": endpoint + "/v1"},
                "extraEnv": [{"name": "OPENAI_API_KEY", "valueFrom": {"secretKeyRef": {"name": "litellm-master", "key": "key"}}}]}),
            ("meilisearch-0.34.0.tgz", "meilisearch-search", NS, {"environment": {"MEILI_ENV": "production"},
                "auth": {"existingMasterKeySecret": "meili"}, "persistence": {"enabled": True, "size": "10Gi"}}),
            ("langfuse-2.0.0.tgz", "langfuse-obs", NS, {
                "langfuse": {"salt": {"secretKeyRef": {"name": "lf-keys", "key": "salt"}},
                             "encryptionKey": {"secretKeyRef": {"name": "lf-keys", "key": "encryption-key"}},
                             "nextauth": {"secret": {"secretKeyRef": {"name": "lf-keys", "key": "nextauth-secret"}}}},
                "postgresql": {"deploy": False, "host": "app-db-rw", "port": 5432,
                               "auth": {"username": "app", "database": "app", "existingSecret": "lf-keys", "secretKeys": {"userPasswordKey": "salt"}}},
                "clickhouse": {"deploy": False, "host": f"analytics-clickhouse-headless.{NS}.svc", "httpPort": 8123, "nativePort": 9000,
                               "database": "default", "auth": {"username": "default", "existingSecret": "lf-keys", "existingSecretKey": "salt"},
                               "cluster": {"enabled": False}}}),
        ]
        c = time.process_time()
        t = time.perf_counter()
        for chart, name, ns, values in steps:
            cfg.install(os.path.join(SHARED, chart), name, values, namespace=ns, create_namespace=True, wait="watcher", timeout=300)
        return {"wall": time.perf_counter() - t, "cpu": time.process_time() - c}
    finally:
        s.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    ours, helm = [], []
    for _ in range(a.rounds):
        ours.append(ours_round())
        helm.append(helm_round())
    med = lambda rows, k: statistics.median(r[k] for r in rows)
    ow, oc, hw, hc = med(ours, "wall"), med(ours, "cpu"), med(helm, "wall"), med(helm, "cpu")
    print(f"| whole platform to Ready (median of {a.rounds}) | navique-operator | Helm (8 charts in sequence, --wait) | ratio |")
    print("|---|---:|---:|---:|")
    print(f"| wall | {ow*1000:.0f} ms | {hw*1000:.0f} ms | {hw/ow:.1f}x |")
    print(f"| CPU | {oc*1000:.0f} ms | {hc*1000:.0f} ms | {hc/oc:.1f}x |")
    rng = lambda k: f"{med(ours, k):.1f} MiB ({min(r[k] for r in ours):.1f}-{max(r[k] for r in ours):.1f})"
    print(f"\nOperator peak RSS (VmHWM) through the install: {rng('peak_mib')}; 5 s after all Ready: "
          f"VmRSS {rng('idle_VmRSS_mib')}, RssAnon {rng('idle_RssAnon_mib')}, RssFile {rng('idle_RssFile_mib')} "
          f"(median (min-max) of {a.rounds}).")
    print(json.dumps({"ours": ours, "helm": helm}))


if __name__ == "__main__":
    main()
