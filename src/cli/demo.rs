//! `navique-operator demo`: the operator's walk-through on the embedded API
//! server. Someone else's cert-manager is adopted, not duplicated; a managed
//! PostgresCluster makes CloudNativePG install, become Ready and the CNPG
//! Cluster appear; deleting it uninstalls CloudNativePG (ours) and keeps the
//! adopted cert-manager. Upstream controllers do not run on the embedded
//! server: the demo says where it plays CloudNativePG's part.

use super::args::Args;
use crate::operator::model::catalog::ChartStore;
use crate::operator::runtime::process::{self, RunOptions};
use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams};
use kube::discovery::ApiResource;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Someone else's cert-manager: the older chart of `../shared/charts/upgrade`.
const OLDER_CERT_MANAGER: (&str, &str, &str) = (
    "cert-manager",
    "v1.19.2",
    "87e2dafa946bd05c56be897b2fe2e171f2bbfad96c9d48409d4b1188d240af6f",
);

/// `--charts-dir DIR` (repeatable), else [`default_charts_dirs`].
pub fn charts_dirs(a: &Args) -> Vec<PathBuf> {
    let given = a.all(&["--charts-dir"]);
    if given.is_empty() {
        default_charts_dirs()
    } else {
        given.into_iter().map(PathBuf::from).collect()
    }
}

pub fn default_charts_dirs() -> Vec<PathBuf> {
    let mut roots = vec![PathBuf::from("../shared/charts")];
    roots.push(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/charts"));
    let root = roots
        .into_iter()
        .find(|r| r.join("cert-manager-v1.21.1.tgz").exists())
        .unwrap_or_else(|| PathBuf::from("../shared/charts"));
    vec![root.clone(), root.join("upgrade"), root.join("extra")]
}

fn ar(group: &str, version: &str, kind: &str, plural: &str) -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &kube::core::GroupVersionKind::gvk(group, version, kind),
        plural,
    )
}

struct Live {
    client: kube::Client,
    start: Instant,
    seen_events: std::collections::HashSet<String>,
    last: BTreeMap<String, String>,
}

impl Live {
    fn say(&self, what: &str) {
        println!("   +{:>5.1}s  {what}", self.start.elapsed().as_secs_f64());
    }

