//! The operator's rules, one scenario each, on the embedded API server (or
//! the cluster NAVIQUE_TEST_KUBECONFIG names): cluster state afterwards
//! (releases, objects, Capability status, Events) is what is asserted.
//! CloudNativePG never runs here: the tests write the status it would write
//! on its Cluster (`Env::cnpg_reports_ready`).

mod harness;

use harness::*;
use serde_json::{json, Value};
use std::time::Duration;

const MANAGED: &str = r#"{"mode": "managed", "managed": {"instances": 1}}"#;

fn managed() -> Value {
    serde_json::from_str(MANAGED).unwrap()
}

fn ours_release(env: &Env, ns: &str, name: &str) -> bool {
    env.releases().iter().any(|(n, r, labels, annotations)| {
        n == ns
            && r == name
            && labels.get("status").map(String::as_str) == Some("deployed")
            && labels
                .get("app.kubernetes.io/managed-by")
                .map(String::as_str)
                == Some("navique-ai-core-operator")
            && annotations
                .get("core.navique.com/provenance")
                .map(String::as_str)
                == Some("owned")
    })
}

fn created_at(env: &Env, ns: &str, name: &str) -> i64 {
    env.releases()
        .into_iter()
        .find(|(n, r, _, _)| n == ns && r == name)
        .and_then(|(_, _, l, _)| l.get("createdAt").and_then(|c| c.parse().ok()))
        .unwrap_or(0)
}

#[test]
fn absent_capabilities_are_installed_prerequisite_first_marked_ours_and_helm_lists_them() {
    if shared().is_none() || !helm_available() {
        return;
    }
    let env = Env::new();
    let op = Operator::start(&env);
    let ns = env.namespace("team-a");
    env.create_postgres(&ns, "app-db", managed());
    env.wait_postgres_ready(&ns, "app-db");
    assert!(ours_release(&env, "cert-manager", "cert-manager"));
    assert!(ours_release(&env, "cnpg-system", "cloudnative-pg"));
    assert!(
        created_at(&env, "cert-manager", "cert-manager")
            <= created_at(&env, "cnpg-system", "cloudnative-pg")
    );
    let listed = env.helm_list_all();
    assert!(
        listed.contains(&"cert-manager/cert-manager".to_string()),
        "{listed:?}"
    );
    assert!(
        listed.contains(&"cloudnative-pg/cnpg-system".to_string()),
        "{listed:?}"
    );
    let cluster = env
        .get(
            &env.dynamic("postgresql.cnpg.io", "v1", "Cluster", "clusters", Some(&ns)),
            "app-db",
        )
        .expect("the CNPG Cluster");
    assert_eq!(
        cluster["metadata"]["ownerReferences"][0]["kind"],
        "PostgresCluster"
    );
    assert_eq!(
        cluster["metadata"]["labels"]["app.kubernetes.io/managed-by"],
        "navique-ai-core-operator"
    );
    let pg = env.postgres(&ns, "app-db").unwrap();
    assert_eq!(pg["status"]["connectionSecret"], "app-db-app");
    assert_eq!(
        pg["status"]["capabilities"][0],
        json!({"name": "cloudnative-pg", "chartVersion": "0.29.0", "provenance": "owned", "release": "cloudnative-pg", "namespace": "cnpg-system", "ready": true})
    );
    assert!(pg["metadata"]["finalizers"]
        .as_array()
        .unwrap()
        .contains(&json!("core.navique.com/cleanup")));
    let cap = env.capability("cloudnative-pg");
    assert_eq!(cap["status"]["provenance"], "owned");
    assert_eq!(
        cap["status"]["consumers"],
        json!([{"kind": "PostgresCluster", "namespace": ns, "name": "app-db"}])
    );
    assert_eq!(cap["status"]["installedVersion"], "0.29.0");
    assert!(
        env.events("cloudnative-pg")
            .iter()
            .any(|e| e.starts_with("Installed: ")),
        "{:?}",
        env.events("cloudnative-pg")
    );
    // Objects of our releases carry the capability label.
    let webhook = env
        .get(
            &env.dynamic(
                "apps",
                "v1",
                "Deployment",
                "deployments",
                Some("cert-manager"),
            ),
            "cert-manager-webhook",
        )
        .unwrap();
    assert_eq!(
        webhook["metadata"]["labels"]["core.navique.com/capability"],
        "cert-manager"
    );
    op.stop();
}

#[test]
fn a_cnpg_installed_by_real_helm_under_another_name_is_adopted_not_duplicated() {
    if shared().is_none() || !helm_available() {
        return;
    }
    let env = Env::new();
    let chart = shared().unwrap().join("cloudnative-pg-0.29.0.tgz");
    env.helm(
        "postgres-operator",
        &["install", "my-cnpg", chart.to_str().unwrap(), "{}"],
    );
    env.track_namespace("postgres-operator");
    let op = Operator::start(&env);
    let ns = env.namespace("team-b");
    env.create_postgres(&ns, "app-db", managed());
    env.wait_postgres_ready(&ns, "app-db");
    assert!(
        env.release("cnpg-system", "cloudnative-pg").is_none(),
        "no second install"
    );
    let cap = env.capability("cloudnative-pg");
    assert_eq!(cap["status"]["provenance"], "adopted");
    assert_eq!(
        cap["status"]["release"],
        json!({"name": "my-cnpg", "namespace": "postgres-operator"})
    );
    assert_eq!(cap["status"]["installedVersion"], "0.29.0");
    let adopted: Vec<String> = env
        .events("cloudnative-pg")
        .into_iter()
        .filter(|e| e.starts_with("Adopted: "))
        .collect();
    assert_eq!(adopted.len(), 1, "{adopted:?}");
    let pg = env.postgres(&ns, "app-db").unwrap();
    assert_eq!(pg["status"]["capabilities"][0]["provenance"], "adopted");
    assert_eq!(pg["status"]["capabilities"][0]["release"], "my-cnpg");
    // The adopted release is untouched: still Helm's revision 1.
    let history = env.helm("postgres-operator", &["history", "my-cnpg"]);
    assert_eq!(history.as_array().map(Vec::len), Some(1), "{history}");
    op.stop();
}

fn cnpg_crds_yaml() -> String {
    let chart = shared().unwrap().join("cloudnative-pg-0.29.0.tgz");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_navique-operator"))
        .args([
            "template",
            "x",
            chart.to_str().unwrap(),
            "--show-only",
            "templates/crds/crds.yaml",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn controller_deployment(ns: &str, name: &str, labels: Value, image: &str) -> String {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "manager", "image": image}]}},
        },
    })
    .to_string()
}

#[test]
fn a_controller_running_anywhere_with_its_crds_is_adopted_by_labels_or_by_image() {
    if shared().is_none() {
        return;
    }
    for (labels, image, matched) in [
        (
            json!({"app.kubernetes.io/name": "cloudnative-pg"}),
            "ghcr.io/cloudnative-pg/cloudnative-pg:1.27.1",
            "identity labels",
        ),
        (
            json!({"app": "db-operator"}),
            "registry.local:5000/mirror/cloudnative-pg/cloudnative-pg:1.27.1",
            "image registry.local:5000/mirror/cloudnative-pg/cloudnative-pg:1.27.1",
        ),
    ] {
        let env = Env::new();
        env.apply_yaml(&cnpg_crds_yaml());
        let ops = env.namespace("dbops");
        env.apply_yaml(&controller_deployment(
            &ops,
            "cnpg-controller-manager",
            labels,
            image,
        ));
        let op = Operator::start(&env);
        let ns = env.namespace("team-c");
        env.create_postgres(&ns, "app-db", managed());
        env.wait_postgres_ready(&ns, "app-db");
        assert!(
            env.release("cnpg-system", "cloudnative-pg").is_none(),
            "no second CNPG"
        );
        let cap = env.capability("cloudnative-pg");
        assert_eq!(cap["status"]["provenance"], "adopted", "{cap}");
        assert_eq!(
            cap["status"]["release"],
            json!({"name": "cnpg-controller-manager", "namespace": ops})
        );
        let adopted = env.events("cloudnative-pg");
        assert!(
            adopted
                .iter()
                .any(|e| e.starts_with("Adopted: ") && e.contains(matched)),
            "{adopted:?}"
        );
        op.stop();
    }
}

#[test]
fn an_unrelated_workload_in_the_expected_namespace_is_not_the_operator() {
    if shared().is_none() {
        return;
    }
    let env = Env::new();
    env.kubectl(&["create", "namespace", "cnpg-system"]);
    env.track_namespace("cnpg-system");
    env.apply_yaml(&controller_deployment(
        "cnpg-system",
        "web",
        json!({"app": "web"}),
        "nginx:1.27",
    ));
    let op = Operator::start(&env);
    let ns = env.namespace("team-d");
    env.create_postgres(&ns, "app-db", managed());
    env.wait_postgres_ready(&ns, "app-db");
    assert!(ours_release(&env, "cnpg-system", "cloudnative-pg"));
    assert_eq!(
        env.capability("cloudnative-pg")["status"]["provenance"],
        "owned"
    );
    op.stop();
}

#[test]
fn orphan_crds_left_by_an_uninstalled_release_are_taken_over_by_our_install() {
    if shared().is_none() || !helm_available() {
        return;
    }
    let env = Env::new();
    let chart = shared().unwrap().join("cloudnative-pg-0.29.0.tgz");
    env.helm(
        "old-ns",
        &["install", "old-cnpg", chart.to_str().unwrap(), "{}"],
    );
    env.track_namespace("old-ns");
    env.helm("old-ns", &["uninstall", "old-cnpg"]);
    let crds = env.dynamic(
        "apiextensions.k8s.io",
        "v1",
        "CustomResourceDefinition",
        "customresourcedefinitions",
        None,
    );
    let left = env
        .get(&crds, "clusters.postgresql.cnpg.io")
        .expect("Helm keeps the CRDs (resource-policy keep)");
    assert_eq!(
        left["metadata"]["annotations"]["meta.helm.sh/release-name"],
        "old-cnpg"
    );
    let op = Operator::start(&env);
    let ns = env.namespace("team-e");
    env.create_postgres(&ns, "app-db", managed());
    env.wait_postgres_ready(&ns, "app-db");
    assert!(ours_release(&env, "cnpg-system", "cloudnative-pg"));
    let now = env.get(&crds, "clusters.postgresql.cnpg.io").unwrap();
    assert_eq!(
        now["metadata"]["annotations"]["meta.helm.sh/release-name"],
        "cloudnative-pg"
    );
    assert_eq!(
        now["metadata"]["annotations"]["meta.helm.sh/release-namespace"],
        "cnpg-system"
    );
    op.stop();
}

#[test]
fn cnpg_is_uninstalled_with_its_last_managed_consumer_and_only_if_ours() {
    if shared().is_none() || !helm_available() {
        return;
    }
    let env = Env::new();
    let op = Operator::start(&env);
    let ns = env.namespace("team-f");
    env.create_postgres(&ns, "one", managed());
    env.create_postgres(&ns, "two", managed());
    env.wait_postgres_ready(&ns, "one");
    env.wait_postgres_ready(&ns, "two");
    env.delete_postgres(&ns, "one");
    env.wait_gone("PostgresCluster one", |e| e.postgres(&ns, "one").is_some());
    env.wait_for("one consumer left", Duration::from_secs(30), |e| {
        let c = e.capability("cloudnative-pg");
        (c["status"]["consumerCount"] == 1)
            .then_some(())
            .ok_or(c.to_string())
    });
    std::thread::sleep(Duration::from_secs(1));
    assert!(
        ours_release(&env, "cnpg-system", "cloudnative-pg"),
        "still needed by two"
    );
    env.delete_postgres(&ns, "two");
    env.wait_gone("our CloudNativePG release", |e| {
        e.release("cnpg-system", "cloudnative-pg").is_some()
    });
    env.wait_gone("our cert-manager release (needed by nothing now)", |e| {
        e.release("cert-manager", "cert-manager").is_some()
    });
    assert!(env
        .events("cloudnative-pg")
        .iter()
        .any(|e| e.starts_with("Uninstalled: ")));
    op.stop();

    // Adopted: never uninstalled.
    let env = Env::new();
    let chart = shared().unwrap().join("cloudnative-pg-0.29.0.tgz");
    env.helm(
        "postgres-operator",
        &["install", "my-cnpg", chart.to_str().unwrap(), "{}"],
    );
    env.track_namespace("postgres-operator");
    let op = Operator::start(&env);
    let ns = env.namespace("team-g");
    env.create_postgres(&ns, "one", managed());
    env.create_postgres(&ns, "two", managed());
    env.wait_postgres_ready(&ns, "one");
    env.wait_postgres_ready(&ns, "two");
    env.delete_postgres(&ns, "one");
    env.delete_postgres(&ns, "two");
    env.wait_gone("both PostgresClusters", |e| {
        e.postgres(&ns, "one").is_some() || e.postgres(&ns, "two").is_some()
    });
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(
        env.release("postgres-operator", "my-cnpg")
            .and_then(|l| l.get("status").cloned())
            .as_deref(),
        Some("deployed")
    );
    assert_eq!(
        env.capability("cloudnative-pg")["status"]["provenance"],
        "adopted"
    );
    op.stop();

    // External and adopt only: CloudNativePG (and so cert-manager) never installed.
    let env = Env::new();
    let op = Operator::start(&env);
    let ns = env.namespace("team-h");
    env.apply_yaml(&json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "pg-conn", "namespace": ns},
        "stringData": {"host": "db.example", "port": "5432", "username": "app", "password": "s3cret", "dbname": "app"}}).to_string());
    env.create_postgres(
        &ns,
        "ext",
        json!({"mode": "external", "external": {"connectionSecretRef": {"name": "pg-conn"}}}),
    );
    env.create_postgres(
        &ns,
        "legacy",
        json!({"mode": "adopt", "adopt": {"clusterRef": {"name": "legacy-db"}}}),
    );
    env.wait_for(
        "external PostgresCluster Ready",
        Duration::from_secs(30),
        |e| {
            (e.phase(&ns, "ext") == "Ready")
                .then_some(())
                .ok_or(e.phase(&ns, "ext"))
        },
    );
    env.wait_for(
        "adopting PostgresCluster waiting for its Cluster",
        Duration::from_secs(30),
        |e| {
            let p = e.postgres(&ns, "legacy").unwrap_or_default();
            let msg = condition(&p, "Ready")
                .map(|c| c["message"].to_string())
                .unwrap_or_default();
            msg.contains("legacy-db").then_some(()).ok_or(msg)
        },
    );
    std::thread::sleep(Duration::from_secs(1));
    assert!(env.releases().is_empty(), "{:?}", env.releases());
    assert_eq!(env.capability("cloudnative-pg")["status"]["needed"], false);
    assert_eq!(
        env.postgres(&ns, "ext").unwrap()["status"]["connectionSecret"],
        "pg-conn"
    );
    op.stop();
}

