//! The operator as a running process: a normal stop fails the action in
//! flight cleanly and the next start retries it; only the leader reconciles,
//! and a follower takes over when it stops; it serves health, readiness and
//! the contract metrics and logs JSON; `plan` reports what `run` then does;
//! no secret value leaves it through its logs, Events, status, metrics or
//! `plan`.

use crate::common::*;
use crate::harness::*;
use serde_json::{json, Value};
use std::time::Duration;

#[test]
fn a_normal_stop_fails_the_action_in_flight_cleanly_and_the_next_start_retries_it() {
    if shared().is_none() {
        return;
    }
    // No simulated controllers: cert-manager's post-install hook Job never
    // completes, so the install is still waiting when the operator stops.
    let env = Env::with(navique_sandbox::Options {
        simulate: false,
        ..Default::default()
    });
    if env.is_real() {
        eprintln!("skipping on a real cluster: its controllers complete the hook Job");
        return;
    }
    let op = Operator::start(&env);
    let ns = env.namespace("team-z");
    env.create_postgres(&ns, "app-db", managed());
    env.wait_for(
        "cert-manager pending-install",
        Duration::from_secs(60),
        |e| {
            let l = e
                .release("cert-manager", "cert-manager")
                .unwrap_or_default();
            (l.get("status").map(String::as_str) == Some("pending-install"))
                .then_some(())
                .ok_or(format!("{l:?}"))
        },
    );
    let t = std::time::Instant::now();
    op.stop();
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "stop took {:?}",
        t.elapsed()
    );
    let l = env.release("cert-manager", "cert-manager").unwrap();
    assert_eq!(l["status"], "failed", "never left pending by a normal stop");
    env.sandbox.as_ref().unwrap().set_simulate(true);
    // Jobs and Deployments created from now on complete; the retry recreates the hook Job.
    let op = Operator::start(&env);
    env.kubectl(&["-n", "cert-manager", "rollout", "restart", "deployment"]);
    env.wait_postgres_ready(&ns, "app-db");
    let l = env.release("cert-manager", "cert-manager").unwrap();
    assert_eq!(
        (l["status"].as_str(), l["version"].as_str()),
        ("deployed", "2")
    );
    op.stop();
}

#[test]
fn only_the_leader_reconciles_and_a_follower_takes_over_when_it_stops() {
    if shared().is_none() {
        return;
    }
    let env = Env::new();
    let lease_ns = env.namespace("navique-system");
    let leader_opts = |id: &str| {
        let mut o = options(&env);
        o.leader_elect = true;
        o.namespace = lease_ns.clone();
        o.identity = id.into();
        o.lease_seconds = 3;
        o
    };
    let a = Operator::start_with(leader_opts("operator-a"));
    let ns = env.namespace("team-m");
    env.create_postgres(&ns, "app-db", managed());
    env.wait_postgres_ready(&ns, "app-db");
    let b = Operator::start_with(leader_opts("operator-b"));
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(
        b.metrics.reconciles("Capability") + b.metrics.reconciles("PostgresCluster"),
        0,
        "the follower reconciled"
    );
    let lease = env
        .get(
            &env.dynamic(
                "coordination.k8s.io",
                "v1",
                "Lease",
                "leases",
                Some(&lease_ns),
            ),
            "navique-ai-core-operator",
        )
        .expect("the Lease");
    assert_eq!(lease["spec"]["holderIdentity"], "operator-a");
    a.stop();
    env.apply_yaml(&json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "pg-conn", "namespace": ns},
        "stringData": {"host": "h", "port": "5432", "username": "u", "password": "p", "dbname": "d"}}).to_string());
    env.create_postgres(
        &ns,
        "ext",
        json!({"mode": "external", "external": {"connectionSecretRef": {"name": "pg-conn"}}}),
    );
    env.wait_for(
        "the follower to take over and reconcile",
        Duration::from_secs(30),
        |e| {
            (e.phase(&ns, "ext") == "Ready")
                .then_some(())
                .ok_or(e.phase(&ns, "ext"))
        },
    );
    assert!(b.metrics.reconciles("PostgresCluster") > 0);
    let lease = env
        .get(
            &env.dynamic(
                "coordination.k8s.io",
                "v1",
                "Lease",
                "leases",
                Some(&lease_ns),
            ),
            "navique-ai-core-operator",
        )
        .unwrap();
    assert_eq!(lease["spec"]["holderIdentity"], "operator-b");
    b.stop();
}

