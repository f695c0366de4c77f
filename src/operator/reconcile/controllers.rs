//! The wiring: the CRDs and Capabilities first, then the watched view, then
//! one controller per kind, each told which changes wake it.

use super::{api, capability, pull_secrets, resource, workload, Error, Operator};
use crate::operator::model::owned::{OwnedWatches, Triggers};
use crate::operator::model::watch::{subscribe, Caches, Change};
use futures::stream::BoxStream;
use futures::StreamExt;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use kube::runtime::controller::{Action, Config};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::{watcher, Controller};
use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{broadcast, mpsc, watch as signal};

/// How long a reconcile request waits for more of its kind (trailing edge):
/// long enough to fold the watch events of one write burst (an install's
/// objects), short enough that a chain of hops (a Deployment Ready, its
/// Capability Ready, the resource that needs it) is not paced by it.
const DEBOUNCE: Duration = Duration::from_millis(15);

/// Runs every controller until `stop` turns true; reconciles in flight
/// then finish (a release is never left pending by a normal stop).
pub async fn run_controllers(op: Arc<Operator>, stop: signal::Receiver<bool>) -> Result<(), Error> {
    let stopping = raise_stopping_on(&op, stop.clone());
    if !install_until_answered(&op, &stop).await {
        stopping.abort();
        return Ok(());
    }
    let (hub, _) = broadcast::channel(1024);
    let (owned, triggers) = start_owned_watches(&op, &hub);
    let feeds = start_watched_view(&op, &hub, &owned, &stop).await;
    let wiring = Wiring {
        op: op.clone(),
        hub: hub.clone(),
        triggers: Mutex::new(triggers),
        stop,
        // A few reconciles at a time: each holds a snapshot while it works.
        config: Config::default().debounce(DEBOUNCE).concurrency(4),
    };
    let resources = api::Kind::of_family(api::Family::Emitting).map(|kind| {
        let woken_by = futures::stream::select(
            wiring.capability_changes(),
            futures::stream::select(wiring.license_changes(), op.pull_secrets.changes()),
        );
        wiring.controller(kind, woken_by, resource::reconcile, resource::error_policy)
    });
    let workloads = api::Kind::of_family(api::Family::Workload).map(|kind| {
        let woken_by = futures::stream::select(wiring.license_changes(), op.pull_secrets.changes());
        wiring.controller(kind, woken_by, workload::reconcile, workload::error_policy)
    });
    op.metrics.ready.store(true, Ordering::Relaxed);
    tokio::join!(
        pull_secrets::run(op.clone(), &hub, wiring.shutdown()),
        wiring.capability_controller(),
        futures::future::join_all(resources),
        futures::future::join_all(workloads)
    );
    *op.caches.write().expect("lock") = None;
    *op.owned.write().expect("lock") = None;
    drop(owned);
    for feed in feeds {
        feed.abort();
    }
    stopping.abort();
    Ok(())
}

/// Marks the operator stopping once `stop` turns true, so that waits inside
/// release actions give up.
fn raise_stopping_on(
    op: &Operator,
    mut stop: signal::Receiver<bool>,
) -> tokio::task::JoinHandle<()> {
    op.stopping.store(false, Ordering::Relaxed);
    let flag = op.stopping.clone();
    tokio::spawn(async move {
        let _ = stop.wait_for(|s| *s).await;
        flag.store(true, Ordering::Relaxed);
    })
}

/// Installs the CRDs and Capabilities, waiting out an API server that does
/// not answer yet (that is not fatal at start-up). False when told to stop
/// first.
async fn install_until_answered(op: &Operator, stop: &signal::Receiver<bool>) -> bool {
    let mut backoff = Duration::from_millis(200);
    loop {
        let Err(e) = ensure_installed(op).await else {
            return true;
        };
        tracing::warn!(error = %e, retry_in = ?backoff, "installing the CRDs and Capabilities failed; retrying");
        let mut stop = stop.clone();
        tokio::select! {
            _ = tokio::time::sleep(backoff) => {}
            _ = stop.wait_for(|s| *s) => return false,
        }
        backoff = (backoff * 2).min(Duration::from_secs(5));
    }
}