#[test]
fn cloudnative_pg_waits_for_a_cert_manager_webhook_that_is_not_ready() {
    if shared().is_none() {
        return;
    }
    // Workloads take 3 s to become Ready here: time to hold the webhook first.
    let env = Env::with(navique_sandbox::Options {
        ready_delay: Duration::from_secs(3),
        ..Default::default()
    });
    let op = Operator::start(&env);
    let ns = env.namespace("team-i");
    env.create_postgres(&ns, "app-db", managed());
    let deployments = env.dynamic(
        "apps",
        "v1",
        "Deployment",
        "deployments",
        Some("cert-manager"),
    );
    env.wait_for(
        "cert-manager's webhook Deployment",
        Duration::from_secs(60),
        |e| {
            e.get(&deployments, "cert-manager-webhook")
                .map(|_| ())
                .ok_or("absent".into())
        },
    );
    // Held unready: the embedded server's hold annotation; a real cluster
    // cannot schedule a pod with this node selector.
    env.kubectl(&[
        "-n",
        "cert-manager",
        "annotate",
        "deployment",
        "cert-manager-webhook",
        "sandbox.navique.dev/hold-unready=true",
    ]);
    env.kubectl(&[
        "-n",
        "cert-manager",
        "patch",
        "deployment",
        "cert-manager-webhook",
        "--type=merge",
        "-p",
        r#"{"spec":{"template":{"spec":{"nodeSelector":{"navique.test/no-such-node":"true"}}}}}"#,
    ]);
    env.wait_for(
        "CloudNativePG waiting on the webhook",
        Duration::from_secs(30),
        |e| {
            let c = e.capability("cloudnative-pg");
            let msg = condition(&c, "Progressing")
                .map(|c| c["message"].as_str().unwrap_or_default().to_string())
                .unwrap_or_default();
            msg.contains("cert-manager-webhook")
                .then_some(())
                .ok_or(msg)
        },
    );
    std::thread::sleep(Duration::from_secs(2));
    assert!(
        env.release("cnpg-system", "cloudnative-pg").is_none(),
        "installed before cert-manager was Ready"
    );
    let pg = env.postgres(&ns, "app-db").unwrap();
    assert_eq!(pg["status"]["phase"], "Pending");
    assert!(
        env.events("app-db")
            .iter()
            .any(|e| e.starts_with("Waiting: ") && e.contains("cloudnative-pg")),
        "{:?}",
        env.events("app-db")
    );
    env.kubectl(&[
        "-n",
        "cert-manager",
        "annotate",
        "deployment",
        "cert-manager-webhook",
        "sandbox.navique.dev/hold-unready-",
    ]);
    env.kubectl(&[
        "-n",
        "cert-manager",
        "patch",
        "deployment",
        "cert-manager-webhook",
        "--type=json",
        "-p",
        r#"[{"op":"remove","path":"/spec/template/spec/nodeSelector"}]"#,
    ]);
    env.wait_postgres_ready(&ns, "app-db");
    assert!(ours_release(&env, "cnpg-system", "cloudnative-pg"));
    let t = std::time::Instant::now();
    op.stop();
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "a normal stop took {:?}",
        t.elapsed()
    );
}

const CERT_MANAGER_OLD: (&str, &str) = (
    "v1.19.2",
    "87e2dafa946bd05c56be897b2fe2e171f2bbfad96c9d48409d4b1188d240af6f",
);

/// The built-in catalog's cert-manager pin.
const CERT_MANAGER_NEW: (&str, &str) = (
    "v1.21.1",
    "1231d2e3f363e3cb3def950b58138cd52c2f53903247177f1111156b3a907c60",
);

fn chart_version(env: &Env, ns: &str, name: &str) -> String {
    let r = env
        .releases()
        .into_iter()
        .find(|(n, r, _, _)| n == ns && r == name)
        .expect("release");
    r.3.get("core.navique.com/chart-version")
        .cloned()
        .unwrap_or_default()
}

#[test]
fn a_newer_operator_upgrades_its_own_cert_manager_and_leaves_an_adopted_one_alone() {
    if shared().is_none() || !helm_available() {
        return;
    }
    let env = Env::new();
    let mut old = options(&env);
    old.catalog = catalog_with_pin("cert-manager", CERT_MANAGER_OLD.0, CERT_MANAGER_OLD.1);
    let op = Operator::start_with(old);
    let ns = env.namespace("team-j");
    env.create_postgres(&ns, "app-db", managed());
    env.wait_postgres_ready(&ns, "app-db");
    assert_eq!(
        chart_version(&env, "cert-manager", "cert-manager"),
        "v1.19.2"
    );
    let helm_sees = env.helm("cert-manager", &["get", "cert-manager"]);
    assert!(helm_sees.to_string().contains("v1.19.2"));
    op.stop();

    let op = Operator::start(&env);
    env.wait_for(
        "cert-manager upgraded to the new pin",
        Duration::from_secs(60),
        |e| {
            let l = e
                .release("cert-manager", "cert-manager")
                .unwrap_or_default();
            (l.get("version").map(String::as_str) == Some("2")
                && l.get("status").map(String::as_str) == Some("deployed"))
            .then_some(())
            .ok_or(format!("{l:?}"))
        },
    );
    assert_eq!(
        chart_version(&env, "cert-manager", "cert-manager"),
        "v1.21.1"
    );
    let history = env.helm("cert-manager", &["history", "cert-manager"]);
    let statuses: Vec<String> = history
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["status"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(statuses, ["superseded", "deployed"], "{history}");
    // The CRDs moved with it: v1.21.1's, applied by us.
    let crds = env.dynamic(
        "apiextensions.k8s.io",
        "v1",
        "CustomResourceDefinition",
        "customresourcedefinitions",
        None,
    );
    let crd = env.get(&crds, "certificates.cert-manager.io").unwrap();
    assert_eq!(
        crd["metadata"]["labels"]["app.kubernetes.io/version"],
        "v1.21.1"
    );
    assert!(env
        .events("cert-manager")
        .iter()
        .any(|e| e.starts_with("Upgraded: ")));
    // Converged: the CloudNativePG release was not touched by the restart.
    assert_eq!(
        env.release("cnpg-system", "cloudnative-pg").unwrap()["version"],
        "1"
    );
    op.stop();

    // Someone else's cert-manager at the old version is adopted and stays.
    let env = Env::new();
    let old_chart = shared().unwrap().join("upgrade/cert-manager-v1.19.2.tgz");
    env.helm(
        "tools",
        &[
            "install",
            "my-cm",
            old_chart.to_str().unwrap(),
            r#"{"crds": {"enabled": true}}"#,
        ],
    );
    env.track_namespace("tools");
    let op = Operator::start(&env);
    let ns = env.namespace("team-k");
    env.create_postgres(&ns, "app-db", managed());
    env.wait_postgres_ready(&ns, "app-db");
    let cap = env.capability("cert-manager");
    assert_eq!(cap["status"]["provenance"], "adopted");
    assert_eq!(cap["status"]["installedVersion"], "v1.19.2");
    assert_eq!(cap["status"]["bundledVersion"], "v1.21.1");
    assert_eq!(env.release("tools", "my-cm").unwrap()["version"], "1");
    assert!(env.release("cert-manager", "cert-manager").is_none());
    op.stop();
}

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

fn operator_process(env: &Env) -> std::process::Child {
    operator_process_with(env, None)
}

/// The operator as a process; `catalog` a catalog file in place of the built-in one.
fn operator_process_with(env: &Env, catalog: Option<&std::path::Path>) -> std::process::Child {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_navique-operator"));
    if let Some(c) = catalog {
        cmd.arg("run").arg("--catalog").arg(c);
    } else {
        cmd.arg("run");
    }
    cmd.args([
        "--leader-elect=false",
        "--metrics-bind",
        "0",
        "--health-bind",
        "0",
        "--poll-ms",
        "200",
        "--kubeconfig",
    ])
    .arg(&env.kubeconfig);
    for d in charts_dirs() {
        cmd.arg("--charts-dir").arg(d);
    }
    // NAVIQUE_TEST_OPERATOR_LOGS=DIR keeps each process's debug log there.
    let stderr = match std::env::var_os("NAVIQUE_TEST_OPERATOR_LOGS") {
        Some(dir) => {
            cmd.env(
                "RUST_LOG",
                "debug,kube=info,hyper=info,tower=info,rustls=info",
            );
            let path = std::path::Path::new(&dir).join(format!(
                "operator-{}-{}.log",
                std::process::id(),
                rand::random::<u32>()
            ));
            std::process::Stdio::from(std::fs::File::create(path).expect("log file"))
        }
        None => std::process::Stdio::null(),
    };
    cmd.stdout(std::process::Stdio::null())
        .stderr(stderr)
        .spawn()
        .expect("navique-operator run")
}

#[test]
fn killed_mid_install_it_recovers_the_pending_release_and_a_converged_pass_writes_nothing() {
    if shared().is_none() || !helm_available() {
        return;
    }
    let env = Env::with(navique_sandbox::Options {
        simulate: false,
        ..Default::default()
    });
    env.install_crds();
    let ns = env.namespace("team-l");
    env.create_postgres(&ns, "app-db", managed());
    let mut child = operator_process(&env);
    // Without simulated controllers the install waits on its hook Job: kill it there.
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
    child.kill().expect("SIGKILL");
    child.wait().unwrap();
    assert_eq!(
        env.release("cert-manager", "cert-manager").unwrap()["status"],
        "pending-install",
        "what Helm would leave stuck"
    );
    if let Some(sb) = &env.sandbox {
        sb.set_simulate(true);
    }
    let op = Operator::start(&env);
    env.kubectl(&["-n", "cert-manager", "rollout", "restart", "deployment"]);
    env.wait_postgres_ready(&ns, "app-db");
    let history = env.helm("cert-manager", &["history", "cert-manager"]);
    // Revision 1 was marked failed (interrupted), then superseded by the
    // successful retry, as Helm supersedes the last release on upgrade.
    let statuses: Vec<&str> = history
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["superseded", "deployed"], "{history}");
    let ours = std::process::Command::new(env!("CARGO_BIN_EXE_navique-operator"))
        .args([
            "history",
            "cert-manager",
            "-n",
            "cert-manager",
            "-o",
            "json",
            "--kubeconfig",
        ])
        .arg(&env.kubeconfig)
        .output()
        .unwrap();
    let ours: Value = serde_json::from_slice(&ours.stdout).unwrap();
    assert!(
        ours[0]["description"]
            .as_str()
            .unwrap_or_default()
            .contains("interrupted"),
        "{ours}"
    );
    let releases: Vec<String> = env
        .releases()
        .into_iter()
        .map(|(n, r, l, _)| format!("{n}/{r}:{}", l["status"]))
        .collect();
    assert_eq!(
        releases,
        [
            "cert-manager/cert-manager:deployed",
            "cnpg-system/cloudnative-pg:deployed"
        ]
    );
    op.stop();

    // A fresh start reconciles everything once more; converged, it writes nothing.
    let before = env.write_requests();
    let op = Operator::start(&env);
    env.wait_for("a full reconcile pass", Duration::from_secs(30), |_| {
        let (c, p) = (
            op.metrics.reconciles("Capability"),
            op.metrics.reconciles("PostgresCluster"),
        );
        (c >= 6 && p >= 1)
            .then_some(())
            .ok_or(format!("{c} capability and {p} PostgresCluster reconciles"))
    });
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(
        env.write_requests(),
        before,
        "a converged pass made write requests"
    );
    assert!(op.metrics.reconciles("Capability") >= 6);
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
fn bad_input_is_reported_where_it_is_and_breaks_nothing_else() {
    if shared().is_none() {
        return;
    }
    let env = Env::new();
    // A catalog pin whose digest is wrong: that capability fails, naming both digests.
    let mut opts = options(&env);
    opts.catalog = catalog_with_pin("cloudnative-pg", "0.29.0", &"ab".repeat(32));
    let op = Operator::start_with(opts);
    let ns = env.namespace("team-n");
    // Refused by the API server where it runs the CRD's CEL rule and enum;
    // otherwise the operator reports the field on the resource.
    for (name, spec, field) in [
        ("no-block", json!({"mode": "managed"}), "spec.managed"),
        ("sideways", json!({"mode": "sideways"}), "spec.mode"),
    ] {
        let body = json!({"apiVersion": "core.navique.com/v1alpha1", "kind": "PostgresCluster", "metadata": {"name": name, "namespace": ns}, "spec": spec}).to_string();
        let (ok, _, err) = env.kubectl_result(&["apply", "--server-side", "-f", "-"], Some(&body));
        if !ok {
            assert!(err.contains(field.trim_start_matches("spec.")), "{err}");
            continue;
        }
        env.wait_for(
            &format!("{name} rejected naming {field}"),
            Duration::from_secs(30),
            |e| {
                let p = e.postgres(&ns, name).unwrap_or_default();
                let c = condition(&p, "Ready").cloned().unwrap_or_default();
                (p["status"]["phase"] == "Failed"
                    && c["reason"] == "InvalidSpec"
                    && c["message"].as_str().unwrap_or_default().starts_with(field))
                .then_some(())
                .ok_or(p["status"].to_string())
            },
        );
        assert!(
            env.events(name)
                .iter()
                .any(|e| e.starts_with("Failed: invalid spec: ") && e.contains(field)),
            "{:?}",
            env.events(name)
        );
    }
    env.create_postgres(&ns, "good", managed());
    env.wait_for(
        "the bad pin reported on its Capability",
        Duration::from_secs(60),
        |e| {
            let c = e.capability("cloudnative-pg");
            let msg = condition(&c, "Progressing")
                .map(|c| c["message"].to_string())
                .unwrap_or_default();
            (msg.contains(&"ab".repeat(32))
                && msg.contains("8c30504560828bfd694a596abd69dfb4b9bb4cc14b7e9ca78e1bbbceafa3af08")
                && msg.contains("cloudnative-pg-0.29.0.tgz"))
            .then_some(())
            .ok_or(msg)
        },
    );
    assert!(env
        .events("cloudnative-pg")
        .iter()
        .any(|e| e.starts_with("Failed: ") && e.contains("sha256")));
    // Nothing else broke: cert-manager installed and Ready.
    assert!(
        ours_release(&env, "cert-manager", "cert-manager"),
        "{:?}",
        env.releases()
    );
    env.wait_for("cert-manager Ready", Duration::from_secs(30), |e| {
        (e.capability("cert-manager")["status"]["ready"] == true)
            .then_some(())
            .ok_or("not ready".into())
    });
    op.stop();

    // A missing chart file names the path.
    let env = Env::new();
    let empty = std::env::temp_dir().join(format!("navique-no-charts-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let mut opts = options(&env);
    opts.charts_dirs = vec![empty.clone()];
    let op = Operator::start_with(opts);
    let ns = env.namespace("team-o");
    env.create_postgres(&ns, "good", managed());
    env.wait_for("the missing chart reported", Duration::from_secs(30), |e| {
        let c = e.capability("cert-manager");
        let msg = condition(&c, "Progressing")
            .map(|c| c["message"].to_string())
            .unwrap_or_default();
        msg.contains(&format!("{}/cert-manager-v1.21.1.tgz", empty.display()))
            .then_some(())
            .ok_or(msg)
    });
    op.stop();
    std::fs::remove_dir_all(&empty).unwrap();

    // A catalog file with an error stops the process at start, naming file, line and column.
    let bad = std::env::temp_dir().join(format!("navique-bad-catalog-{}.toml", std::process::id()));
    let text = navique_ai_core_operator::operator::model::catalog::BUILT_IN
        .replace("release = \"cloudnative-pg\"", "release = 3");
    let line = text.lines().position(|l| l == "release = 3").unwrap() + 1;
    std::fs::write(&bad, text).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_navique-operator"))
        .args(["run", "--catalog", bad.to_str().unwrap(), "--kubeconfig"])
        .arg(&env.kubeconfig)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("{}:{line}:11", bad.display())),
        "{err}"
    );
    std::fs::remove_file(&bad).unwrap();
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

fn http_get(addr: &str, path: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect(addr) else {
        return (0, String::new());
    };
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    let code = out
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (code, out)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
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
    let mut child = cmd
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    env.wait_for("/readyz", Duration::from_secs(30), |_| {
        let (code, _) = http_get(&health, "/readyz");
        (code == 200).then_some(()).ok_or(format!("{code}"))
    });
    assert_eq!(http_get(&health, "/healthz").0, 200);
    let ns = env.namespace("team-q");
    env.create_postgres(&ns, "app-db", managed());
    env.wait_postgres_ready(&ns, "app-db");
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

#[test]
fn managed_to_external_deletes_only_the_cluster_we_emitted_and_releases_cnpg() {
    if shared().is_none() {
        return;
    }
    let env = Env::new();
    let op = Operator::start(&env);
    let ns = env.namespace("team-r");
    // The user's own CNPG Cluster, adopted by another PostgresCluster: never ours to delete.
    env.create_postgres(&ns, "app-db", managed());
    env.wait_postgres_ready(&ns, "app-db");
    env.apply_yaml(&json!({"apiVersion": "postgresql.cnpg.io/v1", "kind": "Cluster", "metadata": {"name": "legacy-db", "namespace": ns},
        "spec": {"instances": 1, "storage": {"size": "1Gi"}}}).to_string());
    env.create_postgres(
        &ns,
        "legacy",
        json!({"mode": "adopt", "adopt": {"clusterRef": {"name": "legacy-db"}}}),
    );
    env.wait_postgres_ready(&ns, "legacy");
    env.apply_yaml(&json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "pg-conn", "namespace": ns},
        "stringData": {"host": "h", "port": "5432", "username": "u", "password": "p", "dbname": "d"}}).to_string());
    let clusters = env.dynamic("postgresql.cnpg.io", "v1", "Cluster", "clusters", Some(&ns));
    for name in ["app-db", "legacy"] {
        env.create_postgres(
            &ns,
            name,
            json!({"mode": "external", "external": {"connectionSecretRef": {"name": "pg-conn"}}}),
        );
    }
    env.wait_for(
        "the CNPG Cluster we emitted deleted",
        Duration::from_secs(30),
        |e| {
            if e.get(&clusters, "app-db").is_none() {
                return Ok(());
            }
            Err(e
                .postgres(&ns, "app-db")
                .map(|p| p.to_string())
                .unwrap_or_default())
        },
    );
    env.wait_for("app-db external and Ready", Duration::from_secs(30), |e| {
        let p = e.postgres(&ns, "app-db").unwrap_or_default();
        (p["status"]["phase"] == "Ready"
            && p["status"]["mode"] == "external"
            && p["status"]["connectionSecret"] == "pg-conn")
            .then_some(())
            .ok_or(p["status"].to_string())
    });
    assert!(
        env.events("app-db")
            .iter()
            .any(|e| e.starts_with("GarbageCollected: ") && e.contains("Cluster")),
        "{:?}",
        env.events("app-db")
    );
    env.wait_gone("our CloudNativePG release, needed by nothing now", |e| {
        e.release("cnpg-system", "cloudnative-pg").is_some()
    });
    assert!(
        env.get(&clusters, "legacy-db").is_some(),
        "the adopted Cluster was deleted"
    );
    assert_eq!(
        env.postgres(&ns, "app-db").unwrap()["status"].get("owned"),
        None
    );
    op.stop();
}

