//! The resource types the server knows: built-in kinds and those registered
//! live by CustomResourceDefinitions.

use serde_json::{json, Value};
use std::collections::BTreeMap;

#[derive(Clone, Debug)]
pub struct ResourceType {
    pub group: String,
    /// Served versions, the preferred (storage) version first.
    pub versions: Vec<String>,
    pub kind: String,
    pub plural: String,
    pub singular: String,
    pub namespaced: bool,
    pub short_names: Vec<String>,
    pub categories: Vec<String>,
    pub status_subresource: bool,
    /// The `scale` subresource, when the kind serves one.
    pub scale: Option<ScalePaths>,
    /// Name of the CustomResourceDefinition that registered it.
    pub crd: Option<String>,
    /// Its CRD's schemas, compiled once when the CRD is written.
    pub schema: Option<std::sync::Arc<crate::crd_schema::CrdSchemas>>,
}

/// Where a kind keeps what its autoscaling/v1 Scale shows, as JSON paths
/// (`.spec.replicas`); built-in kinds' selector is `spec.selector`, a
/// LabelSelector, a custom resource's `labelSelectorPath` names a string.
#[derive(Clone, Debug)]
pub struct ScalePaths {
    pub spec_replicas: String,
    pub status_replicas: String,
    pub label_selector: Option<String>,
}

impl ResourceType {
    /// Storage key shared by every version of the resource.
    pub fn key(&self) -> String {
        format!("{}/{}", self.group, self.plural)
    }

    pub fn api_version(&self, version: &str) -> String {
        if self.group.is_empty() {
            version.to_string()
        } else {
            format!("{}/{}", self.group, version)
        }
    }

    /// `configmaps` or `deployments.apps`, as Kubernetes names a resource in messages.
    pub fn qualified(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }
}

struct Builtin {
    gv: &'static str,
    kind: &'static str,
    plural: &'static str,
    namespaced: bool,
    status: bool,
    short: &'static [&'static str],
}

const fn b(
    gv: &'static str,
    kind: &'static str,
    plural: &'static str,
    namespaced: bool,
    status: bool,
    short: &'static [&'static str],
) -> Builtin {
    Builtin {
        gv,
        kind,
        plural,
        namespaced,
        status,
        short,
    }
}

const BUILTINS: &[Builtin] = &[
    b("v1", "Namespace", "namespaces", false, true, &["ns"]),
    b("v1", "ConfigMap", "configmaps", true, false, &["cm"]),
    b("v1", "Secret", "secrets", true, false, &[]),
    b(
        "v1",
        "ServiceAccount",
        "serviceaccounts",
        true,
        false,
        &["sa"],
    ),
    b("v1", "Service", "services", true, true, &["svc"]),
    b("v1", "Endpoints", "endpoints", true, false, &["ep"]),
    b("v1", "Pod", "pods", true, true, &["po"]),
    b(
        "v1",
        "PersistentVolumeClaim",
        "persistentvolumeclaims",
        true,
        true,
        &["pvc"],
    ),
    b(
        "v1",
        "PersistentVolume",
        "persistentvolumes",
        false,
        true,
        &["pv"],
    ),
    b("v1", "Event", "events", true, false, &["ev"]),
    b("v1", "Node", "nodes", false, true, &["no"]),
    b(
        "v1",
        "ResourceQuota",
        "resourcequotas",
        true,
        true,
        &["quota"],
    ),
    b("v1", "LimitRange", "limitranges", true, false, &["limits"]),
    b(
        "apps/v1",
        "Deployment",
        "deployments",
        true,
        true,
        &["deploy"],
    ),
    b("apps/v1", "ReplicaSet", "replicasets", true, true, &["rs"]),
    b(
        "apps/v1",
        "StatefulSet",
        "statefulsets",
        true,
        true,
        &["sts"],
    ),
    b("apps/v1", "DaemonSet", "daemonsets", true, true, &["ds"]),
    b(
        "apps/v1",
        "ControllerRevision",
        "controllerrevisions",
        true,
        false,
        &[],
    ),
    b("batch/v1", "Job", "jobs", true, true, &[]),
    b("batch/v1", "CronJob", "cronjobs", true, true, &["cj"]),
    b(
        "rbac.authorization.k8s.io/v1",
        "Role",
        "roles",
        true,
        false,
        &[],
    ),
    b(
        "rbac.authorization.k8s.io/v1",
        "RoleBinding",
        "rolebindings",
        true,
        false,
        &[],
    ),
    b(
        "rbac.authorization.k8s.io/v1",
        "ClusterRole",
        "clusterroles",
        false,
        false,
        &[],
    ),
    b(
        "rbac.authorization.k8s.io/v1",
        "ClusterRoleBinding",
        "clusterrolebindings",
        false,
        false,
        &[],
    ),
    b(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        "customresourcedefinitions",
        false,
        true,
        &["crd", "crds"],
    ),
    b(
        "admissionregistration.k8s.io/v1",
        "ValidatingWebhookConfiguration",
        "validatingwebhookconfigurations",
        false,
        false,
        &[],
    ),
    b(
        "admissionregistration.k8s.io/v1",
        "MutatingWebhookConfiguration",
        "mutatingwebhookconfigurations",
        false,
        false,
        &[],
    ),
    b(
        "apiregistration.k8s.io/v1",
        "APIService",
        "apiservices",
        false,
        true,
        &[],
    ),
    b(
        "policy/v1",
        "PodDisruptionBudget",
        "poddisruptionbudgets",
        true,
        true,
        &["pdb"],
    ),
    b(
        "autoscaling/v2",
        "HorizontalPodAutoscaler",
        "horizontalpodautoscalers",
        true,
        true,
        &["hpa"],
    ),
    b(
        "networking.k8s.io/v1",
        "NetworkPolicy",
        "networkpolicies",
        true,
        false,
        &["netpol"],
    ),
    b(
        "networking.k8s.io/v1",
        "Ingress",
        "ingresses",
        true,
        true,
        &["ing"],
    ),
    b(
        "networking.k8s.io/v1",
        "IngressClass",
        "ingressclasses",
        false,
        false,
        &[],
    ),
    b(
        "scheduling.k8s.io/v1",
        "PriorityClass",
        "priorityclasses",
        false,
        false,
        &["pc"],
    ),
    b(
        "coordination.k8s.io/v1",
        "Lease",
        "leases",
        true,
        false,
        &[],
    ),
    b("events.k8s.io/v1", "Event", "events", true, false, &["ev"]),
    b(
        "storage.k8s.io/v1",
        "StorageClass",
        "storageclasses",
        false,
        false,
        &["sc"],
    ),
    b(
        "discovery.k8s.io/v1",
        "EndpointSlice",
        "endpointslices",
        true,
        false,
        &[],
    ),
];

