//! `--image-pull-secret`: the named Secrets added to the `imagePullSecrets`
//! of every pod template applied, and to the custom resources whose kind
//! has such a field, a post-render step like the image rewrite. Pure: the
//! copies the names refer to are the operator's business, not this layer's.

use serde_json::{json, Value};

/// Where each kind of workload keeps its pod spec.
const POD_SPECS: &[(&str, &str)] = &[
    ("Pod", "/spec"),
    ("Deployment", "/spec/template/spec"),
    ("StatefulSet", "/spec/template/spec"),
    ("DaemonSet", "/spec/template/spec"),
    ("ReplicaSet", "/spec/template/spec"),
    ("ReplicationController", "/spec/template/spec"),
    ("Job", "/spec/template/spec"),
    ("CronJob", "/spec/jobTemplate/spec/template/spec"),
    ("PodTemplate", "/template/spec"),
];

/// Custom resources of the operators we install whose CRD takes a list of
/// pull secrets, as (API group, kind, the object holding
/// `imagePullSecrets`): CloudNativePG's Cluster, the ClickHouse operator's
/// ClickHouseCluster and KeeperCluster (`spec.podTemplate`). LiteLLM's
/// proxy has no such field; Altinity's installations keep them inside
/// named pod templates the realisation does not write.
pub const CR_PULL_SECRET_FIELDS: &[(&str, &str, &str)] = &[
    ("postgresql.cnpg.io/", "Cluster", "/spec"),
    ("clickhouse.com/", "ClickHouseCluster", "/spec/podTemplate"),
    ("clickhouse.com/", "KeeperCluster", "/spec/podTemplate"),
];

/// Adds `names` to the `imagePullSecrets` of the object's pod spec, or of
/// the custom resource's field that takes them: after those already set
/// (the chart's stay first), each once. Other objects are left as they are.
pub fn inject(body: &mut Value, names: &[String]) {
    if names.is_empty() {
        return;
    }
    let kind = body.get("kind").and_then(Value::as_str).unwrap_or_default();
    let api_version = body
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    // Core, apps and batch have no dot in their group; custom resources do.
    let builtin = !api_version.contains('.');
    let pointer = if builtin {
        POD_SPECS.iter().find(|(k, _)| *k == kind).map(|(_, p)| *p)
    } else {
        CR_PULL_SECRET_FIELDS
            .iter()
            .find(|(group, k, _)| *k == kind && api_version.starts_with(group))
            .map(|(_, _, p)| *p)
    };
    let Some(pointer) = pointer else {
        return;
    };
    // A pod template the chart left out is not made up here (a Pod without
    // a spec is invalid anyway); a custom resource's holder is created.
    let holder = match body.pointer_mut(pointer) {
        Some(h) => h,
        None if builtin => return,
        None => match ensure_path(body, pointer) {
            Some(h) => h,
            None => return,
        },
    };
    add_names(holder, names);
}

/// Makes the objects along `pointer` (each missing one empty).
fn ensure_path<'a>(body: &'a mut Value, pointer: &str) -> Option<&'a mut Value> {
    let mut at = body;
    for key in pointer.split('/').skip(1) {
        let map = at.as_object_mut()?;
        let next = map.entry(key.to_string()).or_insert_with(|| json!({}));
        if next.is_null() {
            *next = json!({});
        }
        at = next;
    }
    Some(at)
}