#[test]
fn plan_reports_what_run_then_does() {
    if shared().is_none() || !helm_available() {
        return;
    }
    let env = Env::new();
    let chart = shared().unwrap().join("upgrade/cert-manager-v1.19.2.tgz");
    env.helm(
        "tools",
        &[
            "install",
            "my-cm",
            chart.to_str().unwrap(),
            r#"{"crds": {"enabled": true}}"#,
        ],
    );
    env.track_namespace("tools");
    env.install_crds();
    let ns = env.namespace("team-p");
    env.create_postgres(&ns, "app-db", managed());
    let plan = |env: &Env| -> Value {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_navique-operator"));
        cmd.args(["plan", "-o", "json", "--kubeconfig"])
            .arg(&env.kubeconfig);
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let writes = env.write_requests();
    let before = plan(&env);
    assert_eq!(env.write_requests(), writes, "plan is read-only");
    let actions: Vec<(String, String)> = before["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["action"].as_str().unwrap().to_string(),
                a["target"]
                    .as_str()
                    .unwrap()
                    .split(' ')
                    .next()
                    .unwrap()
                    .to_string(),
            )
        })
        .collect();
    assert_eq!(
        actions,
        [
            ("adopt".to_string(), "cert-manager".to_string()),
            ("install".into(), "cloudnative-pg".into()),
            ("wait".into(), "postgresql.cnpg.io/v1".into())
        ],
        "{before:#}"
    );
    let cm = &before["capabilities"][0];
    assert_eq!(
        (cm["provenance"].as_str(), cm["needed"].as_bool()),
        (Some("adopted"), Some(true))
    );
    assert!(cm["evidence"].as_str().unwrap().contains("my-cm"), "{cm}");
    let op = Operator::start(&env);
    env.wait_postgres_ready(&ns, "app-db");
    // run did what plan said: adopted cert-manager, installed CloudNativePG, emitted the Cluster.
    assert!(env
        .events("cert-manager")
        .iter()
        .any(|e| e.starts_with("Adopted: ")));
    assert!(ours_release(&env, "cnpg-system", "cloudnative-pg"));
    assert!(env.release("cert-manager", "cert-manager").is_none());
    op.stop();
    let after = plan(&env);
    let left: Vec<&str> = after["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["action"].as_str().unwrap())
        .collect();
    assert_eq!(left, ["adopt"], "{after:#}");
}

