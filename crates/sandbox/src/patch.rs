//! JSON merge patch (RFC 7386), JSON patch (RFC 6902) and Kubernetes'
//! strategic merge patch.

use crate::lists::{item_key, list_type, ListType};
use serde_json::{Map, Value};

pub fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(p) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let t = target.as_object_mut().expect("object");
    for (k, v) in p {
        if v.is_null() {
            t.remove(k);
        } else {
            merge_patch(t.entry(k.clone()).or_insert(Value::Null), v);
        }
    }
}

fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

fn parent_and_last<'a>(doc: &'a mut Value, path: &str) -> Result<(&'a mut Value, String), String> {
    if path.is_empty() {
        return Err("cannot address the document root".into());
    }
    let (parent, last) = path
        .rsplit_once('/')
        .ok_or_else(|| format!("invalid JSON pointer {path:?}"))?;
    let target = doc
        .pointer_mut(parent)
        .ok_or_else(|| format!("doc is missing path: {path:?}"))?;
    Ok((target, unescape(last)))
}

fn add(doc: &mut Value, path: &str, value: Value) -> Result<(), String> {
    if path.is_empty() {
        *doc = value;
        return Ok(());
    }
    let (parent, last) = parent_and_last(doc, path)?;
    match parent {
        Value::Object(m) => {
            m.insert(last, value);
            Ok(())
        }
        Value::Array(a) => {
            if last == "-" {
                a.push(value);
                return Ok(());
            }
            let i: usize = last
                .parse()
                .map_err(|_| format!("invalid array index {last:?}"))?;
            if i > a.len() {
                return Err(format!(
                    "add operation does not apply: doc is missing path: {path:?}"
                ));
            }
            a.insert(i, value);
            Ok(())
        }
        _ => Err(format!(
            "add operation does not apply: doc is missing path: {path:?}"
        )),
    }
}

fn remove(doc: &mut Value, path: &str) -> Result<Value, String> {
    let (parent, last) = parent_and_last(doc, path)?;
    let missing = || format!("remove operation does not apply: doc is missing path: {path:?}");
    match parent {
        Value::Object(m) => m.remove(&last).ok_or_else(missing),
        Value::Array(a) => {
            let i: usize = last.parse().map_err(|_| missing())?;
            if i >= a.len() {
                return Err(missing());
            }
            Ok(a.remove(i))
        }
        _ => Err(missing()),
    }
}

pub fn json_patch(doc: &mut Value, ops: &Value) -> Result<(), String> {
    let ops = ops
        .as_array()
        .ok_or("json patch must be an array of operations")?;
    for op in ops {
        let kind = op
            .get("op")
            .and_then(Value::as_str)
            .ok_or("operation is missing \"op\"")?;
        let path = op
            .get("path")
            .and_then(Value::as_str)
            .ok_or("operation is missing \"path\"")?;
        let value = || {
            op.get("value")
                .cloned()
                .ok_or_else(|| format!("{kind} operation is missing \"value\""))
        };
        match kind {
            "add" => add(doc, path, value()?)?,
            "remove" => {
                remove(doc, path)?;
            }
            "replace" => {
                let v = value()?;
                let slot = doc.pointer_mut(path).ok_or_else(|| {
                    format!("replace operation does not apply: doc is missing key: {path}")
                })?;
                *slot = v;
            }
            "move" | "copy" => {
                let from = op
                    .get("from")
                    .and_then(Value::as_str)
                    .ok_or("operation is missing \"from\"")?;
                let v = if kind == "move" {
                    remove(doc, from)?
                } else {
                    doc.pointer(from).cloned().ok_or_else(|| {
                        format!("copy operation does not apply: doc is missing from path: {from}")
                    })?
                };
                add(doc, path, v)?;
            }
            "test" => {
                let v = value()?;
                // As the API server's json-patch: a missing member tests
                // equal to null (kube-runtime's finalizer helper relies on it).
                let found = doc.pointer(path);
                if found != Some(&v) && !(found.is_none() && v.is_null()) {
                    return Err(format!("testing value {path} failed: test failed"));
                }
            }
            other => return Err(format!("Unexpected kind: {other}")),
        }
    }
    Ok(())
}

/// Applies a strategic merge patch with the merge keys of built-in kinds.
pub fn strategic_merge_patch(target: &mut Value, patch: &Value) -> Result<(), String> {
    let out = merge_map(target.take(), patch, false)?;
    *target = out.unwrap_or(Value::Object(Map::new()));
    Ok(())
}