fn clickhouse_managed(type_: &str, keeper: i64) -> Value {
    json!({"type": type_, "mode": "managed", "managed": {"shards": 1, "replicas": 2, "storage": {"size": "5Gi"}, "keeper": {"replicas": keeper}}})
}

/// ClickHouse Inc.'s operator and Altinity's never run here: the test
/// writes the status each would write (`Env::clickhouse_reports_ready`).
#[test]
fn clickhouse_managed_then_switched_to_altinity_swaps_operators_and_keeps_the_password() {
    if shared().is_none() {
        return;
    }
    let env = Env::new();
    let op = Operator::start_with(licensed_options(&env, &["altinity"]));
    let ns = env.namespace("team-ch");
    env.create(
        "ClickHouseCluster",
        &ns,
        "analytics",
        clickhouse_managed("clickhouse", 0),
    );
    let ch = env.wait_phase("ClickHouseCluster", &ns, "analytics", "Ready");
    assert_eq!(ch["status"]["connectionSecret"], "analytics-clickhouse");
    assert_eq!(ch["status"]["type"], "clickhouse");
    assert!(ours_release(
        &env,
        "clickhouse-operator-system",
        "clickhouse-operator"
    ));
    assert!(ours_release(&env, "cert-manager", "cert-manager"));
    assert!(
        created_at(&env, "cert-manager", "cert-manager")
            <= created_at(&env, "clickhouse-operator-system", "clickhouse-operator")
    );
    let inc = |kind: &str, plural: &str| {
        env.dynamic("clickhouse.com", "v1alpha1", kind, plural, Some(&ns))
    };
    let server = env
        .get(&inc("ClickHouseCluster", "clickhouseclusters"), "analytics")
        .expect("emitted");
    assert_eq!(server["spec"]["replicas"], 2);
    assert_eq!(server["spec"]["keeperClusterRef"]["name"], "analytics");
    assert_eq!(
        server["metadata"]["ownerReferences"][0]["uid"],
        ch["metadata"]["uid"]
    );
    assert!(env
        .get(&inc("KeeperCluster", "keeperclusters"), "analytics")
        .is_some());
    let password = env
        .secret_value(&ns, "analytics-clickhouse", "password")
        .expect("a generated password");
    assert_eq!(password.len(), 32);
    assert_eq!(
        env.secret_value(&ns, "analytics-clickhouse", "host")
            .as_deref(),
        Some(format!("analytics-clickhouse-headless.{ns}.svc").as_str())
    );
    let revision = |e: &Env| {
        e.release("clickhouse-operator-system", "clickhouse-operator")
            .and_then(|l| l.get("version").cloned())
    };
    let before = revision(&env);

    // type clickhouse -> altinity: ClickHouse Inc.'s objects are deleted,
    // its operator released, Altinity's installed; the password stays.
    env.create(
        "ClickHouseCluster",
        &ns,
        "analytics",
        clickhouse_managed("altinity", 1),
    );
    env.wait_for("the type switched", Duration::from_secs(90), |e| {
        e.clickhouse_reports_ready(&ns);
        let r = e
            .resource("ClickHouseCluster", &ns, "analytics")
            .unwrap_or_default();
        (r["status"]["type"] == "altinity" && r["status"]["phase"] == "Ready")
            .then_some(())
            .ok_or(r["status"].to_string())
    });
    assert!(env
        .get(&inc("ClickHouseCluster", "clickhouseclusters"), "analytics")
        .is_none());
    assert!(env
        .get(&inc("KeeperCluster", "keeperclusters"), "analytics")
        .is_none());
    let chi = env
        .get(
            &env.dynamic(
                "clickhouse.altinity.com",
                "v1",
                "ClickHouseInstallation",
                "clickhouseinstallations",
                Some(&ns),
            ),
            "analytics",
        )
        .expect("a ClickHouseInstallation");
    assert_eq!(
        chi["spec"]["configuration"]["clusters"][0]["layout"]["replicasCount"],
        2
    );
    assert!(env
        .get(
            &env.dynamic(
                "clickhouse-keeper.altinity.com",
                "v1",
                "ClickHouseKeeperInstallation",
                "clickhousekeeperinstallations",
                Some(&ns)
            ),
            "analytics",
        )
        .is_some());
    assert!(ours_release(
        &env,
        "altinity-clickhouse",
        "altinity-clickhouse-operator"
    ));
    env.wait_gone("the ClickHouse Inc. operator, needed by nothing now", |e| {
        e.release("clickhouse-operator-system", "clickhouse-operator")
            .is_some()
    });
    assert_eq!(
        env.secret_value(&ns, "analytics-clickhouse", "password"),
        Some(password),
        "the connection Secret keeps its password across reconciles and the switch"
    );
    assert_eq!(
        env.secret_value(&ns, "analytics-clickhouse", "host")
            .as_deref(),
        Some(format!("clickhouse-analytics.{ns}.svc").as_str())
    );
    let events = env.events("analytics");
    for gone in ["ClickHouseCluster", "KeeperCluster"] {
        assert!(
            events
                .iter()
                .any(|e| e.starts_with("GarbageCollected: ") && e.contains(gone)),
            "{events:?}"
        );
    }
    assert!(before.is_some(), "the first operator had a release");

    // Deleted: the Altinity objects and our Secret go, then the operator.
    env.delete("ClickHouseCluster", &ns, "analytics");
    env.wait_gone("the ClickHouseCluster", |e| {
        e.resource("ClickHouseCluster", &ns, "analytics").is_some()
    });
    assert_eq!(env.secret_value(&ns, "analytics-clickhouse", "host"), None);
    env.wait_gone("Altinity's operator, needed by nothing now", |e| {
        e.release("altinity-clickhouse", "altinity-clickhouse-operator")
            .is_some()
    });
    op.stop();
}

