//! Watches of the objects we own, so that a deletion or an edit of one is
//! put back within seconds rather than at the next resync: objects we emit
//! (by our managed-by label; the resource that owns them is looked at
//! again) and objects of our releases (by the capability or workload label;
//! the object becomes a suspect that its capability, or the resource its
//! workload release is for, checks).
//!
//! A watch per kind of object, started the first time we apply one of that
//! kind (a CRD kind may not exist before), as metadata only: nothing of an
//! object's body is kept, only what tells a change of what we applied from
//! a controller's status write (generation, labels and annotations; the
//! resourceVersion for kinds without a generation, which have no status).

use crate::operator::api;
use crate::operator::model::light::Meta;
use futures::StreamExt;
use kube::api::{Api, ApiResource, DynamicObject};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher::{self, Event};
use kube::runtime::WatchStreamExt;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Mutex;

/// An object of one of our releases: (apiVersion, kind, namespace, name).
pub type ObjectKey = (String, String, String, String);

/// Which of our objects a watch selects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Owner {
    /// Emitted for a resource: our managed-by label, an ownerReference.
    Resource,
    /// Applied by our release of a capability: the capability label.
    Capability,
    /// Applied by a workload release of ours: the workload label; the
    /// owner annotation names the resource.
    Workload,
}

impl Owner {
    fn selector(self) -> String {
        match self {
            Owner::Resource => format!("{}={}", api::MANAGED_BY_LABEL, api::MANAGED_BY),
            Owner::Capability => api::CAPABILITY_LABEL.to_string(),
            Owner::Workload => api::WORKLOAD_LABEL.to_string(),
        }
    }
}

/// Where a change of an owned object is announced.
pub struct Triggers {
    /// Per kind of resource: the resource to look at again.
    pub resources: HashMap<api::Kind, tokio::sync::mpsc::UnboundedSender<ObjectRef<DynamicObject>>>,
    /// The capabilities' controller looks again on any cluster change.
    pub capabilities: tokio::sync::broadcast::Sender<crate::operator::model::watch::Change>,
}

pub struct OwnedWatches {
    client: kube::Client,
    triggers: Triggers,
    started: Mutex<BTreeSet<(String, String, Owner)>>,
    tasks: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    /// Objects of our releases that changed, by who checks them: the
    /// capability's name, or the owner (`<Kind>/<namespace>/<name>`).
    suspects: Mutex<BTreeMap<String, BTreeSet<ObjectKey>>>,
    /// Release revisions whose objects have been looked at once.
    looked: Mutex<BTreeSet<(String, i64)>>,
    /// Release revisions this process applied: their objects are as made.
    made: Mutex<BTreeSet<(String, i64)>>,
    /// Resources waiting for a status (kind, namespace, name): of an object
    /// of their own (an emitted object, a workload of their release), or of
    /// a resource they reference, by its namespace. The next such change
    /// wakes them at once instead of at their next poll (which stays, for
    /// a change that came before they asked).
    waiting_own: Mutex<BTreeSet<(String, String, String)>>,
    waiting_refs: Mutex<BTreeMap<String, BTreeSet<(String, String)>>>,
}

/// What tells a change of what we applied from a status write.
type Seen = (Option<i64>, u64, Option<String>);

impl OwnedWatches {
    pub fn new(client: kube::Client, triggers: Triggers) -> OwnedWatches {
        OwnedWatches {
            client,
            triggers,
            started: Mutex::new(BTreeSet::new()),
            tasks: Mutex::new(Vec::new()),
            suspects: Mutex::new(BTreeMap::new()),
            looked: Mutex::new(BTreeSet::new()),
            made: Mutex::new(BTreeSet::new()),
            waiting_own: Mutex::new(BTreeSet::new()),
            waiting_refs: Mutex::new(BTreeMap::new()),
        }
    }