    /// Prints what changed since the last look: capabilities, the
    /// PostgresCluster, the CNPG Cluster, Events. Plays CloudNativePG.
    async fn look(&mut self, ns: &str) {
        let caps: Api<DynamicObject> = Api::all_with(
            self.client.clone(),
            &ar("core.navique.com", "v1alpha1", "Capability", "capabilities"),
        );
        if let Ok(list) = caps.list(&ListParams::default()).await {
            for c in list.items {
                let s = c.data.get("status").cloned().unwrap_or_default();
                if s.get("provenance").is_none() {
                    continue;
                }
                let name = c.metadata.name.clone().unwrap_or_default();
                let mut line = format!(
                    "{}{}",
                    s["provenance"].as_str().unwrap_or_default(),
                    if s["ready"] == true { ", ready" } else { "" }
                );
                if let Some(r) = s.get("release").filter(|r| r.is_object()) {
                    line.push_str(&format!(
                        " (release {} in {})",
                        r["name"].as_str().unwrap_or_default(),
                        r["namespace"].as_str().unwrap_or_default()
                    ));
                }
                if s["needed"] == true {
                    line.push_str(&format!(", needed by {}", s["consumerCount"]));
                }
                self.changed(&format!("Capability {name}"), line);
            }
        }
        let pgs: Api<DynamicObject> = Api::namespaced_with(
            self.client.clone(),
            ns,
            &ar(
                "core.navique.com",
                "v1alpha1",
                "PostgresCluster",
                "postgresclusters",
            ),
        );
        if let Ok(list) = pgs.list(&ListParams::default()).await {
            for p in list.items {
                let Some(s) = p.data.get("status").cloned() else {
                    continue;
                };
                let ready = s["conditions"]
                    .as_array()
                    .and_then(|cs| cs.iter().find(|c| c["type"] == "Ready"))
                    .cloned()
                    .unwrap_or_default();
                let line = format!(
                    "{} ({})",
                    s["phase"].as_str().unwrap_or("-"),
                    ready["message"].as_str().unwrap_or_default()
                );
                self.changed(
                    &format!(
                        "PostgresCluster {ns}/{}",
                        p.metadata.name.clone().unwrap_or_default()
                    ),
                    line,
                );
            }
        }
        let clusters: Api<DynamicObject> = Api::namespaced_with(
            self.client.clone(),
            ns,
            &ar("postgresql.cnpg.io", "v1", "Cluster", "clusters"),
        );
        if let Ok(list) = clusters.list(&ListParams::default()).await {
            for c in list.items {
                let name = c.metadata.name.clone().unwrap_or_default();
                let ready = c
                    .data
                    .pointer("/status/conditions")
                    .and_then(Value::as_array)
                    .is_some_and(|cs| {
                        cs.iter()
                            .any(|x| x["type"] == "Ready" && x["status"] == "True")
                    });
                self.changed(
                    &format!("CNPG Cluster {ns}/{name}"),
                    if ready {
                        "Ready".into()
                    } else {
                        "created by the operator".into()
                    },
                );
                if !ready && c.metadata.deletion_timestamp.is_none() {
                    let status = json!({"apiVersion": "postgresql.cnpg.io/v1", "kind": "Cluster", "status": {"phase": "Cluster in healthy state",
                        "conditions": [{"type": "Ready", "status": "True", "reason": "ClusterIsReady", "message": "Cluster is Ready", "lastTransitionTime": crate::operator::decide::conditions::now()}]}});
                    if clusters
                        .patch_status(
                            &name,
                            &PatchParams::apply("demo-plays-cloudnative-pg").force(),
                            &Patch::Apply(&status),
                        )
                        .await
                        .is_ok()
                    {
                        self.say(&format!("[simulated] CloudNativePG reports Cluster {ns}/{name} Ready (its controller does not run on the embedded server)"));
                    }
                }
            }
        }
        let events: Api<DynamicObject> = Api::all_with(
            self.client.clone(),
            &ar("events.k8s.io", "v1", "Event", "events"),
        );
        if let Ok(list) = events.list(&ListParams::default()).await {
            let mut items: Vec<Value> = list
                .items
                .into_iter()
                .map(|e| serde_json::to_value(e).unwrap_or_default())
                .collect();
            items.sort_by_key(|e| e["eventTime"].as_str().unwrap_or_default().to_string());
            for e in items {
                let key = format!("{}{}", e["metadata"]["name"], e["note"]);
                if self.seen_events.insert(key) {
                    self.say(&format!(
                        "Event {} on {} {}: {}",
                        e["reason"].as_str().unwrap_or_default(),
                        e["regarding"]["kind"].as_str().unwrap_or_default(),
                        e["regarding"]["name"].as_str().unwrap_or_default(),
                        e["note"].as_str().unwrap_or_default()
                    ));
                }
            }
        }
    }

    fn changed(&mut self, what: &str, now: String) {
        if self.last.get(what) != Some(&now) {
            self.say(&format!("{what}: {now}"));
            self.last.insert(what.to_string(), now);
        }
    }

