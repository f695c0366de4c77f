//! Release actions, one per file, each an explicit sequence of steps over
//! the chart, release and apply layers: install, upgrade, rollback,
//! uninstall. What `navique-operator install|upgrade|...` and the operator run.

pub mod hooks;
pub mod install;
pub mod render;
pub mod rollback;
pub mod uninstall;
pub mod upgrade;

use crate::apply::client::Cluster;
use crate::apply::objects::ObjectsError;
use crate::apply::ApplyError;
use crate::chart::manifest::ManifestError;
use crate::chart::render::RenderError;
use crate::chart::DependencyError;
use crate::release::storage::{Storage, StorageError};
use crate::release::{Release, Status};
use std::collections::BTreeMap;
use std::time::Duration;

#[derive(Debug)]
pub enum ActionError {
    Storage(StorageError),
    Apply(ApplyError),
    /// A refused request, in Helm's words.
    Invalid(String),
    /// Chart.yaml names dependencies that charts/ lacks.
    Dependencies(DependencyError),
    /// The chart did not render (values, schema, templates).
    Render(RenderError),
    /// A rendered document's head could not be read.
    Manifest(ManifestError),
    /// A manifest (rendered or stored) does not read as objects.
    Objects(ObjectsError),
    /// A hook's objects could not be created (Helm: "warning: Hook ... failed").
    HookCreate {
        event: String,
        path: String,
        source: Box<ApplyError>,
    },
    /// The hooks of an event failed, worded as Helm's action for that event
    /// words it; rollback and uninstall pass the hook's error on unwrapped.
    Hooks {
        event: String,
        source: Box<ActionError>,
    },
}

impl ActionError {
    /// The hooks of `event` failed with `source`.
    pub fn hooks(event: &str, source: ActionError) -> ActionError {
        ActionError::Hooks {
            event: event.to_string(),
            source: Box::new(source),
        }
    }
}

impl std::fmt::Display for ActionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ActionError::Storage(e) => write!(f, "{e}"),
            ActionError::Apply(e) => write!(f, "{e}"),
            ActionError::Invalid(m) => write!(f, "{m}"),
            ActionError::Dependencies(e) => write!(f, "{e}"),
            ActionError::Render(e) => write!(f, "{e}"),
            ActionError::Manifest(e) => write!(f, "{e}"),
            ActionError::Objects(e) => write!(f, "{e}"),
            ActionError::HookCreate {
                event,
                path,
                source,
            } => {
                write!(f, "warning: Hook {event} {path} failed: {source}")
            }
            ActionError::Hooks { event, source } => match event.as_str() {
                "pre-install" | "post-install" => write!(f, "failed {event}: {source}"),
                "pre-upgrade" | "post-upgrade" => write!(f, "{event} hooks failed: {source}"),
                _ => write!(f, "{source}"),
            },
        }
    }
}

impl std::error::Error for ActionError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ActionError::Storage(e) => Some(e),
            ActionError::Apply(e) => Some(e),
            ActionError::Invalid(_) => None,
            ActionError::Dependencies(e) => Some(e),
            ActionError::Render(e) => Some(e),
            ActionError::Manifest(e) => Some(e),
            ActionError::Objects(e) => Some(e),
            ActionError::HookCreate { source, .. } => Some(source.as_ref()),
            ActionError::Hooks { source, .. } => Some(source.as_ref()),
        }
    }
}

impl From<StorageError> for ActionError {
    fn from(e: StorageError) -> Self {
        ActionError::Storage(e)
    }
}

impl From<RenderError> for ActionError {
    fn from(e: RenderError) -> Self {
        ActionError::Render(e)
    }
}

impl From<ManifestError> for ActionError {
    fn from(e: ManifestError) -> Self {
        ActionError::Manifest(e)
    }
}

impl From<ObjectsError> for ActionError {
    fn from(e: ObjectsError) -> Self {
        ActionError::Objects(e)
    }
}

impl From<ApplyError> for ActionError {
    fn from(e: ApplyError) -> Self {
        ActionError::Apply(e)
    }
}

