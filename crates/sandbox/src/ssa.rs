//! Field ownership (`metadata.managedFields`, FieldsV1) and server-side apply.

use crate::crd_schema::Lists;
use crate::lists::{item_key, ListType};
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// One path element as FieldsV1 spells it: `f:name`, `k:{"name":"x"}`, `v:"a"`, `i:0`.
pub type Path = Vec<String>;

/// Leaf and list-item paths of an object with their values (`None` for items).
pub type Leaves = BTreeMap<Path, Option<Value>>;

const UNTRACKED_META: &[&str] = &[
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "managedFields",
    "selfLink",
];

/// Which part of the object a write may own: the main resource or `status`.
#[derive(Clone, Copy, PartialEq)]
pub enum Scope {
    /// Everything but status (or everything when the kind has no status subresource).
    Main {
        exclude_status: bool,
    },
    Status,
}

/// `builtin`: `true` for built-in kinds, or a custom resource's [`Lists`].
pub fn leaves<'a>(obj: &Value, builtin: impl Into<Lists<'a>>, scope: Scope) -> Leaves {
    let builtin = builtin.into();
    let mut out = BTreeMap::new();
    let Some(m) = obj.as_object() else { return out };
    for (k, v) in m {
        if k == "apiVersion" || k == "kind" {
            continue;
        }
        match scope {
            Scope::Status if k != "status" => continue,
            Scope::Main {
                exclude_status: true,
            } if k == "status" => continue,
            _ => {}
        }
        let path = vec![format!("f:{k}")];
        if k == "metadata" {
            if let Some(meta) = v.as_object() {
                for (mk, mv) in meta {
                    if UNTRACKED_META.contains(&mk.as_str()) {
                        continue;
                    }
                    let mut p = path.clone();
                    p.push(format!("f:{mk}"));
                    walk(mk, mv, p, Lists::Builtin, true, &mut out);
                }
            }
            continue;
        }
        walk(k, v, path, builtin.child(k), false, &mut out);
    }
    out
}

fn walk(field: &str, v: &Value, path: Path, builtin: Lists, in_meta: bool, out: &mut Leaves) {
    match v {
        Value::Object(m) if !m.is_empty() && !builtin.atomic_map() => {
            for (k, child) in m {
                let mut p = path.clone();
                p.push(format!("f:{k}"));
                walk(k, child, p, builtin.child(k), in_meta, out);
            }
        }
        Value::Array(items) if !items.is_empty() => match builtin.list_shape(field, items, in_meta)
        {
            ListType::Atomic => {
                out.insert(path, Some(v.clone()));
            }
            ListType::Set => {
                for i in items {
                    let mut p = path.clone();
                    p.push(format!("v:{i}"));
                    out.insert(p, Some(i.clone()));
                }
            }
            ListType::Map(keys) => {
                for item in items {
                    let mut p = path.clone();
                    p.push(format!("k:{}", item_key(item, keys)));
                    out.insert(p.clone(), None);
                    if let Some(m) = item.as_object() {
                        for (k, child) in m {
                            let mut cp = p.clone();
                            cp.push(format!("f:{k}"));
                            walk(k, child, cp, builtin.items().child(k), in_meta, out);
                        }
                    }
                }
            }
        },
        _ => {
            out.insert(path, Some(v.clone()));
        }
    }
}

