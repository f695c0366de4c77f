//! How lists inside built-in kinds merge: the merge keys Kubernetes declares
//! for strategic merge patch and server-side apply (`x-kubernetes-list-type`).

use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
pub enum ListType {
    Atomic,
    /// A list of scalars merged as a set.
    Set,
    /// Items identified by these fields (the first one is the strategic merge key).
    Map(&'static [&'static str]),
}

/// `builtin` is false for custom resources: their lists are atomic outside
/// `metadata`, as Kubernetes treats CRD schemas without list-type markers.
pub fn list_type(field: &str, items: &[Value], builtin: bool, in_metadata: bool) -> ListType {
    if in_metadata {
        return match field {
            "finalizers" => ListType::Set,
            "ownerReferences" => ListType::Map(&["uid"]),
            _ => ListType::Atomic,
        };
    }
    if !builtin {
        return ListType::Atomic;
    }
    match field {
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "volumes"
        | "env"
        | "imagePullSecrets"
        | "webhooks"
        | "resourceClaims"
        | "secrets" => ListType::Map(&["name"]),
        "volumeMounts" => ListType::Map(&["mountPath"]),
        "volumeDevices" => ListType::Map(&["devicePath"]),
        "hostAliases" => ListType::Map(&["ip"]),
        "conditions" => ListType::Map(&["type"]),
        "topologySpreadConstraints" => ListType::Map(&["topologyKey", "whenUnsatisfiable"]),
        "ports" => {
            if items.iter().any(|i| i.get("containerPort").is_some()) {
                ListType::Map(&["containerPort", "protocol"])
            } else if items.iter().any(|i| i.get("port").is_some()) {
                ListType::Map(&["port", "protocol"])
            } else {
                ListType::Atomic
            }
        }
        _ => ListType::Atomic,
    }
}

/// The identity of a map-list item: its key fields (absent ones skipped).
pub fn item_key(item: &Value, keys: &[&str]) -> Value {
    let mut m = serde_json::Map::new();
    for k in keys {
        if let Some(v) = item.get(*k) {
            m.insert((*k).to_string(), v.clone());
        }
    }
    Value::Object(m)
}