#[test]
fn clickhouse_adopt_uses_the_adopted_servers_password_and_external_names_a_missing_key() {
    if shared().is_none() {
        return;
    }
    let env = Env::new();
    let op = Operator::start_with(licensed_options(&env, &["altinity"]));
    let ns = env.namespace("team-cha");
    // The user's own Altinity operator: its CRDs (applied as they come in
    // the chart) and the ClickHouseInstallation it serves.
    let crds = shared()
        .unwrap()
        .join("altinity-clickhouse-operator-0.25.6.tgz");
    let dir = temp_dir("navique-altinity-crds");
    let status = std::process::Command::new("tar")
        .args(["xzf", crds.to_str().unwrap(), "-C", dir.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(status.success());
    env.kubectl(&[
        "apply",
        "--server-side",
        "-f",
        dir.join("altinity-clickhouse-operator/crds")
            .to_str()
            .unwrap(),
    ]);
    env.apply_yaml(&json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "legacy-pw", "namespace": ns},
        "stringData": {"pw": "hunter2"}}).to_string());
    env.apply_yaml(&json!({"apiVersion": "clickhouse.altinity.com/v1", "kind": "ClickHouseInstallation",
        "metadata": {"name": "legacy-ch", "namespace": ns},
        "spec": {"configuration": {"users": {"default/password": {"valueFrom": {"secretKeyRef": {"name": "legacy-pw", "key": "pw"}}}},
                 "clusters": [{"name": "c", "layout": {"shardsCount": 1}}]}}}).to_string());
    env.create(
        "ClickHouseCluster",
        &ns,
        "legacy",
        json!({"type": "altinity", "mode": "adopt", "adopt": {"ref": {"name": "legacy-ch"}}}),
    );
    let r = env.wait_phase("ClickHouseCluster", &ns, "legacy", "Ready");
    assert_eq!(r["status"]["connectionSecret"], "legacy-clickhouse");
    assert_eq!(
        env.secret_value(&ns, "legacy-clickhouse", "password")
            .as_deref(),
        Some("hunter2")
    );
    assert_eq!(
        env.secret_value(&ns, "legacy-clickhouse", "host")
            .as_deref(),
        Some(format!("clickhouse-legacy-ch.{ns}.svc").as_str())
    );
    assert!(
        env.release("altinity-clickhouse", "altinity-clickhouse-operator")
            .is_none(),
        "adopt installs nothing"
    );

    env.apply_yaml(&json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "ch-conn", "namespace": ns},
        "stringData": {"host": "ch.example", "httpPort": "8123", "nativePort": "9000", "username": "u", "password": "p"}}).to_string());
    env.create(
        "ClickHouseCluster",
        &ns,
        "remote",
        json!({"type": "clickhouse", "mode": "external", "external": {"connectionSecretRef": {"name": "ch-conn"}}}),
    );
    let r = env.wait_phase("ClickHouseCluster", &ns, "remote", "Provisioning");
    let ready = r["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "Ready")
        .unwrap()
        .clone();
    assert!(
        ready["message"]
            .as_str()
            .unwrap()
            .contains("lacks key database"),
        "{ready}"
    );
    env.apply_yaml(&json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "ch-conn", "namespace": ns},
        "stringData": {"database": "default"}}).to_string());
    env.wait_phase("ClickHouseCluster", &ns, "remote", "Ready");
    assert!(env.releases().is_empty(), "{:?}", env.releases());

    // Deleting the adopting resource deletes only our Secret.
    env.delete("ClickHouseCluster", &ns, "legacy");
    env.wait_gone("the adopting ClickHouseCluster", |e| {
        e.resource("ClickHouseCluster", &ns, "legacy").is_some()
    });
    assert_eq!(env.secret_value(&ns, "legacy-clickhouse", "host"), None);
    assert!(env
        .get(
            &env.dynamic(
                "clickhouse.altinity.com",
                "v1",
                "ClickHouseInstallation",
                "clickhouseinstallations",
                Some(&ns)
            ),
            "legacy-ch"
        )
        .is_some());
    env.kubectl(&[
        "delete",
        "-f",
        dir.join("altinity-clickhouse-operator/crds")
            .to_str()
            .unwrap(),
        "--wait=false",
    ]);
    let _ = std::fs::remove_dir_all(&dir);
    op.stop();
}

fn external_pg() -> Value {
    json!({"mode": "external", "external": {"connectionSecretRef": {"name": "pg-conn"}}})
}

fn pg_conn(env: &Env, ns: &str) {
    env.apply_yaml(&json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "pg-conn", "namespace": ns},
        "stringData": {"host": "h", "port": "5432", "username": "u", "password": "p", "dbname": "d"}}).to_string());
}

fn condition_of(r: &Value, type_: &str) -> Value {
    r["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == type_))
        .cloned()
        .unwrap_or(Value::Null)
}

#[test]
fn without_a_license_the_free_tier_limits_kinds_and_skips_features_and_a_freed_place_is_taken() {
    if shared().is_none() {
        return;
    }
    let env = Env::new();
    let op = Operator::start(&env);
    let ns = env.namespace("team-free");
    pg_conn(&env, &ns);
    for name in ["pg-a", "pg-b", "pg-c"] {
        env.create_postgres(&ns, name, external_pg());
    }
    env.wait_phase("PostgresCluster", &ns, "pg-a", "Ready");
    env.wait_phase("PostgresCluster", &ns, "pg-b", "Ready");
    let c = env.wait_phase("PostgresCluster", &ns, "pg-c", "Rejected");
    let licensed = condition_of(&c, "Licensed");
    assert_eq!(licensed["status"], "False");
    assert_eq!(licensed["reason"], "InstanceLimitExceeded");
    assert!(
        licensed["message"]
            .as_str()
            .unwrap()
            .contains("limited to 2"),
        "{licensed}"
    );
    assert!(
        env.events("pg-c")
            .iter()
            .any(|e| e.starts_with("InstanceLimitExceeded: ")),
        "{:?}",
        env.events("pg-c")
    );
    assert_eq!(
        condition_of(&env.postgres(&ns, "pg-a").unwrap(), "Licensed")["status"],
        "True"
    );

    // A feature outside the free tier: nothing is emitted or installed for it.
    env.create(
        "ClickHouseCluster",
        &ns,
        "alt",
        json!({"type": "altinity", "mode": "managed", "managed": {}}),
    );
    let alt = env.wait_phase("ClickHouseCluster", &ns, "alt", "Rejected");
    assert_eq!(condition_of(&alt, "Licensed")["reason"], "LicenseSkipped");
    assert!(alt["status"].get("owned").is_none(), "{alt}");
    assert!(env
        .events("alt")
        .iter()
        .any(|e| e.starts_with("LicenseSkipped: ")));
    assert_eq!(env.secret_value(&ns, "alt-clickhouse", "host"), None);
    assert!(env
        .release("altinity-clickhouse", "altinity-clickhouse-operator")
        .is_none());
    assert!(
        env.release("cert-manager", "cert-manager").is_none(),
        "nothing is needed for it"
    );

    // The oldest goes: the next in line takes its place.
    env.delete_postgres(&ns, "pg-a");
    env.wait_phase("PostgresCluster", &ns, "pg-c", "Ready");
    op.stop();
}

#[test]
fn a_signed_license_lifts_limits_until_it_expires_and_expiry_or_tampering_deletes_nothing() {
    if shared().is_none() {
        return;
    }
    let env = Env::new();
    let key = licenses::key();
    let dir = temp_dir("navique-license");
    let mut opts = options(&env);
    let license_ns = env.namespace("navique-lic");
    opts.namespace = license_ns.clone();
    opts.license_key = Some(
        navique_ai_core_operator::operator::model::licensing::public_key_from_pem(
            &std::fs::read_to_string(licenses::public_pem(&key, &dir)).unwrap(),
        )
        .unwrap(),
    );
    // Long enough for a managed database to become Ready first.
    let lifetime = if env.is_real() { 240 } else { 25 };
    let expires = chrono::Utc::now() + chrono::Duration::seconds(lifetime);
    let payload = json!({"licensee": "Acme", "tier": "enterprise", "expires": expires.to_rfc3339(),
        "limits": {"PostgresCluster": 3}, "features": ["altinity"]});
    licenses::write(&env, &license_ns, &key, &payload, None);
    let op = Operator::start_with(opts);
    let ns = env.namespace("team-lic");
    pg_conn(&env, &ns);
    env.create_postgres(&ns, "pg-1", external_pg());
    env.create_postgres(&ns, "pg-2", external_pg());
    std::thread::sleep(Duration::from_millis(1100)); // creationTimestamp has seconds
    env.create_postgres(&ns, "pg-3", managed());
    env.apply_yaml(&json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "ch-conn", "namespace": ns},
        "stringData": {"host": "h", "httpPort": "8123", "nativePort": "9000", "username": "u", "password": "p", "database": "d"}}).to_string());
    env.create(
        "ClickHouseCluster",
        &ns,
        "alt",
        json!({"type": "altinity", "mode": "external", "external": {"connectionSecretRef": {"name": "ch-conn"}}}),
    );
    for name in ["pg-1", "pg-2", "pg-3"] {
        let r = env.wait_phase("PostgresCluster", &ns, name, "Ready");
        assert!(
            condition_of(&r, "Licensed")["message"]
                .as_str()
                .unwrap()
                .contains("licensed to Acme"),
            "{r}"
        );
    }
    env.wait_phase("ClickHouseCluster", &ns, "alt", "Ready");
    assert!(
        chrono::Utc::now() < expires,
        "the managed database became Ready only after the license expired"
    );

    // Expiry with nothing else changing: the free tier; pg-3 (newest) and
    // the altinity one stop being updated; nothing of theirs is deleted.
    let r = env.wait_for(
        "the expiry taking effect",
        Duration::from_secs(lifetime as u64 + 30),
        |e| {
            let r = e.postgres(&ns, "pg-3").unwrap_or_default();
            (r["status"]["phase"] == "Rejected")
                .then_some(r.clone())
                .ok_or(r["status"].to_string())
        },
    );
    assert!(
        condition_of(&r, "Licensed")["message"]
            .as_str()
            .unwrap()
            .contains("expired"),
        "{r}"
    );
    env.wait_phase("ClickHouseCluster", &ns, "alt", "Rejected");
    let clusters = env.dynamic("postgresql.cnpg.io", "v1", "Cluster", "clusters", Some(&ns));
    assert!(
        env.get(&clusters, "pg-3").is_some(),
        "licensing never deletes"
    );
    assert!(
        ours_release(&env, "cnpg-system", "cloudnative-pg"),
        "licensing never uninstalls"
    );
    assert_eq!(env.phase(&ns, "pg-1"), "Ready");
    let expired: Vec<String> = env
        .events("navique-license")
        .into_iter()
        .filter(|e| e.starts_with("LicenseExpired: "))
        .collect();
    assert_eq!(expired.len(), 1, "{expired:?}");

    // A payload changed after signing is the free tier too.
    let later = chrono::Utc::now() + chrono::Duration::days(365);
    let mut forged = payload.clone();
    forged["expires"] = json!(later.to_rfc3339());
    licenses::write(&env, &license_ns, &key, &payload, Some(&forged));
    env.wait_for(
        "the tampered license judged",
        Duration::from_secs(30),
        |e| {
            let r = e.postgres(&ns, "pg-3").unwrap_or_default();
            let m = condition_of(&r, "Licensed")["message"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            m.contains("does not match").then_some(()).ok_or(m)
        },
    );
    assert_eq!(env.phase(&ns, "pg-3"), "Rejected");

    // A valid license again: everything is looked after again.
    licenses::write(&env, &license_ns, &key, &forged, None);
    env.wait_phase("PostgresCluster", &ns, "pg-3", "Ready");
    env.wait_phase("ClickHouseCluster", &ns, "alt", "Ready");
    let _ = std::fs::remove_dir_all(&dir);
    op.stop();
}

/// CloudNativePG's own finalizer on its Cluster is played by the test: set
/// while it "cleans up", removed when it is done.
#[test]
fn deletion_waits_for_an_upstream_finalizer_names_it_and_releases_cnpg_only_after() {
    if shared().is_none() {
        return;
    }
    let env = Env::new();
    let op = Operator::start(&env);
    let ns = env.namespace("team-fin");
    env.create_postgres(&ns, "app-db", managed());
    env.wait_postgres_ready(&ns, "app-db");
    let clusters = env.dynamic("postgresql.cnpg.io", "v1", "Cluster", "clusters", Some(&ns));
    const HELD: &str = "cnpg.io/played-by-test";
    let set_finalizers = |e: &Env, list: Value| {
        e.block(clusters.patch(
            "app-db",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"metadata": {"finalizers": list}})),
        ))
        .expect("patch the Cluster's finalizers");
    };
    set_finalizers(&env, json!([HELD]));
    env.delete_postgres(&ns, "app-db");
    let p = env.wait_for("the wait named", Duration::from_secs(30), |e| {
        let p = e.postgres(&ns, "app-db").unwrap_or_default();
        let m = condition_of(&p, "Ready")["message"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        (m.contains(&format!("Cluster {ns}/app-db")) && m.contains(HELD))
            .then_some(p.clone())
            .ok_or(p["status"].to_string())
    });
    assert_eq!(p["status"]["phase"], "Deleting");
    std::thread::sleep(Duration::from_secs(2));
    assert!(
        ours_release(&env, "cnpg-system", "cloudnative-pg"),
        "CloudNativePG must outlive the Cluster it serves"
    );
    assert!(
        env.postgres(&ns, "app-db").is_some(),
        "our finalizer holds until the Cluster is gone"
    );

    // The upstream operator finishes: the Cluster, then the resource, then CloudNativePG go.
    set_finalizers(&env, json!(null));
    env.wait_gone("the PostgresCluster", |e| {
        e.postgres(&ns, "app-db").is_some()
    });
    assert!(env.get(&clusters, "app-db").is_none());
    env.wait_gone("our CloudNativePG release", |e| {
        e.release("cnpg-system", "cloudnative-pg").is_some()
    });

    // A namespace deleted with our resources in it completes.
    let doomed = env.namespace("team-doomed");
    env.create_postgres(&doomed, "db", managed());
    env.wait_postgres_ready(&doomed, "db");
    env.kubectl(&["delete", "namespace", &doomed, "--wait=false"]);
    let namespaces: kube::api::Api<k8s_openapi::api::core::v1::Namespace> =
        kube::api::Api::all(env.client.clone());
    env.wait_for(
        "the deleted namespace gone",
        Duration::from_secs(90),
        |e| match e.block(namespaces.get_opt(&doomed)).ok().flatten() {
            None => Ok(()),
            Some(n) => Err(format!(
                "{:?}; our resource: {}",
                n.status,
                e.postgres(&doomed, "db").unwrap_or_default()
            )),
        },
    );
    op.stop();
}