/// Map-keyed list items with the same key, as structured-merge-diff reports
/// them when it types an applied object: `.spec.containers[name="c"].env:
/// duplicate entries for key [name="A"]`.
/// `lists`: `true` for built-in kinds, or a custom resource's [`Lists`].
pub fn duplicate_keys<'a>(obj: &Value, lists: impl Into<Lists<'a>>) -> Vec<String> {
    fn go(field: &str, v: &Value, path: &str, lists: Lists, in_meta: bool, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, child) in m {
                    let meta = in_meta || (path.is_empty() && k == "metadata");
                    go(k, child, &format!("{path}.{k}"), lists.child(k), meta, out);
                }
            }
            Value::Array(items) => {
                if let ListType::Map(keys) = lists.list_shape(field, items, in_meta) {
                    let mut seen = BTreeSet::new();
                    for item in items {
                        let key = item_key(item, keys);
                        let shown: Vec<String> = key
                            .as_object()
                            .map(|m| m.iter().map(|(k, v)| format!("{k}={v}")).collect())
                            .unwrap_or_default();
                        let shown = format!("[{}]", shown.join(","));
                        if !seen.insert(key.to_string()) {
                            out.push(format!("{path}: duplicate entries for key {shown}"));
                            continue;
                        }
                        go(
                            field,
                            item,
                            &format!("{path}{shown}"),
                            lists.items(),
                            in_meta,
                            out,
                        );
                    }
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    go("", obj, "", lists.into(), false, &mut out);
    out
}

/// A manager's entry in `metadata.managedFields`.
#[derive(Clone, Debug)]
pub struct Entry {
    pub manager: String,
    pub operation: String,
    pub api_version: String,
    pub time: String,
    pub subresource: String,
    pub fields: BTreeSet<Path>,
}

impl Entry {
    fn identity(&self) -> (String, String, String) {
        (
            self.manager.clone(),
            self.operation.clone(),
            self.subresource.clone(),
        )
    }

    /// How Kubernetes names this manager in conflict messages.
    pub fn describe(&self) -> String {
        let mut s = format!("{:?}", self.manager);
        if !self.subresource.is_empty() {
            s = format!("{s} with subresource {:?}", self.subresource);
        }
        if self.operation == "Update" {
            s = format!("{s} using {}", self.api_version);
        }
        s
    }
}

pub fn read_entries(obj: &Value) -> Vec<Entry> {
    let Some(list) = obj
        .pointer("/metadata/managedFields")
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    list.iter()
        .map(|e| {
            let s = |k: &str| {
                e.get(k)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string()
            };
            let mut fields = BTreeSet::new();
            if let Some(f) = e.get("fieldsV1") {
                decode_fields(f, &mut Vec::new(), &mut fields);
            }
            Entry {
                manager: s("manager"),
                operation: s("operation"),
                api_version: s("apiVersion"),
                time: s("time"),
                subresource: s("subresource"),
                fields,
            }
        })
        .collect()
}

fn decode_fields(v: &Value, path: &mut Path, out: &mut BTreeSet<Path>) {
    let Some(m) = v.as_object() else { return };
    if m.is_empty() && !path.is_empty() {
        out.insert(path.clone());
        return;
    }
    for (k, child) in m {
        if k == "." {
            out.insert(path.clone());
            continue;
        }
        path.push(k.clone());
        decode_fields(child, path, out);
        path.pop();
    }
}

pub fn encode_fields(fields: &BTreeSet<Path>) -> Value {
    let mut root = Map::new();
    for p in fields {
        let mut node = &mut root;
        for (i, el) in p.iter().enumerate() {
            let child = node.entry(el.clone()).or_insert_with(|| json!({}));
            let child = child.as_object_mut().expect("object");
            if i + 1 == p.len()
                && fields
                    .range(p.clone()..)
                    .nth(1)
                    .is_some_and(|next| next.starts_with(p))
            {
                child.insert(".".into(), json!({}));
            }
            node = child;
        }
    }
    Value::Object(root)
}

pub fn write_entries(obj: &mut Value, entries: &[Entry]) {
    let list: Vec<Value> = entries
        .iter()
        .filter(|e| !e.fields.is_empty())
        .map(|e| {
            let mut m = json!({
                "manager": e.manager,
                "operation": e.operation,
                "apiVersion": e.api_version,
                "time": e.time,
                "fieldsType": "FieldsV1",
                "fieldsV1": encode_fields(&e.fields),
            });
            if !e.subresource.is_empty() {
                m["subresource"] = json!(e.subresource);
            }
            m
        })
        .collect();
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        if list.is_empty() {
            meta.remove("managedFields");
        } else {
            meta.insert("managedFields".into(), Value::Array(list));
        }
    }
}

pub struct Conflict {
    pub manager: String,
    pub path: String,
}

