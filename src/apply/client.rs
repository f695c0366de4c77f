//! A kube client plus the discovery needed to address arbitrary kinds.

use super::objects::Object;
use super::ApplyError;
use kube::api::{Api, DynamicObject};
use kube::discovery::{ApiCapabilities, ApiResource, Scope};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

pub struct Cluster {
    pub client: kube::Client,
    /// Set when the process is stopping: waits end early with an error, so
    /// the action records its release as failed instead of leaving it pending.
    pub stop: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// (apiVersion, kind) -> resource and scope, filled lazily.
    cache: Mutex<HashMap<(String, String), (ApiResource, bool)>>,
}

/// Client from an explicit kubeconfig (or KUBECONFIG / ~/.kube/config) and context.
pub async fn connect(
    kubeconfig: Option<&Path>,
    context: Option<&str>,
) -> Result<kube::Client, String> {
    connect_as(kubeconfig, context, None).await
}

/// The same, sending `User-Agent: agent` (the operator names itself, so an
/// API server's audit log, or the sandbox's fault rules, can tell it apart).
pub async fn connect_as(
    kubeconfig: Option<&Path>,
    context: Option<&str>,
    agent: Option<&str>,
) -> Result<kube::Client, String> {
    let config = config_for(kubeconfig, context, agent).await?;
    kube::Client::try_from(config).map_err(|e| e.to_string())
}

/// Sees every request a client sends, before it is sent (the operator
/// counts its API requests with one).
pub type RequestObserver = std::sync::Arc<dyn Fn(&hyper::Method, &hyper::Uri) + Send + Sync>;

/// A client of `config` that shows each request to `observe` first.
pub fn observed_client(
    config: kube::Config,
    observe: RequestObserver,
) -> Result<kube::Client, String> {
    let layer =
        tower::util::MapRequestLayer::new(move |req: hyper::Request<kube::client::Body>| {
            observe(req.method(), req.uri());
            req
        });
    Ok(kube::client::ClientBuilder::try_from(config)
        .map_err(|e| e.to_string())?
        .with_layer(&layer)
        .build())
}

/// The configuration `connect_as` connects with.
pub async fn config_for(
    kubeconfig: Option<&Path>,
    context: Option<&str>,
    agent: Option<&str>,
) -> Result<kube::Config, String> {
    let options = kube::config::KubeConfigOptions {
        context: context.map(str::to_string),
        ..Default::default()
    };
    let config = match kubeconfig {
        Some(p) => {
            let kc = kube::config::Kubeconfig::read_from(p)
                .map_err(|e| format!("kubeconfig {}: {e}", p.display()))?;
            kube::Config::from_custom_kubeconfig(kc, &options)
                .await
                .map_err(|e| e.to_string())?
        }
        None => kube::Config::from_kubeconfig(&options)
            .await
            .map_err(|e| e.to_string())?,
    };
    let mut config = config;
    if let Some(agent) = agent {
        let value = hyper::header::HeaderValue::from_str(agent)
            .map_err(|e| format!("user agent {agent:?}: {e}"))?;
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
    use super::verb_and_resource;
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
}
