//! The kube-runtime controllers: small reconcile functions that observe,
//! plan, act through the action and apply layers, and report (status,
//! Events, metrics). One controller for the capabilities (one `Capability`
//! object per catalog entry), one per kind of resource.

pub mod capability;
pub mod controllers;
pub mod drift;
pub mod emit;
pub mod error;
pub mod metrics;
pub mod pull_secrets;
pub mod release;
pub mod resource;
pub mod workload;

use crate::operator::api;
use crate::operator::model::catalog::{Catalog, ChartStore};
use crate::operator::reconcile::metrics::Metrics;
pub use controllers::{ensure_installed, run_controllers};
pub use error::Error;
use k8s_openapi::api::core::v1::ObjectReference;
use kube::api::DynamicObject;
use kube::runtime::controller::Action;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub const CONTROLLER_NAME: &str = "navique-ai-core-operator";
pub const LEASE_NAME: &str = "navique-ai-core-operator";
/// How often a settled object is looked at again unless told otherwise.
pub const DEFAULT_RESYNC: Duration = Duration::from_secs(3600);

/// What every reconcile shares.
pub struct Operator {
    pub client: kube::Client,
    pub cluster: crate::apply::client::Cluster,
    pub catalog: Catalog,
    pub charts: ChartStore,
    /// The operator's own namespace (lease, license).
    pub namespace: String,
    pub recorder: Recorder,
    pub metrics: Arc<Metrics>,
    /// How soon to look again while something is on its way.
    pub poll: Duration,
    /// How often a settled object is looked at again.
    pub resync: Duration,
    failures: Mutex<HashMap<String, u32>>,
    /// Set when the controllers stop: waits inside release actions give up.
    pub stopping: Arc<std::sync::atomic::AtomicBool>,
    /// Releases with an action in flight: never two at once on one release.
    pub busy: Arc<Mutex<std::collections::HashSet<String>>>,
    /// The capability plans resource reconciles read, shared for a moment:
    /// a burst of resources costs one snapshot, not one each.
    plans: tokio::sync::Mutex<Option<(std::time::Instant, Arc<Planned>)>>,
    /// Where the license is and the key it must be signed with.
    pub licensing: crate::operator::model::licensing::Licensing,
    /// `--registry-mirror`: images of everything applied, through the mirror by digest.
    pub images: Arc<crate::oci::images::ImageMap>,
    /// `--image-pull-secret`: copied where we run things, set on what runs.
    pub pull_secrets: pull_secrets::PullSecrets,
    /// Whether the expiry of the license was reported (once per expiry).
    expiry_reported: std::sync::atomic::AtomicBool,
    /// Set when the license changes: the shared decisions are stale.
    pub plans_stale: std::sync::atomic::AtomicBool,
    /// The watched view of the cluster while the controllers run.
    caches: std::sync::RwLock<Option<Arc<crate::operator::model::watch::Caches>>>,
    /// The watches of what we own while the controllers run.
    pub owned: std::sync::RwLock<Option<Arc<crate::operator::model::owned::OwnedWatches>>>,
}

/// One snapshot's decisions, shared by the resource reconciles.
pub struct Planned {
    pub capabilities: Vec<crate::operator::decide::plan::CapabilityPlan>,
    pub tier: crate::operator::model::licensing::Tier,
    /// By uid; the resources of the snapshot.
    pub verdicts: std::collections::BTreeMap<String, crate::operator::decide::verdict::Verdict>,
    /// The generation of each resource the verdicts judged, by uid: a spec
    /// changed since (an altinity type, say) needs a verdict of its own.
    pub generations: std::collections::BTreeMap<String, i64>,
}

impl Planned {
    /// A resource's standing under the license (a resource the snapshot
    /// did not judge is let through: it is judged on its next look).
    pub fn verdict(&self, uid: &str) -> crate::operator::decide::verdict::Verdict {
        self.verdicts
            .get(uid)
            .cloned()
            .unwrap_or(crate::operator::decide::verdict::Verdict::Licensed)
    }
}

/// How long resource reconciles share one snapshot of the capabilities.
const PLANS_TTL: Duration = Duration::from_millis(500);

impl Operator {
    pub fn new(
        client: kube::Client,
        catalog: Catalog,
        charts: ChartStore,
        namespace: &str,
        metrics: Arc<Metrics>,
    ) -> Operator {
        let reporter = Reporter {
            controller: CONTROLLER_NAME.into(),
            instance: std::env::var("POD_NAME").ok(),
        };
        Operator {
            cluster: crate::apply::client::Cluster::new(client.clone()),
            recorder: Recorder::new(client.clone(), reporter),
            client,
            catalog,
            charts,
            namespace: namespace.into(),
            metrics,
            poll: Duration::from_secs(2),
            resync: DEFAULT_RESYNC,
            failures: Mutex::new(HashMap::new()),
            stopping: Arc::new(std::sync::atomic::AtomicBool::new(false)),
            busy: Arc::new(Mutex::new(std::collections::HashSet::new())),
            plans: tokio::sync::Mutex::new(None),
            licensing: crate::operator::model::licensing::Licensing::built_in(namespace),
            images: Default::default(),
            pull_secrets: Default::default(),
            expiry_reported: std::sync::atomic::AtomicBool::new(false),
            plans_stale: std::sync::atomic::AtomicBool::new(false),
            caches: std::sync::RwLock::new(None),
            owned: std::sync::RwLock::new(None),
        }
    }