#[test]
fn external_to_managed_then_managed_to_adopt_moves_what_we_own_and_nothing_else() {
    if shared().is_none() {
        return;
    }
    let env = Env::new();
    let op = Operator::start(&env);
    let ns = env.namespace("team-mig");
    pg_conn(&env, &ns);
    env.create_postgres(&ns, "app-db", external_pg());
    env.wait_postgres_ready(&ns, "app-db");
    assert!(env.release("cnpg-system", "cloudnative-pg").is_none());

    // external -> managed: CloudNativePG comes, the Cluster is emitted.
    env.create_postgres(&ns, "app-db", managed());
    let p = env.wait_for("managed and Ready", Duration::from_secs(90), |e| {
        e.cnpg_reports_ready(&ns);
        let p = e.postgres(&ns, "app-db").unwrap_or_default();
        (p["status"]["mode"] == "managed" && p["status"]["phase"] == "Ready")
            .then_some(p.clone())
            .ok_or(p["status"].to_string())
    });
    assert_eq!(p["status"]["connectionSecret"], "app-db-app");
    assert!(ours_release(&env, "cnpg-system", "cloudnative-pg"));
    let clusters = env.dynamic("postgresql.cnpg.io", "v1", "Cluster", "clusters", Some(&ns));
    assert!(env.get(&clusters, "app-db").is_some());
    assert!(env
        .get(
            &env.dynamic("", "v1", "Secret", "secrets", Some(&ns)),
            "pg-conn"
        )
        .is_some());

    // managed -> adopt: our Cluster goes, the adopted one is untouched,
    // CloudNativePG (ours, needed by nothing now) is released.
    env.apply_yaml(&json!({"apiVersion": "postgresql.cnpg.io/v1", "kind": "Cluster", "metadata": {"name": "legacy-db", "namespace": ns},
        "spec": {"instances": 1, "storage": {"size": "1Gi"}}}).to_string());
    let legacy_before = env.get(&clusters, "legacy-db").unwrap();
    env.create_postgres(
        &ns,
        "app-db",
        json!({"mode": "adopt", "adopt": {"clusterRef": {"name": "legacy-db"}}}),
    );
    env.wait_for("adopt and Ready", Duration::from_secs(90), |e| {
        e.cnpg_reports_ready(&ns);
        let p = e.postgres(&ns, "app-db").unwrap_or_default();
        (p["status"]["mode"] == "adopt" && p["status"]["phase"] == "Ready")
            .then_some(())
            .ok_or(p["status"].to_string())
    });
    env.wait_gone("the Cluster we emitted", |e| {
        e.get(&clusters, "app-db").is_some()
    });
    env.wait_gone("our CloudNativePG release", |e| {
        e.release("cnpg-system", "cloudnative-pg").is_some()
    });
    let legacy = env
        .get(&clusters, "legacy-db")
        .expect("the adopted Cluster stays");
    assert_eq!(legacy["spec"], legacy_before["spec"]);
    assert!(legacy["metadata"].get("ownerReferences").is_none());
    assert_eq!(
        env.postgres(&ns, "app-db").unwrap()["status"]["connectionSecret"],
        "legacy-db-app"
    );
    assert!(env.events("app-db").iter().any(
        |e| e.starts_with("GarbageCollected: ") && e.contains(&format!("Cluster {ns}/app-db"))
    ));
    op.stop();
}

fn env_var<'a>(proxy: &'a Value, name: &str) -> Option<&'a Value> {
    proxy["spec"]["env"]
        .as_array()?
        .iter()
        .find(|e| e["name"] == name)
}

/// The LiteLLM operator never runs here: the test writes the Ready
/// condition it would write on the LiteLLMProxy (`Env::litellm_reports_ready`).
#[test]
fn a_gateway_waits_for_its_database_then_follows_its_models_and_reference() {
    if shared().is_none() {
        return;
    }
    let env = Env::new();
    let op = Operator::start(&env);
    let ns = env.namespace("team-gw");
    env.apply_yaml(&json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "litellm-master", "namespace": ns},
        "stringData": {"key": "sk-master-not-logged"}}).to_string());
    env.apply_yaml(&json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "openai", "namespace": ns},
        "stringData": {"api-key": "sk-openai-not-logged"}}).to_string());
    let gateway = |pg: &str, models: Value| {
        json!({"postgresClusterRef": {"name": pg}, "masterKey": {"secretKeyRef": {"name": "litellm-master", "key": "key"}},
               "models": models})
    };
    let two = json!([
        {"name": "gpt-4o", "model": "openai/gpt-4o", "apiKey": {"secretKeyRef": {"name": "openai", "key": "api-key"}}},
        {"name": "llama3", "model": "ollama/llama3", "apiBase": "http://ollama:11434"}]);
    env.create("Gateway", &ns, "team-gw", gateway("app-db", two.clone()));
    let g = env.wait_for(
        "the Gateway waiting for its database",
        Duration::from_secs(30),
        |e| {
            let g = e.resource("Gateway", &ns, "team-gw").unwrap_or_default();
            let m = condition_of(&g, "Ready")["message"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            m.contains(&format!("PostgresCluster {ns}/app-db does not exist"))
                .then_some(g.clone())
                .ok_or(g["status"].to_string())
        },
    );
    assert_eq!(g["status"]["phase"], "Pending");
    assert!(env
        .events("team-gw")
        .iter()
        .any(|e| e.starts_with("Waiting: ") && e.contains("app-db")));
    assert!(
        env.release("litellm-operator-system", "litellm-operator")
            .is_none()
            || env.is_real()
    );

    env.create_postgres(&ns, "app-db", managed());
    let g = env.wait_phase("Gateway", &ns, "team-gw", "Ready");
    assert_eq!(
        g["status"]["endpoint"],
        format!("http://team-gw.{ns}.svc:4000")
    );
    assert!(ours_release(
        &env,
        "litellm-operator-system",
        "litellm-operator"
    ));
    let proxies = env.dynamic(
        "litellm.home-operations.com",
        "v1alpha1",
        "LiteLLMProxy",
        "litellmproxies",
        Some(&ns),
    );
    let models = env.dynamic(
        "litellm.home-operations.com",
        "v1alpha1",
        "LiteLLMModel",
        "litellmmodels",
        Some(&ns),
    );
    let proxy = env.get(&proxies, "team-gw").expect("the proxy");
    assert_eq!(proxy["spec"]["applyMode"], "api");
    assert_eq!(
        env_var(&proxy, "DATABASE_PASSWORD").unwrap()["valueFrom"]["secretKeyRef"],
        json!({"name": "app-db-app", "key": "password"})
    );
    assert!(
        !proxy.to_string().contains("not-logged"),
        "secret values never reach the proxy's spec"
    );
    let gpt = env
        .get(&models, "team-gw-gpt-4o")
        .expect("one model per entry");
    assert_eq!(
        gpt["spec"]["params"]["apiKeyRef"],
        json!({"name": "openai", "key": "api-key"})
    );
    assert!(env.get(&models, "team-gw-llama3").is_some());

    // A model dropped from the list: its LiteLLMModel goes.
    pg_conn(&env, &ns);
    env.create_postgres(&ns, "other-db", external_pg());
    env.wait_postgres_ready(&ns, "other-db");
    env.create(
        "Gateway",
        &ns,
        "team-gw",
        gateway("other-db", json!([two[0]])),
    );
    env.wait_gone("the dropped model", |e| {
        e.get(&models, "team-gw-llama3").is_some()
    });
    // The Event follows the deletion (it is recorded once the delete went
    // through), so a reader that saw the object go may be a moment early.
    env.wait_for("the GarbageCollected Event", Duration::from_secs(30), |e| {
        let events = e.events("team-gw");
        events
            .iter()
            .any(|e| e.starts_with("GarbageCollected: ") && e.contains("LiteLLMModel"))
            .then_some(())
            .ok_or_else(|| format!("{events:?}"))
    });
    // The reference switched: the proxy's database is the other one's.
    env.wait_for(
        "the proxy on the other database",
        Duration::from_secs(30),
        |e| {
            let p = e.get(&proxies, "team-gw").unwrap_or_default();
            let secret = env_var(&p, "DATABASE_PASSWORD")
                .map(|v| v["valueFrom"]["secretKeyRef"]["name"].clone());
            (secret == Some(json!("pg-conn")))
                .then_some(())
                .ok_or(p["spec"]["env"].to_string())
        },
    );
    assert!(env.get(&models, "team-gw-gpt-4o").is_some());

    env.delete("Gateway", &ns, "team-gw");
    env.wait_gone("the Gateway", |e| {
        e.resource("Gateway", &ns, "team-gw").is_some()
    });
    assert!(env.get(&proxies, "team-gw").is_none());
    assert!(env.get(&models, "team-gw-gpt-4o").is_none());
    env.wait_gone("our LiteLLM operator release", |e| {
        e.release("litellm-operator-system", "litellm-operator")
            .is_some()
    });
    op.stop();
}

