//! Custom resources as apiextensions-apiserver treats them: the served
//! version's `openAPIV3Schema` compiled once when the CRD is written, then,
//! on every write of one of its objects, pruning of unknown fields (unless
//! `x-kubernetes-preserve-unknown-fields`), defaults, the OpenAPI value
//! validations (kube-openapi's messages), list-type uniqueness and the
//! `x-kubernetes-validations` CEL rules, refused as a 422 `Invalid` with
//! Kubernetes' causes. `fieldValidation` (Strict, Warn, Ignore) is decided
//! from the unknown fields of the request's own object.

use crate::crd_cel::{self, Outcome, Rule};
use crate::error::ApiError;
use crate::registry::ResourceType;
use regex::Regex;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::sync::Arc;

/// One schema node of a structural schema.
#[derive(Debug, Default)]
pub struct Node {
    pub ty: String,
    pub format: String,
    pub nullable: bool,
    pub int_or_string: bool,
    pub preserve_unknown: bool,
    pub embedded: bool,
    pub properties: BTreeMap<String, Node>,
    pub additional: Option<Box<Node>>,
    /// `additionalProperties: true`: any key, any value.
    pub additional_any: bool,
    pub items: Option<Box<Node>>,
    pub required: Vec<String>,
    pub enumv: Option<Vec<Value>>,
    pub default: Option<Value>,
    pub minimum: Option<f64>,
    pub maximum: Option<f64>,
    pub exclusive_minimum: bool,
    pub exclusive_maximum: bool,
    pub multiple_of: Option<f64>,
    pub min_length: Option<u64>,
    pub max_length: Option<u64>,
    pub min_items: Option<u64>,
    pub max_items: Option<u64>,
    pub min_properties: Option<u64>,
    pub max_properties: Option<u64>,
    pub unique_items: bool,
    pub pattern: Option<(String, Regex)>,
    pub list_type: Option<String>,
    pub list_map_keys: Vec<String>,
    pub map_type: Option<String>,
    pub all_of: Vec<Node>,
    pub any_of: Vec<Node>,
    pub one_of: Vec<Node>,
    pub not: Option<Box<Node>>,
    pub rules: Vec<Rule>,
    /// This node or one below it has CEL rules.
    pub has_rules: bool,
    /// `x-kubernetes-list-map-keys` as server-side apply's merge keys.
    pub static_keys: &'static [&'static str],
}

/// The compiled schemas of a CRD, by served version.
#[derive(Debug, Default)]
pub struct CrdSchemas {
    pub kind: String,
    pub group: String,
    pub versions: BTreeMap<String, Arc<Node>>,
}

impl CrdSchemas {
    pub fn for_version(&self, version: &str) -> Option<&Node> {
        self.versions.get(version).map(|n| &**n)
    }
}

/// Compiles the schema of every served version of a CRD's spec; an invalid
/// pattern or a CEL rule that does not compile refuses the CRD.
pub fn compile_crd(spec: &Value, kind: &str, group: &str) -> Result<CrdSchemas, String> {
    let mut out = CrdSchemas {
        kind: kind.into(),
        group: group.into(),
        versions: BTreeMap::new(),
    };
    for (i, v) in spec
        .get("versions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let Some(name) = v.get("name").and_then(Value::as_str) else {
            continue;
        };
        if let Some(s) = v.pointer("/schema/openAPIV3Schema") {
            let at = format!("spec.versions[{i}].schema.openAPIV3Schema");
            out.versions
                .insert(name.to_string(), Arc::new(compile(s, &at)?));
        }
    }
    Ok(out)
}

fn num(v: &Value, k: &str) -> Option<f64> {
    v.get(k).and_then(Value::as_f64)
}

fn count(v: &Value, k: &str) -> Option<u64> {
    v.get(k).and_then(Value::as_u64)
}

fn flag(v: &Value, k: &str) -> bool {
    v.get(k).and_then(Value::as_bool) == Some(true)
}

/// Compiles one schema node; `at` is its place in the CRD for errors.
pub fn compile(v: &Value, at: &str) -> Result<Node, String> {
    let s = |k: &str| {
        v.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let mut n = Node {
        ty: s("type"),
        format: s("format"),
        nullable: flag(v, "nullable"),
        int_or_string: flag(v, "x-kubernetes-int-or-string"),
        preserve_unknown: flag(v, "x-kubernetes-preserve-unknown-fields"),
        embedded: flag(v, "x-kubernetes-embedded-resource"),
        required: v
            .get("required")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default(),
        enumv: v.get("enum").and_then(Value::as_array).cloned(),
        default: v.get("default").cloned(),
        minimum: num(v, "minimum"),
        maximum: num(v, "maximum"),
        exclusive_minimum: flag(v, "exclusiveMinimum"),
        exclusive_maximum: flag(v, "exclusiveMaximum"),
        multiple_of: num(v, "multipleOf"),
        min_length: count(v, "minLength"),
        max_length: count(v, "maxLength"),
        min_items: count(v, "minItems"),
        max_items: count(v, "maxItems"),
        min_properties: count(v, "minProperties"),
        max_properties: count(v, "maxProperties"),
        unique_items: flag(v, "uniqueItems"),
        list_type: v
            .get("x-kubernetes-list-type")
            .and_then(Value::as_str)
            .map(str::to_string),
        list_map_keys: v
            .get("x-kubernetes-list-map-keys")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default(),
        map_type: v
            .get("x-kubernetes-map-type")
            .and_then(Value::as_str)
            .map(str::to_string),
        ..Node::default()
    };
    if let Some(p) = v.get("pattern").and_then(Value::as_str) {
        // Go's RE2 has no size limit to speak of; the regex crate's default
        // would refuse some long bounded repetitions a real server takes.
        let re = regex::RegexBuilder::new(p)
            .size_limit(1 << 28)
            .build()
            .map_err(|e| {
            format!("{at}.pattern: Invalid value: {p:?}: must be a valid regular expression, but isn't: {e}")
        })?;
        n.pattern = Some((p.to_string(), re));
    }
    if let Some(props) = v.get("properties").and_then(Value::as_object) {
        for (k, child) in props {
            n.properties
                .insert(k.clone(), compile(child, &format!("{at}.properties[{k}]"))?);
        }
    }
    match v.get("additionalProperties") {
        Some(Value::Bool(true)) => n.additional_any = true,
        Some(a @ Value::Object(_)) => {
            n.additional = Some(Box::new(compile(a, &format!("{at}.additionalProperties"))?))
        }
        _ => {}
    }
    if let Some(items) = v.get("items").filter(|i| i.is_object()) {
        n.items = Some(Box::new(compile(items, &format!("{at}.items"))?));
    }
    for (key, list) in [
        ("allOf", &mut n.all_of),
        ("anyOf", &mut n.any_of),
        ("oneOf", &mut n.one_of),
    ] {
        for (i, x) in v
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            list.push(compile(x, &format!("{at}.{key}[{i}]"))?);
        }
    }
    if let Some(x) = v.get("not").filter(|x| x.is_object()) {
        n.not = Some(Box::new(compile(x, &format!("{at}.not"))?));
    }
    for (i, r) in v
        .get("x-kubernetes-validations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        n.rules.push(crd_cel::compile(
            r,
            &format!("{at}.x-kubernetes-validations[{i}]"),
        )?);
    }
    n.static_keys = intern_keys(&n.list_map_keys);
    n.has_rules = !n.rules.is_empty()
        || n.properties.values().any(|p| p.has_rules)
        || n.additional.as_ref().is_some_and(|p| p.has_rules)
        || n.items.as_ref().is_some_and(|p| p.has_rules)
        || n.all_of.iter().any(|p| p.has_rules);
    Ok(n)
}