    async fn until(
        &mut self,
        ns: &str,
        timeout: Duration,
        mut done: impl FnMut(&BTreeMap<String, String>) -> bool,
    ) -> Result<(), String> {
        let deadline = Instant::now() + timeout;
        loop {
            self.look(ns).await;
            if done(&self.last) {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(format!("the demo timed out; last seen: {:#?}", self.last));
            }
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
    }
}

/// Day 2: what the operator owns heals. Someone deletes the CloudNativePG
/// Deployment of our release; the watch sees it and puts it back.
async fn heal_a_deleted_deployment(
    client: &kube::Client,
    live: &mut Live,
    ns: &str,
) -> Result<(), String> {
    use k8s_openapi::api::apps::v1::Deployment;
    println!("5. Day 2: someone deletes the CloudNativePG controller by mistake:");
    println!("   $ kubectl delete deployment cloudnative-pg -n cnpg-system");
    let deployments: kube::Api<Deployment> = kube::Api::namespaced(client.clone(), "cnpg-system");
    let before = deployments
        .get("cloudnative-pg")
        .await
        .map_err(|e| e.to_string())?
        .metadata
        .uid;
    let start = Instant::now();
    deployments
        .delete("cloudnative-pg", &Default::default())
        .await
        .map_err(|e| e.to_string())?;
    loop {
        let now = deployments
            .get_opt("cloudnative-pg")
            .await
            .map_err(|e| e.to_string())?;
        if now.is_some_and(|d| d.metadata.uid != before) {
            break;
        }
        if start.elapsed() > Duration::from_secs(30) {
            return Err("the deleted Deployment did not come back within 30 s".into());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    println!(
        "   +{:>5.1}s  back, as our release applied it (Events DriftDetected, DriftCorrected on",
        start.elapsed().as_secs_f64()
    );
    println!("            the Capability; no new Helm revision). Set `spec.drift: warn` to only be told.");
    live.start = start;
    for _ in 0..8 {
        live.look(ns).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    println!();
    Ok(())
}

pub(super) async fn helm_list(client: &kube::Client) -> Result<(), String> {
    let storage = crate::release::storage::Storage::new(client.clone(), "default");
    let releases = storage.query(true, "").await.map_err(|e| e.to_string())?;
    let mut newest: BTreeMap<(String, String), crate::release::Release> = BTreeMap::new();
    for r in releases {
        let k = (r.namespace.clone(), r.name.clone());
        if newest.get(&k).is_none_or(|o| o.version < r.version) {
            newest.insert(k, r);
        }
    }
    println!("   $ helm list -A");
    println!(
        "   {:<22} {:<15} {:<9} {:<9} {:<24} MANAGED BY",
        "NAME", "NAMESPACE", "REVISION", "STATUS", "CHART"
    );
    for r in newest.values() {
        let by = r
            .labels
            .get("app.kubernetes.io/managed-by")
            .map(String::as_str)
            .unwrap_or("someone else");
        println!(
            "   {:<22} {:<15} {:<9} {:<9} {:<24} {by}",
            r.name,
            r.namespace,
            r.version,
            r.info.status.as_str(),
            format!("{}-{}", r.chart_name(), r.chart_version())
        );
    }
    Ok(())
}

pub(super) async fn capabilities_table(client: &kube::Client) -> Result<(), String> {
    let caps: Api<DynamicObject> = Api::all_with(
        client.clone(),
        &ar("core.navique.com", "v1alpha1", "Capability", "capabilities"),
    );
    let list = caps
        .list(&ListParams::default())
        .await
        .map_err(|e| e.to_string())?;
    println!("   $ kubectl get capabilities");
    println!(
        "   {:<30} {:<11} {:<8} {:<10} {:<6} CONSUMERS",
        "NAME", "PROVENANCE", "BUNDLED", "INSTALLED", "READY"
    );
    for c in list.items {
        let s = c.data.get("status").cloned().unwrap_or_default();
        println!(
            "   {:<30} {:<11} {:<8} {:<10} {:<6} {}",
            c.metadata.name.clone().unwrap_or_default(),
            s["provenance"].as_str().unwrap_or_default(),
            s["bundledVersion"].as_str().unwrap_or_default(),
            s["installedVersion"].as_str().unwrap_or_default(),
            s["ready"].as_bool().unwrap_or(false),
            s["consumerCount"]
        );
    }
    Ok(())
}

pub fn run(a: &Args) -> Result<(), String> {
    let keep = a.flag("--keep");
    let dirs = charts_dirs(a);
    let store = ChartStore::with_dirs(dirs.clone());
    let catalog = crate::operator::model::catalog::Catalog::built_in();
    for name in ["cert-manager", "cloudnative-pg"] {
        store
            .load(&catalog.capability(name).expect("catalog").pin)
            .map_err(|e| format!("{e}\n(the demo reads the bundled charts from ../shared/charts; give another place with --charts-dir)"))?;
    }
    let sandbox = navique_sandbox::Sandbox::start(navique_sandbox::Options {
        ready_delay: Duration::from_millis(300),
        ..Default::default()
    })
    .map_err(|e| format!("starting the embedded API server: {e}"))?;
    println!("Navique AI Core Operator: installs an AI platform's building blocks from pinned Helm charts,");
    println!("without helm, and never reinstalls what you installed or uninstalls what it does not own.\n");
    println!(
        "An embedded Kubernetes API server is running at {} (in memory; Deployments report",
        sandbox.url()
    );
    println!("Ready after 0.3 s, as their controllers would).\n");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let kubeconfig = sandbox.kubeconfig_path().to_path_buf();
    let result = if a.flag("--platform") {
        println!("The whole platform, as one team would ask for it.\n");
        rt.block_on(super::demo_platform::walk_through(kubeconfig.clone(), dirs))
    } else {
        rt.block_on(walk_through(kubeconfig.clone(), dirs, store, keep))
    };
    if keep && result.is_ok() {
        let k = kubeconfig.display();
        println!("\nThe server keeps running, and kubectl sees it as a cluster (kubeconfig {k}):");
        println!("   $ kubectl --kubeconfig {k} get capabilities");
        if a.flag("--platform") {
            println!("   $ kubectl --kubeconfig {k} describe capability cloudnative-pg   # with its Events");
        } else {
            println!("   $ kubectl --kubeconfig {k} describe postgrescluster -n team-a app-db   # with its Events");
        }
        println!("   $ kubectl --kubeconfig {k} get events -A");
        println!("   $ kubectl --kubeconfig {k} get deployments -A -o wide");
        println!("Press Ctrl-C to stop.");
        let _ = rt.block_on(tokio::signal::ctrl_c());
    }
    sandbox.stop();
    result
}

async fn walk_through(
    kubeconfig: PathBuf,
    dirs: Vec<PathBuf>,
    store: ChartStore,
    keep: bool,
) -> Result<(), String> {
    let client = crate::apply::client::connect(Some(&kubeconfig), None)
        .await
        .map_err(|e| e.to_string())?;
    let catalog = crate::operator::model::catalog::Catalog::built_in();

    println!("1. Someone else already runs cert-manager {}, an older version than the operator bundles, as", OLDER_CERT_MANAGER.1);
    println!("   release platform-cert-manager in namespace platform-tools (installed here the way `helm install`");
    println!("   would, without the operator's marks).");
    crate::action::ensure_namespace(&client, "platform-tools")
        .await
        .map_err(|e| e.to_string())?;
    let older = crate::operator::model::catalog::Pin {
        chart: OLDER_CERT_MANAGER.0.into(),
        version: OLDER_CERT_MANAGER.1.into(),
        oci: String::new(),
        digest: String::new(),
        sha256: OLDER_CERT_MANAGER.2.into(),
    };
    let cm = store.load(&older).map_err(|e| e.to_string())?;
    {
        let mut ctx = crate::action::Context::new(client.clone(), "platform-tools");
        ctx.wait = true;
        ctx.field_manager = "helm".into();
        let mut values = crate::value::Map::new();
        values.insert(
            "crds".into(),
            crate::value::Value::map(
                [("enabled".to_string(), crate::value::Value::Bool(true))].into(),
            ),
        );
        let r = crate::action::install::install(&ctx, "platform-cert-manager", &cm.chart, &values)
            .await
            .map_err(|e| e.to_string())?;
        println!(
            "   release {} revision {} {}\n",
            r.name,
            r.version,
            r.info.status.as_str()
        );
    }

    println!(
        "2. The operator starts beside it (in this process; `navique-operator run` in a cluster)."
    );
    println!("   Before it acts, `navique-operator plan` says what it finds and would do:");
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut opts = RunOptions::new(PathBuf::new());
    let operator_namespace = opts.namespace.clone();
    opts.charts_dirs = dirs;
    opts.kubeconfig = Some(kubeconfig.clone());
    opts.leader_elect = false;
    opts.poll = Duration::from_millis(300);
    let operator = tokio::spawn(process::run(opts, stop_rx));
    let pg_api: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        "team-a",
        &ar(
            "core.navique.com",
            "v1alpha1",
            "PostgresCluster",
            "postgresclusters",
        ),
    );
    let ns = "team-a";
    crate::action::ensure_namespace(&client, ns)
        .await
        .map_err(|e| e.to_string())?;
    // The operator applies its CRDs on start.
    let mut tries = 0;
    while pg_api.list(&ListParams::default()).await.is_err() && tries < 100 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        tries += 1;
    }
    let pg = json!({"apiVersion": "core.navique.com/v1alpha1", "kind": "PostgresCluster", "metadata": {"name": "app-db", "namespace": ns},
        "spec": {"mode": "managed", "managed": {"instances": 1, "storage": {"size": "1Gi"}}}});
    let snap_plan = {
        // What plan shows once the database is asked for (read-only: computed from a snapshot with it).
        let licensing = crate::operator::model::licensing::Licensing::built_in(&operator_namespace);
        let mut snap = crate::operator::model::gather::gather(&client, &catalog, &licensing)
            .await
            .map_err(|e| e.to_string())?;
        let mut with_pg = pg.clone();
        with_pg["metadata"]["uid"] = json!("(not created yet)");
        snap.resources
            .push(crate::operator::model::snapshot::resource_from(
                crate::operator::api::Kind::PostgresCluster,
                &with_pg,
            ));
        crate::operator::decide::report::build(&catalog, &snap)
    };
    for line in snap_plan.to_text().lines() {
        println!("   {line}");
    }
    println!();

    println!("3. A team asks for a managed PostgreSQL database:");
    println!("   $ kubectl apply -f postgrescluster.yaml   # team-a/app-db, mode: managed");
    pg_api
        .patch("app-db", &PatchParams::apply("kubectl"), &Patch::Apply(&pg))
        .await
        .map_err(|e| e.to_string())?;
    let mut live = Live {
        client: client.clone(),
        start: Instant::now(),
        seen_events: Default::default(),
        last: BTreeMap::new(),
    };
    live.until(ns, Duration::from_secs(120), |s| {
        s.get("PostgresCluster team-a/app-db")
            .is_some_and(|p| p.starts_with("Ready"))
    })
    .await?;
    println!();
    println!("4. What the cluster holds now:");
    helm_list(&client).await?;
    capabilities_table(&client).await?;
    println!();
    heal_a_deleted_deployment(&client, &mut live, ns).await?;

    println!("6. The team deletes the database:");
    println!("   $ kubectl delete postgrescluster app-db -n team-a");
    pg_api
        .delete("app-db", &Default::default())
        .await
        .map_err(|e| e.to_string())?;
    live.start = Instant::now();
    live.until(ns, Duration::from_secs(120), |s| {
        s.get("Capability cloudnative-pg")
            .is_some_and(|c| c.starts_with("absent"))
    })
    .await?;
    println!();
    println!(
        "7. CloudNativePG was ours and is needed by nothing: uninstalled. cert-manager is someone"
    );
    println!("   else's: adopted, never upgraded to the bundled version, never uninstalled:");
    helm_list(&client).await?;
    capabilities_table(&client).await?;
    if keep {
        println!();
        println!("8. (--keep) The team asks for its database again; it stays, with the operator, for you to look at:");
        println!("   $ kubectl apply -f postgrescluster.yaml");
        pg_api
            .patch("app-db", &PatchParams::apply("kubectl"), &Patch::Apply(&pg))
            .await
            .map_err(|e| e.to_string())?;
        live.start = Instant::now();
        // What was seen of the deleted one is no news about this one.
        live.last.remove("PostgresCluster team-a/app-db");
        live.until(ns, Duration::from_secs(120), |s| {
            s.get("PostgresCluster team-a/app-db")
                .is_some_and(|p| p.starts_with("Ready"))
        })
        .await?;
        // The operator task runs on as long as the runtime does (until Ctrl-C):
        // its stop channel stays open and its handle is let go.
        std::mem::forget(stop_tx);
        drop(operator);
        return Ok(());
    }
    let _ = stop_tx.send(true);
    let _ = operator.await;
    Ok(())
}
