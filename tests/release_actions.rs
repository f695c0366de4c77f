//! Release actions beyond the happy path: ownership refusals (same words as
//! Helm), hooks, interrupted operations, max history, oversized releases.

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
use kube::api::{Api, ListParams, PostParams};
use navique_ai_core_operator::release::{codec, storage, Status};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

struct Env {
    kubeconfig: PathBuf,
    dir: PathBuf,
    _sandbox: Option<navique_sandbox::Sandbox>,
    /// On a real cluster, shared with other tests and later runs: what this
    /// test made there, removed when it ends, failed or not.
    shared: Option<Shared>,
}

struct Shared {
    namespaces: std::sync::Mutex<Vec<String>>,
    crds_before: Vec<String>,
    /// CRDs are cluster-scoped: tests that may make them take turns.
    _turn: std::sync::MutexGuard<'static, ()>,
}

static REAL_CLUSTER_TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The label the operator tests' sweep looks for to remove namespaces an
/// interrupted run left behind.
const TEST_LABEL: &str = "navique.test/created";

#[path = "support/kubectl.rs"]
mod support_kubectl;
#[path = "support/registry.rs"]
mod support_registry;
use support_kubectl::kubectl;
use support_registry::shared_charts;

fn crd_names(kubeconfig: &Path) -> Vec<String> {
    kubectl(kubeconfig, &["get", "crd", "-o", "name"])
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

fn env() -> Env {
    let dir = std::env::temp_dir().join(format!(
        "navique-release-actions-{:08x}",
        rand::random::<u32>()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    match std::env::var("NAVIQUE_TEST_KUBECONFIG") {
        Ok(p) if !p.is_empty() => {
            let turn = REAL_CLUSTER_TURN.lock().unwrap_or_else(|e| e.into_inner());
            let kubeconfig = PathBuf::from(p);
            let crds_before = crd_names(&kubeconfig);
            Env {
                kubeconfig,
                dir,
                _sandbox: None,
                shared: Some(Shared {
                    namespaces: Default::default(),
                    crds_before,
                    _turn: turn,
                }),
            }
        }
        _ => {
            let sb = navique_sandbox::Sandbox::start(navique_sandbox::Options {
                ready_delay: std::time::Duration::from_millis(50),
                ..Default::default()
            })
            .unwrap();
            Env {
                kubeconfig: sb.kubeconfig_path().to_path_buf(),
                dir,
                _sandbox: Some(sb),
                shared: None,
            }
        }
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
        let Some(shared) = &self.shared else {
            return;
        };
        // Deleting a namespace deletes the releases stored in it.
        let namespaces = shared.namespaces.lock().unwrap_or_else(|e| e.into_inner());
        for ns in namespaces.iter() {
            let _ = kubectl(
                &self.kubeconfig,
                &["delete", "namespace", ns, "--wait=false"],
            );
        }
        for crd in crd_names(&self.kubeconfig) {
            if !shared.crds_before.contains(&crd) {
                let _ = kubectl(&self.kubeconfig, &["delete", &crd, "--wait=false"]);
            }
        }
    }
}

fn unique(prefix: &str) -> String {
    format!("{prefix}-{:08x}", rand::random::<u32>())
}

impl Env {
    fn run(&self, ns: &str, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_navique-operator"))
            .args(args)
            .arg("-n")
            .arg(ns)
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .output()
            .unwrap()
    }

    /// Real Helm (`crates/sandbox/tests/helm_client.py`) in `ns`.
    fn helm(&self, ns: &str, args: &[&str]) -> Output {
        Command::new("python3")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/sandbox/tests/helm_client.py"))
            .arg(&self.kubeconfig)
            .arg(ns)
            .args(args)
            .output()
            .unwrap()
    }

    /// Real Helm in `ns`, which must succeed.
    fn helm_ok(&self, ns: &str, args: &[&str]) -> Output {
        let out = self.helm(ns, args);
        assert!(
            out.status.success(),
            "real Helm {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    fn ok(&self, ns: &str, args: &[&str]) -> String {
        let out = self.run(ns, args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    async fn client(&self) -> kube::Client {
        let kc = kube::config::Kubeconfig::read_from(&self.kubeconfig).unwrap();
        let cfg = kube::Config::from_custom_kubeconfig(kc, &Default::default())
            .await
            .unwrap();
        kube::Client::try_from(cfg).unwrap()
    }

    async fn namespace(&self, prefix: &str) -> String {
        let ns = unique(prefix);
        if let Some(shared) = &self.shared {
            shared.namespaces.lock().unwrap().push(ns.clone());
        }
        let api: Api<Namespace> = Api::all(self.client().await);
        api.create(
            &PostParams::default(),
            &serde_json::from_value(
                json!({"metadata": {"name": ns, "labels": {TEST_LABEL: "true"}}}),
            )
            .unwrap(),
        )
        .await
        .unwrap();
        ns
    }

    /// A chart written for the test: `files` are (path, content) under the chart root.
    fn chart(&self, name: &str, files: &[(&str, &str)]) -> String {
        let root = self.dir.join(name);
        std::fs::create_dir_all(root.join("templates")).unwrap();
        std::fs::write(
            root.join("Chart.yaml"),
            format!("apiVersion: v2\nname: {name}\nversion: 0.1.0\nappVersion: \"1.0\"\n"),
        )
        .unwrap();
        for (p, content) in files {
            let path = root.join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, content).unwrap();
        }
        root.to_string_lossy().into_owned()
    }
}

fn helm_available() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import helm_python"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok && std::env::var("CI").as_deref() == Ok("true") {
        panic!("helm-python-sdk is not installed and CI=true");
    }
    ok
}

const CONFIGMAP: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-settings\ndata:\n  mode: {{ .Values.mode | default \"a\" | quote }}\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn existing_object_of_another_owner_is_refused_with_helms_words() {
    let e = env();
    let ns = e.namespace("owner").await;
    let chart = e.chart("owned", &[("templates/cm.yaml", CONFIGMAP)]);
    let cms: Api<ConfigMap> = Api::namespaced(e.client().await, &ns);
    cms.create(
        &PostParams::default(),
        &serde_json::from_value(
            json!({"metadata": {"name": "rel-settings"}, "data": {"mode": "theirs"}}),
        )
        .unwrap(),
    )
    .await
    .unwrap();
    let out = e.run(&ns, &["install", "rel", &chart]);
    assert!(!out.status.success());
    let ours = String::from_utf8_lossy(&out.stderr).to_string();
    let expected = format!(
        "unable to continue with install: ConfigMap \"rel-settings\" in namespace \"{ns}\" exists and cannot be imported into the current release: invalid ownership metadata; label validation error: missing key \"app.kubernetes.io/managed-by\": must be set to \"Helm\"; annotation validation error: missing key \"meta.helm.sh/release-name\": must be set to \"rel\"; annotation validation error: missing key \"meta.helm.sh/release-namespace\": must be set to \"{ns}\""
    );
    assert!(ours.contains(&expected), "{ours}");
    // Nothing was written: no release record, the object is untouched.
    let secrets: Api<Secret> = Api::namespaced(e.client().await, &ns);
    assert!(secrets
        .list(&ListParams::default().labels("owner=helm"))
        .await
        .unwrap()
        .items
        .is_empty());
    assert_eq!(
        cms.get("rel-settings").await.unwrap().data.unwrap()["mode"],
        "theirs"
    );

    if helm_available() {
        let helm = e.helm(&ns, &["install", "rel", &chart, "{}"]);
        assert!(!helm.status.success());
        let theirs = String::from_utf8_lossy(&helm.stderr);
        assert!(theirs.contains(&expected), "real Helm says:\n{theirs}");
    }
}

const HOOK_JOB: &str = r#"apiVersion: batch/v1
kind: Job
metadata:
  name: {{ .Release.Name }}-migrate
  annotations:
    "helm.sh/hook": pre-install,pre-upgrade
    "helm.sh/hook-weight": "-5"
    "helm.sh/hook-delete-policy": before-hook-creation
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: migrate, image: busybox, command: ["true"]}]
"#;

const HOOK_CM: &str = r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-post
  annotations:
    "helm.sh/hook": post-install
    "helm.sh/hook-delete-policy": hook-succeeded
data: {}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hooks_run_in_order_and_are_recorded() {
    let e = env();
    let ns = e.namespace("hooks").await;
    let chart = e.chart(
        "hooked",
        &[
            ("templates/cm.yaml", CONFIGMAP),
            ("templates/job.yaml", HOOK_JOB),
            ("templates/post.yaml", HOOK_CM),
        ],
    );
    e.ok(&ns, &["install", "h", &chart, "--wait", "--timeout", "60s"]);
    let jobs: Api<Job> = Api::namespaced(e.client().await, &ns);
    let job = jobs.get("h-migrate").await.unwrap();
    assert_eq!(
        job.status.unwrap().succeeded,
        Some(1),
        "the pre-install Job ran to completion"
    );
    let cms: Api<ConfigMap> = Api::namespaced(e.client().await, &ns);
    assert!(
        cms.get_opt("h-post").await.unwrap().is_none(),
        "hook-succeeded deletes the hook"
    );
    assert!(cms.get_opt("h-settings").await.unwrap().is_some());

    let secrets: Api<Secret> = Api::namespaced(e.client().await, &ns);
    let s = secrets.get(&storage::key("h", 1)).await.unwrap();
    let rel = storage::release_from_secret(&s).unwrap();
    assert_eq!(rel.hooks.len(), 2);
    let job_hook = rel.hooks.iter().find(|h| h.kind == "Job").unwrap();
    assert_eq!(job_hook.events, ["pre-install", "pre-upgrade"]);
    assert_eq!(job_hook.weight, -5);
    assert_eq!(job_hook.last_run.phase, "Succeeded");
    assert!(!job_hook.last_run.started_at.is_empty() && !job_hook.last_run.completed_at.is_empty());
    assert!(
        !rel.manifest.contains("kind: Job"),
        "hooks are not part of the manifest"
    );
    let hooks = e.ok(&ns, &["get", "hooks", "h"]);
    assert!(hooks.contains("# Source: hooked/templates/job.yaml"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupted_upgrade_is_recovered_and_history_is_bounded() {
    let e = env();
    let ns = e.namespace("recover").await;
    let chart = e.chart("plain", &[("templates/cm.yaml", CONFIGMAP)]);
    e.ok(&ns, &["install", "p", &chart]);
    // Simulate a crash mid-upgrade: revision 2 left pending-upgrade.
    let secrets: Api<Secret> = Api::namespaced(e.client().await, &ns);
    let mut rel =
        storage::release_from_secret(&secrets.get(&storage::key("p", 1)).await.unwrap()).unwrap();
    rel.version = 2;
    rel.info.status = Status::PendingUpgrade;
    secrets
        .create(
            &PostParams::default(),
            &storage::secret_for(&rel, true, &Default::default()).unwrap(),
        )
        .await
        .unwrap();

    e.ok(
        &ns,
        &[
            "upgrade",
            "p",
            &chart,
            "--set",
            "mode=b",
            "--max-history",
            "3",
        ],
    );
    let history: serde_json::Value =
        serde_json::from_str(&e.ok(&ns, &["history", "p", "-o", "json"])).unwrap();
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
    assert_eq!(states, [(1, "superseded"), (2, "failed"), (3, "deployed")]);

    for mode in ["c", "d", "e"] {
        e.ok(
            &ns,
            &[
                "upgrade",
                "p",
                &chart,
                "--set",
                &format!("mode={mode}"),
                "--max-history",
                "3",
            ],
        );
    }
    let history: serde_json::Value =
        serde_json::from_str(&e.ok(&ns, &["history", "p", "-o", "json"])).unwrap();
    let revs: Vec<i64> = history
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["revision"].as_i64().unwrap())
        .collect();
    assert_eq!(revs, [4, 5, 6], "--max-history keeps the newest revisions");
    let cms: Api<ConfigMap> = Api::namespaced(e.client().await, &ns);
    assert_eq!(
        cms.get("p-settings").await.unwrap().data.unwrap()["mode"],
        "e"
    );
    let values = e.ok(&ns, &["get", "values", "p"]);
    assert_eq!(values, "USER-SUPPLIED VALUES:\nmode: e\n");
    e.ok(&ns, &["uninstall", "p"]);
    assert!(e.run(&ns, &["status", "p"]).status.code() != Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn release_too_large_for_a_secret_fails_before_anything_is_applied() {
    let e = env();
    let ns = e.namespace("large").await;
    // ~3 MB of incompressible text in a chart file: the release record keeps chart files.
    let noise: String = (0..3_000_000)
        .map(|_| char::from(b'a' + (rand::random::<u8>() % 26)))
        .collect();
    let chart = e.chart(
        "huge",
        &[("templates/cm.yaml", CONFIGMAP), ("files/blob.txt", &noise)],
    );
    let out = e.run(&ns, &["install", "big", &chart]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("more than a Secret can hold") && err.contains("nothing was applied"),
        "{err}"
    );
    let cms: Api<ConfigMap> = Api::namespaced(e.client().await, &ns);
    assert!(cms.get_opt("big-settings").await.unwrap().is_none());
    // And the codec itself round-trips what it refused to store.
    let rel = navique_ai_core_operator::release::Release {
        name: "x".into(),
        info: navique_ai_core_operator::release::Info {
            first_deployed: String::new(),
            last_deployed: String::new(),
            deleted: String::new(),
            description: String::new(),
            status: Status::Deployed,
            notes: String::new(),
        },
        chart: serde_json::Value::Null,
        config: json!({"blob": noise}),
        manifest: String::new(),
        hooks: vec![],
        version: 1,
        namespace: ns.clone(),
        labels: Default::default(),
        apply_method: "ssa".into(),
    };
    assert!(storage::secret_for(&rel, true, &Default::default()).is_err());
    assert_eq!(codec::decode(&codec::encode(&rel)).unwrap(), rel);
}

const HELD_DEPLOYMENT: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-web
  annotations:
    sandbox.navique.dev/hold-unready: "true"
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: busybox}]
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_names_what_is_not_ready_and_atomic_uninstalls() {
    let e = env();
    if e._sandbox.is_none() {
        eprintln!("skipping: holding a workload unready needs the sandbox");
        return;
    }
    let ns = e.namespace("atomic").await;
    let chart = e.chart(
        "stuck",
        &[
            ("templates/cm.yaml", CONFIGMAP),
            ("templates/deploy.yaml", HELD_DEPLOYMENT),
        ],
    );
    let out = e.run(
        &ns,
        &[
            "install",
            "s",
            &chart,
            "--wait",
            "--timeout",
            "2s",
            "--atomic",
        ],
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("has been uninstalled due to rollback-on-failure"),
        "{err}"
    );
    assert!(
        err.contains(&format!("Deployment \"s-web\" in namespace \"{ns}\"")),
        "the message names what is not ready: {err}"
    );
    let cms: Api<ConfigMap> = Api::namespaced(e.client().await, &ns);
    assert!(
        cms.get_opt("s-settings").await.unwrap().is_none(),
        "rolled back: nothing left"
    );

    // Without --atomic the release stays, marked failed.
    let out = e.run(&ns, &["install", "t", &chart, "--wait", "--timeout", "1s"]);
    assert!(!out.status.success());
    let history: serde_json::Value =
        serde_json::from_str(&e.ok(&ns, &["history", "t", "-o", "json"])).unwrap();
    assert_eq!(history[0]["status"], "failed");
    assert!(history[0]["description"]
        .as_str()
        .unwrap()
        .contains("context deadline exceeded"));
}

const KEPT: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-kept\n  annotations:\n    helm.sh/resource-policy: keep\ndata: {}\n";

const CRD: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.navique.test
spec:
  group: navique.test
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
"#;

const GADGET: &str = "apiVersion: navique.test/v1\nkind: Gadget\nmetadata:\n  name: {{ .Release.Name }}-gadget\nspec:\n  size: 1\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crds_first_keep_policy_and_reverse_uninstall() {
    let e = env();
    let ns = e.namespace("crds").await;
    let chart = e.chart(
        "gadgets",
        &[
            ("crds/gadget.yaml", CRD),
            ("templates/gadget.yaml", GADGET),
            ("templates/kept.yaml", KEPT),
            ("templates/cm.yaml", CONFIGMAP),
        ],
    );
    e.ok(&ns, &["install", "g", &chart, "--wait"]);
    let manifest = e.ok(&ns, &["get", "manifest", "g"]);
    assert!(
        manifest.contains("kind: Gadget") && !manifest.contains("CustomResourceDefinition"),
        "crds/ is not in the manifest"
    );
    // An upgrade that drops an object deletes it, unless it is kept.
    let slim = e.chart(
        "gadgets",
        &[
            ("crds/gadget.yaml", CRD),
            ("templates/kept.yaml", KEPT),
            ("templates/cm.yaml", ""),
        ],
    );
    e.ok(&ns, &["upgrade", "g", &slim]);
    let cms: Api<ConfigMap> = Api::namespaced(e.client().await, &ns);
    assert!(
        cms.get_opt("g-settings").await.unwrap().is_none(),
        "dropped by the upgrade"
    );
    let gadgets = e.ok(&ns, &["get", "manifest", "g"]);
    assert!(!gadgets.contains("g-settings"));
    let out = e.ok(&ns, &["uninstall", "g", "--keep-history"]);
    assert!(
        out.contains("These resources were kept due to the resource policy:"),
        "{out}"
    );
    let cms: Api<ConfigMap> = Api::namespaced(e.client().await, &ns);
    assert!(cms.get_opt("g-kept").await.unwrap().is_some());
    let history: serde_json::Value =
        serde_json::from_str(&e.ok(&ns, &["history", "g", "-o", "json"])).unwrap();
    assert_eq!(
        history[1]["status"], "uninstalled",
        "--keep-history keeps the record"
    );
    let crds: Api<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> = Api::all(e.client().await);
    assert!(
        crds.get_opt("gadgets.navique.test")
            .await
            .unwrap()
            .is_some(),
        "CRDs from crds/ are never deleted"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn releases_in_helms_configmap_driver_are_read() {
    if !helm_available() {
        return;
    }
    let e = env();
    let ns = e.namespace("cmdriver").await;
    let chart = e.chart("cmd", &[("templates/cm.yaml", CONFIGMAP)]);
    let code = format!(
        "import helm_python\ncfg = helm_python.Config(kubeconfig_path={:?}, namespace={ns:?}, storage_driver='configmap')\ncfg.install({chart:?}, 'viacm', {{'mode': 'z'}}, namespace={ns:?})\n",
        e.kubeconfig.to_string_lossy()
    );
    let out = Command::new("python3")
        .args(["-c", &code])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list: serde_json::Value =
        serde_json::from_str(&e.ok(&ns, &["list", "-o", "json"])).unwrap();
    assert_eq!(list[0]["name"], "viacm");
    assert_eq!(list[0]["status"], "deployed");
    assert_eq!(
        e.ok(&ns, &["get", "values", "viacm", "-o", "json"]).trim(),
        r#"{"mode":"z"}"#
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provenance_label_and_annotation_ride_on_the_release_secret() {
    use navique_ai_core_operator::action::{self, Context};
    let e = env();
    let ns = e.namespace("provenance").await;
    let chart_dir = e.chart("prov", &[("templates/cm.yaml", CONFIGMAP)]);
    let chart = navique_ai_core_operator::chart::load_chart(Path::new(&chart_dir)).unwrap();
    let mut ctx = Context::new(e.client().await, &ns);
    ctx.labels.insert(
        "app.kubernetes.io/managed-by".into(),
        "navique-ai-core-operator".into(),
    );
    ctx.storage
        .annotations
        .insert("core.navique.com/provenance".into(), "owned".into());
    action::install::install(&ctx, "ours", &chart, &Default::default())
        .await
        .unwrap();
    let mut values = navique_ai_core_operator::value::Map::new();
    values.insert(
        "mode".into(),
        navique_ai_core_operator::value::Value::str("b"),
    );
    action::upgrade::upgrade(&ctx, "ours", &chart, &values, false)
        .await
        .unwrap();

    let secrets: Api<Secret> = Api::namespaced(e.client().await, &ns);
    for v in [1, 2] {
        let s = secrets.get(&storage::key("ours", v)).await.unwrap();
        assert_eq!(
            s.metadata.labels.as_ref().unwrap()["app.kubernetes.io/managed-by"],
            "navique-ai-core-operator"
        );
        assert_eq!(
            s.metadata.annotations.as_ref().unwrap()["core.navique.com/provenance"],
            "owned"
        );
        assert_eq!(s.metadata.labels.as_ref().unwrap()["owner"], "helm");
    }
    // Reading it back keeps the custom label on the release, not the system ones.
    let rel = ctx.storage.deployed("ours").await.unwrap().unwrap();
    assert_eq!(
        rel.labels
            .get("app.kubernetes.io/managed-by")
            .map(String::as_str),
        Some("navique-ai-core-operator")
    );
    assert!(!rel.labels.contains_key("owner") && !rel.labels.contains_key("status"));
    if helm_available() {
        let out = e.helm(&ns, &["list"]);
        let list: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            list[0]["labels"]["app.kubernetes.io/managed-by"], "navique-ai-core-operator",
            "Helm sees our label"
        );
        assert_eq!(list[0]["revision"], 2);
    }
}

/// A hook chain shaped like cert-manager's startupapicheck: the Job runs as
/// a ServiceAccount that weight -5 hooks create and `hook-succeeded` deletes,
/// so the ServiceAccount must outlive the Job; hooks of equal weight run by
/// name and are deleted in reverse; a hook without a policy gets
/// `before-hook-creation`.
const HOOK_CHAIN: &[(&str, &str)] = &[
    ("templates/cm.yaml", CONFIGMAP),
    (
        "templates/check-rbac.yaml",
        r#"apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ .Release.Name }}-check
  annotations:
    "helm.sh/hook": post-install,post-upgrade
    "helm.sh/hook-weight": "-5"
    "helm.sh/hook-delete-policy": before-hook-creation,hook-succeeded
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ .Release.Name }}-check
  annotations:
    "helm.sh/hook": post-install,post-upgrade
    "helm.sh/hook-weight": "-5"
    "helm.sh/hook-delete-policy": before-hook-creation,hook-succeeded
rules:
  - apiGroups: [""]
    resources: [configmaps]
    verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ .Release.Name }}-check
  annotations:
    "helm.sh/hook": post-install,post-upgrade
    "helm.sh/hook-weight": "-5"
    "helm.sh/hook-delete-policy": before-hook-creation,hook-succeeded
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {{ .Release.Name }}-check
subjects:
  - kind: ServiceAccount
    name: {{ .Release.Name }}-check
    namespace: {{ .Release.Namespace }}
"#,
    ),
    (
        "templates/check-job.yaml",
        r#"apiVersion: batch/v1
kind: Job
metadata:
  name: {{ .Release.Name }}-check
  annotations:
    "helm.sh/hook": post-install,post-upgrade
    "helm.sh/hook-weight": "1"
    "helm.sh/hook-delete-policy": before-hook-creation,hook-succeeded
spec:
  backoffLimit: 2
  template:
    spec:
      serviceAccountName: {{ .Release.Name }}-check
      restartPolicy: Never
      containers: [{name: check, image: busybox, command: ["true"]}]
"#,
    ),
    (
        "templates/side-hooks.yaml",
        r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-pre
  annotations:
    "helm.sh/hook": pre-install,pre-upgrade
data: {}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-z
  annotations:
    "helm.sh/hook": post-install
    "helm.sh/hook-delete-policy": hook-succeeded
data: {}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-y
  annotations:
    "helm.sh/hook": post-install
    "helm.sh/hook-delete-policy": hook-succeeded
data: {}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: {{ .Release.Name }}-cleanup
  annotations:
    "helm.sh/hook": pre-delete
    "helm.sh/hook-delete-policy": hook-succeeded
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: cleanup, image: busybox, command: ["true"]}]
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-gone
  annotations:
    "helm.sh/hook": post-delete
    "helm.sh/hook-delete-policy": hook-succeeded
data: {}
"#,
    ),
];

