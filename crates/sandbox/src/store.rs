//! The object store: one lock, one resourceVersion counter, an event log for
//! watches, and the cascades a real control plane runs (finalizers, owner
//! references, namespace and CRD deletion).

use crate::error::ApiError;
use crate::registry::{Registry, ResourceType};
use crate::select::{FieldSelector, LabelSelector};
use crate::ssa::{self, Scope};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::Arc;
use tokio::sync::mpsc::UnboundedSender;

pub type Obj = Arc<Value>;
/// (resource key, namespace, name)
pub type ObjKey = (String, String, String);

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum EventType {
    Added,
    Modified,
    Deleted,
}

impl EventType {
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

pub struct LogEntry {
    pub rv: u64,
    pub res: String,
    pub ns: String,
    pub etype: EventType,
    /// What selectors see of the previous version (labels; name and
    /// namespace never change), so the log does not keep whole old objects.
    pub old: Option<Obj>,
    pub view: Obj,
    /// The object as JSON: the log keeps old versions compactly.
    pub json: bytes::Bytes,
}

fn selector_view(obj: &Value) -> Obj {
    let meta = &obj["metadata"];
    Arc::new(json!({"metadata": {
        "name": meta.get("name").cloned().unwrap_or(Value::Null),
        "namespace": meta.get("namespace").cloned().unwrap_or(Value::Null),
        "labels": meta.get("labels").cloned().unwrap_or(Value::Null),
    }}))
}

pub enum WatchMsg {
    /// The event type and the object serialized once for every watcher.
    Event(EventType, bytes::Bytes),
    /// The watch cannot continue (the server dropped it).
    Gone(String),
}

pub struct Watcher {
    pub res: String,
    pub ns: Option<String>,
    pub labels: LabelSelector,
    pub fields: FieldSelector,
    pub tx: UnboundedSender<WatchMsg>,
}

impl Watcher {
    fn matches(&self, res: &str, ns: &str, obj: &Value) -> bool {
        self.res == res
            && self.ns.as_deref().is_none_or(|n| n == ns)
            && self.labels.matches(obj)
            && self.fields.matches(obj)
    }
}

/// What a write carries besides the object.
#[derive(Clone, Default)]
pub struct WriteOptions {
    pub manager: String,
    pub dry_run: bool,
    pub status: bool,
    /// Through the `scale` subresource: the writer's fields are recorded
    /// as its (`subresource: scale`), as kube-apiserver records them.
    pub scale: bool,
    pub api_version: String,
}

#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Propagation {
    Background,
    Foreground,
    Orphan,
}

enum Work {
    Removed(Obj, String),
    Recheck(ObjKey),
}

pub struct State {
    pub registry: Registry,
    objects: HashMap<String, BTreeMap<(String, String), Obj>>,
    pub rv: u64,
    log: VecDeque<LogEntry>,
    log_cap: usize,
    watchers: Vec<Watcher>,
    uids: HashMap<String, ObjKey>,
    dependents: HashMap<String, BTreeSet<ObjKey>>,
    work: VecDeque<Work>,
    next_ip: u32,
    /// Objects whose simulated controller should look at them.
    pub touched: Vec<ObjKey>,
}

pub fn now() -> String {
    chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

pub fn new_uid() -> String {
    let b: [u8; 16] = rand::random();
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-4{}-{}{}-{}",
        &h[0..8],
        &h[8..12],
        &h[13..16],
        ["8", "9", "a", "b"][(b[8] & 3) as usize],
        &h[17..20],
        &h[20..32]
    )
}

fn random_suffix() -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    (0..5)
        .map(|_| ALPHABET[rand::random::<usize>() % ALPHABET.len()] as char)
        .collect()
}

fn meta_str<'a>(obj: &'a Value, field: &str) -> Option<&'a str> {
    obj.get("metadata")
        .and_then(|m| m.get(field))
        .and_then(Value::as_str)
}

