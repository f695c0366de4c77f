//! `SecretSource` -> the Secret key a workload reads: the user's Secret
//! (`secretKeyRef`), or one an ExternalSecret of ours materialises from the
//! vault a `SecretsManagement` connects (`vault`). Secret values are never
//! read or copied here: only references travel.

use super::{owned_metadata, ReadyWhen, SpecError};
use crate::operator::api::{SecretKeyRef, SecretSource};
use crate::operator::model::snapshot::Resource;
use serde_json::{json, Value};

pub const EXTERNAL_SECRETS_API_VERSION: &str = "external-secrets.io/v1";
/// The key our ExternalSecrets write their one value under.
pub const VALUE_KEY: &str = "value";

/// The ClusterSecretStore a `SecretsManagement` named `store` emits.
pub fn store_name(store: &str) -> String {
    format!("navique-{store}")
}

/// What a SecretSource becomes.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    pub key_ref: SecretKeyRef,
    /// The ExternalSecret to emit, for a vault source.
    pub emit: Option<Value>,
    pub ready_when: ReadyWhen,
    /// The SecretsManagement (cluster-scoped) it needs, for a vault source.
    pub store: Option<String>,
}

/// `purpose` names the use (`master-key`, `model-gpt-4o`): the
/// ExternalSecret and its Secret are `<resource>-<purpose>`.
pub fn resolve(
    r: &Resource,
    field: &str,
    purpose: &str,
    source: &SecretSource,
) -> Result<Resolved, SpecError> {
    resolve_as(r, field, purpose, source, VALUE_KEY)
}

/// As `resolve`, with the key a vault value is written under.
pub fn resolve_as(
    r: &Resource,
    field: &str,
    purpose: &str,
    source: &SecretSource,
    vault_key: &str,
) -> Result<Resolved, SpecError> {
    match (&source.secret_key_ref, &source.vault) {
        (Some(k), None) => Ok(Resolved {
            key_ref: k.clone(),
            emit: None,
            ready_when: ReadyWhen::SecretKeys {
                name: k.name.clone(),
                keys: vec![k.key.clone()],
            },
            store: None,
        }),
        (None, Some(v)) => {
            let name = format!("{}-{purpose}", r.name);
            let external_secret = json!({
                "apiVersion": EXTERNAL_SECRETS_API_VERSION,
                "kind": "ExternalSecret",
                "metadata": owned_metadata(crate::operator::api::API_VERSION, r.kind.as_str(), r, &name),
                "spec": {
                    "secretStoreRef": {"kind": "ClusterSecretStore", "name": store_name(&v.store)},
                    "target": {"name": name, "creationPolicy": "Owner"},
                    "data": [{"secretKey": vault_key, "remoteRef": {"key": v.path, "property": v.property}}],
                },
            });
            Ok(Resolved {
                key_ref: SecretKeyRef {
                    name: name.clone(),
                    key: vault_key.into(),
                },
                emit: Some(external_secret),
                ready_when: ReadyWhen::ConditionReady {
                    api_version: EXTERNAL_SECRETS_API_VERSION.into(),
                    kind: "ExternalSecret".into(),
                    name,
                },
                store: Some(v.store.clone()),
            })
        }
        _ => Err(SpecError {
            field: field.into(),
            message: "exactly one of secretKeyRef or vault must be set".into(),
        }),
    }
}

/// A Kubernetes object name from free text: lowercase alphanumerics and
/// dashes, at most 63 characters.
pub fn dns_label(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let out = out.trim_matches('-');
    out.chars()
        .take(63)
        .collect::<String>()
        .trim_end_matches('-')
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operator::api::VaultRef;

    #[test]
    fn a_secret_key_ref_is_used_as_is_and_a_vault_one_becomes_an_external_secret() {
        let r = Resource::for_test("Gateway", "team-gw", "u-1", json!({}));
        let own = resolve(
            &r,
            "spec.masterKey",
            "master-key",
            &SecretSource {
                secret_key_ref: Some(SecretKeyRef {
                    name: "m".into(),
                    key: "k".into(),
                }),
                vault: None,
            },
        )
        .unwrap();
        assert_eq!(
            own.key_ref,
            SecretKeyRef {
                name: "m".into(),
                key: "k".into()
            }
        );
        assert!(own.emit.is_none() && own.store.is_none());
        let vault = resolve(
            &r,
            "spec.masterKey",
            "master-key",
            &SecretSource {
                secret_key_ref: None,
                vault: Some(VaultRef {
                    store: "corp".into(),
                    path: "ai/litellm".into(),
                    property: "key".into(),
                }),
            },
        )
        .unwrap();
        assert_eq!(vault.key_ref.name, "team-gw-master-key");
        let es = vault.emit.unwrap();
        assert_eq!(es["spec"]["secretStoreRef"]["name"], "navique-corp");
        assert_eq!(
            es["spec"]["data"][0]["remoteRef"],
            json!({"key": "ai/litellm", "property": "key"})
        );
        assert_eq!(es["metadata"]["ownerReferences"][0]["kind"], "Gateway");
        assert_eq!(vault.store.as_deref(), Some("corp"));
        let e = resolve(
            &r,
            "spec.masterKey",
            "x",
            &SecretSource {
                secret_key_ref: None,
                vault: None,
            },
        )
        .unwrap_err();
        assert_eq!(e.field, "spec.masterKey");
    }

    #[test]
    fn names_from_free_text() {
        assert_eq!(dns_label("GPT-4o"), "gpt-4o");
        assert_eq!(dns_label("claude 3.5/sonnet"), "claude-3-5-sonnet");
        assert_eq!(dns_label("--x--"), "x");
        assert_eq!(dns_label(&"a".repeat(80)).len(), 63);
    }
}