    /// Watches objects of this kind that we own from now on (once per kind).
    pub async fn watch_owned(
        &self,
        api_version: &str,
        kind: &str,
        owner: crate::operator::model::owned::Owner,
    ) {
        let Some(watches) = self.owned.read().expect("lock").clone() else {
            return;
        };
        if let Ok((ar, _)) = self.cluster.resource(api_version, kind).await {
            watches.ensure(&ar, owner);
        }
    }

    /// `r` waits for a status of an object of its own (an emitted object,
    /// a workload of its release): that object's next change wakes it.
    pub fn wait_for_own(&self, r: &crate::operator::model::snapshot::Resource) {
        if let Some(watches) = self.owned.read().expect("lock").clone() {
            watches.wait_for_own(r.kind.as_str(), &r.namespace, &r.name);
        }
    }

    /// `r` waits for resources it references: the next change of one of
    /// our resources in its namespace wakes it.
    pub fn wait_for_references(&self, r: &crate::operator::model::snapshot::Resource) {
        if let Some(watches) = self.owned.read().expect("lock").clone() {
            watches.wait_for_references(r.kind.as_str(), &r.namespace, &r.name);
        }
    }

    /// Records a release revision this process applied (see
    /// `OwnedWatches::made_here`).
    pub fn made_release(&self, namespace: &str, name: &str, revision: i64) {
        if let Some(watches) = self.owned.read().expect("lock").clone() {
            watches.made_here(&format!("{namespace}/{name}"), revision);
        }
    }

    /// Reads the cluster afresh, reporting a license that expired: what a
    /// decision that acts must see.
    pub async fn snapshot(&self) -> Result<crate::operator::model::snapshot::Snapshot, Error> {
        let mut snap =
            crate::operator::model::gather::gather(&self.client, &self.catalog, &self.licensing)
                .await?;
        snap.pull_secrets = self.pull_secrets.names.clone();
        self.report_expiry(&snap).await;
        Ok(snap)
    }

    /// The cluster as the watches last saw it, without the emitted custom
    /// resources (a fresh read before the watches have listed once).
    pub async fn observed(&self) -> Result<crate::operator::model::snapshot::Snapshot, Error> {
        let caches = self.caches.read().expect("lock").clone();
        match caches.filter(|c| c.synced()) {
            Some(c) => {
                let mut snap = c.snapshot(&self.catalog, &self.licensing);
                snap.pull_secrets = self.pull_secrets.names.clone();
                self.report_expiry(&snap).await;
                Ok(snap)
            }
            None => self.snapshot().await,
        }
    }

    async fn report_expiry(&self, snap: &crate::operator::model::snapshot::Snapshot) {
        let expired = matches!(
            snap.tier,
            Some(crate::operator::model::licensing::Tier::Free { expired: true, .. })
        );
        let was = self
            .expiry_reported
            .swap(expired, std::sync::atomic::Ordering::Relaxed);
        if expired && !was {
            let on = ObjectReference {
                api_version: Some("v1".into()),
                kind: Some("Secret".into()),
                namespace: Some(self.licensing.namespace.clone()),
                name: Some(crate::operator::model::licensing::SECRET_NAME.into()),
                ..Default::default()
            };
            let why = snap.tier.as_ref().map(|t| t.describe()).unwrap_or_default();
            self.event(
                &on,
                EventType::Warning,
                "LicenseExpired",
                format!("{why}; resources beyond it stop being updated, nothing is deleted"),
            )
            .await;
        }
    }

    /// The decisions as of at most `PLANS_TTL` ago, and from a snapshot
    /// that saw the resource `uid` at this generation (a resource newer
    /// than the snapshot, or changed since, needs its own verdict).
    pub async fn planned(&self, uid: &str, generation: i64) -> Result<Arc<Planned>, Error> {
        let mut cached = self.plans.lock().await;
        let stale = self
            .plans_stale
            .swap(false, std::sync::atomic::Ordering::Relaxed);
        if let Some((at, planned)) = cached.as_ref().filter(|_| !stale) {
            if at.elapsed() < PLANS_TTL && planned.generations.get(uid) == Some(&generation) {
                return Ok(planned.clone());
            }
        }
        let mut snap = self.observed().await?;
        if !snap
            .resources
            .iter()
            .any(|r| r.uid == uid && r.generation == generation)
        {
            // The watches have not shown it this resource yet.
            snap = self.snapshot().await?;
        }
        let planned = Arc::new(Planned {
            capabilities: crate::operator::decide::plan::capabilities(&self.catalog, &snap),
            tier: snap.tier.clone().expect("gathered"),
            generations: snap
                .resources
                .iter()
                .map(|r| (r.uid.clone(), r.generation))
                .collect(),
            verdicts: crate::operator::decide::verdict::judge(
                snap.tier.as_ref().expect("gathered"),
                &snap.resources,
            ),
        });
        *cached = Some((std::time::Instant::now(), planned.clone()));
        Ok(planned)
    }