/// What every action needs: where, as whom, and how patiently.
pub struct Context {
    pub cluster: Cluster,
    pub storage: Storage,
    pub namespace: String,
    pub field_manager: String,
    pub force_conflicts: bool,
    pub wait: bool,
    /// With `wait`: also wait for the manifest's Jobs to complete.
    pub wait_for_jobs: bool,
    pub timeout: Duration,
    /// Labels stored on the release (Helm's `--labels`).
    pub labels: BTreeMap<String, String>,
    pub max_history: usize,
    pub atomic: bool,
    pub no_hooks: bool,
    /// Apply the chart's `crds/` on upgrade too (server-side, never
    /// deleting), where Helm only ever creates them.
    pub upgrade_crds: bool,
    /// See [`crate::apply::ApplyOptions::take_over_crds_from`].
    pub take_over_crds_from: Vec<(String, String)>,
    /// Labels put on every object of the release (not on the release record).
    pub object_labels: BTreeMap<String, String>,
    /// Annotations every object of the release carries (ours: the owner).
    pub object_annotations: BTreeMap<String, String>,
    /// The image rewrite of `--registry-mirror` (inactive without one).
    pub images: std::sync::Arc<crate::oci::images::ImageMap>,
    /// `--image-pull-secret`: names added to every pod template applied.
    pub image_pull_secrets: Vec<String>,
}

pub const DEFAULT_FIELD_MANAGER: &str = "navique-operator";

impl Context {
    pub fn new(client: kube::Client, namespace: &str) -> Context {
        Context {
            cluster: Cluster::new(client.clone()),
            storage: Storage::new(client, namespace),
            namespace: namespace.to_string(),
            field_manager: DEFAULT_FIELD_MANAGER.to_string(),
            force_conflicts: false,
            wait: false,
            wait_for_jobs: false,
            timeout: Duration::from_secs(300),
            labels: BTreeMap::new(),
            max_history: 0,
            atomic: false,
            no_hooks: false,
            upgrade_crds: false,
            take_over_crds_from: Vec::new(),
            object_labels: BTreeMap::new(),
            object_annotations: BTreeMap::new(),
            images: Default::default(),
            image_pull_secrets: Vec::new(),
        }
    }

    pub fn apply_options(&self, release: &str) -> crate::apply::ApplyOptions {
        crate::apply::ApplyOptions {
            field_manager: self.field_manager.clone(),
            force_conflicts: self.force_conflicts,
            release_name: release.to_string(),
            release_namespace: self.namespace.clone(),
            take_over_crds_from: self.take_over_crds_from.clone(),
            extra_labels: self.object_labels.clone(),
            extra_annotations: self.object_annotations.clone(),
            images: self.images.clone(),
            image_pull_secrets: self.image_pull_secrets.clone(),
        }
    }
}

/// What `--wait` waits for: everything but Jobs, unless `--wait-for-jobs`.
pub fn to_wait_for(
    ctx: &Context,
    objects: &[crate::apply::objects::Object],
) -> Vec<crate::apply::objects::Object> {
    objects
        .iter()
        .filter(|o| ctx.wait_for_jobs || o.kind != "Job")
        .cloned()
        .collect()
}

/// Creates the namespace when it does not exist (Helm's `--create-namespace`).
pub async fn ensure_namespace(client: &kube::Client, name: &str) -> Result<(), kube::Error> {
    use k8s_openapi::api::core::v1::Namespace;
    let api: kube::Api<Namespace> = kube::Api::all(client.clone());
    if api.get_opt(name).await?.is_some() {
        return Ok(());
    }
    let mut ns = Namespace::default();
    ns.metadata.name = Some(name.to_string());
    match api.create(&Default::default(), &ns).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 409 => Ok(()),
        Err(e) => Err(e),
    }
}

/// Runs the hooks of `event`, their failure worded as Helm's action words it.
pub async fn run_hooks(
    ctx: &Context,
    rel: &mut Release,
    event: &str,
    timeout: Duration,
) -> Result<(), ActionError> {
    hooks::run(ctx, rel, event, timeout)
        .await
        .map_err(|e| ActionError::hooks(event, e))
}

pub fn now_text() -> String {
    crate::release::gojson::time_text(&chrono::Utc::now())
}

/// Helm's release name rule, checked as install does it (availableName).
pub fn validate_name(name: &str) -> Result<(), ActionError> {
    crate::chart::validate_release_name(name).map_err(|e| {
        ActionError::Invalid(format!(
            "release name check failed: release name {}: {e}",
            crate::gotmpl::format::quote_go(name)
        ))
    })
}

/// Marks a release failed after an error, keeping the error as description.
pub async fn record_failure(ctx: &Context, rel: &mut Release, err: &ActionError) {
    rel.info.status = Status::Failed;
    rel.info.description = format!("Release {:?} failed: {err}", rel.name);
    rel.info.last_deployed = now_text();
    let _ = ctx.storage.update(rel).await;
}
