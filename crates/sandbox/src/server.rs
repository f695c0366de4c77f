//! HTTP: routing, request decoding, responses and watch streams.

use crate::crd_schema;
use crate::discovery;
use crate::error::ApiError;
use crate::registry::ResourceType;
use crate::select::{FieldSelector, LabelSelector};
use crate::store::{Obj, Propagation, State, WatchMsg, Watcher, WriteOptions};
use bytes::Bytes;
use http_body_util::{combinators::BoxBody, BodyExt, Full};
use hyper::body::{Frame, Incoming};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::mpsc;

pub type Body = BoxBody<Bytes, Infallible>;

pub struct Shared {
    pub state: Mutex<State>,
    pub token: String,
    pub require_token: bool,
    pub address: String,
    pub bookmark_interval: Duration,
    pub wake_controllers: tokio::sync::Notify,
    /// Requests that may change state (anything but GET), for tests that
    /// prove a converged client writes nothing.
    pub writes: std::sync::atomic::AtomicU64,
    pub faults: crate::faults::Faults,
    pub requests: crate::tally::Tally,
}

const MAX_BODY: usize = 64 << 20;

fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into()).boxed()
}

fn json_response(code: u16, v: &Value) -> Response<Body> {
    Response::builder()
        .status(code)
        .header("Content-Type", "application/json")
        .body(full(serde_json::to_vec(v).expect("json")))
        .expect("response")
}

/// `Warning: 299 - "text"` headers, as the apiserver quotes them.
fn with_warnings(mut res: Response<Body>, warnings: &[String]) -> Response<Body> {
    for w in warnings {
        if let Ok(v) = hyper::header::HeaderValue::from_str(&format!("299 - {w:?}")) {
            res.headers_mut().append("Warning", v);
        }
    }
    res
}

fn error_response(e: &ApiError) -> Response<Body> {
    json_response(e.code, &e.status())
}

fn query_map(q: Option<&str>) -> HashMap<String, String> {
    let mut out = HashMap::new();
    for pair in q.unwrap_or_default().split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        out.insert(decode(k), decode(v));
    }
    out
}

fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                match u8::from_str_radix(std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or(""), 16) {
                    Ok(x) => {
                        out.push(x);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// YAML (a superset of the JSON clients usually send) to JSON; protobuf for
/// the kinds `proto` knows.
pub fn parse_body(bytes: &[u8]) -> Result<Value, ApiError> {
    if bytes.starts_with(b"k8s\0") {
        return crate::proto::decode_object(bytes)
            .map_err(|e| ApiError::new(415, "UnsupportedMediaType", e));
    }
    if let Ok(v) = serde_json::from_slice::<Value>(bytes) {
        return Ok(v);
    }
    std::str::from_utf8(bytes).map_err(|_| ApiError::bad_request("request body is not UTF-8"))?;
    crate::yaml::first_document(bytes)
        .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))
}

#[derive(Clone)]
struct Target {
    t: ResourceType,
    version: String,
    ns: Option<String>,
    name: Option<String>,
    status: bool,
    scale: bool,
    /// An events.k8s.io/v1 request, served from the core v1 Event store
    /// (`t` is the core type) through `crate::events`.
    events_v1: bool,
}

impl Target {
    /// The apiVersion the client sees.
    fn api_version(&self) -> String {
        if self.events_v1 {
            return "events.k8s.io/v1".into();
        }
        self.t.api_version(&self.version)
    }

    /// The apiVersion of what is stored and written.
    fn storage_api_version(&self) -> String {
        self.t.api_version(&self.version)
    }

    /// A request body in the shape stored.
    fn to_storage(&self, v: Value) -> Value {
        if self.events_v1 {
            crate::events::to_core(v)
        } else {
            v
        }
    }
}

pub async fn handle(
    shared: Arc<Shared>,
    req: Request<Incoming>,
) -> Result<Response<Body>, Infallible> {
    let res = route(&shared, req).await;
    Ok(res.unwrap_or_else(|e| error_response(&e)))
}

/// A wrong token is always refused. client-go never sends credentials over
/// plain HTTP, so there a request without any is let in, as kube-apiserver's
/// old insecure port did; with `require_token` it is refused.
fn authorized(shared: &Shared, req: &Request<Incoming>) -> bool {
    match req
        .headers()
        .get("authorization")
        .and_then(|h| h.to_str().ok())
    {
        Some(h) => h
            .strip_prefix("Bearer ")
            .is_some_and(|t| t.trim() == shared.token),
        None => !shared.require_token,
    }
}

fn manager_of(req: &Request<Incoming>, q: &HashMap<String, String>) -> String {
    if let Some(m) = q.get("fieldManager").filter(|m| !m.is_empty()) {
        return m.clone();
    }
    req.headers()
        .get("user-agent")
        .and_then(|h| h.to_str().ok())
        .map(|ua| ua.split('/').next().unwrap_or("unknown").to_string())
        .unwrap_or_else(|| "unknown".into())
}

