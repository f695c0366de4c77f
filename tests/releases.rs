//! Releases written by navique-operator and by real Helm v4.2.3
//! (helm-python-sdk) are each other's: the three proofs of issue 5, on the
//! embedded API server, or on the cluster named by NAVIQUE_TEST_KUBECONFIG.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, ListParams, PostParams};
use navique_ai_core_operator::release::{codec, storage};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

struct Cluster {
    kubeconfig: PathBuf,
    _sandbox: Option<navique_sandbox::Sandbox>,
    /// On a real cluster: the CRDs there before the test (the charts' CRDs
    /// are cluster-scoped, so tests take turns and remove the ones they made).
    crds_before: Option<Vec<String>>,
    /// Namespaces the test's releases went to, deleted (with the releases
    /// stored there) when it ends on a real cluster.
    namespaces: std::cell::RefCell<Vec<String>>,
    _turn: Option<std::sync::MutexGuard<'static, ()>>,
}

static REAL_CLUSTER_TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[path = "support/kubectl.rs"]
mod support_kubectl;
use support_kubectl::kubectl;

/// CRD names and the Helm release (name, namespace) that applied each.
fn crds(kubeconfig: &Path) -> Vec<(String, Option<(String, String)>)> {
    let text = kubectl(kubeconfig, &["get", "crd", "-o", "json"]).unwrap_or_default();
    let list: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    list["items"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|c| {
                    let a = &c["metadata"]["annotations"];
                    let owner = match (
                        a["meta.helm.sh/release-name"].as_str(),
                        a["meta.helm.sh/release-namespace"].as_str(),
                    ) {
                        (Some(n), Some(ns)) => Some((n.to_string(), ns.to_string())),
                        _ => None,
                    };
                    (
                        c["metadata"]["name"]
                            .as_str()
                            .unwrap_or_default()
                            .to_string(),
                        owner,
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn cluster() -> Cluster {
    match std::env::var("NAVIQUE_TEST_KUBECONFIG") {
        Ok(p) if !p.is_empty() => {
            let turn = REAL_CLUSTER_TURN.lock().unwrap_or_else(|e| e.into_inner());
            let kubeconfig = PathBuf::from(p);
            // An earlier run killed before its clean-up leaves CRDs whose
            // release is gone; Helm would refuse to install over them.
            for (name, owner) in crds(&kubeconfig) {
                if let Some((release, ns)) = owner {
                    let selector = format!("owner=helm,name={release}");
                    let left = kubectl(
                        &kubeconfig,
                        &["get", "secrets", "-n", &ns, "-l", &selector, "-o", "name"],
                    );
                    if left.is_some_and(|l| l.trim().is_empty()) {
                        let _ = kubectl(&kubeconfig, &["delete", "crd", &name, "--wait=false"]);
                    }
                }
            }
            let before = crds(&kubeconfig).into_iter().map(|(n, _)| n).collect();
            Cluster {
                kubeconfig,
                _sandbox: None,
                crds_before: Some(before),
                namespaces: Default::default(),
                _turn: Some(turn),
            }
        }
        _ => {
            let sb = navique_sandbox::Sandbox::start(navique_sandbox::Options {
                ready_delay: std::time::Duration::from_millis(50),
                ..Default::default()
            })
            .expect("sandbox");
            Cluster {
                kubeconfig: sb.kubeconfig_path().to_path_buf(),
                _sandbox: Some(sb),
                crds_before: None,
                namespaces: Default::default(),
                _turn: None,
            }
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let Some(before) = &self.crds_before else {
            return;
        };
        for ns in self.namespaces.borrow().iter() {
            let _ = kubectl(
                &self.kubeconfig,
                &["delete", "namespace", ns, "--wait=false"],
            );
        }
        for (name, _) in crds(&self.kubeconfig) {
            if !before.contains(&name) {
                let _ = kubectl(&self.kubeconfig, &["delete", "crd", &name, "--wait=false"]);
            }
        }
    }
}

impl Cluster {
    /// A namespace name no other test or run uses; the releases create it.
    fn namespace(&self, prefix: &str) -> String {
        let ns = format!("{prefix}-{:08x}", rand::random::<u32>());
        self.namespaces.borrow_mut().push(ns.clone());
        ns
    }
}

fn shared_chart(name: &str) -> Option<String> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/charts")
        .join(name);
    if p.exists() {
        return Some(p.to_string_lossy().into_owned());
    }
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("../shared/charts/{name} is missing and CI=true");
    }
    eprintln!("skipping: ../shared/charts is missing");
    None
}

fn helm_available() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import helm_python"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("helm-python-sdk is not installed and CI=true");
        }
        eprintln!("skipping: helm-python-sdk is not installed");
    }
    ok
}

