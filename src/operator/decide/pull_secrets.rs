//! `--image-pull-secret`: which namespaces hold a copy of each pull secret,
//! what a copy looks like, which copies go, and what is reported when a
//! named Secret cannot be copied. The reads and writes are
//! `reconcile/pull_secrets.rs`'s.

use crate::operator::api::{self, Condition, ConditionType, Reason};
use crate::operator::decide::conditions::condition;
use crate::operator::model::snapshot::Snapshot;
use serde_json::{json, Value};
use std::collections::BTreeSet;

/// The only Secret type a kubelet reads as registry credentials in
/// `imagePullSecrets` besides the legacy `dockercfg`; the contract asks for this one.
pub const DOCKER_CONFIG_JSON: &str = "kubernetes.io/dockerconfigjson";
/// Marks a Secret as our copy of a pull secret (with our managed-by label),
/// so copies are listed without touching other Secrets of ours.
pub const COPY_LABEL: &str = "core.navique.com/pull-secret-copy";
/// Where a copy came from, `<namespace>/<name>`.
pub const SOURCE_ANNOTATION: &str = "core.navique.com/copied-from";

/// Why a named pull secret is not (or no longer) copied where it is needed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Problem {
    #[error("image pull secret {namespace}/{name} does not exist")]
    Missing { namespace: String, name: String },
    #[error("image pull secret {namespace}/{name} is of type {found:?}, not {DOCKER_CONFIG_JSON}")]
    WrongType {
        namespace: String,
        name: String,
        found: String,
    },
    #[error("Secret {namespace}/{name} exists and is not our copy of the image pull secret: left as it is")]
    NotOurs { namespace: String, name: String },
    #[error("copying image pull secret {name} into namespace {namespace}: {message}")]
    Failed {
        namespace: String,
        name: String,
        message: String,
    },
}

impl Problem {
    fn reason(&self) -> Reason {
        match self {
            Problem::Missing { .. } => Reason::PullSecretMissing,
            Problem::WrongType { .. } => Reason::PullSecretInvalid,
            Problem::NotOurs { .. } => Reason::NotOurs,
            Problem::Failed { .. } => Reason::Failed,
        }
    }
}

/// Whether the source Secret `namespace/name`, of `type_` when it exists,
/// can be copied.
pub fn check_source(namespace: &str, name: &str, type_: Option<&str>) -> Result<(), Problem> {
    match type_ {
        None => Err(Problem::Missing {
            namespace: namespace.into(),
            name: name.into(),
        }),
        Some(DOCKER_CONFIG_JSON) => Ok(()),
        Some(found) => Err(Problem::WrongType {
            namespace: namespace.into(),
            name: name.into(),
            found: found.into(),
        }),
    }
}

/// Whether an existing Secret is a copy of ours (and so ours to update or delete).
pub fn is_our_copy(existing: &Value) -> bool {
    let label = |k: &str| {
        existing
            .pointer("/metadata/labels")
            .and_then(|l| l.get(k))
            .and_then(Value::as_str)
    };
    label(api::MANAGED_BY_LABEL) == Some(api::MANAGED_BY) && label(COPY_LABEL) == Some("true")
}

/// The copy of `source` (a Secret in `source_namespace`) for `namespace`:
/// its type and data, our labels, where it came from.
pub fn copy_of(source: &Value, source_namespace: &str, namespace: &str) -> Value {
    let name = source
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {api::MANAGED_BY_LABEL: api::MANAGED_BY, COPY_LABEL: "true"},
            "annotations": {SOURCE_ANNOTATION: format!("{source_namespace}/{name}")},
        },
        "type": source.get("type").cloned().unwrap_or(Value::Null),
        "data": source.get("data").cloned().unwrap_or_else(|| json!({})),
    })
}

/// Whether `existing` already is `wanted` (the same type, data and source):
/// a converged pass writes nothing.
pub fn is_current(wanted: &Value, existing: &Value) -> bool {
    let empty = json!({});
    let data = |v: &Value| {
        v.get("data")
            .filter(|d| !d.is_null())
            .cloned()
            .unwrap_or(empty.clone())
    };
    let source = |v: &Value| {
        v.pointer(&format!(
            "/metadata/annotations/{}",
            SOURCE_ANNOTATION.replace('/', "~1")
        ))
        .cloned()
    };
    is_our_copy(existing)
        && existing.get("type") == wanted.get("type")
        && data(existing) == data(wanted)
        && source(existing) == source(wanted)
}