async fn route(shared: &Arc<Shared>, req: Request<Incoming>) -> Result<Response<Body>, ApiError> {
    if !authorized(shared, &req) {
        return Ok(json_response(
            401,
            &ApiError::new(401, "Unauthorized", "Unauthorized").status(),
        ));
    }
    let path = req.uri().path().to_string();
    let agent = req
        .headers()
        .get("user-agent")
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default()
        .to_string();
    if path == "/sandbox/requests" {
        let counts: Vec<Value> = shared
            .requests
            .snapshot()
            .iter()
            .map(|c| c.to_json())
            .collect();
        return Ok(json_response(200, &Value::Array(counts)));
    }
    let q = query_map(req.uri().query());
    let segs: Vec<String> = path
        .split('/')
        .filter(|s| !s.is_empty())
        .map(decode)
        .collect();
    let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
    let method = req.method().clone();
    if method != Method::GET {
        shared
            .writes
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    // kube-apiserver answers `as=PartialObjectMetadataList` with metadata only.
    let metadata_only = req
        .headers()
        .get("accept")
        .and_then(|h| h.to_str().ok())
        .is_some_and(|a| a.contains("as=PartialObjectMetadata"));
    let discovery = matches!(
        segs.as_slice(),
        ["version"]
            | ["api"]
            | ["apis"]
            | ["api", _]
            | ["apis", _]
            | ["apis", _, _]
            | ["openapi", ..]
    );
    if method == Method::GET && discovery {
        shared.requests.record(&agent, "discovery", &path);
    }
    if method == Method::GET {
        match segs.as_slice() {
            ["version"] => return Ok(json_response(200, &discovery::version())),
            ["healthz" | "livez" | "readyz"] => {
                return Ok(Response::builder()
                    .status(200)
                    .body(full("ok"))
                    .expect("response"))
            }
            ["api"] => {
                return Ok(json_response(
                    200,
                    &discovery::core_versions(&shared.address),
                ))
            }
            ["apis"] => {
                let st = shared.state.lock().expect("lock");
                return Ok(json_response(200, &discovery::group_list(&st.registry)));
            }
            ["api", v] => {
                let st = shared.state.lock().expect("lock");
                return discovery::resource_list(&st.registry, "", v)
                    .map(|d| json_response(200, &d))
                    .ok_or_else(|| {
                        ApiError::new(
                            404,
                            "NotFound",
                            "the server could not find the requested resource",
                        )
                    });
            }
            ["apis", g] => {
                let st = shared.state.lock().expect("lock");
                return discovery::group(&st.registry, g)
                    .map(|d| json_response(200, &d))
                    .ok_or_else(|| {
                        ApiError::new(
                            404,
                            "NotFound",
                            "the server could not find the requested resource",
                        )
                    });
            }
            ["apis", g, v] => {
                let st = shared.state.lock().expect("lock");
                return discovery::resource_list(&st.registry, g, v)
                    .map(|d| json_response(200, &d))
                    .ok_or_else(|| {
                        ApiError::new(
                            404,
                            "NotFound",
                            "the server could not find the requested resource",
                        )
                    });
            }
            ["openapi", "v3"] => {
                let st = shared.state.lock().expect("lock");
                return Ok(json_response(
                    200,
                    &discovery::openapi_v3_index(&st.registry, st.rv),
                ));
            }
            ["openapi", "v3", rest @ ..] => {
                let st = shared.state.lock().expect("lock");
                let doc = match rest {
                    ["api", v] => discovery::openapi_v3_group(&st.registry, "", v),
                    ["apis", g, v] => discovery::openapi_v3_group(&st.registry, g, v),
                    _ => None,
                };
                return doc.map(|d| json_response(200, &d)).ok_or_else(|| {
                    ApiError::new(
                        404,
                        "NotFound",
                        "the server could not find the requested resource",
                    )
                });
            }
            _ => {}
        }
    }
    let (group, version, rest) = match segs.as_slice() {
        ["api", v, rest @ ..] if !rest.is_empty() => ("", *v, rest),
        ["apis", g, v, rest @ ..] if !rest.is_empty() => (*g, *v, rest),
        _ => {
            return Err(ApiError::new(
                404,
                "NotFound",
                "the server could not find the requested resource",
            ))
        }
    };
    let (legacy_watch, rest) = match rest {
        ["watch", r @ ..] => (true, r),
        r => (false, r),
    };
    let target = {
        let st = shared.state.lock().expect("lock");
        resolve(&st, group, version, rest)?
    };
    let mut q = q;
    if target.t.kind == "Event" && target.t.group.is_empty() {
        if let Some(fs) = q.get_mut("fieldSelector") {
            *fs = crate::events::field_selector(fs, target.events_v1);
        }
    }
    // Server-side printing: kubectl asks for a meta.k8s.io Table.
    let table_version = req
        .headers()
        .get("accept")
        .and_then(|h| h.to_str().ok())
        .and_then(crate::table::wanted);
    let watch = legacy_watch || matches!(q.get("watch").map(String::as_str), Some("true" | "1"));
    let verb = match (&method, target.name.is_some()) {
        (&Method::GET, false) if watch => "watch",
        (&Method::GET, false) => "list",
        (&Method::GET, true) => "get",
        (&Method::POST, _) => "create",
        (&Method::PUT, _) => "update",
        (&Method::PATCH, _) => "patch",
        (&Method::DELETE, _) => "delete",
        _ => "other",
    };
    let resuming = q
        .get("resourceVersion")
        .is_some_and(|rv| !rv.is_empty() && rv != "0");
    let mut watch_faults = (false, false);
    let mut late = None;
    shared.requests.record(
        &agent,
        verb,
        &if target.status {
            format!("{}/status", target.t.plural)
        } else {
            target.t.plural.clone()
        },
    );
    for fault in shared.faults.pick(verb, &target.t.plural, &agent, resuming) {
        use crate::faults::Fault;
        match fault {
            Fault::Status(code) => {
                let reason = if code == 503 {
                    "ServiceUnavailable"
                } else {
                    "InternalError"
                };
                return Err(ApiError::new(code, reason, "injected fault"));
            }
            Fault::TooManyRequests => {
                let status =
                    ApiError::new(429, "TooManyRequests", "injected fault: rate limited").status();
                let mut res = json_response(429, &status);
                res.headers_mut()
                    .insert("Retry-After", "1".parse().expect("header"));
                return Ok(res);
            }
            Fault::Conflict => {
                return Err(ApiError::new(409, "Conflict", format!(
                    "Operation cannot be fulfilled on {}: the object has been modified; please apply your changes to the latest version and try again (injected fault)",
                    target.t.plural)));
            }
            Fault::Delay(d) => tokio::time::sleep(d).await,
            Fault::Late(d) => late = Some(d),
            Fault::CutWatch => watch_faults.0 = true,
            Fault::GoneOnResume => watch_faults.1 = true,
        }
    }
    // The work is done before a late answer is held back: the client that
    // gave up waiting never learns that its write happened.
    let response = async move {
    let manager = manager_of(&req, &q);
    let dry_run = q.get("dryRun").is_some_and(|d| d == "All");
    let content_type = req
        .headers()
        .get("content-type")
        .and_then(|h| h.to_str().ok())
        .unwrap_or("application/json")
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_string();
    if content_type.contains("cbor") {
        return Err(ApiError::new(
            415,
            "UnsupportedMediaType",
            format!("the body of the request was in an unknown format - accepted media types include: application/json, application/yaml (got {content_type})"),
        ));
    }
    let body = req
        .into_body()
        .collect()
        .await
        .map_err(|e| ApiError::bad_request(format!("reading the body: {e}")))?
        .to_bytes();
    if body.len() > MAX_BODY {
        return Err(ApiError::new(
            413,
            "RequestEntityTooLarge",
            "the request is too large",
        ));
    }
    let opts = WriteOptions {
        manager,
        dry_run,
        status: target.status,
        scale: false,
        api_version: target.storage_api_version(),
    };
    let ns = target.ns.clone().unwrap_or_default();
    let t = &target.t;
    // Unknown fields of custom resources under `fieldValidation` (crd_schema).
    let directive = match t.crd {
        Some(_) => crd_schema::Directive::parse(q.get("fieldValidation").map(String::as_str))?,
        None => crd_schema::Directive::Warn,
    };
    let fields = |obj: &Value, verb: crd_schema::Verb| match t.crd {
        Some(_) => crd_schema::check_fields(t, &target.version, obj, directive, verb),
        None => Ok(Vec::new()),
    };

    if target.scale {
        let name = target.name.clone().unwrap_or_default();
        let out = scale(shared, t, &ns, &name, method, &body, &content_type, &opts)?;
        return Ok(json_response(200, &out));
    }
    match (method, target.name.clone()) {
        (Method::GET, None) if watch => start_watch(shared, &target, &q, watch_faults, table_version),
        (Method::GET, None) => list(shared, &target, &q, metadata_only, table_version),
        (Method::GET, Some(name)) => {
            let st = shared.state.lock().expect("lock");
            let obj = st.get(t, &ns, &name)?;
            if let Some(tv) = table_version {
                let meta = json!({"resourceVersion": obj.pointer("/metadata/resourceVersion")});
                return Ok(json_response(200, &table_of(&st, &target, &q, tv, true, &[&obj], meta)?));
            }
            if metadata_only {
                return Ok(json_response(200, &metadata_of(&obj)));
            }
            Ok(json_response(200, &present(&obj, &target)))
        }
        (Method::POST, None) => {
            let obj = parse_body(&body)?;
            let warnings = fields(&obj, crd_schema::Verb::CreateOrUpdate)?;
            let obj = target.to_storage(obj);
            let out = {
                let mut st = shared.state.lock().expect("lock");
                st.create(t, &ns, obj, &opts)?
            };
            shared.wake_controllers.notify_one();
            Ok(with_warnings(json_response(201, &present(&out, &target)), &warnings))
        }
        (Method::PUT, Some(name)) => {
            let obj = parse_body(&body)?;
            let warnings = fields(&obj, crd_schema::Verb::CreateOrUpdate)?;
            let obj = target.to_storage(obj);
            let out = {
                let mut st = shared.state.lock().expect("lock");
                st.update(t, &ns, &name, obj, &opts)?
            };
            shared.wake_controllers.notify_one();
            Ok(with_warnings(json_response(200, &present(&out, &target)), &warnings))
        }
        (Method::PATCH, Some(name)) => {
            let patch = parse_body(&body)?;
            let force = q.get("force").is_some_and(|f| f == "true");
            let mut st = shared.state.lock().expect("lock");
            let out = if content_type == "application/apply-patch+yaml" {
                if opts.manager.is_empty() || !q.contains_key("fieldManager") {
                    return Err(ApiError::bad_request(
                        "PATCH, application/apply-patch+yaml requires fieldManager to be set",
                    ));
                }
                fields(&patch, crd_schema::Verb::Apply { ns: &ns, name: &name })?;
                let existed = st.get(t, &ns, &name).is_ok();
                let patch = target.to_storage(patch);
                let out = st.apply(t, &ns, &name, patch, force, &opts)?;
                drop(st);
                shared.wake_controllers.notify_one();
                return Ok(json_response(
                    if existed { 200 } else { 201 },
                    &present(&out, &target),
                ));
            } else {
                let current = st.get(t, &ns, &name)?;
                // An events.k8s.io patch applies to the object as that group shows it.
                let mut obj = if target.events_v1 {
                    crate::events::from_core(&current)
                } else {
                    (*current).clone()
                };
                match content_type.as_str() {
                    "application/merge-patch+json" => crate::patch::merge_patch(&mut obj, &patch),
                    "application/json-patch+json" => crate::patch::json_patch(&mut obj, &patch)
                        .map_err(|e| ApiError::new(422, "Invalid", e))?,
                    "application/strategic-merge-patch+json" => {
                        if t.crd.is_some() {
                            return Err(ApiError::new(
                                415,
                                "UnsupportedMediaType",
                                "strategic merge patch is not supported for custom resources",
                            ));
                        }
                        crate::patch::strategic_merge_patch(&mut obj, &patch).map_err(|e| ApiError::new(422, "Invalid", e))?
                    }
                    other => {
                        return Err(ApiError::new(415, "UnsupportedMediaType", format!("the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml (got {other})")))
                    }
                }
                // A patch that does not name a resourceVersion is unconditional.
                if patch.pointer("/metadata/resourceVersion").is_none()
                    && !content_type.contains("json-patch")
                {
                    obj["metadata"]["resourceVersion"] =
                        current["metadata"]["resourceVersion"].clone();
                }
                let warnings = fields(&obj, crd_schema::Verb::Patch)?;
                let obj = target.to_storage(obj);
                (st.update(t, &ns, &name, obj, &opts)?, warnings)
            };
            drop(st);
            shared.wake_controllers.notify_one();
            Ok(with_warnings(json_response(200, &present(&out.0, &target)), &out.1))
        }
        (Method::DELETE, name) => {
            let opts_body = if body.is_empty() {
                json!({})
            } else {
                parse_body(&body)?
            };
            let propagation = opts_body
                .get("propagationPolicy")
                .and_then(Value::as_str)
                .or(q.get("propagationPolicy").map(String::as_str))
                .map(|p| match p {
                    "Foreground" => Ok(Propagation::Foreground),
                    "Orphan" => Ok(Propagation::Orphan),
                    "Background" => Ok(Propagation::Background),
                    other => Err(ApiError::bad_request(format!(
                        "unsupported propagationPolicy {other:?}"
                    ))),
                })
                .transpose()?
                .or_else(
                    || match opts_body.get("orphanDependents").and_then(Value::as_bool) {
                        Some(true) => Some(Propagation::Orphan),
                        _ => None,
                    },
                );
            let dry = dry_run
                || opts_body
                    .get("dryRun")
                    .and_then(Value::as_array)
                    .is_some_and(|a| a.iter().any(|x| x == "All"));
            let mut st = shared.state.lock().expect("lock");
            match name {
                Some(name) => {
                    let out = st.delete(
                        t,
                        &ns,
                        &name,
                        propagation,
                        opts_body.get("preconditions"),
                        dry,
                    )?;
                    Ok(json_response(200, &present(&out, &target)))
                }
                None => {
                    let (labels, fields) = selectors(&q)?;
                    let ns = target.ns.as_deref();
                    let items = st.delete_collection(t, ns, &labels, &fields, propagation, dry);
                    let rv = st.rv;
                    drop(st);
                    Ok(list_response(&target, items, rv, None, 0, false))
                }
            }
        }
        _ => Err(ApiError::new(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
        )),
    }
    }
    .await;
    if let Some(d) = late {
        tokio::time::sleep(d).await;
    }
    response
}

/// A JSON path (`.spec.replicas`) as a pointer.
fn pointer(path: &str) -> String {
    path.replace('.', "/")
}

/// A LabelSelector as the string Scale's `status.selector` holds.
fn selector_string(sel: &Value) -> String {
    let mut parts: Vec<(String, String)> = Vec::new();
    if let Some(m) = sel.get("matchLabels").and_then(Value::as_object) {
        for (k, v) in m {
            parts.push((k.clone(), format!("{k}={}", v.as_str().unwrap_or_default())));
        }
    }
    for e in sel
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let k = e["key"].as_str().unwrap_or_default().to_string();
        let mut values: Vec<&str> = e["values"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        values.sort();
        let text = match e["operator"].as_str().unwrap_or_default() {
            "In" => format!("{k} in ({})", values.join(",")),
            "NotIn" => format!("{k} notin ({})", values.join(",")),
            "Exists" => k.clone(),
            _ => format!("!{k}"),
        };
        parts.push((k, text));
    }
    parts.sort();
    parts
        .into_iter()
        .map(|(_, t)| t)
        .collect::<Vec<_>>()
        .join(",")
}

/// The autoscaling/v1 Scale a kind's `scale` subresource shows of `obj`.
fn scale_of(t: &ResourceType, obj: &Value) -> Value {
    let paths = t.scale.as_ref().expect("scale subresource");
    let meta = &obj["metadata"];
    let mut m = json!({});
    for k in [
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "creationTimestamp",
    ] {
        if let Some(v) = meta.get(k) {
            m[k] = v.clone();
        }
    }
    let replicas = |p: &str| obj.pointer(&pointer(p)).and_then(Value::as_i64);
    let mut status = json!({"replicas": replicas(&paths.status_replicas).unwrap_or(0)});
    let selector = match &paths.label_selector {
        Some(p) => obj
            .pointer(&pointer(p))
            .and_then(Value::as_str)
            .map(str::to_string),
        None if t.crd.is_none() => obj.pointer("/spec/selector").map(selector_string),
        None => None,
    };
    if let Some(s) = selector.filter(|s| !s.is_empty()) {
        status["selector"] = json!(s);
    }
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": m,
        "spec": {"replicas": replicas(&paths.spec_replicas).unwrap_or(0)},
        "status": status,
    })
}