#[test]
fn the_process_serves_health_readiness_and_the_contract_metrics_and_logs_json() {
    if shared().is_none() {
        return;
    }
    let env = Env::new();
    let (metrics, health) = (
        format!("127.0.0.1:{}", free_port()),
        format!("127.0.0.1:{}", free_port()),
    );
    let lease_ns = env.namespace("navique-system");
    let log = std::env::temp_dir().join(format!("navique-op-log-{}", std::process::id()));
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_navique-operator"));
    cmd.args([
        "run",
        "--log-format",
        "json",
        "--namespace",
        &lease_ns,
        "--metrics-bind",
        &metrics,
        "--health-bind",
        &health,
        "--poll-ms",
        "200",
        "--kubeconfig",
    ])
    .arg(&env.kubeconfig);
    for d in charts_dirs() {
        cmd.arg("--charts-dir").arg(d);
    }
    let mut child = OperatorChild(
        cmd.stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap(),
    );
    env.wait_for("/readyz", Duration::from_secs(30), |_| {
        let (code, _) = http_get(&health, "/readyz");
        (code == 200).then_some(()).ok_or(format!("{code}"))
    });
    assert_eq!(http_get(&health, "/healthz").0, 200);
    let ns = env.namespace("team-q");
    env.create_postgres(&ns, "app-db", managed());
    env.wait_postgres_ready(&ns, "app-db");
    // Converged on one managed PostgresCluster: the idle memory stays under
    // its bound (BENCHMARKS.md; on the embedded server, whose contents this
    // test knows; a shared cluster's watch caches hold whatever it holds).
    std::thread::sleep(Duration::from_secs(3));
    let rss = rss_mib(child.id());
    eprintln!("operator RSS idle after converging: {rss:.1} MiB (dev profile)");
    if real_cluster().is_none() {
        assert!(
            rss <= IDLE_RSS_BOUND_MIB,
            "idle RSS {rss:.1} MiB over its bound of {IDLE_RSS_BOUND_MIB} MiB"
        );
    }
    let (code, text) = http_get(&metrics, "/metrics");
    assert_eq!(code, 200);
    for name in [
        "navique_reconcile_total{kind=\"PostgresCluster\",result=\"success\"}",
        "navique_reconcile_duration_seconds_count{kind=\"Capability\"}",
        "navique_capability_info{capability=\"cloudnative-pg\",chart_version=\"0.29.0\",provenance=\"owned\"} 1",
        "navique_capability_ready{capability=\"cert-manager\"} 1",
        "navique_release_action_total{release=\"cloudnative-pg\",action=\"install\",result=\"success\"} 1",
    ] {
        assert!(text.contains(name), "{name} missing:\n{text}");
    }
    // SIGTERM: a clean exit, and the Lease released for the next one.
    send_sigterm(&child);
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    let logs = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = logs.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(!lines.is_empty());
    for l in &lines {
        let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"));
        assert!(
            v.get("level").is_some() && v.get("timestamp").is_some(),
            "{l}"
        );
    }
    assert!(logs.contains("Installed release cloudnative-pg"), "{logs}");
    std::fs::remove_file(&log).unwrap();
}