fn merge_map(original: Value, patch: &Value, in_metadata: bool) -> Result<Option<Value>, String> {
    let Value::Object(p) = patch else {
        return Ok(Some(patch.clone()));
    };
    match p.get("$patch").and_then(Value::as_str) {
        Some("delete") => return Ok(None),
        Some("replace") => {
            let mut clean = p.clone();
            clean.remove("$patch");
            return Ok(Some(strip_directives(Value::Object(clean))));
        }
        _ => {}
    }
    let mut out = match original {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    let mut orders: Vec<(String, Vec<Value>)> = Vec::new();
    for (k, v) in p {
        if k == "$patch" || k == "$retainKeys" {
            continue;
        }
        if let Some(field) = k.strip_prefix("$setElementOrder/") {
            if let Value::Array(order) = v {
                orders.push((field.to_string(), order.clone()));
            }
            continue;
        }
        if let Some(field) = k.strip_prefix("$deleteFromPrimitiveList/") {
            if let (Some(Value::Array(list)), Value::Array(gone)) = (out.get_mut(field), v) {
                list.retain(|x| !gone.contains(x));
            }
            continue;
        }
        if v.is_null() {
            out.remove(k);
            continue;
        }
        let child_meta = in_metadata || (k == "metadata" && !in_metadata);
        let existing = out.remove(k).unwrap_or(Value::Null);
        let merged = match v {
            Value::Object(_) => merge_map(existing, v, child_meta)?,
            Value::Array(items) => Some(merge_list(existing, items, k, in_metadata)?),
            _ => Some(v.clone()),
        };
        if let Some(m) = merged {
            out.insert(k.clone(), m);
        }
    }
    if let Some(Value::Array(keep)) = p.get("$retainKeys") {
        out.retain(|k, _| keep.iter().any(|x| x.as_str() == Some(k)));
    }
    for (field, order) in orders {
        if let Some(Value::Array(list)) = out.get_mut(&field) {
            reorder(list, &order, &field, in_metadata);
        }
    }
    Ok(Some(Value::Object(out)))
}

fn strip_directives(v: Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.into_iter()
                .filter(|(k, _)| !k.starts_with('$'))
                .map(|(k, v)| (k, strip_directives(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.into_iter().map(strip_directives).collect()),
        other => other,
    }
}

fn merge_list(
    original: Value,
    items: &[Value],
    field: &str,
    in_metadata: bool,
) -> Result<Value, String> {
    let mut list = match original {
        Value::Array(a) => a,
        _ => Vec::new(),
    };
    let replace = items
        .iter()
        .any(|i| i.get("$patch").and_then(Value::as_str) == Some("replace"));
    if replace {
        return Ok(Value::Array(
            items
                .iter()
                .filter(|i| i.get("$patch").is_none())
                .cloned()
                .map(strip_directives)
                .collect(),
        ));
    }
    match list_type(
        field,
        if list.is_empty() { items } else { &list },
        true,
        in_metadata,
    ) {
        ListType::Atomic => Ok(Value::Array(
            items.iter().cloned().map(strip_directives).collect(),
        )),
        ListType::Set => {
            for i in items {
                if !list.contains(i) {
                    list.push(i.clone());
                }
            }
            Ok(Value::Array(list))
        }
        ListType::Map(keys) => {
            let merge_key = keys[0];
            for item in items {
                let id = item.get(merge_key);
                let pos = id.and_then(|id| list.iter().position(|x| x.get(merge_key) == Some(id)));
                let delete = item.get("$patch").and_then(Value::as_str) == Some("delete");
                match (pos, delete) {
                    (Some(i), true) => {
                        list.remove(i);
                    }
                    (None, true) => {}
                    (Some(i), false) => {
                        let old = std::mem::take(&mut list[i]);
                        match merge_map(old, item, in_metadata)? {
                            Some(v) => list[i] = v,
                            None => {
                                list.remove(i);
                            }
                        }
                    }
                    (None, false) => list.push(strip_directives(item.clone())),
                }
            }
            Ok(Value::Array(list))
        }
    }
}

fn reorder(list: &mut [Value], order: &[Value], field: &str, in_metadata: bool) {
    let position = |x: &Value| -> usize {
        match list_type(field, order, true, in_metadata) {
            ListType::Map(keys) => {
                let k = item_key(x, &keys[..1]);
                order
                    .iter()
                    .position(|o| item_key(o, &keys[..1]) == k)
                    .unwrap_or(usize::MAX)
            }
            _ => order.iter().position(|o| o == x).unwrap_or(usize::MAX),
        }
    };
    list.sort_by_key(position);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strategic_merge_keys_containers_by_name() {
        let mut obj = json!({"spec": {"containers": [{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]}});
        let patch = json!({"spec": {"$setElementOrder/containers": [{"name": "b"}, {"name": "a"}],
            "containers": [{"name": "a", "image": "z"}]}});
        strategic_merge_patch(&mut obj, &patch).unwrap();
        assert_eq!(
            obj,
            json!({"spec": {"containers": [{"name": "b", "image": "y"}, {"name": "a", "image": "z"}]}})
        );
        let del = json!({"spec": {"containers": [{"name": "b", "$patch": "delete"}]}});
        strategic_merge_patch(&mut obj, &del).unwrap();
        assert_eq!(
            obj,
            json!({"spec": {"containers": [{"name": "a", "image": "z"}]}})
        );
    }

    #[test]
    fn json_patch_ops_and_test_failure() {
        let mut doc = json!({"a": [1, 2], "b": {"c": 1}});
        json_patch(
            &mut doc,
            &json!([{"op": "add", "path": "/a/-", "value": 3}, {"op": "remove", "path": "/b/c"},
            {"op": "copy", "from": "/a/0", "path": "/d"}]),
        )
        .unwrap();
        assert_eq!(doc, json!({"a": [1, 2, 3], "b": {}, "d": 1}));
        assert!(json_patch(&mut doc, &json!([{"op": "test", "path": "/d", "value": 2}])).is_err());
        // A missing member is null to a test, as on a real API server.
        assert!(json_patch(
            &mut doc,
            &json!([{"op": "test", "path": "/e", "value": null}])
        )
        .is_ok());
    }

    #[test]
    fn merge_patch_deletes_nulls() {
        let mut doc = json!({"a": {"b": 1, "c": 2}});
        merge_patch(&mut doc, &json!({"a": {"b": null, "d": [1]}}));
        assert_eq!(doc, json!({"a": {"c": 2, "d": [1]}}));
    }
}