/// get, update and patch of the `scale` subresource: reads and writes the
/// replicas path of the object itself.
#[allow(clippy::too_many_arguments)]
fn scale(
    shared: &Arc<Shared>,
    t: &ResourceType,
    ns: &str,
    name: &str,
    method: Method,
    body: &[u8],
    content_type: &str,
    opts: &WriteOptions,
) -> Result<Value, ApiError> {
    let mut st = shared.state.lock().expect("lock");
    let current = st.get(t, ns, name)?;
    let shown = scale_of(t, &current);
    let wanted = match method {
        Method::GET => return Ok(shown),
        Method::PUT => parse_body(body)?,
        Method::PATCH => {
            let patch = parse_body(body)?;
            let mut s = shown.clone();
            match content_type {
                "application/merge-patch+json" => crate::patch::merge_patch(&mut s, &patch),
                "application/json-patch+json" => crate::patch::json_patch(&mut s, &patch)
                    .map_err(|e| ApiError::new(422, "Invalid", e))?,
                "application/strategic-merge-patch+json" => {
                    crate::patch::strategic_merge_patch(&mut s, &patch)
                        .map_err(|e| ApiError::new(422, "Invalid", e))?
                }
                other => return Err(ApiError::new(415, "UnsupportedMediaType", format!("the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json (got {other})"))),
            }
            s
        }
        _ => {
            return Err(ApiError::new(
                405,
                "MethodNotAllowed",
                "the server does not allow this method on the requested resource",
            ))
        }
    };
    if let Some(rv) = wanted
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .filter(|r| !r.is_empty())
    {
        if Some(rv) != current["metadata"]["resourceVersion"].as_str() {
            return Err(ApiError::stale(t, name));
        }
    }
    let replicas = wanted
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if replicas < 0 {
        return Err(ApiError {
            details: Some(json!({"name": name, "group": "autoscaling", "kind": "Scale", "causes": [
                {"reason": "FieldValueInvalid", "message": format!("Invalid value: {replicas}: must be greater than or equal to 0"), "field": "spec.replicas"}]})),
            ..ApiError::new(422, "Invalid", format!("Scale.autoscaling {name:?} is invalid: spec.replicas: Invalid value: {replicas}: must be greater than or equal to 0"))
        });
    }
    let mut obj = (*current).clone();
    let paths = t.scale.as_ref().expect("scale subresource");
    let ptr = pointer(&paths.spec_replicas);
    let (parent, leaf) = ptr.rsplit_once('/').unwrap_or(("", &ptr));
    let mut at = &mut obj;
    for seg in parent.split('/').filter(|s| !s.is_empty()) {
        if !at.get(seg).is_some_and(Value::is_object) {
            at[seg] = json!({});
        }
        at = &mut at[seg];
    }
    at[leaf] = json!(replicas);
    let opts = WriteOptions {
        scale: true,
        ..opts.clone()
    };
    let out = st.update(t, ns, name, obj, &opts)?;
    drop(st);
    shared.wake_controllers.notify_one();
    Ok(scale_of(t, &out))
}

