//! A kube client plus the discovery needed to address arbitrary kinds.

use super::objects::Object;
use super::ApplyError;
use kube::api::{Api, DynamicObject};
use kube::discovery::{ApiCapabilities, ApiResource, Scope};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

pub struct Cluster {
    pub client: kube::Client,
    /// Set when the process is stopping: waits end early with an error, so
    /// the action records its release as failed instead of leaving it pending.
    pub stop: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// (apiVersion, kind) -> resource and scope, filled lazily.
    cache: Mutex<HashMap<(String, String), (ApiResource, bool)>>,
}

/// Why no client could be made for a cluster.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// An explicit kubeconfig file does not read or parse.
    #[error("kubeconfig {}: {source}", .path.display())]
    Kubeconfig {
        path: std::path::PathBuf,
        #[source]
        source: kube::config::KubeconfigError,
    },
    /// The kubeconfig holds no usable context, cluster or user.
    #[error("{0}")]
    Config(#[source] kube::config::KubeconfigError),
    #[error("user agent {agent:?}: {source}")]
    UserAgent {
        agent: String,
        #[source]
        source: hyper::header::InvalidHeaderValue,
    },
    /// The configuration does not make a client (TLS, proxy, auth).
    #[error("{0}")]
    Client(#[source] kube::Error),
}

/// Client from an explicit kubeconfig (or KUBECONFIG / ~/.kube/config) and context.
pub async fn connect(
    kubeconfig: Option<&Path>,
    context: Option<&str>,
) -> Result<kube::Client, ConnectError> {
    connect_as(kubeconfig, context, None).await
}

/// The same, sending `User-Agent: agent` (the operator names itself, so an
/// API server's audit log, or the sandbox's fault rules, can tell it apart).
pub async fn connect_as(
    kubeconfig: Option<&Path>,
    context: Option<&str>,
    agent: Option<&str>,
) -> Result<kube::Client, ConnectError> {
    let config = config_for(kubeconfig, context, agent).await?;
    kube::Client::try_from(config).map_err(ConnectError::Client)
}

/// Sees every request a client sends, before it is sent (the operator
/// counts its API requests with one).
pub type RequestObserver = std::sync::Arc<dyn Fn(&hyper::Method, &hyper::Uri) + Send + Sync>;

/// A client of `config` that shows each request to `observe` first and
/// fails a request whose answer has not started within `timeout` (a
/// watch's stream, once started, runs on: only its start is bounded).
pub fn observed_client(
    config: kube::Config,
    observe: RequestObserver,
    timeout: Duration,
) -> Result<kube::Client, ConnectError> {
    let layer =
        tower::util::MapRequestLayer::new(move |req: hyper::Request<kube::client::Body>| {
            observe(req.method(), req.uri());
            req
        });
    Ok(kube::client::ClientBuilder::try_from(config)
        .map_err(ConnectError::Client)?
        .with_layer(&tower::timeout::TimeoutLayer::new(timeout))
        .with_layer(&layer)
        // Retry needs a service it can clone; a buffer in front makes one.
        .with_layer(&tower::buffer::BufferLayer::new(1024))
        .with_layer(&tower::retry::RetryLayer::new(RetryIdempotent::default()))
        .build())
}

/// Sends a read (not a watch) or a server-side apply again when it timed
/// out, its connection failed, or the server was busy or failing (429 after
/// its Retry-After, 500, 502, 503, 504): both are safe to repeat, even when
/// the first one did its work and only the answer was lost. Creates,
/// updates and deletes are not repeated here; their callers decide.
#[derive(Clone, Default)]
pub struct RetryIdempotent {
    attempts: u32,
}

const RETRY_ATTEMPTS: u32 = 3;

fn idempotent(req: &hyper::Request<kube::client::Body>) -> bool {
    let is_apply = req
        .headers()
        .get(hyper::header::CONTENT_TYPE)
        .is_some_and(|c| c.as_bytes().starts_with(b"application/apply-patch"));
    match *req.method() {
        hyper::Method::GET => verb_and_resource(req.method(), req.uri()).0 != "watch",
        hyper::Method::PATCH => is_apply,
        _ => false,
    }
}

impl<B, E> tower::retry::Policy<hyper::Request<kube::client::Body>, hyper::Response<B>, E>
    for RetryIdempotent
{
    type Future = tokio::time::Sleep;

    fn retry(
        &mut self,
        req: &mut hyper::Request<kube::client::Body>,
        result: &mut Result<hyper::Response<B>, E>,
    ) -> Option<Self::Future> {
        if self.attempts >= RETRY_ATTEMPTS || !idempotent(req) {
            return None;
        }
        let wait = match result {
            Err(_) => Duration::ZERO,
            Ok(res) => match res.status().as_u16() {
                429 => res
                    .headers()
                    .get(hyper::header::RETRY_AFTER)
                    .and_then(|v| v.to_str().ok()?.parse().ok())
                    .map(|s: u64| Duration::from_secs(s.min(10)))
                    .unwrap_or(Duration::from_secs(1)),
                500 | 502 | 503 | 504 => Duration::ZERO,
                _ => return None,
            },
        };
        self.attempts += 1;
        let backoff = Duration::from_millis(100 << self.attempts);
        Some(tokio::time::sleep(wait.max(backoff)))
    }

    fn clone_request(
        &mut self,
        req: &hyper::Request<kube::client::Body>,
    ) -> Option<hyper::Request<kube::client::Body>> {
        if !idempotent(req) {
            return None;
        }
        let mut copy = hyper::Request::new(req.body().try_clone()?);
        *copy.method_mut() = req.method().clone();
        *copy.uri_mut() = req.uri().clone();
        *copy.version_mut() = req.version();
        *copy.headers_mut() = req.headers().clone();
        Some(copy)
    }
}

/// The configuration `connect_as` connects with.
pub async fn config_for(
    kubeconfig: Option<&Path>,
    context: Option<&str>,
    agent: Option<&str>,
) -> Result<kube::Config, ConnectError> {
    let options = kube::config::KubeConfigOptions {
        context: context.map(str::to_string),
        ..Default::default()
    };
    let config = match kubeconfig {
        Some(p) => {
            let kc = kube::config::Kubeconfig::read_from(p).map_err(|source| {
                ConnectError::Kubeconfig {
                    path: p.to_path_buf(),
                    source,
                }
            })?;
            kube::Config::from_custom_kubeconfig(kc, &options)
                .await
                .map_err(ConnectError::Config)?
        }
        None => kube::Config::from_kubeconfig(&options)
            .await
            .map_err(ConnectError::Config)?,
    };
    let mut config = config;
    if let Some(agent) = agent {
        let value = hyper::header::HeaderValue::from_str(agent).map_err(|source| {
            ConnectError::UserAgent {
                agent: agent.to_string(),
                source,
            }
        })?;
        config.headers.push((hyper::header::USER_AGENT, value));
    }
    Ok(config)
}

/// Kubernetes' verb and resource of a request to the API (`get`, `list`,
/// `watch`, `create`, `update`, `patch`, `delete`; `pods`, `pods/status`);
/// `discovery` for `/api`, `/apis`, `/openapi` and `/version`.
pub fn verb_and_resource(method: &hyper::Method, uri: &hyper::Uri) -> (&'static str, String) {
    let segs: Vec<&str> = uri.path().split('/').filter(|s| !s.is_empty()).collect();
    let rest = match segs.as_slice() {
        ["api", _, rest @ ..] | ["apis", _, _, rest @ ..] if !rest.is_empty() => rest,
        _ => return ("discovery", uri.path().to_string()),
    };
    let rest = rest.strip_prefix(&["watch"]).unwrap_or(rest);
    let (plural, name, sub) = match rest {
        ["namespaces", _, plural, tail @ ..] => (*plural, tail.first(), tail.get(1)),
        [plural, tail @ ..] => (*plural, tail.first(), tail.get(1)),
        [] => ("", None, None),
    };
    let watch = segs.contains(&"watch")
        || uri
            .query()
            .unwrap_or_default()
            .split('&')
            .any(|p| p == "watch=true" || p == "watch=1");
    let verb = match *method {
        hyper::Method::GET if watch => "watch",
        hyper::Method::GET if name.is_none() => "list",
        hyper::Method::GET => "get",
        hyper::Method::POST => "create",
        hyper::Method::PUT => "update",
        hyper::Method::PATCH => "patch",
        hyper::Method::DELETE if name.is_none() => "deletecollection",
        hyper::Method::DELETE => "delete",
        _ => "other",
    };
    let resource = match sub {
        Some(sub) => format!("{plural}/{sub}"),
        None => plural.to_string(),
    };
    (verb, resource)
}

impl Cluster {
    pub fn new(client: kube::Client) -> Cluster {
        Cluster {
            client,
            stop: None,
            cache: Mutex::new(HashMap::new()),
        }
    }

    pub fn stopping(&self) -> bool {
        self.stop
            .as_ref()
            .is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// Forgets discovery, after CRDs were installed.
    pub fn refresh(&self) {
        self.cache.lock().expect("lock").clear();
    }

    pub async fn resource(
        &self,
        api_version: &str,
        kind: &str,
    ) -> Result<(ApiResource, bool), ApplyError> {
        let key = (api_version.to_string(), kind.to_string());
        if let Some(r) = self.cache.lock().expect("lock").get(&key) {
            return Ok(r.clone());
        }
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        let gvk = kube::api::GroupVersionKind::gvk(group, version, kind);
        let (ar, caps): (ApiResource, ApiCapabilities) = kube::discovery::pinned_kind(&self.client, &gvk)
            .await
            .map_err(|_| {
                ApplyError::Unknown(format!(
                    "resource mapping not found for name: kind {kind:?} in version {api_version:?}: ensure CRDs are installed first"
                ))
            })?;
        let namespaced = caps.scope == Scope::Namespaced;
        self.cache
            .lock()
            .expect("lock")
            .insert(key, (ar.clone(), namespaced));
        Ok((ar, namespaced))
    }

    /// The dynamic API for an object, its namespace set or cleared by scope.
    pub async fn api_for(&self, o: &Object) -> Result<Api<DynamicObject>, ApplyError> {
        let (ar, namespaced) = self.resource(&o.api_version, &o.kind).await?;
        Ok(if namespaced {
            Api::namespaced_with(self.client.clone(), &o.namespace, &ar)
        } else {
            Api::all_with(self.client.clone(), &ar)
        })
    }

    /// Clears the namespace of cluster-scoped objects so messages and
    /// comparisons match what the server stores.
    pub async fn resolve_scopes(&self, objects: &mut [Object]) -> Result<(), ApplyError> {
        for o in objects.iter_mut() {
            let (_, namespaced) = self.resource(&o.api_version, &o.kind).await?;
            if !namespaced {
                o.namespace.clear();
                if let Some(m) = o.body.get_mut("metadata").and_then(|m| m.as_object_mut()) {
                    m.remove("namespace");
                }
            } else if let Some(m) = o.body.get_mut("metadata").and_then(|m| m.as_object_mut()) {
                m.insert(
                    "namespace".into(),
                    serde_json::Value::String(o.namespace.clone()),
                );
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod request_tests {
    use super::{verb_and_resource, RetryIdempotent, RETRY_ATTEMPTS};
    use hyper::{Method, Uri};

    fn vr(m: Method, u: &str) -> (&'static str, String) {
        verb_and_resource(&m, &u.parse::<Uri>().unwrap())
    }

    #[test]
    fn names_verbs_and_resources_as_kubernetes_does() {
        assert_eq!(
            vr(Method::GET, "/api/v1/namespaces"),
            ("list", "namespaces".into())
        );
        assert_eq!(
            vr(Method::GET, "/api/v1/namespaces/a"),
            ("get", "namespaces".into())
        );
        assert_eq!(
            vr(Method::GET, "/api/v1/namespaces/a/pods"),
            ("list", "pods".into())
        );
        assert_eq!(
            vr(
                Method::GET,
                "/apis/apps/v1/deployments?watch=true&resourceVersion=5"
            ),
            ("watch", "deployments".into())
        );
        assert_eq!(
            vr(
                Method::PATCH,
                "/apis/navique.ai/v1alpha1/namespaces/n/postgresclusters/p/status?fieldManager=x"
            ),
            ("patch", "postgresclusters/status".into())
        );
        assert_eq!(
            vr(Method::POST, "/api/v1/namespaces/n/secrets"),
            ("create", "secrets".into())
        );
        assert_eq!(
            vr(Method::DELETE, "/api/v1/namespaces/n/secrets/s"),
            ("delete", "secrets".into())
        );
        assert_eq!(
            vr(Method::GET, "/apis/apps/v1"),
            ("discovery", "/apis/apps/v1".into())
        );
        assert_eq!(
            vr(Method::GET, "/version"),
            ("discovery", "/version".into())
        );
    }

    #[test]
    fn only_reads_and_server_side_applies_are_sent_again() {
        use tower::retry::Policy;
        // The policy's backoff is a tokio timer.
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let _entered = rt.enter();
        let req = |method: Method, uri: &str, content_type: Option<&str>| {
            let mut r = hyper::Request::new(kube::client::Body::from(b"{}".to_vec()));
            *r.method_mut() = method;
            *r.uri_mut() = uri.parse().unwrap();
            if let Some(c) = content_type {
                r.headers_mut()
                    .insert(hyper::header::CONTENT_TYPE, c.parse().unwrap());
            }
            r
        };
        let answer = |code: u16, retry_after: Option<&str>| {
            let mut r = hyper::Response::new(());
            *r.status_mut() = hyper::StatusCode::from_u16(code).unwrap();
            if let Some(s) = retry_after {
                r.headers_mut()
                    .insert(hyper::header::RETRY_AFTER, s.parse().unwrap());
            }
            Ok::<_, String>(r)
        };
        let get = || req(Method::GET, "/api/v1/namespaces/n/secrets/s", None);
        let apply = || {
            req(
                Method::PATCH,
                "/apis/apps/v1/namespaces/n/deployments/d?fieldManager=x",
                Some("application/apply-patch+yaml"),
            )
        };
        let mut policy = RetryIdempotent::default();
        for mut r in [get(), apply()] {
            assert!(
                Policy::<_, hyper::Response<()>, String>::clone_request(&mut policy, &r).is_some()
            );
            let mut fresh = RetryIdempotent::default();
            assert!(fresh.retry(&mut r, &mut answer(503, None)).is_some());
            assert!(fresh
                .retry(
                    &mut r,
                    &mut Err::<hyper::Response<()>, String>("timed out".into())
                )
                .is_some());
            assert!(fresh.retry(&mut r, &mut answer(429, Some("1"))).is_some());
            assert!(
                fresh.retry(&mut r, &mut answer(500, None)).is_none(),
                "at most {RETRY_ATTEMPTS} times"
            );
            let mut fresh = RetryIdempotent::default();
            assert!(fresh.retry(&mut r, &mut answer(404, None)).is_none());
            assert!(fresh.retry(&mut r, &mut answer(409, None)).is_none());
        }
        for mut r in [
            req(Method::POST, "/api/v1/namespaces/n/secrets", None),
            req(Method::PUT, "/api/v1/namespaces/n/secrets/s", None),
            req(Method::DELETE, "/api/v1/namespaces/n/secrets/s", None),
            req(
                Method::PATCH,
                "/api/v1/namespaces/n/secrets/s",
                Some("application/merge-patch+json"),
            ),
            req(Method::GET, "/api/v1/secrets?watch=true", None),
        ] {
            let mut fresh = RetryIdempotent::default();
            assert!(
                Policy::<_, hyper::Response<()>, String>::clone_request(&mut fresh, &r).is_none(),
                "{} {}",
                r.method(),
                r.uri()
            );
            assert!(fresh.retry(&mut r, &mut answer(503, None)).is_none());
        }
    }
}
