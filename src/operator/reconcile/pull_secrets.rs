//! `--image-pull-secret`: our copies of the named Secrets (kept in the
//! operator's namespace) in every namespace where we install a release or
//! emit objects. Each reconcile that needs copies makes sure of them in its
//! namespace and reports what it could not copy as a condition; one task
//! beside the controllers keeps every copy current with its source and
//! deletes those nothing of ours needs any more. Nothing here fails a
//! reconcile: a missing or wrong Secret is a condition, never an error.

use super::{Error, Operator};
use crate::operator::api::Condition;
use crate::operator::decide::pull_secrets::{self as decide, Problem};
use crate::operator::model::watch::{subscribe, Change};
use futures::StreamExt;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};
use kube::runtime::watcher;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// The names given to `--image-pull-secret`, and the announcement that one
/// of their sources changed (the resources then report again).
pub struct PullSecrets {
    pub names: Vec<String>,
    changed: tokio::sync::broadcast::Sender<Change>,
    /// Namespaces a release is being installed in, with how many: their
    /// copies stay, though no record of the release exists yet.
    held: std::sync::Mutex<std::collections::BTreeMap<String, usize>>,
    /// The problems last logged: each is logged once, not on every pass.
    logged: std::sync::Mutex<Vec<String>>,
}

/// Keeps a namespace's copies for as long as it lives (see [`PullSecrets::held`]).
pub struct Hold<'a> {
    of: &'a PullSecrets,
    namespace: String,
}

impl Drop for Hold<'_> {
    fn drop(&mut self) {
        let mut held = self.of.held.lock().expect("lock");
        if let Some(n) = held.get_mut(&self.namespace) {
            *n -= 1;
            if *n == 0 {
                held.remove(&self.namespace);
            }
        }
    }
}

impl PullSecrets {
    pub fn new(names: Vec<String>) -> PullSecrets {
        PullSecrets {
            names,
            changed: tokio::sync::broadcast::channel(16).0,
            held: Default::default(),
            logged: Default::default(),
        }
    }

    fn hold(&self, namespace: &str) -> Hold<'_> {
        *self
            .held
            .lock()
            .expect("lock")
            .entry(namespace.to_string())
            .or_default() += 1;
        Hold {
            of: self,
            namespace: namespace.to_string(),
        }
    }

    fn held(&self) -> Vec<String> {
        self.held.lock().expect("lock").keys().cloned().collect()
    }

    /// Logs the problems of a pass that were not those of the last one.
    fn log(&self, problems: &[Problem]) {
        let now: Vec<String> = problems.iter().map(Problem::to_string).collect();
        let mut logged = self.logged.lock().expect("lock");
        for p in now.iter().filter(|p| !logged.contains(p)) {
            tracing::warn!(problem = %p, "image pull secret not copied");
        }
        *logged = now;
    }

    pub fn is_active(&self) -> bool {
        !self.names.is_empty()
    }

    /// Yields when a source Secret changed (created, edited, deleted).
    pub fn changes(&self) -> futures::stream::BoxStream<'static, ()> {
        subscribe(&self.changed, |_| true)
    }
}

impl Default for PullSecrets {
    fn default() -> PullSecrets {
        PullSecrets::new(Vec::new())
    }
}

fn secrets(op: &Operator, namespace: &str) -> Api<Secret> {
    Api::namespaced(op.client.clone(), namespace)
}

async fn get(op: &Operator, namespace: &str, name: &str) -> Result<Option<Value>, kube::Error> {
    Ok(secrets(op, namespace)
        .get_opt(name)
        .await?
        .map(|s| serde_json::to_value(s).unwrap_or_default()))
}

/// The named sources that can be copied, and why the others cannot.
async fn sources(op: &Operator) -> (Vec<Value>, Vec<Problem>) {
    let (mut found, mut problems) = (Vec::new(), Vec::new());
    for name in &op.pull_secrets.names {
        let source = match get(op, &op.namespace, name).await {
            Ok(s) => s,
            Err(e) => {
                problems.push(failed(&op.namespace, name, &e));
                continue;
            }
        };
        let type_ = source
            .as_ref()
            .map(|s| s["type"].as_str().unwrap_or("Opaque"));
        match decide::check_source(&op.namespace, name, type_) {
            Ok(()) => found.extend(source),
            Err(p) => problems.push(p),
        }
    }
    (found, problems)
}

