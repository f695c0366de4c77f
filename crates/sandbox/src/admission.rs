//! Admission a real kube-apiserver runs on every create, whichever client
//! sends it: NamespaceLifecycle (in `store::State::create`) and the
//! ServiceAccount plugin, which refuses a Pod naming a ServiceAccount its
//! namespace does not hold. The simulated workload controllers put the Pods
//! they would create through the same check.

use crate::error::ApiError;
use crate::store::State;
use serde_json::{json, Value};

/// The name admission shows for an object being created: its name, else its
/// generateName (names are generated after admission), else "Unknown".
pub fn shown_name(obj: &Value) -> String {
    let meta = &obj["metadata"];
    ["name", "generateName"]
        .iter()
        .filter_map(|k| meta.get(*k).and_then(Value::as_str))
        .find(|n| !n.is_empty())
        .unwrap_or("Unknown")
        .to_string()
}

/// The ServiceAccount admission plugin: `spec.serviceAccountName` (default
/// "default") must exist in the Pod's namespace.
pub fn pod_service_account(
    st: &State,
    ns: &str,
    pod_spec: &Value,
    shown: &str,
) -> Result<(), ApiError> {
    let sa = pod_spec
        .get("serviceAccountName")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .unwrap_or("default");
    let sa_type = st.type_of("/serviceaccounts").expect("serviceaccounts");
    if st.get(&sa_type, ns, sa).is_ok() {
        return Ok(());
    }
    let pods = st.type_of("/pods").expect("pods");
    Err(ApiError::forbidden_object(
        &pods,
        shown,
        &format!("error looking up service account {ns}/{sa}: serviceaccount {sa:?} not found"),
    ))
}

/// What creating a Pod from `template` in `ns` would meet: NamespaceLifecycle
/// and the ServiceAccount plugin. `Err((error, terminating))`: controllers
/// record no event when the namespace is being terminated.
pub fn pod_create(
    st: &State,
    ns: &str,
    template: &Value,
    shown: &str,
) -> Result<(), (ApiError, bool)> {
    let pods = st.type_of("/pods").expect("pods");
    let ns_type = st.type_of("/namespaces").expect("namespaces");
    match st.get(&ns_type, "", ns) {
        Err(_) => return Err((ApiError::namespace_not_found(ns), true)),
        Ok(n) if n.pointer("/metadata/deletionTimestamp").is_some() => {
            return Err((namespace_terminating(&pods, ns, shown), true))
        }
        Ok(_) => {}
    }
    let spec = template.get("spec").cloned().unwrap_or(Value::Null);
    pod_service_account(st, ns, &spec, shown).map_err(|e| (e, false))
}

/// NamespaceLifecycle's refusal in a namespace being deleted, with the
/// `NamespaceTerminating` cause controllers look for.
pub fn namespace_terminating(t: &crate::registry::ResourceType, ns: &str, shown: &str) -> ApiError {
    let mut e = ApiError::forbidden_object(
        t,
        shown,
        &format!("unable to create new content in namespace {ns} because it is being terminated"),
    );
    if let Some(d) = e.details.as_mut() {
        d["causes"] = serde_json::json!([{
            "reason": "NamespaceTerminating",
            "message": format!("namespace {ns} is being terminated"),
            "field": "metadata.namespace",
        }]);
    }
    e
}

/// One field.Error of Kubernetes' validation: its cause type
/// (`FieldValueInvalid`, ...), field path and body (`Invalid value: ...`).
pub struct FieldError {
    pub cause: &'static str,
    pub field: String,
    pub body: String,
}

impl FieldError {
    fn invalid(field: &str, value: &str, detail: &str) -> FieldError {
        FieldError {
            cause: "FieldValueInvalid",
            field: field.into(),
            body: format!("Invalid value: {value}: {detail}"),
        }
    }
}

/// apierrors.NewInvalid: 422, `Deployment.apps "web" is invalid: <errors>`
/// (several in brackets), a cause per error, details naming the kind.
pub fn invalid(t: &crate::registry::ResourceType, name: &str, errs: &[FieldError]) -> ApiError {
    let qualified = if t.group.is_empty() {
        t.kind.clone()
    } else {
        format!("{}.{}", t.kind, t.group)
    };
    let lines: Vec<String> = errs
        .iter()
        .map(|e| format!("{}: {}", e.field, e.body))
        .collect();
    let all = if lines.len() == 1 {
        lines[0].clone()
    } else {
        format!("[{}]", lines.join(", "))
    };
    let causes: Vec<Value> = errs
        .iter()
        .map(|e| serde_json::json!({"reason": e.cause, "message": e.body, "field": e.field}))
        .collect();
    let mut details = serde_json::json!({"name": name, "kind": t.kind, "causes": causes});
    if !t.group.is_empty() {
        details["group"] = serde_json::json!(t.group);
    }
    ApiError {
        details: Some(details),
        ..ApiError::new(
            422,
            "Invalid",
            format!("{qualified} {name:?} is invalid: {all}"),
        )
    }
}

