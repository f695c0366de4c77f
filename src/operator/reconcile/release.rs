//! Our releases of capability operators, through the action layer: install
//! (taking over CRDs whose release is gone), upgrade (CRDs included),
//! recovery of a revision an interrupted run left pending, uninstall.
//!
//! The template engine's values are single-threaded (`Rc`), so each action
//! runs on a worker thread of its own with a current-thread runtime, and
//! the reconcile awaits its result.

use super::{Error, Operator};
use crate::action::{self, Context};
use crate::operator::api;
use crate::operator::decide::configure::Settings;
use crate::operator::decide::plan::inputs_digest;
use crate::operator::model::catalog::{CapabilityEntry, ChartStore};
use crate::operator::model::snapshot::{
    Snapshot, CHART_VERSION_ANNOTATION, CONFIGURED_ANNOTATION, INPUTS_ANNOTATION,
};
use std::collections::BTreeMap;
use std::time::Duration;

/// Releases whose CRDs we may take over: they own CRDs and no longer exist.
async fn orphan_owners(
    client: &kube::Client,
    snap: &Snapshot,
) -> Result<Vec<(String, String)>, Error> {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    type CrdMeta = crate::operator::model::light::Meta<CustomResourceDefinition>;
    let crds: kube::Api<CrdMeta> = kube::Api::all(client.clone());
    let mut owners = Vec::new();
    for c in crds.list(&Default::default()).await?.items {
        let a = c.metadata.annotations.unwrap_or_default();
        if let (Some(n), Some(ns)) = (
            a.get(crate::apply::RELEASE_NAME_ANNOTATION),
            a.get(crate::apply::RELEASE_NAMESPACE_ANNOTATION),
        ) {
            let owner = (n.clone(), ns.clone());
            if crate::operator::decide::provenance::is_orphan(Some(&owner), snap)
                && !owners.contains(&owner)
            {
                owners.push(owner);
            }
        }
    }
    Ok(owners)
}

/// The context of our release of `entry`, made from `settings`' values.
pub fn context(op: &Operator, entry: &CapabilityEntry, settings: &Settings) -> Context {
    let mut ctx = Context::new(op.client.clone(), &entry.namespace);
    ctx.cluster.stop = Some(op.stopping.clone());
    ctx.images = op.images.clone();
    ctx.image_pull_secrets = op.pull_secrets.names.clone();
    ctx.force_conflicts = true;
    ctx.upgrade_crds = true;
    ctx.max_history = 10;
    ctx.timeout = Duration::from_secs(300);
    ctx.labels = BTreeMap::from([(
        api::MANAGED_BY_LABEL.to_string(),
        api::MANAGED_BY.to_string(),
    )]);
    ctx.object_labels = BTreeMap::from([(api::CAPABILITY_LABEL.to_string(), entry.name.clone())]);
    ctx.storage.annotations = BTreeMap::from([
        (api::PROVENANCE_ANNOTATION.to_string(), "owned".to_string()),
        (
            CHART_VERSION_ANNOTATION.to_string(),
            entry.pin.version.clone(),
        ),
        (
            INPUTS_ANNOTATION.to_string(),
            inputs_digest(entry, settings),
        ),
    ]);
    if let Some(values) = &settings.configured {
        ctx.storage
            .annotations
            .insert(CONFIGURED_ANNOTATION.to_string(), values.clone());
    }
    ctx
}

/// Marks a release busy for as long as it lives; it moves into the worker,
/// so a reconcile that is dropped does not free a release still being acted on.
struct Busy {
    set: std::sync::Arc<std::sync::Mutex<std::collections::HashSet<String>>>,
    release: String,
}

impl Busy {
    fn take(op: &Operator, release: &str) -> Result<Busy, Error> {
        if !op.busy.lock().expect("lock").insert(release.to_string()) {
            return Err(Error::ReleaseBusy(release.to_string()));
        }
        Ok(Busy {
            set: op.busy.clone(),
            release: release.into(),
        })
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.set.lock().expect("lock").remove(&self.release);
    }
}

/// Runs `job` on a thread of its own (see the module comment).
async fn on_worker<T: Send + 'static>(
    job: impl FnOnce(&tokio::runtime::Runtime) -> T + Send + 'static,
) -> Result<T, Error> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("release-action".into())
        .stack_size(64 * 1024 * 1024)
        .spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("tokio runtime");
            let result = job(&rt);
            drop(rt);
            crate::memory::on_thread_end();
            let _ = tx.send(result);
        })
        .map_err(Error::Worker)?;
    rx.await.map_err(|_| Error::WorkerStopped)
}

/// Install or upgrade our release to the pin, with the values `settings`
/// give. An upgrade first marks a pending revision left by an interrupted
/// run failed (the action does).
pub async fn install_or_upgrade(
    op: &Operator,
    entry: &CapabilityEntry,
    settings: &Settings,
    snap: &Snapshot,
) -> Result<String, Error> {
    let busy = Busy::take(op, &entry.release)?;
    let take_over = orphan_owners(&op.client, snap).await?;
    action::ensure_namespace(&op.client, &entry.namespace).await?;
    // The copies go in before the pods that pull with them; what cannot be
    // copied is the Capability's condition, not a reason not to install.
    let _copies = super::pull_secrets::ensure_held(op, &entry.namespace).await;
    let mut ctx = context(op, entry, settings);
    let values_json = settings.values.clone();
    let entry = entry.clone();
    let charts: ChartStore = op.charts.clone();
    let (namespace, name) = (entry.namespace.clone(), entry.release.clone());
    let (note, revision) = on_worker(move |rt| {
        let _busy = busy;
        let pinned = charts.load(&entry.pin).map_err(Error::Catalog)?;
        ctx.take_over_crds_from = take_over;
        let values = crate::release::record::values_from_json(&values_json);
        let rel = rt
            .block_on(action::upgrade::upgrade(
                &ctx,
                &entry.release,
                &pinned.chart,
                &values,
                true,
            ))
            .map_err(Error::from)?;
        let note = format!(
            "release {} revision {} in namespace {}: chart {}-{}",
            rel.name,
            rel.version,
            rel.namespace,
            rel.chart_name(),
            rel.chart_version()
        );
        Ok::<_, Error>((note, rel.version))
    })
    .await??;
    op.made_release(&namespace, &name, revision);
    Ok(note)
}