fn resolve(st: &State, group: &str, version: &str, rest: &[&str]) -> Result<Target, ApiError> {
    let not_found = || {
        ApiError::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        )
    };
    let reg = &st.registry;
    // events.k8s.io/v1 Events are the core v1 Events, converted.
    let (group, version, events_v1) = match (group, rest) {
        ("events.k8s.io", ["namespaces", _, "events", ..] | ["events", ..]) if version == "v1" => {
            ("", "v1", true)
        }
        _ => (group, version, false),
    };
    let (ns, plural, name, sub) = if rest[0] == "namespaces"
        && rest.len() >= 3
        && reg
            .lookup(group, version, rest[2])
            .is_some_and(|t| t.namespaced)
    {
        (Some(rest[1]), rest[2], rest.get(3), rest.get(4))
    } else {
        (None, rest[0], rest.get(1), rest.get(2))
    };
    let t = reg
        .lookup(group, version, plural)
        .ok_or_else(not_found)?
        .clone();
    if t.namespaced && ns.is_none() && name.is_some() {
        return Err(not_found());
    }
    let (status, scale) = match sub {
        None => (false, false),
        Some(&"status") if t.status_subresource => (true, false),
        Some(&"scale") if t.scale.is_some() => (false, true),
        Some(&"finalize") if t.kind == "Namespace" => (false, false),
        Some(_) => return Err(not_found()),
    };
    if rest.len() > if ns.is_some() { 5 } else { 3 } {
        return Err(not_found());
    }
    Ok(Target {
        t,
        version: version.into(),
        ns: ns.map(|s| s.to_string()),
        name: name.map(|s| s.to_string()),
        status,
        scale,
        events_v1,
    })
}