/// `.spec.containers[name="a"].image`, as structured-merge-diff prints a path.
pub fn path_string(p: &Path) -> String {
    let mut s = String::new();
    for el in p {
        if let Some(f) = el.strip_prefix("f:") {
            s.push('.');
            s.push_str(f);
        } else if let Some(k) = el.strip_prefix("k:") {
            let parsed: Value = serde_json::from_str(k).unwrap_or(Value::Null);
            let parts: Vec<String> = parsed
                .as_object()
                .map(|m| m.iter().map(|(k, v)| format!("{k}={v}")).collect())
                .unwrap_or_default();
            s.push_str(&format!("[{}]", parts.join(",")));
        } else if let Some(v) = el.strip_prefix("v:") {
            s.push_str(&format!("[={v}]"));
        } else if let Some(i) = el.strip_prefix("i:") {
            s.push_str(&format!("[{i}]"));
        }
    }
    s
}

/// Records a non-apply write: the manager takes the fields it changed.
pub fn track_update(
    entries: &mut Vec<Entry>,
    old: &Leaves,
    new: &Leaves,
    manager: &str,
    api_version: &str,
    subresource: &str,
    now: &str,
) {
    let changed: BTreeSet<Path> = new
        .iter()
        .filter(|(p, v)| old.get(*p) != Some(*v))
        .map(|(p, _)| p.clone())
        .collect();
    for e in entries.iter_mut() {
        e.fields
            .retain(|p| new.contains_key(p) && !changed.contains(p));
    }
    if !changed.is_empty() {
        let id = (
            manager.to_string(),
            "Update".to_string(),
            subresource.to_string(),
        );
        match entries.iter_mut().find(|e| e.identity() == id) {
            Some(e) => {
                e.fields.extend(changed);
                e.time = now.into();
                e.api_version = api_version.into();
            }
            None => entries.push(Entry {
                manager: manager.into(),
                operation: "Update".into(),
                api_version: api_version.into(),
                time: now.into(),
                subresource: subresource.into(),
                fields: changed,
            }),
        }
    }
    entries.retain(|e| !e.fields.is_empty());
}

/// The only manager whose applies may take over what its client-side
/// applies wrote (Kubernetes' lastAppliedManager).
const KUBECTL: &str = "kubectl";
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

fn conflict(e: &Entry, p: &Path) -> Conflict {
    Conflict {
        manager: e.describe(),
        path: path_string(p),
    }
}

/// The fields of the last-applied annotation that still hold the values it
/// gives, when it is of the live object's version.
fn last_applied_fields(
    current: &Value,
    cur_leaves: &Leaves,
    api_version: &str,
    builtin: Lists,
    scope: Scope,
) -> Option<BTreeSet<Path>> {
    let text = current
        .pointer("/metadata/annotations")?
        .get(LAST_APPLIED)?
        .as_str()?;
    let last: Value = serde_json::from_str(text).ok()?;
    if last.get("apiVersion").and_then(Value::as_str) != Some(api_version) {
        return None;
    }
    Some(
        leaves(&last, builtin, scope)
            .into_iter()
            .filter(|(p, v)| cur_leaves.get(p) == Some(v))
            .map(|(p, _)| p)
            .collect(),
    )
}

pub struct ApplyOutcome {
    pub object: Value,
    pub entries: Vec<Entry>,
}

