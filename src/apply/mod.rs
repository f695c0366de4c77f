//! Getting rendered manifests into a cluster: server-side apply under our
//! field manager with Helm's ownership metadata, install order, waiting for
//! readiness, pruning, deletion in uninstall order.

pub mod client;
pub mod objects;
pub mod pull_secrets;
pub mod readiness;

use client::Cluster;
use kube::api::{DeleteParams, DynamicObject, Patch, PatchParams, PropagationPolicy};
use objects::Object;
use serde_json::Value;
use std::time::{Duration, Instant};

pub const MANAGED_BY_LABEL: &str = "app.kubernetes.io/managed-by";
pub const RELEASE_NAME_ANNOTATION: &str = "meta.helm.sh/release-name";
pub const RELEASE_NAMESPACE_ANNOTATION: &str = "meta.helm.sh/release-namespace";
pub const RESOURCE_POLICY_ANNOTATION: &str = "helm.sh/resource-policy";

#[derive(Debug)]
pub enum ApplyError {
    Kube { object: String, error: kube::Error },
    Ownership(String),
    Unknown(String),
    Timeout(String),
    Failed(String),
}

impl std::fmt::Display for ApplyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ApplyError::Kube {
                object,
                error: kube::Error::Api(s),
            } => write!(f, "{object}: {}", s.message),
            ApplyError::Kube { object, error } => write!(f, "{object}: {error}"),
            ApplyError::Ownership(m)
            | ApplyError::Unknown(m)
            | ApplyError::Timeout(m)
            | ApplyError::Failed(m) => {
                write!(f, "{m}")
            }
        }
    }
}

impl std::error::Error for ApplyError {}

/// Who applies, and how.
#[derive(Clone, Debug)]
pub struct ApplyOptions {
    pub field_manager: String,
    pub force_conflicts: bool,
    pub release_name: String,
    pub release_namespace: String,
    /// Releases that no longer exist but still own CRDs this release
    /// brings: those CRDs are taken over instead of refused.
    pub take_over_crds_from: Vec<(String, String)>,
    /// Labels added to every applied object (the operator's capability label).
    pub extra_labels: std::collections::BTreeMap<String, String>,
    /// Annotations every applied object carries besides Helm's.
    pub extra_annotations: std::collections::BTreeMap<String, String>,
    /// `--registry-mirror`: every image of every object rewritten to the
    /// mirror, by digest, before it is applied (a post-render step).
    pub images: std::sync::Arc<crate::oci::images::ImageMap>,
    /// `--image-pull-secret`: added to every pod template applied (see
    /// [`pull_secrets::inject`]).
    pub image_pull_secrets: Vec<String>,
}

impl ApplyOptions {
    /// The object as it is applied: Helm's ownership metadata, our labels
    /// and annotations, images through the mirror. Also what drift is
    /// judged against.
    pub fn prepared(&self, o: &Object) -> Value {
        let mut body = o.body.clone();
        set_ownership(&mut body, &self.release_name, &self.release_namespace);
        for (k, v) in &self.extra_labels {
            body["metadata"]["labels"][k] = Value::String(v.clone());
        }
        for (k, v) in &self.extra_annotations {
            body["metadata"]["annotations"][k] = Value::String(v.clone());
        }
        self.images.rewrite(&mut body);
        pull_secrets::inject(&mut body, &self.image_pull_secrets);
        body
    }
}

/// Whether an API error is worth the same request again: the server was
/// busy or failing (429, 500, 503, 504), or an update raced another writer
/// ("the object has been modified"). Not a field-manager conflict of server-
/// side apply, nor anything the request itself got wrong.
pub fn is_transient(e: &kube::Error) -> bool {
    match e {
        kube::Error::Api(s) => {
            matches!(s.code, 429 | 500 | 503 | 504)
                || (s.code == 409 && s.message.contains("the object has been modified"))
        }
        kube::Error::HyperError(_) | kube::Error::Service(_) => true,
        _ => false,
    }
}

