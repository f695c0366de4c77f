//! The cluster as the operator's decisions see it, kept by watches: a
//! reconcile reads its snapshot from here instead of listing the cluster
//! again, so a converged operator asks the API server nothing beyond its
//! watches. Each watched object is kept only as the little the decisions
//! read (a Deployment as a `Workload`, a CRD as `CrdInfo`, a release Secret
//! as its labels and annotations, watched as metadata only), never its body.
//!
//! The watches also trigger the reconciles, after the mirror is updated: a
//! reconcile triggered by a change always sees it. The snapshot here omits
//! the custom resources we emitted (listing them is a request per CRD);
//! a decision that acts re-reads the cluster first (`crate::operator::model::gather::gather`).

use crate::operator::api;
use crate::operator::model::catalog::Catalog;
use crate::operator::model::licensing::Licensing;
use crate::operator::model::light::{CrdHead, Meta};
use crate::operator::model::snapshot::{
    crd_info, CrdInfo, Resource, SecretMeta, Snapshot, Workload,
};
use futures::StreamExt;
use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, StatefulSet};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DynamicObject};
use kube::runtime::watcher::{self, Event};
use kube::runtime::WatchStreamExt;
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

/// What changed, for the controllers a change concerns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// Anything a capability decision reads.
    Cluster,
    /// The license Secret.
    License,
}

type Key = (String, String);

/// Derived values of one watched kind, by namespace and name, as a
/// reflector store keeps objects: a re-list is swapped in whole at its end.
pub struct Mirror<T> {
    state: RwLock<MirrorState<T>>,
}

struct MirrorState<T> {
    live: BTreeMap<Key, T>,
    relisting: Option<BTreeMap<Key, T>>,
    synced: bool,
}

impl<T: Clone> Default for Mirror<T> {
    fn default() -> Self {
        Mirror {
            state: RwLock::new(MirrorState {
                live: BTreeMap::new(),
                relisting: None,
                synced: false,
            }),
        }
    }
}

impl<T: Clone> Mirror<T> {
    /// Applies one watch event; `derive` None drops the object (not of interest).
    pub fn on<K: kube::Resource>(&self, event: &Event<K>, derive: &impl Fn(&K) -> Option<T>) {
        let key = |o: &K| {
            let m = o.meta();
            (
                m.namespace.clone().unwrap_or_default(),
                m.name.clone().unwrap_or_default(),
            )
        };
        let mut s = self.state.write().expect("lock");
        match event {
            Event::Init => s.relisting = Some(BTreeMap::new()),
            Event::InitApply(o) => {
                let value = derive(o);
                if let (Some(next), Some(v)) = (s.relisting.as_mut(), value) {
                    next.insert(key(o), v);
                }
            }
            Event::InitDone => {
                if let Some(next) = s.relisting.take() {
                    s.live = next;
                }
                s.synced = true;
            }
            Event::Apply(o) => match derive(o) {
                Some(v) => {
                    s.live.insert(key(o), v);
                }
                None => {
                    s.live.remove(&key(o));
                }
            },
            Event::Delete(o) => {
                s.live.remove(&key(o));
            }
        }
    }

    pub fn values(&self) -> Vec<T> {
        self.state
            .read()
            .expect("lock")
            .live
            .values()
            .cloned()
            .collect()
    }

    pub fn synced(&self) -> bool {
        self.state.read().expect("lock").synced
    }
}

/// Everything `Snapshot` needs but the emitted custom resources.
#[derive(Default)]
pub struct Caches {
    pub release_secrets: Mirror<SecretMeta>,
    pub our_secrets: Mirror<(String, String)>,
    pub crds: Mirror<(String, CrdInfo)>,
    /// Deployments, StatefulSets and DaemonSets, one mirror each (their
    /// watches re-list independently).
    pub workloads: [Mirror<Workload>; 3],
    pub resources: BTreeMap<crate::operator::api::Kind, Mirror<Resource>>,
    pub license: Mirror<BTreeMap<String, Vec<u8>>>,
    /// Each Capability's spec (the admin's configuration).
    pub capability_specs: Mirror<(String, serde_json::Value)>,
}

impl Caches {
    /// Every watch has listed once.
    pub fn synced(&self) -> bool {
        self.release_secrets.synced()
            && self.our_secrets.synced()
            && self.crds.synced()
            && self.workloads.iter().all(Mirror::synced)
            && self.resources.values().all(Mirror::synced)
            && self.license.synced()
            && self.capability_specs.synced()
    }