fn finalizers(obj: &Value) -> Vec<String> {
    obj.pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn set_finalizers(obj: &mut Value, f: &[String]) {
    let meta = obj["metadata"].as_object_mut().expect("metadata");
    if f.is_empty() {
        meta.remove("finalizers");
    } else {
        meta.insert("finalizers".into(), json!(f));
    }
}

fn owner_uids(obj: &Value) -> Vec<String> {
    obj.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|r| r.get("uid").and_then(Value::as_str).map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn is_deleting(obj: &Value) -> bool {
    obj.pointer("/metadata/deletionTimestamp").is_some()
}

/// The object without the fields a write never changes by itself, for no-op detection.
fn comparable(obj: &Value) -> Value {
    let mut v = obj.clone();
    if let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("resourceVersion");
        if let Some(Value::Array(mf)) = meta.get_mut("managedFields") {
            for e in mf {
                if let Some(e) = e.as_object_mut() {
                    e.remove("time");
                }
            }
        }
    }
    v
}

/// Everything but metadata and status: a change here bumps `metadata.generation`.
fn spec_part(obj: &Value) -> Value {
    let mut v = obj.clone();
    if let Some(m) = v.as_object_mut() {
        m.remove("metadata");
        m.remove("status");
    }
    v
}

impl State {
    pub fn new(log_cap: usize) -> State {
        let mut s = State {
            registry: Registry::with_builtins(),
            objects: HashMap::new(),
            rv: 0,
            log: VecDeque::new(),
            log_cap,
            watchers: Vec::new(),
            uids: HashMap::new(),
            dependents: HashMap::new(),
            work: VecDeque::new(),
            next_ip: 10,
            touched: Vec::new(),
        };
        let ns_type = s.registry.get("/namespaces").cloned().expect("namespaces");
        for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
            let obj = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": {"kubernetes.io/metadata.name": ns}}});
            s.create(
                &ns_type,
                "",
                obj,
                &WriteOptions {
                    manager: "kube-apiserver".into(),
                    ..Default::default()
                },
            )
            .expect("initial namespace");
        }
        s
    }

    pub fn type_of(&self, key: &str) -> Option<ResourceType> {
        self.registry.get(key).cloned()
    }

    pub fn get(&self, t: &ResourceType, ns: &str, name: &str) -> Result<Obj, ApiError> {
        self.objects
            .get(&t.key())
            .and_then(|m| m.get(&(ns.to_string(), name.to_string())))
            .cloned()
            .ok_or_else(|| ApiError::not_found(t, name))
    }

    fn get_key(&self, k: &ObjKey) -> Option<Obj> {
        self.objects
            .get(&k.0)
            .and_then(|m| m.get(&(k.1.clone(), k.2.clone())))
            .cloned()
    }

    /// Objects in key order starting after `after` (a continue token's position).
    pub fn list(
        &self,
        t: &ResourceType,
        ns: Option<&str>,
        labels: &LabelSelector,
        fields: &FieldSelector,
        after: Option<(String, String)>,
        limit: usize,
    ) -> (Vec<Obj>, Option<(String, String)>, usize) {
        let Some(map) = self.objects.get(&t.key()) else {
            return (Vec::new(), None, 0);
        };
        let start = match &after {
            Some(k) => std::ops::Bound::Excluded(k.clone()),
            None => match ns {
                Some(n) => std::ops::Bound::Included((n.to_string(), String::new())),
                None => std::ops::Bound::Unbounded,
            },
        };
        let mut items = Vec::new();
        let mut next = None;
        let mut remaining = 0;
        for ((ons, oname), obj) in map.range((start, std::ops::Bound::Unbounded)) {
            if let Some(n) = ns {
                if ons != n {
                    break;
                }
            }
            if !labels.matches(obj) || !fields.matches(obj) {
                continue;
            }
            if limit > 0 && items.len() >= limit {
                remaining += 1;
                continue;
            }
            items.push(obj.clone());
            if limit > 0 && items.len() == limit {
                next = Some((ons.clone(), oname.clone()));
            }
        }
        if remaining == 0 {
            next = None;
        }
        (items, next, remaining)
    }

    pub fn oldest_rv(&self) -> u64 {
        self.log.front().map(|e| e.rv).unwrap_or(self.rv + 1)
    }

    /// Events after `rv`, or None when the log no longer reaches back that far.
    pub fn events_since(&self, rv: u64, w: &Watcher) -> Option<Vec<(EventType, bytes::Bytes)>> {
        if rv + 1 < self.oldest_rv() && rv < self.rv {
            return None;
        }
        let mut out = Vec::new();
        for e in self.log.iter().filter(|e| e.rv > rv) {
            if let Some(et) = transition(w, &e.res, &e.ns, e.etype, e.old.as_deref(), &e.view) {
                out.push((et, e.json.clone()));
            }
        }
        Some(out)
    }

    pub fn add_watcher(&mut self, w: Watcher) {
        self.watchers.push(w);
    }

    fn commit(
        &mut self,
        t: &ResourceType,
        ns: &str,
        name: &str,
        old: Option<Obj>,
        new: Option<Value>,
    ) -> Obj {
        self.rv += 1;
        let rv = self.rv;
        let res = t.key();
        let okey = (ns.to_string(), name.to_string());
        let (etype, obj) = match new {
            Some(mut v) => {
                v["metadata"]["resourceVersion"] = json!(rv.to_string());
                let a = Arc::new(v);
                self.objects
                    .entry(res.clone())
                    .or_default()
                    .insert(okey, a.clone());
                (
                    if old.is_some() {
                        EventType::Modified
                    } else {
                        EventType::Added
                    },
                    a,
                )
            }
            None => {
                if let Some(m) = self.objects.get_mut(&res) {
                    m.remove(&okey);
                }
                let mut v = old.as_deref().cloned().unwrap_or(Value::Null);
                v["metadata"]["resourceVersion"] = json!(rv.to_string());
                (EventType::Deleted, Arc::new(v))
            }
        };
        let key: ObjKey = (res.clone(), ns.to_string(), name.to_string());
        if let Some(o) = &old {
            for u in owner_uids(o) {
                if let Some(s) = self.dependents.get_mut(&u) {
                    s.remove(&key);
                }
            }
        }
        if let Some(uid) = meta_str(&obj, "uid") {
            if etype == EventType::Deleted {
                self.uids.remove(uid);
            } else {
                self.uids.insert(uid.to_string(), key.clone());
                for u in owner_uids(&obj) {
                    self.dependents.entry(u).or_default().insert(key.clone());
                }
            }
        }
        let json = bytes::Bytes::from(serde_json::to_vec(&*obj).expect("json"));
        self.watchers.retain(|w| {
            if w.tx.is_closed() {
                return false;
            }
            match transition(w, &res, ns, etype, old.as_deref(), &obj) {
                Some(et) => w.tx.send(WatchMsg::Event(et, json.clone())).is_ok(),
                None => true,
            }
        });
        let old = old.as_deref().map(selector_view);
        let view = selector_view(&obj);
        self.log.push_back(LogEntry {
            rv,
            res,
            ns: ns.to_string(),
            etype,
            old,
            view,
            json,
        });
        while self.log.len() > self.log_cap {
            self.log.pop_front();
        }
        if etype == EventType::Deleted {
            self.work.push_back(Work::Removed(obj.clone(), t.key()));
        } else {
            self.touched.push(key);
        }
        obj
    }

    pub fn create(
        &mut self,
        t: &ResourceType,
        ns: &str,
        mut obj: Value,
        o: &WriteOptions,
    ) -> Result<Obj, ApiError> {
        if !obj.is_object() {
            return Err(ApiError::bad_request(
                "the body of the request was in an unknown format",
            ));
        }
        if obj.get("metadata").is_none_or(|m| !m.is_object()) {
            obj["metadata"] = json!({});
        }
        check_kind(t, &obj, &o.api_version)?;
        let ns = if t.namespaced { ns } else { "" };
        if t.namespaced {
            match meta_str(&obj, "namespace") {
                Some(n) if !n.is_empty() && n != ns => {
                    return Err(ApiError::bad_request("the namespace of the provided object does not match the namespace sent on the request"))
                }
                _ => {}
            }
            let ns_type = self.type_of("/namespaces").expect("namespaces");
            let nsobj = self
                .get(&ns_type, "", ns)
                .map_err(|_| ApiError::namespace_not_found(ns))?;
            if is_deleting(&nsobj) {
                return Err(crate::admission::namespace_terminating(
                    t,
                    ns,
                    &crate::admission::shown_name(&obj),
                ));
            }
            obj["metadata"]["namespace"] = json!(ns);
            if t.crd.is_none() && t.group.is_empty() && t.kind == "Pod" {
                let spec = obj.get("spec").cloned().unwrap_or(Value::Null);
                crate::admission::pod_service_account(
                    self,
                    ns,
                    &spec,
                    &crate::admission::shown_name(&obj),
                )?;
            }
        } else if let Some(m) = obj["metadata"].as_object_mut() {
            m.remove("namespace");
        }
        let name = match meta_str(&obj, "name").filter(|n| !n.is_empty()) {
            Some(n) => n.to_string(),
            None => match meta_str(&obj, "generateName").filter(|n| !n.is_empty()) {
                Some(prefix) => {
                    let n = format!("{prefix}{}", random_suffix());
                    obj["metadata"]["name"] = json!(n);
                    n
                }
                None => {
                    return Err(ApiError::invalid(
                        t,
                        "",
                        "metadata.name: Required value: name or generateName is required",
                    ))
                }
            },
        };
        validate_name(t, &name)?;
        let label_errors = crate::admission::validate_label_name(t, &name);
        if !label_errors.is_empty() {
            return Err(crate::admission::invalid(t, &name, &label_errors));
        }
        if self.get(t, ns, &name).is_ok() {
            return Err(ApiError::already_exists(t, &name));
        }
        let meta = obj["metadata"].as_object_mut().expect("metadata");
        for k in [
            "resourceVersion",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "selfLink",
        ] {
            meta.remove(k);
        }
        meta.insert("uid".into(), json!(new_uid()));
        meta.insert("creationTimestamp".into(), json!(now()));
        meta.insert("generation".into(), json!(1));
        if t.status_subresource && t.kind != "Namespace" && t.kind != "CustomResourceDefinition" {
            obj.as_object_mut().expect("object").remove("status");
        }
        self.default_object(t, &mut obj, None);
        if t.crd.is_some() {
            // Pruning, schema defaults and validation (crd_schema).
            crate::crd_schema::admit(t, &mut obj, None)?;
        }
        let errors = crate::admission::validate(t, &obj, None);
        if !errors.is_empty() {
            return Err(crate::admission::invalid(t, &name, &errors));
        }
        if t.crd.is_none() && t.kind == "CustomResourceDefinition" {
            self.prepare_crd(&mut obj, None)?;
        }
        let explicit_fields = obj
            .pointer("/metadata/managedFields")
            .is_some_and(|m| m.as_array().is_some_and(|a| !a.is_empty()));
        if !explicit_fields && !o.manager.is_empty() {
            let mut entries = Vec::new();
            let scope = Scope::Main {
                exclude_status: t.status_subresource,
            };
            let lists = crate::crd_schema::Lists::of(t, &api_version_of(t, &obj));
            let new_leaves = ssa::leaves(&obj, lists, scope);
            ssa::track_update(
                &mut entries,
                &Default::default(),
                &new_leaves,
                &o.manager,
                &api_version_of(t, &obj),
                "",
                &now(),
            );
            ssa::write_entries(&mut obj, &entries);
        }
        if t.crd.is_none() {
            crate::proto::drop_empty_as_go(&mut obj);
        }
        if o.dry_run {
            return Ok(Arc::new(obj));
        }
        let out = self.commit(t, ns, &name, None, Some(obj));
        self.after_write(t, &out);
        if t.crd.is_none() && t.group.is_empty() && t.kind == "Namespace" {
            self.ensure_default_service_account(&name);
        }
        self.gc();
        Ok(out)
    }

    /// The serviceaccount controller: every namespace that is not being
    /// deleted holds a ServiceAccount `default` (made again when deleted).
    fn ensure_default_service_account(&mut self, ns: &str) {
        let ns_type = self.type_of("/namespaces").expect("namespaces");
        if !self.get(&ns_type, "", ns).is_ok_and(|n| !is_deleting(&n)) {
            return;
        }
        let sa_type = self.type_of("/serviceaccounts").expect("serviceaccounts");
        if self.get(&sa_type, ns, "default").is_ok() {
            return;
        }
        let sa = json!({"apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": {"name": "default", "namespace": ns}});
        let _ = self.create(&sa_type, ns, sa, &WriteOptions::default());
    }

    /// Creates through server-side apply when the object does not exist yet.
    pub fn apply(
        &mut self,
        t: &ResourceType,
        ns: &str,
        name: &str,
        applied: Value,
        force: bool,
        o: &WriteOptions,
    ) -> Result<Obj, ApiError> {
        check_kind(t, &applied, &o.api_version)?;
        if let Some(n) = meta_str(&applied, "name") {
            if n != name {
                return Err(ApiError::bad_request(format!(
                    "the name of the object ({n}) does not match the name on the URL ({name})"
                )));
            }
        }
        let mut applied = applied;
        self.default_keys(t, &mut applied);
        // structured-merge-diff refuses to type an applied object whose keyed
        // lists repeat a key; the handler answers with a plain error (500).
        let duplicates = ssa::duplicate_keys(
            &applied,
            crate::crd_schema::Lists::of(t, &api_version_of(t, &applied)),
        );
        if !duplicates.is_empty() {
            let (group, version) = api_version_of(t, &applied)
                .rsplit_once('/')
                .map(|(g, v)| (g.to_string(), v.to_string()))
                .unwrap_or_else(|| (String::new(), api_version_of(t, &applied)));
            let what = if duplicates.len() == 1 {
                duplicates[0].clone()
            } else {
                let mut lines = vec!["errors:".to_string()];
                lines.extend(duplicates.iter().map(|d| format!("  {d}")));
                lines.join("\n")
            };
            return Err(ApiError::new(
                500,
                "",
                format!(
                    "failed to create typed patch object ({}/{}; {group}/{version}, Kind={}): {what}",
                    meta_str(&applied, "namespace").unwrap_or_default(),
                    meta_str(&applied, "name").unwrap_or_default(),
                    t.kind
                ),
            ));
        }
        let scope = if o.status {
            Scope::Status
        } else {
            Scope::Main {
                exclude_status: t.status_subresource,
            }
        };
        let builtin = crate::crd_schema::Lists::of(t, &api_version_of(t, &applied));
        let api_version = api_version_of(t, &applied);
        match self.get(t, ns, name) {
            Err(_) => {
                if o.status {
                    return Err(ApiError::not_found(t, name));
                }
                let skeleton =
                    json!({"apiVersion": api_version, "kind": t.kind, "metadata": {"name": name}});
                let out = ssa::apply(
                    &skeleton,
                    &applied,
                    &o.manager,
                    &api_version,
                    builtin,
                    scope,
                    force,
                    &now(),
                )
                .map_err(|c| conflict_error(t, name, c))?;
                let mut obj = out.object;
                ssa::write_entries(&mut obj, &out.entries);
                self.create(
                    t,
                    ns,
                    obj,
                    &WriteOptions {
                        manager: String::new(),
                        ..o.clone()
                    },
                )
            }
            Ok(current) => {
                let out = ssa::apply(
                    &current,
                    &applied,
                    &o.manager,
                    &api_version,
                    builtin,
                    scope,
                    force,
                    &now(),
                )
                .map_err(|c| conflict_error(t, name, c))?;
                let mut obj = out.object;
                ssa::write_entries(&mut obj, &out.entries);
                self.update_inner(t, ns, name, obj, &current, o, true)
            }
        }
    }

    pub fn update(
        &mut self,
        t: &ResourceType,
        ns: &str,
        name: &str,
        obj: Value,
        o: &WriteOptions,
    ) -> Result<Obj, ApiError> {
        if !obj.is_object() {
            return Err(ApiError::bad_request(
                "the body of the request was in an unknown format",
            ));
        }
        check_kind(t, &obj, &o.api_version)?;
        if let Some(n) = meta_str(&obj, "name") {
            if n != name {
                return Err(ApiError::bad_request(format!(
                    "the name of the object ({n}) does not match the name on the URL ({name})"
                )));
            }
        }
        let current = self.get(t, ns, name)?;
        if let Some(rv) = meta_str(&obj, "resourceVersion").filter(|r| !r.is_empty()) {
            if Some(rv) != meta_str(&current, "resourceVersion") {
                return Err(ApiError::stale(t, name));
            }
        }
        self.update_inner(t, ns, name, obj, &current, o, false)
    }

    #[allow(clippy::too_many_arguments)]
    fn update_inner(
        &mut self,
        t: &ResourceType,
        ns: &str,
        name: &str,
        mut obj: Value,
        current: &Obj,
        o: &WriteOptions,
        applied: bool,
    ) -> Result<Obj, ApiError> {
        if obj.get("metadata").is_none_or(|m| !m.is_object()) {
            obj["metadata"] = json!({});
        }
        if o.status {
            let mut base = (**current).clone();
            match obj.get("status") {
                Some(s) => base["status"] = s.clone(),
                None => {
                    base.as_object_mut().expect("object").remove("status");
                }
            }
            if applied {
                base["metadata"]["managedFields"] = obj["metadata"]
                    .get("managedFields")
                    .cloned()
                    .unwrap_or(json!([]));
            }
            obj = base;
        } else if t.status_subresource {
            match current.get("status") {
                Some(s) => obj["status"] = s.clone(),
                None => {
                    obj.as_object_mut().expect("object").remove("status");
                }
            }
        }
        for k in [
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "generation",
        ] {
            match current["metadata"].get(k) {
                Some(v) => obj["metadata"][k] = v.clone(),
                None => {
                    obj["metadata"].as_object_mut().expect("metadata").remove(k);
                }
            }
        }
        obj["metadata"]["name"] = json!(name);
        if t.namespaced {
            obj["metadata"]["namespace"] = json!(ns);
        } else {
            obj["metadata"]
                .as_object_mut()
                .expect("metadata")
                .remove("namespace");
        }
        if obj.get("apiVersion").is_none() {
            obj["apiVersion"] = current["apiVersion"].clone();
        }
        if obj.get("kind").is_none() {
            obj["kind"] = json!(t.kind);
        }
        self.default_object(t, &mut obj, Some(current));
        if t.crd.is_some() {
            // Pruning, schema defaults and validation (crd_schema).
            crate::crd_schema::admit(t, &mut obj, Some(current))?;
        }
        if t.crd.is_none() && t.kind == "CustomResourceDefinition" {
            self.prepare_crd(&mut obj, Some(current))?;
        }
        if spec_part(&obj) != spec_part(current)
            || crate::crd_schema::status_bumps_generation(t, &obj, current)
        {
            let g = current["metadata"]["generation"].as_i64().unwrap_or(1);
            obj["metadata"]["generation"] = json!(g + 1);
        }
        if !applied {
            // As Kubernetes' FieldManager.Update: managedFields written by the
            // client replace the live ones (kubectl's client-side to
            // server-side migration patches them); `[{}]` clears them; absent
            // or `[]` keeps the live ones. The write's own changes are then
            // tracked on top.
            let given = match obj.pointer("/metadata/managedFields") {
                Some(Value::Array(list))
                    if list
                        .iter()
                        .all(|e| e.as_object().is_some_and(serde_json::Map::is_empty))
                        && !list.is_empty() =>
                {
                    Some(Vec::new())
                }
                Some(Value::Array(list)) if !list.is_empty() => Some(ssa::read_entries(&obj)),
                _ => None,
            };
            let mut entries = given.unwrap_or_else(|| ssa::read_entries(current));
            if !o.manager.is_empty() {
                let scope = if o.status {
                    Scope::Status
                } else {
                    Scope::Main {
                        exclude_status: t.status_subresource,
                    }
                };
                let builtin = crate::crd_schema::Lists::of(t, &api_version_of(t, &obj));
                let old = ssa::leaves(current, builtin, scope);
                let new = ssa::leaves(&obj, builtin, scope);
                let sub = if o.status {
                    "status"
                } else if o.scale {
                    "scale"
                } else {
                    ""
                };
                let untouched: Vec<ssa::Entry> = entries
                    .iter()
                    .filter(|e| (e.subresource == "status") != o.status)
                    .cloned()
                    .collect();
                ssa::track_update(
                    &mut entries,
                    &old,
                    &new,
                    &o.manager,
                    &api_version_of(t, &obj),
                    sub,
                    &now(),
                );
                // Entries of the other scope are kept as they are.
                for e in untouched {
                    if !entries.iter().any(|x| {
                        x.manager == e.manager
                            && x.operation == e.operation
                            && x.subresource == e.subresource
                    }) {
                        entries.push(e);
                    }
                }
            }
            ssa::write_entries(&mut obj, &entries);
        }
        if t.crd.is_none() {
            crate::proto::drop_empty_as_go(&mut obj);
        }
        // Validated as stored, so that what storage drops is no change.
        if !o.status {
            let errors = crate::admission::validate(t, &obj, Some(current));
            if !errors.is_empty() {
                return Err(crate::admission::invalid(t, name, &errors));
            }
        }
        obj["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"].clone();
        if comparable(&obj) == comparable(current) {
            return Ok(current.clone());
        }
        let remove = is_deleting(&obj) && finalizers(&obj).is_empty();
        if o.dry_run {
            return Ok(Arc::new(obj));
        }
        let out = if remove {
            self.commit(t, ns, name, Some(current.clone()), None)
        } else {
            let out = self.commit(t, ns, name, Some(current.clone()), Some(obj));
            self.after_write(t, &out);
            if is_deleting(&out) {
                self.work
                    .push_back(Work::Recheck((t.key(), ns.to_string(), name.to_string())));
            }
            out
        };
        self.gc();
        Ok(out)
    }

    pub fn delete(
        &mut self,
        t: &ResourceType,
        ns: &str,
        name: &str,
        propagation: Option<Propagation>,
        preconditions: Option<&Value>,
        dry_run: bool,
    ) -> Result<Obj, ApiError> {
        let current = self.get(t, ns, name)?;
        if let Some(p) = preconditions {
            if let Some(uid) = p.get("uid").and_then(Value::as_str) {
                let actual = meta_str(&current, "uid").unwrap_or_default();
                if uid != actual {
                    return Err(ApiError::conflict(t, name, &format!(
                        "Precondition failed: UID in precondition: {uid}, UID in object meta: {actual}"
                    )));
                }
            }
            if let Some(rv) = p.get("resourceVersion").and_then(Value::as_str) {
                let actual = meta_str(&current, "resourceVersion").unwrap_or_default();
                if rv != actual {
                    return Err(ApiError::conflict(t, name, &format!(
                        "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {actual}"
                    )));
                }
            }
        }
        if dry_run {
            return Ok(current);
        }
        let out = self.delete_now(t, ns, name, propagation.unwrap_or(Propagation::Background));
        self.gc();
        Ok(out.unwrap_or(current))
    }

    fn delete_now(
        &mut self,
        t: &ResourceType,
        ns: &str,
        name: &str,
        propagation: Propagation,
    ) -> Option<Obj> {
        let current = self.get(t, ns, name).ok()?;
        let key = (t.key(), ns.to_string(), name.to_string());
        let mut obj = (*current).clone();
        let mut fins = finalizers(&obj);
        let has_dependents = meta_str(&obj, "uid")
            .is_some_and(|u| self.dependents.get(u).is_some_and(|d| !d.is_empty()));
        match propagation {
            Propagation::Foreground
                if has_dependents && !fins.iter().any(|f| f == "foregroundDeletion") =>
            {
                fins.push("foregroundDeletion".into())
            }
            Propagation::Orphan if has_dependents && !fins.iter().any(|f| f == "orphan") => {
                fins.push("orphan".into())
            }
            _ => {}
        }
        let namespace_pending = t.kind == "Namespace" && t.group.is_empty();
        if fins.is_empty() && !namespace_pending {
            return Some(self.commit(t, ns, name, Some(current), None));
        }
        if is_deleting(&current) && fins == finalizers(&current) {
            self.work.push_back(Work::Recheck(key));
            return Some(current);
        }
        set_finalizers(&mut obj, &fins);
        obj["metadata"]["deletionTimestamp"] = json!(now());
        obj["metadata"]["deletionGracePeriodSeconds"] = json!(0);
        if namespace_pending {
            obj["status"] = json!({"phase": "Terminating"});
        }
        let out = self.commit(t, ns, name, Some(current), Some(obj));
        self.work.push_back(Work::Recheck(key));
        Some(out)
    }

    pub fn delete_collection(
        &mut self,
        t: &ResourceType,
        ns: Option<&str>,
        labels: &LabelSelector,
        fields: &FieldSelector,
        propagation: Option<Propagation>,
        dry_run: bool,
    ) -> Vec<Obj> {
        let (items, _, _) = self.list(t, ns, labels, fields, None, 0);
        let mut out = Vec::new();
        for obj in items {
            let ons = meta_str(&obj, "namespace").unwrap_or_default().to_string();
            let name = meta_str(&obj, "name").unwrap_or_default().to_string();
            if dry_run {
                out.push(obj);
            } else if let Some(d) = self.delete_now(
                t,
                &ons,
                &name,
                propagation.unwrap_or(Propagation::Background),
            ) {
                out.push(d);
            }
        }
        self.gc();
        out
    }

    /// Runs the cascades until nothing is left to do.
    fn gc(&mut self) {
        while let Some(w) = self.work.pop_front() {
            match w {
                Work::Removed(obj, res) => self.on_removed(&obj, &res),
                Work::Recheck(key) => self.recheck(&key),
            }
        }
    }

    fn on_removed(&mut self, obj: &Value, res: &str) {
        if res == "/serviceaccounts" && meta_str(obj, "name") == Some("default") {
            if let Some(ns) = meta_str(obj, "namespace") {
                self.ensure_default_service_account(ns);
            }
        }
        if res == "apiextensions.k8s.io/customresourcedefinitions" {
            if let Ok(rt) = Registry::from_crd(obj) {
                self.registry.remove(&rt.key());
                self.objects.remove(&rt.key());
            }
        }
        // A terminating namespace waits for what is in it (an object whose
        // finalizers held it up, say): look at it again.
        if let Some(ns) = meta_str(obj, "namespace").filter(|n| !n.is_empty()) {
            let key: ObjKey = ("/namespaces".into(), String::new(), ns.to_string());
            if self.get_key(&key).is_some_and(|n| is_deleting(&n)) {
                self.work.push_back(Work::Recheck(key));
            }
        }
        // Owners in foreground deletion wait for this dependent.
        for u in owner_uids(obj) {
            if let Some(k) = self.uids.get(&u).cloned() {
                self.work.push_back(Work::Recheck(k));
            }
        }
        let Some(uid) = meta_str(obj, "uid") else {
            return;
        };
        let deps: Vec<ObjKey> = self
            .dependents
            .remove(uid)
            .map(|s| s.into_iter().collect())
            .unwrap_or_default();
        for d in deps {
            let Some(dep) = self.get_key(&d) else {
                continue;
            };
            let alive = owner_uids(&dep).iter().any(|u| self.uids.contains_key(u));
            if !alive && !is_deleting(&dep) {
                if let Some(t) = self.type_of(&d.0) {
                    self.delete_now(&t, &d.1, &d.2, Propagation::Background);
                }
            }
        }
    }

    /// Progress of an object being deleted: its GC finalizers, a namespace's
    /// content, a CRD's custom resources.
    fn recheck(&mut self, key: &ObjKey) {
        let Some(obj) = self.get_key(key) else { return };
        if !is_deleting(&obj) {
            return;
        }
        let Some(t) = self.type_of(&key.0) else {
            return;
        };
        let uid = meta_str(&obj, "uid").unwrap_or_default().to_string();
        let mut fins = finalizers(&obj);
        let deps: Vec<ObjKey> = self
            .dependents
            .get(&uid)
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default();
        if fins.iter().any(|f| f == "orphan") {
            for d in &deps {
                let Some(dep) = self.get_key(d) else { continue };
                let Some(dt) = self.type_of(&d.0) else {
                    continue;
                };
                let mut v = (*dep).clone();
                if let Some(refs) = v["metadata"]["ownerReferences"].as_array_mut() {
                    refs.retain(|r| r.get("uid").and_then(Value::as_str) != Some(&uid));
                    if refs.is_empty() {
                        v["metadata"]
                            .as_object_mut()
                            .expect("metadata")
                            .remove("ownerReferences");
                    }
                }
                self.commit(&dt, &d.1, &d.2, Some(dep), Some(v));
            }
            fins.retain(|f| f != "orphan");
        }
        if fins.iter().any(|f| f == "foregroundDeletion") {
            let mut waiting = false;
            for d in &deps {
                let Some(dep) = self.get_key(d) else { continue };
                waiting = true;
                if !is_deleting(&dep) {
                    if let Some(dt) = self.type_of(&d.0) {
                        self.delete_now(&dt, &d.1, &d.2, Propagation::Foreground);
                    }
                }
            }
            if !waiting || deps.iter().all(|d| self.get_key(d).is_none()) {
                fins.retain(|f| f != "foregroundDeletion");
            }
        }
        if t.kind == "Namespace" && t.group.is_empty() {
            if self.clear_namespace(&key.2) {
                let mut v = (*obj).clone();
                set_finalizers(&mut v, &fins);
                if fins.is_empty() {
                    self.commit(&t, "", &key.2, Some(obj), None);
                } else {
                    self.commit(&t, "", &key.2, Some(obj), Some(v));
                }
            }
            return;
        }
        if t.crd.is_none()
            && t.kind == "CustomResourceDefinition"
            && fins.iter().any(|f| f == CRD_CLEANUP)
        {
            if let Ok(rt) = Registry::from_crd(&obj) {
                let names: Vec<(String, String)> = self
                    .objects
                    .get(&rt.key())
                    .map(|m| m.keys().cloned().collect())
                    .unwrap_or_default();
                for (ns, name) in &names {
                    self.delete_now(&rt, ns, name, Propagation::Background);
                }
                if self.objects.get(&rt.key()).is_none_or(|m| m.is_empty()) {
                    fins.retain(|f| f != CRD_CLEANUP);
                }
            } else {
                fins.retain(|f| f != CRD_CLEANUP);
            }
        }
        if fins != finalizers(&obj) {
            let mut v = (*obj).clone();
            set_finalizers(&mut v, &fins);
            if fins.is_empty() {
                self.commit(&t, &key.1, &key.2, Some(obj), None);
            } else {
                self.commit(&t, &key.1, &key.2, Some(obj), Some(v));
            }
        }
    }

    /// Deletes what a terminating namespace holds; true once it is empty.
    fn clear_namespace(&mut self, ns: &str) -> bool {
        let mut empty = true;
        let types: Vec<ResourceType> = self
            .registry
            .all()
            .filter(|t| t.namespaced)
            .cloned()
            .collect();
        for t in types {
            let names: Vec<String> = self
                .objects
                .get(&t.key())
                .map(|m| {
                    m.range((ns.to_string(), String::new())..)
                        .take_while(|((n, _), _)| n == ns)
                        .map(|((_, name), _)| name.clone())
                        .collect()
                })
                .unwrap_or_default();
            for name in names {
                self.delete_now(&t, ns, &name, Propagation::Background);
                if self.get(&t, ns, &name).is_ok() {
                    empty = false;
                }
            }
        }
        empty
    }

    /// A written CRD (re-)registers the type it describes.
    fn after_write(&mut self, t: &ResourceType, obj: &Value) {
        if t.crd.is_none() && t.kind == "CustomResourceDefinition" {
            if let Ok(rt) = Registry::from_crd(obj) {
                self.registry.insert(rt);
            }
        }
    }

    fn default_keys(&self, t: &ResourceType, obj: &mut Value) {
        if t.crd.is_none() {
            default_ports(obj);
        }
    }

    fn default_object(&mut self, t: &ResourceType, obj: &mut Value, current: Option<&Value>) {
        if t.crd.is_some() {
            return;
        }
        default_ports(obj);
        match (t.group.as_str(), t.kind.as_str()) {
            ("", "Namespace") => {
                if obj.pointer("/spec/finalizers").is_none() {
                    obj["spec"]["finalizers"] = json!(["kubernetes"]);
                }
                if obj.pointer("/status/phase").is_none() {
                    obj["status"] = current
                        .and_then(|c| c.get("status").cloned())
                        .unwrap_or(json!({"phase": "Active"}));
                }
                let name = meta_str(obj, "name").unwrap_or_default().to_string();
                obj["metadata"]["labels"]["kubernetes.io/metadata.name"] = json!(name);
            }
            ("apps", "Deployment" | "StatefulSet" | "ReplicaSet") => {
                if obj.pointer("/spec/replicas").is_none() && obj.get("spec").is_some() {
                    obj["spec"]["replicas"] = json!(1);
                }
            }
            ("batch", "Job") => {
                if obj.get("spec").is_some() {
                    for (k, v) in [("completions", 1), ("parallelism", 1), ("backoffLimit", 6)] {
                        if obj["spec"].get(k).is_none() {
                            obj["spec"][k] = json!(v);
                        }
                    }
                }
            }
            // As the real API server: stringData is write-only, merged over
            // data (base64) and never stored.
            ("", "Secret") => {
                if let Some(Value::Object(plain)) =
                    obj.as_object_mut().and_then(|o| o.remove("stringData"))
                {
                    use base64::Engine;
                    if !obj.get("data").is_some_and(Value::is_object) {
                        obj["data"] = json!({});
                    }
                    for (k, v) in plain {
                        let text = v
                            .as_str()
                            .map(str::to_string)
                            .unwrap_or_else(|| v.to_string());
                        obj["data"][k] =
                            json!(base64::engine::general_purpose::STANDARD.encode(text));
                    }
                }
                if obj.get("type").is_none() {
                    obj["type"] = json!("Opaque");
                }
            }
            ("", "Service") => {
                if obj.get("spec").is_none() {
                    obj["spec"] = json!({});
                }
                if obj["spec"].get("type").is_none() {
                    obj["spec"]["type"] = json!("ClusterIP");
                }
                if let Some(ports) = obj["spec"]["ports"].as_array_mut() {
                    for p in ports {
                        if p.get("targetPort").is_none() {
                            if let Some(port) = p.get("port").cloned() {
                                p["targetPort"] = port;
                            }
                        }
                    }
                }
                if obj["spec"]["type"] != "ExternalName" && obj.pointer("/spec/clusterIP").is_none()
                {
                    let ip = match current.and_then(|c| c.pointer("/spec/clusterIP")) {
                        Some(ip) => ip.clone(),
                        None => {
                            self.next_ip += 1;
                            json!(format!(
                                "10.96.{}.{}",
                                self.next_ip / 250,
                                self.next_ip % 250
                            ))
                        }
                    };
                    obj["spec"]["clusterIP"] = ip.clone();
                    obj["spec"]["clusterIPs"] = json!([ip]);
                }
                if obj.pointer("/spec/sessionAffinity").is_none() {
                    obj["spec"]["sessionAffinity"] = json!("None");
                }
            }
            _ => {}
        }
    }

    fn prepare_crd(&mut self, obj: &mut Value, current: Option<&Value>) -> Result<(), ApiError> {
        let t = self
            .type_of("apiextensions.k8s.io/customresourcedefinitions")
            .expect("crd type");
        let name = meta_str(obj, "name").unwrap_or_default().to_string();
        let rt = Registry::from_crd(obj).map_err(|e| ApiError::invalid(&t, &name, &e))?;
        if let Some(existing) = self.registry.get(&rt.key()) {
            if existing.crd.as_deref() != Some(name.as_str()) {
                return Err(ApiError::invalid(
                    &t,
                    &name,
                    "spec.names.plural: Invalid value: already served by a built-in type",
                ));
            }
        }
        if current.is_none() {
            let mut f = finalizers(obj);
            if !f.iter().any(|x| x == CRD_CLEANUP) {
                f.push(CRD_CLEANUP.into());
            }
            set_finalizers(obj, &f);
        }
        let ts = current
            .and_then(|c| {
                c.pointer("/status/conditions/0/lastTransitionTime")
                    .cloned()
            })
            .unwrap_or_else(|| json!(now()));
        let mut accepted = obj["spec"]["names"].clone();
        if accepted.get("singular").is_none() {
            accepted["singular"] = json!(rt.singular);
        }
        if accepted.get("listKind").is_none() {
            accepted["listKind"] = json!(format!("{}List", rt.kind));
        }
        let mut stored: Vec<Value> = current
            .and_then(|c| {
                c.pointer("/status/storedVersions")
                    .and_then(Value::as_array)
                    .cloned()
            })
            .unwrap_or_default();
        if !stored.contains(&json!(rt.versions[0])) {
            stored.push(json!(rt.versions[0]));
        }
        obj["status"] = json!({
            "acceptedNames": accepted,
            "conditions": [
                {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts", "message": "no conflicts found", "lastTransitionTime": ts},
                {"type": "Established", "status": "True", "reason": "InitialNamesAccepted", "message": "the initial names have been accepted", "lastTransitionTime": ts},
            ],
            "storedVersions": stored,
        });
        Ok(())
    }

    /// Writes `status` as a controller would (no field manager tracking of the spec).
    pub fn write_status(&mut self, key: &ObjKey, status: Value) {
        let Some(current) = self.get_key(key) else {
            return;
        };
        let Some(t) = self.type_of(&key.0) else {
            return;
        };
        let mut obj = (*current).clone();
        obj["status"] = status;
        let o = WriteOptions {
            manager: "sandbox-controller".into(),
            status: true,
            scale: false,
            ..Default::default()
        };
        let _ = self.update_inner(&t, &key.1, &key.2, obj, &current, &o, false);
    }

    pub fn object(&self, key: &ObjKey) -> Option<Obj> {
        self.get_key(key)
    }

    pub fn object_count(&self) -> usize {
        self.objects.values().map(|m| m.len()).sum()
    }
}

const CRD_CLEANUP: &str = "customresourcecleanup.apiextensions.k8s.io";

fn api_version_of(t: &ResourceType, obj: &Value) -> String {
    obj.get("apiVersion")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| t.api_version(&t.versions[0]))
}

