//! The operator's scenario tests share this: a cluster (an embedded API
//! server per test, or the one NAVIQUE_TEST_KUBECONFIG names, where tests
//! take turns and clean up after themselves), an operator run in-process
//! or as a process, real Helm and kubectl as the user's tools, and the part
//! the upstream controllers would play (CNPG writing its Cluster's status),
//! which these tests play themselves because those controllers never run here.

#![allow(dead_code)]

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams};
use kube::discovery::ApiResource;
use navique_ai_core_operator::operator::api::Kind;
use navique_ai_core_operator::operator::decide::conditions::is_subset;
use navique_ai_core_operator::operator::model::catalog::Catalog;
use navique_ai_core_operator::operator::reconcile::metrics::Metrics;
use navique_ai_core_operator::operator::runtime::process::{self, RunOptions};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

static REAL_CLUSTER_TURN: Mutex<()> = Mutex::new(());

thread_local! {
    /// Whether this test's thread holds the turn already: a scenario that
    /// makes a second Env (shadowing, so the first lives on) must not wait for itself.
    static HOLDS_TURN: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Tests take turns on a real cluster; the turn is held by a test's first Env.
struct Turn(#[allow(dead_code)] MutexGuard<'static, ()>);

impl Turn {
    fn take() -> Option<Turn> {
        if HOLDS_TURN.with(|h| h.get()) {
            return None;
        }
        let guard = REAL_CLUSTER_TURN.lock().unwrap_or_else(|e| e.into_inner());
        HOLDS_TURN.with(|h| h.set(true));
        Some(Turn(guard))
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        HOLDS_TURN.with(|h| h.set(false));
    }
}

/// On namespaces a test makes, so a later run can find them.
const TEST_LABEL: &str = "navique.test/created";

/// The plural of one of our kinds, as the operator's own `Kind` knows it.
fn plural(kind: &str) -> &'static str {
    Kind::parse(kind).expect("one of our kinds").facts().plural
}

pub struct Env {
    pub kubeconfig: PathBuf,
    pub sandbox: Option<navique_sandbox::Sandbox>,
    pub rt: tokio::runtime::Runtime,
    pub client: kube::Client,
    /// Namespaces this test created, deleted at the end.
    pub namespaces: Mutex<Vec<String>>,
    /// Those of `namespaces` with a random name: no later test can meet
    /// them, so the clean-up need not wait for them to be gone.
    unique_namespaces: Mutex<Vec<String>>,
    /// On a real cluster: the CRDs and Helm releases there before the test,
    /// so that everything else can be removed after it, even after a failure.
    before: Option<(Vec<String>, Vec<(String, String)>)>,
    /// On a real cluster: the namespaces there before the test (the ones
    /// the operator made for its releases are removed with the test's).
    namespaces_before: Vec<String>,
    _turn: Option<Turn>,
}

pub fn shared() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/charts");
    if p.join("cert-manager-v1.21.1.tgz").exists() {
        return Some(p);
    }
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("../shared/charts is missing and CI=true");
    }
    eprintln!("skipping: ../shared/charts is missing");
    None
}