/// The object as the requested version presents it (all versions share storage).
fn present(obj: &Obj, target: &Target) -> Value {
    present_value(obj, target)
}

fn present_value(obj: &Value, target: &Target) -> Value {
    if target.events_v1 {
        return crate::events::from_core(obj);
    }
    let mut v = obj.clone();
    if v.is_object() {
        v["apiVersion"] = json!(target.api_version());
        v["kind"] = json!(target.t.kind);
    }
    v
}

fn selectors(q: &HashMap<String, String>) -> Result<(LabelSelector, FieldSelector), ApiError> {
    let labels = LabelSelector::parse(q.get("labelSelector").map(String::as_str).unwrap_or(""))
        .map_err(|e| ApiError::bad_request(format!("unable to parse requirement: {e}")))?;
    let fields = FieldSelector::parse(q.get("fieldSelector").map(String::as_str).unwrap_or(""))
        .map_err(ApiError::bad_request)?;
    Ok((labels, fields))
}

/// Serializes an object as `api_version` presents it, without copying it
/// when it is stored in that version already.
fn write_object(out: &mut Vec<u8>, obj: &Value, api_version: &str) {
    if obj.get("apiVersion").and_then(Value::as_str) == Some(api_version) || !obj.is_object() {
        serde_json::to_writer(&mut *out, obj).expect("json");
    } else {
        let mut v = obj.clone();
        v["apiVersion"] = json!(api_version);
        serde_json::to_writer(&mut *out, &v).expect("json");
    }
}