/// Starts the watched view every reconcile reads and waits (up to 30 s) for
/// its first lists; its changes go to `hub`. Returns the watch tasks.
async fn start_watched_view(
    op: &Operator,
    hub: &broadcast::Sender<Change>,
    owned: &Arc<OwnedWatches>,
    stop: &signal::Receiver<bool>,
) -> Vec<tokio::task::JoinHandle<()>> {
    // A resource's change wakes those waiting for it (OwnedWatches).
    let weak = Arc::downgrade(owned);
    let resource_changed = Arc::new(move |namespace: &str| {
        if let Some(owned) = weak.upgrade() {
            owned.resource_changed(namespace);
        }
    });
    let (caches, feeds) = Caches::start(&op.client, &op.licensing, hub, resource_changed);
    *op.caches.write().expect("lock") = Some(caches.clone());
    for _ in 0..600 {
        if caches.synced() || *stop.borrow() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    if !caches.synced() {
        tracing::warn!(
            "the watches have not listed everything yet; reading the cluster until they have"
        );
    }
    feeds
}

type OwnedChanges = HashMap<api::Kind, mpsc::UnboundedReceiver<ObjectRef<DynamicObject>>>;

/// The watches of what we own: a change wakes its owner at once. Returns
/// the watches and, per kind of resource, the stream of owners to wake.
fn start_owned_watches(
    op: &Operator,
    hub: &broadcast::Sender<Change>,
) -> (Arc<OwnedWatches>, OwnedChanges) {
    let mut senders = HashMap::new();
    let mut receivers = HashMap::new();
    for kind in api::Kind::ALL
        .into_iter()
        .filter(|k| k.family() != api::Family::Capability)
    {
        let (tx, rx) = mpsc::unbounded_channel();
        senders.insert(kind, tx);
        receivers.insert(kind, rx);
    }
    let triggers = Triggers {
        resources: senders,
        capabilities: hub.clone(),
    };
    let owned = Arc::new(OwnedWatches::new(op.client.clone(), triggers));
    *op.owned.write().expect("lock") = Some(owned.clone());
    (owned, receivers)
}

/// What the controllers are built from.
struct Wiring {
    op: Arc<Operator>,
    hub: broadcast::Sender<Change>,
    triggers: Mutex<OwnedChanges>,
    stop: signal::Receiver<bool>,
    config: Config,
}

impl Wiring {
    fn shutdown(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut stop = self.stop.clone();
        async move {
            let _ = stop.wait_for(|s| *s).await;
        }
    }

    /// A new, changed or deleted license takes effect at once.
    fn license_changes(&self) -> impl futures::Stream<Item = ()> + Send + 'static {
        let op = self.op.clone();
        subscribe(&self.hub, |c| c == Change::License)
            .inspect(move |_| op.plans_stale.store(true, Ordering::Relaxed))
    }

    /// A Capability's status changed (one became Ready, say): the shared
    /// decisions are stale at once, or the resources it wakes would read the
    /// cached "not Ready" and wait for the next poll.
    fn capability_changes(&self) -> impl futures::Stream<Item = ()> + Send + 'static {
        let op = self.op.clone();
        kube::runtime::watcher(capabilities(&self.op), watcher::Config::default())
            .filter_map(|e| async move { matches!(e, Ok(watcher::Event::Apply(_))).then_some(()) })
            .inspect(move |_| op.plans_stale.store(true, Ordering::Relaxed))
    }

    /// Owners of `kind` whose owned objects changed.
    fn owned_changes(&self, kind: api::Kind) -> BoxStream<'static, ObjectRef<DynamicObject>> {
        let rx = self
            .triggers
            .lock()
            .expect("lock")
            .remove(&kind)
            .expect("one per kind");
        futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|r| (r, rx)) })
            .boxed()
    }

    /// The capabilities look again on any change of the watched view.
    fn capability_controller(&self) -> impl Future<Output = ()> {
        let ar = api::Kind::Capability.api_resource();
        Controller::new_with(capabilities(&self.op), watcher::Config::default(), ar)
            .with_config(self.config.clone())
            .reconcile_all_on(subscribe(&self.hub, |_| true))
            .graceful_shutdown_on(self.shutdown())
            .run(
                capability::reconcile,
                capability::error_policy,
                self.op.clone(),
            )
            .for_each(|_| async {})
    }

    /// One controller for a kind of resource: woken by its own objects, by
    /// what it owns, and for all of them by `woken_by`.
    fn controller<R, RFut, P>(
        &self,
        kind: api::Kind,
        woken_by: impl futures::Stream<Item = ()> + Send + 'static,
        reconcile: R,
        error_policy: P,
    ) -> impl Future<Output = ()>
    where
        R: Fn(api::Kind, Arc<DynamicObject>, Arc<Operator>) -> RFut + Send + Sync + 'static,
        RFut: Future<Output = Result<Action, Error>> + Send + 'static,
        P: Fn(api::Kind, Arc<DynamicObject>, &Error, Arc<Operator>) -> Action
            + Send
            + Sync
            + 'static,
    {
        let ar = kind.api_resource();
        let all: Api<DynamicObject> = Api::all_with(self.op.client.clone(), &ar);
        Controller::new_with(all, watcher::Config::default(), ar)
            .with_config(self.config.clone())
            .reconcile_all_on(woken_by)
            .reconcile_on(self.owned_changes(kind))
            .graceful_shutdown_on(self.shutdown())
            .run(
                move |obj, op| reconcile(kind, obj, op),
                move |obj, err, op| error_policy(kind, obj, err, op),
                self.op.clone(),
            )
            .for_each(|_| async {})
    }
}

fn capabilities(op: &Operator) -> Api<DynamicObject> {
    Api::all_with(op.client.clone(), &api::Kind::Capability.api_resource())
}

/// Applies the operator's CRDs and one `Capability` per catalog entry (the
/// objects `kubectl get capabilities` lists). Idempotent.
pub async fn ensure_installed(op: &Operator) -> Result<(), Error> {
    let apply = PatchParams::apply(crate::action::DEFAULT_FIELD_MANAGER).force();
    apply_crds(op, &apply).await?;
    let caps = capabilities(op);
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
        caps.patch(&entry.name, &apply, &Patch::Apply(&body))
            .await?;
    }
    Ok(())
}

/// Applies each CRD that differs from ours, then waits (up to 10 s each)
/// for them to be Established.
async fn apply_crds(op: &Operator, apply: &PatchParams) -> Result<(), Error> {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    let crds: Api<CustomResourceDefinition> = Api::all(op.client.clone());
    for crd in crate::operator::api::crds::all() {
        let name = crd.metadata.name.clone().unwrap_or_default();
        let existing = crds.get_opt(&name).await?;
        let wanted = serde_json::to_value(&crd).unwrap_or_default();
        let current = existing
            .as_ref()
            .map(|e| serde_json::to_value(e).unwrap_or_default());
        if !current.is_some_and(|c| crate::operator::decide::conditions::is_subset(&wanted, &c)) {
            crds.patch(&name, apply, &Patch::Apply(&crd)).await?;
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
    Ok(())
}