fn failed(namespace: &str, name: &str, e: &kube::Error) -> Problem {
    Problem::Failed {
        namespace: namespace.into(),
        name: name.into(),
        message: e.to_string(),
    }
}

/// Writes `wanted` (a copy) unless a Secret of its name there is not ours.
async fn write(op: &Operator, wanted: &Value, existing: Option<&Value>) -> Result<(), Problem> {
    let ns = wanted["metadata"]["namespace"].as_str().unwrap_or_default();
    let name = wanted["metadata"]["name"].as_str().unwrap_or_default();
    if existing.is_some_and(|e| !decide::is_our_copy(e)) {
        return Err(Problem::NotOurs {
            namespace: ns.into(),
            name: name.into(),
        });
    }
    let pp = PatchParams::apply(crate::action::DEFAULT_FIELD_MANAGER).force();
    secrets(op, ns)
        .patch(name, &pp, &Patch::Apply(wanted))
        .await
        .map(|_| ())
        .map_err(|e| failed(ns, name, &e))
}

/// Makes sure every named pull secret has a current copy in `namespace`;
/// what could not be copied, each naming its Secret.
pub async fn ensure(op: &Operator, namespace: &str) -> Vec<Problem> {
    let (found, mut problems) = sources(op).await;
    if namespace.is_empty() || namespace == op.namespace {
        return problems;
    }
    for source in &found {
        let wanted = decide::copy_of(source, &op.namespace, namespace);
        let name = wanted["metadata"]["name"].as_str().unwrap_or_default();
        let existing = match get(op, namespace, name).await {
            Ok(e) => e,
            Err(e) => {
                problems.push(failed(namespace, name, &e));
                continue;
            }
        };
        if existing
            .as_ref()
            .is_some_and(|e| decide::is_current(&wanted, e))
        {
            continue;
        }
        if let Err(p) = write(op, &wanted, existing.as_ref()).await {
            problems.push(p);
        }
    }
    problems
}

/// [`ensure`], for a release about to be installed in `namespace`: its
/// copies are kept until the returned hold is dropped (the release's record,
/// which says the namespace needs them, is written by the action).
pub async fn ensure_held<'a>(op: &'a Operator, namespace: &str) -> Hold<'a> {
    let hold = op.pull_secrets.hold(namespace);
    if op.pull_secrets.is_active() {
        ensure(op, namespace).await;
    }
    hold
}

/// The `ImagePullSecrets` condition of something that runs in `namespace`,
/// its copies made sure of first; None without `--image-pull-secret`.
pub async fn condition(
    op: &Operator,
    namespace: &str,
    old: &[Condition],
    generation: Option<i64>,
) -> Option<Condition> {
    // Cluster-scoped resources run nothing of their own.
    if !op.pull_secrets.is_active() || namespace.is_empty() {
        return None;
    }
    let problems = ensure(op, namespace).await;
    for p in &problems {
        tracing::debug!(namespace, problem = %p, "image pull secret not copied");
    }
    Some(decide::report(
        old,
        &op.pull_secrets.names,
        &problems,
        generation,
    ))
}

/// Our copies, everywhere, with their data.
async fn copies(op: &Operator) -> Result<Vec<Value>, Error> {
    let lp = ListParams::default().labels(&format!(
        "{}={},{}=true",
        crate::operator::api::MANAGED_BY_LABEL,
        crate::operator::api::MANAGED_BY,
        decide::COPY_LABEL
    ));
    let all: Api<Secret> = Api::all(op.client.clone());
    Ok(all
        .list(&lp)
        .await?
        .items
        .into_iter()
        .filter_map(|s| serde_json::to_value(s).ok())
        .collect())
}

fn key(v: &Value) -> (String, String) {
    let meta = |k: &str| v["metadata"][k].as_str().unwrap_or_default().to_string();
    (meta("namespace"), meta("name"))
}

