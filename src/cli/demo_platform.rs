//! `navique-operator demo --platform`: the whole platform on the embedded
//! API server. A PostgreSQL database, a ClickHouse, an LLM gateway on that
//! database, a chat front end on the gateway, a search engine and LLM
//! observability on both datastores: each capability operator installed
//! once, in order, then everything deleted. Upstream operators do not run
//! here: the demo says each time it plays one's part.

use crate::operator::runtime::process::{self, RunOptions};
use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams};
use kube::discovery::ApiResource;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn ar(group: &str, version: &str, kind: &str, plural: &str) -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &kube::core::GroupVersionKind::gvk(group, version, kind),
        plural,
    )
}

const NS: &str = "team-a";

/// The company vault, connected once for the whole cluster (SecretsManagement
/// is cluster-scoped); the search engine's master key lives there.
const VAULT: &str = "corp-vault";

/// Where a kind's objects live: the team's namespace, or the cluster.
fn namespace_of(kind: &str) -> Option<&'static str> {
    (kind != "SecretsManagement").then_some(NS)
}

fn api_for(client: &kube::Client, kind: &str, plural: &str) -> Api<DynamicObject> {
    let a = ar("core.navique.com", "v1alpha1", kind, plural);
    match namespace_of(kind) {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &a),
        None => Api::all_with(client.clone(), &a),
    }
}

/// Our resources of the walk-through: (kind, plural, name, spec).
fn resources() -> Vec<(&'static str, &'static str, &'static str, Value)> {
    vec![
        (
            "PostgresCluster",
            "postgresclusters",
            "app-db",
            json!({"mode": "managed", "managed": {"instances": 1}}),
        ),
        (
            "ClickHouseCluster",
            "clickhouseclusters",
            "analytics",
            json!({"type": "clickhouse", "mode": "managed", "managed": {"keeper": {"replicas": 1}}}),
        ),
        (
            "Gateway",
            "gateways",
            "team-gw",
            json!({"postgresClusterRef": {"name": "app-db"},
            "masterKey": {"secretKeyRef": {"name": "litellm-master", "key": "key"}},
            "models": [{"name": "gpt-4o", "model": "openai/gpt-4o", "apiKey": {"secretKeyRef": {"name": "openai", "key": "api-key"}}},
                       {"name": "llama3", "model": "ollama/llama3", "apiBase": "http://ollama:11434"}]}),
        ),
        (
            "ChatUI",
            "chatuis",
            "web",
            json!({"gatewayRef": {"name": "team-gw"}}),
        ),
        (
            "SecretsManagement",
            "secretsmanagements",
            VAULT,
            json!({"vault": {"server": "https://vault.corp.example:8200", "path": "secret",
                             "auth": {"kubernetes": {"mountPath": "kubernetes", "role": "navique"}}}}),
        ),
        (
            "MeilisearchInstance",
            "meilisearchinstances",
            "search",
            json!({"masterKey": {"vault": {"store": VAULT, "path": "search/meilisearch", "property": "master-key"}}}),
        ),
        (
            "Observability",
            "observabilities",
            "obs",
            json!({"postgresClusterRef": {"name": "app-db"}, "clickHouseClusterRef": {"name": "analytics"}}),
        ),
    ]
}

struct Show {
    client: kube::Client,
    start: Instant,
    last: BTreeMap<String, String>,
}

impl Show {
    fn say(&self, what: &str) {
        println!("   +{:>5.1}s  {what}", self.start.elapsed().as_secs_f64());
    }

    fn changed(&mut self, what: String, now: String) {
        if self.last.get(&what) != Some(&now) {
            self.say(&format!("{what}: {now}"));
            self.last.insert(what, now);
        }
    }

    fn api(&self, a: &ApiResource, namespaced: bool) -> Api<DynamicObject> {
        if namespaced {
            Api::namespaced_with(self.client.clone(), NS, a)
        } else {
            Api::all_with(self.client.clone(), a)
        }
    }

