//! Manifests as objects: kind, name, namespace, body.

use crate::chart::manifest::split_documents;
use serde_json::Value;

/// Why a manifest does not read as objects, in Helm's words.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ObjectsError {
    #[error("error parsing manifest: {0}")]
    Yaml(#[source] crate::goyaml::YamlError),
    /// A document without apiVersion or kind; holds the document.
    #[error("error validating data: apiVersion and kind must be set in:\n{0}")]
    NoKind(String),
}

#[derive(Debug, Clone, Default)]
pub struct Object {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    /// Empty for cluster-scoped objects (set once the scope is known).
    pub namespace: String,
    pub body: Value,
}

impl Object {
    pub fn describe(&self) -> String {
        if self.namespace.is_empty() {
            format!("{} {:?}", self.kind, self.name)
        } else {
            format!(
                "{} {:?} in namespace {:?}",
                self.kind, self.name, self.namespace
            )
        }
    }

    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.body
            .pointer("/metadata/annotations")
            .and_then(|a| a.get(key))
            .and_then(Value::as_str)
    }

    pub fn key(&self) -> (String, String, String, String) {
        let group = self
            .api_version
            .rsplit_once('/')
            .map(|(g, _)| g)
            .unwrap_or("")
            .to_string();
        (
            group,
            self.kind.clone(),
            self.namespace.clone(),
            self.name.clone(),
        )
    }
}

/// YAML documents (a release manifest or rendered templates) to objects;
/// `namespace` fills in objects that name none (cleared later for
/// cluster-scoped kinds).
pub fn parse_manifest(manifest: &str, namespace: &str) -> Result<Vec<Object>, ObjectsError> {
    let mut out = Vec::new();
    for doc in split_documents(manifest) {
        let map = crate::goyaml::parse_values(&doc).map_err(ObjectsError::Yaml)?;
        if map.is_empty() {
            continue;
        }
        let body = crate::release::record::values_to_json(&map);
        let s = |p: &str| {
            body.pointer(p)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let (api_version, kind, name) = (s("/apiVersion"), s("/kind"), s("/metadata/name"));
        if kind.is_empty() || api_version.is_empty() {
            return Err(ObjectsError::NoKind(doc.to_string()));
        }
        let ns = s("/metadata/namespace");
        out.push(Object {
            api_version,
            kind,
            name,
            namespace: if ns.is_empty() {
                namespace.to_string()
            } else {
                ns
            },
            body,
        });
    }
    Ok(out)
}

/// Objects of `old` that `new` no longer has (what an upgrade deletes).
pub fn removed<'a>(old: &'a [Object], new: &[Object]) -> Vec<&'a Object> {
    old.iter()
        .filter(|o| !new.iter().any(|n| n.key() == o.key()))
        .collect()
}