/// external-secrets never runs here: the test writes what it would (the
/// stores' and ExternalSecrets' Ready condition, and each target Secret).
#[test]
fn secrets_management_connects_a_vault_and_a_vault_source_becomes_an_external_secret() {
    if shared().is_none() {
        return;
    }
    let env = Env::new();
    let op = Operator::start_with(licensed_options(&env, &["SecretsManagement"]));
    let ns = env.namespace("team-vault");
    let store = format!("corp-{:06x}", rand::random::<u32>() & 0xffffff);
    env.create(
        "Gateway",
        &ns,
        "team-gw",
        json!({"masterKey": {"vault": {"store": store, "path": "ai/litellm", "property": "master"}}, "models": []}),
    );
    env.wait_for(
        "the Gateway waiting for its store",
        Duration::from_secs(30),
        |e| {
            let g = e.resource("Gateway", &ns, "team-gw").unwrap_or_default();
            let m = condition_of(&g, "Ready")["message"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            m.contains(&format!("SecretsManagement {store}"))
                .then_some(())
                .ok_or(g["status"].to_string())
        },
    );

    env.create(
        "SecretsManagement",
        "",
        &store,
        json!({"vault": {"server": "https://vault.example:8200", "path": "secret",
                         "auth": {"kubernetes": {"mountPath": "kubernetes", "role": "navique"}}}}),
    );
    let sm = env.wait_phase("SecretsManagement", "", &store, "Ready");
    assert_eq!(sm["status"]["store"], format!("navique-{store}"));
    assert!(ours_release(&env, "external-secrets", "external-secrets"));
    let stores = env.dynamic(
        "external-secrets.io",
        "v1",
        "ClusterSecretStore",
        "clustersecretstores",
        None,
    );
    let cs = env
        .get(&stores, &format!("navique-{store}"))
        .expect("the store");
    assert_eq!(
        cs["spec"]["provider"]["vault"]["auth"]["kubernetes"]["role"],
        "navique"
    );

    env.wait_phase("Gateway", &ns, "team-gw", "Ready");
    let externals = env.dynamic(
        "external-secrets.io",
        "v1",
        "ExternalSecret",
        "externalsecrets",
        Some(&ns),
    );
    let es = env
        .get(&externals, "team-gw-master-key")
        .expect("an ExternalSecret of ours");
    assert_eq!(
        es["spec"]["secretStoreRef"]["name"],
        format!("navique-{store}")
    );
    assert_eq!(
        es["spec"]["data"][0]["remoteRef"],
        json!({"key": "ai/litellm", "property": "master"})
    );
    let proxies = env.dynamic(
        "litellm.home-operations.com",
        "v1alpha1",
        "LiteLLMProxy",
        "litellmproxies",
        Some(&ns),
    );
    let proxy = env.get(&proxies, "team-gw").unwrap();
    assert_eq!(
        env_var(&proxy, "LITELLM_MASTER_KEY").unwrap()["valueFrom"]["secretKeyRef"],
        json!({"name": "team-gw-master-key", "key": "value"})
    );

    env.delete("Gateway", &ns, "team-gw");
    env.wait_gone("the Gateway", |e| {
        e.resource("Gateway", &ns, "team-gw").is_some()
    });
    assert!(env.get(&externals, "team-gw-master-key").is_none());
    env.delete("SecretsManagement", "", &store);
    env.wait_gone("the SecretsManagement", |e| {
        e.resource("SecretsManagement", "", &store).is_some()
    });
    assert!(env.get(&stores, &format!("navique-{store}")).is_none());
    env.wait_gone("our external-secrets release", |e| {
        e.release("external-secrets", "external-secrets").is_some()
    });
    op.stop();
}

fn release_record(
    env: &Env,
    ns: &str,
    name: &str,
) -> Option<navique_ai_core_operator::release::Release> {
    let storage = navique_ai_core_operator::release::storage::Storage::new(env.client.clone(), ns);
    env.block(storage.last(name)).expect("read the release")
}

#[test]
fn workload_releases_follow_their_spec_and_references_and_go_with_their_resource() {
    if shared().is_none() {
        return;
    }
    let env = Env::new();
    let op = Operator::start(&env);
    let ns = env.namespace("team-wl");
    env.apply_yaml(&json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "litellm-master", "namespace": ns},
        "stringData": {"key": "sk-master"}}).to_string());
    env.apply_yaml(&json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "meili", "namespace": ns},
        "stringData": {"MEILI_MASTER_KEY": "meili-master"}}).to_string());
    env.create("ChatUI", &ns, "web", json!({"gatewayRef": {"name": "team-gw"}, "values": {"envVars": {"PUBLIC_APP_NAME": "Navique"}}}));
    env.wait_for(
        "the ChatUI waiting for its Gateway",
        Duration::from_secs(30),
        |e| {
            let c = e.resource("ChatUI", &ns, "web").unwrap_or_default();
            let m = condition_of(&c, "Ready")["message"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            m.contains(&format!("Gateway {ns}/team-gw does not exist"))
                .then_some(())
                .ok_or(c["status"].to_string())
        },
    );
    assert!(release_record(&env, &ns, "chat-ui-web").is_none());
    env.create("Gateway", &ns, "team-gw", json!({"masterKey": {"secretKeyRef": {"name": "litellm-master", "key": "key"}}, "models": []}));
    env.wait_phase("Gateway", &ns, "team-gw", "Ready");
    let c = env.wait_phase("ChatUI", &ns, "web", "Ready");
    assert_eq!(c["status"]["release"]["name"], "chat-ui-web");
    assert_eq!(c["status"]["release"]["revision"], 1);
    assert_eq!(c["status"]["release"]["chartVersion"], "0.0.1-latest");
    assert!(ours_release(&env, &ns, "chat-ui-web"));
    let rel = release_record(&env, &ns, "chat-ui-web").unwrap();
    let values = serde_json::to_value(&rel.config).unwrap();
    assert_eq!(
        values["envVars"]["OPENAI_BASE_URL"],
        format!("http://team-gw.{ns}.svc:4000/v1")
    );
    assert_eq!(values["envVars"]["PUBLIC_APP_NAME"], "Navique");
    assert_eq!(
        values["extraEnv"][0]["valueFrom"]["secretKeyRef"]["name"],
        "litellm-master"
    );
    let deployments = env.dynamic("apps", "v1", "Deployment", "deployments", Some(&ns));
    let list = env.block(deployments.list(&Default::default())).unwrap();
    let d = list
        .items
        .iter()
        .find(|d| {
            d.metadata
                .name
                .as_deref()
                .is_some_and(|n| n.contains("chat-ui"))
        })
        .expect("chat-ui's Deployment");
    assert_eq!(
        d.metadata.annotations.as_ref().unwrap()["core.navique.com/owner"],
        format!("ChatUI/{ns}/web")
    );

    // Nothing changed: no new revision, however often it is looked at.
    for i in 0..3 {
        env.kubectl(&[
            "annotate",
            "chatuis.core.navique.com",
            "web",
            "-n",
            &ns,
            &format!("poke={i}"),
            "--overwrite",
        ]);
    }
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(release_record(&env, &ns, "chat-ui-web").unwrap().version, 1);
    // Changed values: an upgrade.
    env.create("ChatUI", &ns, "web", json!({"gatewayRef": {"name": "team-gw"}, "replicas": 2, "values": {"envVars": {"PUBLIC_APP_NAME": "Navique"}}}));
    env.wait_for("the upgrade", Duration::from_secs(60), |e| {
        let c = e.resource("ChatUI", &ns, "web").unwrap_or_default();
        (c["status"]["release"]["revision"] == 2 && c["status"]["phase"] == "Ready")
            .then_some(())
            .ok_or(c["status"].to_string())
    });
    assert!(
        env.events("web")
            .iter()
            .any(|e| e.starts_with("Upgraded: ")),
        "{:?}",
        env.events("web")
    );

    env.create("MeilisearchInstance", &ns, "search", json!({"masterKey": {"secretKeyRef": {"name": "meili", "key": "MEILI_MASTER_KEY"}}, "persistence": {"size": "5Gi"}}));
    let m = env.wait_phase("MeilisearchInstance", &ns, "search", "Ready");
    assert_eq!(m["status"]["release"]["name"], "meilisearch-search");
    let rel = release_record(&env, &ns, "meilisearch-search").unwrap();
    let values = serde_json::to_value(&rel.config).unwrap();
    assert_eq!(values["auth"]["existingMasterKeySecret"], "meili");
    assert!(
        !rel.manifest.contains("meili-master"),
        "the key's value is never in the release"
    );

    env.delete("ChatUI", &ns, "web");
    env.wait_gone("the ChatUI", |e| e.resource("ChatUI", &ns, "web").is_some());
    assert!(
        release_record(&env, &ns, "chat-ui-web").is_none(),
        "uninstalled"
    );
    assert!(env
        .events("web")
        .iter()
        .any(|e| e.starts_with("Uninstalled: ")));
    env.delete("MeilisearchInstance", &ns, "search");
    env.wait_gone("the MeilisearchInstance", |e| {
        e.resource("MeilisearchInstance", &ns, "search").is_some()
    });
    assert!(release_record(&env, &ns, "meilisearch-search").is_none());
    op.stop();
}

/// The chart reads its master key Secret whole, as environment: a key kept
/// under another name is copied into a Secret of ours under the chart's name,
/// follows the source when it changes (looked at again on resync), and goes
/// with the resource.
#[test]
fn a_meilisearch_master_key_under_any_name_is_copied_and_follows_its_source() {
    if shared().is_none() {
        return;
    }
    let env = Env::new();
    let mut opts = options(&env);
    opts.resync = Duration::from_secs(2);
    let op = Operator::start_with(opts);
    let ns = env.namespace("team-meili");
    env.create(
        "MeilisearchInstance",
        &ns,
        "search",
        json!({"masterKey": {"secretKeyRef": {"name": "search-keys", "key": "master"}}}),
    );
    env.wait_for(
        "the instance waiting for its key",
        Duration::from_secs(30),
        |e| {
            let m = e
                .resource("MeilisearchInstance", &ns, "search")
                .unwrap_or_default();
            let message = condition_of(&m, "Ready")["message"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            message.contains("search-keys").then_some(()).ok_or(message)
        },
    );
    env.apply_yaml(&json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "search-keys", "namespace": ns},
        "stringData": {"master": "first-key", "other": "x"}}).to_string());
    env.wait_phase("MeilisearchInstance", &ns, "search", "Ready");
    assert_eq!(
        env.secret_value(&ns, "search-master-key", "MEILI_MASTER_KEY")
            .as_deref(),
        Some("first-key")
    );
    let rel = release_record(&env, &ns, "meilisearch-search").unwrap();
    let values = serde_json::to_value(&rel.config).unwrap();
    assert_eq!(
        values["auth"]["existingMasterKeySecret"],
        "search-master-key"
    );
    assert!(!rel.manifest.contains("first-key") && !values.to_string().contains("first-key"));

    env.apply_yaml(&json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "search-keys", "namespace": ns},
        "stringData": {"master": "rotated-key", "other": "x"}}).to_string());
    env.wait_for(
        "the copy to follow the rotated key",
        Duration::from_secs(30),
        |e| {
            let v = e.secret_value(&ns, "search-master-key", "MEILI_MASTER_KEY");
            (v.as_deref() == Some("rotated-key"))
                .then_some(())
                .ok_or(format!("{v:?}"))
        },
    );
    assert_eq!(
        release_record(&env, &ns, "meilisearch-search")
            .unwrap()
            .version,
        1,
        "a rotated key is no new revision"
    );
    env.delete("MeilisearchInstance", &ns, "search");
    env.wait_gone("the MeilisearchInstance", |e| {
        e.resource("MeilisearchInstance", &ns, "search").is_some()
    });
    assert!(env
        .secret_value(&ns, "search-master-key", "MEILI_MASTER_KEY")
        .is_none());
    assert!(
        env.secret_value(&ns, "search-keys", "master").is_some(),
        "the user's Secret stays"
    );
    op.stop();
}

/// CloudNativePG and the ClickHouse operator are played by the test: their
/// objects' status, and the `<cluster>-app` Secret CNPG writes.
#[test]
fn observability_runs_langfuse_on_the_platforms_datastores() {
    if shared().is_none() {
        return;
    }
    let env = Env::new();
    let op = Operator::start_with(licensed_options(&env, &["Observability"]));
    let ns = env.namespace("team-obs");
    env.create("Observability", &ns, "obs", json!({"postgresClusterRef": {"name": "app-db"}, "clickHouseClusterRef": {"name": "analytics"},
        "values": {"langfuse": {"features": {"telemetryEnabled": false}}}}));
    env.wait_for(
        "the Observability waiting for its datastores",
        Duration::from_secs(30),
        |e| {
            let o = e.resource("Observability", &ns, "obs").unwrap_or_default();
            let m = condition_of(&o, "Ready")["message"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            (m.contains("PostgresCluster") && m.contains("ClickHouseCluster"))
                .then_some(())
                .ok_or(o["status"].to_string())
        },
    );
    env.create_postgres(&ns, "app-db", managed());
    env.apply_yaml(&json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "app-db-app", "namespace": ns},
        "stringData": {"host": "app-db-rw", "port": "5432", "username": "app", "password": "pg-pass-not-copied", "dbname": "app"}}).to_string());
    env.create(
        "ClickHouseCluster",
        &ns,
        "analytics",
        clickhouse_managed("clickhouse", 0),
    );
    env.wait_postgres_ready(&ns, "app-db");
    env.wait_phase("ClickHouseCluster", &ns, "analytics", "Ready");
    let o = env.wait_phase("Observability", &ns, "obs", "Ready");
    assert_eq!(o["status"]["release"]["name"], "langfuse-obs");
    assert!(ours_release(&env, &ns, "langfuse-obs"));
    let rel = release_record(&env, &ns, "langfuse-obs").unwrap();
    let values = serde_json::to_value(&rel.config).unwrap();
    assert_eq!(values["postgresql"]["deploy"], false);
    assert_eq!(values["postgresql"]["host"], "app-db-rw");
    assert_eq!(values["postgresql"]["auth"]["existingSecret"], "app-db-app");
    assert_eq!(
        values["clickhouse"]["host"],
        format!("analytics-clickhouse-headless.{ns}.svc")
    );
    assert_eq!(
        values["clickhouse"]["auth"]["existingSecret"],
        "analytics-clickhouse"
    );
    assert_eq!(values["langfuse"]["features"]["telemetryEnabled"], false);
    let text = format!("{}{}", rel.manifest, values);
    assert!(
        !text.contains("pg-pass-not-copied"),
        "a datastore password is never copied into the release"
    );
    let salt = env
        .secret_value(&ns, "langfuse-obs-navique-keys", "salt")
        .expect("a generated salt");
    let key = env
        .secret_value(&ns, "langfuse-obs-navique-keys", "encryption-key")
        .unwrap();
    assert_eq!(key.len(), 64);
    assert!(key.chars().all(|c| c.is_ascii_hexdigit()));
    env.kubectl(&[
        "annotate",
        "observabilities.core.navique.com",
        "obs",
        "-n",
        &ns,
        "poke=1",
    ]);
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(
        env.secret_value(&ns, "langfuse-obs-navique-keys", "salt"),
        Some(salt),
        "kept"
    );
    assert_eq!(
        release_record(&env, &ns, "langfuse-obs").unwrap().version,
        1
    );

    env.delete("Observability", &ns, "obs");
    env.wait_gone("the Observability", |e| {
        e.resource("Observability", &ns, "obs").is_some()
    });
    assert!(release_record(&env, &ns, "langfuse-obs").is_none());
    assert_eq!(
        env.secret_value(&ns, "langfuse-obs-navique-keys", "salt"),
        None
    );
    op.stop();
}