/// The copies to write: each source's copy in each needed namespace that
/// the cluster does not hold as it is (`copies`: our copies there now).
pub fn to_write(
    sources: &[Value],
    source_namespace: &str,
    needed: &BTreeSet<String>,
    copies: &[Value],
) -> Vec<Value> {
    let key = |v: &Value| {
        (
            v.pointer("/metadata/namespace")
                .and_then(Value::as_str)
                .map(str::to_string),
            v.pointer("/metadata/name")
                .and_then(Value::as_str)
                .map(str::to_string),
        )
    };
    needed
        .iter()
        .flat_map(|ns| {
            sources
                .iter()
                .map(move |s| copy_of(s, source_namespace, ns))
        })
        .filter(|wanted| {
            !copies
                .iter()
                .any(|c| key(c) == key(wanted) && is_current(wanted, c))
        })
        .collect()
}

/// The namespaces that need copies: those of our live releases, of our
/// resources (until they are gone, so a copy outlives what they emitted)
/// and of the custom resources we emitted; never the operator's own, where
/// the sources are.
pub fn needed_namespaces(snap: &Snapshot, operator_namespace: &str) -> BTreeSet<String> {
    let releases = snap
        .releases
        .iter()
        .filter(|r| r.ours && r.is_live())
        .map(|r| r.namespace.clone());
    let resources = snap.resources.iter().map(|r| r.namespace.clone());
    let emitted = snap.emitted.values().flatten().map(|o| {
        o.pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    });
    releases
        .chain(resources)
        .chain(emitted)
        .filter(|ns| !ns.is_empty() && ns != operator_namespace)
        .collect()
}

/// The copies (namespace, name) to delete: in a namespace nothing of ours
/// needs any more, or of a Secret no longer named by `--image-pull-secret`.
pub fn unwanted(
    copies: &[(String, String)],
    needed: &BTreeSet<String>,
    names: &[String],
) -> Vec<(String, String)> {
    copies
        .iter()
        .filter(|(ns, name)| !needed.contains(ns) || !names.contains(name))
        .cloned()
        .collect()
}

