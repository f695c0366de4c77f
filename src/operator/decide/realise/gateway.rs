//! Gateway -> a LiteLLMProxy named as the Gateway and one LiteLLMModel per
//! model (`<gateway>-<model>`, bound to the proxy), for the LiteLLM
//! operator. Secrets reach the proxy as references (env `valueFrom`,
//! `apiKeyRef`), never as values. With `postgresClusterRef` the proxy runs
//! in database mode (`applyMode: api`) on that PostgresCluster's connection
//! Secret, and the Gateway waits until that PostgresCluster is Ready.

use super::secrets::{dns_label, resolve, store_name, Resolved};
use super::{owned_metadata, parse_spec, Inputs, ReadyWhen, Realised, SpecError};
use crate::operator::api::gateway::{GatewayModel, GatewaySpec};
use crate::operator::api::{Kind, SecretKeyRef};
use crate::operator::model::snapshot::Resource;
use serde_json::{json, Value};

pub const LITELLM_API_VERSION: &str = "litellm.home-operations.com/v1alpha1";
/// The label our LiteLLMModels carry, which the proxy's modelSelector selects.
pub const GATEWAY_LABEL: &str = "core.navique.com/gateway";
pub const PORT: u16 = 4000;

pub fn model_name(gateway: &str, model: &str) -> String {
    dns_label(&format!("{gateway}-{model}"))
}

/// The resources a Gateway's realisation reads: its PostgresCluster, and
/// the SecretsManagement behind each vault source.
pub fn references(r: &Resource) -> Vec<(Kind, String)> {
    let Ok(spec) = parse_spec::<GatewaySpec>(&r.spec) else {
        return vec![];
    };
    let mut out = Vec::new();
    if let Some(pg) = &spec.postgres_cluster_ref {
        out.push((Kind::PostgresCluster, pg.name.clone()));
    }
    let sources = std::iter::once(&spec.master_key)
        .chain(spec.models.iter().filter_map(|m| m.api_key.as_ref()));
    for s in sources {
        if let Some(v) = &s.vault {
            out.push((Kind::SecretsManagement, v.store.clone()));
        }
    }
    out
}

/// `name`'s secretKeyRef env var.
fn env_from(name: &str, secret: &str, key: &str) -> Value {
    json!({"name": name, "valueFrom": {"secretKeyRef": {"name": secret, "key": key}}})
}

pub fn realise(r: &Resource, inputs: &Inputs) -> Result<Realised, SpecError> {
    let spec: GatewaySpec = parse_spec(&r.spec)?;
    let mut out = Gathered::new(inputs);
    let master = out.take(resolve(
        r,
        "spec.masterKey",
        "master-key",
        &spec.master_key,
    )?);
    out.emit
        .push(proxy(r, &spec, &master, &mut out.waiting_for, inputs));
    let mut names = std::collections::BTreeMap::new();
    for (i, m) in spec.models.iter().enumerate() {
        unique_name(&mut names, r, &spec, i)?;
        let model = self::model(r, i, m, &mut out)?;
        out.emit.push(model);
    }
    out.ready_when.push(ReadyWhen::ConditionReady {
        api_version: LITELLM_API_VERSION.into(),
        kind: "LiteLLMProxy".into(),
        name: r.name.clone(),
    });
    let mut status = serde_json::Map::new();
    status.insert(
        "endpoint".into(),
        json!(format!("http://{}.{}.svc:{PORT}", r.name, r.namespace)),
    );
    Ok(Realised {
        needs: vec!["litellm-operator".into()],
        emit: out.emit,
        ready_when: out.ready_when,
        status,
        waiting_for: out.waiting_for,
    })
}

/// What the Gateway's parts add up to, in the order they are made.
struct Gathered<'a> {
    inputs: &'a Inputs,
    emit: Vec<Value>,
    ready_when: Vec<ReadyWhen>,
    waiting_for: Vec<String>,
}

impl<'a> Gathered<'a> {
    fn new(inputs: &'a Inputs) -> Self {
        Gathered {
            inputs,
            emit: Vec::new(),
            ready_when: Vec::new(),
            waiting_for: Vec::new(),
        }
    }

    /// Takes in a resolved secret: its ExternalSecret, what makes it ready,
    /// and a wait while its vault does not exist. Returns its key.
    fn take(&mut self, resolved: Resolved) -> SecretKeyRef {
        if let Some(s) = &resolved.store {
            let known = (Kind::SecretsManagement, s.clone());
            if !self.inputs.references.contains_key(&known) {
                self.waiting_for.push(format!(
                    "SecretsManagement {s} (its ClusterSecretStore {}) does not exist",
                    store_name(s)
                ));
            }
        }
        self.emit.extend(resolved.emit);
        self.ready_when.push(resolved.ready_when);
        resolved.key_ref
    }
}