fn helm(c: &Cluster, ns: &str, args: &[&str]) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/sandbox/tests/helm_client.py");
    let out = Command::new("python3")
        .arg(script)
        .arg(&c.kubeconfig)
        .arg(ns)
        .args(args)
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "helm {args:?}:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON from helm_client.py")
}

fn ours(c: &Cluster, ns: &str, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_navique-operator"))
        .args(args)
        .arg("-n")
        .arg(ns)
        .arg("--kubeconfig")
        .arg(&c.kubeconfig)
        .output()
        .expect("navique-operator");
    assert!(
        out.status.success(),
        "navique-operator {args:?}:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn ours_json(c: &Cluster, ns: &str, args: &[&str]) -> Value {
    let mut a = args.to_vec();
    a.extend(["-o", "json"]);
    serde_json::from_str(&ours(c, ns, &a)).expect("JSON output")
}

fn revisions(history: &Value) -> Vec<(i64, String)> {
    history
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["revision"].as_i64().unwrap(),
                h["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

async fn client(c: &Cluster) -> kube::Client {
    let kc = kube::config::Kubeconfig::read_from(&c.kubeconfig).unwrap();
    let cfg = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .unwrap();
    kube::Client::try_from(cfg).unwrap()
}

async fn all_deployments_ready(c: &Cluster, ns: &str) -> usize {
    let api: Api<Deployment> = Api::namespaced(client(c).await, ns);
    let ds = api.list(&ListParams::default()).await.unwrap().items;
    for d in &ds {
        let want = d.spec.replicas.unwrap_or(1);
        assert_eq!(
            d.status.as_ref().and_then(|s| s.ready_replicas),
            Some(want),
            "{:?}",
            d.metadata.name
        );
    }
    ds.len()
}

/// Proof 1: installed and upgraded by us, then read, upgraded, rolled back
/// and uninstalled by real Helm.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_release_is_helms_release() {
    let Some(chart) = shared_chart("cert-manager-v1.21.1.tgz") else {
        return;
    };
    if !helm_available() {
        return;
    }
    let c = cluster();
    let ns = c.namespace("ours");
    ours(
        &c,
        &ns,
        &[
            "install",
            "cm",
            &chart,
            "--create-namespace",
            "--wait",
            "--timeout",
            "120s",
            "--set",
            "crds.enabled=true",
        ],
    );
    assert!(all_deployments_ready(&c, &ns).await >= 3);
    // startupapicheck's Job runs as the ServiceAccount its weight -5 hooks
    // made: on an API server that admits Pods by ServiceAccount, the first
    // revision is deployed, not failed.
    assert_eq!(
        revisions(&ours_json(&c, &ns, &["history", "cm"])),
        [(1, "deployed".to_string())]
    );
    ours(
        &c,
        &ns,
        &[
            "upgrade",
            "cm",
            &chart,
            "--wait",
            "--set",
            "crds.enabled=true",
            "--set",
            "replicaCount=2",
        ],
    );

    let list = helm(&c, &ns, &["list"]);
    assert_eq!(list.as_array().unwrap().len(), 1);
    let r = &list[0];
    assert_eq!(
        (
            r["name"].as_str(),
            r["revision"].as_i64(),
            r["status"].as_str()
        ),
        (Some("cm"), Some(2), Some("deployed"))
    );
    assert_eq!(
        (
            r["chart_name"].as_str(),
            r["chart_version"].as_str(),
            r["app_version"].as_str()
        ),
        (Some("cert-manager"), Some("v1.21.1"), Some("v1.21.1"))
    );
    assert_eq!(
        helm(&c, &ns, &["values", "cm"]),
        json!({"crds": {"enabled": true}, "replicaCount": 2})
    );
    assert_eq!(
        revisions(&helm(&c, &ns, &["history", "cm"])),
        [(1, "superseded".into()), (2, "deployed".into())]
    );

    let up = helm(
        &c,
        &ns,
        &[
            "upgrade-force",
            "cm",
            &chart,
            r#"{"crds": {"enabled": true}, "replicaCount": 3}"#,
        ],
    );
    assert_eq!(up["revision"], 3);
    let deployments: Api<Deployment> = Api::namespaced(client(&c).await, &ns);
    let controller = deployments.get("cm-cert-manager").await.unwrap();
    assert_eq!(controller.spec.replicas, Some(3));
    helm(&c, &ns, &["rollback-force", "cm", "1"]);
    assert_eq!(
        revisions(&helm(&c, &ns, &["history", "cm"])),
        [
            (1, "superseded".into()),
            (2, "superseded".into()),
            (3, "superseded".into()),
            (4, "deployed".into())
        ]
    );
    assert_eq!(
        deployments
            .get("cm-cert-manager")
            .await
            .unwrap()
            .spec
            .replicas,
        Some(1)
    );
    // Our side reads what Helm wrote on top of ours.
    let hist = ours_json(&c, &ns, &["history", "cm"]);
    assert_eq!(hist[3]["description"], "Rollback to 1");
    helm(&c, &ns, &["uninstall", "cm"]);
    assert_eq!(helm(&c, &ns, &["list"]), json!([]));
    assert!(deployments
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .is_empty());
}

/// Proof 2: installed by real Helm, then listed, upgraded, rolled back and
/// uninstalled by us, with Helm reading the result at each step.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn helms_release_is_our_release() {
    let Some(chart) = shared_chart("cloudnative-pg-0.29.0.tgz") else {
        return;
    };
    if !helm_available() {
        return;
    }
    let c = cluster();
    let ns = c.namespace("helms");
    helm(&c, &ns, &["install", "pg", &chart, "{}"]);
    let list = ours_json(&c, &ns, &["list"]);
    assert_eq!(list[0]["name"], "pg");
    assert_eq!(list[0]["revision"], "1");
    assert_eq!(list[0]["status"], "deployed");
    assert_eq!(list[0]["chart"], "cloudnative-pg-0.29.0");

    // Helm's field manager owns the fields we change: refused without
    // --force-conflicts, as Helm refuses, and nothing is recorded as deployed.
    let refused = Command::new(env!("CARGO_BIN_EXE_navique-operator"))
        .args([
            "upgrade",
            "pg",
            &chart,
            "--set",
            "replicaCount=2",
            "-n",
            &ns,
            "--kubeconfig",
        ])
        .arg(&c.kubeconfig)
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    // The first object we apply that Helm's manager owns fields of is the
    // ConfigMap Helm applied with `data: {}`: stored without `data` (Go's
    // omitempty), still owned, so applying it again would add the field.
    assert!(
        err.contains("Apply failed with")
            && err.contains(r#"ConfigMap "cnpg-controller-manager-config""#)
            && err.contains(": .data"),
        "{err}"
    );
    ours(
        &c,
        &ns,
        &[
            "upgrade",
            "pg",
            &chart,
            "--wait",
            "--force-conflicts",
            "--set",
            "replicaCount=2",
        ],
    );
    assert_eq!(helm(&c, &ns, &["values", "pg"]), json!({"replicaCount": 2}));
    let deployments: Api<Deployment> = Api::namespaced(client(&c).await, &ns);
    assert_eq!(
        deployments
            .get("pg-cloudnative-pg")
            .await
            .unwrap()
            .spec
            .replicas,
        Some(2)
    );
    all_deployments_ready(&c, &ns).await;

    ours(
        &c,
        &ns,
        &["rollback", "pg", "1", "--wait", "--force-conflicts"],
    );
    assert_eq!(ours_json(&c, &ns, &["status", "pg"])["version"], 4);
    assert_eq!(
        revisions(&helm(&c, &ns, &["history", "pg"])),
        [
            (1, "superseded".into()),
            (2, "failed".into()),
            (3, "superseded".into()),
            (4, "deployed".into())
        ]
    );
    assert_eq!(
        deployments
            .get("pg-cloudnative-pg")
            .await
            .unwrap()
            .spec
            .replicas,
        Some(1)
    );
    let status = helm(&c, &ns, &["get", "pg"]);
    assert_eq!(status["info"]["description"], "Rollback to 1");
    assert!(status["summary"]["manifest"]
        .as_str()
        .unwrap()
        .contains("kind: Deployment"));

    ours(&c, &ns, &["uninstall", "pg", "--wait"]);
    assert_eq!(helm(&c, &ns, &["list"]), json!([]));
    assert!(deployments
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .is_empty());
}

/// Proof 3: a Helm-written release, decoded and encoded again by us, reads
/// back identically in Helm.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn helm_release_round_trips_through_our_codec() {
    let Some(chart) = shared_chart("cert-manager-v1.21.1.tgz") else {
        return;
    };
    if !helm_available() {
        return;
    }
    let c = cluster();
    let ns = c.namespace("codec");
    helm(
        &c,
        &ns,
        &[
            "install",
            "rt",
            &chart,
            r#"{"crds": {"enabled": true}, "prometheus": {"enabled": false}}"#,
        ],
    );
    let before = helm(&c, &ns, &["get", "rt"]);
    let values_before = helm(&c, &ns, &["values", "rt"]);

    let secrets: Api<Secret> = Api::namespaced(client(&c).await, &ns);
    let key = storage::key("rt", 1);
    let mut secret = secrets.get(&key).await.unwrap();
    let payload = String::from_utf8(secret.data.as_ref().unwrap()["release"].0.clone()).unwrap();
    let release = codec::decode(&payload).unwrap();
    assert_eq!(release.name, "rt");
    assert_eq!(release.version, 1);
    assert_eq!(release.apply_method, "ssa");
    let reencoded = codec::encode(&release);
    assert_eq!(
        codec::decode(&reencoded).unwrap(),
        release,
        "our own round trip is lossless"
    );
    secret.data.as_mut().unwrap().insert(
        "release".into(),
        k8s_openapi::ByteString(reencoded.into_bytes()),
    );
    secrets
        .replace(&key, &PostParams::default(), &secret)
        .await
        .unwrap();

    let mut after = helm(&c, &ns, &["get", "rt"]);
    // The Secret was rewritten: only its storage labels' modification time may differ.
    for v in [&mut after] {
        if let Some(l) = v["summary"]["labels"].as_object_mut() {
            l.remove("modifiedAt");
        }
    }
    let mut before = before;
    if let Some(l) = before["summary"]["labels"].as_object_mut() {
        l.remove("modifiedAt");
    }
    assert_eq!(after, before);
    assert_eq!(helm(&c, &ns, &["values", "rt"]), values_before);
    helm(&c, &ns, &["uninstall", "rt"]);
}

/// A release Secret as someone else might leave one: Helm's labels and
/// type, and `release` data that is not a release.
fn broken_release(c: &Cluster, ns: &str, name: &str, data: &[u8]) {
    use base64::Engine;
    // Helm's record is base64 of gzip inside the Secret's own base64.
    let inner = base64::engine::general_purpose::STANDARD.encode(data);
    let secret = serde_json::json!({"apiVersion": "v1", "kind": "Secret", "type": "helm.sh/release.v1",
        "metadata": {"name": format!("sh.helm.release.v1.{name}.v1"), "namespace": ns,
                     "labels": {"owner": "helm", "name": name, "status": "deployed", "version": "1"}},
        "data": {"release": base64::engine::general_purpose::STANDARD.encode(inner)}});
    let path =
        std::env::temp_dir().join(format!("navique-broken-{name}-{}.json", std::process::id()));
    std::fs::write(&path, secret.to_string()).unwrap();
    let applied = kubectl(&c.kubeconfig, &["apply", "-f", path.to_str().unwrap()]);
    std::fs::remove_file(&path).unwrap();
    assert!(applied.is_some(), "kubectl apply of {name}");
}

#[test]
fn corrupted_release_records_are_skipped_like_helm_skips_them_and_the_rest_still_list() {
    if !helm_available() {
        return;
    }
    let c = cluster();
    let ns = c.namespace("broken");
    let chart = format!("{}/examples/demo-chart", env!("CARGO_MANIFEST_DIR"));
    ours(&c, &ns, &["install", "good", &chart, "--create-namespace"]);
    use std::io::Write;
    let gzip = |data: &[u8]| {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    };
    broken_release(&c, &ns, "not-gzip", b"\x1f\x8b\x08 this is not gzip at all");
    broken_release(&c, &ns, "not-json", &gzip(b"{\"name\": "));
    broken_release(&c, &ns, "not-a-release", &gzip(b"[1, 2, 3]"));
    // 200 MB of zeros in a few hundred KB: refused, not decompressed whole.
    let bomb = {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        let zeros = vec![0u8; 1 << 20];
        for _ in 0..200 {
            e.write_all(&zeros).unwrap();
        }
        e.finish().unwrap()
    };
    assert!(bomb.len() < 400 << 10, "{}", bomb.len());
    broken_release(&c, &ns, "bomb", &bomb);
    let listed = ours_json(&c, &ns, &["list", "-a"]);
    let names: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["good"], "{listed}");
    let helms = helm(&c, &ns, &["list"]);
    let helm_names: Vec<&str> = helms
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(helm_names, names, "real Helm skips the same records");
    // The good release still works: an upgrade and its history.
    ours(&c, &ns, &["upgrade", "good", &chart]);
    let history = ours_json(&c, &ns, &["history", "good"]);
    assert_eq!(revisions(&history).len(), 2);
}
