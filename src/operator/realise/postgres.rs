//! PostgresCluster -> a CNPG Cluster (managed), a reference to the user's
//! Cluster (adopt), or a connection Secret (external).

use super::{owned_metadata, parse_spec, ReadyWhen, Realised, SpecError};
use crate::operator::api::postgres::{PostgresClusterSpec, EXTERNAL_KEYS};
use crate::operator::api::Mode;
use crate::operator::observe::Resource;
use serde_json::{json, Value};

pub const CNPG_API_VERSION: &str = "postgresql.cnpg.io/v1";

pub fn realise(r: &Resource) -> Result<Realised, SpecError> {
    let spec: PostgresClusterSpec = parse_spec(&r.spec)?;
    check_blocks(&spec)?;
    Ok(match spec.mode {
        Mode::Managed => {
            let m = spec.managed.expect("checked");
            let mut cluster_spec = json!({
                "instances": m.instances,
                "storage": {"size": m.storage.size.clone().unwrap_or_else(|| "1Gi".into())},
                "bootstrap": {"initdb": {
                    "database": m.database.clone().unwrap_or_else(|| "app".into()),
                    "owner": m.owner.clone().unwrap_or_else(|| "app".into()),
                }},
            });
            if let Some(class) = m.storage.storage_class.as_ref().filter(|c| !c.is_empty()) {
                cluster_spec["storage"]["storageClass"] = json!(class);
            }
            if let Some(image) = m.image_name.as_ref().filter(|i| !i.is_empty()) {
                cluster_spec["imageName"] = json!(image);
            }
            if !m.parameters.is_empty() {
                cluster_spec["postgresql"] = json!({"parameters": m.parameters});
            }
            let cluster = json!({
                "apiVersion": CNPG_API_VERSION,
                "kind": "Cluster",
                "metadata": owned_metadata(crate::operator::api::API_VERSION, "PostgresCluster", r, &r.name),
                "spec": cluster_spec,
            });
            Realised {
                needs: vec!["cloudnative-pg".into()],
                emit: vec![cluster],
                connection_secret: format!("{}-app", r.name),
                ready_when: ReadyWhen::ConditionReady {
                    api_version: CNPG_API_VERSION.into(),
                    kind: "Cluster".into(),
                    name: r.name.clone(),
                },
                mode: Mode::Managed,
            }
        }
        Mode::Adopt => {
            let name = spec.adopt.expect("checked").cluster_ref.name;
            Realised {
                needs: vec![],
                emit: vec![],
                connection_secret: format!("{name}-app"),
                ready_when: ReadyWhen::ConditionReady {
                    api_version: CNPG_API_VERSION.into(),
                    kind: "Cluster".into(),
                    name,
                },
                mode: Mode::Adopt,
            }
        }
        Mode::External => {
            let name = spec.external.expect("checked").connection_secret_ref.name;
            Realised {
                needs: vec![],
                emit: vec![],
                connection_secret: name.clone(),
                ready_when: ReadyWhen::SecretKeys {
                    name,
                    keys: EXTERNAL_KEYS.iter().map(|k| k.to_string()).collect(),
                },
                mode: Mode::External,
            }
        }
    })
}

/// The CRD's CEL rule, checked again here: API servers without CEL (and
/// objects written before the CRD had it) must not get half a realisation.
fn check_blocks(spec: &PostgresClusterSpec) -> Result<(), SpecError> {
    let blocks = [
        ("managed", spec.managed.is_some()),
        ("adopt", spec.adopt.is_some()),
        ("external", spec.external.is_some()),
    ];
    let mode = spec.mode.as_str();
    for (block, set) in blocks {
        if block == mode && !set {
            return Err(SpecError {
                field: format!("spec.{block}"),
                message: format!("mode is {mode}, so spec.{block} is required"),
            });
        }
        if block != mode && set {
            return Err(SpecError {
                field: format!("spec.{block}"),
                message: format!("mode is {mode}, so spec.{block} must not be set"),
            });
        }
    }
    Ok(())
}

