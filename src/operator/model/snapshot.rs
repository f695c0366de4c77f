//! One snapshot of what matters to the operator's decisions: our resources,
//! Helm releases (from their Secrets' metadata, never their bodies), the
//! catalog's CRDs, workloads that could be a capability's controller, and
//! the custom resources we emitted. The decisions (provenance, needs, plan)
//! are functions of this snapshot; only `gather` talks to a cluster.

use crate::apply::readiness::{check, Ready};
use crate::operator::api;
use crate::release::Status;
use k8s_openapi::api::core::v1::Secret;
use serde_json::Value;
use std::collections::BTreeMap;

/// Annotations on our release Secrets: what the revision was made from.
pub const CHART_VERSION_ANNOTATION: &str = "core.navique.com/chart-version";
pub const INPUTS_ANNOTATION: &str = "core.navique.com/inputs";
/// The `Capability.spec.values` the revision was made with (JSON), when
/// the admin set any: the last accepted values, kept when a newer spec is refused.
pub const CONFIGURED_ANNOTATION: &str = "core.navique.com/configured-values";

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Snapshot {
    /// The newest revision of every Helm release.
    pub releases: Vec<ReleaseInfo>,
    /// The catalog's CRDs that exist, by name.
    pub crds: BTreeMap<String, CrdInfo>,
    pub workloads: Vec<Workload>,
    pub resources: Vec<Resource>,
    /// Custom resources carrying our managed-by label, by CRD name.
    pub emitted: BTreeMap<String, Vec<Value>>,
    /// Secrets carrying our managed-by label (connection Secrets we write),
    /// as (namespace, name): their contents are not read here.
    pub emitted_secrets: Vec<(String, String)>,
    /// The tier the license Secret gives now (None: not read).
    pub tier: Option<crate::operator::model::licensing::Tier>,
    /// Each Capability object's `spec` as the admin wrote it, by name.
    pub capability_specs: BTreeMap<String, Value>,
    /// `--image-pull-secret` (the operator's setting, not read from the
    /// cluster): an input of every release we make.
    pub pull_secrets: Vec<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ReleaseInfo {
    pub name: String,
    pub namespace: String,
    pub revision: i64,
    /// Helm's status label: deployed, failed, pending-install, ...
    pub status: Status,
    /// Our label and annotation are both on it.
    pub ours: bool,
    pub chart_version: Option<String>,
    /// The digest of the chart and values it was made from (ours only).
    pub inputs: Option<String>,
    /// The admin's `spec.values` it was made with, as JSON (ours only).
    pub configured: Option<String>,
}

impl ReleaseInfo {
    pub fn is_pending(&self) -> bool {
        self.status.is_pending()
    }
    /// Present in the cluster: anything but an uninstalled record kept as history.
    pub fn is_live(&self) -> bool {
        !matches!(self.status, Status::Uninstalled | Status::Uninstalling)
    }
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct CrdInfo {
    pub established: bool,
    /// Helm's ownership annotations, when a release applied it.
    pub release: Option<(String, String)>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Workload {
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub pod_labels: BTreeMap<String, String>,
    pub images: Vec<String>,
    pub replicas: i64,
    pub ready: bool,
    pub not_ready_reason: String,
    /// Helm's ownership annotations (the release that applied it).
    pub release: Option<(String, String)>,
}

/// One of our custom resources, reduced to what the decisions read; the
/// spec stays raw so a malformed one is reported on itself, not everywhere.
#[derive(Clone, Debug, PartialEq)]
pub struct Resource {
    pub kind: api::Kind,
    pub namespace: String,
    pub name: String,
    pub uid: String,
    pub generation: i64,
    pub created: String,
    pub deleting: bool,
    /// The pause annotation is set: nothing is written for it.
    pub paused: bool,
    pub spec: Value,
    /// As last reported (read by dependants' decisions, never by its own).
    pub status: Value,
}

impl Resource {
    /// A resource as the decisions' unit tests build them.
    #[cfg(test)]
    pub fn for_test(kind: &str, name: &str, uid: &str, spec: Value) -> Resource {
        Resource {
            kind: api::Kind::parse(kind).expect("one of our kinds"),
            namespace: "team-a".into(),
            name: name.into(),
            uid: uid.into(),
            generation: 1,
            created: String::new(),
            deleting: false,
            paused: false,
            spec,
            status: Value::Null,
        }
    }

    pub fn field(&self, name: &str) -> Option<&str> {
        self.spec.get(name).and_then(Value::as_str)
    }
}

fn labels_of(v: &Value, pointer: &str) -> BTreeMap<String, String> {
    v.pointer(pointer)
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

pub(crate) fn helm_owner(
    annotations: Option<&BTreeMap<String, String>>,
) -> Option<(String, String)> {
    let a = annotations?;
    Some((
        a.get(crate::apply::RELEASE_NAME_ANNOTATION)?.clone(),
        a.get(crate::apply::RELEASE_NAMESPACE_ANNOTATION)?.clone(),
    ))
}

/// A workload from its JSON (Deployment, StatefulSet or DaemonSet).
pub fn workload_from(kind: &str, v: &Value) -> Workload {
    let spec = v.pointer("/spec/template/spec");
    let mut images = Vec::new();
    for list in ["containers", "initContainers"] {
        if let Some(cs) = spec.and_then(|s| s.get(list)).and_then(Value::as_array) {
            images.extend(
                cs.iter()
                    .filter_map(|c| c.get("image").and_then(Value::as_str))
                    .map(str::to_string),
            );
        }
    }
    let annotations: BTreeMap<String, String> = labels_of(v, "/metadata/annotations");
    let (ready, reason) = match check(kind, Some(v)) {
        Ready::Yes => (true, String::new()),
        Ready::No(m) | Ready::Failed(m) => (false, m),
    };
    Workload {
        kind: kind.into(),
        namespace: v
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .into(),
        name: v
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .into(),
        pod_labels: labels_of(v, "/spec/template/metadata/labels"),
        images,
        // A DaemonSet has no replica count: it runs where it is scheduled.
        replicas: v
            .pointer("/spec/replicas")
            .and_then(Value::as_i64)
            .unwrap_or(1),
        ready,
        not_ready_reason: reason,
        release: helm_owner(Some(&annotations)),
    }
}

pub fn resource_from(kind: api::Kind, v: &Value) -> Resource {
    let meta = |p: &str| {
        v.pointer(&format!("/metadata/{p}"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    Resource {
        kind,
        namespace: meta("namespace"),
        name: meta("name"),
        uid: meta("uid"),
        generation: v
            .pointer("/metadata/generation")
            .and_then(Value::as_i64)
            .unwrap_or(0),
        created: meta("creationTimestamp"),
        deleting: v.pointer("/metadata/deletionTimestamp").is_some(),
        paused: v
            .pointer("/metadata/annotations")
            .and_then(|a| a.get(api::PAUSE_ANNOTATION))
            .and_then(Value::as_str)
            == Some(api::PAUSED),
        spec: v.get("spec").cloned().unwrap_or(Value::Null),
        status: v.get("status").cloned().unwrap_or(Value::Null),
    }
}

/// A release Secret's labels, annotations and namespace.
pub type SecretMeta = (BTreeMap<String, String>, BTreeMap<String, String>, String);

pub fn secret_meta(m: &kube::api::ObjectMeta) -> SecretMeta {
    (
        m.labels.clone().unwrap_or_default(),
        m.annotations.clone().unwrap_or_default(),
        m.namespace.clone().unwrap_or_default(),
    )
}

/// The license Secret's data, as `license::tier` reads it.
pub fn license_data(s: &Secret) -> BTreeMap<String, Vec<u8>> {
    s.data
        .iter()
        .flatten()
        .map(|(k, v)| (k.clone(), v.0.clone()))
        .collect()
}

/// A CRD as decisions read it: whether it is established, and the release that owns it.
pub fn crd_info(crd: &crate::operator::model::light::CrdHead) -> (String, CrdInfo) {
    let established = crd.established();
    (
        crd.metadata.name.clone().unwrap_or_default(),
        CrdInfo {
            established,
            release: helm_owner(crd.metadata.annotations.as_ref()),
        },
    )
}

/// The newest revision of each release, from release Secrets' metadata.
pub fn releases_from(secrets: &[SecretMeta]) -> Vec<ReleaseInfo> {
    let mut newest: BTreeMap<(String, String), ReleaseInfo> = BTreeMap::new();
    for (labels, annotations, namespace) in secrets {
        let (Some(name), Some(version)) = (labels.get("name"), labels.get("version")) else {
            continue;
        };
        let Ok(revision) = version.parse::<i64>() else {
            continue;
        };
        let info = ReleaseInfo {
            name: name.clone(),
            namespace: namespace.clone(),
            revision,
            status: Status::parse(labels.get("status").map_or("", String::as_str)),
            ours: labels.get(api::MANAGED_BY_LABEL).map(String::as_str) == Some(api::MANAGED_BY)
                && annotations
                    .get(api::PROVENANCE_ANNOTATION)
                    .map(String::as_str)
                    == Some("owned"),
            chart_version: annotations.get(CHART_VERSION_ANNOTATION).cloned(),
            inputs: annotations.get(INPUTS_ANNOTATION).cloned(),
            configured: annotations.get(CONFIGURED_ANNOTATION).cloned(),
        };
        let key = (namespace.clone(), name.clone());
        match newest.get(&key) {
            Some(r) if r.revision >= revision => {}
            _ => {
                newest.insert(key, info);
            }
        }
    }
    newest.into_values().collect()
}

impl Snapshot {
    /// The tier the license `data` gives now.
    pub fn read_license(
        &mut self,
        data: Option<&BTreeMap<String, Vec<u8>>>,
        licensing: &crate::operator::model::licensing::Licensing,
    ) {
        self.tier = Some(crate::operator::model::licensing::tier(
            data,
            &licensing.key,
            chrono::Utc::now(),
        ));
    }

    pub fn release(&self, name: &str, namespace: &str) -> Option<&ReleaseInfo> {
        self.releases
            .iter()
            .find(|r| r.name == name && r.namespace == namespace)
    }

    pub fn resources_of<'a>(&'a self, kind: &'a str) -> impl Iterator<Item = &'a Resource> + 'a {
        self.resources.iter().filter(move |r| r.kind == kind)
    }
}