/// Runs `call` again while it fails transiently, a few times, backing off
/// (a second at least after a 429): one flaky answer must not fail a whole
/// release action of fifty objects.
pub async fn retry_transient<T, F, Fut>(mut call: F) -> Result<T, kube::Error>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, kube::Error>>,
{
    let mut delay = std::time::Duration::from_millis(100);
    let mut attempt = 0;
    loop {
        match call().await {
            Err(e) if attempt < 6 && is_transient(&e) => {
                attempt += 1;
                let wait = match &e {
                    kube::Error::Api(s) if s.code == 429 => {
                        delay.max(std::time::Duration::from_secs(1))
                    }
                    _ => delay,
                };
                tracing::debug!(error = %e, attempt, "transient API error; retrying");
                tokio::time::sleep(wait).await;
                delay = (delay * 2).min(std::time::Duration::from_secs(3));
            }
            other => return other,
        }
    }
}

/// Adds the labels and annotations Helm puts on every object of a release.
pub fn set_ownership(obj: &mut Value, release: &str, namespace: &str) {
    let meta = obj
        .as_object_mut()
        .expect("object")
        .entry("metadata")
        .or_insert_with(|| serde_json::json!({}));
    let labels = meta
        .as_object_mut()
        .expect("metadata")
        .entry("labels")
        .or_insert_with(|| serde_json::json!({}));
    if labels.is_null() {
        *labels = serde_json::json!({});
    }
    labels[MANAGED_BY_LABEL] = Value::String("Helm".into());
    let ann = meta
        .as_object_mut()
        .expect("metadata")
        .entry("annotations")
        .or_insert_with(|| serde_json::json!({}));
    if ann.is_null() {
        *ann = serde_json::json!({});
    }
    ann[RELEASE_NAME_ANNOTATION] = Value::String(release.into());
    ann[RELEASE_NAMESPACE_ANNOTATION] = Value::String(namespace.into());
}

/// Helm's checkOwnership: an existing object must carry this release's
/// ownership metadata to be taken over.
pub fn ownership_problems(existing: &Value, release: &str, namespace: &str) -> Vec<String> {
    let mut out = Vec::new();
    let label = |k: &str| {
        existing
            .pointer("/metadata/labels")
            .and_then(|l| l.get(k))
            .and_then(Value::as_str)
    };
    let ann = |k: &str| {
        existing
            .pointer("/metadata/annotations")
            .and_then(|a| a.get(k))
            .and_then(Value::as_str)
    };
    let mut check = |kind: &str, key: &str, actual: Option<&str>, want: &str| match actual {
        None => out.push(format!(
            "{kind} validation error: missing key {key:?}: must be set to {want:?}"
        )),
        Some(v) if v != want => out.push(format!(
            "{kind} validation error: key {key:?} must equal {want:?}: current value is {v:?}"
        )),
        _ => {}
    };
    check("label", MANAGED_BY_LABEL, label(MANAGED_BY_LABEL), "Helm");
    check(
        "annotation",
        RELEASE_NAME_ANNOTATION,
        ann(RELEASE_NAME_ANNOTATION),
        release,
    );
    check(
        "annotation",
        RELEASE_NAMESPACE_ANNOTATION,
        ann(RELEASE_NAMESPACE_ANNOTATION),
        namespace,
    );
    out
}

/// Whether an object's Helm owner is one of `gone` (releases that no longer exist).
fn orphan_of(existing: &Value, gone: &[(String, String)]) -> bool {
    let ann = |k: &str| {
        existing
            .pointer("/metadata/annotations")
            .and_then(|a| a.get(k))
            .and_then(Value::as_str)
    };
    match (
        ann(RELEASE_NAME_ANNOTATION),
        ann(RELEASE_NAMESPACE_ANNOTATION),
    ) {
        (Some(n), Some(ns)) => gone.iter().any(|(gn, gns)| gn == n && gns == ns),
        _ => false,
    }
}

