//! SecretsManagement -> the ClusterSecretStore `navique-<name>` through
//! which external-secrets reads the vault; `SecretSource.vault` anywhere
//! then names it (see `secrets.rs`).

use super::secrets::{store_name, EXTERNAL_SECRETS_API_VERSION};
use super::{owned_metadata, parse_spec, ReadyWhen, Realised, SpecError};
use crate::operator::api::secrets::SecretsManagementSpec;
use crate::operator::model::snapshot::Resource;
use base64::Engine;
use serde_json::json;

pub fn realise(r: &Resource) -> Result<Realised, SpecError> {
    let spec: SecretsManagementSpec = parse_spec(&r.spec)?;
    let v = spec.vault;
    let auth = match (&v.auth.kubernetes, &v.auth.token_secret_ref) {
        (Some(k), None) => json!({"kubernetes": {"mountPath": k.mount_path, "role": k.role}}),
        (None, Some(t)) => {
            json!({"tokenSecretRef": {"namespace": t.namespace, "name": t.name, "key": t.key}})
        }
        _ => {
            return Err(SpecError {
                field: "spec.vault.auth".into(),
                message: "exactly one of kubernetes or tokenSecretRef must be set".into(),
            })
        }
    };
    let mut vault = json!({"server": v.server, "path": v.path, "version": v.version, "auth": auth});
    if let Some(ca) = v.ca_bundle.as_ref().filter(|c| !c.is_empty()) {
        // external-secrets takes the PEM's bytes, base64-encoded.
        vault["caBundle"] = json!(base64::engine::general_purpose::STANDARD.encode(ca));
    }
    let name = store_name(&r.name);
    let mut metadata = owned_metadata(
        crate::operator::api::API_VERSION,
        "SecretsManagement",
        r,
        &name,
    );
    metadata
        .as_object_mut()
        .expect("an object")
        .remove("namespace");
    let store = json!({
        "apiVersion": EXTERNAL_SECRETS_API_VERSION,
        "kind": "ClusterSecretStore",
        "metadata": metadata,
        "spec": {"provider": {"vault": vault}},
    });
    let mut status = serde_json::Map::new();
    status.insert("store".into(), json!(name));
    Ok(Realised {
        needs: vec!["external-secrets".into()],
        emit: vec![store],
        ready_when: vec![ReadyWhen::ConditionReady {
            api_version: EXTERNAL_SECRETS_API_VERSION.into(),
            kind: "ClusterSecretStore".into(),
            name,
        }],
        status,
        waiting_for: vec![],
    })
}

/// SecretsManagement: an external-secrets ClusterSecretStore.
pub struct SecretsManagement;

impl super::Realise for SecretsManagement {
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

    fn sm(spec: Value) -> Resource {
        let mut r = Resource::for_test("SecretsManagement", "corp", "u-3", spec);
        r.namespace = String::new();
        r
    }

    #[test]
    fn a_cluster_secret_store_for_the_vault() {
        let x = realise(&sm(json!({"vault": {"server": "https://vault.example:8200", "path": "secret",
            "caBundle": "-----BEGIN CERTIFICATE-----\n", "auth": {"kubernetes": {"mountPath": "kubernetes", "role": "navique"}}}})))
        .unwrap();
        assert_eq!(x.needs, ["external-secrets"]);
        let s = &x.emit[0];
        assert_eq!(s["kind"], "ClusterSecretStore");
        assert_eq!(s["metadata"]["name"], "navique-corp");
        assert!(s["metadata"].get("namespace").is_none(), "cluster-scoped");
        let v = &s["spec"]["provider"]["vault"];
        assert_eq!(v["version"], "v2");
        assert_eq!(v["auth"]["kubernetes"]["role"], "navique");
        assert_eq!(v["caBundle"], "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==");
        assert_eq!(x.status["store"], "navique-corp");
    }

    #[test]
    fn auth_must_be_one_of_two() {
        let e = realise(&sm(
            json!({"vault": {"server": "s", "path": "p", "auth": {}}}),
        ))
        .unwrap_err();
        assert_eq!(e.field, "spec.vault.auth");
        let e = realise(&sm(json!({"vault": {"path": "p", "auth": {}}}))).unwrap_err();
        assert!(e.message.contains("server"), "{e}");
    }
}
