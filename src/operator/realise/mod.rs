//! Per kind, spec + references -> what the resource asks for: the
//! capabilities it needs, the upstream objects to emit, where its
//! connection Secret is, and what makes it Ready. Pure.

pub mod postgres;

use serde_json::Value;

/// A spec the operator cannot realise, naming the field.
#[derive(Clone, Debug, PartialEq)]
pub struct SpecError {
    pub field: String,
    pub message: String,
}

impl std::fmt::Display for SpecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

/// Parses a spec into its type; errors name the field by its path.
pub fn parse_spec<T: serde::de::DeserializeOwned>(spec: &Value) -> Result<T, SpecError> {
    serde_path_to_error::deserialize(spec).map_err(|e| {
        let path = e.path().to_string();
        SpecError {
            field: if path == "." {
                "spec".into()
            } else {
                format!("spec.{path}")
            },
            message: e.into_inner().to_string(),
        }
    })
}

/// What makes a realised resource Ready.
#[derive(Clone, Debug, PartialEq)]
pub enum ReadyWhen {
    /// This object (emitted or adopted) reports condition Ready=True.
    ConditionReady {
        api_version: String,
        kind: String,
        name: String,
    },
    /// This Secret exists with these keys.
    SecretKeys { name: String, keys: Vec<String> },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Realised {
    pub needs: Vec<String>,
    pub emit: Vec<Value>,
    pub connection_secret: String,
    pub ready_when: ReadyWhen,
    pub mode: super::api::Mode,
}

/// Metadata every emitted object carries: our label, the owner label, and
/// an ownerReference to the resource (so deleting it collects them too).
pub fn owned_metadata(
    api_version: &str,
    kind: &str,
    r: &super::observe::Resource,
    name: &str,
) -> Value {
    serde_json::json!({
        "name": name,
        "namespace": r.namespace,
        "labels": {
            super::api::MANAGED_BY_LABEL: super::api::MANAGED_BY,
            },
        "annotations": {
            super::api::OWNER_ANNOTATION: format!("{}/{}/{}", r.kind, r.namespace, r.name),
        },
        "ownerReferences": [{
            "apiVersion": api_version,
            "kind": kind,
            "name": r.name,
            "uid": r.uid,
            "controller": true,
            "blockOwnerDeletion": true,
        }],
    })
}