pub fn helm_available() -> bool {
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

pub fn real_cluster() -> Option<PathBuf> {
    std::env::var("NAVIQUE_TEST_KUBECONFIG")
        .ok()
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
}

impl Env {
    pub fn new() -> Env {
        Env::with(navique_sandbox::Options {
            ready_delay: Duration::from_millis(50),
            ..Default::default()
        })
    }

    pub fn with(opts: navique_sandbox::Options) -> Env {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let (kubeconfig, sandbox, turn) = match real_cluster() {
            Some(p) => (p, None, Turn::take()),
            None => {
                let sb = navique_sandbox::Sandbox::start(opts).expect("sandbox");
                (sb.kubeconfig_path().to_path_buf(), Some(sb), None)
            }
        };
        let client = rt
            .block_on(navique_ai_core_operator::apply::client::connect(
                Some(&kubeconfig),
                None,
            ))
            .expect("client");
        let mut env = Env {
            kubeconfig,
            sandbox,
            rt,
            client,
            namespaces: Mutex::new(Vec::new()),
            unique_namespaces: Mutex::new(Vec::new()),
            before: None,
            namespaces_before: Vec::new(),
            _turn: turn,
        };
        if env.is_real() {
            env.sweep_earlier_runs();
            env.namespaces_before = env.namespace_names();
            env.before = Some((
                env.crd_names(),
                env.releases()
                    .into_iter()
                    .map(|(n, r, _, _)| (n, r))
                    .collect(),
            ));
        }
        env
    }

    fn namespace_names(&self) -> Vec<String> {
        use k8s_openapi::api::core::v1::Namespace;
        let api: Api<Namespace> = Api::all(self.client.clone());
        self.block(api.list_metadata(&ListParams::default()))
            .map(|l| {
                l.items
                    .into_iter()
                    .filter_map(|n| n.metadata.name)
                    .collect()
            })
            .unwrap_or_default()
    }

    fn crd_names(&self) -> Vec<String> {
        use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
        let api: Api<CustomResourceDefinition> = Api::all(self.client.clone());
        self.block(api.list_metadata(&ListParams::default()))
            .map(|l| {
                l.items
                    .into_iter()
                    .filter_map(|c| c.metadata.name)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Deletes every resource of our kinds, finalizers first: no operator
    /// runs to release them any more.
    fn delete_our_resources(&self) {
        for kind in Kind::resources() {
            let (kind, plural) = (kind.as_str(), kind.facts().plural);
            let Ok(list) = self.block(self.ours(kind, plural, None).list(&ListParams::default()))
            else {
                continue;
            };
            for o in list.items {
                let ns = o.metadata.namespace.clone().unwrap_or_default();
                let name = o.metadata.name.clone().unwrap_or_default();
                let api = self.ours(kind, plural, Some(ns.as_str()).filter(|n| !n.is_empty()));
                let _ = self.block(api.patch(
                    &name,
                    &PatchParams::default(),
                    &Patch::Merge(json!({"metadata": {"finalizers": null}})),
                ));
                let _ = self.block(api.delete(&name, &Default::default()));
            }
        }
    }

    /// Removes what the test made on a shared cluster: our resources (their
    /// finalizers first, since no operator runs any more), the releases and
    /// CRDs that were not there before, and the test's namespaces.
    fn clean_up_real_cluster(&self) {
        use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
        let Some((crds_before, _)) = &self.before else {
            return;
        };
        self.delete_our_resources();
        for (ns, name, _, _) in self.releases() {
            let ctx = navique_ai_core_operator::action::Context::new(self.client.clone(), &ns);
            let _ = self.block(navique_ai_core_operator::action::uninstall::uninstall(
                &ctx, &name, false,
            ));
            self.namespaces.lock().unwrap().push(ns);
        }
        let crds: Api<CustomResourceDefinition> = Api::all(self.client.clone());
        let mut deleted_crds = Vec::new();
        for name in self.crd_names() {
            if !crds_before.contains(&name) {
                let _ = self.block(crds.delete(&name, &Default::default()));
                deleted_crds.push(name);
            }
        }
        for ns in self.namespace_names() {
            if !self.namespaces_before.contains(&ns) {
                self.namespaces.lock().unwrap().push(ns);
            }
        }
        let namespaces = self.namespaces.lock().unwrap().clone();
        for ns in &namespaces {
            let _ = Command::new("kubectl")
                .arg("--kubeconfig")
                .arg(&self.kubeconfig)
                .args([
                    "delete",
                    "namespace",
                    ns,
                    "--wait=false",
                    "--ignore-not-found",
                ])
                .status();
        }
        // The next test may install the same CRDs and fixed namespaces
        // (cert-manager, cnpg-system) again: meeting them still terminating,
        // its writes would be refused or vanish with the deletion.
        let unique = self.unique_namespaces.lock().unwrap().clone();
        let fixed: Vec<&String> = namespaces.iter().filter(|n| !unique.contains(n)).collect();
        self.wait_quietly(Duration::from_secs(120), |e| {
            let names = e.namespace_names();
            let crds = e.crd_names();
            let left: Vec<&str> = fixed
                .iter()
                .copied()
                .filter(|n| names.contains(n))
                .chain(deleted_crds.iter().filter(|c| crds.contains(c)))
                .map(|s| s.as_str())
                .collect();
            left.is_empty().then_some(()).ok_or(format!("{left:?}"))
        });
    }

    /// `wait_for` for a clean-up, which runs in `drop` and must not panic
    /// (a panic while a failed test unwinds aborts the whole binary).
    fn wait_quietly(&self, timeout: Duration, done: impl FnMut(&Env) -> Result<(), String>) {
        if let Err(left) = self.poll(timeout, done) {
            eprintln!("clean-up: still there after {timeout:?}: {left}");
        }
    }

    pub fn is_real(&self) -> bool {
        self.sandbox.is_none()
    }

    pub fn namespace(&self, prefix: &str) -> String {
        let ns = format!("{prefix}-{:06x}", rand::random::<u32>() & 0xffffff);
        self.kubectl(&["create", "namespace", &ns]);
        self.track_namespace(&ns);
        self.unique_namespaces.lock().unwrap().push(ns.clone());
        ns
    }

    /// A namespace by its fixed name (a catalog namespace), removed at the end,
    /// and labelled so that a later run removes it if this one cannot.
    pub fn track_namespace(&self, ns: &str) {
        let _ = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args([
                "label",
                "namespace",
                ns,
                &format!("{TEST_LABEL}=true"),
                "--overwrite",
            ])
            .output();
        self.namespaces.lock().unwrap().push(ns.to_string());
    }

    /// On a shared cluster an earlier run may have been killed before its
    /// clean-up: remove what such a run leaves (our resources, our releases and
    /// those in namespaces a run labelled, those namespaces, the Capability
    /// objects and their Events, and the catalog CRDs nobody's controller serves).
    fn sweep_earlier_runs(&self) {
        use k8s_openapi::api::core::v1::Namespace;
        use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
        self.delete_our_resources();
        let namespaces: Api<Namespace> = Api::all(self.client.clone());
        let labelled: Vec<String> = self
            .block(
                namespaces
                    .list_metadata(&ListParams::default().labels(&format!("{TEST_LABEL}=true"))),
            )
            .map(|l| {
                l.items
                    .into_iter()
                    .filter_map(|n| n.metadata.name)
                    .collect()
            })
            .unwrap_or_default();
        for (ns, name, labels, _) in self.releases() {
            let ours = labels
                .get("app.kubernetes.io/managed-by")
                .map(String::as_str)
                == Some("navique-ai-core-operator");
            if ours || labelled.contains(&ns) {
                let ctx = navique_ai_core_operator::action::Context::new(self.client.clone(), &ns);
                let _ = self.block(navique_ai_core_operator::action::uninstall::uninstall(
                    &ctx, &name, false,
                ));
            }
        }
        for ns in &labelled {
            let _ = self.block(namespaces.delete(ns, &Default::default()));
        }
        let caps = self.ours("Capability", "capabilities", None);
        let _ = self.block(caps.delete_collection(&Default::default(), &ListParams::default()));
        let events = self.dynamic("events.k8s.io", "v1", "Event", "events", None);
        if let Ok(list) = self.block(events.list(&ListParams::default())) {
            for e in list.items {
                let v = serde_json::to_value(&e).unwrap_or_default();
                if v.pointer("/regarding/kind").and_then(Value::as_str) == Some("Capability") {
                    let ns = e.metadata.namespace.clone().unwrap_or_default();
                    let api = self.dynamic("events.k8s.io", "v1", "Event", "events", Some(&ns));
                    let _ = self.block(api.delete(
                        &e.metadata.name.clone().unwrap_or_default(),
                        &Default::default(),
                    ));
                }
            }
        }
        // CRDs of a capability no controller serves (what our own decisions call Absent).
        let catalog = Catalog::built_in();
        let licensing = navique_ai_core_operator::operator::model::licensing::Licensing::built_in(
            "navique-system",
        );
        if let Ok(snap) = self.block(navique_ai_core_operator::operator::model::gather::gather(
            &self.client,
            &catalog,
            &licensing,
        )) {
            let crds: Api<CustomResourceDefinition> = Api::all(self.client.clone());
            for entry in &catalog.capability {
                let absent = navique_ai_core_operator::operator::decide::provenance::classify(
                    entry, &snap,
                )
                    == navique_ai_core_operator::operator::decide::provenance::Provenance::Absent;
                if !absent {
                    continue;
                }
                let groups: Vec<&str> = entry
                    .crds
                    .iter()
                    .filter_map(|c| c.split_once('.').map(|(_, g)| g))
                    .collect();
                for name in self.crd_names() {
                    if groups.iter().any(|g| {
                        name.split_once('.').map(|(_, cg)| cg) == Some(*g)
                            || name.ends_with(&format!(".acme.{g}"))
                    }) {
                        let _ = self.block(crds.delete(&name, &Default::default()));
                    }
                }
            }
        }
        self.wait_for(
            "the namespaces of earlier runs to be gone",
            Duration::from_secs(120),
            |e| {
                let left: Vec<String> = labelled
                    .iter()
                    .filter(|ns| e.block(namespaces.get_opt(ns)).ok().flatten().is_some())
                    .cloned()
                    .collect();
                left.is_empty().then_some(()).ok_or(format!("{left:?}"))
            },
        );
    }

    pub fn kubectl(&self, args: &[&str]) -> String {
        let out = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args(args)
            .output()
            .expect("kubectl");
        assert!(
            out.status.success(),
            "kubectl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn kubectl_result(&self, args: &[&str], stdin: Option<&str>) -> (bool, String, String) {
        use std::io::Write;
        let mut child = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("kubectl");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.unwrap_or("").as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// The operator's CRDs from `crds/`, as `make install` or OLM would apply them.
    pub fn install_crds(&self) {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("crds");
        // Whoever installs the CRDs owns them, even where a running operator applied them before.
        self.kubectl(&[
            "apply",
            "--server-side",
            "--force-conflicts",
            "-f",
            dir.to_str().unwrap(),
        ]);
        self.kubectl(&[
            "wait",
            "--for=condition=Established",
            "crd",
            "postgresclusters.core.navique.com",
        ]);
    }

    pub fn apply_yaml(&self, yaml: &str) {
        let (ok, _, err) = self.kubectl_result(
            &[
                "apply",
                "--server-side",
                "--field-manager",
                "kubectl",
                "-f",
                "-",
            ],
            Some(yaml),
        );
        assert!(ok, "kubectl apply: {err}\n{yaml}");
    }

    pub fn helm(&self, ns: &str, args: &[&str]) -> Value {
        let script =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/sandbox/tests/helm_client.py");
        let out = Command::new("python3")
            .arg(script)
            .arg(&self.kubeconfig)
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

    /// Release names real Helm lists, across namespaces: `name/namespace`.
    pub fn helm_list_all(&self) -> Vec<String> {
        let v = self.helm("default", &["list-all"]);
        let items = v.get("releases").cloned().unwrap_or(v);
        items
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|r| {
                        format!(
                            "{}/{}",
                            r["name"].as_str().unwrap_or_default(),
                            r["namespace"].as_str().unwrap_or_default()
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    pub fn block<T>(&self, f: impl std::future::Future<Output = T>) -> T {
        self.rt.block_on(f)
    }

    pub fn dynamic(
        &self,
        group: &str,
        version: &str,
        kind: &str,
        plural: &str,
        ns: Option<&str>,
    ) -> Api<DynamicObject> {
        let ar = ApiResource::from_gvk_with_plural(
            &kube::core::GroupVersionKind::gvk(group, version, kind),
            plural,
        );
        match ns {
            Some(ns) => Api::namespaced_with(self.client.clone(), ns, &ar),
            None => Api::all_with(self.client.clone(), &ar),
        }
    }

    pub fn ours(&self, kind: &str, plural: &str, ns: Option<&str>) -> Api<DynamicObject> {
        self.dynamic("core.navique.com", "v1alpha1", kind, plural, ns)
    }

    pub fn get(&self, api: &Api<DynamicObject>, name: &str) -> Option<Value> {
        self.block(api.get_opt(name))
            .expect("get")
            .map(|o| serde_json::to_value(o).unwrap())
    }

    pub fn capability(&self, name: &str) -> Value {
        self.get(&self.ours("Capability", "capabilities", None), name)
            .unwrap_or(Value::Null)
    }

    pub fn postgres(&self, ns: &str, name: &str) -> Option<Value> {
        self.resource("PostgresCluster", ns, name)
    }

    /// `ns` empty: a cluster-scoped kind.
    pub fn resource(&self, kind: &str, ns: &str, name: &str) -> Option<Value> {
        self.get(
            &self.ours(kind, plural(kind), Some(ns).filter(|n| !n.is_empty())),
            name,
        )
    }

    pub fn create_postgres(&self, ns: &str, name: &str, spec: Value) {
        self.create("PostgresCluster", ns, name, spec)
    }

    /// `ns` empty: a cluster-scoped kind. Waits first, as a user's
    /// `kubectl wait --for condition=Established` would, for the kind's CRD,
    /// which an operator started a moment ago may still be installing.
    pub fn create(&self, kind: &str, ns: &str, name: &str, spec: Value) {
        self.wait_crd_established(
            &format!("{}.core.navique.com", plural(kind)),
            Duration::from_secs(60),
        );
        let mut metadata = json!({"name": name});
        if !ns.is_empty() {
            metadata["namespace"] = json!(ns);
        }
        self.apply_yaml(
            &json!({
                "apiVersion": "core.navique.com/v1alpha1",
                "kind": kind,
                "metadata": metadata,
                "spec": spec,
            })
            .to_string(),
        );
    }

    pub fn delete(&self, kind: &str, ns: &str, name: &str) {
        let resource = format!("{}.core.navique.com", plural(kind));
        if ns.is_empty() {
            self.kubectl(&["delete", &resource, name, "--wait=false"]);
        } else {
            self.kubectl(&["delete", &resource, name, "-n", ns, "--wait=false"]);
        }
    }

    pub fn delete_postgres(&self, ns: &str, name: &str) {
        self.kubectl(&[
            "delete",
            "postgresclusters.core.navique.com",
            name,
            "-n",
            ns,
            "--wait=false",
        ]);
    }

    /// The newest revision of each Helm release, `(namespace, name) -> labels`;
    /// on a shared cluster, only the releases that were not there before the
    /// test (other tests and users keep theirs there).
    pub fn releases(
        &self,
    ) -> Vec<(
        String,
        String,
        std::collections::BTreeMap<String, String>,
        std::collections::BTreeMap<String, String>,
    )> {
        let secrets: Api<Secret> = Api::all(self.client.clone());
        let list = self
            .block(secrets.list_metadata(&ListParams::default().labels("owner=helm")))
            .expect("list");
        let mut newest: std::collections::BTreeMap<
            (String, String),
            (
                i64,
                std::collections::BTreeMap<String, String>,
                std::collections::BTreeMap<String, String>,
            ),
        > = Default::default();
        for s in list.items {
            let labels = s.metadata.labels.unwrap_or_default();
            let v: i64 = labels
                .get("version")
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            let key = (
                s.metadata.namespace.unwrap_or_default(),
                labels.get("name").cloned().unwrap_or_default(),
            );
            if newest.get(&key).is_none_or(|(n, _, _)| *n < v) {
                newest.insert(key, (v, labels, s.metadata.annotations.unwrap_or_default()));
            }
        }
        if let Some((_, before)) = &self.before {
            newest.retain(|key, _| !before.contains(key));
        }
        newest
            .into_iter()
            .map(|((ns, n), (_, l, a))| (ns, n, l, a))
            .collect()
    }

    pub fn release(
        &self,
        ns: &str,
        name: &str,
    ) -> Option<std::collections::BTreeMap<String, String>> {
        self.releases()
            .into_iter()
            .find(|(n, r, _, _)| n == ns && r == name)
            .map(|(_, _, l, _)| l)
    }

    /// Events on an object (by name), as `reason: note`.
    pub fn events(&self, name: &str) -> Vec<String> {
        let api = self.dynamic("events.k8s.io", "v1", "Event", "events", None);
        let list = self
            .block(api.list(&ListParams::default()))
            .expect("events");
        list.items
            .into_iter()
            .map(|e| serde_json::to_value(e).unwrap())
            .filter(|e| e.pointer("/regarding/name").and_then(Value::as_str) == Some(name))
            .map(|e| {
                format!(
                    "{}: {}",
                    e["reason"].as_str().unwrap_or_default(),
                    e["note"].as_str().unwrap_or_default()
                )
            })
            .collect()
    }

    /// Plays CloudNativePG's part: every Cluster in `ns` reports Ready.
    pub fn cnpg_reports_ready(&self, ns: &str) {
        let api = self.dynamic("postgresql.cnpg.io", "v1", "Cluster", "clusters", Some(ns));
        let Ok(list) = self.block(api.list(&ListParams::default())) else {
            return;
        };
        for c in list.items {
            let ready = c
                .data
                .pointer("/status/conditions")
                .and_then(Value::as_array)
                .is_some_and(|cs| {
                    cs.iter()
                        .any(|x| x["type"] == "Ready" && x["status"] == "True")
                });
            if ready {
                continue;
            }
            let status = json!({"apiVersion": "postgresql.cnpg.io/v1", "kind": "Cluster", "status": {
                "phase": "Cluster in healthy state",
                "conditions": [{"type": "Ready", "status": "True", "reason": "ClusterIsReady",
                                "message": "Cluster is Ready", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}});
            let name = c.metadata.name.clone().unwrap_or_default();
            let _ = self.block(api.patch_status(
                &name,
                &PatchParams::apply("cloudnative-pg-played-by-test").force(),
                &Patch::Apply(&status),
            ));
        }
    }

    /// Plays the ClickHouse operators' part in `ns`: every KeeperCluster and
    /// ClickHouseCluster (ClickHouse Inc.) reports Ready=True, every
    /// ClickHouseInstallation and ClickHouseKeeperInstallation (Altinity)
    /// reports `status.status: Completed`, as each operator writes them.
    pub fn clickhouse_reports_ready(&self, ns: &str) {
        let conditions = json!({"conditions": [{"type": "Ready", "status": "True", "reason": "ClusterReady",
            "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]});
        let completed = json!({"status": "Completed"});
        for (group, kind, plural, status) in [
            (
                "clickhouse.com",
                "KeeperCluster",
                "keeperclusters",
                &conditions,
            ),
            (
                "clickhouse.com",
                "ClickHouseCluster",
                "clickhouseclusters",
                &conditions,
            ),
            (
                "clickhouse.altinity.com",
                "ClickHouseInstallation",
                "clickhouseinstallations",
                &completed,
            ),
            (
                "clickhouse-keeper.altinity.com",
                "ClickHouseKeeperInstallation",
                "clickhousekeeperinstallations",
                &completed,
            ),
        ] {
            let version = if group == "clickhouse.com" {
                "v1alpha1"
            } else {
                "v1"
            };
            let api = self.dynamic(group, version, kind, plural, Some(ns));
            let Ok(list) = self.block(api.list(&ListParams::default())) else {
                continue;
            };
            for o in list.items {
                if o.data.get("status").is_some_and(|s| is_subset(status, s)) {
                    continue;
                }
                let body = json!({"apiVersion": format!("{group}/{version}"), "kind": kind, "status": status});
                let _ = self.block(api.patch_status(
                    &o.metadata.name.clone().unwrap_or_default(),
                    &PatchParams::apply("clickhouse-operator-played-by-test").force(),
                    &Patch::Apply(&body),
                ));
            }
        }
    }

    /// Plays the LiteLLM operator's part in `ns`: every LiteLLMProxy
    /// reports Ready=True.
    pub fn litellm_reports_ready(&self, ns: &str) {
        let api = self.dynamic(
            "litellm.home-operations.com",
            "v1alpha1",
            "LiteLLMProxy",
            "litellmproxies",
            Some(ns),
        );
        let Ok(list) = self.block(api.list(&ListParams::default())) else {
            return;
        };
        let status = json!({"conditions": [{"type": "Ready", "status": "True", "reason": "Available",
            "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]});
        for o in list.items {
            if o.data.get("status").is_some_and(|s| is_subset(&status, s)) {
                continue;
            }
            let body = json!({"apiVersion": "litellm.home-operations.com/v1alpha1", "kind": "LiteLLMProxy", "status": status});
            let _ = self.block(api.patch_status(
                &o.metadata.name.clone().unwrap_or_default(),
                &PatchParams::apply("litellm-operator-played-by-test").force(),
                &Patch::Apply(&body),
            ));
        }
    }

    /// Plays external-secrets' part: every ClusterSecretStore reports
    /// Ready=True; every ExternalSecret in `ns` writes its target Secret
    /// (each key's value is `vault:<key>/<property>`) and reports Ready=True.
    pub fn external_secrets_report_ready(&self, ns: &str) {
        let ready = json!({"conditions": [{"type": "Ready", "status": "True", "reason": "Valid",
            "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]});
        let stores = self.dynamic(
            "external-secrets.io",
            "v1",
            "ClusterSecretStore",
            "clustersecretstores",
            None,
        );
        let externals = self.dynamic(
            "external-secrets.io",
            "v1",
            "ExternalSecret",
            "externalsecrets",
            Some(ns),
        );
        for (api, kind) in [
            (&stores, "ClusterSecretStore"),
            (&externals, "ExternalSecret"),
        ] {
            let Ok(list) = self.block(api.list(&ListParams::default())) else {
                continue;
            };
            for o in list.items {
                if kind == "ExternalSecret" {
                    let mut data = serde_json::Map::new();
                    for d in o
                        .data
                        .pointer("/spec/data")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        let value = format!(
                            "vault:{}/{}",
                            d.pointer("/remoteRef/key")
                                .and_then(Value::as_str)
                                .unwrap_or_default(),
                            d.pointer("/remoteRef/property")
                                .and_then(Value::as_str)
                                .unwrap_or_default()
                        );
                        data.insert(
                            d["secretKey"].as_str().unwrap_or_default().into(),
                            json!(value),
                        );
                    }
                    let target = o
                        .data
                        .pointer("/spec/target/name")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    self.apply_yaml(
                        &json!({"apiVersion": "v1", "kind": "Secret",
                        "metadata": {"name": target, "namespace": ns}, "stringData": data})
                        .to_string(),
                    );
                }
                if o.data.get("status").is_some_and(|s| is_subset(&ready, s)) {
                    continue;
                }
                let body =
                    json!({"apiVersion": "external-secrets.io/v1", "kind": kind, "status": ready});
                let _ = self.block(api.patch_status(
                    &o.metadata.name.clone().unwrap_or_default(),
                    &PatchParams::apply("external-secrets-played-by-test").force(),
                    &Patch::Apply(&body),
                ));
            }
        }
    }

    /// Waits for the resource's phase, playing every upstream operator in `ns`.
    /// Plays every upstream operator for `ns` and waits until each of `all`
    /// ((kind, namespace, name)) has phase Ready, naming those that are not.
    pub fn wait_all_ready(
        &self,
        what: &str,
        ns: &str,
        all: &[(&str, &str, &str)],
        timeout: Duration,
    ) {
        self.wait_for(what, timeout, |e| {
            e.cnpg_reports_ready(ns);
            e.clickhouse_reports_ready(ns);
            e.litellm_reports_ready(ns);
            e.external_secrets_report_ready(ns);
            let not: Vec<String> = all
                .iter()
                .filter_map(|(k, n, name)| {
                    let r = e.resource(k, n, name).unwrap_or_default();
                    (r["status"]["phase"] != "Ready").then(|| {
                        let message = condition(&r, "Ready")
                            .map(|c| c["message"].clone())
                            .unwrap_or_default();
                        format!("{k} {name}: {message}")
                    })
                })
                .collect();
            not.is_empty().then_some(()).ok_or(not.join("; "))
        });
    }

    pub fn wait_phase(&self, kind: &str, ns: &str, name: &str, phase: &str) -> Value {
        self.wait_for(
            &format!("{kind} {ns}/{name} {phase}"),
            Duration::from_secs(90),
            |e| {
                e.cnpg_reports_ready(ns);
                e.clickhouse_reports_ready(ns);
                e.litellm_reports_ready(ns);
                e.external_secrets_report_ready(ns);
                let r = e.resource(kind, ns, name).ok_or("gone")?;
                if r.pointer("/status/phase") == Some(&json!(phase)) {
                    return Ok(r);
                }
                // What the capabilities it waits for say of themselves.
                let capabilities: Vec<String> = r
                    .pointer("/status/capabilities")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|c| c["name"].as_str())
                    .map(|c| format!("{c}: {}", e.capability(c)["status"]["conditions"]))
                    .collect();
                Err(format!(
                    "{}; {}",
                    r.get("status").map(Value::to_string).unwrap_or_default(),
                    capabilities.join("; ")
                ))
            },
        )
    }

    /// A Secret's value, decoded.
    pub fn secret_value(&self, ns: &str, name: &str, key: &str) -> Option<String> {
        let api: Api<Secret> = Api::namespaced(self.client.clone(), ns);
        let s = self.block(api.get_opt(name)).expect("get")?;
        let v = s.data?.get(key)?.0.clone();
        Some(String::from_utf8(v).expect("utf-8"))
    }

    /// Waits until every CRD the operator applies on start is Established
    /// (a test that creates its resources at once races the start-up).
    pub fn wait_operator_crds(&self, timeout: Duration) {
        for crd in navique_ai_core_operator::operator::api::crds::all() {
            self.wait_crd_established(&crd.metadata.name.clone().unwrap_or_default(), timeout);
        }
    }

    pub fn wait_crd_established(&self, name: &str, timeout: Duration) {
        let crds: Api<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> =
            Api::all(self.client.clone());
        self.wait_for(&format!("CRD {name} Established"), timeout, |e| {
            let found = e.block(crds.get_opt(name)).map_err(|err| err.to_string())?;
            let established = found
                .and_then(|c| c.status)
                .and_then(|s| s.conditions)
                .unwrap_or_default()
                .iter()
                .any(|c| c.type_ == "Established" && c.status == "True");
            established
                .then_some(())
                .ok_or_else(|| "not yet".to_string())
        });
    }

    /// Waits for `cond`, failing with `what` and the last observation.
    pub fn wait_for<T>(
        &self,
        what: &str,
        timeout: Duration,
        cond: impl FnMut(&Env) -> Result<T, String>,
    ) -> T {
        self.poll(timeout, cond)
            .unwrap_or_else(|last| panic!("timed out after {timeout:?} waiting for {what}: {last}"))
    }

    /// Tries `cond` every 100 ms until it holds or `timeout` has passed;
    /// then its last error.
    fn poll<T>(
        &self,
        timeout: Duration,
        mut cond: impl FnMut(&Env) -> Result<T, String>,
    ) -> Result<T, String> {
        let start = Instant::now();
        let mut last = String::new();
        while start.elapsed() < timeout {
            match cond(self) {
                Ok(v) => return Ok(v),
                Err(e) => last = e,
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Err(last)
    }

    pub fn phase_of(&self, kind: &str, ns: &str, name: &str) -> String {
        self.resource(kind, ns, name)
            .and_then(|r| {
                r.pointer("/status/phase")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .unwrap_or_default()
    }

    pub fn phase(&self, ns: &str, name: &str) -> String {
        self.postgres(ns, name)
            .and_then(|p| {
                p.pointer("/status/phase")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .unwrap_or_default()
    }

    pub fn wait_postgres_ready(&self, ns: &str, name: &str) {
        self.wait_for(
            &format!("PostgresCluster {ns}/{name} Ready"),
            Duration::from_secs(90),
            |e| {
                e.cnpg_reports_ready(ns);
                let p = e.postgres(ns, name).ok_or("gone")?;
                if p.pointer("/status/phase") == Some(&json!("Ready")) {
                    Ok(())
                } else {
                    Err(p.get("status").map(Value::to_string).unwrap_or_default())
                }
            },
        )
    }

    pub fn wait_gone(&self, what: &str, mut exists: impl FnMut(&Env) -> bool) {
        self.wait_for(what, Duration::from_secs(90), |e| {
            if exists(e) {
                Err("still there".into())
            } else {
                Ok(())
            }
        })
    }

    /// The embedded server's count of the requests it served, by client.
    pub fn request_counts(&self) -> Option<Vec<navique_sandbox::tally::RequestCount>> {
        self.sandbox.as_ref().map(|s| s.request_counts())
    }

    pub fn write_requests(&self) -> Option<u64> {
        self.sandbox.as_ref().map(|s| s.write_requests())
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        if self.is_real() {
            self.clean_up_real_cluster();
        }
    }
}

/// A `navique-operator` process that dies with its test, failed or not. A
/// test that fails before its own `kill` would otherwise leave the process
/// reconciling a shared cluster under every later test: two operators then
/// fight over the same releases (a release "upgraded once" at revision 10).
pub struct OperatorChild(pub std::process::Child);

impl std::ops::Deref for OperatorChild {
    type Target = std::process::Child;
    fn deref(&self) -> &std::process::Child {
        &self.0
    }
}

impl std::ops::DerefMut for OperatorChild {
    fn deref_mut(&mut self) -> &mut std::process::Child {
        &mut self.0
    }
}

impl Drop for OperatorChild {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// An operator running in this test process, on its own runtime.
pub struct Operator {
    stop: tokio::sync::watch::Sender<bool>,
    thread: Option<
        std::thread::JoinHandle<
            Result<(), navique_ai_core_operator::operator::runtime::process::RunError>,
        >,
    >,
    pub metrics: Arc<Metrics>,
}

pub fn charts_dirs() -> Vec<PathBuf> {
    let s = shared().expect("../shared/charts");
    vec![s.clone(), s.join("upgrade"), s.join("extra")]
}

pub fn options(env: &Env) -> RunOptions {
    let mut o = RunOptions::new(PathBuf::new());
    o.charts_dirs = charts_dirs();
    o.kubeconfig = Some(env.kubeconfig.clone());
    o.leader_elect = false;
    o.poll = Duration::from_millis(200);
    o
}

impl Operator {
    pub fn start(env: &Env) -> Operator {
        Operator::start_with(options(env))
    }

    pub fn start_with(mut opts: RunOptions) -> Operator {
        // NAVIQUE_LOG=debug (or any filter) shows the operator's logs.
        if std::env::var_os("NAVIQUE_LOG").is_some() {
            navique_ai_core_operator::cli::operator::init_logs(false);
        }
        let metrics = Metrics::new();
        opts.metrics = Some(metrics.clone());
        let (stop, stop_rx) = tokio::sync::watch::channel(false);
        let thread = std::thread::Builder::new()
            .name("operator".into())
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .enable_all()
                    .build()
                    .unwrap();
                rt.block_on(process::run(opts, stop_rx))
            })
            .unwrap();
        Operator {
            stop,
            thread: Some(thread),
            metrics,
        }
    }

    /// A normal stop: the reconciles in flight finish first.
    pub fn stop(mut self) {
        let _ = self.stop.send(true);
        if let Some(t) = self.thread.take() {
            t.join().expect("operator thread").expect("operator run");
        }
    }
}

impl Drop for Operator {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The built-in catalog with one pin replaced (another version or digest).
pub fn catalog_with_pin(capability: &str, version: &str, sha256: &str) -> Catalog {
    let mut c = Catalog::built_in();
    for e in c.capability.iter_mut().filter(|e| e.name == capability) {
        e.pin.version = version.into();
        e.pin.sha256 = sha256.into();
    }
    c
}

pub fn status_str(v: &Value, pointer: &str) -> String {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

pub fn condition<'a>(v: &'a Value, type_: &str) -> Option<&'a Value> {
    v.pointer("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|cs| cs.iter().find(|c| c["type"] == type_))
}

pub mod licenses {
    use super::Env;
    use base64::Engine;
    use ed25519_dalek::pkcs8::EncodePublicKey;
    use ed25519_dalek::{Signer, SigningKey};
    use serde_json::{json, Value};

    pub fn key() -> SigningKey {
        SigningKey::from_bytes(&rand::random::<[u8; 32]>())
    }

    pub fn public_pem(key: &SigningKey, dir: &std::path::Path) -> std::path::PathBuf {
        let path = dir.join("license.pub");
        let pem = key
            .verifying_key()
            .to_public_key_pem(Default::default())
            .unwrap();
        std::fs::write(&path, pem).unwrap();
        path
    }

    /// Writes the license Secret; `tamper` changes the payload after signing.
    pub fn write(env: &Env, ns: &str, key: &SigningKey, payload: &Value, tamper: Option<&Value>) {
        let bytes = serde_json::to_vec(payload).unwrap();
        let sig = base64::engine::general_purpose::STANDARD.encode(key.sign(&bytes).to_bytes());
        let signed = match tamper {
            Some(t) => serde_json::to_vec(t).unwrap(),
            None => bytes,
        };
        let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
        env.apply_yaml(
            &json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "navique-license", "namespace": ns},
            "data": {"license.json": b64(&signed), "license.sig": b64(sig.as_bytes())}})
            .to_string(),
        );
    }
}

/// Options for an operator that checks licenses with a key of the test's,
/// and the license Secret written in its namespace: `features` included,
/// no limits, valid for a year.
pub fn licensed_options(env: &Env, features: &[&str]) -> RunOptions {
    let key = licenses::key();
    let mut opts = options(env);
    opts.namespace = env.namespace("navique-lic");
    opts.license_key = Some(key.verifying_key());
    let expires = chrono::Utc::now() + chrono::Duration::days(365);
    let payload = json!({"licensee": "tests", "tier": "enterprise", "expires": expires.to_rfc3339(), "features": features});
    licenses::write(env, &opts.namespace, &key, &payload, None);
    opts
}