/// Why an external connection Secret is not usable yet, naming the key.
pub fn missing_keys(secret: Option<&Value>, keys: &[String]) -> Vec<String> {
    let data = secret
        .and_then(|s| s.get("data"))
        .and_then(Value::as_object);
    let string_data = secret
        .and_then(|s| s.get("stringData"))
        .and_then(Value::as_object);
    keys.iter()
        .filter(|k| {
            !data.is_some_and(|d| d.contains_key(k.as_str()))
                && !string_data.is_some_and(|d| d.contains_key(k.as_str()))
        })
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pg(spec: Value) -> Resource {
        Resource::for_test("PostgresCluster", "app-db", "u-1", spec)
    }

    #[test]
    fn managed_emits_a_cnpg_cluster_owned_by_the_resource() {
        let r = realise(&pg(json!({"mode": "managed", "managed": {"instances": 3, "storage": {"size": "5Gi"}, "parameters": {"max_connections": "200"}}}))).unwrap();
        assert_eq!(r.needs, ["cloudnative-pg"]);
        assert_eq!(r.connection_secret, "app-db-app");
        let c = &r.emit[0];
        assert_eq!(c["spec"]["instances"], 3);
        assert_eq!(c["spec"]["storage"]["size"], "5Gi");
        assert_eq!(
            c["spec"]["bootstrap"]["initdb"],
            json!({"database": "app", "owner": "app"})
        );
        assert_eq!(
            c["spec"]["postgresql"]["parameters"]["max_connections"],
            "200"
        );
        assert_eq!(c["metadata"]["ownerReferences"][0]["uid"], "u-1");
        assert_eq!(
            c["metadata"]["labels"]["app.kubernetes.io/managed-by"],
            "navique-ai-core-operator"
        );
    }

    #[test]
    fn adopt_and_external_emit_nothing_and_need_nothing() {
        let a = realise(&pg(
            json!({"mode": "adopt", "adopt": {"clusterRef": {"name": "legacy-db"}}}),
        ))
        .unwrap();
        assert!(a.needs.is_empty() && a.emit.is_empty());
        assert_eq!(a.connection_secret, "legacy-db-app");
        let e = realise(&pg(
            json!({"mode": "external", "external": {"connectionSecretRef": {"name": "pg-conn"}}}),
        ))
        .unwrap();
        assert_eq!(e.connection_secret, "pg-conn");
        assert!(matches!(e.ready_when, ReadyWhen::SecretKeys { ref keys, .. } if keys.len() == 5));
    }

    #[test]
    fn bad_specs_name_the_field() {
        let e = realise(&pg(json!({"mode": "managed"}))).unwrap_err();
        assert_eq!(e.field, "spec.managed");
        let e = realise(&pg(json!({"mode": "sideways"}))).unwrap_err();
        assert_eq!(e.field, "spec.mode");
        assert!(
            e.message.contains("sideways") && e.message.contains("managed"),
            "{e}"
        );
        let e = realise(&pg(
            json!({"mode": "managed", "managed": {"instances": "three"}}),
        ))
        .unwrap_err();
        assert_eq!(e.field, "spec.managed.instances");
        let e = realise(&pg(json!({"mode": "external", "external": {"connectionSecretRef": {"name": "x"}}, "managed": {}}))).unwrap_err();
        assert_eq!(e.field, "spec.managed");
        let e = realise(&pg(json!({}))).unwrap_err();
        assert!(e.message.contains("mode"), "{e}");
    }

    #[test]
    fn missing_keys_are_named() {
        let s = json!({"data": {"host": "", "port": "", "username": ""}, "stringData": {"password": "x"}});
        let keys: Vec<String> = EXTERNAL_KEYS.iter().map(|k| k.to_string()).collect();
        assert_eq!(missing_keys(Some(&s), &keys), ["dbname"]);
        assert_eq!(missing_keys(None, &keys).len(), 5);
    }
}