/// A `meta.k8s.io` Table of stored objects (`crate::table`).
fn table_of(
    st: &State,
    target: &Target,
    q: &HashMap<String, String>,
    table_version: &str,
    headers: bool,
    objects: &[&Value],
    meta: Value,
) -> Result<Value, ApiError> {
    let include = crate::table::Include::parse(q.get("includeObject").map(String::as_str))
        .map_err(ApiError::bad_request)?;
    let req = crate::table::Request {
        t: &target.t,
        version: &target.version,
        table_version,
        include,
        headers,
    };
    Ok(crate::table::table(st, &req, objects, meta, &|o| {
        present_value(o, target)
    }))
}

fn metadata_of(obj: &Value) -> Value {
    json!({
        "apiVersion": "meta.k8s.io/v1",
        "kind": "PartialObjectMetadata",
        "metadata": obj.get("metadata").cloned().unwrap_or_else(|| json!({})),
    })
}

fn list_response(
    target: &Target,
    items: Vec<Obj>,
    rv: u64,
    cont: Option<String>,
    remaining: usize,
    metadata_only: bool,
) -> Response<Body> {
    let mut meta = json!({"resourceVersion": rv.to_string()});
    if let Some(c) = cont {
        meta["continue"] = json!(c);
        meta["remainingItemCount"] = json!(remaining);
    }
    let api_version = if metadata_only {
        "meta.k8s.io/v1".to_string()
    } else {
        target.api_version()
    };
    let list_kind = if metadata_only {
        "PartialObjectMetadataList".to_string()
    } else {
        format!("{}List", target.t.kind)
    };
    let mut out = Vec::with_capacity(64 + items.len() * 512);
    out.extend_from_slice(b"{\"kind\":");
    serde_json::to_writer(&mut out, &list_kind).expect("json");
    out.extend_from_slice(b",\"apiVersion\":");
    serde_json::to_writer(&mut out, &api_version).expect("json");
    out.extend_from_slice(b",\"metadata\":");
    serde_json::to_writer(&mut out, &meta).expect("json");
    out.extend_from_slice(b",\"items\":[");
    for (i, o) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        if metadata_only {
            serde_json::to_writer(&mut out, &metadata_of(o)).expect("json");
        } else if target.events_v1 {
            serde_json::to_writer(&mut out, &crate::events::from_core(o)).expect("json");
        } else {
            write_object(&mut out, o, &api_version);
        }
    }
    out.extend_from_slice(b"]}");
    Response::builder()
        .status(200)
        .header("Content-Type", "application/json")
        .body(full(out))
        .expect("response")
}