/// Server-side apply of `applied` onto `current` by `manager`.
#[allow(clippy::too_many_arguments)]
pub fn apply<'a>(
    current: &Value,
    applied: &Value,
    manager: &str,
    api_version: &str,
    builtin: impl Into<Lists<'a>>,
    scope: Scope,
    mut force: bool,
    now: &str,
) -> Result<ApplyOutcome, Vec<Conflict>> {
    let builtin = builtin.into();
    let subresource = if scope == Scope::Status { "status" } else { "" };
    let mut entries = read_entries(current);
    let cur_leaves = leaves(current, builtin, scope);
    let applied_leaves = leaves(applied, builtin, scope);
    let me = (
        manager.to_string(),
        "Apply".to_string(),
        subresource.to_string(),
    );

    let mut conflicts: Vec<(usize, Path)> = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        if e.identity() == me {
            continue;
        }
        for (p, v) in &applied_leaves {
            // A field owned but absent (an empty map Go's omitempty dropped
            // on storage) conflicts too: the apply would add it.
            if e.fields.contains(p) && cur_leaves.get(p) != Some(v) {
                conflicts.push((i, p.clone()));
            }
        }
    }
    if !force && !conflicts.is_empty() && manager == KUBECTL {
        // kubectl's move from client-side to server-side apply: fields its
        // last-applied annotation set, still at those values, are its own.
        if let Some(allowed) =
            last_applied_fields(current, &cur_leaves, api_version, builtin, scope)
        {
            let remaining: Vec<&(usize, Path)> = conflicts
                .iter()
                .filter(|(_, p)| !allowed.contains(p))
                .collect();
            if !remaining.is_empty() {
                return Err(remaining
                    .into_iter()
                    .map(|(i, p)| conflict(&entries[*i], p))
                    .collect());
            }
            force = true;
        }
    }
    if !force && !conflicts.is_empty() {
        return Err(conflicts
            .iter()
            .map(|(i, p)| conflict(&entries[*i], p))
            .collect());
    }
    let forced = conflicts;
    for (i, p) in forced {
        entries[i].fields.remove(&p);
    }

    let previous: BTreeSet<Path> = entries
        .iter()
        .find(|e| e.identity() == me)
        .map(|e| e.fields.clone())
        .unwrap_or_default();
    let others: BTreeSet<Path> = entries
        .iter()
        .filter(|e| e.identity() != me)
        .flat_map(|e| e.fields.iter().cloned())
        .collect();

    let mut object = current.clone();
    // Fields this manager applied before and no longer does, owned by no one else.
    let mut dropped: Vec<&Path> = previous
        .iter()
        .filter(|p| !applied_leaves.contains_key(*p) && !others.contains(*p))
        .filter(|p| !others.iter().any(|o| o.starts_with(p) && o.len() > p.len()))
        .collect();
    // A dropped list item goes whole: its fields are not removed first
    // (that would leave an item without its key, which no path finds).
    let items: Vec<Path> = dropped
        .iter()
        .filter(|p| {
            p.last()
                .is_some_and(|e| e.starts_with("k:") || e.starts_with("v:"))
        })
        .map(|p| (*p).clone())
        .collect();
    dropped.retain(|p| !items.iter().any(|q| q.len() < p.len() && p.starts_with(q)));
    dropped.sort_by_key(|p| std::cmp::Reverse(p.len()));
    for p in dropped {
        remove_path(&mut object, p, builtin);
    }
    merge_applied(&mut object, applied, builtin, scope);

    // Every field of the object, whatever the scope: an apply to status must
    // not drop other managers' ownership of the spec.
    let new_leaves = leaves(
        &object,
        builtin,
        Scope::Main {
            exclude_status: false,
        },
    );
    for e in entries.iter_mut() {
        e.fields.retain(|p| new_leaves.contains_key(p));
    }
    let fields: BTreeSet<Path> = applied_leaves.keys().cloned().collect();
    match entries.iter_mut().find(|e| e.identity() == me) {
        Some(e) => {
            if e.fields != fields {
                e.time = now.into();
            }
            e.fields = fields;
            e.api_version = api_version.into();
        }
        None => entries.push(Entry {
            manager: manager.into(),
            operation: "Apply".into(),
            api_version: api_version.into(),
            time: now.into(),
            subresource: subresource.into(),
            fields,
        }),
    }
    entries.retain(|e| !e.fields.is_empty());
    Ok(ApplyOutcome { object, entries })
}

fn merge_applied(object: &mut Value, applied: &Value, builtin: Lists, scope: Scope) {
    let (Some(obj), Some(app)) = (object.as_object_mut(), applied.as_object()) else {
        return;
    };
    for (k, v) in app {
        match scope {
            Scope::Status if k != "status" => continue,
            Scope::Main {
                exclude_status: true,
            } if k == "status" => continue,
            _ => {}
        }
        if k == "metadata" {
            let meta = obj.entry("metadata").or_insert_with(|| json!({}));
            if let (Some(meta), Some(am)) = (meta.as_object_mut(), v.as_object()) {
                for (mk, mv) in am {
                    if UNTRACKED_META.contains(&mk.as_str()) {
                        continue;
                    }
                    merge_value(
                        meta.entry(mk.clone()).or_insert(Value::Null),
                        mk,
                        mv,
                        Lists::Builtin,
                        true,
                    );
                }
            }
            continue;
        }
        merge_value(
            obj.entry(k.clone()).or_insert(Value::Null),
            k,
            v,
            builtin.child(k),
            false,
        );
    }
}