    /// Writes the status an upstream operator would write on each of its
    /// objects that lacks it (and CNPG's `<cluster>-app` Secret).
    async fn play_upstream(&mut self) {
        let conditions = json!({"conditions": [{"type": "Ready", "status": "True", "reason": "Ready", "message": "",
            "lastTransitionTime": crate::operator::decide::conditions::now()}]});
        for (group, version, kind, plural, who) in [
            (
                "postgresql.cnpg.io",
                "v1",
                "Cluster",
                "clusters",
                "CloudNativePG",
            ),
            (
                "clickhouse.com",
                "v1alpha1",
                "KeeperCluster",
                "keeperclusters",
                "the ClickHouse operator",
            ),
            (
                "clickhouse.com",
                "v1alpha1",
                "ClickHouseCluster",
                "clickhouseclusters",
                "the ClickHouse operator",
            ),
            (
                "litellm.home-operations.com",
                "v1alpha1",
                "LiteLLMProxy",
                "litellmproxies",
                "the LiteLLM operator",
            ),
        ] {
            let api = self.api(&ar(group, version, kind, plural), true);
            let Ok(list) = api.list(&ListParams::default()).await else {
                continue;
            };
            for o in list.items {
                let name = o.metadata.name.clone().unwrap_or_default();
                if o.data.get("status").is_some() || o.metadata.deletion_timestamp.is_some() {
                    continue;
                }
                if kind == "Cluster" {
                    let secrets: Api<k8s_openapi::api::core::v1::Secret> =
                        Api::namespaced(self.client.clone(), NS);
                    let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": format!("{name}-app")},
                        "stringData": {"host": format!("{name}-rw"), "port": "5432", "username": "app", "password": "demo-only", "dbname": "app"}});
                    let _ = secrets
                        .patch(
                            &format!("{name}-app"),
                            &PatchParams::apply("demo-plays-cloudnative-pg").force(),
                            &Patch::Apply(&secret),
                        )
                        .await;
                }
                let body = json!({"apiVersion": format!("{group}/{version}"), "kind": kind, "status": conditions});
                if api
                    .patch_status(
                        &name,
                        &PatchParams::apply("demo-plays-upstream").force(),
                        &Patch::Apply(&body),
                    )
                    .await
                    .is_ok()
                {
                    self.say(&format!("[simulated] {who} reports {kind} {NS}/{name} Ready (it does not run on the embedded server)"));
                }
            }
        }
    }

    /// Plays external-secrets: each store it would validate reports Ready,
    /// and each ExternalSecret writes its target Secret (a stand-in value:
    /// no vault answers here) and reports Ready.
    async fn play_external_secrets(&mut self) {
        let ready = json!({"conditions": [{"type": "Ready", "status": "True", "reason": "Valid", "message": "",
            "lastTransitionTime": crate::operator::decide::conditions::now()}]});
        for (kind, plural, namespaced) in [
            ("ClusterSecretStore", "clustersecretstores", false),
            ("ExternalSecret", "externalsecrets", true),
        ] {
            let api = self.api(&ar("external-secrets.io", "v1", kind, plural), namespaced);
            let Ok(list) = api.list(&ListParams::default()).await else {
                continue;
            };
            for o in list.items {
                if o.data.get("status").is_some() || o.metadata.deletion_timestamp.is_some() {
                    continue;
                }
                let name = o.metadata.name.clone().unwrap_or_default();
                if kind == "ExternalSecret" {
                    let keys: serde_json::Map<String, Value> = o
                        .data
                        .pointer("/spec/data")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .filter_map(|d| d["secretKey"].as_str())
                        .map(|k| (k.to_string(), json!("demo-only")))
                        .collect();
                    let target = o
                        .data
                        .pointer("/spec/target/name")
                        .and_then(Value::as_str)
                        .unwrap_or(&name);
                    let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": target}, "stringData": keys});
                    let secrets: Api<k8s_openapi::api::core::v1::Secret> =
                        Api::namespaced(self.client.clone(), NS);
                    let _ = secrets
                        .patch(
                            target,
                            &PatchParams::apply("demo-plays-external-secrets").force(),
                            &Patch::Apply(&secret),
                        )
                        .await;
                }
                let body =
                    json!({"apiVersion": "external-secrets.io/v1", "kind": kind, "status": ready});
                if api
                    .patch_status(
                        &name,
                        &PatchParams::apply("demo-plays-upstream").force(),
                        &Patch::Apply(&body),
                    )
                    .await
                    .is_ok()
                {
                    self.say(&format!("[simulated] external-secrets reports {kind} {name} Ready (it does not run on the embedded server)"));
                }
            }
        }
    }

    async fn look(&mut self) -> usize {
        self.play_upstream().await;
        self.play_external_secrets().await;
        let caps = self.api(
            &ar("core.navique.com", "v1alpha1", "Capability", "capabilities"),
            false,
        );
        if let Ok(list) = caps.list(&ListParams::default()).await {
            for c in list.items {
                let s = c.data.get("status").cloned().unwrap_or_default();
                if s.get("provenance").is_none() {
                    continue;
                }
                let line = format!(
                    "{}{}",
                    s["provenance"].as_str().unwrap_or_default(),
                    if s["ready"] == true { ", ready" } else { "" }
                );
                self.changed(
                    format!("Capability {}", c.metadata.name.clone().unwrap_or_default()),
                    line,
                );
            }
        }
        let mut ready = 0;
        for (kind, plural, name, _) in resources() {
            let api = api_for(&self.client, kind, plural);
            let Ok(Some(o)) = api.get_opt(name).await else {
                continue;
            };
            let Some(s) = o.data.get("status") else {
                continue;
            };
            let message = s["conditions"]
                .as_array()
                .and_then(|cs| cs.iter().find(|c| c["type"] == "Ready"))
                .and_then(|c| c["message"].as_str())
                .unwrap_or_default()
                .to_string();
            let phase = s["phase"].as_str().unwrap_or("-");
            if phase == "Ready" {
                ready += 1;
            }
            let place = namespace_of(kind)
                .map(|ns| format!("{ns}/"))
                .unwrap_or_default();
            self.changed(
                format!("{kind} {place}{name}"),
                format!("{phase} ({message})"),
            );
        }
        ready
    }
}