/// Go's `%q` of a string (close enough: JSON escaping).
fn quoted(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

/// Go's `%#v` of a `map[string]string`, keys sorted as fmt prints them.
fn go_string_map(v: Option<&Value>) -> String {
    match v.and_then(Value::as_object) {
        None => "map[string]string(nil)".into(),
        Some(m) => {
            let mut kv: Vec<(&String, &Value)> = m.iter().collect();
            kv.sort_by(|a, b| a.0.cmp(b.0));
            let parts: Vec<String> = kv
                .iter()
                .map(|(k, v)| format!("{}:{}", quoted(k), quoted(v.as_str().unwrap_or_default())))
                .collect();
            format!("map[string]string{{{}}}", parts.join(", "))
        }
    }
}

/// Go's `%#v` of a metav1.LabelSelector.
fn go_label_selector(v: Option<&Value>) -> String {
    let Some(sel) = v.filter(|s| s.is_object()) else {
        return "null".into();
    };
    let exprs = match sel.get("matchExpressions").and_then(Value::as_array) {
        None => "[]v1.LabelSelectorRequirement(nil)".to_string(),
        Some(list) => {
            let items: Vec<String> = list
                .iter()
                .map(|e| {
                    let values = match e.get("values").and_then(Value::as_array) {
                        None => "[]string(nil)".to_string(),
                        Some(vs) => format!(
                            "[]string{{{}}}",
                            vs.iter()
                                .map(|x| quoted(x.as_str().unwrap_or_default()))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    };
                    format!(
                        "v1.LabelSelectorRequirement{{Key:{}, Operator:{}, Values:{values}}}",
                        quoted(e["key"].as_str().unwrap_or_default()),
                        quoted(e["operator"].as_str().unwrap_or_default())
                    )
                })
                .collect();
            format!("[]v1.LabelSelectorRequirement{{{}}}", items.join(", "))
        }
    };
    format!(
        "v1.LabelSelector{{MatchLabels:{}, MatchExpressions:{exprs}}}",
        go_string_map(sel.get("matchLabels"))
    )
}

/// Whether a LabelSelector selects these labels.
fn selects(sel: &Value, labels: &Value) -> bool {
    let label = |k: &str| labels.get(k).and_then(Value::as_str);
    let by_labels = sel
        .get("matchLabels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .all(|(k, v)| label(k) == v.as_str());
    let by_exprs = sel
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .all(|e| {
            let k = e["key"].as_str().unwrap_or_default();
            let values: Vec<&str> = e["values"]
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            match e["operator"].as_str().unwrap_or_default() {
                "In" => label(k).is_some_and(|l| values.contains(&l)),
                "NotIn" => label(k).is_none_or(|l| !values.contains(&l)),
                "Exists" => label(k).is_some(),
                "DoesNotExist" => label(k).is_none(),
                _ => false,
            }
        });
    by_labels && by_exprs
}

fn selector_empty(sel: &Value) -> bool {
    sel.get("matchLabels")
        .and_then(Value::as_object)
        .is_none_or(|m| m.is_empty())
        && sel
            .get("matchExpressions")
            .and_then(Value::as_array)
            .is_none_or(|a| a.is_empty())
}

/// A pod spec's names that must be unique, and volume mounts that must name
/// a volume, as ValidatePodSpec checks them (volumes, then containers, then
/// init containers). `at` is the spec's path (`spec.template.spec`).
fn validate_pod_spec(spec: &Value, at: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let names = |list: &str| -> Vec<String> {
        spec.get(list)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|i| i["name"].as_str().unwrap_or_default().to_string())
                    .collect()
            })
            .unwrap_or_default()
    };
    let duplicate = |field: String, name: &str| FieldError {
        cause: "FieldValueDuplicate",
        field,
        body: format!("Duplicate value: {}", quoted(name)),
    };
    let volumes = names("volumes");
    for (i, v) in volumes.iter().enumerate() {
        if volumes[..i].contains(v) {
            errs.push(duplicate(format!("{at}.volumes[{i}].name"), v));
        }
    }
    let mut seen: Vec<String> = Vec::new();
    for list in ["containers", "initContainers"] {
        for (i, c) in spec
            .get(list)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let name = c["name"].as_str().unwrap_or_default();
            if seen.iter().any(|n| n == name) {
                errs.push(duplicate(format!("{at}.{list}[{i}].name"), name));
            }
            seen.push(name.to_string());
            let mut paths: Vec<&str> = Vec::new();
            for (j, m) in c
                .get("volumeMounts")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                let vol = m["name"].as_str().unwrap_or_default();
                if !volumes.iter().any(|v| v == vol) {
                    errs.push(FieldError {
                        cause: "FieldValueNotFound",
                        field: format!("{at}.{list}[{i}].volumeMounts[{j}].name"),
                        body: format!("Not found: {}", quoted(vol)),
                    });
                }
                let path = m["mountPath"].as_str().unwrap_or_default();
                if paths.contains(&path) {
                    errs.push(FieldError::invalid(
                        &format!("{at}.{list}[{i}].volumeMounts[{j}].mountPath"),
                        &quoted(path),
                        "must be unique",
                    ));
                }
                paths.push(path);
            }
        }
    }
    errs
}

