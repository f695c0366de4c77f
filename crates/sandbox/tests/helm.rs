//! Real Helm v4.2.3 (PyPI helm-python-sdk) installs, upgrades, rolls back and
//! uninstalls the shared upstream charts against the server, and the release
//! Secrets it writes read back.

mod common;
use common::{cluster, shared_dir, unique, Cluster};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, ListParams};
use serde_json::{json, Value};
use std::io::Read;
use std::path::Path;
use std::process::Command;

fn helm_available() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import helm_python"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!(
                "helm-python-sdk is not installed and CI=true (pip install helm-python-sdk==0.2.2)"
            );
        }
        eprintln!("skipping: helm-python-sdk is not installed");
    }
    ok
}

fn helm(c: &Cluster, ns: &str, args: &[&str]) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/helm_client.py");
    let out = Command::new("python3")
        .arg(script)
        .arg(&c.kubeconfig)
        .arg(ns)
        .args(args)
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "helm {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("helm_client.py prints JSON")
}

/// Helm's storage format: base64 of gzipped JSON, inside the Secret's data.
fn decode_release(secret: &Secret) -> Value {
    use base64::Engine;
    let raw = &secret.data.as_ref().expect("data")["release"].0;
    let gz = base64::engine::general_purpose::STANDARD
        .decode(raw)
        .expect("base64");
    let mut json = Vec::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_end(&mut json)
        .expect("gzip");
    serde_json::from_slice(&json).expect("release JSON")
}

/// Helm omits empty values: null and {} are the same configuration.
fn norm(v: Value) -> Value {
    if v.is_null() {
        json!({})
    } else {
        v
    }
}

async fn release_secrets(c: &Cluster, ns: &str, release: &str) -> Vec<Secret> {
    let api: Api<Secret> = Api::namespaced(c.client().await, ns);
    let mut list = api
        .list(&ListParams::default().labels(&format!("owner=helm,name={release}")))
        .await
        .unwrap()
        .items;
    list.sort_by_key(|s| s.metadata.name.clone());
    list
}

async fn lifecycle(chart: &str, first: Value, second: Value) {
    let Some(shared) = shared_dir() else { return };
    if !helm_available() {
        return;
    }
    let chart = shared.join("charts").join(chart);
    let chart = chart.to_str().unwrap();
    let c = cluster();
    let ns = unique("helm");
    let rel = "rel";

    let installed = helm(&c, &ns, &["install", rel, chart, &first.to_string()]);
    assert_eq!(installed["status"], "deployed");
    assert_eq!(installed["revision"], 1);

    let secrets = release_secrets(&c, &ns, rel).await;
    assert_eq!(secrets.len(), 1);
    let s = &secrets[0];
    assert_eq!(
        s.metadata.name.as_deref(),
        Some("sh.helm.release.v1.rel.v1")
    );
    assert_eq!(s.type_.as_deref(), Some("helm.sh/release.v1"));
    assert_eq!(s.metadata.labels.as_ref().unwrap()["status"], "deployed");
    let r = decode_release(s);
    assert_eq!(r["name"], rel);
    assert_eq!(r["version"], 1);
    assert_eq!(r["namespace"], ns.as_str());
    assert_eq!(r["info"]["status"], "deployed");
    assert_eq!(norm(r["config"].clone()), first);
    assert!(r["manifest"].as_str().unwrap().contains("kind: Deployment"));

    // Every Deployment of the chart exists and is Ready (Helm waited for it).
    let deployments: Api<Deployment> = Api::namespaced(c.client().await, &ns);
    let ds = deployments
        .list(&ListParams::default())
        .await
        .unwrap()
        .items;
    assert!(!ds.is_empty());
    for d in &ds {
        let want = d.spec.replicas.unwrap_or(1);
        assert_eq!(
            d.status.as_ref().and_then(|s| s.ready_replicas),
            Some(want),
            "{:?}",
            d.metadata.name
        );
    }

    let upgraded = helm(&c, &ns, &["upgrade", rel, chart, &second.to_string()]);
    assert_eq!(upgraded["revision"], 2);
    assert_eq!(norm(helm(&c, &ns, &["values", rel])), second);
    let history = helm(&c, &ns, &["history", rel]);
    let states: Vec<(i64, &str)> = history
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["revision"].as_i64().unwrap(),
                h["status"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(states, [(1, "superseded"), (2, "deployed")]);
    let secrets = release_secrets(&c, &ns, rel).await;
    let statuses: Vec<String> = secrets
        .iter()
        .map(|s| {
            decode_release(s)["info"]["status"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(statuses, ["superseded", "deployed"]);

    helm(&c, &ns, &["rollback", rel, "1"]);
    let list = helm(&c, &ns, &["list"]);
    assert_eq!(list[0]["revision"], 3);
    assert_eq!(list[0]["status"], "deployed");
    assert_eq!(norm(helm(&c, &ns, &["values", rel])), first);

    helm(&c, &ns, &["uninstall", rel]);
    assert_eq!(helm(&c, &ns, &["list"]), json!([]));
    assert!(release_secrets(&c, &ns, rel).await.is_empty());
    assert!(deployments
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_helm_runs_cert_manager_release_lifecycle() {
    lifecycle(
        "cert-manager-v1.21.1.tgz",
        json!({"crds": {"enabled": true}}),
        json!({"crds": {"enabled": true}, "replicaCount": 2}),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_helm_runs_cloudnative_pg_release_lifecycle() {
    lifecycle(
        "cloudnative-pg-0.29.0.tgz",
        json!({}),
        json!({"replicaCount": 2}),
    )
    .await;
}