    /// The snapshot `crate::operator::model::gather::gather` would read, without `emitted`.
    pub fn snapshot(&self, catalog: &Catalog, licensing: &Licensing) -> Snapshot {
        let wanted: std::collections::BTreeSet<&String> =
            catalog.capability.iter().flat_map(|c| &c.crds).collect();
        let mut snap = Snapshot {
            releases: crate::operator::model::snapshot::releases_from(
                &self.release_secrets.values(),
            ),
            crds: self
                .crds
                .values()
                .into_iter()
                .filter(|(name, _)| wanted.contains(name))
                .collect(),
            workloads: self.workloads.iter().flat_map(Mirror::values).collect(),
            emitted_secrets: self.our_secrets.values(),
            ..Default::default()
        };
        snap.emitted_secrets.sort();
        for kind in crate::operator::api::Kind::resources() {
            if let Some(m) = self.resources.get(&kind) {
                snap.resources.extend(m.values());
            }
        }
        snap.read_license(self.license.values().first(), licensing);
        snap.capability_specs = self.capability_specs.values().into_iter().collect();
        snap
    }

    /// Starts the watches; each change is announced on `changes` once the
    /// mirror holds it. The tasks end when aborted.
    /// `resource_changed` hears the namespace of each change of one of our
    /// resources (after the mirror holds it).
    pub fn start(
        client: &kube::Client,
        licensing: &Licensing,
        changes: &tokio::sync::broadcast::Sender<Change>,
        resource_changed: Arc<dyn Fn(&str) + Send + Sync>,
    ) -> (Arc<Caches>, Vec<tokio::task::JoinHandle<()>>) {
        let mut caches = Caches::default();
        for kind in crate::operator::api::Kind::resources() {
            caches.resources.insert(kind, Mirror::default());
        }
        let feeds = Feeds {
            client: client.clone(),
            caches: Arc::new(caches),
            changes: changes.clone(),
            resource_changed,
        };
        let mut tasks = vec![
            feeds.release_secrets(),
            feeds.our_secrets(),
            feeds.crds(),
            feeds.workloads::<Deployment>(0, "Deployment"),
            feeds.workloads::<StatefulSet>(1, "StatefulSet"),
            feeds.workloads::<DaemonSet>(2, "DaemonSet"),
            feeds.capability_specs(),
            feeds.license(licensing),
        ];
        tasks.extend(crate::operator::api::Kind::resources().map(|kind| feeds.resources(kind)));
        (feeds.caches, tasks)
    }
}

/// Starts the watches that fill `caches`, one task each.
struct Feeds {
    client: kube::Client,
    caches: Arc<Caches>,
    changes: tokio::sync::broadcast::Sender<Change>,
    resource_changed: Arc<dyn Fn(&str) + Send + Sync>,
}

impl Feeds {
    /// Helm's release Secrets (ours and anyone's), as metadata only.
    fn release_secrets(&self) -> tokio::task::JoinHandle<()> {
        let c = self.caches.clone();
        feed(
            watcher::watcher(
                Api::<Meta<Secret>>::all(self.client.clone()),
                watcher::Config::default().labels("owner=helm"),
            ),
            &self.changes,
            Change::Cluster,
            move |e| {
                c.release_secrets.on(e, &|s| {
                    Some(crate::operator::model::snapshot::secret_meta(&s.metadata))
                })
            },
        )
    }

    /// The Secrets we emitted, by namespace and name only.
    fn our_secrets(&self) -> tokio::task::JoinHandle<()> {
        let c = self.caches.clone();
        let ours = format!("{}={}", api::MANAGED_BY_LABEL, api::MANAGED_BY);
        feed(
            watcher::watcher(
                Api::<Meta<Secret>>::all(self.client.clone()),
                watcher::Config::default().labels(&ours),
            ),
            &self.changes,
            Change::Cluster,
            move |e| {
                c.our_secrets.on(e, &|s| {
                    Some((
                        s.metadata.namespace.clone().unwrap_or_default(),
                        s.metadata.name.clone().unwrap_or_default(),
                    ))
                })
            },
        )
    }

    fn crds(&self) -> tokio::task::JoinHandle<()> {
        let c = self.caches.clone();
        feed(
            watcher::watcher(
                Api::<CrdHead>::all(self.client.clone()),
                watcher::Config::default(),
            ),
            &self.changes,
            Change::Cluster,
            move |e| c.crds.on(e, &|crd| Some(crd_info(crd))),
        )
    }