/// Map-list keys live as long as the server (lists::ListType holds static
/// keys): each distinct key list is leaked once.
fn intern_keys(keys: &[String]) -> &'static [&'static str] {
    static SEEN: std::sync::Mutex<Vec<&'static [&'static str]>> = std::sync::Mutex::new(Vec::new());
    if keys.is_empty() {
        return &[];
    }
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(k) = seen
        .iter()
        .find(|k| k.iter().copied().eq(keys.iter().map(String::as_str)))
    {
        return k;
    }
    let leaked: &'static [&'static str] = Box::leak(
        keys.iter()
            .map(|k| &*Box::leak(k.clone().into_boxed_str()))
            .collect::<Vec<&'static str>>()
            .into_boxed_slice(),
    );
    seen.push(leaked);
    leaked
}

/// How server-side apply reads lists and maps: the merge keys Kubernetes
/// declares for built-in kinds, or a custom resource's schema
/// (`x-kubernetes-list-type`, `x-kubernetes-list-map-keys`,
/// `x-kubernetes-map-type`). `metadata` is always read as ObjectMeta.
#[derive(Clone, Copy, Debug)]
pub enum Lists<'a> {
    Builtin,
    /// The schema node at this place (None: unknown, lists atomic).
    Custom(Option<&'a Node>),
}

impl From<bool> for Lists<'_> {
    fn from(builtin: bool) -> Self {
        if builtin {
            Lists::Builtin
        } else {
            Lists::Custom(None)
        }
    }
}

impl<'a> Lists<'a> {
    /// The lists of a kind, read in `api_version`'s schema.
    pub fn of(t: &'a ResourceType, api_version: &str) -> Lists<'a> {
        if t.crd.is_none() {
            return Lists::Builtin;
        }
        let version = api_version.rsplit('/').next().unwrap_or(api_version);
        Lists::Custom(t.schema.as_deref().and_then(|s| {
            s.for_version(version)
                .or_else(|| t.versions.first().and_then(|v| s.for_version(v)))
        }))
    }

    pub fn child(self, k: &str) -> Lists<'a> {
        match self {
            Lists::Builtin => Lists::Builtin,
            Lists::Custom(n) => {
                Lists::Custom(n.and_then(|n| n.properties.get(k).or(n.additional.as_deref())))
            }
        }
    }

    pub fn items(self) -> Lists<'a> {
        match self {
            Lists::Builtin => Lists::Builtin,
            Lists::Custom(n) => Lists::Custom(n.and_then(|n| n.items.as_deref())),
        }
    }

    /// `x-kubernetes-map-type: atomic`: the object is one value.
    pub fn atomic_map(self) -> bool {
        matches!(self, Lists::Custom(Some(n)) if n.map_type.as_deref() == Some("atomic"))
    }

    pub fn list_shape(self, field: &str, items: &[Value], in_meta: bool) -> crate::lists::ListType {
        use crate::lists::{list_type, ListType};
        match self {
            Lists::Builtin => list_type(field, items, true, in_meta),
            Lists::Custom(_) if in_meta => list_type(field, items, false, true),
            Lists::Custom(n) => match n.and_then(|n| n.list_type.as_deref().map(|t| (t, n))) {
                Some(("set", _)) => ListType::Set,
                Some(("map", n)) if !n.static_keys.is_empty() => ListType::Map(n.static_keys),
                _ => ListType::Atomic,
            },
        }
    }
}

// ---------------------------------------------------------------------------
// Field errors, printed as k8s.io/apimachinery's field.Error.

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ErrType {
    Required,
    Invalid,
    TypeInvalid,
    NotSupported,
    Duplicate,
    TooLong,
    TooMany,
    Forbidden,
}

impl ErrType {
    fn reason(self) -> &'static str {
        match self {
            ErrType::Required => "FieldValueRequired",
            ErrType::Invalid => "FieldValueInvalid",
            ErrType::TypeInvalid => "FieldValueTypeInvalid",
            ErrType::NotSupported => "FieldValueNotSupported",
            ErrType::Duplicate => "FieldValueDuplicate",
            ErrType::TooLong => "FieldValueTooLong",
            ErrType::TooMany => "FieldValueTooMany",
            ErrType::Forbidden => "FieldValueForbidden",
        }
    }

    fn text(self) -> &'static str {
        match self {
            ErrType::Required => "Required value",
            ErrType::Invalid | ErrType::TypeInvalid => "Invalid value",
            ErrType::NotSupported => "Unsupported value",
            ErrType::Duplicate => "Duplicate value",
            ErrType::TooLong => "Too long",
            ErrType::TooMany => "Too many",
            ErrType::Forbidden => "Forbidden",
        }
    }
}