/// The `ImagePullSecrets` condition of what needs the copies in a
/// namespace: True naming them, or False naming each that is not there.
pub fn report(
    old: &[Condition],
    names: &[String],
    problems: &[Problem],
    generation: Option<i64>,
) -> Condition {
    match problems.first() {
        None => condition(
            old,
            ConditionType::ImagePullSecrets,
            true,
            Reason::Copied,
            &format!("copied: {}", names.join(", ")),
            generation,
        ),
        Some(first) => {
            let message = problems
                .iter()
                .map(Problem::to_string)
                .collect::<Vec<_>>()
                .join("; ");
            condition(
                old,
                ConditionType::ImagePullSecrets,
                false,
                first.reason(),
                &message,
                generation,
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operator::model::snapshot::{ReleaseInfo, Resource};

    #[test]
    fn a_source_must_exist_and_be_of_the_docker_config_type() {
        assert_eq!(
            check_source("op", "creds", Some(DOCKER_CONFIG_JSON)),
            Ok(())
        );
        let missing = check_source("op", "creds", None).unwrap_err();
        assert_eq!(
            missing.to_string(),
            "image pull secret op/creds does not exist"
        );
        let wrong = check_source("op", "creds", Some("Opaque")).unwrap_err();
        assert!(wrong.to_string().contains("\"Opaque\""), "{wrong}");
        assert!(wrong.to_string().contains("op/creds"), "{wrong}");
    }

    #[test]
    fn a_copy_carries_the_data_and_type_under_our_labels() {
        let source = json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "creds", "namespace": "op", "uid": "u", "resourceVersion": "7",
                         "labels": {"team": "infra"}},
            "type": DOCKER_CONFIG_JSON, "data": {".dockerconfigjson": "e30="}});
        let copy = copy_of(&source, "op", "team-a");
        assert_eq!(copy["metadata"]["namespace"], "team-a");
        assert_eq!(copy["metadata"]["name"], "creds");
        assert_eq!(copy["data"], source["data"]);
        assert_eq!(copy["type"], DOCKER_CONFIG_JSON);
        assert!(copy["metadata"].get("uid").is_none());
        assert!(is_our_copy(&copy));
        assert_eq!(
            copy["metadata"]["annotations"][SOURCE_ANNOTATION],
            "op/creds"
        );
        assert!(!is_our_copy(&source));
    }

    fn release(ns: &str, ours: bool, status: &str) -> ReleaseInfo {
        ReleaseInfo {
            name: "r".into(),
            namespace: ns.into(),
            revision: 1,
            status: crate::release::Status::parse(status),
            ours,
            chart_version: None,
            inputs: None,
            configured: None,
        }
    }

    #[test]
    fn copies_go_where_our_releases_resources_and_emitted_objects_are() {
        let mut snap = Snapshot {
            releases: vec![
                release("cert-manager", true, "deployed"),
                release("theirs", false, "deployed"),
                release("going", true, "uninstalling"),
                release("op", true, "deployed"),
            ],
            resources: vec![Resource {
                namespace: "team-a".into(),
                ..Resource::for_test("PostgresCluster", "db", "u1", json!({}))
            }],
            ..Default::default()
        };
        snap.emitted.insert(
            "clusters.postgresql.cnpg.io".into(),
            vec![json!({"metadata": {"namespace": "left-over", "name": "x"}})],
        );
        let needed: Vec<String> = needed_namespaces(&snap, "op").into_iter().collect();
        assert_eq!(needed, ["cert-manager", "left-over", "team-a"]);
    }

    #[test]
    fn only_missing_or_changed_copies_are_written() {
        let source = json!({"metadata": {"name": "creds", "namespace": "op"},
            "type": DOCKER_CONFIG_JSON, "data": {".dockerconfigjson": "e30="}});
        let needed = BTreeSet::from(["a".to_string(), "b".to_string(), "c".to_string()]);
        let current = copy_of(&source, "op", "a");
        let mut stale = copy_of(&source, "op", "b");
        stale["data"][".dockerconfigjson"] = json!("b2xk");
        let writes = to_write(&[source], "op", &needed, &[current, stale]);
        let namespaces: Vec<&str> = writes
            .iter()
            .map(|w| w["metadata"]["namespace"].as_str().unwrap())
            .collect();
        assert_eq!(namespaces, ["b", "c"]);
        assert_eq!(writes[0]["data"][".dockerconfigjson"], "e30=");
    }

    #[test]
    fn copies_go_with_their_namespace_or_their_name() {
        let needed = BTreeSet::from(["team-a".to_string()]);
        let copies = vec![
            ("team-a".to_string(), "creds".to_string()),
            ("team-a".to_string(), "dropped".to_string()),
            ("team-b".to_string(), "creds".to_string()),
        ];
        assert_eq!(
            unwanted(&copies, &needed, &["creds".into()]),
            [
                ("team-a".to_string(), "dropped".to_string()),
                ("team-b".to_string(), "creds".to_string())
            ]
        );
    }

    #[test]
    fn the_condition_names_every_secret_that_is_not_there() {
        let names = vec!["a".to_string(), "b".to_string()];
        let ok = report(&[], &names, &[], Some(1));
        assert_eq!((ok.status.as_str(), ok.reason.as_str()), ("True", "Copied"));
        assert_eq!(ok.message, "copied: a, b");
        let problems = vec![
            check_source("op", "a", None).unwrap_err(),
            check_source("op", "b", Some("Opaque")).unwrap_err(),
        ];
        let bad = report(&[ok], &names, &problems, Some(1));
        assert_eq!(bad.status, "False");
        assert_eq!(bad.reason, "PullSecretMissing");
        assert!(
            bad.message.contains("op/a does not exist"),
            "{}",
            bad.message
        );
        assert!(bad.message.contains("op/b is of type"), "{}", bad.message);
    }
}