fn list(
    shared: &Arc<Shared>,
    target: &Target,
    q: &HashMap<String, String>,
    metadata_only: bool,
    table_version: Option<&str>,
) -> Result<Response<Body>, ApiError> {
    use base64::Engine;
    let (labels, fields) = selectors(q)?;
    let limit: usize = q.get("limit").and_then(|l| l.parse().ok()).unwrap_or(0);
    let after = match q.get("continue").filter(|c| !c.is_empty()) {
        Some(c) => {
            let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(c)
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
                .ok_or_else(|| ApiError::bad_request("continue key is not valid"))?;
            let (ns, name) = raw
                .split_once('\0')
                .ok_or_else(|| ApiError::bad_request("continue key is not valid"))?;
            Some((ns.to_string(), name.to_string()))
        }
        None => None,
    };
    let st = shared.state.lock().expect("lock");
    let (items, next, remaining) = st.list(
        &target.t,
        target.ns.as_deref(),
        &labels,
        &fields,
        after,
        limit,
    );
    let cont = next.map(|(ns, name)| {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("{ns}\0{name}"))
    });
    let rv = st.rv;
    if let Some(tv) = table_version {
        let mut meta = json!({"resourceVersion": rv.to_string()});
        if let Some(c) = &cont {
            meta["continue"] = json!(c);
            meta["remainingItemCount"] = json!(remaining);
        }
        let objs: Vec<&Value> = items.iter().map(|o| &**o).collect();
        return Ok(json_response(
            200,
            &table_of(&st, target, q, tv, true, &objs, meta)?,
        ));
    }
    drop(st);
    Ok(list_response(
        target,
        items,
        rv,
        cont,
        remaining,
        metadata_only,
    ))
}

struct StreamBody {
    rx: mpsc::UnboundedReceiver<Bytes>,
}

impl http_body::Body for StreamBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.rx.poll_recv(cx) {
            Poll::Ready(Some(b)) => Poll::Ready(Some(Ok(Frame::data(b)))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }
}

/// An event line from an object serialized by the store: used as is when the
/// watch asks for the stored version (serde_json writes `apiVersion` first).
fn event_line_json(etype: &str, json: &Bytes, api_version: &str) -> Bytes {
    let prefix = format!(
        "{{\"apiVersion\":{}",
        serde_json::to_string(api_version).expect("json")
    );
    if json.starts_with(prefix.as_bytes()) {
        let mut out = Vec::with_capacity(json.len() + 32);
        out.extend_from_slice(b"{\"type\":\"");
        out.extend_from_slice(etype.as_bytes());
        out.extend_from_slice(b"\",\"object\":");
        out.extend_from_slice(json);
        out.extend_from_slice(b"}\n");
        return Bytes::from(out);
    }
    let v: Value = serde_json::from_slice(json).expect("stored JSON");
    event_line_as(etype, &v, Some(api_version))
}

fn event_line(etype: &str, object: &Value) -> Bytes {
    event_line_as(etype, object, None)
}

fn event_line_as(etype: &str, object: &Value, api_version: Option<&str>) -> Bytes {
    let mut out = Vec::with_capacity(1024);
    out.extend_from_slice(b"{\"type\":\"");
    out.extend_from_slice(etype.as_bytes());
    out.extend_from_slice(b"\",\"object\":");
    match api_version {
        Some(av) => write_object(&mut out, object, av),
        None => serde_json::to_writer(&mut out, object).expect("json"),
    }
    out.extend_from_slice(b"}\n");
    Bytes::from(out)
}

/// How a watch writes its objects: as stored, converted to events.k8s.io, or
/// as one-row Tables for kubectl (column definitions in the first only).
struct WatchShape {
    target: Target,
    q: HashMap<String, String>,
    table: Option<&'static str>,
    headers_sent: bool,
}

impl WatchShape {
    fn line(&mut self, st: &State, etype: &str, json: &Bytes) -> Bytes {
        if !self.target.events_v1 && self.table.is_none() {
            return event_line_json(etype, json, &self.target.api_version());
        }
        let v: Value = serde_json::from_slice(json).expect("stored JSON");
        self.line_value(st, etype, &v)
    }

    fn line_unlocked(&mut self, shared: &Shared, etype: &str, json: &Bytes) -> Bytes {
        if !self.target.events_v1 && self.table.is_none() {
            return event_line_json(etype, json, &self.target.api_version());
        }
        let st = shared.state.lock().expect("lock");
        self.line(&st, etype, json)
    }

    fn line_value(&mut self, st: &State, etype: &str, v: &Value) -> Bytes {
        if let Some(tv) = self.table {
            let headers = !self.headers_sent;
            self.headers_sent = true;
            let meta = json!({"resourceVersion": v.pointer("/metadata/resourceVersion")});
            return match table_of(st, &self.target, &self.q, tv, headers, &[v], meta) {
                Ok(t) => event_line(etype, &t),
                Err(e) => event_line("ERROR", &e.status()),
            };
        }
        if self.target.events_v1 {
            return event_line(etype, &present_value(v, &self.target));
        }
        event_line_as(etype, v, Some(&self.target.api_version()))
    }
}