#[derive(Debug, Clone)]
pub struct FieldError {
    pub ty: ErrType,
    pub field: String,
    /// None: the value is omitted from the message.
    pub bad: Option<Value>,
    pub detail: String,
}

impl FieldError {
    fn new(ty: ErrType, field: &str, bad: Option<Value>, detail: impl Into<String>) -> FieldError {
        FieldError {
            ty,
            field: field.to_string(),
            bad,
            detail: detail.into(),
        }
    }

    /// `field.Error.ErrorBody`.
    pub fn body(&self) -> String {
        let mut s = self.ty.text().to_string();
        let shows_value = !matches!(
            self.ty,
            ErrType::Required | ErrType::Forbidden | ErrType::TooLong
        );
        if shows_value {
            if let Some(v) = &self.bad {
                s = format!("{s}: {}", go_value(v));
            }
        }
        if !self.detail.is_empty() {
            s = format!("{s}: {}", self.detail);
        }
        s
    }

    pub fn message(&self) -> String {
        format!("{}: {}", self.field, self.body())
    }
}

/// Go's `%v` of a float64 (strconv's shortest `g`: exponent form below
/// 1e-4 and from 1e+06 on).
pub fn go_float(f: f64) -> String {
    if f == 0.0 {
        return "0".into();
    }
    let e = format!("{f:e}");
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..6).contains(&exp) {
        return format!("{mant}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
    }
    format!("{f}")
}

fn go_number(n: &serde_json::Number) -> String {
    if n.is_f64() {
        go_float(n.as_f64().unwrap_or_default())
    } else {
        n.to_string()
    }
}

fn go_quote(s: &str) -> String {
    format!("{s:?}")
}

