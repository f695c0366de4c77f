//! Per kind, spec + references -> what the resource asks for: the
//! capabilities it needs, the upstream objects to emit, where its
//! connection Secret is, and what makes it Ready. Pure.

pub mod clickhouse;
pub mod gateway;
pub mod postgres;
pub mod schema;
pub mod secrets;
pub mod secrets_management;
pub mod workload;

use crate::operator::api::Mode;
use crate::operator::model::snapshot::Resource;
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

/// One thing a realised resource waits for before it is Ready.
#[derive(Clone, Debug, PartialEq)]
pub enum ReadyWhen {
    /// This object (emitted or adopted) reports condition Ready=True.
    ConditionReady {
        api_version: String,
        kind: String,
        name: String,
    },
    /// This object's field at `pointer` holds `value` (Altinity's
    /// `status.status: Completed`).
    StatusEquals {
        api_version: String,
        kind: String,
        name: String,
        pointer: String,
        value: String,
    },
    /// This Secret exists with these keys.
    SecretKeys { name: String, keys: Vec<String> },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Realised {
    pub needs: Vec<String>,
    pub emit: Vec<Value>,
    /// All of them, in order (the first unmet one is what status reports).
    pub ready_when: Vec<ReadyWhen>,
    /// The kind's own status fields (`connectionSecret`, `mode`, `type`,
    /// `endpoint`).
    pub status: serde_json::Map<String, Value>,
    /// References that are missing or not Ready: nothing is emitted while
    /// any is, and the resource waits (never fails) naming them.
    pub waiting_for: Vec<String>,
}

impl Realised {
    pub fn connection_secret(&self) -> Option<&str> {
        self.status.get("connectionSecret").and_then(Value::as_str)
    }
}

/// A datastore given as a connection Secret: nothing to install or emit;
/// Ready when the Secret holds these keys.
pub fn external(secret: String, keys: &[&str]) -> Realised {
    Realised {
        needs: vec![],
        emit: vec![],
        status: datastore_status(&secret, Mode::External),
        ready_when: vec![ReadyWhen::SecretKeys {
            name: secret,
            keys: keys.iter().map(|k| k.to_string()).collect(),
        }],
        waiting_for: vec![],
    }
}

/// The kind's own status fields every datastore reports.
pub fn datastore_status(connection_secret: &str, mode: Mode) -> serde_json::Map<String, Value> {
    let mut m = serde_json::Map::new();
    m.insert(
        "connectionSecret".into(),
        Value::String(connection_secret.into()),
    );
    m.insert("mode".into(), Value::String(mode.as_str().into()));
    m
}

/// A value realise needs from the cluster and cannot compute: the password
/// of a connection Secret we write. The controller reads it (or makes a
/// fresh one) and passes it in, so realise stays a function of its inputs
/// and a converged reconcile rewrites nothing.
#[derive(Clone, Debug, PartialEq)]
pub enum PasswordSource {
    None,
    /// Keep what this Secret of ours holds under `key`; generate one if it
    /// does not exist yet.
    Keep {
        secret: String,
        key: String,
    },
    /// The password the adopted object names (a Secret it references).
    Adopted {
        api_version: String,
        kind: String,
        name: String,
    },
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Inputs {
    pub password: Option<String>,
    /// The resources `references` named, by (kind, name), as found (absent:
    /// not found).
    pub references: std::collections::BTreeMap<(String, String), Value>,
    /// The values of the Secret `generated` names, kept or fresh, by key.
    pub generated: std::collections::BTreeMap<String, String>,
    /// Non-secret keys (host, ports, user and database names) of the
    /// referenced datastores' connection Secrets, by Secret name.
    pub connection: std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>>,
    /// Values of referenced Secret keys that the resource copies into a
    /// Secret of its own, by (Secret name, key); absent: not there (yet).
    pub copied: std::collections::BTreeMap<(String, String), String>,
}

/// How a generated value is made.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Generated {
    Alphanumeric(usize),
    Hex(usize),
}

/// A Secret of ours whose values are generated once and then kept: its
/// name and keys.
pub fn generated(r: &Resource) -> Option<(String, Vec<(&'static str, Generated)>)> {
    match r.kind.as_str() {
        "Observability" => Some(workload::observability_generated(r)),
        _ => None,
    }
}

/// The keys of a connection Secret that are not secret.
pub const CONNECTION_FIELDS: &[&str] = &[
    "host",
    "port",
    "username",
    "dbname",
    "httpPort",
    "nativePort",
    "database",
];

/// Our kinds realised as emitted objects (one controller each).
pub const EMITTING_KINDS: &[&str] = &[
    "PostgresCluster",
    "ClickHouseCluster",
    "Gateway",
    "SecretsManagement",
];

/// Our resources a resource's realisation reads, as (kind, name): in its
/// namespace, or cluster-scoped for SecretsManagement.
pub fn references(r: &Resource) -> Vec<(String, String)> {
    match r.kind.as_str() {
        "Gateway" => gateway::references(r),
        "ChatUI" | "MeilisearchInstance" | "Observability" => workload::references(r),
        _ => vec![],
    }
}

pub fn realise(r: &Resource, inputs: &Inputs) -> Result<Realised, SpecError> {
    schema::check(&r.kind, &r.spec)?;
    match r.kind.as_str() {
        "PostgresCluster" => postgres::realise(r),
        "ClickHouseCluster" => clickhouse::realise(r, inputs),
        "Gateway" => gateway::realise(r, inputs),
        "SecretsManagement" => secrets_management::realise(r),
        other => Err(SpecError {
            field: "kind".into(),
            message: format!("{other} is not realised by a datastore controller"),
        }),
    }
}

pub fn password_source(r: &Resource) -> PasswordSource {
    match r.kind.as_str() {
        "ClickHouseCluster" => clickhouse::password_source(r),
        _ => PasswordSource::None,
    }
}

/// The CRD's CEL rule, checked again here: API servers without CEL (and
/// objects written before the CRD had it) must not get half a realisation.
pub fn check_blocks(
    mode: Mode,
    managed: bool,
    adopt: bool,
    external: bool,
) -> Result<(), SpecError> {
    let mode = mode.as_str();
    for (block, set) in [
        ("managed", managed),
        ("adopt", adopt),
        ("external", external),
    ] {
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

/// Metadata every emitted object carries: our label, the owner label, and
/// an ownerReference to the resource (so deleting it collects them too).
pub fn owned_metadata(
    api_version: &str,
    kind: &str,
    r: &crate::operator::model::snapshot::Resource,
    name: &str,
) -> Value {
    serde_json::json!({
        "name": name,
        "namespace": r.namespace,
        "labels": {
            crate::operator::api::MANAGED_BY_LABEL: crate::operator::api::MANAGED_BY,
            },
        "annotations": {
            crate::operator::api::OWNER_ANNOTATION: format!("{}/{}/{}", r.kind, r.namespace, r.name),
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