/// The part of built-in validation the charts and the operator meet: a
/// workload's selector must select its template, some fields are immutable.
/// `current` is the live object on update. Errors in Kubernetes' order.
pub fn validate(
    t: &crate::registry::ResourceType,
    obj: &Value,
    current: Option<&Value>,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if t.crd.is_some() {
        return errs;
    }
    match (t.group.as_str(), t.kind.as_str()) {
        ("apps", "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet") => {
            let sel = obj.pointer("/spec/selector");
            match sel {
                None => errs.push(FieldError {
                    cause: "FieldValueRequired",
                    field: "spec.selector".into(),
                    body: "Required value".into(),
                }),
                Some(s) if selector_empty(s) => errs.push(FieldError::invalid(
                    "spec.selector",
                    &go_label_selector(Some(s)),
                    &format!("empty selector is invalid for {}", t.kind.to_lowercase()),
                )),
                Some(s) => {
                    let labels = obj
                        .pointer("/spec/template/metadata/labels")
                        .cloned()
                        .unwrap_or(Value::Null);
                    if !selects(s, &labels) {
                        errs.push(FieldError::invalid(
                            "spec.template.metadata.labels",
                            &go_string_map(Some(&labels)),
                            "`selector` does not match template `labels`",
                        ));
                    }
                }
            }
            if let Some(spec) = obj.pointer("/spec/template/spec") {
                errs.extend(validate_pod_spec(spec, "spec.template.spec"));
            }
            match current {
                // A StatefulSet's spec is immutable but for a few fields.
                Some(cur) if t.kind == "StatefulSet" => {
                    let rest = |o: &Value| {
                        let mut spec = o.get("spec").cloned().unwrap_or(json!({}));
                        if let Some(m) = spec.as_object_mut() {
                            for k in [
                                "replicas",
                                "ordinals",
                                "template",
                                "updateStrategy",
                                "revisionHistoryLimit",
                                "persistentVolumeClaimRetentionPolicy",
                                "minReadySeconds",
                            ] {
                                m.remove(k);
                            }
                        }
                        spec
                    };
                    if rest(obj) != rest(cur) {
                        errs.push(FieldError {
                            cause: "FieldValueForbidden",
                            field: "spec".into(),
                            body: "Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden".into(),
                        });
                    }
                }
                Some(cur) if obj.pointer("/spec/selector") != cur.pointer("/spec/selector") => {
                    errs.push(FieldError::invalid(
                        "spec.selector",
                        &go_label_selector(obj.pointer("/spec/selector")),
                        "field is immutable",
                    ));
                }
                _ => {}
            }
        }
        ("", "Service") => {
            if let Some(cur) = current {
                let ips = |o: &Value| -> Vec<String> {
                    let list: Vec<String> = o
                        .pointer("/spec/clusterIPs")
                        .and_then(Value::as_array)
                        .map(|a| {
                            a.iter()
                                .filter_map(Value::as_str)
                                .map(str::to_string)
                                .collect()
                        })
                        .unwrap_or_default();
                    if list.is_empty() {
                        o.pointer("/spec/clusterIP")
                            .and_then(Value::as_str)
                            .filter(|ip| !ip.is_empty())
                            .map(|ip| vec![ip.to_string()])
                            .unwrap_or_default()
                    } else {
                        list
                    }
                };
                let external = |o: &Value| o.pointer("/spec/type") == Some(&json!("ExternalName"));
                let (old, new) = (ips(cur), ips(obj));
                let headless = |l: &[String]| l.first().is_some_and(|ip| ip == "None");
                let both_headless = headless(&old) && headless(&new);
                if !external(obj) && !external(cur) && !both_headless && old.len() == new.len() {
                    let shown = format!(
                        "[]string{{{}}}",
                        new.iter()
                            .map(|ip| quoted(ip))
                            .collect::<Vec<_>>()
                            .join(", ")
                    );
                    for (i, ip) in old.iter().enumerate() {
                        if *ip != new[i] {
                            errs.push(FieldError::invalid(
                                &format!("spec.clusterIPs[{i}]"),
                                &shown,
                                "may not change once set",
                            ));
                        }
                    }
                }
            }
        }
        ("", "PersistentVolumeClaim") => {
            if let Some(cur) = current {
                let rest = |o: &Value| {
                    let mut spec = o.get("spec").cloned().unwrap_or(json!({}));
                    if cur.pointer("/status/phase") == Some(&json!("Bound")) {
                        if let Some(r) = spec
                            .pointer_mut("/resources/requests")
                            .and_then(Value::as_object_mut)
                        {
                            r.remove("storage");
                        }
                    }
                    if let Some(m) = spec.as_object_mut() {
                        m.remove("volumeAttributesClassName");
                    }
                    if cur.pointer("/spec/volumeName").is_none() {
                        if let Some(m) = spec.as_object_mut() {
                            m.remove("volumeName");
                        }
                    }
                    crate::proto::drop_empty_as_go(&mut spec);
                    spec
                };
                if rest(obj) != rest(cur) {
                    errs.push(FieldError {
                        cause: "FieldValueForbidden",
                        field: "spec".into(),
                        body: format!(
                            "Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n  core.PersistentVolumeClaimSpec{{\n-  {}\n+  {}\n  }}\n",
                            rest(cur),
                            rest(obj)
                        ),
                    });
                }
            }
        }
        ("", "Pod") => {
            if let Some(spec) = obj.get("spec") {
                errs.extend(validate_pod_spec(spec, "spec"));
            }
        }
        ("batch", "CronJob") => {
            if let Some(spec) = obj.pointer("/spec/jobTemplate/spec/template/spec") {
                errs.extend(validate_pod_spec(
                    spec,
                    "spec.jobTemplate.spec.template.spec",
                ));
            }
        }
        ("batch", "Job") => {
            if let Some(spec) = obj.pointer("/spec/template/spec") {
                errs.extend(validate_pod_spec(spec, "spec.template.spec"));
            }
            if let Some(cur) = current {
                if obj.pointer("/spec/selector") != cur.pointer("/spec/selector") {
                    errs.push(FieldError::invalid(
                        "spec.selector",
                        &go_label_selector(obj.pointer("/spec/selector")),
                        "field is immutable",
                    ));
                }
                if obj.pointer("/spec/template") != cur.pointer("/spec/template") {
                    errs.push(FieldError::invalid(
                        "spec.template",
                        &format!(
                            "core.PodTemplateSpec{}",
                            obj.pointer("/spec/template")
                                .cloned()
                                .unwrap_or(Value::Null)
                        ),
                        "field is immutable",
                    ));
                }
            }
        }
        _ => {}
    }
    errs
}

