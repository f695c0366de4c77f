//! The operator's ClusterRole, derived: Kubernetes refuses to let a
//! ServiceAccount grant RBAC it does not hold itself, and the bundled
//! charts create ClusterRoles and Roles, so the operator holds every rule
//! they grant; it also manages every kind they contain, its own kinds, the
//! upstream CRs it emits, and what running needs (Leases, Events, release
//! Secrets). Rules are merged per (group, resource) and printed sorted, so
//! the chart, kustomize and OLM copies can be compared with this one.

use super::PackagingError;
use crate::operator::model::catalog::{Catalog, ChartStore};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};

const MANAGE: &[&str] = &[
    "create", "delete", "get", "list", "patch", "update", "watch",
];

/// The resource of each built-in kind the bundled charts contain (a kind
/// outside this table and the charts' CRDs is an error: the table grows
/// with the charts, never silently).
const BUILT_IN: &[(&str, &str, &str)] = &[
    ("", "ConfigMap", "configmaps"),
    ("", "Endpoints", "endpoints"),
    ("", "Namespace", "namespaces"),
    ("", "PersistentVolumeClaim", "persistentvolumeclaims"),
    ("", "Pod", "pods"),
    ("", "Secret", "secrets"),
    ("", "Service", "services"),
    ("", "ServiceAccount", "serviceaccounts"),
    (
        "admissionregistration.k8s.io",
        "MutatingWebhookConfiguration",
        "mutatingwebhookconfigurations",
    ),
    (
        "admissionregistration.k8s.io",
        "ValidatingWebhookConfiguration",
        "validatingwebhookconfigurations",
    ),
    (
        "apiextensions.k8s.io",
        "CustomResourceDefinition",
        "customresourcedefinitions",
    ),
    ("apiregistration.k8s.io", "APIService", "apiservices"),
    ("apps", "DaemonSet", "daemonsets"),
    ("apps", "Deployment", "deployments"),
    ("apps", "StatefulSet", "statefulsets"),
    (
        "autoscaling",
        "HorizontalPodAutoscaler",
        "horizontalpodautoscalers",
    ),
    ("batch", "CronJob", "cronjobs"),
    ("batch", "Job", "jobs"),
    ("coordination.k8s.io", "Lease", "leases"),
    ("events.k8s.io", "Event", "events"),
    ("monitoring.coreos.com", "PodMonitor", "podmonitors"),
    ("monitoring.coreos.com", "ServiceMonitor", "servicemonitors"),
    ("networking.k8s.io", "Ingress", "ingresses"),
    ("networking.k8s.io", "NetworkPolicy", "networkpolicies"),
    ("policy", "PodDisruptionBudget", "poddisruptionbudgets"),
    ("rbac.authorization.k8s.io", "ClusterRole", "clusterroles"),
    (
        "rbac.authorization.k8s.io",
        "ClusterRoleBinding",
        "clusterrolebindings",
    ),
    ("rbac.authorization.k8s.io", "Role", "roles"),
    ("rbac.authorization.k8s.io", "RoleBinding", "rolebindings"),
    ("scheduling.k8s.io", "PriorityClass", "priorityclasses"),
];

/// The upstream CRs the operator emits (realise), by (group, resource).
const EMITTED: &[(&str, &str)] = &[
    ("postgresql.cnpg.io", "clusters"),
    ("clickhouse.com", "clickhouseclusters"),
    ("clickhouse.com", "keeperclusters"),
    ("clickhouse.altinity.com", "clickhouseinstallations"),
    (
        "clickhouse-keeper.altinity.com",
        "clickhousekeeperinstallations",
    ),
    ("litellm.home-operations.com", "litellmproxies"),
    ("litellm.home-operations.com", "litellmmodels"),
    ("external-secrets.io", "externalsecrets"),
    ("external-secrets.io", "clustersecretstores"),
];

#[derive(Default, Debug, Clone, PartialEq)]
pub struct Rules {
    /// (apiGroup, resource) -> verbs.
    pub resources: BTreeMap<(String, String), BTreeSet<String>>,
    /// nonResourceURL -> verbs.
    pub urls: BTreeMap<String, BTreeSet<String>>,
}

/// A role rule granting every verb on every resource.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a bundled chart grants * verbs on * resources; the operator will not hold that")]
pub struct WildcardGrant;

impl Rules {
    fn grant(&mut self, group: &str, resource: &str, verbs: &[&str]) {
        let e = self
            .resources
            .entry((group.to_string(), resource.to_string()))
            .or_default();
        e.extend(verbs.iter().map(|v| v.to_string()));
    }

    /// Adds a Role's or ClusterRole's `rules` (resourceNames widened to the
    /// whole resource: the operator creates those objects by name anyway).
    fn add_role_rules(&mut self, rules: &Value) -> Result<(), WildcardGrant> {
        for rule in rules.as_array().into_iter().flatten() {
            let list = |k: &str| -> Vec<String> {
                rule.get(k)
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            };
            let verbs = list("verbs");
            let verbs: Vec<&str> = verbs.iter().map(String::as_str).collect();
            for url in list("nonResourceURLs") {
                self.urls
                    .entry(url)
                    .or_default()
                    .extend(verbs.iter().map(|v| v.to_string()));
            }
            for group in list("apiGroups") {
                for resource in list("resources") {
                    if group == "*" && resource == "*" && verbs.contains(&"*") {
                        return Err(WildcardGrant);
                    }
                    self.grant(&group, &resource, &verbs);
                }
            }
        }
        Ok(())
    }