/// The LiteLLMProxy, in database mode on a Ready PostgresCluster when the
/// spec names one (waiting for it otherwise), in file mode without.
fn proxy(
    r: &Resource,
    spec: &GatewaySpec,
    master: &SecretKeyRef,
    waiting_for: &mut Vec<String>,
    inputs: &Inputs,
) -> Value {
    let mut env = vec![env_from("LITELLM_MASTER_KEY", &master.name, &master.key)];
    let mut proxy_spec = json!({
        "replicas": spec.replicas,
        "applyMode": "file",
        "modelSelector": {"matchLabels": {GATEWAY_LABEL: r.name}},
    });
    if let Some(pg) = &spec.postgres_cluster_ref {
        match super::ready_connection_secret(r, inputs, Kind::PostgresCluster, &pg.name) {
            Err(why) => waiting_for.push(why.to_string()),
            Ok(secret) => {
                env.extend(database_env(secret));
                proxy_spec["applyMode"] = json!("api");
                proxy_spec["apiAccess"] =
                    json!({"masterKeyRef": {"name": master.name, "key": master.key}});
            }
        }
    }
    proxy_spec["env"] = json!(env);
    json!({
        "apiVersion": LITELLM_API_VERSION,
        "kind": "LiteLLMProxy",
        "metadata": owned_metadata(crate::operator::api::API_VERSION, "Gateway", r, &r.name),
        "spec": proxy_spec,
    })
}

/// The proxy's database settings from a connection Secret: the keys every
/// connection Secret has (CNPG's and an external one); the kubelet expands
/// $(VAR) in order.
fn database_env(secret: &str) -> Vec<Value> {
    let mut env: Vec<Value> = [
        ("DATABASE_USERNAME", "username"),
        ("DATABASE_PASSWORD", "password"),
        ("DATABASE_HOST", "host"),
        ("DATABASE_PORT", "port"),
        ("DATABASE_NAME", "dbname"),
    ]
    .into_iter()
    .map(|(var, key)| env_from(var, secret, key))
    .collect();
    env.push(json!({"name": "DATABASE_URL",
        "value": "postgresql://$(DATABASE_USERNAME):$(DATABASE_PASSWORD)@$(DATABASE_HOST):$(DATABASE_PORT)/$(DATABASE_NAME)"}));
    env
}

/// Two models whose names make the same LiteLLMModel name are refused,
/// naming the second.
fn unique_name(
    seen: &mut std::collections::BTreeMap<String, usize>,
    r: &Resource,
    spec: &GatewaySpec,
    i: usize,
) -> Result<(), SpecError> {
    let m = &spec.models[i];
    let name = model_name(&r.name, &m.name);
    match seen.insert(name.clone(), i) {
        None => Ok(()),
        Some(j) => Err(SpecError {
            field: format!("spec.models[{i}].name"),
            message: format!(
                "{:?} and spec.models[{j}].name {:?} make the same LiteLLMModel name {name}",
                m.name, spec.models[j].name
            ),
        }),
    }
}

/// One LiteLLMModel, bound to the proxy, with its API key by reference.
fn model(r: &Resource, i: usize, m: &GatewayModel, out: &mut Gathered) -> Result<Value, SpecError> {
    let name = model_name(&r.name, &m.name);
    let mut params = json!({"model": m.model});
    if let Some(base) = m.api_base.as_ref().filter(|b| !b.is_empty()) {
        params["apiBase"] = json!(base);
    }
    if let Some(source) = &m.api_key {
        let field = format!("spec.models[{i}].apiKey");
        let key = out.take(resolve(
            r,
            &field,
            &format!("model-{}", dns_label(&m.name)),
            source,
        )?);
        params["apiKeyRef"] = json!({"name": key.name, "key": key.key});
    }
    let mut metadata = owned_metadata(crate::operator::api::API_VERSION, "Gateway", r, &name);
    metadata["labels"][GATEWAY_LABEL] = json!(r.name);
    Ok(json!({
        "apiVersion": LITELLM_API_VERSION,
        "kind": "LiteLLMModel",
        "metadata": metadata,
        "spec": {"modelName": m.name, "params": params, "proxyRef": r.name},
    }))
}

/// Gateway: a LiteLLM proxy and its models.
pub struct Gateway;

impl super::Realise for Gateway {
    fn references(&self, r: &Resource) -> Vec<(Kind, String)> {
        references(r)
    }