/// Every kind at once. No upstream operator runs here: the test plays
/// CloudNativePG (Cluster status and its `<name>-app` Secret), the ClickHouse
/// operator, the LiteLLM operator and external-secrets (their status, and
/// the Secrets an ExternalSecret writes).
#[test]
fn the_whole_platform_installs_each_capability_once_and_deletes_back_to_where_it_started() {
    if shared().is_none() || !helm_available() {
        return;
    }
    let env = Env::new();
    let helm_before = env.helm_list_all();
    let op = Operator::start_with(licensed_options(
        &env,
        &["Observability", "SecretsManagement"],
    ));
    let ns = env.namespace("team-all");
    let store = format!("corp-{:06x}", rand::random::<u32>() & 0xffffff);
    env.apply_yaml(&json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "meili", "namespace": ns},
        "stringData": {"MEILI_MASTER_KEY": "meili-master"}}).to_string());
    env.apply_yaml(&json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "openai", "namespace": ns},
        "stringData": {"api-key": "sk-openai"}}).to_string());
    env.apply_yaml(&json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "app-db-app", "namespace": ns},
        "stringData": {"host": "app-db-rw", "port": "5432", "username": "app", "password": "p", "dbname": "app"}}).to_string());

    env.create("SecretsManagement", "", &store, json!({"vault": {"server": "https://vault.example:8200", "path": "secret",
        "auth": {"tokenSecretRef": {"namespace": "vault", "name": "vault-token", "key": "token"}}}}));
    env.create_postgres(&ns, "app-db", managed());
    env.create(
        "ClickHouseCluster",
        &ns,
        "analytics",
        clickhouse_managed("clickhouse", 1),
    );
    env.create("Gateway", &ns, "team-gw", json!({"postgresClusterRef": {"name": "app-db"},
        "masterKey": {"vault": {"store": store, "path": "ai/litellm", "property": "master"}},
        "models": [{"name": "gpt-4o", "model": "openai/gpt-4o", "apiKey": {"secretKeyRef": {"name": "openai", "key": "api-key"}}},
                   {"name": "llama3", "model": "ollama/llama3", "apiBase": "http://ollama:11434"}]}));
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
    env.wait_all_ready("every resource Ready", &ns, &all, Duration::from_secs(120));

    // Each capability once, all ours; real Helm lists exactly our releases.
    let mut ours: Vec<String> = env
        .releases()
        .into_iter()
        .map(|(n, r, labels, _)| {
            assert_eq!(
                labels
                    .get("app.kubernetes.io/managed-by")
                    .map(String::as_str),
                Some("navique-ai-core-operator"),
                "{r}"
            );
            assert_eq!(
                labels.get("version").map(String::as_str),
                Some("1"),
                "{r}: one install, no upgrade loop"
            );
            format!("{r}/{n}")
        })
        .collect();
    ours.sort();
    let mut expected = vec![
        "cert-manager/cert-manager".to_string(),
        "cloudnative-pg/cnpg-system".into(),
        "clickhouse-operator/clickhouse-operator-system".into(),
        "litellm-operator/litellm-operator-system".into(),
        "external-secrets/external-secrets".into(),
        format!("chat-ui-web/{ns}"),
        format!("meilisearch-search/{ns}"),
        format!("langfuse-obs/{ns}"),
    ];
    expected.sort();
    assert_eq!(ours, expected);
    let mut listed: Vec<String> = env
        .helm_list_all()
        .into_iter()
        .filter(|r| !helm_before.contains(r))
        .collect();
    listed.sort();
    assert_eq!(listed, expected, "helm list -A (real Helm)");

    // Everything deleted: the cluster is back where it started.
    for (k, n, name) in all.iter().rev() {
        env.delete(k, n, name);
    }
    for (k, n, name) in all {
        env.wait_gone(&format!("{k} {name}"), |e| e.resource(k, n, name).is_some());
    }
    env.wait_gone("our releases", |e| !e.releases().is_empty());
    let mut after: Vec<String> = env.helm_list_all();
    after.sort();
    let mut before = helm_before.clone();
    before.sort();
    assert_eq!(after, before, "helm list -A as before");
    for (group, version, kind, plural) in [
        ("postgresql.cnpg.io", "v1", "Cluster", "clusters"),
        (
            "clickhouse.com",
            "v1alpha1",
            "ClickHouseCluster",
            "clickhouseclusters",
        ),
        (
            "litellm.home-operations.com",
            "v1alpha1",
            "LiteLLMProxy",
            "litellmproxies",
        ),
        (
            "litellm.home-operations.com",
            "v1alpha1",
            "LiteLLMModel",
            "litellmmodels",
        ),
        (
            "external-secrets.io",
            "v1",
            "ExternalSecret",
            "externalsecrets",
        ),
    ] {
        let api = env.dynamic(group, version, kind, plural, Some(&ns));
        let left = env
            .block(api.list(&Default::default()))
            .map(|l| l.items.len())
            .unwrap_or(0);
        assert_eq!(left, 0, "{kind} left behind");
    }
    for c in [
        "cert-manager",
        "cloudnative-pg",
        "clickhouse-operator",
        "litellm-operator",
        "external-secrets",
    ] {
        let cap = env.capability(c);
        assert_eq!(
            cap["status"]["provenance"], "absent",
            "{c}: {}",
            cap["status"]
        );
    }
    op.stop();
}

#[test]
fn a_chat_ui_switching_its_gateway_is_upgraded_onto_the_other_one() {
    if shared().is_none() {
        return;
    }
    let env = Env::new();
    // Two Gateways: beyond the free tier's one.
    let op = Operator::start_with(licensed_options(&env, &[]));
    let ns = env.namespace("team-sw");
    for (secret, key) in [("key-a", "a"), ("key-b", "b")] {
        env.apply_yaml(&json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": secret, "namespace": ns},
            "stringData": {key: "sk"}}).to_string());
    }
    env.create(
        "Gateway",
        &ns,
        "gw-a",
        json!({"masterKey": {"secretKeyRef": {"name": "key-a", "key": "a"}}}),
    );
    env.create(
        "Gateway",
        &ns,
        "gw-b",
        json!({"masterKey": {"secretKeyRef": {"name": "key-b", "key": "b"}}}),
    );
    env.wait_phase("Gateway", &ns, "gw-a", "Ready");
    env.wait_phase("Gateway", &ns, "gw-b", "Ready");
    env.create(
        "ChatUI",
        &ns,
        "web",
        json!({"gatewayRef": {"name": "gw-a"}}),
    );
    env.wait_phase("ChatUI", &ns, "web", "Ready");
    env.create(
        "ChatUI",
        &ns,
        "web",
        json!({"gatewayRef": {"name": "gw-b"}}),
    );
    env.wait_for("the upgrade onto gw-b", Duration::from_secs(60), |e| {
        let c = e.resource("ChatUI", &ns, "web").unwrap_or_default();
        (c["status"]["release"]["revision"] == 2 && c["status"]["phase"] == "Ready")
            .then_some(())
            .ok_or(c["status"].to_string())
    });
    let rel = release_record(&env, &ns, "chat-ui-web").unwrap();
    let values = serde_json::to_value(&rel.config).unwrap();
    assert_eq!(
        values["envVars"]["OPENAI_BASE_URL"],
        format!("http://gw-b.{ns}.svc:4000/v1")
    );
    assert_eq!(
        values["extraEnv"][0]["valueFrom"]["secretKeyRef"],
        json!({"name": "key-b", "key": "b"})
    );
    // Nothing of gw-a's was ours to collect, and gw-a is untouched.
    assert_eq!(env.phase_of("Gateway", &ns, "gw-a"), "Ready");
    op.stop();
}

/// Every image of the pod templates of the kinds that run pods, in `ns`.
fn pod_template_images(env: &Env, ns: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for (group, version, kind, plural) in [
        ("apps", "v1", "Deployment", "deployments"),
        ("apps", "v1", "StatefulSet", "statefulsets"),
        ("apps", "v1", "DaemonSet", "daemonsets"),
        ("batch", "v1", "Job", "jobs"),
        ("batch", "v1", "CronJob", "cronjobs"),
    ] {
        let api = env.dynamic(group, version, kind, plural, Some(ns));
        let list = env.block(api.list(&Default::default())).expect("list");
        for item in list.items {
            let body = serde_json::to_value(&item).unwrap();
            let mut images = std::collections::BTreeSet::new();
            navique_ai_core_operator::oci::images::images_in(&body, &mut images);
            for image in images {
                found.push((
                    format!(
                        "{kind} {ns}/{}",
                        item.metadata.name.clone().unwrap_or_default()
                    ),
                    image,
                ));
            }
        }
    }
    found
}

#[test]
fn with_a_registry_mirror_every_applied_image_runs_from_the_mirror_by_digest() {
    if shared().is_none() {
        return;
    }
    let env = Env::new();
    let mut opts = options(&env);
    let mirror = "mirror.navique.test:5000";
    let rules: Vec<String> = ["quay.io", "ghcr.io", "docker.io", "docker.langfuse.com"]
        .iter()
        .map(|h| format!("{h}={mirror}/{h}"))
        .collect();
    opts.mirrors = navique_ai_core_operator::oci::Mirrors::parse(&rules).unwrap();
    let catalog = opts.catalog.clone();
    let op = Operator::start_with(opts);
    let ns = env.namespace("mirrored");
    let by_digest = |image: &str| {
        image.starts_with(&format!("{mirror}/"))
            && catalog
                .image
                .iter()
                .any(|p| image == format!("{mirror}/{}", p.by_digest()))
    };
    // cert-manager's objects are applied before its install waits: on a
    // real cluster the mirror cannot be pulled from, so that is what is
    // judged there; the sandbox goes on to the whole Gateway.
    env.create_postgres(&ns, "app-db", managed());
    let cm = env.wait_for("cert-manager's Deployments", Duration::from_secs(60), |e| {
        let found = pod_template_images(e, "cert-manager");
        (found.len() >= 3)
            .then_some(found.clone())
            .ok_or(format!("{found:?}"))
    });
    for (what, image) in &cm {
        assert!(by_digest(image), "{what} runs {image}");
    }
    if !env.is_real() {
        env.apply_yaml(&json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "litellm-master", "namespace": ns},
            "stringData": {"key": "sk-master"}}).to_string());
        env.create(
            "Gateway",
            &ns,
            "team-gw",
            json!({"postgresClusterRef": {"name": "app-db"},
            "masterKey": {"secretKeyRef": {"name": "litellm-master", "key": "key"}}}),
        );
        env.cnpg_reports_ready(&ns);
        env.litellm_reports_ready(&ns);
        env.wait_phase("Gateway", &ns, "team-gw", "Ready");
        let proxies = env.dynamic(
            "litellm.home-operations.com",
            "v1alpha1",
            "LiteLLMProxy",
            "litellmproxies",
            Some(&ns),
        );
        let proxy = env.get(&proxies, "team-gw").expect("the proxy");
        let image = proxy["spec"]["image"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(by_digest(&image), "the LiteLLMProxy runs {image}");
        assert!(
            image.contains("/ghcr.io/berriai/litellm@sha256:"),
            "{image}"
        );
        let mut all = Vec::new();
        for n in [
            "cert-manager",
            "cnpg-system",
            "litellm-operator-system",
            ns.as_str(),
        ] {
            all.extend(pod_template_images(&env, n));
        }
        assert!(all.len() >= 5, "{all:?}");
        for (what, image) in &all {
            assert!(by_digest(image), "{what} runs {image}");
        }
    }
    env.delete_postgres(&ns, "app-db");
    op.stop();
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
    let mut child = cmd
        .stdout(std::fs::File::create(work.join("stdout.log")).unwrap())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();

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

/// The operator's client gives up on a request after this, in the fault test.
const FAULT_TEST_API_TIMEOUT: Duration = Duration::from_secs(2);

/// The operator's own requests only (the test's client plays the user and
/// the upstream operators, and must not be struck). Past the client's
/// timeout (FAULT_TEST_API_TIMEOUT): `delay` holds a request before the
/// server does anything, `late` does the work and holds the answer, so the
/// operator believes a write failed that happened.
fn fault_mix() -> Vec<navique_sandbox::faults::FaultRule> {
    [
        "500@0.05:verbs=create,update,patch,delete",
        "503@0.05:verbs=get,list",
        "429@0.03",
        "409@0.05",
        "delay=400@0.02",
        "delay=3000@0.01",
        "late=3000@0.02",
        "cut-watch@0.3",
        "gone@0.3",
    ]
    .iter()
    .map(|r| {
        navique_sandbox::faults::FaultRule::parse(&format!("{r}:agents=navique-operator")).unwrap()
    })
    .collect()
}

#[test]
fn under_api_server_faults_the_platform_still_converges_once_with_nothing_pending() {
    if shared().is_none() {
        return;
    }
    // Faults are the embedded server's; on a real cluster this is the same
    // scenario without them.
    let env = Env::with(navique_sandbox::Options {
        ready_delay: Duration::from_millis(50),
        faults: fault_mix(),
        fault_seed: 20261201,
        ..Default::default()
    });
    let mut opts = options(&env);
    let health = format!("127.0.0.1:{}", free_port());
    opts.health_bind = Some(health.parse().unwrap());
    opts.api_timeout = FAULT_TEST_API_TIMEOUT;
    let op = Operator::start_with(opts);
    env.wait_operator_crds(Duration::from_secs(60));
    let ns = env.namespace("team-faults");
    env.apply_yaml(&json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "litellm-master", "namespace": ns},
        "stringData": {"key": "sk-master"}}).to_string());
    // Someone else's objects beside ours, one of them named as a release
    // would be: under faults and retries, none may be touched.
    let bystanders = [
        ("ConfigMap", "chat-ui-web-settings"),
        ("Secret", "app-db-app-backup"),
    ];
    for (kind, name) in bystanders {
        env.apply_yaml(
            &json!({"apiVersion": "v1", "kind": kind, "metadata": {"name": name, "namespace": ns,
            "labels": {"app.kubernetes.io/managed-by": "someone-else"}}, "data": {"k": "dg=="}})
            .to_string(),
        );
    }
    let versions_of_bystanders = |env: &Env| -> Vec<String> {
        bystanders
            .iter()
            .map(|(kind, name)| {
                let got = env.kubectl(&["get", kind, name, "-n", &ns, "-o", "json"]);
                let v: Value = serde_json::from_str(&got).expect("json");
                format!(
                    "{kind}/{name}@{}",
                    v["metadata"]["resourceVersion"].as_str().unwrap_or("gone")
                )
            })
            .collect()
    };
    let before = versions_of_bystanders(&env);
    env.create_postgres(&ns, "app-db", managed());
    env.create(
        "ClickHouseCluster",
        &ns,
        "analytics",
        clickhouse_managed("clickhouse", 1),
    );
    env.create(
        "Gateway",
        &ns,
        "team-gw",
        json!({"postgresClusterRef": {"name": "app-db"},
        "masterKey": {"secretKeyRef": {"name": "litellm-master", "key": "key"}}}),
    );
    env.create(
        "ChatUI",
        &ns,
        "web",
        json!({"gatewayRef": {"name": "team-gw"}}),
    );
    let all = [
        ("PostgresCluster", ns.as_str(), "app-db"),
        ("ClickHouseCluster", ns.as_str(), "analytics"),
        ("Gateway", ns.as_str(), "team-gw"),
        ("ChatUI", ns.as_str(), "web"),
    ];
    env.wait_all_ready(
        "every resource Ready under faults",
        &ns,
        &all,
        Duration::from_secs(180),
    );
    if let Some(sb) = &env.sandbox {
        assert!(
            sb.faults_injected() > 20,
            "faults were injected: {}",
            sb.faults_injected()
        );
        let by_kind = sb.faults_injected_by_kind();
        eprintln!("{} faults injected: {by_kind:?}", sb.faults_injected());
        for kind in ["500", "503", "429", "409", "delay", "late", "cut-watch"] {
            assert!(
                by_kind.get(kind).copied().unwrap_or(0) > 0,
                "no {kind} fault struck: {by_kind:?}"
            );
        }
    }
    // Each capability once; nothing pending; no upgrade loop.
    let releases = env.releases();
    let mut names: Vec<String> = releases
        .iter()
        .map(|(n, r, _, _)| format!("{r}/{n}"))
        .collect();
    names.sort();
    let mut expected = vec![
        "cert-manager/cert-manager".to_string(),
        "cloudnative-pg/cnpg-system".into(),
        "clickhouse-operator/clickhouse-operator-system".into(),
        "litellm-operator/litellm-operator-system".into(),
        format!("chat-ui-web/{ns}"),
    ];
    expected.sort();
    assert_eq!(names, expected);
    for (n, r, labels, _) in &releases {
        let status = labels.get("status").map(String::as_str).unwrap_or_default();
        assert_eq!(status, "deployed", "{n}/{r}");
        let version: u32 = labels
            .get("version")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        eprintln!("{r}/{n}: revision {version}");
        // A release action cut short by a fault is retried as an upgrade: a
        // few revisions, never a loop.
        assert!((1..=5).contains(&version), "{n}/{r}: revision {version}");
    }
    let (code, _) = http_get(&health, "/readyz");
    assert_eq!(code, 200, "/readyz still served");
    assert_eq!(
        versions_of_bystanders(&env),
        before,
        "objects we do not own were written"
    );
    for (k, n, name) in all.iter().rev() {
        env.delete(k, n, name);
    }
    op.stop();
    assert_eq!(
        versions_of_bystanders(&env),
        before,
        "objects we do not own were written or deleted"
    );
}