    /// Starts the watch of `ar`'s objects `owner` selects, once.
    pub fn ensure(self: &std::sync::Arc<Self>, ar: &ApiResource, owner: Owner) {
        let key = (ar.api_version.clone(), ar.kind.clone(), owner);
        if !self.started.lock().expect("lock").insert(key) {
            return;
        }
        let api: Api<Meta<DynamicObject>> = Api::all_with(self.client.clone(), ar);
        let config = watcher::Config::default().labels(&owner.selector());
        let me = self.clone();
        let ar = ar.clone();
        let task = tokio::spawn(async move {
            let stream = watcher::watcher(api, config).default_backoff();
            let mut stream = std::pin::pin!(stream);
            let mut seen: HashMap<String, Seen> = HashMap::new();
            let mut listing = true;
            while let Some(event) = stream.next().await {
                match event {
                    Ok(Event::Init) => listing = true,
                    Ok(Event::InitDone) => listing = false,
                    Ok(Event::InitApply(o)) => {
                        seen.insert(uid(&o), fingerprint(&o));
                    }
                    Ok(Event::Apply(o)) => {
                        let now = fingerprint(&o);
                        let edited = seen.insert(uid(&o), now.clone()).as_ref() != Some(&now);
                        if edited && !listing {
                            me.changed(&ar, &o, owner);
                        } else if !listing {
                            // A status write: news only for an owner waiting for it.
                            me.status_changed(&o, owner);
                        }
                    }
                    Ok(Event::Delete(o)) => {
                        seen.remove(&uid(&o));
                        me.changed(&ar, &o, owner);
                    }
                    Err(e) => {
                        tracing::debug!(kind = %ar.kind, error = %e, "owned-object watch failed; retrying")
                    }
                }
            }
        });
        self.tasks.lock().expect("lock").push(task);
    }

    fn changed(&self, ar: &ApiResource, o: &Meta<DynamicObject>, owner: Owner) {
        let m = &o.metadata;
        match owner {
            Owner::Resource => {
                for r in m.owner_references.iter().flatten() {
                    if r.api_version == api::API_VERSION {
                        let namespace = m.namespace.as_deref().unwrap_or_default();
                        self.look_again(&r.kind, namespace, &r.name);
                    }
                }
            }
            Owner::Capability => {
                let Some(capability) = m.labels.as_ref().and_then(|l| l.get(api::CAPABILITY_LABEL))
                else {
                    return;
                };
                self.suspect(capability, object_key(ar, o));
                let _ = self
                    .triggers
                    .capabilities
                    .send(crate::operator::model::watch::Change::Cluster);
            }
            Owner::Workload => {
                let Some((resource, [kind, namespace, name])) = workload_owner(m) else {
                    return;
                };
                self.suspect(resource, object_key(ar, o));
                self.look_again(kind, namespace, name);
            }
        }
    }

    /// `kind namespace/name` (one of our resources) waits for a status of
    /// an object of its own.
    pub fn wait_for_own(&self, kind: &str, namespace: &str, name: &str) {
        self.waiting_own
            .lock()
            .expect("lock")
            .insert((kind.into(), namespace.into(), name.into()));
    }

    /// `kind namespace/name` waits for resources it references (in its
    /// namespace) to be Ready.
    pub fn wait_for_references(&self, kind: &str, namespace: &str, name: &str) {
        self.waiting_refs
            .lock()
            .expect("lock")
            .entry(namespace.into())
            .or_default()
            .insert((kind.into(), name.into()));
    }

    /// One of our resources in `namespace` changed: those waiting for their
    /// references there look again.
    /// A cluster-scoped one (a SecretsManagement) may be referenced from
    /// any namespace.
    pub fn resource_changed(&self, namespace: &str) {
        let woken: Vec<(String, BTreeSet<(String, String)>)> = {
            let mut waiting = self.waiting_refs.lock().expect("lock");
            if namespace.is_empty() {
                std::mem::take(&mut *waiting).into_iter().collect()
            } else {
                waiting.remove_entry(namespace).into_iter().collect()
            }
        };
        for (namespace, waiters) in woken {
            for (kind, name) in waiters {
                self.look_again(&kind, &namespace, &name);
            }
        }
    }