impl Cluster {
    /// Refuses, before anything is written, objects that exist and belong
    /// to something else (Helm's "exists and cannot be imported").
    pub async fn check_ownership(
        &self,
        objects: &[Object],
        opts: &ApplyOptions,
        verb: &str,
    ) -> Result<(), ApplyError> {
        for o in objects {
            let api = self.api_for(o).await?;
            match api.get_opt(&o.name).await {
                Ok(Some(existing)) => {
                    let v = serde_json::to_value(&existing).unwrap_or(Value::Null);
                    if o.kind == "CustomResourceDefinition"
                        && orphan_of(&v, &opts.take_over_crds_from)
                    {
                        continue;
                    }
                    let problems =
                        ownership_problems(&v, &opts.release_name, &opts.release_namespace);
                    if !problems.is_empty() {
                        let where_ = if o.namespace.is_empty() {
                            String::new()
                        } else {
                            format!(" in namespace {:?}", o.namespace)
                        };
                        return Err(ApplyError::Ownership(format!(
                            "unable to continue with {verb}: {} {:?}{where_} exists and cannot be imported into the current release: invalid ownership metadata; {}",
                            o.kind,
                            o.name,
                            problems.join("; ")
                        )));
                    }
                }
                Ok(None) => {}
                Err(e) => {
                    return Err(ApplyError::Kube {
                        object: o.describe(),
                        error: e,
                    })
                }
            }
        }
        Ok(())
    }

    /// Server-side applies every object in order.
    pub async fn apply_all(
        &self,
        objects: &[Object],
        opts: &ApplyOptions,
    ) -> Result<(), ApplyError> {
        for o in objects {
            let body = opts.prepared(o);
            let api = self.api_for(o).await?;
            let mut pp = PatchParams::apply(&opts.field_manager);
            pp.force = opts.force_conflicts;
            let patch = Patch::Apply(&body);
            retry_transient(|| api.patch(&o.name, &pp, &patch))
                .await
                .map_err(|e| kube_error(o, e))?;
        }
        Ok(())
    }

    /// Deletes objects (already in uninstall order), skipping those marked
    /// `helm.sh/resource-policy: keep` and those already gone.
    pub async fn delete_all(&self, objects: &[Object]) -> Result<Vec<String>, ApplyError> {
        let (kept, deleted): (Vec<&Object>, Vec<&Object>) = objects
            .iter()
            .partition(|o| o.annotation(RESOURCE_POLICY_ANNOTATION) == Some("keep"));
        self.delete_each(deleted).await?;
        Ok(kept.into_iter().map(Object::describe).collect())
    }

    /// Deletes a hook's objects: Helm deletes hooks by their delete policy
    /// alone, whatever their resource policy says.
    pub async fn delete_hook_objects(&self, objects: &[Object]) -> Result<(), ApplyError> {
        self.delete_each(objects.iter()).await
    }