/// The kinds whose creations and deletions the hook comparison records:
/// (group, version, kind, namespaced).
const RECORDED_KINDS: &[(&str, &str, &str, bool)] = &[
    ("", "v1", "ServiceAccount", true),
    ("", "v1", "ConfigMap", true),
    ("", "v1", "Secret", true),
    ("rbac.authorization.k8s.io", "v1", "Role", true),
    ("rbac.authorization.k8s.io", "v1", "RoleBinding", true),
    ("batch", "v1", "Job", true),
    ("rbac.authorization.k8s.io", "v1", "ClusterRole", false),
    (
        "rbac.authorization.k8s.io",
        "v1",
        "ClusterRoleBinding",
        false,
    ),
];

/// Creations and deletions in a namespace, in the order the API server
/// made them (resourceVersions are one sequence across kinds, as etcd's
/// revisions are on a real cluster).
struct Recorder {
    /// (resourceVersion, "verb Kind name", whether a hook).
    events: std::sync::Arc<std::sync::Mutex<Vec<(u64, String, bool)>>>,
    watches: Vec<tokio::task::JoinHandle<()>>,
}

impl Recorder {
    /// Records in `ns`, and of cluster-scoped kinds the objects whose name
    /// holds `release` (a shared cluster holds others').
    async fn start(client: &kube::Client, ns: &str, release: &str) -> Recorder {
        use futures::StreamExt;
        use kube::api::{ApiResource, DynamicObject, GroupVersionKind, WatchEvent, WatchParams};
        let events = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut watches = Vec::new();
        for (group, version, kind, namespaced) in RECORDED_KINDS {
            let ar = ApiResource::from_gvk(&GroupVersionKind::gvk(group, version, kind));
            let api: Api<DynamicObject> = if *namespaced {
                Api::namespaced_with(client.clone(), ns, &ar)
            } else {
                Api::all_with(client.clone(), &ar)
            };
            let release = (!namespaced).then(|| release.to_string());
            let from = api
                .list_metadata(&ListParams::default())
                .await
                .unwrap()
                .metadata
                .resource_version
                .unwrap_or_default();
            let mut stream = api
                .watch(&WatchParams::default(), &from)
                .await
                .unwrap()
                .boxed();
            let events = events.clone();
            watches.push(tokio::spawn(async move {
                while let Some(Ok(event)) = stream.next().await {
                    let (verb, o) = match event {
                        WatchEvent::Added(o) => ("create", o),
                        WatchEvent::Deleted(o) => ("delete", o),
                        _ => continue,
                    };
                    let rv = o.metadata.resource_version.clone().unwrap_or_default();
                    let name = o.metadata.name.clone().unwrap_or_default();
                    // Helm's release records are not hooks.
                    if name.starts_with("sh.helm.release.")
                        || release.as_ref().is_some_and(|r| !name.contains(r.as_str()))
                    {
                        continue;
                    }
                    let hook = o
                        .metadata
                        .annotations
                        .as_ref()
                        .is_some_and(|a| a.contains_key("helm.sh/hook"));
                    events.lock().unwrap().push((
                        rv.parse().unwrap_or(0),
                        format!("{verb} {kind} {name}"),
                        hook,
                    ));
                }
            }));
        }
        Recorder { events, watches }
    }