    /// The mirror `slot` of `caches.workloads` (in the order `gather` lists them).
    fn workloads<K>(&self, slot: usize, kind: &'static str) -> tokio::task::JoinHandle<()>
    where
        K: kube::Resource<DynamicType = ()>
            + Clone
            + serde::de::DeserializeOwned
            + serde::Serialize
            + std::fmt::Debug
            + Send
            + Sync
            + 'static,
    {
        let c = self.caches.clone();
        feed(
            watcher::watcher(
                Api::<K>::all(self.client.clone()),
                watcher::Config::default(),
            ),
            &self.changes,
            Change::Cluster,
            move |e: &Event<K>| {
                c.workloads[slot].on(e, &|o: &K| {
                    serde_json::to_value(o)
                        .ok()
                        .map(|v| crate::operator::model::snapshot::workload_from(kind, &v))
                })
            },
        )
    }

    /// Our resources of one kind (PostgresClusters, say).
    fn resources(&self, kind: api::Kind) -> tokio::task::JoinHandle<()> {
        let c = self.caches.clone();
        let changed = self.resource_changed.clone();
        let api: Api<DynamicObject> = Api::all_with(self.client.clone(), &kind.api_resource());
        feed(
            watcher::watcher(api, watcher::Config::default()),
            &self.changes,
            Change::Cluster,
            move |e| {
                c.resources[&kind].on(e, &|o: &DynamicObject| {
                    serde_json::to_value(o)
                        .ok()
                        .map(|v| crate::operator::model::snapshot::resource_from(kind, &v))
                });
                if let Event::Apply(o) | Event::Delete(o) = e {
                    changed(o.metadata.namespace.as_deref().unwrap_or_default());
                }
            },
        )
    }

    /// Each Capability's spec (the admin's configuration).
    fn capability_specs(&self) -> tokio::task::JoinHandle<()> {
        let c = self.caches.clone();
        feed(
            watcher::watcher(
                Api::<DynamicObject>::all_with(
                    self.client.clone(),
                    &crate::operator::api::Kind::Capability.api_resource(),
                ),
                watcher::Config::default(),
            ),
            &self.changes,
            Change::Cluster,
            move |e| {
                c.capability_specs.on(e, &|o: &DynamicObject| {
                    Some(crate::operator::model::gather::capability_spec(o))
                })
            },
        )
    }

    /// The license Secret, by its one name in the operator's namespace.
    fn license(&self, licensing: &Licensing) -> tokio::task::JoinHandle<()> {
        let c = self.caches.clone();
        feed(
            watcher::watcher(
                Api::<Secret>::namespaced(self.client.clone(), &licensing.namespace),
                watcher::Config::default().fields(&format!(
                    "metadata.name={}",
                    crate::operator::model::licensing::SECRET_NAME
                )),
            ),
            &self.changes,
            Change::License,
            move |e| {
                c.license.on(e, &|s: &Secret| {
                    Some(crate::operator::model::snapshot::license_data(s))
                })
            },
        )
    }
}

/// Drives one watch into its mirror, then announces the change.
fn feed<K, S>(
    stream: S,
    changes: &tokio::sync::broadcast::Sender<Change>,
    change: Change,
    apply: impl Fn(&Event<K>) + Send + 'static,
) -> tokio::task::JoinHandle<()>
where
    K: Send + 'static,
    S: futures::Stream<Item = Result<Event<K>, watcher::Error>> + Send + 'static,
{
    let tx = changes.clone();
    tokio::spawn(async move {
        let mut stream = std::pin::pin!(stream.default_backoff());
        while let Some(event) = stream.next().await {
            match event {
                Ok(e) => {
                    apply(&e);
                    if matches!(e, Event::Apply(_) | Event::Delete(_) | Event::InitDone) {
                        let _ = tx.send(change);
                    }
                }
                Err(e) => tracing::warn!(error = %e, "watch failed; retrying"),
            }
        }
    })
}

/// A stream that yields once for each change `wanted` keeps (a burst
/// missed by a slow reader still yields once).
pub fn subscribe(
    changes: &tokio::sync::broadcast::Sender<Change>,
    wanted: fn(Change) -> bool,
) -> futures::stream::BoxStream<'static, ()> {
    use tokio::sync::broadcast::error::RecvError;
    futures::stream::unfold(changes.subscribe(), move |mut rx| async move {
        loop {
            match rx.recv().await {
                Ok(c) if wanted(c) => return Some(((), rx)),
                Ok(_) => continue,
                Err(RecvError::Lagged(_)) => return Some(((), rx)),
                Err(RecvError::Closed) => return None,
            }
        }
    })
    .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn secret(ns: &str, name: &str) -> Secret {
        Secret {
            metadata: ObjectMeta {
                namespace: Some(ns.into()),
                name: Some(name.into()),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn a_relist_replaces_the_mirror_only_when_it_completes() {
        let m: Mirror<String> = Mirror::default();
        let name = |s: &Secret| s.metadata.name.clone();
        assert!(!m.synced());
        for e in [
            Event::Init,
            Event::InitApply(secret("a", "x")),
            Event::InitDone,
        ] {
            m.on(&e, &name);
        }
        assert!(m.synced());
        m.on(&Event::Apply(secret("a", "y")), &name);
        assert_eq!(m.values(), ["x", "y"]);
        // A re-list after a lost watch: until it is done the old view stands.
        m.on(&Event::Init, &name);
        m.on(&Event::InitApply(secret("a", "z")), &name);
        assert_eq!(m.values(), ["x", "y"]);
        m.on(&Event::InitDone, &name);
        assert_eq!(m.values(), ["z"]);
        m.on(&Event::Delete(secret("a", "z")), &name);
        assert!(m.values().is_empty());
    }
}
