//! ChatUI and MeilisearchInstance -> one Helm release of a bundled workload
//! chart, in the resource's namespace: the chart values computed from the
//! spec and its references, the user's `values` merged over them. Pure: the
//! controller installs or upgrades the release when these inputs change.

use super::secrets::{dns_label, resolve, resolve_as};
use super::{parse_spec, Inputs, ReadyWhen, SpecError};
use crate::operator::api::gateway::GatewaySpec;
use crate::operator::api::workloads::{release_name, ChatUISpec, MeilisearchInstanceSpec};
use crate::operator::observe::Resource;
use serde_json::{json, Value};

/// The kinds realised as a workload release.
pub const WORKLOAD_KINDS: &[&str] = &["ChatUI", "MeilisearchInstance"];

#[derive(Clone, Debug, PartialEq)]
pub struct Workload {
    pub release: String,
    pub values: Value,
    /// Objects emitted besides the release (ExternalSecrets of vault sources).
    pub emit: Vec<Value>,
    pub ready_when: Vec<ReadyWhen>,
    pub waiting_for: Vec<String>,
}

pub fn references(r: &Resource) -> Vec<(String, String)> {
    match r.kind.as_str() {
        "ChatUI" => parse_spec::<ChatUISpec>(&r.spec)
            .map(|s| vec![("Gateway".to_string(), s.gateway_ref.name)])
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

pub fn realise(r: &Resource, prefix: &str, inputs: &Inputs) -> Result<Workload, SpecError> {
    let release = release_name(prefix, &r.name);
    match r.kind.as_str() {
        "ChatUI" => chat_ui(r, release, inputs),
        "MeilisearchInstance" => meilisearch(r, release),
        other => Err(SpecError {
            field: "kind".into(),
            message: format!("{other} is not a workload release"),
        }),
    }
}

fn chat_ui(r: &Resource, release: String, inputs: &Inputs) -> Result<Workload, SpecError> {
    let spec: ChatUISpec = parse_spec(&r.spec)?;
    let gw = &spec.gateway_ref.name;
    let mut waiting_for = Vec::new();
    let mut values = json!({"replicas": spec.replicas});
    match inputs.references.get(&("Gateway".to_string(), gw.clone())) {
        None => waiting_for.push(format!("Gateway {}/{gw} does not exist", r.namespace)),
        Some(g) if g.pointer("/status/phase").and_then(Value::as_str) != Some("Ready") => {
            waiting_for.push(format!(
                "Gateway {}/{gw} is not Ready (phase {})",
                r.namespace,
                g.pointer("/status/phase").and_then(Value::as_str).unwrap_or("unset")
            ))
        }
        Some(g) => {
            let endpoint = g.pointer("/status/endpoint").and_then(Value::as_str).unwrap_or_default();
            values["envVars"] = json!({"OPENAI_BASE_URL": format!("{endpoint}/v1")});
            // The Gateway's master key is the key chat-ui calls it with:
            // by reference, the Secret the Gateway itself reads.
            let gspec: GatewaySpec = serde_json::from_value(g["spec"].clone()).map_err(|e| SpecError {
                field: "spec.gatewayRef".into(),
                message: format!("Gateway {gw}: {e}"),
            })?;
            let gateway = Resource {
                kind: "Gateway".into(),
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
/// must be `MEILI_MASTER_KEY` (a vault value is written under that name).
const MEILI_KEY: &str = "MEILI_MASTER_KEY";

fn meilisearch(r: &Resource, release: String) -> Result<Workload, SpecError> {
    let spec: MeilisearchInstanceSpec = parse_spec(&r.spec)?;
    let key = resolve_as(r, "spec.masterKey", &dns_label("master-key"), &spec.master_key, MEILI_KEY)?;
    if key.key_ref.key != MEILI_KEY {
        return Err(SpecError {
            field: "spec.masterKey.secretKeyRef.key".into(),
            message: format!(
                "is {:?}: the meilisearch chart reads the Secret whole as environment, so the key must be {MEILI_KEY}",
                key.key_ref.key
            ),
        });
    }
    let mut values = json!({
        "environment": {"MEILI_ENV": "production"},
        "auth": {"existingMasterKeySecret": key.key_ref.name},
        "persistence": {"enabled": true, "size": spec.persistence.size.clone().unwrap_or_else(|| "10Gi".into())},
    });
    if let Some(class) = spec.persistence.storage_class.as_ref().filter(|c| !c.is_empty()) {
        values["persistence"]["storageClass"] = json!(class);
    }
    merge(&mut values, &Value::Object(spec.values));
    Ok(Workload {
        release,
        values,
        emit: key.emit.into_iter().collect(),
        ready_when: vec![key.ready_when],
        waiting_for: vec![],
    })
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
        assert_eq!(references(&r), [("Gateway".to_string(), "team-gw".to_string())]);
        let w = realise(&r, "chat-ui", &Inputs::default()).unwrap();
        assert_eq!(w.release, "chat-ui-web");
        assert_eq!(w.waiting_for, ["Gateway team-a/team-gw does not exist"]);
        let mut inputs = Inputs::default();
        inputs.references.insert(
            ("Gateway".into(), "team-gw".into()),
            json!({"spec": {"masterKey": {"secretKeyRef": {"name": "litellm-master", "key": "key"}}},
                   "status": {"phase": "Ready", "endpoint": "http://team-gw.team-a.svc:4000"}}),
        );
        let w = realise(&r, "chat-ui", &inputs).unwrap();
        assert!(w.waiting_for.is_empty());
        assert_eq!(w.values["envVars"]["OPENAI_BASE_URL"], "http://team-gw.team-a.svc:4000/v1");
        assert_eq!(w.values["envVars"]["PUBLIC_APP_NAME"], "Navique", "the user's values merge over ours");
        assert_eq!(w.values["replicas"], 2, "and win");
        assert_eq!(
            w.values["extraEnv"][0]["valueFrom"]["secretKeyRef"],
            json!({"name": "litellm-master", "key": "key"})
        );
    }

    #[test]
    fn meilisearch_uses_the_master_key_secret_and_names_a_wrong_key() {
        let r = Resource::for_test(
            "MeilisearchInstance",
            "search",
            "u-6",
            json!({"masterKey": {"secretKeyRef": {"name": "meili", "key": "MEILI_MASTER_KEY"}}, "persistence": {"size": "5Gi"}}),
        );
        let w = realise(&r, "meilisearch", &Inputs::default()).unwrap();
        assert_eq!(w.release, "meilisearch-search");
        assert_eq!(w.values["auth"]["existingMasterKeySecret"], "meili");
        assert_eq!(w.values["persistence"], json!({"enabled": true, "size": "5Gi"}));
        assert_eq!(w.values["environment"]["MEILI_ENV"], "production");
        let bad = Resource::for_test(
            "MeilisearchInstance",
            "search",
            "u-6",
            json!({"masterKey": {"secretKeyRef": {"name": "meili", "key": "key"}}}),
        );
        assert_eq!(
            realise(&bad, "meilisearch", &Inputs::default()).unwrap_err().field,
            "spec.masterKey.secretKeyRef.key"
        );
        let vault = Resource::for_test(
            "MeilisearchInstance",
            "search",
            "u-6",
            json!({"masterKey": {"vault": {"store": "corp", "path": "p", "property": "k"}}}),
        );
        let w = realise(&vault, "meilisearch", &Inputs::default()).unwrap();
        assert_eq!(w.emit[0]["spec"]["data"][0]["secretKey"], "MEILI_MASTER_KEY");
        assert_eq!(w.values["auth"]["existingMasterKeySecret"], "search-master-key");
    }

    #[test]
    fn merge_is_helms() {
        let mut base = json!({"a": {"b": 1, "c": [1]}, "d": 1});
        merge(&mut base, &json!({"a": {"c": [2], "e": 3, "b": null}, "d": {"x": 1}}));
        assert_eq!(base, json!({"a": {"c": [2], "e": 3}, "d": {"x": 1}}));
    }
}