/// A license for the walk-through, signed with a key made now: Observability
/// is outside the free tier (`--license-public-key` in a cluster).
fn demo_license() -> (ed25519_dalek::VerifyingKey, Value) {
    use base64::Engine;
    use ed25519_dalek::Signer;
    let key = ed25519_dalek::SigningKey::generate(&mut rand::rngs::OsRng);
    let expires = chrono::Utc::now() + chrono::Duration::hours(1);
    let payload = serde_json::to_vec(
        &json!({"licensee": "the demo", "tier": "enterprise", "expires": expires.to_rfc3339(),
        "features": ["Observability", "SecretsManagement", "altinity"]}),
    )
    .expect("json");
    let sig = key.sign(&payload);
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": crate::operator::model::licensing::SECRET_NAME},
        "data": {"license.json": b64(&payload), "license.sig": b64(b64(&sig.to_bytes()).as_bytes())}});
    (key.verifying_key(), secret)
}

pub async fn walk_through(kubeconfig: PathBuf, dirs: Vec<PathBuf>) -> Result<(), String> {
    let client = crate::apply::client::connect(Some(&kubeconfig), None)
        .await
        .map_err(|e| e.to_string())?;
    let mut opts = RunOptions::new(PathBuf::new());
    let (key, license) = demo_license();
    crate::action::ensure_namespace(&client, &opts.namespace)
        .await
        .map_err(|e| e.to_string())?;
    let secrets: Api<k8s_openapi::api::core::v1::Secret> =
        Api::namespaced(client.clone(), &opts.namespace);
    secrets
        .patch(
            crate::operator::model::licensing::SECRET_NAME,
            &PatchParams::apply("demo"),
            &Patch::Apply(&license),
        )
        .await
        .map_err(|e| e.to_string())?;
    println!("1. The operator starts with a license signed for this walk-through (Observability is beyond");
    println!("   the free tier), and a team's Secrets are in place: the gateway's master key and a provider");
    println!(
        "   API key; the search engine's master key stays in the company vault. Only references to"
    );
    println!("   them travel from here on.");
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    opts.charts_dirs = dirs;
    opts.kubeconfig = Some(kubeconfig.clone());
    opts.leader_elect = false;
    opts.poll = Duration::from_millis(300);
    opts.license_key = Some(key);
    let operator = tokio::spawn(process::run(opts, stop_rx));
    crate::action::ensure_namespace(&client, NS)
        .await
        .map_err(|e| e.to_string())?;
    let team: Api<k8s_openapi::api::core::v1::Secret> = Api::namespaced(client.clone(), NS);
    for (name, key, value) in [
        ("litellm-master", "key", "sk-demo"),
        ("openai", "api-key", "sk-demo"),
    ] {
        let s = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}, "stringData": {key: value}});
        team.patch(name, &PatchParams::apply("kubectl"), &Patch::Apply(&s))
            .await
            .map_err(|e| e.to_string())?;
    }
    // The operator installs its CRDs one by one as it starts: wait until it
    // serves every kind the team applies, as `kubectl apply` would need.
    for (kind, plural, _, _) in resources() {
        let probe = api_for(&client, kind, plural);
        for _ in 0..100 {
            if probe.list(&ListParams::default()).await.is_ok() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    println!();
    println!("2. The team applies the whole platform at once, in no particular order:");
    for (kind, plural, name, spec) in resources().into_iter().rev() {
        let place = namespace_of(kind)
            .map(|ns| format!("{ns}/"))
            .unwrap_or_default();
        println!(
            "   $ kubectl apply -f {}.yaml   # {kind} {place}{name}",
            kind.to_lowercase()
        );
        let api = api_for(&client, kind, plural);
        let body = json!({"apiVersion": "core.navique.com/v1alpha1", "kind": kind, "metadata": {"name": name}, "spec": spec});
        api.patch(name, &PatchParams::apply("kubectl"), &Patch::Apply(&body))
            .await
            .map_err(|e| e.to_string())?;
    }
    let mut show = Show {
        client: client.clone(),
        start: Instant::now(),
        last: BTreeMap::new(),
    };
    let deadline = Instant::now() + Duration::from_secs(180);
    while show.look().await < resources().len() {
        if Instant::now() > deadline {
            return Err(format!("the demo timed out; last seen: {:#?}", show.last));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    println!();
    println!(
        "3. Everything is Ready; each capability operator was installed once, prerequisites first,"
    );
    println!("   and the workloads are releases of ours too:");
    super::demo::helm_list(&client).await?;
    super::demo::capabilities_table(&client).await?;
    println!();
    println!(
        "4. The team deletes it all; each capability operator goes only once nothing it serves is"
    );
    println!("   left, cert-manager last:");
    for (kind, plural, name, _) in resources() {
        let api = api_for(&client, kind, plural);
        api.delete(name, &Default::default())
            .await
            .map_err(|e| e.to_string())?;
    }
    show.start = Instant::now();
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        show.look().await;
        let left = crate::release::storage::Storage::new(client.clone(), "default")
            .query(true, "")
            .await
            .map_err(|e| e.to_string())?
            .into_iter()
            .filter(|r| r.info.status.as_str() != "uninstalled")
            .count();
        let all_absent = show
            .last
            .iter()
            .filter(|(k, _)| k.starts_with("Capability "))
            .all(|(_, v)| v.starts_with("absent"));
        if left == 0 && all_absent {
            break;
        }
        if Instant::now() > deadline {
            return Err(format!("the demo timed out; {left} releases left"));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    println!();
    println!("5. Back where it started: no release left.");
    super::demo::helm_list(&client).await?;
    let _ = stop_tx.send(true);
    let _ = operator.await;
    Ok(())
}