/// The built-in resources of the category `all` (`kubectl get all`).
const ALL: &[&str] = &[
    "pods",
    "services",
    "daemonsets",
    "deployments",
    "replicasets",
    "statefulsets",
    "horizontalpodautoscalers",
    "jobs",
    "cronjobs",
];

/// Every resource type, by storage key.
#[derive(Clone, Default)]
pub struct Registry {
    types: BTreeMap<String, ResourceType>,
}

fn split_gv(gv: &str) -> (&str, &str) {
    match gv.rsplit_once('/') {
        Some((g, v)) => (g, v),
        None => ("", gv),
    }
}

impl Registry {
    pub fn with_builtins() -> Registry {
        let mut r = Registry::default();
        for bi in BUILTINS {
            let (group, version) = split_gv(bi.gv);
            let mut versions = vec![version.to_string()];
            if bi.kind == "HorizontalPodAutoscaler" {
                versions.push("v1".into());
            }
            r.insert(ResourceType {
                group: group.into(),
                versions,
                kind: bi.kind.into(),
                plural: bi.plural.into(),
                singular: bi.kind.to_lowercase(),
                namespaced: bi.namespaced,
                short_names: bi.short.iter().map(|s| s.to_string()).collect(),
                categories: if ALL.contains(&bi.plural) {
                    vec!["all".into()]
                } else {
                    Vec::new()
                },
                status_subresource: bi.status,
                scale: (group == "apps"
                    && matches!(bi.kind, "Deployment" | "ReplicaSet" | "StatefulSet"))
                .then(|| ScalePaths {
                    spec_replicas: ".spec.replicas".into(),
                    status_replicas: ".status.replicas".into(),
                    label_selector: None,
                }),
                crd: None,
                schema: None,
            });
        }
        r
    }

    pub fn insert(&mut self, t: ResourceType) {
        self.types.insert(t.key(), t);
    }

    pub fn remove(&mut self, key: &str) -> Option<ResourceType> {
        self.types.remove(key)
    }

    pub fn get(&self, key: &str) -> Option<&ResourceType> {
        self.types.get(key)
    }

    pub fn all(&self) -> impl Iterator<Item = &ResourceType> {
        self.types.values()
    }

    /// The type served at `group/version` under `plural`.
    pub fn lookup(&self, group: &str, version: &str, plural: &str) -> Option<&ResourceType> {
        self.types
            .get(&format!("{group}/{plural}"))
            .filter(|t| t.versions.iter().any(|v| v == version))
    }

    pub fn by_kind(&self, api_version: &str, kind: &str) -> Option<&ResourceType> {
        let (group, version) = split_gv(api_version);
        self.types
            .values()
            .find(|t| t.group == group && t.kind == kind && t.versions.iter().any(|v| v == version))
    }

    /// Groups with their versions, in discovery order (core first, then by name).
    pub fn groups(&self) -> Vec<(String, Vec<String>)> {
        let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for t in self.types.values() {
            let e = out.entry(t.group.clone()).or_default();
            for v in &t.versions {
                if !e.contains(v) {
                    e.push(v.clone());
                }
            }
        }
        for versions in out.values_mut() {
            versions.sort_by(|a, b| version_priority(b).cmp(&version_priority(a)));
        }
        out.into_iter().collect()
    }