fn add_names(holder: &mut Value, names: &[String]) {
    let Some(map) = holder.as_object_mut() else {
        return;
    };
    let list = map
        .entry("imagePullSecrets")
        .or_insert_with(|| Value::Array(Vec::new()));
    if !list.is_array() {
        *list = Value::Array(Vec::new());
    }
    let list = list.as_array_mut().expect("an array");
    for name in names {
        if !list
            .iter()
            .any(|e| e.get("name").and_then(Value::as_str) == Some(name))
        {
            list.push(json!({"name": name}));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Vec<String> {
        vec!["mirror-creds".into(), "other".into()]
    }

    fn listed(v: &Value, pointer: &str) -> Vec<String> {
        v.pointer(pointer)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|e| e["name"].as_str().unwrap().to_string())
                    .collect()
            })
            .unwrap_or_default()
    }

    #[test]
    fn every_kind_of_pod_template_gets_them() {
        for (api_version, kind, pointer) in [
            ("v1", "Pod", "/spec/imagePullSecrets"),
            (
                "apps/v1",
                "Deployment",
                "/spec/template/spec/imagePullSecrets",
            ),
            (
                "apps/v1",
                "StatefulSet",
                "/spec/template/spec/imagePullSecrets",
            ),
            (
                "apps/v1",
                "DaemonSet",
                "/spec/template/spec/imagePullSecrets",
            ),
            (
                "apps/v1",
                "ReplicaSet",
                "/spec/template/spec/imagePullSecrets",
            ),
            ("batch/v1", "Job", "/spec/template/spec/imagePullSecrets"),
        ] {
            let mut v = json!({"apiVersion": api_version, "kind": kind,
                "spec": {"template": {"spec": {"containers": []}}, "containers": []}});
            inject(&mut v, &names());
            assert_eq!(listed(&v, pointer), names(), "{kind}");
        }
        let mut cron = json!({"apiVersion": "batch/v1", "kind": "CronJob",
            "spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": []}}}}}});
        inject(&mut cron, &names());
        assert_eq!(
            listed(
                &cron,
                "/spec/jobTemplate/spec/template/spec/imagePullSecrets"
            ),
            names()
        );
    }

    #[test]
    fn the_charts_own_stay_first_and_none_is_listed_twice() {
        let mut v = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "spec": {"template": {"spec": {"imagePullSecrets": [{"name": "chart-own"}, {"name": "other"}]}}}});
        inject(&mut v, &names());
        inject(&mut v, &names());
        assert_eq!(
            listed(&v, "/spec/template/spec/imagePullSecrets"),
            ["chart-own", "other", "mirror-creds"]
        );
    }

    #[test]
    fn objects_without_a_pod_template_are_untouched() {
        for v in [
            json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "b"}}),
            json!({"apiVersion": "v1", "kind": "Service", "spec": {"ports": []}}),
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "no-spec"}}),
            json!({"apiVersion": "litellm.home-operations.com/v1alpha1", "kind": "LiteLLMProxy", "spec": {}}),
            json!({"apiVersion": "example.com/v1", "kind": "Deployment", "spec": {}}),
        ] {
            let mut after = v.clone();
            inject(&mut after, &names());
            assert_eq!(after, v);
        }
        let mut v = json!({"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"template": {"spec": {}}}});
        let before = v.clone();
        inject(&mut v, &[]);
        assert_eq!(v, before);
    }

    #[test]
    fn custom_resources_with_such_a_field_get_them() {
        let mut cluster = json!({"apiVersion": "postgresql.cnpg.io/v1", "kind": "Cluster", "spec": {"instances": 1}});
        inject(&mut cluster, &names());
        assert_eq!(listed(&cluster, "/spec/imagePullSecrets"), names());
        for kind in ["ClickHouseCluster", "KeeperCluster"] {
            let mut v = json!({"apiVersion": "clickhouse.com/v1alpha1", "kind": kind, "spec": {"replicas": 1}});
            inject(&mut v, &names());
            assert_eq!(
                listed(&v, "/spec/podTemplate/imagePullSecrets"),
                names(),
                "{kind}"
            );
        }
        // Altinity's ClickHouseInstallation has no podTemplate field of that name.
        let mut chi = json!({"apiVersion": "clickhouse.altinity.com/v1", "kind": "ClickHouseInstallation", "spec": {}});
        let before = chi.clone();
        inject(&mut chi, &names());
        assert_eq!(chi, before);
    }
}