fn merge_value(target: &mut Value, field: &str, applied: &Value, builtin: Lists, in_meta: bool) {
    match applied {
        Value::Object(am) if !am.is_empty() && !builtin.atomic_map() => {
            if !target.is_object() {
                *target = json!({});
            }
            let t = target.as_object_mut().expect("object");
            for (k, v) in am {
                merge_value(
                    t.entry(k.clone()).or_insert(Value::Null),
                    k,
                    v,
                    builtin.child(k),
                    in_meta,
                );
            }
        }
        Value::Array(items) if !items.is_empty() => {
            let existing = match target {
                Value::Array(a) => std::mem::take(a),
                _ => Vec::new(),
            };
            let merged = match builtin.list_shape(field, items, in_meta) {
                ListType::Atomic => items.clone(),
                ListType::Set => {
                    let mut list = existing;
                    for i in items {
                        if !list.contains(i) {
                            list.push(i.clone());
                        }
                    }
                    list
                }
                ListType::Map(keys) => {
                    let mut list = existing;
                    for item in items {
                        let id = item_key(item, keys);
                        match list.iter().position(|x| item_key(x, keys) == id) {
                            Some(i) => {
                                let mut slot = std::mem::take(&mut list[i]);
                                if let Some(m) = item.as_object() {
                                    if !slot.is_object() {
                                        slot = json!({});
                                    }
                                    let t = slot.as_object_mut().expect("object");
                                    for (k, v) in m {
                                        merge_value(
                                            t.entry(k.clone()).or_insert(Value::Null),
                                            k,
                                            v,
                                            builtin.items().child(k),
                                            in_meta,
                                        );
                                    }
                                }
                                list[i] = slot;
                            }
                            None => list.push(item.clone()),
                        }
                    }
                    list
                }
            };
            *target = Value::Array(merged);
        }
        other => *target = other.clone(),
    }
}

