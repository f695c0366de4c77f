//! ChatUI, MeilisearchInstance and Observability -> one Helm release of a bundled workload
//! chart, in the resource's namespace: the chart values computed from the
//! spec and its references, the user's `values` merged over them. Pure: the
//! controller installs or upgrades the release when these inputs change.

use super::secrets::{dns_label, resolve, resolve_as};
use super::{owned_metadata, parse_spec, Generated, Inputs, ReadyWhen, SpecError};
use crate::operator::api::gateway::GatewaySpec;
use crate::operator::api::workloads::{
    release_name, ChatUISpec, MeilisearchInstanceSpec, ObservabilitySpec,
};
use crate::operator::api::Kind;
use crate::operator::model::snapshot::Resource;
use base64::Engine;
use serde_json::{json, Value};

#[derive(Clone, Debug, PartialEq)]
pub struct Workload {
    pub release: String,
    pub values: Value,
    /// Objects emitted besides the release (ExternalSecrets of vault sources).
    pub emit: Vec<Value>,
    pub ready_when: Vec<ReadyWhen>,
    pub waiting_for: Vec<String>,
}

pub fn references(r: &Resource) -> Vec<(Kind, String)> {
    match r.kind {
        Kind::ChatUI => parse_spec::<ChatUISpec>(&r.spec)
            .map(|s| vec![(Kind::Gateway, s.gateway_ref.name)])
            .unwrap_or_default(),
        Kind::Observability => parse_spec::<ObservabilitySpec>(&r.spec)
            .map(|s| {
                let mut refs = Vec::new();
                if let Some(p) = s.postgres_cluster_ref {
                    refs.push((Kind::PostgresCluster, p.name));
                }
                if let Some(c) = s.click_house_cluster_ref {
                    refs.push((Kind::ClickHouseCluster, c.name));
                }
                refs
            })
            .unwrap_or_default(),
        _ => vec![],
    }
}