    /// Publishes an Event; a failure to record one never fails a reconcile.
    pub async fn event(&self, on: &ObjectReference, type_: EventType, reason: &str, note: String) {
        self.event_related(on, type_, reason, note, None).await
    }

    /// Publishes what a decision says should be announced.
    pub async fn note(&self, on: &ObjectReference, note: crate::operator::decide::standing::Note) {
        let type_ = if note.warning {
            EventType::Warning
        } else {
            EventType::Normal
        };
        self.event(on, type_, note.reason, note.message).await
    }

    /// An Event that names a second object (`related`). kube's Recorder
    /// folds Events of one reason on one object into a series that keeps
    /// the first note, so one per deleted object needs the object named.
    pub async fn event_related(
        &self,
        on: &ObjectReference,
        type_: EventType,
        reason: &str,
        note: String,
        related: Option<ObjectReference>,
    ) {
        let ev = Event {
            type_,
            reason: reason.into(),
            note: Some(truncate(&note, 1000)),
            action: reason.into(),
            secondary: related,
        };
        if let Err(e) = self.recorder.publish(&ev, on).await {
            tracing::warn!(reason, error = %e, "could not record an Event");
        }
    }

    /// When a settled object is looked at again: `resync`, spread by up to
    /// a tenth per object so a thousand settled at once do not come back at once.
    pub fn settled_after(&self, key: &str) -> Duration {
        let spread = key
            .bytes()
            .fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64))
            % 1000;
        self.resync + self.resync.mul_f64(spread as f64 / 10_000.0)
    }

    /// Exponential backoff per object, reset by a success.
    fn backoff(&self, key: &str) -> Duration {
        let mut f = self.failures.lock().expect("lock");
        let n = f.entry(key.to_string()).or_insert(0);
        *n = (*n + 1).min(8);
        Duration::from_millis(500u64 << *n).min(Duration::from_secs(120))
    }

    fn succeeded(&self, key: &str) {
        self.failures.lock().expect("lock").remove(key);
    }
}

/// Runs one reconcile of `kind` into the metrics; a success resets the
/// object's backoff.
pub async fn measured(
    op: &Operator,
    kind: api::Kind,
    key: &str,
    reconcile: impl std::future::Future<Output = Result<Action, Error>>,
) -> Result<Action, Error> {
    let start = std::time::Instant::now();
    crate::memory::active();
    let result = reconcile.await;
    crate::memory::active();
    // A deletion waiting for what it deleted is not a failure.
    let ok = result.as_ref().map_or_else(Error::is_waiting, |_| true);
    op.metrics
        .reconciled(kind.as_str(), ok, start.elapsed().as_secs_f64());
    if ok {
        op.succeeded(key);
    }
    result
}

/// After a failed reconcile: look again after the object's next backoff;
/// a deletion still waiting for what it deleted looks again soon.
pub fn retry(op: &Operator, kind: api::Kind, key: &str, err: &Error) -> Action {
    if err.is_paused() {
        return Action::await_change();
    }
    if err.is_waiting() {
        return Action::requeue(op.poll);
    }
    op.metrics
        .reconcile_failed(kind.as_str(), err.metric_label());
    let wait = op.backoff(key);
    tracing::warn!(kind = kind.as_str(), object = %key, error = %err, retry_in = ?wait, "reconcile failed");
    Action::requeue(wait)
}

/// Runs a resource's reconcile through kube-runtime's finalizer helper: our
/// finalizer is on before anything is created for it, and comes off only
/// once its cleanup has succeeded.
pub async fn finalized<F, Fut>(
    op: &Operator,
    kind: api::Kind,
    obj: Arc<DynamicObject>,
    reconcile: F,
) -> Result<Action, Error>
where
    F: FnOnce(kube::runtime::finalizer::Event<DynamicObject>) -> Fut,
    Fut: std::future::Future<Output = Result<Action, Error>>,
{
    use kube::ResourceExt;
    let api = resource::api(op, kind, &obj.namespace().unwrap_or_default());
    kube::runtime::finalizer(&api, api::FINALIZER, obj, reconcile)
        .await
        .map_err(|e| Error::Finalizer(Box::new(e)))
}

fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &s[..end])
}

pub fn reference(obj: &DynamicObject, kind: api::Kind) -> ObjectReference {
    ObjectReference {
        api_version: Some(api::API_VERSION.into()),
        kind: Some(kind.to_string()),
        name: obj.metadata.name.clone(),
        namespace: obj.metadata.namespace.clone(),
        uid: obj.metadata.uid.clone(),
        resource_version: None,
        field_path: None,
    }
}
