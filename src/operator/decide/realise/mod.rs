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

use crate::operator::api::{Kind, Mode};
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

/// Why a resource waits for another it references (a datastore, say):
/// a `waiting_for` reason, never a failure.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum NotYet {
    #[error("{kind} {namespace}/{name} does not exist")]
    Missing {
        kind: Kind,
        namespace: String,
        name: String,
    },
    #[error("{kind} {namespace}/{name} is not Ready (phase {phase})")]
    NotReady {
        kind: Kind,
        namespace: String,
        name: String,
        phase: String,
    },
    #[error("{kind} {namespace}/{name}: its connection Secret {secret} is not readable")]
    SecretUnreadable {
        kind: Kind,
        namespace: String,
        name: String,
        secret: String,
    },
}

/// The connection Secret's name of the referenced datastore `kind`/`name`
/// in `r`'s namespace, once it is Ready.
pub fn ready_connection_secret<'a>(
    r: &Resource,
    inputs: &'a Inputs,
    kind: Kind,
    name: &str,
) -> Result<&'a str, NotYet> {
    let (namespace, name) = (r.namespace.clone(), name.to_string());
    let Some(found) = inputs.references.get(&(kind, name.clone())) else {
        return Err(NotYet::Missing {
            kind,
            namespace,
            name,
        });
    };
    let phase = found.pointer("/status/phase").and_then(Value::as_str);
    if phase != Some("Ready") {
        let phase = phase.unwrap_or("unset").to_string();
        return Err(NotYet::NotReady {
            kind,
            namespace,
            name,
            phase,
        });
    }
    Ok(found
        .pointer("/status/connectionSecret")
        .and_then(Value::as_str)
        .unwrap_or_default())
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
    pub references: std::collections::BTreeMap<(Kind, String), Value>,
    /// The values of the Secret `generated` names, kept or fresh, by key.
    pub generated: std::collections::BTreeMap<String, String>,
    /// Non-secret keys (host, ports, user and database names) of the
    /// referenced datastores' connection Secrets, by Secret name.
    pub connection: std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>>,
    /// Values of referenced Secret keys that the resource copies into a
    /// Secret of its own, by (Secret name, key); absent: not there (yet).
    pub copied: std::collections::BTreeMap<(String, String), String>,
    /// The catalog's release name prefix, for a kind realised as a release.
    pub release_prefix: String,
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
    of(r.kind).and_then(|k| k.generated(r))
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

/// What one kind makes of its spec: one implementation per kind, found by
/// [`of`]. Everything here is pure; what it needs from the cluster comes in
/// as [`Inputs`], read by the controller first.
pub trait Realise: Sync {
    /// Our resources the realisation reads, as (kind, name): in the
    /// resource's namespace, or cluster-scoped (SecretsManagement).
    fn references(&self, _r: &Resource) -> Vec<(Kind, String)> {
        vec![]
    }

    /// Where the password of the connection Secret we write comes from.
    fn password_source(&self, _r: &Resource) -> PasswordSource {
        PasswordSource::None
    }

    /// A Secret of ours whose values are generated once and then kept.
    fn generated(&self, _r: &Resource) -> Option<(String, Vec<(&'static str, Generated)>)> {
        None
    }

    /// Referenced Secret keys copied into a Secret of ours, as (Secret, key).
    fn copied_keys(&self, _r: &Resource) -> Vec<(String, String)> {
        vec![]
    }

    /// What the resource asks for, from a spec its schema accepts and the
    /// inputs.
    fn realise_spec(&self, r: &Resource, inputs: &Inputs) -> Result<Realisation, SpecError>;

    /// The spec, checked against the CRD's schema again (API servers without
    /// CEL, objects written before the CRD had a rule), then realised.
    fn realise(&self, r: &Resource, inputs: &Inputs) -> Result<Realisation, SpecError> {
        schema::check(r.kind.as_str(), &r.spec)?;
        self.realise_spec(r, inputs)
    }
}

/// What a resource asks for, by how its kind is carried out.
#[derive(Clone, Debug, PartialEq)]
pub enum Realisation {
    /// Upstream objects to emit (a CNPG Cluster, a LiteLLM proxy).
    Objects(Realised),
    /// A Helm release of a bundled workload chart.
    Release(workload::Workload),
}

/// The one place kinds meet their realisation.
pub fn of(kind: Kind) -> Option<&'static dyn Realise> {
    Some(match kind {
        Kind::PostgresCluster => &postgres::Postgres,
        Kind::ClickHouseCluster => &clickhouse::ClickHouse,
        Kind::Gateway => &gateway::Gateway,
        Kind::SecretsManagement => &secrets_management::SecretsManagement,
        Kind::ChatUI => &workload::ChatUi,
        Kind::MeilisearchInstance => &workload::Meilisearch,
        Kind::Observability => &workload::Observability,
        Kind::Capability => return None,
    })
}

/// Our resources a resource's realisation reads, as (kind, name).
pub fn references(r: &Resource) -> Vec<(Kind, String)> {
    of(r.kind).map(|k| k.references(r)).unwrap_or_default()
}

/// The objects an emitting kind asks for.
pub fn realise(r: &Resource, inputs: &Inputs) -> Result<Realised, SpecError> {
    match of(r.kind).map(|k| k.realise(r, inputs)).transpose()? {
        Some(Realisation::Objects(x)) => Ok(x),
        _ => Err(SpecError {
            field: "kind".into(),
            message: format!("{} is not realised by a datastore controller", r.kind),
        }),
    }
}

pub fn password_source(r: &Resource) -> PasswordSource {
    of(r.kind)
        .map(|k| k.password_source(r))
        .unwrap_or(PasswordSource::None)
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
