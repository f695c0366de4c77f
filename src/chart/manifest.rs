//! Turning rendered files into Helm's manifest: notes taken out, documents
//! split, hooks separated, manifests sorted in install order.

use crate::goyaml::parse::{parse_first_document, to_json};
use crate::value::Value;
use std::collections::BTreeMap;

pub const INSTALL_ORDER: &[&str] = &[
    "PriorityClass",
    "Namespace",
    "NetworkPolicy",
    "ResourceQuota",
    "LimitRange",
    "PodSecurityPolicy",
    "PodDisruptionBudget",
    "ServiceAccount",
    "Secret",
    "SecretList",
    "ConfigMap",
    "StorageClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "CustomResourceDefinition",
    "ClusterRole",
    "ClusterRoleList",
    "ClusterRoleBinding",
    "ClusterRoleBindingList",
    "Role",
    "RoleList",
    "RoleBinding",
    "RoleBindingList",
    "Service",
    "DaemonSet",
    "Pod",
    "ReplicationController",
    "ReplicaSet",
    "Deployment",
    "HorizontalPodAutoscaler",
    "StatefulSet",
    "Job",
    "CronJob",
    "IngressClass",
    "Ingress",
    "APIService",
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
];

pub const UNINSTALL_ORDER: &[&str] = &[
    "ValidatingWebhookConfiguration",
    "MutatingWebhookConfiguration",
    "APIService",
    "Ingress",
    "IngressClass",
    "Service",
    "CronJob",
    "Job",
    "StatefulSet",
    "HorizontalPodAutoscaler",
    "Deployment",
    "ReplicaSet",
    "ReplicationController",
    "Pod",
    "DaemonSet",
    "RoleBindingList",
    "RoleBinding",
    "RoleList",
    "Role",
    "ClusterRoleBindingList",
    "ClusterRoleBinding",
    "ClusterRoleList",
    "ClusterRole",
    "CustomResourceDefinition",
    "PersistentVolumeClaim",
    "PersistentVolume",
    "StorageClass",
    "ConfigMap",
    "SecretList",
    "Secret",
    "ServiceAccount",
    "PodDisruptionBudget",
    "PodSecurityPolicy",
    "LimitRange",
    "ResourceQuota",
    "NetworkPolicy",
    "Namespace",
    "PriorityClass",
];

#[derive(Debug, Clone, Default)]
pub struct Head {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub namespace: String,
    pub annotations: BTreeMap<String, String>,
}

#[derive(Debug, Clone)]
pub struct Manifest {
    /// Template path (`chart/templates/x.yaml`).
    pub path: String,
    pub content: String,
    pub head: Head,
}

#[derive(Debug, Clone)]
pub struct Hook {
    pub name: String,
    pub kind: String,
    pub path: String,
    pub manifest: String,
    pub events: Vec<String>,
    pub weight: i64,
    pub delete_policies: Vec<String>,
    pub output_log_policies: Vec<String>,
}

const HOOK_EVENTS: &[&str] = &[
    "pre-install",
    "post-install",
    "pre-delete",
    "post-delete",
    "pre-upgrade",
    "post-upgrade",
    "pre-rollback",
    "post-rollback",
    "test",
];

/// Helm v4's SplitManifests: split on the regex `(?:^|\s*\n)---\s*` (Go's
/// `\s` is `[\t\n\f\r ]`), drop empty pieces, trim each piece's start.
/// A hand-written matcher with the regex's leftmost-first semantics: the
/// regex engine cannot skip ahead on this pattern and was a hot spot.
pub fn split_documents(file: &str) -> Vec<String> {
    document_ranges(file)
        .into_iter()
        .map(|(start, end)| file[start..end].to_string())
        .collect()
}

/// `split_documents` of a text the caller gives up: a file of one document
/// (most are) becomes that document without a copy.
pub fn split_documents_owned(mut file: String) -> Vec<String> {
    let ranges = document_ranges(&file);
    if let [(start, end)] = ranges[..] {
        file.truncate(end);
        file.drain(..start);
        return vec![file];
    }
    ranges
        .into_iter()
        .map(|(start, end)| file[start..end].to_string())
        .collect()
}