/// Helm's merge of user values over ours: maps merge key by key, anything
/// else is replaced.
pub fn merge(base: &mut Value, over: &Value) {
    match (base, over) {
        (Value::Object(b), Value::Object(o)) => {
            for (k, v) in o {
                match b.get_mut(k) {
                    // A null removes the key, as in Helm.
                    _ if v.is_null() => {
                        b.remove(k);
                    }
                    Some(existing) if existing.is_object() && v.is_object() => merge(existing, v),
                    _ => {
                        b.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (b, o) => *b = o.clone(),
    }
}

/// The release a workload kind asks for, named from the catalog's `prefix`.
pub fn realise(r: &Resource, prefix: &str, inputs: &Inputs) -> Result<Workload, SpecError> {
    let inputs = Inputs {
        release_prefix: prefix.to_string(),
        ..inputs.clone()
    };
    match super::of(r.kind)
        .map(|k| k.realise(r, &inputs))
        .transpose()?
    {
        Some(super::Realisation::Release(w)) => Ok(w),
        _ => Err(SpecError {
            field: "kind".into(),
            message: format!("{} is not a workload release", r.kind),
        }),
    }
}

fn chat_ui(r: &Resource, release: String, inputs: &Inputs) -> Result<Workload, SpecError> {
    let spec: ChatUISpec = parse_spec(&r.spec)?;
    let gw = &spec.gateway_ref.name;
    let mut waiting_for = Vec::new();
    let mut values = json!({"replicas": spec.replicas});
    match inputs.references.get(&(Kind::Gateway, gw.clone())) {
        None => waiting_for.push(format!("Gateway {}/{gw} does not exist", r.namespace)),
        Some(g) if g.pointer("/status/phase").and_then(Value::as_str) != Some("Ready") => {
            waiting_for.push(format!(
                "Gateway {}/{gw} is not Ready (phase {})",
                r.namespace,
                g.pointer("/status/phase")
                    .and_then(Value::as_str)
                    .unwrap_or("unset")
            ))
        }
        Some(g) => {
            let endpoint = g
                .pointer("/status/endpoint")
                .and_then(Value::as_str)
                .unwrap_or_default();
            values["envVars"] = json!({"OPENAI_BASE_URL": format!("{endpoint}/v1")});
            // The Gateway's master key is the key chat-ui calls it with:
            // by reference, the Secret the Gateway itself reads.
            let gspec: GatewaySpec =
                serde_json::from_value(g["spec"].clone()).map_err(|e| SpecError {
                    field: "spec.gatewayRef".into(),
                    message: format!("Gateway {gw}: {e}"),
                })?;
            let gateway = Resource {
                kind: Kind::Gateway,
                name: gw.clone(),
                ..r.clone()
            };
            let key = resolve(&gateway, "spec.gatewayRef", "master-key", &gspec.master_key)?;
            values["extraEnv"] = json!([{"name": "OPENAI_API_KEY",
                "valueFrom": {"secretKeyRef": {"name": key.key_ref.name, "key": key.key_ref.key}}}]);
        }
    }
    merge(&mut values, &Value::Object(spec.values));
    Ok(Workload {
        release,
        values,
        emit: vec![],
        ready_when: vec![],
        waiting_for,
    })
}

/// The chart reads its master key Secret whole, as environment: the key
/// must be named `MEILI_MASTER_KEY` there (a vault value is written under
/// that name).
const MEILI_KEY: &str = "MEILI_MASTER_KEY";

/// The referenced Secret keys a resource copies into a Secret of its own:
/// a Meilisearch master key kept under another name is copied under
/// `MEILI_MASTER_KEY`, since the chart takes the Secret whole.
pub fn copied_keys(r: &Resource) -> Vec<(String, String)> {
    if r.kind != "MeilisearchInstance" {
        return vec![];
    }
    parse_spec::<MeilisearchInstanceSpec>(&r.spec)
        .ok()
        .and_then(|s| s.master_key.secret_key_ref)
        .filter(|k| k.key != MEILI_KEY)
        .map(|k| vec![(k.name, k.key)])
        .unwrap_or_default()
}

fn meilisearch(r: &Resource, release: String, inputs: &Inputs) -> Result<Workload, SpecError> {
    let spec: MeilisearchInstanceSpec = parse_spec(&r.spec)?;
    let key = resolve_as(
        r,
        "spec.masterKey",
        &dns_label("master-key"),
        &spec.master_key,
        MEILI_KEY,
    )?;
    let mut emit: Vec<Value> = key.emit.into_iter().collect();
    let mut waiting_for = vec![];
    let master_secret = if key.key_ref.key == MEILI_KEY {
        key.key_ref.name.clone()
    } else {
        let copy = format!("{}-{}", r.name, dns_label("master-key"));
        let source = (key.key_ref.name.clone(), key.key_ref.key.clone());
        match inputs.copied.get(&source) {
            Some(value) => {
                emit.push(json!({"apiVersion": "v1", "kind": "Secret",
                    "metadata": owned_metadata(crate::operator::api::API_VERSION, r.kind.as_str(), r, &copy),
                    "type": "Opaque",
                    "data": {MEILI_KEY: base64::engine::general_purpose::STANDARD.encode(value)}}));
            }
            None => waiting_for.push(format!(
                "Secret {}/{} with key {}",
                r.namespace, source.0, source.1
            )),
        }
        copy
    };
    let mut values = json!({
        "environment": {"MEILI_ENV": "production"},
        "auth": {"existingMasterKeySecret": master_secret},
        "persistence": {"enabled": true, "size": spec.persistence.size.clone().unwrap_or_else(|| "10Gi".into())},
    });
    if let Some(class) = spec
        .persistence
        .storage_class
        .as_ref()
        .filter(|c| !c.is_empty())
    {
        values["persistence"]["storageClass"] = json!(class);
    }
    merge(&mut values, &Value::Object(spec.values));
    Ok(Workload {
        release,
        values,
        emit,
        ready_when: vec![key.ready_when],
        waiting_for,
    })
}

/// Langfuse's salt, encryption key (256 bits, hex) and NextAuth secret:
/// made once, kept in a Secret of ours.
pub fn observability_generated(r: &Resource) -> (String, Vec<(&'static str, Generated)>) {
    (
        format!("{}-navique-keys", release_name("langfuse", &r.name)),
        vec![
            ("salt", Generated::Alphanumeric(32)),
            ("encryption-key", Generated::Hex(64)),
            ("nextauth-secret", Generated::Alphanumeric(32)),
        ],
    )
}

/// A referenced datastore: Ready, with its connection Secret's name and
/// non-secret keys; or why the resource waits.
fn datastore<'a>(
    r: &Resource,
    inputs: &'a Inputs,
    kind: Kind,
    name: &str,
) -> Result<(String, &'a std::collections::BTreeMap<String, String>), super::NotYet> {
    let secret = super::ready_connection_secret(r, inputs, kind, name)?;
    match inputs.connection.get(secret) {
        Some(fields) => Ok((secret.to_string(), fields)),
        None => Err(super::NotYet::SecretUnreadable {
            kind,
            namespace: r.namespace.clone(),
            name: name.to_string(),
            secret: secret.to_string(),
        }),
    }
}

fn observability(r: &Resource, release: String, inputs: &Inputs) -> Result<Workload, SpecError> {
    let spec: ObservabilitySpec = parse_spec(&r.spec)?;
    let required = |field: &str| {
        SpecError {
        field: format!("spec.{field}"),
        message: "is required: this build runs Langfuse on the platform's datastores, not on bundled ones".into(),
    }
    };
    let pg = spec
        .postgres_cluster_ref
        .ok_or_else(|| required("postgresClusterRef"))?;
    let ch = spec
        .click_house_cluster_ref
        .ok_or_else(|| required("clickHouseClusterRef"))?;
    let (app_secret, keys) = observability_generated(r);
    let mut waiting_for = Vec::new();
    let mut values = json!({"langfuse": {
        "salt": {"secretKeyRef": {"name": app_secret, "key": "salt"}},
        "encryptionKey": {"secretKeyRef": {"name": app_secret, "key": "encryption-key"}},
        "nextauth": {"secret": {"secretKeyRef": {"name": app_secret, "key": "nextauth-secret"}}},
    }});
    let field = |f: &std::collections::BTreeMap<String, String>, k: &str| {
        f.get(k).cloned().unwrap_or_default()
    };
    match datastore(r, inputs, Kind::PostgresCluster, &pg.name) {
        Err(why) => waiting_for.push(why.to_string()),
        Ok((secret, f)) => {
            values["postgresql"] = json!({"deploy": false, "host": field(f, "host"),
                "port": field(f, "port").parse::<u16>().unwrap_or(5432),
                "auth": {"username": field(f, "username"), "database": field(f, "dbname"),
                         "existingSecret": secret, "secretKeys": {"userPasswordKey": "password"}}});
        }
    }
    match datastore(r, inputs, Kind::ClickHouseCluster, &ch.name) {
        Err(why) => waiting_for.push(why.to_string()),
        Ok((secret, f)) => {
            values["clickhouse"] = json!({"deploy": false, "host": field(f, "host"),
                "httpPort": field(f, "httpPort").parse::<u16>().unwrap_or(8123),
                "nativePort": field(f, "nativePort").parse::<u16>().unwrap_or(9000),
                "database": field(f, "database"),
                "auth": {"username": field(f, "username"), "existingSecret": secret, "existingSecretKey": "password"},
                "cluster": {"enabled": false}});
        }
    }
    merge(&mut values, &Value::Object(spec.values));
    let mut data = serde_json::Map::new();
    for (key, _) in &keys {
        if let Some(v) = inputs.generated.get(*key) {
            data.insert(
                key.to_string(),
                json!(base64::engine::general_purpose::STANDARD.encode(v)),
            );
        }
    }
    let secret = json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": owned_metadata(crate::operator::api::API_VERSION, "Observability", r, &app_secret),
        "type": "Opaque", "data": data});
    Ok(Workload {
        release,
        values,
        emit: vec![secret],
        ready_when: vec![],
        waiting_for,
    })
}

/// ChatUI: chat-ui wired to a Gateway.
pub struct ChatUi;
/// MeilisearchInstance: Meilisearch with its master key.
pub struct Meilisearch;
/// Observability: Langfuse on the platform's PostgreSQL and ClickHouse.
pub struct Observability;

impl super::Realise for ChatUi {
    fn references(&self, r: &Resource) -> Vec<(Kind, String)> {
        references(r)
    }

    fn realise_spec(&self, r: &Resource, inputs: &Inputs) -> Result<super::Realisation, SpecError> {
        release(r, inputs, chat_ui)
    }
}

impl super::Realise for Meilisearch {
    fn copied_keys(&self, r: &Resource) -> Vec<(String, String)> {
        copied_keys(r)
    }

    fn realise_spec(&self, r: &Resource, inputs: &Inputs) -> Result<super::Realisation, SpecError> {
        release(r, inputs, meilisearch)
    }
}

impl super::Realise for Observability {
    fn references(&self, r: &Resource) -> Vec<(Kind, String)> {
        references(r)
    }

    fn generated(&self, r: &Resource) -> Option<(String, Vec<(&'static str, Generated)>)> {
        Some(observability_generated(r))
    }

    fn realise_spec(&self, r: &Resource, inputs: &Inputs) -> Result<super::Realisation, SpecError> {
        release(r, inputs, observability)
    }
}

type Values = fn(&Resource, String, &Inputs) -> Result<Workload, SpecError>;

fn release(r: &Resource, inputs: &Inputs, values: Values) -> Result<super::Realisation, SpecError> {
    values(r, release_name(&inputs.release_prefix, &r.name), inputs)
        .map(super::Realisation::Release)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chat_ui_waits_for_its_gateway_then_points_at_it_with_its_key() {
        let r = Resource::for_test(
            "ChatUI",
            "web",
            "u-5",
            json!({"gatewayRef": {"name": "team-gw"}, "values": {"envVars": {"PUBLIC_APP_NAME": "Navique"}, "replicas": 2}}),
        );
        assert_eq!(references(&r), [(Kind::Gateway, "team-gw".to_string())]);
        let w = realise(&r, "chat-ui", &Inputs::default()).unwrap();
        assert_eq!(w.release, "chat-ui-web");
        assert_eq!(w.waiting_for, ["Gateway team-a/team-gw does not exist"]);
        let mut inputs = Inputs::default();
        inputs.references.insert(
            (Kind::Gateway, "team-gw".into()),
            json!({"spec": {"masterKey": {"secretKeyRef": {"name": "litellm-master", "key": "key"}}},
                   "status": {"phase": "Ready", "endpoint": "http://team-gw.team-a.svc:4000"}}),
        );
        let w = realise(&r, "chat-ui", &inputs).unwrap();
        assert!(w.waiting_for.is_empty());
        assert_eq!(
            w.values["envVars"]["OPENAI_BASE_URL"],
            "http://team-gw.team-a.svc:4000/v1"
        );
        assert_eq!(
            w.values["envVars"]["PUBLIC_APP_NAME"], "Navique",
            "the user's values merge over ours"
        );
        assert_eq!(w.values["replicas"], 2, "and win");
        assert_eq!(
            w.values["extraEnv"][0]["valueFrom"]["secretKeyRef"],
            json!({"name": "litellm-master", "key": "key"})
        );
    }

    #[test]
    fn meilisearch_uses_the_master_key_secret_or_a_copy_under_its_name() {
        let r = Resource::for_test(
            "MeilisearchInstance",
            "search",
            "u-6",
            json!({"masterKey": {"secretKeyRef": {"name": "meili", "key": "MEILI_MASTER_KEY"}}, "persistence": {"size": "5Gi"}}),
        );
        let w = realise(&r, "meilisearch", &Inputs::default()).unwrap();
        assert_eq!(w.release, "meilisearch-search");
        assert_eq!(w.values["auth"]["existingMasterKeySecret"], "meili");
        assert_eq!(
            w.values["persistence"],
            json!({"enabled": true, "size": "5Gi"})
        );
        assert_eq!(w.values["environment"]["MEILI_ENV"], "production");
        // Under any other key: copied into a Secret of ours under the
        // chart's name, once the value can be read.
        let other = Resource::for_test(
            "MeilisearchInstance",
            "search",
            "u-6",
            json!({"masterKey": {"secretKeyRef": {"name": "meili", "key": "key"}}}),
        );
        assert_eq!(
            copied_keys(&other),
            [("meili".to_string(), "key".to_string())]
        );
        assert!(copied_keys(&r).is_empty());
        let w = realise(&other, "meilisearch", &Inputs::default()).unwrap();
        assert_eq!(w.waiting_for, ["Secret team-a/meili with key key"]);
        let mut inputs = Inputs::default();
        inputs
            .copied
            .insert(("meili".into(), "key".into()), "s3cret".into());
        let w = realise(&other, "meilisearch", &inputs).unwrap();
        assert!(w.waiting_for.is_empty());
        assert_eq!(
            w.values["auth"]["existingMasterKeySecret"],
            "search-master-key"
        );
        assert_eq!(w.emit[0]["kind"], "Secret");
        assert_eq!(w.emit[0]["metadata"]["name"], "search-master-key");
        assert_eq!(w.emit[0]["data"]["MEILI_MASTER_KEY"], "czNjcmV0");
        assert!(
            !w.values.to_string().contains("s3cret") && !w.values.to_string().contains("czNjcmV0"),
            "the value never reaches the release"
        );
        let vault = Resource::for_test(
            "MeilisearchInstance",
            "search",
            "u-6",
            json!({"masterKey": {"vault": {"store": "corp", "path": "p", "property": "k"}}}),
        );
        let w = realise(&vault, "meilisearch", &Inputs::default()).unwrap();
        assert_eq!(
            w.emit[0]["spec"]["data"][0]["secretKey"],
            "MEILI_MASTER_KEY"
        );
        assert_eq!(
            w.values["auth"]["existingMasterKeySecret"],
            "search-master-key"
        );
    }

    #[test]
    fn merge_is_helms() {
        let mut base = json!({"a": {"b": 1, "c": [1]}, "d": 1});
        merge(
            &mut base,
            &json!({"a": {"c": [2], "e": 3, "b": null}, "d": {"x": 1}}),
        );
        assert_eq!(base, json!({"a": {"c": [2], "e": 3}, "d": {"x": 1}}));
    }
}

#[cfg(test)]
mod observability_tests {
    use super::*;

    #[test]
    fn langfuse_on_the_platforms_datastores_with_kept_generated_secrets() {
        let r = Resource::for_test(
            "Observability",
            "obs",
            "u-8",
            json!({"postgresClusterRef": {"name": "app-db"}, "clickHouseClusterRef": {"name": "analytics"}}),
        );
        assert_eq!(references(&r).len(), 2);
        let w = realise(&r, "langfuse", &Inputs::default()).unwrap();
        assert_eq!(w.release, "langfuse-obs");
        assert_eq!(w.waiting_for.len(), 2, "{:?}", w.waiting_for);
        let mut inputs = Inputs::default();
        inputs.references.insert(
            (Kind::PostgresCluster, "app-db".into()),
            json!({"status": {"phase": "Ready", "connectionSecret": "app-db-app"}}),
        );
        inputs.references.insert(
            (Kind::ClickHouseCluster, "analytics".into()),
            json!({"status": {"phase": "Ready", "connectionSecret": "analytics-clickhouse"}}),
        );
        inputs.connection.insert(
            "app-db-app".into(),
            [
                ("host", "app-db-rw"),
                ("port", "5432"),
                ("username", "app"),
                ("dbname", "app"),
            ]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        );
        inputs.connection.insert(
            "analytics-clickhouse".into(),
            [
                ("host", "ch"),
                ("httpPort", "8123"),
                ("nativePort", "9000"),
                ("username", "default"),
                ("database", "default"),
            ]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        );
        inputs.generated.insert("salt".into(), "s".into());
        let w = realise(&r, "langfuse", &inputs).unwrap();
        assert!(w.waiting_for.is_empty());
        assert_eq!(w.values["postgresql"]["deploy"], false);
        assert_eq!(w.values["postgresql"]["host"], "app-db-rw");
        assert_eq!(
            w.values["postgresql"]["auth"]["existingSecret"],
            "app-db-app"
        );
        assert_eq!(
            w.values["clickhouse"]["auth"]["existingSecretKey"],
            "password"
        );
        assert_eq!(
            w.values["langfuse"]["salt"]["secretKeyRef"]["name"],
            "langfuse-obs-navique-keys"
        );
        assert_eq!(w.emit[0]["data"]["salt"], "cw==");
        let no_ch = Resource::for_test(
            "Observability",
            "obs",
            "u-8",
            json!({"postgresClusterRef": {"name": "app-db"}}),
        );
        assert_eq!(
            realise(&no_ch, "langfuse", &inputs).unwrap_err().field,
            "spec.clickHouseClusterRef"
        );
    }
}