    /// The rules as a ClusterRole's `rules`: one per (group, verb set),
    /// resources sorted, so equal rules print equal.
    pub fn to_rules(&self) -> Value {
        let mut grouped: BTreeMap<(String, Vec<String>), Vec<String>> = BTreeMap::new();
        for ((group, resource), verbs) in &self.resources {
            grouped
                .entry((group.clone(), verbs.iter().cloned().collect()))
                .or_default()
                .push(resource.clone());
        }
        let mut rules: Vec<Value> = grouped
            .into_iter()
            .map(|((group, verbs), resources)| json!({"apiGroups": [group], "resources": resources, "verbs": verbs}))
            .collect();
        let mut urls: BTreeMap<Vec<String>, Vec<String>> = BTreeMap::new();
        for (url, verbs) in &self.urls {
            urls.entry(verbs.iter().cloned().collect())
                .or_default()
                .push(url.clone());
        }
        rules.extend(
            urls.into_iter()
                .map(|(verbs, urls)| json!({"nonResourceURLs": urls, "verbs": verbs})),
        );
        Value::Array(rules)
    }
}

/// What the bundled charts grant, and what managing their objects takes.
pub fn derive(catalog: &Catalog, store: &ChartStore) -> Result<Rules, PackagingError> {
    let rendered = crate::packaging::airgap::rendered_objects(catalog, store)?;
    let mut rules = Rules::default();
    let mut plural: BTreeMap<(String, String), String> = BuiltInKinds::table();
    for (_, objects) in &rendered {
        for o in objects
            .iter()
            .filter(|o| o["kind"] == "CustomResourceDefinition")
        {
            let group = o
                .pointer("/spec/group")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let kind = o
                .pointer("/spec/names/kind")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let p = o
                .pointer("/spec/names/plural")
                .and_then(Value::as_str)
                .unwrap_or_default();
            plural.insert((group.to_string(), kind.to_string()), p.to_string());
        }
    }
    for (chart, objects) in &rendered {
        for o in objects {
            let kind = o["kind"].as_str().unwrap_or_default();
            let group = o["apiVersion"]
                .as_str()
                .unwrap_or_default()
                .rsplit_once('/')
                .map(|(g, _)| g)
                .unwrap_or("");
            let resource = plural
                .get(&(group.to_string(), kind.to_string()))
                .ok_or_else(|| PackagingError::KindNotInRbacTable {
                    chart: chart.clone(),
                    kind: kind.to_string(),
                    group: group.to_string(),
                })?;
            rules.grant(group, resource, MANAGE);
            if kind == "ClusterRole" || kind == "Role" {
                rules
                    .add_role_rules(&o["rules"])
                    .map_err(|source| PackagingError::Role {
                        chart: chart.clone(),
                        kind: kind.to_string(),
                        name: o
                            .pointer("/metadata/name")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_string(),
                        source,
                    })?;
            }
        }
    }
    // The operator's own kinds, their status and finalizers.
    for crd in crate::operator::api::crds::all() {
        let p = crd.spec.names.plural.clone();
        rules.grant(crate::operator::api::GROUP, &p, MANAGE);
        rules.grant(
            crate::operator::api::GROUP,
            &format!("{p}/status"),
            &["get", "patch", "update"],
        );
        rules.grant(
            crate::operator::api::GROUP,
            &format!("{p}/finalizers"),
            &["update"],
        );
    }
    for (group, resource) in EMITTED {
        rules.grant(group, resource, MANAGE);
    }
    // Running: leader election, Events, Helm's release Secrets, readiness
    // of what it waits for.
    rules.grant("coordination.k8s.io", "leases", MANAGE);
    rules.grant("", "events", &["create", "patch"]);
    rules.grant("events.k8s.io", "events", &["create", "patch"]);
    rules.grant("", "secrets", MANAGE);
    rules.grant("", "namespaces", &["create", "get", "list", "watch"]);
    rules.grant("", "pods", &["get", "list", "watch"]);
    rules.grant("apps", "replicasets", &["get", "list", "watch"]);
    Ok(rules)
}

struct BuiltInKinds;

impl BuiltInKinds {
    fn table() -> BTreeMap<(String, String), String> {
        BUILT_IN
            .iter()
            .map(|(g, k, p)| ((g.to_string(), k.to_string()), p.to_string()))
            .collect()
    }
}

/// The ClusterRole object.
pub fn cluster_role(name: &str, rules: &Rules) -> Value {
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name, "labels": {"app.kubernetes.io/name": crate::packaging::shipping::NAME}},
        "rules": rules.to_rules(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_merge_per_resource_and_refuse_star_on_star() {
        let mut r = Rules::default();
        r.add_role_rules(&json!([{"apiGroups": ["", "apps"], "resources": ["pods", "deployments"], "verbs": ["get"]},
            {"apiGroups": [""], "resources": ["pods"], "resourceNames": ["x"], "verbs": ["delete", "get"]},
            {"nonResourceURLs": ["/metrics"], "verbs": ["get"]}])).unwrap();
        assert_eq!(
            r.resources[&("".to_string(), "pods".to_string())]
                .iter()
                .collect::<Vec<_>>(),
            ["delete", "get"]
        );
        let rules = r.to_rules();
        assert!(
            rules
                .as_array()
                .unwrap()
                .contains(&json!({"nonResourceURLs": ["/metrics"], "verbs": ["get"]})),
            "{rules}"
        );
        assert!(Rules::default()
            .add_role_rules(&json!([{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]))
            .is_err());
    }
}
