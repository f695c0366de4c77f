//! Drift: whether an object we own still holds what we applied. Judged as
//! server-side apply judges it: only fields we set count (defaults the API
//! server fills in, status, and fields only others set are not ours), and a
//! field another writer holds through a subresource (an autoscaler's
//! `spec.replicas` through `scale`) is theirs: never reported, never
//! fought over. Pure; the reconciles read the live object and put back.

use serde_json::Value;

/// The fields (dotted paths) of `wanted` that `live` no longer holds,
/// leaving out those `co_written` names; `["(deleted)"]` when it is gone.
pub fn drifted(wanted: &Value, live: Option<&Value>) -> Vec<String> {
    let Some(live) = live else {
        return vec!["(deleted)".into()];
    };
    let theirs = co_written(live);
    let mut out = Vec::new();
    differences(wanted, live, "", &theirs, &mut out);
    out
}

/// What `wanted` looks like without the fields others hold through a
/// subresource: what a correction applies, so it takes none of them back.
pub fn without_co_written(wanted: &Value, live: Option<&Value>) -> Value {
    let mut body = wanted.clone();
    for path in live.map(co_written).unwrap_or_default() {
        let (parent, last) = match path.rsplit_once('.') {
            Some((p, l)) => (format!("/{}", p.replace('.', "/")), l.to_string()),
            None => (String::new(), path.clone()),
        };
        if let Some(map) = body.pointer_mut(&parent).and_then(Value::as_object_mut) {
            map.remove(&last);
        }
    }
    body
}

/// Fields managers other than us hold through a subresource (`scale`,
/// `status`), from the live object's managedFields, as dotted paths.
fn co_written(live: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let entries = live
        .pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for e in entries {
        let by_subresource = e
            .get("subresource")
            .and_then(Value::as_str)
            .is_some_and(|s| !s.is_empty());
        if by_subresource && e["manager"] != crate::action::DEFAULT_FIELD_MANAGER {
            flatten_fields(&e["fieldsV1"], "", &mut out);
        }
    }
    out
}

/// fieldsV1's `f:` keys as dotted paths, down to the first list item.
fn flatten_fields(v: &Value, prefix: &str, out: &mut Vec<String>) {
    let Some(map) = v.as_object() else { return };
    for (k, child) in map {
        let Some(name) = k.strip_prefix("f:") else {
            continue;
        };
        let path = if prefix.is_empty() {
            name.to_string()
        } else {
            format!("{prefix}.{name}")
        };
        match child.as_object() {
            Some(m) if m.keys().any(|k| k.starts_with("f:")) => flatten_fields(child, &path, out),
            _ => out.push(path),
        }
    }
}

fn differences(wanted: &Value, live: &Value, path: &str, theirs: &[String], out: &mut Vec<String>) {
    if theirs.iter().any(|t| t == path) {
        return;
    }
    match (wanted, live) {
        (Value::Object(w), Value::Object(l)) => {
            for (k, wv) in w {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                match l.get(k) {
                    Some(lv) => differences(wv, lv, &p, theirs, out),
                    // The API server stores no null, and drops an empty map or list.
                    None if wv.is_null() || empty(wv) => {}
                    None => {
                        if !theirs.contains(&p) {
                            out.push(p)
                        }
                    }
                }
            }
        }
        _ if crate::operator::decide::conditions::is_subset(wanted, live) => {}
        _ => out.push(path.to_string()),
    }
}

fn empty(v: &Value) -> bool {
    v.as_object().is_some_and(|m| m.is_empty()) || v.as_array().is_some_and(|a| a.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deployment(image: &str, replicas: i64) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "cert-manager", "labels": {"app": "cm"}},
            "spec": {"replicas": replicas, "template": {"spec": {"containers": [{"name": "c", "image": image}]}}}})
    }

    #[test]
    fn a_changed_field_and_a_deletion_are_drift_defaults_are_not() {
        let wanted = deployment("cm:1", 1);
        let mut live = deployment("cm:1", 1);
        live["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] =
            json!("IfNotPresent");
        live["status"] = json!({"replicas": 1});
        assert!(drifted(&wanted, Some(&live)).is_empty());
        let mut with_empty = wanted.clone();
        with_empty["data"] = json!({});
        assert!(drifted(&with_empty, Some(&live)).is_empty());
        live["spec"]["template"]["spec"]["containers"][0]["image"] = json!("evil:1");
        live["metadata"]["labels"] = json!({});
        assert_eq!(
            drifted(&wanted, Some(&live)),
            ["metadata.labels.app", "spec.template.spec.containers"]
        );
        assert_eq!(drifted(&wanted, None), ["(deleted)"]);
    }

    #[test]
    fn replicas_an_autoscaler_holds_through_scale_are_theirs() {
        let wanted = deployment("cm:1", 1);
        let mut live = deployment("cm:1", 3);
        live["metadata"]["managedFields"] = json!([
            {"manager": "navique-operator", "operation": "Apply", "fieldsV1": {"f:spec": {"f:template": {}}}},
            {"manager": "kube-controller-manager", "operation": "Update", "subresource": "scale",
             "fieldsV1": {"f:spec": {"f:replicas": {}}}}
        ]);
        assert!(drifted(&wanted, Some(&live)).is_empty());
        let body = without_co_written(&wanted, Some(&live));
        assert!(body["spec"].get("replicas").is_none());
        assert_eq!(body["spec"]["template"], wanted["spec"]["template"]);
        // The same change by kubectl edit (no subresource) is drift.
        live["metadata"]["managedFields"][1]
            .as_object_mut()
            .unwrap()
            .remove("subresource");
        assert_eq!(drifted(&wanted, Some(&live)), ["spec.replicas"]);
    }
}