/// One pass: every copy that is needed written if it is not current, every
/// copy not needed deleted. Deletions are decided again on a fresh read, so
/// a namespace the watches have not yet seen a new resource in keeps its copy.
async fn sync(op: &Operator) -> Result<(), Error> {
    let mut needed = decide::needed_namespaces(&op.observed().await?, &op.namespace);
    needed.extend(op.pull_secrets.held());
    let (found, mut problems) = sources(op).await;
    let existing = copies(op).await?;
    for wanted in decide::to_write(&found, &op.namespace, &needed, &existing) {
        let (ns, name) = key(&wanted);
        let current = match existing
            .iter()
            .find(|c| key(c) == (ns.clone(), name.clone()))
        {
            Some(c) => Some(c.clone()),
            None => get(op, &ns, &name).await?,
        };
        if let Err(p) = write(op, &wanted, current.as_ref()).await {
            problems.push(p);
        }
    }
    op.pull_secrets.log(&problems);
    let keys: Vec<(String, String)> = existing.iter().map(key).collect();
    if decide::unwanted(&keys, &needed, &op.pull_secrets.names).is_empty() {
        return Ok(());
    }
    let mut needed = decide::needed_namespaces(&op.snapshot().await?, &op.namespace);
    needed.extend(op.pull_secrets.held());
    for (ns, name) in decide::unwanted(&keys, &needed, &op.pull_secrets.names) {
        match secrets(op, &ns)
            .delete(&name, &DeleteParams::default())
            .await
        {
            Ok(_) => {
                tracing::info!(namespace = %ns, name = %name, "deleted a copy of an image pull secret nothing needs there any more")
            }
            Err(kube::Error::Api(s)) if s.code == 404 => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// A watch on each named source Secret: a change is copied at once.
fn source_changes(op: &Operator) -> futures::stream::BoxStream<'static, ()> {
    let watches = op.pull_secrets.names.iter().map(|name| {
        let config = watcher::Config::default().fields(&format!("metadata.name={name}"));
        watcher::watcher(secrets(op, &op.namespace), config)
            .filter_map(|e| async move {
                matches!(
                    e,
                    Ok(watcher::Event::Apply(_)
                        | watcher::Event::Delete(_)
                        | watcher::Event::InitDone)
                )
                .then_some(())
            })
            .boxed()
    });
    futures::stream::select_all(watches).boxed()
}

/// Keeps the copies in step until `stop` resolves: on every change the
/// watches announce, every change of a source, and every `resync` (what
/// the watches cannot see, such as a copy edited by hand).
pub async fn run(
    op: Arc<Operator>,
    hub: &tokio::sync::broadcast::Sender<Change>,
    stop: impl std::future::Future<Output = ()>,
) {
    if !op.pull_secrets.is_active() {
        return;
    }
    let cluster = subscribe(hub, |_| true).map(|_| false);
    let sources = source_changes(&op).map(|_| true);
    let mut triggers = futures::stream::select(cluster, sources);
    let mut tick = tokio::time::interval(op.resync.min(Duration::from_secs(300)));
    tokio::pin!(stop);
    let mut backoff = Duration::from_millis(500);
    let mut retry = false;
    loop {
        let mut source_changed = retry
            || tokio::select! {
                _ = &mut stop => return,
                t = triggers.next() => t.unwrap_or(false),
                _ = tick.tick() => false,
            };
        // A burst of changes costs one pass.
        tokio::time::sleep(Duration::from_millis(100)).await;
        while let Some(Some(s)) = futures::FutureExt::now_or_never(triggers.next()) {
            source_changed |= s;
        }
        retry = match sync(&op).await {
            Ok(()) => {
                backoff = Duration::from_millis(500);
                false
            }
            Err(e) => {
                tracing::warn!(error = %e, retry_in = ?backoff, "keeping the image pull secrets' copies failed");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(30));
                true
            }
        };
        if source_changed {
            let _ = op.pull_secrets.changed.send(Change::Cluster);
        }
    }
}
