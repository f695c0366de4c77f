//! PostgresCluster -> a CNPG Cluster (managed), a reference to the user's
//! Cluster (adopt), or a connection Secret (external).

use super::{
    check_blocks, datastore_status, owned_metadata, parse_spec, ReadyWhen, Realised, SpecError,
};
use crate::operator::api::postgres::{PostgresClusterSpec, EXTERNAL_KEYS};
use crate::operator::api::Mode;
use crate::operator::model::snapshot::Resource;
use serde_json::json;

pub const CNPG_API_VERSION: &str = "postgresql.cnpg.io/v1";

pub fn realise(r: &Resource) -> Result<Realised, SpecError> {
    let spec: PostgresClusterSpec = parse_spec(&r.spec)?;
    check_blocks(
        spec.mode,
        spec.managed.is_some(),
        spec.adopt.is_some(),
        spec.external.is_some(),
    )?;
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
                ready_when: vec![ReadyWhen::ConditionReady {
                    api_version: CNPG_API_VERSION.into(),
                    kind: "Cluster".into(),
                    name: r.name.clone(),
                }],
                status: datastore_status(&format!("{}-app", r.name), Mode::Managed),
                waiting_for: vec![],
            }
        }
        Mode::Adopt => {
            let name = spec.adopt.expect("checked").cluster_ref.name;
            Realised {
                needs: vec![],
                emit: vec![],
                status: datastore_status(&format!("{name}-app"), Mode::Adopt),
                ready_when: vec![ReadyWhen::ConditionReady {
                    api_version: CNPG_API_VERSION.into(),
                    kind: "Cluster".into(),
                    name,
                }],
                waiting_for: vec![],
            }
        }
        Mode::External => super::external(
            spec.external.expect("checked").connection_secret_ref.name,
            EXTERNAL_KEYS,
        ),
    })
}

/// PostgresCluster: a CloudNativePG Cluster, or an adopted or external one.
pub struct Postgres;

impl super::Realise for Postgres {
    fn realise_spec(
        &self,
        r: &Resource,
        _inputs: &super::Inputs,
    ) -> Result<super::Realisation, SpecError> {
        realise(r).map(super::Realisation::Objects)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn pg(spec: Value) -> Resource {
        Resource::for_test("PostgresCluster", "app-db", "u-1", spec)
    }

    #[test]
    fn every_kind_checks_its_spec_against_the_crd_schema_again() {
        // Parses (an i32), but the schema's minimum refuses it: an API
        // server without the rule must not get a CNPG Cluster of 0 instances.
        let r = pg(json!({"mode": "managed", "managed": {"instances": 0}}));
        let e = crate::operator::decide::realise::realise(&r, &Default::default()).unwrap_err();
        assert_eq!(e.field, "spec.managed.instances", "{e}");
    }

    #[test]
    fn managed_emits_a_cnpg_cluster_owned_by_the_resource() {
        let r = realise(&pg(json!({"mode": "managed", "managed": {"instances": 3, "storage": {"size": "5Gi"}, "parameters": {"max_connections": "200"}}}))).unwrap();
        assert_eq!(r.needs, ["cloudnative-pg"]);
        assert_eq!(r.connection_secret(), Some("app-db-app"));
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
        assert_eq!(a.connection_secret(), Some("legacy-db-app"));
        let e = realise(&pg(
            json!({"mode": "external", "external": {"connectionSecretRef": {"name": "pg-conn"}}}),
        ))
        .unwrap();
        assert_eq!(e.connection_secret(), Some("pg-conn"));
        assert!(
            matches!(&e.ready_when[..], [ReadyWhen::SecretKeys { keys, .. }] if keys.len() == 5)
        );
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
        assert_eq!(super::super::missing_keys(Some(&s), &keys), ["dbname"]);
        assert_eq!(super::super::missing_keys(None, &keys).len(), 5);
    }
}