/// Every way a value could leave the operator: its logs at every level,
/// Events, the status and conditions of every resource and Capability, its
/// metrics, and `plan -o json`. None may hold a secret value, plain or
/// base64.
#[test]
fn no_secret_value_reaches_logs_events_status_metrics_or_plan() {
    if shared().is_none() || !helm_available() {
        return;
    }
    let env = Env::new();
    let ns = env.namespace("team-leak");
    let vault_ns = env.namespace("vault-leak");
    let op_ns = env.namespace("navique-leak");
    let mut secrets: Vec<String> = [
        "meili-LEAKCHECK-7c1",
        "sk-openai-LEAKCHECK-2b8",
        "pg-LEAKCHECK-5e4",
        "vault-token-LEAKCHECK-d0a",
        "sk-master-LEAKCHECK-11f",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let key = licenses::key();
    let expires = chrono::Utc::now() + chrono::Duration::days(365);
    licenses::write(
        &env,
        &op_ns,
        &key,
        &json!({"licensee": "Leak Check Ltd", "tier": "enterprise",
        "expires": expires.to_rfc3339(), "features": ["Observability", "SecretsManagement"]}),
        None,
    );
    // The license's signature and its payload as signed (the licensee's name
    // alone is no secret: the Licensed condition names it).
    {
        use base64::Engine;
        let lic: Value = serde_json::from_str(&env.kubectl(&[
            "get",
            "secret",
            "navique-license",
            "-n",
            &op_ns,
            "-o",
            "json",
        ]))
        .unwrap();
        for k in ["license.sig", "license.json"] {
            let raw = base64::engine::general_purpose::STANDARD
                .decode(lic["data"][k].as_str().unwrap())
                .unwrap();
            secrets.push(String::from_utf8(raw).unwrap());
        }
    }
    let secret = |ns: &str, name: &str, data: Value| {
        env.apply_yaml(&json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": ns},
            "stringData": data}).to_string());
    };
    secret(&ns, "meili", json!({"MEILI_MASTER_KEY": secrets[0]}));
    secret(&ns, "openai", json!({"api-key": secrets[1]}));
    secret(
        &ns,
        "app-db-app",
        json!({"host": "app-db-rw", "port": "5432", "username": "app", "password": secrets[2], "dbname": "app"}),
    );
    secret(&vault_ns, "vault-token", json!({"token": secrets[3]}));
    secret(&ns, "litellm-master", json!({"key": secrets[4]}));

    let work = std::env::temp_dir().join(format!("navique-leak-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    let pem = licenses::public_pem(&key, &work);
    let (metrics, health) = (
        format!("127.0.0.1:{}", free_port()),
        format!("127.0.0.1:{}", free_port()),
    );
    let log = work.join("operator.log");
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_navique-operator"));
    cmd.args([
        "run",
        "--log-format",
        "json",
        "--leader-elect=false",
        "--namespace",
        &op_ns,
        "--metrics-bind",
        &metrics,
        "--health-bind",
        &health,
        "--poll-ms",
        "200",
        "--license-public-key",
    ])
    .arg(&pem)
    .arg("--kubeconfig")
    .arg(&env.kubeconfig)
    // Every level of our own code, and debug for the libraries.
    .env(
        "NAVIQUE_LOG",
        "debug,navique_ai_core_operator=trace,navique_operator=trace",
    );
    for d in charts_dirs() {
        cmd.arg("--charts-dir").arg(d);
    }
    let mut child = OperatorChild(
        cmd.stdout(std::fs::File::create(work.join("stdout.log")).unwrap())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap(),
    );

    let store = format!("leak-{:06x}", rand::random::<u32>() & 0xffffff);
    env.create("SecretsManagement", "", &store, json!({"vault": {"server": "https://vault.example:8200", "path": "secret",
        "auth": {"tokenSecretRef": {"namespace": vault_ns, "name": "vault-token", "key": "token"}}}}));
    env.create_postgres(&ns, "app-db", managed());
    env.create(
        "ClickHouseCluster",
        &ns,
        "analytics",
        clickhouse_managed("clickhouse", 1),
    );
    env.create("Gateway", &ns, "team-gw", json!({"postgresClusterRef": {"name": "app-db"},
        "masterKey": {"secretKeyRef": {"name": "litellm-master", "key": "key"}},
        "models": [{"name": "gpt-4o", "model": "openai/gpt-4o", "apiKey": {"secretKeyRef": {"name": "openai", "key": "api-key"}}},
                   {"name": "vaulted", "model": "openai/gpt-4o-mini", "apiKey": {"vault": {"store": store, "path": "ai/openai", "property": "key"}}}]}));
    env.create(
        "ChatUI",
        &ns,
        "web",
        json!({"gatewayRef": {"name": "team-gw"}}),
    );
    env.create(
        "MeilisearchInstance",
        &ns,
        "search",
        json!({"masterKey": {"secretKeyRef": {"name": "meili", "key": "MEILI_MASTER_KEY"}}}),
    );
    env.create("Observability", &ns, "obs", json!({"postgresClusterRef": {"name": "app-db"}, "clickHouseClusterRef": {"name": "analytics"}}));
    let all = [
        ("SecretsManagement", "", store.as_str()),
        ("PostgresCluster", ns.as_str(), "app-db"),
        ("ClickHouseCluster", ns.as_str(), "analytics"),
        ("Gateway", ns.as_str(), "team-gw"),
        ("ChatUI", ns.as_str(), "web"),
        ("MeilisearchInstance", ns.as_str(), "search"),
        ("Observability", ns.as_str(), "obs"),
    ];
    env.wait_all_ready("every resource Ready", &ns, &all, Duration::from_secs(180));
    // The values the operator generated itself are secrets too.
    let generated = env.kubectl(&["get", "secrets", "-n", &ns, "-o", "json"]);
    let generated: Value = serde_json::from_str(&generated).unwrap();
    use base64::Engine;
    for s in generated["items"].as_array().unwrap() {
        let name = s["metadata"]["name"].as_str().unwrap_or_default();
        let ours = s
            .pointer("/metadata/labels/app.kubernetes.io~1managed-by")
            .and_then(Value::as_str)
            == Some("navique-ai-core-operator");
        if !ours || name.starts_with("sh.helm.release") {
            continue;
        }
        for (k, v) in s["data"].as_object().into_iter().flatten() {
            let plain = base64::engine::general_purpose::STANDARD
                .decode(v.as_str().unwrap_or_default())
                .unwrap_or_default();
            let plain = String::from_utf8_lossy(&plain).into_owned();
            let looks_secret = ["password", "key", "secret", "salt", "token"]
                .iter()
                .any(|w| k.to_lowercase().contains(w));
            if looks_secret && plain.len() >= 8 {
                secrets.push(plain);
            }
        }
    }
    assert!(
        secrets.len() > 8,
        "the operator's generated passwords and keys are checked too: {}",
        secrets.len()
    );

    let (_, metrics_text) = http_get(&metrics, "/metrics");
    assert!(metrics_text.contains("navique_reconcile_total"));
    let plan = std::process::Command::new(env!("CARGO_BIN_EXE_navique-operator"))
        .args([
            "plan",
            "-o",
            "json",
            "--namespace",
            &op_ns,
            "--license-public-key",
        ])
        .arg(&pem)
        .arg("--kubeconfig")
        .arg(&env.kubeconfig)
        .args(
            charts_dirs()
                .iter()
                .flat_map(|d| ["--charts-dir".to_string(), d.display().to_string()]),
        )
        .output()
        .unwrap();
    assert!(
        plan.status.success(),
        "{}",
        String::from_utf8_lossy(&plan.stderr)
    );
    let _ = child.kill();
    let _ = child.wait();
    let logs = std::fs::read_to_string(&log).unwrap()
        + &std::fs::read_to_string(work.join("stdout.log")).unwrap();
    assert!(
        logs.lines().count() > 50
            && (logs.contains("\"level\":\"TRACE\"") || logs.contains("\"level\":\"DEBUG\"")),
        "logs below info were written: {} lines",
        logs.lines().count()
    );
    eprintln!(
        "{} secret values checked against {} log lines",
        secrets.len(),
        logs.lines().count()
    );
    let events = env.kubectl(&["get", "events", "-A", "-o", "json"]);
    let mut statuses = String::new();
    for (k, n, name) in &all {
        statuses.push_str(&env.resource(k, n, name).unwrap_or_default()["status"].to_string());
    }
    statuses.push_str(&env.kubectl(&["get", "capabilities", "-o", "json"]));
    let channels = [
        ("logs", logs),
        ("events", events),
        ("status", statuses),
        ("metrics", metrics_text),
        ("plan", String::from_utf8_lossy(&plan.stdout).into_owned()),
    ];
    for value in &secrets {
        let encoded = base64::engine::general_purpose::STANDARD.encode(value);
        for (channel, text) in &channels {
            assert!(
                !text.contains(value.as_str()),
                "a secret value is in the {channel}: {value}"
            );
            assert!(
                !text.contains(&encoded),
                "a secret value, base64, is in the {channel}: {value}"
            );
        }
    }
    for (k, n, name) in all.iter().rev() {
        env.delete(k, n, name);
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// The idle operator's resident memory may not grow past this. Read 3 s
/// after convergence, the dev profile's median is 25.9 MiB once the idle
/// trim has run (src/memory.rs: code pages let go, every worker's freed
/// pages purged, 2 s after the last reconcile) and 43.1 in a round whose
/// last reconcile came late, before the trim (BENCHMARKS.md, issue 27).
const IDLE_RSS_BOUND_MIB: f64 = 48.0;

fn rss_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("VmRSS");
    kib / 1024.0
}