/// Removes the field or list item at `p`, and maps left empty by it.
pub fn remove_path<'a>(object: &mut Value, p: &Path, builtin: impl Into<Lists<'a>>) {
    fn go(v: &mut Value, field: &str, p: &[String], builtin: Lists, in_meta: bool) -> bool {
        let Some((first, rest)) = p.split_first() else {
            return false;
        };
        if let Some(f) = first.strip_prefix("f:") {
            let Some(m) = v.as_object_mut() else {
                return false;
            };
            if rest.is_empty() {
                m.remove(f);
            } else if let Some(child) = m.get_mut(f) {
                let meta = in_meta || field.is_empty() && f == "metadata";
                let sub = if meta {
                    Lists::Builtin
                } else {
                    builtin.child(f)
                };
                if go(child, f, rest, sub, meta) {
                    m.remove(f);
                }
            }
            return m.is_empty();
        }
        let Some(list) = v.as_array_mut() else {
            return false;
        };
        let pos = if let Some(k) = first.strip_prefix("k:") {
            let key: Value = serde_json::from_str(k).unwrap_or(Value::Null);
            let keys: Vec<String> = key
                .as_object()
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default();
            list.iter().position(|item| {
                let mut m = Map::new();
                for k in &keys {
                    if let Some(x) = item.get(k) {
                        m.insert(k.clone(), x.clone());
                    }
                }
                Value::Object(m) == key
            })
        } else if let Some(val) = first.strip_prefix("v:") {
            let val: Value = serde_json::from_str(val).unwrap_or(Value::Null);
            list.iter().position(|x| *x == val)
        } else if let Some(i) = first.strip_prefix("i:") {
            i.parse().ok().filter(|i: &usize| *i < list.len())
        } else {
            None
        };
        if let Some(i) = pos {
            if rest.is_empty() {
                list.remove(i);
            } else {
                go(&mut list[i], field, rest, builtin.items(), in_meta);
            }
        }
        list.is_empty()
    }
    go(object, "", p, builtin.into(), false);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deploy(image: &str, replicas: Option<i64>) -> Value {
        let mut d = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "labels": {"a": "1"}},
            "spec": {"template": {"spec": {"containers": [{"name": "c", "image": image}]}}}});
        if let Some(r) = replicas {
            d["spec"]["replicas"] = json!(r);
        }
        d
    }

    #[test]
    fn fields_v1_round_trip_with_item_markers() {
        let l = leaves(
            &deploy("x", Some(2)),
            true,
            Scope::Main {
                exclude_status: true,
            },
        );
        let set: BTreeSet<Path> = l.keys().cloned().collect();
        let encoded = encode_fields(&set);
        assert_eq!(
            encoded["f:spec"]["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"c\"}"],
            json!({".": {}, "f:image": {}, "f:name": {}})
        );
        let mut back = BTreeSet::new();
        decode_fields(&encoded, &mut Vec::new(), &mut back);
        assert_eq!(back, set);
    }

    #[test]
    fn conflict_then_force_then_release() {
        let scope = Scope::Main {
            exclude_status: true,
        };
        let a = apply(
            &json!({"metadata": {"name": "d"}}),
            &deploy("x", Some(2)),
            "alice",
            "apps/v1",
            true,
            scope,
            false,
            "t",
        )
        .ok()
        .unwrap();
        let mut cur = a.object.clone();
        write_entries(&mut cur, &a.entries);
        let err = apply(
            &cur,
            &deploy("x", Some(3)),
            "bob",
            "apps/v1",
            true,
            scope,
            false,
            "t",
        )
        .err()
        .unwrap();
        assert_eq!(err.len(), 1);
        assert_eq!(err[0].path, ".spec.replicas");
        assert_eq!(err[0].manager, "\"alice\"");
        let b = apply(
            &cur,
            &deploy("x", Some(3)),
            "bob",
            "apps/v1",
            true,
            scope,
            true,
            "t",
        )
        .ok()
        .unwrap();
        let mut cur = b.object.clone();
        write_entries(&mut cur, &b.entries);
        assert_eq!(cur["spec"]["replicas"], json!(3));
        // alice stops applying replicas: bob still owns it, so it stays.
        let c = apply(
            &cur,
            &deploy("x", None),
            "alice",
            "apps/v1",
            true,
            scope,
            false,
            "t",
        )
        .ok()
        .unwrap();
        assert_eq!(c.object["spec"]["replicas"], json!(3));
        // bob stops applying replicas: nobody owns it, so it goes.
        let mut cur = c.object.clone();
        write_entries(&mut cur, &c.entries);
        let d = apply(
            &cur,
            &deploy("x", None),
            "bob",
            "apps/v1",
            true,
            scope,
            false,
            "t",
        )
        .ok()
        .unwrap();
        assert!(d.object["spec"].get("replicas").is_none());
    }

    #[test]
    fn kubectl_takes_over_what_its_last_applied_annotation_still_holds() {
        let scope = Scope::Main {
            exclude_status: true,
        };
        // What kubectl's client-side apply leaves: an Update entry owning the
        // fields, and the annotation they came from.
        let mut live = deploy("x", Some(2));
        let last = deploy("x", Some(2));
        live["metadata"]["annotations"] = json!({LAST_APPLIED: last.to_string()});
        let mut entries = Vec::new();
        track_update(
            &mut entries,
            &Leaves::new(),
            &leaves(&live, true, scope),
            "kubectl-client-side-apply",
            "apps/v1",
            "",
            "t",
        );
        write_entries(&mut live, &entries);
        let try_apply = |cur: &Value, manager: &str, replicas: i64| {
            apply(
                cur,
                &deploy("x", Some(replicas)),
                manager,
                "apps/v1",
                true,
                scope,
                false,
                "t",
            )
        };

        // Another manager still conflicts.
        let err = try_apply(&live, "other", 5).err().unwrap();
        assert_eq!(err[0].path, ".spec.replicas");
        // kubectl does not, and owns the field afterwards.
        let out = try_apply(&live, KUBECTL, 5).ok().unwrap();
        assert_eq!(out.object["spec"]["replicas"], 5);
        let kubectl = out.entries.iter().find(|e| e.manager == KUBECTL).unwrap();
        assert!(kubectl
            .fields
            .contains(&vec!["f:spec".to_string(), "f:replicas".to_string()]));
        // Unless someone changed the field since the annotation was written.
        let mut changed = live.clone();
        changed["spec"]["replicas"] = json!(3);
        let err = try_apply(&changed, KUBECTL, 5).err().unwrap();
        assert_eq!(err[0].path, ".spec.replicas");
    }
}