    fn realise_spec(&self, r: &Resource, inputs: &Inputs) -> Result<super::Realisation, SpecError> {
        realise(r, inputs).map(super::Realisation::Objects)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gw(spec: Value) -> Resource {
        Resource::for_test("Gateway", "team-gw", "u-9", spec)
    }

    fn spec() -> Value {
        json!({"masterKey": {"secretKeyRef": {"name": "litellm-master", "key": "key"}}, "replicas": 2,
               "models": [{"name": "gpt-4o", "model": "openai/gpt-4o", "apiKey": {"secretKeyRef": {"name": "openai", "key": "api-key"}}},
                          {"name": "Local Llama", "model": "ollama/llama3", "apiBase": "http://ollama:11434"}]})
    }

    #[test]
    fn a_proxy_and_one_model_each_with_secrets_by_reference_only() {
        let x = realise(&gw(spec()), &Inputs::default()).unwrap();
        assert_eq!(x.needs, ["litellm-operator"]);
        assert!(x.waiting_for.is_empty());
        let kinds: Vec<&str> = x.emit.iter().map(|o| o["kind"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["LiteLLMProxy", "LiteLLMModel", "LiteLLMModel"]);
        let proxy = &x.emit[0];
        assert_eq!(proxy["spec"]["replicas"], 2);
        assert_eq!(proxy["spec"]["applyMode"], "file");
        assert_eq!(
            proxy["spec"]["env"][0],
            json!({"name": "LITELLM_MASTER_KEY", "valueFrom": {"secretKeyRef": {"name": "litellm-master", "key": "key"}}})
        );
        assert_eq!(
            proxy["spec"]["modelSelector"]["matchLabels"][GATEWAY_LABEL],
            "team-gw"
        );
        let m = &x.emit[1];
        assert_eq!(m["metadata"]["name"], "team-gw-gpt-4o");
        assert_eq!(m["metadata"]["labels"][GATEWAY_LABEL], "team-gw");
        assert_eq!(m["spec"]["proxyRef"], "team-gw");
        assert_eq!(
            m["spec"]["params"]["apiKeyRef"],
            json!({"name": "openai", "key": "api-key"})
        );
        assert_eq!(x.emit[2]["metadata"]["name"], "team-gw-local-llama");
        assert_eq!(
            x.emit[2]["spec"]["params"]["apiBase"],
            "http://ollama:11434"
        );
        assert_eq!(x.status["endpoint"], "http://team-gw.team-a.svc:4000");
        // Master key and model key Secrets, then the proxy.
        assert_eq!(x.ready_when.len(), 3);
    }

    #[test]
    fn database_mode_waits_for_its_postgres_cluster_then_uses_its_connection_secret() {
        let mut s = spec();
        s["postgresClusterRef"] = json!({"name": "app-db"});
        let r = gw(s);
        assert_eq!(
            references(&r),
            [(Kind::PostgresCluster, "app-db".to_string())]
        );
        let x = realise(&r, &Inputs::default()).unwrap();
        assert_eq!(
            x.waiting_for,
            ["PostgresCluster team-a/app-db does not exist"]
        );
        let mut inputs = Inputs::default();
        inputs.references.insert(
            (Kind::PostgresCluster, "app-db".into()),
            json!({"status": {"phase": "Provisioning"}}),
        );
        let x = realise(&r, &inputs).unwrap();
        assert!(
            x.waiting_for[0].contains("not Ready (phase Provisioning)"),
            "{:?}",
            x.waiting_for
        );
        inputs.references.insert(
            (Kind::PostgresCluster, "app-db".into()),
            json!({"status": {"phase": "Ready", "connectionSecret": "app-db-app"}}),
        );
        let x = realise(&r, &inputs).unwrap();
        assert!(x.waiting_for.is_empty());
        let proxy = &x.emit[0];
        assert_eq!(proxy["spec"]["applyMode"], "api");
        assert_eq!(
            proxy["spec"]["apiAccess"]["masterKeyRef"]["name"],
            "litellm-master"
        );
        let env = proxy["spec"]["env"].as_array().unwrap();
        assert!(env.iter().any(|e| e["name"] == "DATABASE_PASSWORD"
            && e["valueFrom"]["secretKeyRef"] == json!({"name": "app-db-app", "key": "password"})));
        assert!(env.iter().any(|e| e["name"] == "DATABASE_URL"));
    }

    #[test]
    fn vault_sources_become_external_secrets_and_wait_for_their_store() {
        let mut s = spec();
        s["masterKey"] =
            json!({"vault": {"store": "corp", "path": "ai/litellm", "property": "master"}});
        let r = gw(s);
        assert_eq!(
            references(&r),
            [(Kind::SecretsManagement, "corp".to_string())]
        );
        let x = realise(&r, &Inputs::default()).unwrap();
        assert_eq!(x.emit[0]["kind"], "ExternalSecret");
        assert!(
            x.waiting_for[0].contains("SecretsManagement corp"),
            "{:?}",
            x.waiting_for
        );
        let mut inputs = Inputs::default();
        inputs
            .references
            .insert((Kind::SecretsManagement, "corp".into()), json!({}));
        let x = realise(&r, &inputs).unwrap();
        assert!(x.waiting_for.is_empty());
        assert_eq!(
            x.emit[1]["spec"]["env"][0]["valueFrom"]["secretKeyRef"],
            json!({"name": "team-gw-master-key", "key": "value"})
        );
    }

    #[test]
    fn models_that_make_one_name_are_refused_naming_the_field() {
        let mut s = spec();
        s["models"] = json!([{"name": "GPT 4o", "model": "a"}, {"name": "gpt-4o", "model": "b"}]);
        let e = realise(&gw(s), &Inputs::default()).unwrap_err();
        assert_eq!(e.field, "spec.models[1].name");
        let e = realise(&gw(json!({"models": []})), &Inputs::default()).unwrap_err();
        assert!(e.message.contains("masterKey"), "{e}");
    }
}