fn check_kind(t: &ResourceType, obj: &Value, api_version: &str) -> Result<(), ApiError> {
    if let Some(k) = obj.get("kind").and_then(Value::as_str) {
        if k != t.kind {
            return Err(ApiError::bad_request(format!(
                "the kind in the data ({k}) does not match the expected kind ({})",
                t.kind
            )));
        }
    }
    if let Some(av) = obj.get("apiVersion").and_then(Value::as_str) {
        if !api_version.is_empty() && av != api_version {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({av}) does not match the expected API version ({api_version})"
            )));
        }
    }
    Ok(())
}

fn validate_name(t: &ResourceType, name: &str) -> Result<(), ApiError> {
    let ok = name.len() <= 253
        && !name.is_empty()
        && name.chars().all(|c| {
            c.is_ascii_lowercase()
                || c.is_ascii_digit()
                || c == '-'
                || c == '.'
                || (c == ':' && t.group.starts_with("rbac"))
        })
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric());
    if ok {
        Ok(())
    } else {
        Err(ApiError::invalid(
            t,
            name,
            &format!("metadata.name: Invalid value: {name:?}: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
        ))
    }
}

/// `protocol: TCP` on container and service ports, a key field of their lists.
fn default_ports(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for (k, child) in m.iter_mut() {
                if k == "ports" {
                    if let Value::Array(items) = child {
                        for p in items.iter_mut() {
                            if (p.get("containerPort").is_some() || p.get("port").is_some())
                                && p.get("protocol").is_none()
                            {
                                p["protocol"] = json!("TCP");
                            }
                        }
                    }
                }
                if k != "metadata" {
                    default_ports(child);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(default_ports),
        _ => {}
    }
}

fn conflict_error(t: &ResourceType, name: &str, conflicts: Vec<ssa::Conflict>) -> ApiError {
    let message = if conflicts.len() == 1 {
        format!(
            "Apply failed with 1 conflict: conflict with {}: {}",
            conflicts[0].manager, conflicts[0].path
        )
    } else {
        let mut managers: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for c in &conflicts {
            managers.entry(&c.manager).or_default().push(&c.path);
        }
        let mut lines = Vec::new();
        for (m, paths) in managers {
            lines.push(format!("conflicts with {m}:"));
            for p in paths {
                lines.push(format!("- {p}"));
            }
        }
        format!(
            "Apply failed with {} conflicts: {}",
            conflicts.len(),
            lines.join("\n")
        )
    };
    let causes: Vec<Value> = conflicts
        .iter()
        .map(|c| json!({"reason": "FieldManagerConflict", "message": format!("conflict with {}", c.manager), "field": c.path}))
        .collect();
    let mut d = json!({"name": name, "kind": t.plural, "causes": causes});
    if !t.group.is_empty() {
        d["group"] = json!(t.group);
    }
    ApiError {
        details: Some(d),
        ..ApiError::new(409, "Conflict", message)
    }
}

/// What a watcher sees of a change, given its selectors.
fn transition(
    w: &Watcher,
    res: &str,
    ns: &str,
    etype: EventType,
    old: Option<&Value>,
    new: &Value,
) -> Option<EventType> {
    let now = w.matches(res, ns, new);
    let before = old.is_some_and(|o| w.matches(res, ns, o));
    match etype {
        EventType::Added if now => Some(EventType::Added),
        EventType::Deleted if now || before => Some(EventType::Deleted),
        EventType::Modified => match (before, now) {
            (true, true) => Some(EventType::Modified),
            (false, true) => Some(EventType::Added),
            (true, false) => Some(EventType::Deleted),
            _ => None,
        },
        _ => None,
    }
}