    pub fn types_in(&self, group: &str, version: &str) -> Vec<&ResourceType> {
        self.types
            .values()
            .filter(|t| t.group == group && t.versions.iter().any(|v| v == version))
            .collect()
    }

    /// The type a CRD object describes, or why it cannot be served.
    pub fn from_crd(crd: &Value) -> Result<ResourceType, String> {
        let name = crd
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        let spec = crd.get("spec").ok_or("spec: Required value")?;
        let group = spec
            .get("group")
            .and_then(Value::as_str)
            .ok_or("spec.group: Required value")?;
        let names = spec.get("names").ok_or("spec.names: Required value")?;
        let plural = names
            .get("plural")
            .and_then(Value::as_str)
            .ok_or("spec.names.plural: Required value")?;
        let kind = names
            .get("kind")
            .and_then(Value::as_str)
            .ok_or("spec.names.kind: Required value")?;
        if name != format!("{plural}.{group}") {
            return Err(format!("metadata.name: Invalid value: \"{name}\": must be spec.names.plural+\".\"+spec.group"));
        }
        let scope = spec
            .get("scope")
            .and_then(Value::as_str)
            .unwrap_or("Namespaced");
        let mut versions = Vec::new();
        let mut status = false;
        let mut scale = None;
        for v in spec
            .get("versions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let vname = v
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            if v.get("served").and_then(Value::as_bool) != Some(true) {
                continue;
            }
            if v.pointer("/subresources/status").is_some() {
                status = true;
            }
            if let Some(sc) = v.pointer("/subresources/scale").filter(|_| scale.is_none()) {
                let path = |k: &str| sc.get(k).and_then(Value::as_str).map(str::to_string);
                scale = Some(ScalePaths {
                    spec_replicas: path("specReplicasPath").unwrap_or_default(),
                    status_replicas: path("statusReplicasPath").unwrap_or_default(),
                    label_selector: path("labelSelectorPath"),
                });
            }
            if v.get("storage").and_then(Value::as_bool) == Some(true) {
                versions.insert(0, vname);
            } else {
                versions.push(vname);
            }
        }
        if versions.is_empty() {
            return Err("spec.versions: Invalid value: must have exactly one version marked as storage version".into());
        }
        let strings = |v: Option<&Value>| -> Vec<String> {
            v.and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|s| s.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default()
        };
        let schema = crate::crd_schema::compile_crd(spec, kind, group)?;
        Ok(ResourceType {
            group: group.into(),
            versions,
            kind: kind.into(),
            plural: plural.into(),
            singular: names
                .get("singular")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| kind.to_lowercase()),
            namespaced: scope == "Namespaced",
            short_names: strings(names.get("shortNames")),
            categories: strings(names.get("categories")),
            status_subresource: status,
            scale,
            crd: Some(name.to_string()),
            schema: Some(std::sync::Arc::new(schema)),
        })
    }
}

/// Kubernetes' version ordering: GA > beta > alpha, higher numbers first.
pub fn version_priority(v: &str) -> (u8, u32, u32) {
    let Some(rest) = v.strip_prefix('v') else {
        return (0, 0, 0);
    };
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let major = digits.parse().unwrap_or(0);
    let tail = &rest[digits.len()..];
    if tail.is_empty() {
        return (3, major, 0);
    }
    let (level, num) = if let Some(n) = tail.strip_prefix("beta") {
        (2, n)
    } else if let Some(n) = tail.strip_prefix("alpha") {
        (1, n)
    } else {
        return (0, 0, 0);
    };
    (level, major, num.parse().unwrap_or(0))
}

pub fn api_resource(t: &ResourceType) -> Vec<Value> {
    let verbs = json!([
        "create",
        "delete",
        "deletecollection",
        "get",
        "list",
        "patch",
        "update",
        "watch"
    ]);
    let mut main = json!({
        "name": t.plural,
        "singularName": t.singular,
        "namespaced": t.namespaced,
        "kind": t.kind,
        "verbs": verbs,
    });
    if !t.short_names.is_empty() {
        main["shortNames"] = json!(t.short_names);
    }
    if !t.categories.is_empty() {
        main["categories"] = json!(t.categories);
    }
    let mut out = vec![main];
    if t.scale.is_some() {
        out.push(json!({
            "name": format!("{}/scale", t.plural),
            "singularName": "",
            "namespaced": t.namespaced,
            "group": "autoscaling",
            "version": "v1",
            "kind": "Scale",
            "verbs": ["get", "patch", "update"],
        }));
    }
    if t.status_subresource {
        out.push(json!({
            "name": format!("{}/status", t.plural),
            "singularName": "",
            "namespaced": t.namespaced,
            "kind": t.kind,
            "verbs": ["get", "patch", "update"],
        }));
    }
    out
}