/// Where each non-blank document of a file starts and ends (its leading
/// whitespace left out).
fn document_ranges(file: &str) -> Vec<(usize, usize)> {
    let is_ws = |b: u8| matches!(b, b'\t' | b'\n' | 0x0c | b'\r' | b' ');
    let big = file.trim_start();
    let b = big.as_bytes();
    let mut pieces: Vec<&str> = Vec::new();
    let mut last = 0; // end of the previous separator
    let mut search = 0;
    while let Some(off) = memchr::memmem::find(&b[search..], b"---") {
        let at = search + off;
        let start = if at == 0 {
            Some(0)
        } else if at > last && b[at - 1] == b'\n' {
            // Extend back over whitespace, not past the previous separator.
            let mut p = at - 1;
            while p > last && is_ws(b[p - 1]) {
                p -= 1;
            }
            Some(p)
        } else {
            None
        };
        match start {
            Some(st) => {
                pieces.push(&big[last..st]);
                let mut end = at + 3;
                while end < b.len() && is_ws(b[end]) {
                    end += 1;
                }
                last = end;
                search = end;
            }
            None => search = at + 1,
        }
    }
    pieces.push(&big[last..]);
    let base = file.as_ptr() as usize;
    pieces
        .into_iter()
        .filter(|d| !d.trim().is_empty())
        .map(|d| {
            let d = d.trim_start();
            let start = d.as_ptr() as usize - base;
            (start, start + d.len())
        })
        .collect()
}

/// A rendered document Helm cannot read the head (apiVersion, kind,
/// metadata) of, in Helm's words.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("YAML parse error on {path}: {reason}")]
pub struct ManifestError {
    /// The template the document came from.
    pub path: String,
    #[source]
    pub reason: HeadError,
}