/// How `%#v` prints a value inside an interface{}.
fn go_sharp(v: &Value) -> String {
    match v {
        Value::Null => "interface {}(nil)".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => go_number(n),
        Value::String(s) => go_quote(s),
        Value::Array(a) => format!(
            "[]interface {{}}{{{}}}",
            a.iter().map(go_sharp).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(m) => format!(
            "map[string]interface {{}}{{{}}}",
            m.iter()
                .map(|(k, x)| format!("{}:{}", go_quote(k), go_sharp(x)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// How field.Error prints a bad value.
fn go_value(v: &Value) -> String {
    match v {
        Value::Null => "\"null\"".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => go_number(n),
        Value::String(s) => go_quote(s),
        other => go_sharp(other),
    }
}

/// `errors.NewInvalid` for a custom resource, the errors aggregated as
/// utilerrors does (`[a, b]` for several, duplicates once).
pub fn invalid(group: &str, kind: &str, name: &str, errs: &[FieldError]) -> ApiError {
    let mut seen = Vec::new();
    for e in errs {
        let m = e.message();
        if !seen.contains(&m) {
            seen.push(m);
        }
    }
    let agg = if seen.len() == 1 {
        seen[0].clone()
    } else {
        format!("[{}]", seen.join(", "))
    };
    let qualified = if group.is_empty() {
        kind.to_string()
    } else {
        format!("{kind}.{group}")
    };
    let causes: Vec<Value> = errs
        .iter()
        .map(|e| json!({"reason": e.ty.reason(), "message": e.body(), "field": e.field}))
        .collect();
    let mut details = json!({"name": name, "kind": kind, "causes": causes});
    if !group.is_empty() {
        details["group"] = json!(group);
    }
    ApiError {
        details: Some(details),
        ..ApiError::new(
            422,
            "Invalid",
            format!("{qualified} {name:?} is invalid: {agg}"),
        )
    }
}

// ---------------------------------------------------------------------------
// Pruning and defaulting.

const ROOT_META: &[&str] = &["apiVersion", "kind", "metadata"];

/// Removes the fields the schema does not declare; their paths (as
/// apiextensions reports them: `spec.foo`, `spec.list[0].bar`) go to `pruned`.
pub fn prune(v: &mut Value, n: &Node, path: &str, root: bool, pruned: &mut Vec<String>) {
    if n.preserve_unknown && n.properties.is_empty() && n.additional.is_none() && n.items.is_none()
    {
        return;
    }
    match v {
        Value::Object(m) => {
            let keys: Vec<String> = m.keys().cloned().collect();
            for k in keys {
                if (root || n.embedded) && ROOT_META.contains(&k.as_str()) {
                    if k == "metadata" && n.embedded && !root {
                        // ObjectMeta of an embedded object is kept as it is.
                    }
                    continue;
                }
                let child_path = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                if let Some(p) = n.properties.get(&k) {
                    prune(m.get_mut(&k).expect("key"), p, &child_path, false, pruned);
                } else if let Some(a) = &n.additional {
                    prune(m.get_mut(&k).expect("key"), a, &child_path, false, pruned);
                } else if n.additional_any || n.preserve_unknown {
                    continue;
                } else {
                    m.remove(&k);
                    pruned.push(child_path);
                }
            }
        }
        Value::Array(items) => {
            if let Some(it) = &n.items {
                for (i, x) in items.iter_mut().enumerate() {
                    prune(x, it, &format!("{path}[{i}]"), false, pruned);
                }
            }
        }
        _ => {}
    }
}

fn non_nullable_null(v: &Value, n: &Node) -> bool {
    v.is_null() && !n.nullable
}

/// Schema defaults, then nulls of non-nullable fields without a default
/// dropped, as structural defaulting does.
pub fn default(v: &mut Value, n: &Node) {
    match v {
        Value::Object(m) => {
            for (k, p) in &n.properties {
                if let Some(d) = &p.default {
                    if m.get(k).is_none_or(|x| non_nullable_null(x, p)) {
                        m.insert(k.clone(), d.clone());
                    }
                }
            }
            let keys: Vec<String> = m.keys().cloned().collect();
            for k in keys {
                let child = match n.properties.get(&k) {
                    Some(p) => Some(p),
                    None => n.additional.as_deref(),
                };
                if let Some(p) = child {
                    if non_nullable_null(&m[&k], p) && p.default.is_none() {
                        m.remove(&k);
                        continue;
                    }
                    default(m.get_mut(&k).expect("key"), p);
                }
            }
        }
        Value::Array(items) => {
            if let Some(it) = &n.items {
                for x in items.iter_mut() {
                    if non_nullable_null(x, it) {
                        if let Some(d) = &it.default {
                            *x = d.clone();
                        }
                    }
                    default(x, it);
                }
            }
        }
        _ => {}
    }
}

// ---------------------------------------------------------------------------
// Validation.

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() && n.as_f64().is_some_and(|f| f.fract() != 0.0) => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn type_fits(ty: &str, v: &Value) -> bool {
    match ty {
        "" => true,
        "number" => v.is_number(),
        "integer" => type_name(v) == "integer",
        "string" => v.is_string(),
        "boolean" => v.is_boolean(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        _ => true,
    }
}

fn child(path: &str, k: &str) -> String {
    if path.is_empty() {
        k.to_string()
    } else {
        format!("{path}.{k}")
    }
}

/// kube-openapi's error for `path`, turned into a field error as
/// apiextensions does (`Invalid value: <value>: <path> in body ...`).
fn openapi(path: &str, v: Option<&Value>, msg: String) -> FieldError {
    FieldError::new(
        ErrType::Invalid,
        path,
        Some(v.cloned().unwrap_or(json!(""))),
        msg,
    )
}

fn bound(limit: f64, v: &Value) -> String {
    if type_name(v) == "integer" && limit.fract() == 0.0 && limit.abs() < 9.2e18 {
        format!("{}", limit as i64)
    } else {
        go_float(limit)
    }
}

fn format_ok(format: &str, s: &str) -> bool {
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
    match format {
        "date-time" | "datetime" => {
            chrono::DateTime::parse_from_rfc3339(s).is_ok()
                || chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S%.f").is_ok()
        }
        "date" => chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").is_ok(),
        "ipv4" => s.parse::<Ipv4Addr>().is_ok(),
        "ipv6" => s.parse::<Ipv6Addr>().is_ok(),
        "cidr" => s.split_once('/').is_some_and(|(ip, bits)| {
            ip.parse::<IpAddr>().is_ok_and(|ip| {
                bits.parse::<u8>()
                    .is_ok_and(|b| b <= if ip.is_ipv4() { 32 } else { 128 })
            })
        }),
        "uuid" | "uuid3" | "uuid4" | "uuid5" => {
            let parts: Vec<&str> = s.split('-').collect();
            parts.len() == 5
                && [8, 4, 4, 4, 12]
                    .iter()
                    .zip(&parts)
                    .all(|(n, p)| p.len() == *n && p.chars().all(|c| c.is_ascii_hexdigit()))
        }
        "byte" => {
            use base64::Engine;
            base64::engine::general_purpose::STANDARD.decode(s).is_ok()
        }
        "hostname" => {
            s.len() <= 255
                && s.split('.').all(|l| {
                    !l.is_empty()
                        && l.len() <= 63
                        && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                        && !l.starts_with('-')
                        && !l.ends_with('-')
                })
        }
        "mac" => {
            let parts: Vec<&str> = s.split([':', '-']).collect();
            matches!(parts.len(), 6 | 8 | 20)
                && parts
                    .iter()
                    .all(|p| p.len() == 2 && p.chars().all(|c| c.is_ascii_hexdigit()))
        }
        _ => true,
    }
}

/// The OpenAPI value validations of `v` against `n` (and its children).
/// `old` is the correlated old value: a node equal to it is not checked
/// again (validation ratcheting).
pub fn validate(v: &Value, n: &Node, path: &str, old: Option<&Value>, out: &mut Vec<FieldError>) {
    if old == Some(v) {
        return;
    }
    if v.is_null() {
        if !n.nullable && !n.ty.is_empty() {
            out.push(FieldError::new(
                ErrType::TypeInvalid,
                path,
                Some(json!("null")),
                format!("{path} in body must be of type {}: \"null\"", n.ty),
            ));
        }
        return;
    }
    let fits = if n.int_or_string {
        // Its anyOf (integer or string) says what else fits.
        !n.any_of.is_empty() || v.is_string() || type_name(v) == "integer"
    } else {
        type_fits(&n.ty, v)
    };
    if !fits {
        let actual = type_name(v);
        out.push(FieldError::new(
            ErrType::TypeInvalid,
            path,
            Some(json!(actual)),
            format!(
                "{path} in body must be of type {}: {}",
                n.ty,
                go_quote(actual)
            ),
        ));
        return;
    }
    for s in &n.all_of {
        validate(v, s, path, None, out);
    }
    if !n.any_of.is_empty()
        && !n.any_of.iter().any(|s| {
            let mut e = Vec::new();
            validate(v, s, path, None, &mut e);
            e.is_empty()
        })
    {
        out.push(openapi(
            path,
            None,
            format!("{path} in body must validate at least one schema (anyOf)"),
        ));
    }
    if !n.one_of.is_empty() {
        let ok = n
            .one_of
            .iter()
            .filter(|s| {
                let mut e = Vec::new();
                validate(v, s, path, None, &mut e);
                e.is_empty()
            })
            .count();
        if ok != 1 {
            out.push(openapi(
                path,
                None,
                format!("{path} in body must validate one and only one schema (oneOf)"),
            ));
        }
    }
    if let Some(s) = &n.not {
        let mut e = Vec::new();
        validate(v, s, path, None, &mut e);
        if e.is_empty() {
            out.push(openapi(
                path,
                None,
                format!("{path} in body must not validate the schema (not)"),
            ));
        }
    }
    if let Value::String(s) = v {
        let len = s.chars().count() as u64;
        if let Some(max) = n.max_length.filter(|m| len > *m) {
            out.push(FieldError::new(
                ErrType::TooLong,
                path,
                Some(v.clone()),
                format!("may not be more than {max} bytes"),
            ));
        }
        if let Some(min) = n.min_length.filter(|m| len < *m) {
            out.push(openapi(
                path,
                Some(v),
                format!("{path} in body should be at least {min} chars long"),
            ));
        }
        if let Some((p, re)) = &n.pattern {
            if !re.is_match(s) {
                out.push(openapi(
                    path,
                    Some(v),
                    format!("{path} in body should match '{p}'"),
                ));
            }
        }
        if !n.format.is_empty() && !format_ok(&n.format, s) {
            out.push(FieldError::new(
                ErrType::TypeInvalid,
                path,
                Some(v.clone()),
                format!(
                    "{path} in body must be of type {}: {}",
                    n.format,
                    go_quote(s)
                ),
            ));
        }
    }
    if let Value::Array(items) = v {
        let size = items.len() as u64;
        if let Some(min) = n.min_items.filter(|m| size < *m) {
            out.push(openapi(
                path,
                Some(&json!(size)),
                format!("{path} in body should have at least {min} items"),
            ));
        }
        if let Some(max) = n.max_items.filter(|m| size > *m) {
            out.push(FieldError::new(
                ErrType::TooMany,
                path,
                Some(json!(size)),
                format!("must have at most {max} items"),
            ));
        }
        if n.unique_items && (1..items.len()).any(|i| items[..i].contains(&items[i])) {
            out.push(FieldError::new(
                ErrType::Duplicate,
                path,
                None,
                format!("{path} in body shouldn't contain duplicates"),
            ));
        }
        if let Some(it) = &n.items {
            let olds = old_items(n, items, old);
            for (i, x) in items.iter().enumerate() {
                validate(x, it, &format!("{path}[{i}]"), olds[i], out);
            }
        }
    }
    if let Some(f) = v.as_f64() {
        if let Some(min) = n.minimum {
            if f < min || (n.exclusive_minimum && f == min) {
                let rel = if n.exclusive_minimum {
                    "greater than"
                } else {
                    "greater than or equal to"
                };
                out.push(openapi(
                    path,
                    Some(v),
                    format!("{path} in body should be {rel} {}", bound(min, v)),
                ));
            }
        }
        if let Some(max) = n.maximum {
            if f > max || (n.exclusive_maximum && f == max) {
                let rel = if n.exclusive_maximum {
                    "less than"
                } else {
                    "less than or equal to"
                };
                out.push(openapi(
                    path,
                    Some(v),
                    format!("{path} in body should be {rel} {}", bound(max, v)),
                ));
            }
        }
        if let Some(m) = n.multiple_of.filter(|m| *m > 0.0) {
            let q = f / m;
            if (q - q.round()).abs() > 1e-9 {
                out.push(openapi(
                    path,
                    Some(v),
                    format!("{path} in body should be a multiple of {}", bound(m, v)),
                ));
            }
        }
    }
    if let Some(values) = &n.enumv {
        if !values
            .iter()
            .any(|e| e == v || (e.as_f64().is_some() && e.as_f64() == v.as_f64()))
        {
            let supported: Vec<String> = values
                .iter()
                .map(|e| match e {
                    Value::String(s) => go_quote(s),
                    other => go_quote(&other.to_string()),
                })
                .collect();
            out.push(FieldError::new(
                ErrType::NotSupported,
                path,
                Some(v.clone()),
                format!("supported values: {}", supported.join(", ")),
            ));
        }
    }
    if let Value::Object(m) = v {
        let size = m.len() as u64;
        if let Some(min) = n.min_properties.filter(|x| size < *x) {
            out.push(openapi(
                path,
                Some(&json!(min)),
                format!("{path} in body should have at least {min} properties"),
            ));
        }
        if let Some(max) = n.max_properties.filter(|x| size > *x) {
            out.push(FieldError::new(
                ErrType::TooMany,
                path,
                Some(json!(size)),
                format!("must have at most {max} items"),
            ));
        }
        for r in &n.required {
            if !m.contains_key(r) {
                out.push(FieldError::new(
                    ErrType::Required,
                    &child(path, r),
                    None,
                    "",
                ));
            }
        }
        let old_map = old.and_then(Value::as_object);
        for (k, x) in m {
            let sub = match n.properties.get(k) {
                Some(p) => Some(p),
                None => n.additional.as_deref(),
            };
            if let Some(p) = sub {
                validate(x, p, &child(path, k), old_map.and_then(|o| o.get(k)), out);
            }
        }
    }
    list_type_errors(v, n, path, out);
}

/// Old items correlated with new ones: by key in map lists, none otherwise.
fn old_items<'a>(n: &Node, items: &[Value], old: Option<&'a Value>) -> Vec<Option<&'a Value>> {
    let olds = old.and_then(Value::as_array);
    items
        .iter()
        .map(|x| match (n.list_type.as_deref(), olds) {
            (Some("map"), Some(olds)) => {
                let key = map_key(x, &n.list_map_keys);
                olds.iter().find(|o| map_key(o, &n.list_map_keys) == key)
            }
            _ => None,
        })
        .collect()
}

fn map_key(x: &Value, keys: &[String]) -> Value {
    let mut m = Map::new();
    for k in keys {
        if let Some(v) = x.get(k) {
            m.insert(k.clone(), v.clone());
        }
    }
    Value::Object(m)
}

/// `x-kubernetes-list-type: set|map`: items unique (structurallisttype).
fn list_type_errors(v: &Value, n: &Node, path: &str, out: &mut Vec<FieldError>) {
    let Value::Array(items) = v else { return };
    match n.list_type.as_deref() {
        Some("set") => {
            for i in 1..items.len() {
                if items[..i].contains(&items[i]) {
                    out.push(FieldError::new(
                        ErrType::Duplicate,
                        &format!("{path}[{i}]"),
                        Some(items[i].clone()),
                        "",
                    ));
                }
            }
        }
        Some("map") => {
            let keys: Vec<Value> = items.iter().map(|x| map_key(x, &n.list_map_keys)).collect();
            for i in 1..keys.len() {
                if keys[..i].contains(&keys[i]) {
                    out.push(FieldError::new(
                        ErrType::Duplicate,
                        &format!("{path}[{i}]"),
                        Some(keys[i].clone()),
                        "",
                    ));
                }
            }
        }
        _ => {}
    }
}

// ---------------------------------------------------------------------------
// CEL.

/// field.Path: `.name` for fields, `[i]` for items, `[key]` for map keys.
fn cel_child(path: &str, k: &str) -> String {
    if path.is_empty() || path == "<nil>" {
        k.to_string()
    } else {
        format!("{path}.{k}")
    }
}

/// Evaluates the `x-kubernetes-validations` of `n` and its children.
pub fn validate_cel(
    v: &Value,
    n: &Node,
    path: &str,
    old: Option<&Value>,
    out: &mut Vec<FieldError>,
) {
    if v.is_null() {
        return;
    }
    let unchanged = old == Some(v);
    for r in &n.rules {
        if r.uses_old_self && old.is_none() && !r.optional_old_self {
            continue;
        }
        if unchanged && !r.uses_old_self {
            // Ratcheting: an unchanged value's errors are not raised again.
            continue;
        }
        let fpath = if r.field_path.is_empty() {
            path.to_string()
        } else {
            cel_child(path, &r.field_path)
        };
        let value = if v.is_object() || v.is_array() {
            None
        } else {
            Some(v.clone())
        };
        match crd_cel::evaluate(r, v, old) {
            Outcome::Pass => {}
            Outcome::Fail(detail) => out.push(match r.reason.as_deref() {
                Some("FieldValueForbidden") => {
                    FieldError::new(ErrType::Forbidden, &fpath, None, detail)
                }
                Some("FieldValueRequired") => {
                    FieldError::new(ErrType::Required, &fpath, None, detail)
                }
                Some("FieldValueDuplicate") => {
                    FieldError::new(ErrType::Duplicate, &fpath, value, "")
                }
                _ => FieldError::new(ErrType::Invalid, &fpath, value, detail),
            }),
            Outcome::Error(detail) => out.push(FieldError::new(
                ErrType::Invalid,
                path,
                Some(json!(n.ty)),
                detail,
            )),
        }
    }
    match v {
        Value::Object(m) => {
            let old_map = old.and_then(Value::as_object);
            for (k, x) in m {
                let (p, cp) = match n.properties.get(k) {
                    Some(p) => (Some(p), cel_child(path, k)),
                    None => (n.additional.as_deref(), format!("{path}[{k}]")),
                };
                if let Some(p) = p {
                    validate_cel(x, p, &cp, old_map.and_then(|o| o.get(k)), out);
                }
            }
        }
        Value::Array(items) => {
            if let Some(it) = &n.items {
                let olds = old_items(n, items, old);
                for (i, x) in items.iter().enumerate() {
                    validate_cel(x, it, &format!("{path}[{i}]"), olds[i], out);
                }
            }
        }
        _ => {}
    }
}

/// The CEL rules run only when the OpenAPI validations found nothing that
/// blocks them (a type, required, enum, length or count error), as in
/// apiextensions' strategy.
pub fn cel_unless_blocked(v: &Value, n: &Node, old: Option<&Value>, errs: &mut Vec<FieldError>) {
    if !n.has_rules {
        return;
    }
    let blocking = errs.iter().any(|e| {
        matches!(
            e.ty,
            ErrType::NotSupported
                | ErrType::Required
                | ErrType::TooLong
                | ErrType::TooMany
                | ErrType::TypeInvalid
        )
    });
    if blocking {
        errs.push(FieldError::new(
            ErrType::Invalid,
            "<nil>",
            Some(Value::Null),
            "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
        ));
    } else {
        validate_cel(v, n, "<nil>", old, errs);
    }
}

// ---------------------------------------------------------------------------
// What the store and the server call.

fn version_of(t: &ResourceType, obj: &Value) -> String {
    obj.get("apiVersion")
        .and_then(Value::as_str)
        .map(|a| a.rsplit('/').next().unwrap_or(a).to_string())
        .filter(|v| t.versions.contains(v))
        .unwrap_or_else(|| t.versions[0].clone())
}

/// Prunes, defaults and validates a custom resource about to be stored
/// (`old` on updates); a refusal is Kubernetes' 422 Invalid.
pub fn admit(t: &ResourceType, obj: &mut Value, old: Option<&Value>) -> Result<(), ApiError> {
    let Some(schemas) = t.schema.as_deref() else {
        return Ok(());
    };
    let version = version_of(t, obj);
    let Some(n) = schemas.for_version(&version) else {
        return Ok(());
    };
    prune(obj, n, "", true, &mut Vec::new());
    default(obj, n);
    let mut errs = Vec::new();
    // metadata is ObjectMeta's, validated by the generic code: the schema
    // and CEL see only its name and generateName, as apiextensions does.
    let meta_view = |v: &Value| -> Value {
        let mut out = v.clone();
        if let Some(m) = out.as_object_mut() {
            let mut meta = Map::new();
            for k in ["name", "generateName"] {
                if let Some(x) = v.pointer(&format!("/metadata/{k}")) {
                    meta.insert(k.to_string(), x.clone());
                }
            }
            m.insert("metadata".into(), Value::Object(meta));
        }
        out
    };
    let body = meta_view(obj);
    let old_body = old.map(meta_view);
    validate(&body, n, "", old_body.as_ref(), &mut errs);
    cel_unless_blocked(&body, n, old_body.as_ref(), &mut errs);
    if errs.is_empty() {
        return Ok(());
    }
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    Err(invalid(&t.group, &t.kind, name, &errs))
}

/// A custom resource without the status subresource has no spec/status
/// split: any change but metadata's increments its generation.
pub fn status_bumps_generation(t: &ResourceType, new: &Value, old: &Value) -> bool {
    t.crd.is_some() && !t.status_subresource && new.get("status") != old.get("status")
}

/// What a write's `fieldValidation` does with unknown fields.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Directive {
    Ignore,
    Warn,
    Strict,
}

impl Directive {
    /// The query parameter; Warn when absent, as the server defaults.
    pub fn parse(q: Option<&str>) -> Result<Directive, ApiError> {
        match q {
            None | Some("") | Some("Warn") => Ok(Directive::Warn),
            Some("Strict") => Ok(Directive::Strict),
            Some("Ignore") => Ok(Directive::Ignore),
            Some(other) => Err(ApiError::bad_request(format!(
                "fieldValidation parameter unsupported: {other}"
            ))),
        }
    }
}

/// How the write reached the server: the refusal of an unknown field differs.
pub enum Verb<'a> {
    /// POST or PUT: the decoder's "cannot be handled as" BadRequest.
    CreateOrUpdate,
    /// JSON or merge patch: a plain strict decoding BadRequest.
    Patch,
    /// Server-side apply: the typed conversion fails whatever the directive.
    Apply { ns: &'a str, name: &'a str },
}

/// The unknown fields of a custom resource as a request sends it.
pub fn unknown_fields(t: &ResourceType, version: &str, obj: &Value) -> Vec<String> {
    let Some(n) = t.schema.as_deref().and_then(|s| s.for_version(version)) else {
        return Vec::new();
    };
    let mut copy = obj.clone();
    let mut pruned = Vec::new();
    prune(&mut copy, n, "", true, &mut pruned);
    pruned.sort();
    pruned
}

/// The request's unknown fields under its `fieldValidation`: the warnings
/// to send (`Warn`) or the refusal (`Strict`, or any apply).
pub fn check_fields(
    t: &ResourceType,
    version: &str,
    obj: &Value,
    directive: Directive,
    verb: Verb,
) -> Result<Vec<String>, ApiError> {
    let unknown = unknown_fields(t, version, obj);
    if unknown.is_empty() {
        return Ok(Vec::new());
    }
    let each: Vec<String> = unknown
        .iter()
        .map(|p| format!("unknown field {p:?}"))
        .collect();
    if let Verb::Apply { ns, name } = verb {
        let errs: Vec<String> = unknown
            .iter()
            .map(|p| format!(".{p}: field not declared in schema"))
            .collect();
        let errs = if errs.len() == 1 {
            errs[0].clone()
        } else {
            format!("errors:\n  {}", errs.join("\n  "))
        };
        return Err(ApiError::new(
            500,
            "InternalError",
            format!(
                "failed to create typed patch object ({ns}/{name}; {}, Kind={}): {errs}",
                t.api_version(version),
                t.kind
            ),
        ));
    }
    match directive {
        Directive::Ignore => Ok(Vec::new()),
        Directive::Warn => Ok(each),
        Directive::Strict => {
            let strict = format!("strict decoding error: {}", each.join(", "));
            Err(ApiError::bad_request(match verb {
                Verb::CreateOrUpdate => format!(
                    "{} in version {version:?} cannot be handled as a {}: {strict}",
                    t.kind, t.kind
                ),
                _ => strict,
            }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BLOCKED: &str = "<nil>: Invalid value: \"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation";

    fn node(schema: Value) -> Node {
        compile(&schema, "s").expect("compiles")
    }

    fn errors(schema: &Node, v: Value) -> Vec<String> {
        let mut out = Vec::new();
        validate(&v, schema, "", None, &mut out);
        cel_unless_blocked(&v, schema, None, &mut out);
        out.iter().map(FieldError::message).collect()
    }

    fn spec_schema() -> Node {
        node(json!({"type": "object", "properties": {"spec": {
        "type": "object",
        "required": ["mode"],
        "x-kubernetes-validations": [{"rule": "self.mode != 'managed' || has(self.managed)", "message": "managed needs managed"}],
        "properties": {
            "mode": {"type": "string", "enum": ["managed", "external"]},
            "instances": {"type": "integer", "minimum": 1, "maximum": 9, "default": 1},
            "ratio": {"type": "number", "exclusiveMaximum": true, "maximum": 1.5},
            "name": {"type": "string", "minLength": 1, "maxLength": 3, "pattern": "^[a-zé]+$"},
            "when": {"type": "string", "format": "date-time"},
            "port": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]},
            "tags": {"type": "array", "maxItems": 2, "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
            "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                      "items": {"type": "object", "properties": {"name": {"type": "string"}, "n": {"type": "integer"}}}},
            "managed": {"type": "object", "nullable": true, "properties": {"size": {"type": "string", "default": "1Gi"}}},
            "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "immutable": {"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "is immutable"}]}
        }}}}))
    }

    #[test]
    fn messages_are_kube_openapi_and_field_errors() {
        let s = spec_schema();
        assert_eq!(
            errors(&s, json!({"spec": {"mode": "external", "instances": 0}})),
            ["spec.instances: Invalid value: 0: spec.instances in body should be greater than or equal to 1"]
        );
        assert_eq!(
            errors(&s, json!({"spec": {"mode": "x", "instances": "2"}})),
            [
                "spec.instances: Invalid value: \"string\": spec.instances in body must be of type integer: \"string\"",
                "spec.mode: Unsupported value: \"x\": supported values: \"managed\", \"external\"",
                BLOCKED,
            ]
        );
        assert_eq!(
            errors(&s, json!({"spec": {}})),
            ["spec.mode: Required value", BLOCKED]
        );
        assert_eq!(
            errors(
                &s,
                json!({"spec": {"mode": "external", "name": "éééé", "ratio": 1.5}})
            ),
            [
                "spec.name: Too long: may not be more than 3 bytes",
                "spec.ratio: Invalid value: 1.5: spec.ratio in body should be less than 1.5",
                BLOCKED,
            ]
        );
        // Characters, not bytes: three two-byte characters fit.
        assert!(errors(&s, json!({"spec": {"mode": "external", "name": "ééé"}})).is_empty());
        assert_eq!(
            errors(&s, json!({"spec": {"mode": "external", "name": "A"}})),
            ["spec.name: Invalid value: \"A\": spec.name in body should match '^[a-zé]+$'"]
        );
        assert_eq!(
            errors(&s, json!({"spec": {"mode": "external", "when": "yesterday", "port": 1.5}})),
            [
                "spec.port: Invalid value: \"\": spec.port in body must validate at least one schema (anyOf)",
                "spec.when: Invalid value: \"yesterday\": spec.when in body must be of type date-time: \"yesterday\"",
                BLOCKED,
            ]
        );
        assert!(errors(
            &s,
            json!({"spec": {"mode": "external", "port": "http", "when": "2024-01-02T03:04:05Z"}})
        )
        .is_empty());
        assert_eq!(
            errors(
                &s,
                json!({"spec": {"mode": "external", "tags": ["a", "b", "a"]}})
            ),
            [
                "spec.tags: Too many: 3: must have at most 2 items",
                "spec.tags[2]: Duplicate value: \"a\"",
                BLOCKED,
            ]
        );
        assert_eq!(
            errors(
                &s,
                json!({"spec": {"mode": "external", "ports": [{"name": "a"}, {"name": "a", "n": 1}]}})
            ),
            ["spec.ports[1]: Duplicate value: map[string]interface {}{\"name\":\"a\"}"]
        );
        assert_eq!(
            errors(&s, json!({"spec": {"mode": "managed"}})),
            ["spec: Invalid value: managed needs managed"]
        );
        assert_eq!(
            errors(&s, json!({"spec": {"mode": "external", "labels": {"a": 1}}})),
            [
                "spec.labels.a: Invalid value: \"integer\": spec.labels.a in body must be of type string: \"integer\"",
                BLOCKED
            ]
        );
    }

    #[test]
    fn a_schema_requiring_metadata_is_satisfied_by_objectmeta() {
        let t = crate::registry::Registry::from_crd(&json!({
            "metadata": {"name": "things.x.io"},
            "spec": {"group": "x.io", "names": {"plural": "things", "kind": "Thing"},
                "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                    "type": "object", "required": ["metadata", "spec"],
                    "properties": {"metadata": {"type": "object"}, "spec": {"type": "object"}}}}}]}
        }))
        .expect("registers");
        let mut obj = json!({"apiVersion": "x.io/v1", "kind": "Thing",
            "metadata": {"name": "a", "labels": {"k": "v"}}, "spec": {}});
        admit(&t, &mut obj, None).expect("valid");
        assert_eq!(obj["metadata"]["labels"]["k"], "v");
        let mut obj = json!({"apiVersion": "x.io/v1", "kind": "Thing", "metadata": {"name": "a"}});
        let e = admit(&t, &mut obj, None).expect_err("spec is required");
        assert_eq!(
            e.message,
            "Thing.x.io \"a\" is invalid: spec: Required value"
        );
    }

    #[test]
    fn pruning_keeps_declared_and_preserved_fields() {
        let s = spec_schema();
        let mut v = json!({"apiVersion": "x/v1", "kind": "K", "metadata": {"name": "n"}, "top": 1,
            "spec": {"mode": "external", "bogus": 1, "extra": {"any": {"thing": 1}}, "ports": [{"name": "a", "x": 1}],
                     "labels": {"k": "v"}}});
        let mut pruned = Vec::new();
        prune(&mut v, &s, "", true, &mut pruned);
        pruned.sort();
        assert_eq!(pruned, ["spec.bogus", "spec.ports[0].x", "top"]);
        assert_eq!(
            v,
            json!({"apiVersion": "x/v1", "kind": "K", "metadata": {"name": "n"},
                "spec": {"mode": "external", "extra": {"any": {"thing": 1}}, "ports": [{"name": "a"}], "labels": {"k": "v"}}})
        );
    }

    #[test]
    fn defaults_fill_absent_and_null_fields_and_nested_defaults() {
        let s = spec_schema();
        let mut v =
            json!({"spec": {"mode": "managed", "managed": {}, "instances": null, "name": null}});
        default(&mut v, &s);
        assert_eq!(
            v,
            json!({"spec": {"mode": "managed", "managed": {"size": "1Gi"}, "instances": 1}})
        );
    }

    #[test]
    fn transition_rules_need_an_old_value_and_ratcheting_spares_unchanged_values() {
        let s = spec_schema();
        let new = json!({"spec": {"mode": "external", "immutable": "b"}});
        let old = json!({"spec": {"mode": "external", "immutable": "a"}});
        let mut out = Vec::new();
        validate_cel(&new, &s, "<nil>", None, &mut out);
        assert!(out.is_empty());
        validate_cel(&new, &s, "<nil>", Some(&old), &mut out);
        assert_eq!(
            out.iter().map(FieldError::message).collect::<Vec<_>>(),
            ["spec.immutable: Invalid value: \"b\": is immutable"]
        );
        // An invalid value left as it was is not refused on update.
        let bad = json!({"spec": {"mode": "external", "instances": 0}});
        let mut out = Vec::new();
        validate(&bad, &s, "", Some(&bad), &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn aggregate_message_and_causes() {
        let errs = vec![
            FieldError::new(ErrType::Required, "spec.a", None, ""),
            FieldError::new(ErrType::Invalid, "spec.b", Some(json!(0)), "too small"),
        ];
        let e = invalid("core.navique.com", "PostgresCluster", "x", &errs);
        assert_eq!(e.code, 422);
        assert_eq!(
            e.message,
            "PostgresCluster.core.navique.com \"x\" is invalid: [spec.a: Required value, spec.b: Invalid value: 0: too small]"
        );
        let d = e.details.expect("details");
        assert_eq!(
            d["causes"][1],
            json!({"reason": "FieldValueInvalid", "message": "Invalid value: 0: too small", "field": "spec.b"})
        );
        assert_eq!(d["kind"], "PostgresCluster");
        assert_eq!(d["group"], "core.navique.com");
    }

    #[test]
    fn crd_with_a_rule_that_does_not_compile_is_refused() {
        let bad = json!({"type": "object", "x-kubernetes-validations": [{"rule": "self.a ==", "message": "m"}]});
        assert!(compile(&bad, "s").is_err());
        let bad = json!({"type": "string", "pattern": "([a-z"});
        assert!(compile(&bad, "s").is_err());
    }

    #[test]
    fn go_floats() {
        assert_eq!(go_float(1.5), "1.5");
        assert_eq!(go_float(100000.0), "100000");
        assert_eq!(go_float(1e6), "1e+06");
        assert_eq!(go_float(0.0001), "0.0001");
        assert_eq!(go_float(0.00001), "1e-05");
    }
}