    /// An object of ours changed only in its status: its owner looks again
    /// if it waits for that.
    fn status_changed(&self, o: &Meta<DynamicObject>, owner: Owner) {
        let m = &o.metadata;
        let namespace = m.namespace.as_deref().unwrap_or_default();
        let owners: Vec<(String, String, String)> = match owner {
            Owner::Capability => return,
            Owner::Resource => m
                .owner_references
                .iter()
                .flatten()
                .filter(|r| r.api_version == api::API_VERSION)
                .map(|r| (r.kind.clone(), namespace.to_string(), r.name.clone()))
                .collect(),
            Owner::Workload => match workload_owner(m) {
                Some((_, [k, ns, n])) => vec![(k.into(), ns.into(), n.into())],
                None => return,
            },
        };
        for waiter in owners {
            if self.waiting_own.lock().expect("lock").remove(&waiter) {
                self.look_again(&waiter.0, &waiter.1, &waiter.2);
            }
        }
    }

    fn suspect(&self, checker: &str, key: ObjectKey) {
        self.suspects
            .lock()
            .expect("lock")
            .entry(checker.to_string())
            .or_default()
            .insert(key);
    }

    /// Triggers the reconcile of one of our resources.
    fn look_again(&self, kind: &str, namespace: &str, name: &str) {
        let Some(kind) = api::Kind::parse(kind) else {
            return;
        };
        if let Some(tx) = self.triggers.resources.get(&kind) {
            let mut target = ObjectRef::new_with(name, kind.api_resource());
            if kind.namespaced() {
                target = target.within(namespace);
            }
            let _ = tx.send(target);
        }
    }

    /// The objects of the release `checker` checks (a capability's name, or
    /// the owner annotation of a workload release) changed since last asked.
    pub fn take_suspects(&self, checker: &str) -> BTreeSet<ObjectKey> {
        self.suspects
            .lock()
            .expect("lock")
            .remove(checker)
            .unwrap_or_default()
    }

    /// True the first time a revision of a release is asked about: its
    /// objects are all looked at once (what changed while no watch ran).
    pub fn first_look(&self, release: &str, revision: i64) -> bool {
        self.looked
            .lock()
            .expect("lock")
            .insert((release.to_string(), revision))
    }

    /// Records a revision this process just applied (`namespace/name`).
    pub fn made_here(&self, release: &str, revision: i64) {
        self.made
            .lock()
            .expect("lock")
            .insert((release.to_string(), revision));
    }

    /// Whether this process applied the revision: its first look need not
    /// compare every object (they are as just applied), only start watches.
    pub fn was_made_here(&self, release: &str, revision: i64) -> bool {
        self.made
            .lock()
            .expect("lock")
            .contains(&(release.to_string(), revision))
    }

    /// Suspects a check could not look at yet (a release action in flight).
    pub fn put_back(&self, checker: &str, keys: BTreeSet<ObjectKey>) {
        self.suspects
            .lock()
            .expect("lock")
            .entry(checker.to_string())
            .or_default()
            .extend(keys);
    }
}

impl Drop for OwnedWatches {
    fn drop(&mut self) {
        for t in self.tasks.lock().expect("lock").drain(..) {
            t.abort();
        }
    }
}

fn object_key(ar: &ApiResource, o: &Meta<DynamicObject>) -> ObjectKey {
    (
        ar.api_version.clone(),
        ar.kind.clone(),
        o.metadata.namespace.clone().unwrap_or_default(),
        o.metadata.name.clone().unwrap_or_default(),
    )
}

fn uid(o: &Meta<DynamicObject>) -> String {
    o.metadata.uid.clone().unwrap_or_default()
}

fn fingerprint(o: &Meta<DynamicObject>) -> Seen {
    use std::hash::{Hash, Hasher};
    let m = &o.metadata;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    m.labels.hash(&mut h);
    m.annotations.hash(&mut h);
    m.deletion_timestamp.is_some().hash(&mut h);
    let version = m
        .generation
        .is_none()
        .then(|| m.resource_version.clone().unwrap_or_default());
    (m.generation, h.finish(), version)
}

/// The resource a workload release's object belongs to: its owner
/// annotation as written, and that annotation's `kind/namespace/name`.
fn workload_owner(m: &kube::api::ObjectMeta) -> Option<(&str, [&str; 3])> {
    let resource = m.annotations.as_ref()?.get(api::OWNER_ANNOTATION)?;
    let mut parts = resource.splitn(3, '/');
    Some((resource, [parts.next()?, parts.next()?, parts.next()?]))
}