    /// What was recorded, in the server's order; the watches stop. Helm
    /// creates a release's own objects of one kind concurrently (their
    /// order is not Helm's to keep), hooks one by one: `hooks_only` keeps
    /// the hooks.
    async fn finish(self, hooks_only: bool) -> Vec<String> {
        // The deletions a step waited for may still be on their way to us.
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        for w in &self.watches {
            w.abort();
        }
        let mut events = self.events.lock().unwrap().clone();
        events.sort();
        events
            .into_iter()
            .filter(|(_, _, hook)| *hook || !hooks_only)
            .map(|(_, e, _)| e)
            .collect()
    }
}

/// The release's hook records as Helm writes them, minus the times.
async fn hook_records(e: &Env, ns: &str, release: &str, revision: i64) -> Vec<serde_json::Value> {
    let secrets: Api<Secret> = Api::namespaced(e.client().await, ns);
    let s = secrets.get(&storage::key(release, revision)).await.unwrap();
    let rel = storage::release_from_secret(&s).unwrap();
    rel.hooks
        .iter()
        .map(|h| {
            json!({"name": h.name, "kind": h.kind, "events": h.events, "weight": h.weight,
                   "delete_policies": h.delete_policies, "phase": h.last_run.phase,
                   "ran": !h.last_run.started_at.is_empty()})
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hook_creates_deletes_and_records_equal_real_helms() {
    if !helm_available() {
        return;
    }
    let e = env();
    let chart = e.chart("chain", HOOK_CHAIN);
    let ours = e.namespace("hooks-ours").await;
    let theirs = e.namespace("hooks-helm").await;
    let steps: [(&str, &[&str], &[&str]); 3] = [
        (
            "install",
            &["install", "h", &chart, "--wait", "--timeout", "120s"],
            &["install", "h", &chart, "{}"],
        ),
        (
            "upgrade",
            &["upgrade", "h", &chart, "--wait", "--timeout", "120s"],
            &["upgrade", "h", &chart, "{}"],
        ),
        (
            "uninstall",
            &["uninstall", "h", "--wait", "--timeout", "120s"],
            &["uninstall", "h"],
        ),
    ];
    for (step, our_args, helm_args) in steps {
        let client = e.client().await;
        let recorder = Recorder::start(&client, &ours, "h").await;
        e.ok(&ours, our_args);
        let our_sequence = recorder.finish(false).await;
        let recorder = Recorder::start(&client, &theirs, "h").await;
        e.helm_ok(&theirs, helm_args);
        let helm_sequence = recorder.finish(false).await;
        assert_eq!(
            our_sequence, helm_sequence,
            "{step}: creates and deletes, ours then real Helm's"
        );
        if step == "install" {
            // The Job's ServiceAccount outlives the Job (cert-manager's
            // startupapicheck on a real API server's admission).
            let at = |e: &str| {
                our_sequence
                    .iter()
                    .position(|s| s == e)
                    .unwrap_or_else(|| panic!("{e} in {our_sequence:?}"))
            };
            assert!(
                at("delete Job h-check") < at("delete ServiceAccount h-check"),
                "{our_sequence:?}"
            );
            assert!(
                at("create Job h-check") < at("delete ConfigMap h-y"),
                "{our_sequence:?}"
            );
        }
        if step != "uninstall" {
            let revision = if step == "install" { 1 } else { 2 };
            assert_eq!(
                hook_records(&e, &ours, "h", revision).await,
                hook_records(&e, &theirs, "h", revision).await,
                "{step}: the release's hook records"
            );
        }
    }
}

/// The corpus charts whose hooks make chains (ingress-nginx's admission
/// webhook Jobs run as hook ServiceAccounts with cluster-scoped RBAC hooks;
/// cert-manager's startupapicheck): installed and uninstalled by us, then
/// by real Helm, one after the other under one release name, the creates
/// and deletes of each equal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hook_sequences_of_corpus_charts_equal_real_helms() {
    let Some(charts) = shared_charts() else {
        return;
    };
    if !helm_available() {
        return;
    }
    let e = env();
    for (file, values) in [
        ("ingress-nginx-4.15.1.tgz", json!({})),
        ("cert-manager-v1.21.1.tgz", json!({})),
    ] {
        let chart = charts.join(file).to_string_lossy().into_owned();
        let release = unique("hk");
        let client = e.client().await;
        let ours = e.namespace("hooks-ours").await;
        let recorder = Recorder::start(&client, &ours, &release).await;
        let mut args = vec!["install", &release, &chart, "--wait", "--timeout", "120s"];
        let set = values.to_string();
        if values != json!({}) {
            args.extend(["--set-json", &set]);
        }
        e.ok(&ours, &args);
        e.ok(
            &ours,
            &["uninstall", &release, "--wait", "--timeout", "120s"],
        );
        let our_sequence = recorder.finish(true).await;

        let theirs = e.namespace("hooks-helm").await;
        let recorder = Recorder::start(&client, &theirs, &release).await;
        e.helm_ok(&theirs, &["install", &release, &chart, &set]);
        e.helm_ok(&theirs, &["uninstall", &release]);
        let helm_sequence = recorder.finish(true).await;
        assert!(
            our_sequence.iter().any(|s| s.starts_with("delete Job ")),
            "{file}: no hook Job ran: {our_sequence:?}"
        );
        assert_eq!(
            our_sequence, helm_sequence,
            "{file}: creates and deletes, ours then real Helm's"
        );
    }
}