/// `faults`: (cut the stream after a few events, answer a resume with 410).
fn start_watch(
    shared: &Arc<Shared>,
    target: &Target,
    q: &HashMap<String, String>,
    faults: (bool, bool),
    table_version: Option<&'static str>,
) -> Result<Response<Body>, ApiError> {
    let (labels, fields) = selectors(q)?;
    let mut shape = WatchShape {
        target: target.clone(),
        q: q.clone(),
        table: table_version,
        headers_sent: false,
    };
    let (tx, mut events) = mpsc::unbounded_channel::<WatchMsg>();
    let (out_tx, out_rx) = mpsc::unbounded_channel::<Bytes>();
    let bookmarks = q.get("allowWatchBookmarks").is_some_and(|b| b == "true");
    let initial_events = q.get("sendInitialEvents").is_some_and(|b| b == "true");
    let timeout = q
        .get("timeoutSeconds")
        .and_then(|t| t.parse::<u64>().ok())
        .map(Duration::from_secs);
    let rv_param = q.get("resourceVersion").cloned().unwrap_or_default();
    let watcher = Watcher {
        res: target.t.key(),
        ns: target.ns.clone(),
        labels,
        fields,
        tx,
    };
    let mut initial: Vec<Bytes> = Vec::new();
    let current_rv;
    {
        let mut st = shared.state.lock().expect("lock");
        current_rv = st.rv;
        let replay_all = rv_param.is_empty() || rv_param == "0" || initial_events;
        if replay_all {
            let (items, _, _) = st.list(
                &target.t,
                target.ns.as_deref(),
                &watcher.labels,
                &watcher.fields,
                None,
                0,
            );
            for o in items {
                initial.push(shape.line_value(&st, "ADDED", &o));
            }
            if initial_events {
                initial.push(event_line(
                    "BOOKMARK",
                    &json!({"kind": target.t.kind, "apiVersion": target.api_version(),
                        "metadata": {"resourceVersion": current_rv.to_string(), "annotations": {"k8s.io/initial-events-end": "true"}}}),
                ));
            }
        } else {
            let rv: u64 = rv_param.parse().map_err(|_| {
                ApiError::bad_request(format!("invalid resource version: {rv_param}"))
            })?;
            match st.events_since(rv, &watcher).filter(|_| !faults.1) {
                Some(evs) => {
                    for (et, json) in evs {
                        initial.push(shape.line(&st, et.as_str(), &json));
                    }
                }
                None => {
                    let oldest = st.oldest_rv();
                    let status = ApiError::new(
                        410,
                        "Expired",
                        format!(
                            "too old resource version: {rv} ({})",
                            oldest.saturating_sub(1)
                        ),
                    )
                    .status();
                    let _ = out_tx.send(event_line("ERROR", &status));
                    drop(out_tx);
                    return Ok(watch_response(out_rx));
                }
            }
        }
        st.add_watcher(watcher);
    }
    for b in initial {
        let _ = out_tx.send(b);
    }
    let kind = target.t.kind.clone();
    let api_version = target.api_version();
    let interval = shared.bookmark_interval;
    let shared2 = shared.clone();
    let mut cut_after = faults.0.then_some(1 + (current_rv % 3) as usize);
    tokio::spawn(async move {
        let deadline = timeout.map(|t| tokio::time::Instant::now() + t);
        let mut tick = tokio::time::interval(interval);
        tick.tick().await;
        loop {
            let sleep_until = deadline
                .unwrap_or_else(|| tokio::time::Instant::now() + Duration::from_secs(86400));
            tokio::select! {
                msg = events.recv() => match msg {
                    Some(WatchMsg::Event(et, o)) => {
                        let line = shape.line_unlocked(&shared2, et.as_str(), &o);
                        if out_tx.send(line).is_err() { break; }
                        if let Some(n) = cut_after.as_mut() {
                            *n -= 1;
                            if *n == 0 { break; }
                        }
                    }
                    Some(WatchMsg::Gone(msg)) => {
                        let _ = out_tx.send(event_line("ERROR", &ApiError::new(410, "Expired", msg).status()));
                        break;
                    }
                    None => break,
                },
                _ = tick.tick(), if bookmarks => {
                    let rv = shared2.state.lock().expect("lock").rv;
                    // Events up to rv are already queued: deliver them before the bookmark.
                    let mut closed = false;
                    while let Ok(msg) = events.try_recv() {
                        if let WatchMsg::Event(et, o) = msg {
                            let line = shape.line_unlocked(&shared2, et.as_str(), &o);
                            if out_tx.send(line).is_err() { closed = true; break; }
                        }
                    }
                    if closed { break; }
                    let b = json!({"kind": kind, "apiVersion": api_version, "metadata": {"resourceVersion": rv.to_string()}});
                    if out_tx.send(event_line("BOOKMARK", &b)).is_err() { break; }
                }
                _ = out_tx.closed() => break,
                _ = tokio::time::sleep_until(sleep_until) => break,
            }
        }
    });
    Ok(watch_response(out_rx))
}

fn watch_response(rx: mpsc::UnboundedReceiver<Bytes>) -> Response<Body> {
    Response::builder()
        .status(StatusCode::OK)
        .header("Content-Type", "application/json")
        .header("Transfer-Encoding", "chunked")
        .body(StreamBody { rx }.boxed())
        .expect("response")
}