/// One run of the kill scenario, in four phases: a managed PostgresCluster
/// installed to Ready by an operator whose catalog pins an older
/// cert-manager; the operator restarted with the built-in catalog, which
/// upgrades cert-manager; the PostgresCluster migrated to external mode (the
/// CNPG Cluster we emitted goes, and both capability operators with it, no
/// longer needed); then deleted. The operator runs as a process, killed with
/// SIGKILL once the API server has seen `kill_at` more write requests (never,
/// for `None`) and started again at once, with the catalog of the phase it
/// is in. Returns (the releases after each phase, the total writes, whether
/// it was killed).
fn kill_scenario(kill_at: Option<u64>) -> (Vec<Vec<String>>, u64, bool) {
    let env = Env::new();
    let ns = env.namespace("team-kill");
    let dir = temp_dir("navique-kill");
    let old_catalog = dir.join("old-catalog.toml");
    let built_in = navique_ai_core_operator::operator::model::catalog::BUILT_IN;
    let new = CERT_MANAGER_NEW;
    assert!(built_in.contains(new.0) && built_in.contains(new.1));
    std::fs::write(
        &old_catalog,
        built_in
            .replacen(
                &format!("version = \"{}\"", new.0),
                &format!("version = \"{}\"", CERT_MANAGER_OLD.0),
                1,
            )
            .replacen(new.1, CERT_MANAGER_OLD.1, 1),
    )
    .unwrap();
    let catalog: std::sync::Mutex<Option<std::path::PathBuf>> =
        std::sync::Mutex::new(Some(old_catalog.clone()));
    let base = env.write_requests().unwrap_or(0);
    let child = std::sync::Mutex::new(operator_process_with(&env, Some(&old_catalog)));
    let done = std::sync::atomic::AtomicBool::new(false);
    let killed = std::sync::atomic::AtomicBool::new(false);
    let release_state = |e: &Env| -> Vec<String> {
        let mut r: Vec<String> = e
            .releases()
            .into_iter()
            .map(|(n, r, l, a)| {
                format!(
                    "{n}/{r}:{}:{}:v{}",
                    l.get("status").cloned().unwrap_or_default(),
                    a.get("core.navique.com/chart-version")
                        .cloned()
                        .unwrap_or_default(),
                    l.get("version").cloned().unwrap_or_default()
                )
            })
            .collect();
        r.sort();
        r
    };
    let phases = std::thread::scope(|s| {
        if let (Some(n), Some(sb)) = (kill_at, env.sandbox.as_ref()) {
            let (child, done, killed, catalog) = (&child, &done, &killed, &catalog);
            let env = &env;
            s.spawn(move || {
                while !done.load(std::sync::atomic::Ordering::Relaxed) {
                    if sb.write_requests() >= base + n {
                        let mut c = child.lock().unwrap();
                        c.kill().expect("SIGKILL");
                        c.wait().unwrap();
                        *c = operator_process_with(env, catalog.lock().unwrap().as_deref());
                        killed.store(true, std::sync::atomic::Ordering::Relaxed);
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
            });
        }
        let mut phases = Vec::new();
        env.create_postgres(&ns, "app-db", managed());
        env.wait_for("the PostgresCluster Ready", Duration::from_secs(120), |e| {
            e.cnpg_reports_ready(&ns);
            let p = e.phase(&ns, "app-db");
            (p == "Ready").then_some(()).ok_or(p)
        });
        phases.push(release_state(&env));

        // A newer operator: a planned restart (SIGTERM), not the fault.
        {
            let mut c = child.lock().unwrap();
            *catalog.lock().unwrap() = None;
            terminate(&mut c);
            *c = operator_process(&env);
        }
        env.wait_for(
            "cert-manager upgraded to the new pin",
            Duration::from_secs(120),
            |e| {
                let r = release_state(e);
                r.iter()
                    .any(|x| {
                        x.starts_with(&format!("cert-manager/cert-manager:deployed:{}:", new.0))
                    })
                    .then_some(())
                    .ok_or(format!("{r:?}"))
            },
        );
        phases.push(release_state(&env));

        pg_conn(&env, &ns);
        env.create_postgres(&ns, "app-db", external_pg());
        // External, nothing needs either capability operator: both go
        // (cert-manager once CloudNativePG, its only consumer, has).
        env.wait_for(
            "external, Ready, our releases uninstalled",
            Duration::from_secs(120),
            |e| {
                let p = e.postgres(&ns, "app-db").unwrap_or_default();
                let r = release_state(e);
                (p["status"]["mode"] == "external"
                    && p["status"]["phase"] == "Ready"
                    && r.is_empty())
                .then_some(())
                .ok_or(format!("{}: {r:?}", p["status"]))
            },
        );
        phases.push(release_state(&env));

        env.delete_postgres(&ns, "app-db");
        env.wait_gone("the PostgresCluster", |e| {
            e.postgres(&ns, "app-db").is_some()
        });
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        phases.push(release_state(&env));
        phases
    });
    let mut c = child.into_inner().unwrap();
    let _ = c.kill();
    let _ = c.wait();
    let _ = std::fs::remove_dir_all(&dir);
    let writes = env.write_requests().unwrap_or(0) - base;
    (
        phases,
        writes,
        killed.load(std::sync::atomic::Ordering::Relaxed),
    )
}

/// SIGTERM, as a rolling update sends it; SIGKILL after 30 s, as the
/// kubelet does after the grace period (said on stderr: the operator is
/// meant to stop within it).
fn terminate(c: &mut std::process::Child) {
    send_sigterm(c);
    let start = std::time::Instant::now();
    while start.elapsed() < Duration::from_secs(30) {
        if c.try_wait().unwrap().is_some() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    eprintln!(
        "the operator (pid {}) did not stop within 30 s of SIGTERM: killed",
        c.id()
    );
    let _ = c.kill();
    c.wait().unwrap();
}

/// A fresh directory of this test's, `prefix` and a random suffix.
fn temp_dir(prefix: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("{prefix}-{:08x}", rand::random::<u32>()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn send_sigterm(c: &std::process::Child) {
    let _ = std::process::Command::new("kill")
        .args(["-TERM", &c.id().to_string()])
        .status();
}

/// SIGKILL at many points of an install, an upgrade, a migration and a
/// deletion (after the N-th write request, N spread over an undisturbed
/// run), then a restart: after each phase the same releases as the
/// undisturbed run, each capability once, nothing pending, revisions
/// bounded. CI runs 8 points; `NAVIQUE_KILL_SWEEP=full` every 4th write.
#[test]
fn killed_after_any_write_it_converges_like_an_undisturbed_run() {
    if shared().is_none() || real_cluster().is_some() {
        // Counting write requests needs the embedded server; on a real
        // cluster the single-kill scenario above covers recovery.
        return;
    }
    let (undisturbed, total, _) = kill_scenario(None);
    // Release and chart version, without the revision a retry may add.
    let names = |v: &[String]| {
        v.iter()
            .map(|r| {
                let mut parts: Vec<&str> = r.split(':').collect();
                parts.pop();
                parts.join(":")
            })
            .collect::<Vec<_>>()
    };
    assert!(
        undisturbed[0]
            .iter()
            .all(|r| r.ends_with(":v1") && r.contains(":deployed:")),
        "{undisturbed:?}"
    );
    assert!(
        undisturbed[1].contains(&format!(
            "cert-manager/cert-manager:deployed:{}:v2",
            CERT_MANAGER_NEW.0
        )),
        "{undisturbed:?}"
    );
    assert!(
        undisturbed[2].is_empty() && undisturbed[3].is_empty(),
        "{undisturbed:?}"
    );
    let points: Vec<u64> = if std::env::var("NAVIQUE_KILL_SWEEP").as_deref() == Ok("full") {
        (1..total).step_by(4).collect()
    } else {
        [0.02, 0.1, 0.2, 0.35, 0.5, 0.65, 0.8, 0.95]
            .iter()
            .map(|f| ((total as f64) * f) as u64 + 1)
            .collect()
    };
    eprintln!("undisturbed run: {total} writes, releases after each phase {undisturbed:?}; killing after {points:?}");
    for n in points {
        let (phases, _, killed) = kill_scenario(Some(n));
        assert!(killed, "the kill after write {n} happened");
        for (i, (got, want)) in phases.iter().zip(&undisturbed).enumerate() {
            assert_eq!(
                names(got),
                names(want),
                "after a kill at write {n}, phase {i}: the same releases, each once"
            );
            for x in got {
                assert!(
                    x.contains(":deployed:"),
                    "after a kill at write {n}, phase {i}: {x}"
                );
                let v: u32 = x.rsplit(":v").next().unwrap().parse().unwrap();
                assert!(v <= 4, "after a kill at write {n}, phase {i}: {x}");
            }
        }
    }
}

/// Requests per PostgresCluster brought to Ready, beyond watches, start-up
/// included: the bound a change must not cross. Measured 2026-12-01 with 20
/// external ones: 149 in all (7.5 each; 4 per PostgresCluster, the rest the
/// watches' first lists and the CRDs); 3,222 (161 each) when every
/// reconcile listed the cluster afresh.
const REQUESTS_PER_RESOURCE_BOUND: u64 = 10;

#[test]
fn a_converged_operator_makes_no_requests_beyond_its_watches() {
    if shared().is_none() {
        return;
    }
    let env = Env::new();
    let op = Operator::start_with(licensed_options(&env, &[]));
    let namespaces: Vec<String> = (0..2).map(|_| env.namespace("idle")).collect();
    const PER_NAMESPACE: usize = 10;
    for ns in &namespaces {
        pg_conn(&env, ns);
        for j in 0..PER_NAMESPACE {
            env.create_postgres(ns, &format!("pg-{j}"), external_pg());
        }
    }
    for ns in &namespaces {
        for j in 0..PER_NAMESPACE {
            env.wait_phase("PostgresCluster", ns, &format!("pg-{j}"), "Ready");
        }
    }
    // Converged once two seconds pass without a request beyond watches
    // (the Ready status writes come back as watch events first).
    let mut last = (
        op.metrics.api_requests_beyond_watches(),
        std::time::Instant::now(),
    );
    env.wait_for("the operator to settle", Duration::from_secs(60), |_| {
        let now = op.metrics.api_requests_beyond_watches();
        if now != last.0 {
            last = (now, std::time::Instant::now());
        }
        (last.1.elapsed() >= Duration::from_secs(2))
            .then_some(())
            .ok_or(format!("{now} requests so far"))
    });
    let requests = op.metrics.api_requests_beyond_watches();
    let resources = (namespaces.len() * PER_NAMESPACE) as u64;
    let mut by_verb: Vec<String> = op
        .metrics
        .encode()
        .lines()
        .filter(|l| l.starts_with("navique_api_requests_total") && !l.contains("\"watch\""))
        .map(str::to_string)
        .collect();
    by_verb.sort();
    eprintln!(
        "{requests} requests beyond watches for {resources} PostgresClusters ({:.1} each), {} reconciles:\n{}",
        requests as f64 / resources as f64,
        op.metrics.reconciles("PostgresCluster"),
        by_verb.join("\n")
    );
    assert!(
        requests <= REQUESTS_PER_RESOURCE_BOUND * resources,
        "{requests} requests for {resources} PostgresClusters, more than {REQUESTS_PER_RESOURCE_BOUND} each"
    );
    if let Some(counts) = env.request_counts() {
        // The server counted what the operator says it sent.
        assert_eq!(
            navique_sandbox::tally::non_watch_requests(&counts, "navique-operator"),
            requests,
            "{counts:?}"
        );
    }

    // Idle: nothing changes, so nothing is asked.
    let reconciles = op.metrics.reconciles("PostgresCluster");
    std::thread::sleep(Duration::from_secs(10));
    assert_eq!(
        op.metrics.api_requests_beyond_watches(),
        requests,
        "idle for 10 s, the operator made requests beyond its watches"
    );
    assert_eq!(op.metrics.reconciles("PostgresCluster"), reconciles);
    op.stop();
}