pub async fn uninstall(op: &Operator, entry: &CapabilityEntry) -> Result<String, Error> {
    let busy = Busy::take(op, &entry.release)?;
    let ctx = context(
        op,
        entry,
        &crate::operator::decide::configure::settings(entry, None, None),
    );
    let entry = entry.clone();
    on_worker(move |rt| {
        let _busy = busy;
        rt.block_on(action::uninstall::uninstall(&ctx, &entry.release, false))
            .map(|u| {
                format!(
                    "release {} in namespace {} (chart {})",
                    u.release.name,
                    u.release.namespace,
                    u.release.chart_version()
                )
            })
            .map_err(Error::from)
    })
    .await?
}

/// The chart version a capability runs, when known: ours from our release's
/// annotation, an adopted release's from its newest record.
pub async fn installed_version(
    client: &kube::Client,
    prov: &crate::operator::decide::provenance::Provenance,
) -> String {
    use crate::operator::decide::provenance::Provenance;
    match prov {
        Provenance::Owned(r) => r.chart_version.clone().unwrap_or_default(),
        Provenance::Adopted(_) => match prov.adopted_release() {
            Some((n, ns)) => crate::operator::model::gather::chart_version_of(client, &n, &ns)
                .await
                .unwrap_or_default(),
            None => String::new(),
        },
        Provenance::Absent => String::new(),
    }
}

/// A workload release of ours for a resource: where, from which pin, with
/// which values, and the digest of those inputs (stored on the release).
#[derive(Clone)]
pub struct WorkloadRelease {
    pub name: String,
    pub namespace: String,
    pub pin: crate::operator::model::catalog::Pin,
    pub values: serde_json::Value,
    /// `<Kind>/<namespace>/<name>` of the resource it is for.
    pub owner: String,
    /// `--image-pull-secret`: an input, as for capability releases.
    pub pull_secrets: Vec<String>,
}

impl WorkloadRelease {
    pub fn inputs_digest(&self) -> String {
        let values = crate::release::record::values_to_json(
            &crate::release::record::values_from_json(&self.values),
        );
        // The label is an input too: a release made before its objects
        // carried it is upgraded once, rather than "corrected" object by object.
        let text = format!(
            "{}\n{}\nlabelled {}",
            self.pin.sha256,
            values,
            api::WORKLOAD_LABEL
        );
        crate::operator::decide::plan::with_pull_secrets(text, &self.pull_secrets)
    }

    pub fn context(&self, op: &Operator) -> Context {
        let mut ctx = Context::new(op.client.clone(), &self.namespace);
        ctx.cluster.stop = Some(op.stopping.clone());
        ctx.images = op.images.clone();
        ctx.image_pull_secrets = op.pull_secrets.names.clone();
        ctx.force_conflicts = true;
        ctx.max_history = 10;
        ctx.timeout = Duration::from_secs(300);
        ctx.labels = BTreeMap::from([(
            api::MANAGED_BY_LABEL.to_string(),
            api::MANAGED_BY.to_string(),
        )]);
        ctx.object_annotations =
            BTreeMap::from([(api::OWNER_ANNOTATION.to_string(), self.owner.clone())]);
        ctx.object_labels = BTreeMap::from([(api::WORKLOAD_LABEL.to_string(), self.name.clone())]);
        ctx.storage.annotations = BTreeMap::from([
            (api::PROVENANCE_ANNOTATION.to_string(), "owned".to_string()),
            (
                CHART_VERSION_ANNOTATION.to_string(),
                self.pin.version.clone(),
            ),
            (INPUTS_ANNOTATION.to_string(), self.inputs_digest()),
        ]);
        ctx
    }
}

/// Installs or upgrades a workload release (an interrupted revision of ours
/// is marked failed first, by the upgrade action).
pub async fn apply_workload(
    op: &Operator,
    w: WorkloadRelease,
) -> Result<crate::release::Release, Error> {
    let busy = Busy::take(op, &format!("{}/{}", w.namespace, w.name))?;
    let _copies = super::pull_secrets::ensure_held(op, &w.namespace).await;
    let ctx = w.context(op);
    let charts: ChartStore = op.charts.clone();
    on_worker(move |rt| {
        let _busy = busy;
        let pinned = charts.load(&w.pin).map_err(Error::Catalog)?;
        let values = crate::release::record::values_from_json(&w.values);
        rt.block_on(action::upgrade::upgrade(
            &ctx,
            &w.name,
            &pinned.chart,
            &values,
            true,
        ))
        .map_err(Error::from)
    })
    .await?
}

pub async fn uninstall_workload(op: &Operator, namespace: &str, name: &str) -> Result<(), Error> {
    let busy = Busy::take(op, &format!("{namespace}/{name}"))?;
    let mut ctx = Context::new(op.client.clone(), namespace);
    ctx.cluster.stop = Some(op.stopping.clone());
    ctx.timeout = Duration::from_secs(300);
    let name = name.to_string();
    on_worker(move |rt| {
        let _busy = busy;
        rt.block_on(action::uninstall::uninstall(&ctx, &name, false))
            .map(|_| ())
            .map_err(Error::from)
    })
    .await?
}