/// metadata.name: Namespaces need an RFC 1123 label, Services an RFC 1035
/// label (one error per rule broken, as ValidateObjectMeta); empty for kinds
/// whose name is a subdomain (checked elsewhere).
pub fn validate_label_name(t: &crate::registry::ResourceType, name: &str) -> Vec<FieldError> {
    if t.crd.is_some() || !t.group.is_empty() {
        return Vec::new();
    }
    let (msg, fmt, example, first_ok): (&str, &str, &str, fn(char) -> bool) = match t.kind.as_str() {
        "Namespace" => (
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
            "[a-z0-9]([-a-z0-9]*[a-z0-9])?",
            "123-abc",
            |c| c.is_ascii_lowercase() || c.is_ascii_digit(),
        ),
        "Service" => (
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
            "[a-z]([-a-z0-9]*[a-z0-9])?",
            "abc-123",
            |c| c.is_ascii_lowercase(),
        ),
        _ => return Vec::new(),
    };
    let mut details = Vec::new();
    if name.len() > 63 {
        details.push("must be no more than 63 characters".to_string());
    }
    let ok = name.starts_with(first_ok)
        && name.ends_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !ok {
        details.push(format!(
            "{msg} (e.g. 'my-name',  or '{example}', regex used for validation is '{fmt}')"
        ));
    }
    details
        .iter()
        .map(|d| FieldError::invalid("metadata.name", &quoted(name), d))
        .collect()
}