/// Why a document's head could not be read: sigs.k8s.io/yaml's YAML to
/// JSON step, then encoding/json's decoding into Helm's SimpleHead (each
/// variant holds the JSON kind found).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HeadError {
    /// The YAML parser's.
    #[error("error converting YAML to JSON: {0}")]
    Syntax(#[source] crate::goyaml::YamlError),
    /// The YAML to JSON conversion's own.
    #[error("{0}")]
    ToJson(#[source] crate::goyaml::YamlError),
    #[error("error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {kind} into Go struct field {field} of type string")]
    NotAString {
        kind: &'static str,
        field: &'static str,
    },
    #[error("error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {0} into Go struct field .metadata.annotations of type map[string]string")]
    AnnotationsNotAMap(&'static str),
    #[error("error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {0} into Go struct field SimpleHead.metadata of type struct {{ Name string \"json:\\\"name\\\"\"; Annotations map[string]string \"json:\\\"annotations\\\"\" }}")]
    MetadataNotAStruct(&'static str),
    #[error("error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {0} into Go value of type util.SimpleHead")]
    NotAnObject(&'static str),
}

/// Read the head of a document from the parser's event stream without
/// building the tree (manifests can be megabytes of CRD schema). Returns
/// `Ok(None)` for the rare shapes (aliases, merge keys) the full decoder
/// must handle.
fn head_streaming(doc: &str) -> Result<Option<Head>, HeadError> {
    use crate::goyaml::libyaml::{Event, EventType};
    use crate::goyaml::parse::{resolve_scalar, Events};
    use crate::goyaml::resolve::Scalar;
    let bytes = crate::value::gostr::to_bytes(doc);
    let mut p = Events::new(&bytes);
    // A tagged scalar the decoder refuses: the full decoder words it, once
    // the whole document has parsed.
    let refused = std::cell::Cell::new(false);
    // Where each open collection is: 0 a list, 1 a map before a key, 2 a
    // map before a value.
    let mut frames: Vec<u8> = Vec::new();
    let stopped = std::cell::Cell::new(false);
    let mut next = || -> Result<Event, HeadError> {
        if stopped.get() {
            return Ok(Event {
                typ: EventType::StreamEnd,
                ..Default::default()
            });
        }
        let e = p.next_event().map_err(HeadError::Syntax)?;
        let is_key = frames.last() == Some(&1);
        if let Some(f) = frames.last_mut() {
            *f = match *f {
                1 => 2,
                2 => 1,
                f => f,
            };
        }
        match e.typ {
            // An alias anywhere (it may sit inside its own anchor's value)
            // is left to the full decoder, and so is a key that is a list
            // or a map (an invalid map key), null (which sigs.k8s.io/yaml
            // refuses) or a merge.
            EventType::Alias => {
                // go-yaml's parser resolves an alias as it reads it: an
                // unknown one fails before anything after it is read.
                refused.set(true);
                stopped.set(true);
                return Ok(Event {
                    typ: EventType::StreamEnd,
                    ..Default::default()
                });
            }
            EventType::MappingStart => {
                if is_key {
                    refused.set(true);
                }
                frames.push(1);
            }
            EventType::SequenceStart => {
                if is_key {
                    refused.set(true);
                }
                frames.push(0);
            }
            EventType::MappingEnd | EventType::SequenceEnd => {
                frames.pop();
            }
            EventType::Scalar => {
                let v = &e.value[..];
                if e.tag.is_empty() {
                    let plain = e.implicit;
                    if is_key
                        && plain
                        && matches!(v, b"" | b"~" | b"null" | b"Null" | b"NULL" | b"<<")
                    {
                        refused.set(true);
                    }
                    // .inf, .nan and their kin: JSON has no such numbers.
                    if plain
                        && matches!(v.first(), Some(b'.' | b'+' | b'-'))
                        && v.len() <= 5
                        && matches!(
                            crate::goyaml::resolve::resolve_plain(&String::from_utf8_lossy(v)),
                            Scalar::Float(f) if !f.is_finite()
                        )
                    {
                        refused.set(true);
                    }
                } else {
                    // A tagged scalar the decoder refuses or that JSON
                    // cannot hold: the full decoder words it, once the
                    // whole document has parsed.
                    match resolve_scalar(
                        String::from_utf8_lossy(v).into_owned(),
                        &String::from_utf8_lossy(&e.tag),
                        e.implicit,
                    ) {
                        Err(_) => refused.set(true),
                        Ok(Scalar::Float(f)) if !f.is_finite() => refused.set(true),
                        Ok(Scalar::Null | Scalar::Merge) if is_key => refused.set(true),
                        Ok(_) => {}
                    }
                }
            }
            _ => {}
        }
        Ok(e)
    };
    enum Step {
        Value(Scalar),
        Map,
        Seq,
        Alias,
        End,
    }
    fn classify(e: Event) -> Step {
        match e.typ {
            EventType::Scalar => {
                let tag = String::from_utf8_lossy(&e.tag).into_owned();
                let text = match String::from_utf8(e.value) {
                    Ok(s) => s,
                    Err(e) => crate::value::gostr::from_vec(e.into_bytes()),
                };
                match resolve_scalar(text, &tag, e.implicit) {
                    Ok(s) => Step::Value(s),
                    Err(_) => Step::Value(Scalar::Null),
                }
            }
            EventType::MappingStart => Step::Map,
            EventType::SequenceStart => Step::Seq,
            EventType::Alias => Step::Alias,
            _ => Step::End,
        }
    }
    // Consume the rest of a collection whose start was already read.
    fn skip(next: &mut dyn FnMut() -> Result<Event, HeadError>) -> Result<(), HeadError> {
        let mut depth = 1;
        while depth > 0 {
            match next()?.typ {
                EventType::MappingStart | EventType::SequenceStart => depth += 1,
                EventType::MappingEnd | EventType::SequenceEnd => depth -= 1,
                EventType::StreamEnd => return Ok(()),
                _ => {}
            }
        }
        Ok(())
    }
    let kind_name = |s: &Scalar| match s {
        Scalar::Bool(_) => "bool",
        Scalar::Int(_) | Scalar::Uint(_) | Scalar::Float(_) => "number",
        _ => "string",
    };
    let field = |s: Scalar, field: &'static str| -> Result<String, HeadError> {
        match s {
            Scalar::Str(x) | Scalar::Timestamp(x) => Ok(x),
            Scalar::Null => Ok(String::new()),
            // sigs.k8s.io/yaml turns a scalar meant for a string field into
            // its text before JSON sees it.
            Scalar::Bool(b) => Ok(b.to_string()),
            Scalar::Int(i) => Ok(i.to_string()),
            Scalar::Uint(u) => Ok(u.to_string()),
            Scalar::Float(f) => Ok(go_float_text(f)),
            other => Err(HeadError::NotAString {
                kind: kind_name(&other),
                field,
            }),
        }
    };
    let mut h = Head::default();
    // Stream and document start.
    let first = loop {
        let e = next()?;
        match e.typ {
            EventType::StreamStart | EventType::DocumentStart | EventType::None => continue,
            _ => break e,
        }
    };
    match classify(first) {
        Step::End => return Ok((!refused.get()).then_some(h)),
        Step::Value(Scalar::Null) => {}
        Step::Map => loop {
            let k = match classify(next()?) {
                Step::End => break,
                Step::Value(Scalar::Merge) | Step::Alias => return Ok(None),
                Step::Value(k) => k,
                Step::Map | Step::Seq => return Ok(None),
            };
            let key = match k {
                Scalar::Str(s) => s,
                _ => String::new(),
            };
            let v = classify(next()?);
            match (key.as_str(), v) {
                (_, Step::Alias) => return Ok(None),
                ("apiVersion", Step::Value(s)) => {
                    h.api_version = field(s, "SimpleHead.apiVersion")?
                }
                ("kind", Step::Value(s)) => h.kind = field(s, "SimpleHead.kind")?,
                ("metadata", Step::Map) => loop {
                    let mk = match classify(next()?) {
                        Step::End => break,
                        Step::Value(Scalar::Str(s)) => s,
                        Step::Value(Scalar::Merge) | Step::Alias | Step::Map | Step::Seq => {
                            return Ok(None)
                        }
                        Step::Value(_) => String::new(),
                    };
                    match (mk.as_str(), classify(next()?)) {
                        (_, Step::Alias) => return Ok(None),
                        ("name", Step::Value(s)) => h.name = field(s, ".metadata.name")?,
                        // Helm 4's SimpleHead has no namespace: any value goes.
                        ("namespace", Step::Value(s)) => {
                            h.namespace = field(s, ".metadata.namespace").unwrap_or_default()
                        }
                        ("annotations", Step::Map) => loop {
                            let ak = match classify(next()?) {
                                Step::End => break,
                                Step::Value(Scalar::Str(s)) => s,
                                _ => return Ok(None),
                            };
                            match classify(next()?) {
                                Step::Value(s) => {
                                    let v = field(s, ".metadata.annotations")?;
                                    h.annotations.insert(ak, v);
                                }
                                _ => return Ok(None),
                            }
                        },
                        ("namespace", Step::Map | Step::Seq) => skip(&mut next)?,
                        ("name" | "namespace" | "annotations", _) => return Ok(None),
                        (_, Step::Map | Step::Seq) => skip(&mut next)?,
                        _ => {}
                    }
                },
                ("apiVersion" | "kind" | "metadata", _) => return Ok(None),
                (_, Step::Map | Step::Seq) => skip(&mut next)?,
                _ => {}
            }
        },
        _ => return Ok(None),
    }
    // The rest of the first document must still parse; go-yaml's Unmarshal
    // reads nothing after its end.
    loop {
        match next()?.typ {
            EventType::StreamEnd | EventType::DocumentEnd => break,
            _ => {}
        }
    }
    if refused.get() {
        return Ok(None);
    }
    Ok(Some(h))
}

fn head_of(doc: &str, path: &str) -> Result<Head, ManifestError> {
    let head = match head_streaming(doc) {
        Ok(Some(h)) => Ok(h),
        Ok(None) => head_full(doc),
        Err(e) => Err(e),
    };
    head.map_err(|reason| ManifestError {
        path: path.to_string(),
        reason,
    })
}

/// strconv.FormatFloat(f, 'g', -1, 64), as sigs.k8s.io/yaml writes a float
/// bound for a string field.
fn go_float_text(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    crate::value::float::format_float_g(f)
}

fn head_full(doc: &str) -> Result<Head, HeadError> {
    let first = parse_first_document(doc).map_err(HeadError::Syntax)?;
    let Some(first) = first else {
        return Ok(Head::default());
    };
    let v = to_json(&first).map_err(HeadError::ToJson)?;
    let mut h = Head::default();
    match &v {
        Value::Nil => return Ok(h),
        Value::Map(m, _) => {
            let m = m.borrow();
            let field_str = |v: Option<&Value>, field: &'static str| -> Result<String, HeadError> {
                match v {
                    None | Some(Value::Nil) => Ok(String::new()),
                    Some(Value::Str(s)) => Ok(s.to_string()),
                    // sigs.k8s.io/yaml: a scalar meant for a string field
                    // becomes its text.
                    Some(Value::Bool(b)) => Ok(b.to_string()),
                    Some(Value::Int(i) | Value::Int64(i)) => Ok(i.to_string()),
                    Some(Value::Uint64(u)) => Ok(u.to_string()),
                    Some(Value::Float(f)) => Ok(go_float_text(*f)),
                    Some(other) => Err(HeadError::NotAString {
                        kind: crate::goyaml::parse::json_kind(other),
                        field,
                    }),
                }
            };
            h.api_version = field_str(m.get("apiVersion"), "SimpleHead.apiVersion")?;
            h.kind = field_str(m.get("kind"), "SimpleHead.kind")?;
            match m.get("metadata") {
                None | Some(Value::Nil) => {}
                Some(Value::Map(md, _)) => {
                    let md = md.borrow();
                    h.name = field_str(md.get("name"), ".metadata.name")?;
                    h.namespace =
                        field_str(md.get("namespace"), ".metadata.namespace").unwrap_or_default();
                    match md.get("annotations") {
                        None | Some(Value::Nil) => {}
                        Some(Value::Map(an, _)) => {
                            for (k, v) in an.borrow().iter() {
                                h.annotations.insert(
                                    k.clone(),
                                    field_str(Some(v), ".metadata.annotations")?,
                                );
                            }
                        }
                        Some(other) => {
                            return Err(HeadError::AnnotationsNotAMap(
                                crate::goyaml::parse::json_kind(other),
                            ))
                        }
                    }
                }
                Some(other) => {
                    return Err(HeadError::MetadataNotAStruct(
                        crate::goyaml::parse::json_kind(other),
                    ))
                }
            }
        }
        other => {
            return Err(HeadError::NotAnObject(crate::goyaml::parse::json_kind(
                other,
            )))
        }
    }
    Ok(h)
}

fn kind_rank(kind: &str, order: &[&str]) -> Option<usize> {
    order.iter().position(|k| *k == kind)
}

pub fn sort_by_kind<T>(items: &mut [T], kind_of: impl Fn(&T) -> &str, order: &[&str]) {
    items.sort_by(|a, b| {
        let (ka, kb) = (kind_of(a), kind_of(b));
        match (kind_rank(ka, order), kind_rank(kb, order)) {
            (Some(x), Some(y)) => x.cmp(&y),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => ka.cmp(kb),
        }
    });
}

pub struct Sorted {
    pub manifests: Vec<Manifest>,
    pub hooks: Vec<Hook>,
    pub notes: String,
}

/// Helm's SortManifests over rendered files (NOTES taken out first).
pub fn sort_manifests(
    files: BTreeMap<String, String>,
    root_chart: &str,
) -> Result<Sorted, ManifestError> {
    let mut manifests = Vec::new();
    let mut hooks = Vec::new();
    let mut notes = String::new();
    let mut docs: Vec<(String, String)> = Vec::new();
    let root_notes = format!("{root_chart}/templates/NOTES.txt");
    for (path, content) in files {
        if path.ends_with("NOTES.txt") {
            if path == root_notes {
                notes = crate::value::gostr::lossy(&content).into_owned();
            }
            continue;
        }
        if path
            .rsplit('/')
            .next()
            .map(|b| b.starts_with('_'))
            .unwrap_or(false)
        {
            continue;
        }
        if content.trim().is_empty() {
            continue;
        }
        for doc in split_documents_owned(content) {
            docs.push((path.clone(), doc));
        }
    }
    let heads = heads_of(&docs);
    for ((path, doc), head) in docs.into_iter().zip(heads) {
        // A template that printed bytes that are not UTF-8 (a binary file's
        // contents) or a control character fails go-yaml's reader, when its
        // 512-byte buffer reaches them, in reading the head.
        let head = head?;
        let path = &path;
        let Some(hook_types) = head.annotations.get("helm.sh/hook").cloned() else {
            manifests.push(Manifest {
                path: path.clone(),
                content: doc,
                head,
            });
            continue;
        };
        let mut events = Vec::new();
        let mut unknown = false;
        for t in hook_types.split(',') {
            let t = t.trim().to_lowercase();
            let t = if t == "test-success" {
                "test".to_string()
            } else {
                t
            };
            if !HOOK_EVENTS.contains(&t.as_str()) {
                unknown = true;
                break;
            }
            events.push(t);
        }
        if unknown {
            continue;
        }
        let weight = head
            .annotations
            .get("helm.sh/hook-weight")
            .and_then(|w| w.trim().parse::<i64>().ok())
            .unwrap_or(0);
        let list = |key: &str| -> Vec<String> {
            head.annotations
                .get(key)
                .map(|v| {
                    v.split(',')
                        .map(|x| x.trim().to_lowercase())
                        .filter(|x| !x.is_empty())
                        .collect()
                })
                .unwrap_or_default()
        };
        hooks.push(Hook {
            name: head.name.clone(),
            kind: head.kind.clone(),
            path: path.clone(),
            manifest: doc,
            events,
            weight,
            delete_policies: list("helm.sh/hook-delete-policy"),
            output_log_policies: list("helm.sh/hook-output-log-policy"),
        });
    }
    sort_by_kind(&mut manifests, |m| m.head.kind.as_str(), INSTALL_ORDER);
    sort_by_kind(&mut hooks, |h| h.kind.as_str(), INSTALL_ORDER);
    Ok(Sorted {
        manifests,
        hooks,
        notes,
    })
}

/// Parse the heads of all documents, on two threads when there is a lot
/// of YAML (CRD-heavy charts): each document is independent.
fn heads_of(docs: &[(String, String)]) -> Vec<Result<Head, ManifestError>> {
    let total: usize = docs.iter().map(|(_, d)| d.len()).sum();
    if total < 16 * 1024 || docs.len() < 2 {
        return docs.iter().map(|(p, d)| head_of(d, p)).collect();
    }
    crate::par::map_shared(docs, |(p, d)| head_of(d, p))
}

/// One manifest as the release manifest string holds it: its source line,
/// then its text.
pub fn source_pieces<'a>(path: &'a str, content: &'a str) -> [&'a str; 5] {
    ["---\n# Source: ", path, "\n", content, "\n"]
}

/// The release manifest string.
pub fn manifest_string(manifests: &[Manifest]) -> String {
    let pieces = manifests
        .iter()
        .flat_map(|m| source_pieces(&m.path, &m.content));
    let mut out = String::with_capacity(pieces.clone().map(str::len).sum());
    out.extend(pieces);
    out
}

#[cfg(test)]
mod tests {
    use super::{split_documents, split_documents_owned};

    /// The regex Helm uses, as the reference for the hand-written splitter.
    fn split_regex(file: &str) -> Vec<String> {
        let sep = regex::Regex::new(r"(?:^|[\t\n\f\r ]*\n)---[\t\n\f\r ]*").unwrap();
        sep.split(file.trim_start())
            .filter(|d| !d.trim().is_empty())
            .map(|d| d.trim_start().to_string())
            .collect()
    }

    #[test]
    fn splitter_matches_helms_regex() {
        let alphabet = ['-', '-', '-', '\n', '\n', ' ', '\t', '\r', 'a', 'b', ':'];
        let mut seed: u64 = 0x9e3779b97f4a7c15;
        for _ in 0..20000 {
            let len = (seed % 40) as usize;
            let mut s = String::new();
            for _ in 0..len {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                s.push(alphabet[(seed % alphabet.len() as u64) as usize]);
            }
            assert_eq!(split_documents(&s), split_regex(&s), "input {s:?}");
            assert_eq!(
                split_documents_owned(s.clone()),
                split_regex(&s),
                "input {s:?}"
            );
        }
        for s in [
            "---\na: 1\n---\nb: 2\n",
            "a: 1\n  ---\nb",
            "a---b\n---x",
            "\n\n---\n---\n",
            "x\n \n---  \n\ny",
        ] {
            assert_eq!(split_documents(s), split_regex(s), "input {s:?}");
            assert_eq!(
                split_documents_owned(s.into()),
                split_regex(s),
                "input {s:?}"
            );
        }
    }
}