    async fn delete_each<'a>(
        &self,
        objects: impl IntoIterator<Item = &'a Object>,
    ) -> Result<(), ApplyError> {
        for o in objects {
            let api = match self.api_for(o).await {
                Ok(a) => a,
                Err(ApplyError::Unknown(_)) => continue,
                Err(e) => return Err(e),
            };
            let dp = DeleteParams {
                propagation_policy: Some(PropagationPolicy::Background),
                ..Default::default()
            };
            match retry_transient(|| api.delete(&o.name, &dp)).await {
                Ok(_) => {}
                Err(kube::Error::Api(s)) if s.code == 404 => {}
                Err(e) => return Err(kube_error(o, e)),
            }
        }
        Ok(())
    }

    /// Waits until every object is ready (see `readiness`), or the timeout.
    /// Between looks it watches the first object still waiting, as Helm's
    /// `--wait` watches, so a change is seen as it happens.
    pub async fn wait_ready(
        &self,
        objects: &[Object],
        timeout: Duration,
    ) -> Result<(), ApplyError> {
        let deadline = Instant::now() + timeout;
        loop {
            let mut waiting = Vec::new();
            let mut first_waiting = None;
            for o in objects {
                let api = self.api_for(o).await?;
                let current = api.get_opt(&o.name).await.map_err(|e| kube_error(o, e))?;
                let v = current.map(|c| serde_json::to_value(&c).unwrap_or(Value::Null));
                match readiness::check(&o.kind, v.as_ref()) {
                    readiness::Ready::Yes => {}
                    readiness::Ready::No(why) => {
                        first_waiting.get_or_insert(o);
                        waiting.push(format!("{}: {why}", o.describe()))
                    }
                    readiness::Ready::Failed(why) => {
                        return Err(ApplyError::Failed(format!("{}: {why}", o.describe())))
                    }
                }
            }
            if waiting.is_empty() {
                return Ok(());
            }
            if self.stopping() {
                return Err(ApplyError::Failed(format!(
                    "interrupted: the process is stopping; was waiting for: {}",
                    waiting.join("; ")
                )));
            }
            if Instant::now() >= deadline {
                return Err(ApplyError::Timeout(format!(
                    "context deadline exceeded after {}s waiting for: {}",
                    timeout.as_secs(),
                    waiting.join("; ")
                )));
            }
            if let Some(o) = first_waiting {
                let kind = o.kind.clone();
                let settled = move |current: Option<&DynamicObject>| {
                    let v = current.map(|c| serde_json::to_value(c).unwrap_or(Value::Null));
                    !matches!(readiness::check(&kind, v.as_ref()), readiness::Ready::No(_))
                };
                self.until(o, settled, deadline).await;
            }
        }
    }

    /// Waits until deleted objects are gone.
    pub async fn wait_deleted(
        &self,
        objects: &[Object],
        timeout: Duration,
    ) -> Result<(), ApplyError> {
        let deadline = Instant::now() + timeout;
        loop {
            let mut left = Vec::new();
            let mut first_left = None;
            for o in objects {
                if o.annotation(RESOURCE_POLICY_ANNOTATION) == Some("keep") {
                    continue;
                }
                let Ok(api) = self.api_for(o).await else {
                    continue;
                };
                if api
                    .get_opt(&o.name)
                    .await
                    .map_err(|e| kube_error(o, e))?
                    .is_some()
                {
                    first_left.get_or_insert(o);
                    left.push(o.describe());
                }
            }
            if !left.is_empty() && self.stopping() {
                return Err(ApplyError::Failed(format!(
                    "interrupted: the process is stopping; was waiting for the deletion of: {}",
                    left.join("; ")
                )));
            }
            if left.is_empty() {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(ApplyError::Timeout(format!(
                    "timed out waiting for deletion of: {}",
                    left.join(", ")
                )));
            }
            if let Some(o) = first_left {
                self.until(
                    o,
                    |current: Option<&DynamicObject>| current.is_none(),
                    deadline,
                )
                .await;
            }
        }
    }

    /// Watches `o` until `settled` holds for it, the deadline passes, the
    /// process stops, or the watch fails; the caller then looks again. The
    /// stop and the deadline are checked every `LOOK_AGAIN`, which is also
    /// the pause after a failed watch.
    async fn until(
        &self,
        o: &Object,
        settled: impl kube::runtime::wait::Condition<DynamicObject>,
        deadline: Instant,
    ) {
        const LOOK_AGAIN: Duration = Duration::from_millis(250);
        let Ok(api) = self.api_for(o).await else {
            return tokio::time::sleep(LOOK_AGAIN).await;
        };
        let watch = kube::runtime::wait::await_condition(api, &o.name, settled);
        let mut watch = std::pin::pin!(watch);
        loop {
            tokio::select! {
                result = &mut watch => {
                    if result.is_err() {
                        tokio::time::sleep(LOOK_AGAIN).await;
                    }
                    return;
                }
                _ = tokio::time::sleep(LOOK_AGAIN) => {
                    if self.stopping() || Instant::now() >= deadline {
                        return;
                    }
                }
            }
        }
    }
}

fn kube_error(o: &Object, e: kube::Error) -> ApplyError {
    ApplyError::Kube {
        object: o.describe(),
        error: e,
    }
}
