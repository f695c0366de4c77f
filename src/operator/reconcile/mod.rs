//! The kube-runtime controllers: small reconcile functions that observe,
//! plan, act through the action and apply layers, and report (status,
//! Events, metrics). One controller for the capabilities (one `Capability`
//! object per catalog entry), one per kind of resource.

pub mod capability;
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
pub use error::Error;
use futures::StreamExt;
use k8s_openapi::api::core::v1::ObjectReference;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::runtime::{watcher, Controller};
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
    let result = reconcile.await;
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

/// Applies the operator's CRDs and one `Capability` per catalog entry (the
/// objects `kubectl get capabilities` lists). Idempotent.
pub async fn ensure_installed(op: &Operator) -> Result<(), Error> {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    let crds: Api<CustomResourceDefinition> = Api::all(op.client.clone());
    let pp = PatchParams::apply(crate::action::DEFAULT_FIELD_MANAGER).force();
    for crd in crate::operator::api::crds::all() {
        let name = crd.metadata.name.clone().unwrap_or_default();
        let existing = crds.get_opt(&name).await?;
        let wanted = serde_json::to_value(&crd).unwrap_or_default();
        let current = existing
            .as_ref()
            .map(|e| serde_json::to_value(e).unwrap_or_default());
        if !current.is_some_and(|c| crate::operator::decide::conditions::is_subset(&wanted, &c)) {
            crds.patch(&name, &pp, &Patch::Apply(&crd)).await?;
        }
    }
    for crd in crate::operator::api::crds::all() {
        let name = crd.metadata.name.clone().unwrap_or_default();
        for _ in 0..100 {
            let established = crds
                .get_opt(&name)
                .await?
                .and_then(|c| c.status)
                .and_then(|s| s.conditions)
                .is_some_and(|cs| {
                    cs.iter()
                        .any(|c| c.type_ == "Established" && c.status == "True")
                });
            if established {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    let caps: Api<DynamicObject> = Api::all_with(
        op.client.clone(),
        &crate::operator::api::Kind::Capability.api_resource(),
    );
    for entry in &op.catalog.capability {
        if caps.get_opt(&entry.name).await?.is_some() {
            continue;
        }
        let body = serde_json::json!({
            "apiVersion": api::API_VERSION,
            "kind": "Capability",
            // No spec: it is the admin's, and an applied `spec: {}` would
            // be ours to remove later.
            "metadata": {"name": entry.name, "labels": {api::MANAGED_BY_LABEL: api::MANAGED_BY}},
        });
        caps.patch(&entry.name, &pp, &Patch::Apply(&body)).await?;
    }
    Ok(())
}

/// Runs every controller until `shutdown` resolves; reconciles in flight
/// then finish (a release is never left pending by a normal stop).
pub async fn run_controllers(
    op: Arc<Operator>,
    stop: tokio::sync::watch::Receiver<bool>,
) -> Result<(), Error> {
    op.stopping
        .store(false, std::sync::atomic::Ordering::Relaxed);
    let flag = op.stopping.clone();
    let mut seen = stop.clone();
    let start_stop = stop.clone();
    let stop_flag = tokio::spawn(async move {
        let _ = seen.wait_for(|s| *s).await;
        flag.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    let shutdown = move || {
        let mut stop = stop.clone();
        async move {
            let _ = stop.wait_for(|s| *s).await;
        }
    };
    // A flaky API server at start-up is waited out, not fatal: the CRDs
    // and Capabilities go in once it answers.
    let mut backoff = Duration::from_millis(200);
    loop {
        match ensure_installed(&op).await {
            Ok(()) => break,
            Err(e) => {
                tracing::warn!(error = %e, retry_in = ?backoff, "installing the CRDs and Capabilities failed; retrying");
                let mut stop = start_stop.clone();
                tokio::select! {
                    _ = tokio::time::sleep(backoff) => {}
                    _ = stop.wait_for(|s| *s) => {
                        stop_flag.abort();
                        return Ok(());
                    }
                }
                backoff = (backoff * 2).min(Duration::from_secs(5));
            }
        }
    }
    let client = op.client.clone();
    // A few reconciles at a time: each holds a snapshot while it works.
    let config = kube::runtime::controller::Config::default()
        .debounce(Duration::from_millis(100))
        .concurrency(4);

    let cap_ar = crate::operator::api::Kind::Capability.api_resource();
    let caps: Api<DynamicObject> = Api::all_with(client.clone(), &cap_ar);
    // The watched view every reconcile reads; its watches trigger the
    // reconciles once it holds the change.
    let (hub, _) = tokio::sync::broadcast::channel(1024);
    let (caches, feeds) =
        crate::operator::model::watch::Caches::start(&client, &op.licensing, &hub);
    *op.caches.write().expect("lock") = Some(caches.clone());
    for _ in 0..600 {
        if caches.synced() || *start_stop.borrow() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    if !caches.synced() {
        tracing::warn!(
            "the watches have not listed everything yet; reading the cluster until they have"
        );
    }
    use crate::operator::model::watch::{subscribe, Change};
    // Changes of what we own: the owner is looked at again at once.
    let mut owned_changes = HashMap::new();
    let mut owned_senders = HashMap::new();
    for kind in api::Kind::ALL
        .into_iter()
        .filter(|k| k.family() != api::Family::Capability)
    {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        owned_senders.insert(kind, tx);
        owned_changes.insert(kind, rx);
    }
    let owned = Arc::new(crate::operator::model::owned::OwnedWatches::new(
        client.clone(),
        crate::operator::model::owned::Triggers {
            resources: owned_senders,
            capabilities: hub.clone(),
        },
    ));
    *op.owned.write().expect("lock") = Some(owned.clone());
    let owned_changes = Mutex::new(owned_changes);
    let owned_trigger = |kind: api::Kind| {
        let rx = owned_changes
            .lock()
            .expect("lock")
            .remove(&kind)
            .expect("one per kind");
        futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|r| (r, rx)) })
    };
    let everything = subscribe(&hub, |_| true);
    // The license: a new, changed or deleted one takes effect at once.
    let license_changes = || {
        let op = op.clone();
        subscribe(&hub, |c| c == Change::License).inspect(move |_| {
            op.plans_stale
                .store(true, std::sync::atomic::Ordering::Relaxed)
        })
    };
    let capability_controller =
        Controller::new_with(caps.clone(), watcher::Config::default(), cap_ar.clone())
            .with_config(config.clone())
            .reconcile_all_on(everything)
            .graceful_shutdown_on(shutdown())
            .run(capability::reconcile, capability::error_policy, op.clone())
            .for_each(|_| async {});

    // One controller per kind realised as emitted objects; a change of any Capability (one
    // became Ready, say) looks at every resource again.
    // A Capability's status changed (one became Ready, say): the shared
    // decisions are stale at once, or the resources it wakes would read the
    // cached "not Ready" and wait for the next poll.
    let capability_changes = || {
        let op = op.clone();
        kube::runtime::watcher(caps.clone(), watcher::Config::default())
            .filter_map(|e| async move { matches!(e, Ok(watcher::Event::Apply(_))).then_some(()) })
            .inspect(move |_| {
                op.plans_stale
                    .store(true, std::sync::atomic::Ordering::Relaxed)
            })
    };
    let resources = api::Kind::of_family(api::Family::Emitting).map(|kind| {
        let ar = kind.api_resource();
        let all: Api<DynamicObject> = Api::all_with(client.clone(), &ar);
        Controller::new_with(all, watcher::Config::default(), ar)
            .with_config(config.clone())
            .reconcile_all_on(futures::stream::select(
                capability_changes(),
                futures::stream::select(license_changes(), op.pull_secrets.changes()),
            ))
            .reconcile_on(owned_trigger(kind))
            .graceful_shutdown_on(shutdown())
            .run(
                move |obj, op| resource::reconcile(kind, obj, op),
                move |obj, err, op| resource::error_policy(kind, obj, err, op),
                op.clone(),
            )
            .for_each(|_| async {})
    });
    let workloads = api::Kind::of_family(api::Family::Workload).map(|kind| {
        let ar = kind.api_resource();
        let all: Api<DynamicObject> = Api::all_with(client.clone(), &ar);
        Controller::new_with(all, watcher::Config::default(), ar)
            .with_config(config.clone())
            .reconcile_all_on(futures::stream::select(
                license_changes(),
                op.pull_secrets.changes(),
            ))
            .reconcile_on(owned_trigger(kind))
            .graceful_shutdown_on(shutdown())
            .run(
                move |obj, op| workload::reconcile(kind, obj, op),
                move |obj, err, op| workload::error_policy(kind, obj, err, op),
                op.clone(),
            )
            .for_each(|_| async {})
    });
    op.metrics
        .ready
        .store(true, std::sync::atomic::Ordering::Relaxed);
    tokio::join!(
        pull_secrets::run(op.clone(), &hub, shutdown()),
        capability_controller,
        futures::future::join_all(resources),
        futures::future::join_all(workloads)
    );
    *op.caches.write().expect("lock") = None;
    *op.owned.write().expect("lock") = None;
    drop(owned);
    for feed in feeds {
        feed.abort();
    }
    stop_flag.abort();
    Ok(())
}
