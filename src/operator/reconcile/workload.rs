//! The controllers of the resources realised as a workload release of ours
//! (ChatUI, MeilisearchInstance, Observability): wait for references, install or upgrade
//! the release when its inputs (chart digest + computed values) differ from
//! those recorded on it, report Ready from the release and its workloads;
//! on delete, uninstall the release, then drop the finalizer. A release of
//! that name that is not ours is never touched.

use super::resource::{self, Status};
use super::{emit, reference, release, Error, Operator};
use crate::operator::api::{self, Condition, ConditionType, Kind, Reason};
use crate::operator::decide::conditions::condition;
use crate::operator::decide::plan::{self, WorkloadStep};
use crate::operator::decide::realise::workload;
use crate::operator::decide::standing::Standing;
use crate::operator::model::catalog::WorkloadEntry;
use crate::operator::model::snapshot::{resource_from, ReleaseInfo, Resource};
use k8s_openapi::api::apps::v1::{Deployment, StatefulSet};
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DynamicObject, ListParams};
use kube::runtime::controller::Action;
use kube::runtime::events::EventType;
use kube::runtime::finalizer::Event;
use kube::ResourceExt;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

pub async fn reconcile(
    kind: Kind,
    obj: Arc<DynamicObject>,
    op: Arc<Operator>,
) -> Result<Action, Error> {
    let key = key(kind, &obj);
    let story = super::finalized(&op, kind, obj, |event| async {
        match event {
            Event::Apply(obj) => apply(kind, &obj, &op).await,
            Event::Cleanup(obj) => cleanup(kind, &obj, &op).await,
        }
    });
    super::measured(&op, kind, &key, story).await
}

fn key(kind: Kind, obj: &DynamicObject) -> String {
    format!(
        "{kind}/{}/{}",
        obj.namespace().unwrap_or_default(),
        obj.name_any()
    )
}

pub fn error_policy(kind: Kind, obj: Arc<DynamicObject>, err: &Error, op: Arc<Operator>) -> Action {
    super::retry(&op, kind, &key(kind, &obj), err)
}

/// The newest revision of one release, from its Secrets' labels only.
async fn release_info(
    op: &Operator,
    namespace: &str,
    name: &str,
) -> Result<Option<ReleaseInfo>, Error> {
    let secrets: Api<Secret> = Api::namespaced(op.client.clone(), namespace);
    let lp = ListParams::default().labels(&format!("owner=helm,name={name}"));
    let found: Vec<_> = secrets
        .list_metadata(&lp)
        .await?
        .items
        .into_iter()
        .map(|s| crate::operator::model::snapshot::secret_meta(&s.metadata))
        .collect();
    Ok(crate::operator::model::snapshot::releases_from(&found)
        .into_iter()
        .next())
}

/// Why the release's Deployments and StatefulSets are not all Ready, if so.
async fn workloads_unready(
    op: &Operator,
    namespace: &str,
    release: &str,
) -> Result<Option<String>, Error> {
    let mut found = Vec::new();
    let deployments: Api<Deployment> = Api::namespaced(op.client.clone(), namespace);
    for d in deployments.list(&ListParams::default()).await?.items {
        found.push(crate::operator::model::snapshot::workload_from(
            "Deployment",
            &serde_json::to_value(d).unwrap_or_default(),
        ));
    }
    let sets: Api<StatefulSet> = Api::namespaced(op.client.clone(), namespace);
    for s in sets.list(&ListParams::default()).await?.items {
        found.push(crate::operator::model::snapshot::workload_from(
            "StatefulSet",
            &serde_json::to_value(s).unwrap_or_default(),
        ));
    }
    Ok(found
        .iter()
        .filter(|w| {
            w.release
                .as_ref()
                .is_some_and(|(n, ns)| n == release && ns == namespace)
        })
        .find(|w| !w.ready)
        .map(|w| {
            format!(
                "{} {}/{}: {}",
                w.kind, w.namespace, w.name, w.not_ready_reason
            )
        }))
}

fn release_status(rel: &ReleaseInfo) -> Value {
    json!({"name": rel.name, "namespace": rel.namespace, "revision": rel.revision,
           "chartVersion": rel.chart_version.clone().unwrap_or_default()})
}

/// One reconcile of a live workload resource: read, let `realise` decide the
/// release's values and what to emit, then [`release_and_report`].
async fn apply(kind: Kind, obj: &DynamicObject, op: &Operator) -> Result<Action, Error> {
    let r = resource_from(kind, &serde_json::to_value(obj).unwrap_or_default());
    let old = resource::old_status(obj);
    if r.paused {
        return resource::pause(kind, obj, op, &old, false).await;
    }
    if let Some(note) = crate::operator::decide::standing::resumed(&old.common.conditions) {
        op.note(&super::reference(obj, kind), note).await;
    }
    let entry = op
        .catalog
        .workload_for(kind.as_str())
        .cloned()
        .ok_or(Error::NoWorkloadChart(kind))?;
    let planned = op.planned(&r.uid, r.generation).await?;
    let verdict = planned.verdict(&r.uid);
    if !verdict.is_licensed() {
        return resource::reject(kind, obj, op, &old, &verdict, &planned.tier).await;
    }
    let generation = Some(r.generation);
    let report = Report {
        op,
        kind,
        obj,
        licensed: resource::licensed_condition(&old, &verdict, &planned.tier, generation),
        capabilities: no_capabilities_needed(&old, generation),
        old: &old,
    };
    let mut status = Status::observing(generation, &old);
    status.fields = old.fields.clone();

    let inputs = resource::inputs(op, &r).await?;
    let w = match workload::realise(&r, &entry.release_prefix, &inputs) {
        Ok(w) => w,
        Err(e) => {
            report
                .finish(status, Standing::Invalid(e.to_string()))
                .await?;
            return Ok(Action::await_change());
        }
    };
    if !w.waiting_for.is_empty() {
        report
            .finish(status, Standing::Waiting(w.waiting_for.join("; ")))
            .await?;
        op.wait_for_references(&r);
        return Ok(Action::requeue(op.poll));
    }
    let on = reference(obj, kind);
    let mut owned = Vec::new();
    for o in &w.emit {
        owned.push(resource::emit_one(op, &on, &r, o).await?);
    }
    owned.sort();
    status.common.owned = owned;
    release_and_report(&report, &r, &entry, &w, status).await
}

/// What every end of a workload reconcile writes besides its standing.
struct Report<'a> {
    op: &'a Operator,
    kind: Kind,
    obj: &'a DynamicObject,
    old: &'a Status,
    capabilities: Condition,
    licensed: Condition,
}

impl Report<'_> {
    async fn finish(&self, status: Status, standing: Standing) -> Result<(), Error> {
        resource::finish(
            self.op,
            self.kind,
            self.obj,
            self.old,
            status,
            &standing,
            self.capabilities.clone(),
            self.licensed.clone(),
        )
        .await
    }
}

/// Install or upgrade the release when its inputs changed (heal it when
/// they did not), then report Ready once it and its workloads are.
async fn release_and_report(
    report: &Report<'_>,
    r: &Resource,
    entry: &WorkloadEntry,
    w: &workload::Workload,
    mut status: Status,
) -> Result<Action, Error> {
    let op = report.op;
    let on = reference(report.obj, report.kind);
    let wanted = release::WorkloadRelease {
        name: w.release.clone(),
        namespace: r.namespace.clone(),
        pin: entry.pin.clone(),
        values: w.values.clone(),
        owner: format!("{}/{}/{}", report.kind, r.namespace, r.name),
        pull_secrets: op.pull_secrets.names.clone(),
    };
    let current = release_info(op, &r.namespace, &w.release).await?;
    let step = plan::workload_step(current.as_ref(), &wanted.inputs_digest());
    if let WorkloadStep::NotOurs(message) = step {
        report.finish(status, Standing::NotOurs(message)).await?;
        return Ok(Action::requeue(Duration::from_secs(60)));
    }
    if let Err(e) = act(op, &on, &step, &wanted).await {
        report
            .finish(status, Standing::ReleaseFailed(e.to_string()))
            .await?;
        return Err(e);
    }
    let Some(rel) = release_info(op, &r.namespace, &w.release).await? else {
        return Ok(Action::requeue(op.poll));
    };
    if step == WorkloadStep::UpToDate && rel.ours && rel.status == crate::release::Status::Deployed
    {
        heal(op, &on, &rel, &wanted).await?;
    }
    status.fields.insert("release".into(), release_status(&rel));
    let why = unready(op, r, &rel, &w.ready_when).await?;
    let settled = why.is_none();
    let standing = match why {
        None => Standing::Ready(format!("release {} revision {}", rel.name, rel.revision)),
        Some(why) => Standing::Provisioning(why),
    };
    report.finish(status, standing).await?;
    if !settled {
        op.wait_for_own(r);
    }
    Ok(Action::requeue(if settled {
        op.settled_after(&r.uid)
    } else {
        op.poll
    }))
}

fn no_capabilities_needed(
    old: &Status,
    generation: Option<i64>,
) -> crate::operator::api::Condition {
    condition(
        &old.common.conditions,
        ConditionType::CapabilitiesReady,
        true,
        Reason::Ready,
        "a workload release needs no capability operator",
        generation,
    )
}

/// Why the resource is not Ready yet, if so: a workload of its release, or
/// a datastore its release waits for.
async fn unready(
    op: &Operator,
    r: &crate::operator::model::snapshot::Resource,
    rel: &ReleaseInfo,
    ready_when: &[crate::operator::decide::realise::ReadyWhen],
) -> Result<Option<String>, Error> {
    if let Some(why) = workloads_unready(op, &r.namespace, &rel.name).await? {
        return Ok(Some(why));
    }
    Ok(match resource::datastore_ready(op, r, ready_when).await? {
        (true, _) => None,
        (false, why) => Some(why),
    })
}

/// Puts back what drifted from our settled workload release (always in
/// `correct` mode: the pause annotation is how to keep hands off).
async fn heal(
    op: &Operator,
    on: &ObjectReference,
    rel: &ReleaseInfo,
    wanted: &release::WorkloadRelease,
) -> Result<(), Error> {
    let context = || wanted.context(op);
    let settled = super::drift::Settled {
        checker: &wanted.owner,
        busy: &format!("{}/{}", rel.namespace, rel.name),
        release: &rel.name,
        revision: rel.revision,
        namespace: &rel.namespace,
        context: &context,
        owner: crate::operator::model::owned::Owner::Workload,
        mode: crate::operator::decide::configure::DriftMode::Correct,
    };
    super::drift::heal(op, &settled, on).await.map(|_| ())
}

/// Carries out the release step: install or upgrade, with its Event and
/// metric; nothing when up to date.
async fn act(
    op: &Operator,
    on: &ObjectReference,
    step: &WorkloadStep,
    wanted: &release::WorkloadRelease,
) -> Result<(), Error> {
    let (verb, action) = match step {
        WorkloadStep::Install => ("Installed", "install"),
        WorkloadStep::Upgrade => ("Upgraded", "upgrade"),
        WorkloadStep::UpToDate | WorkloadStep::NotOurs(_) => return Ok(()),
    };
    let name = wanted.name.clone();
    match release::apply_workload(op, wanted.clone()).await {
        Ok(rel) => {
            op.made_release(&rel.namespace, &rel.name, rel.version);
            op.metrics.release_action(&rel.name, action, true);
            let note = format!(
                "release {} revision {} in namespace {}: chart {}-{}",
                rel.name,
                rel.version,
                rel.namespace,
                rel.chart_name(),
                rel.chart_version()
            );
            op.event(on, EventType::Normal, verb, note).await;
            Ok(())
        }
        Err(e) => {
            op.metrics.release_action(&name, action, false);
            let note = format!("release {name}: {e}");
            op.event(on, EventType::Warning, "Failed", note).await;
            Err(e)
        }
    }
}

/// Deletion: our release is uninstalled (a release of that name that is not
/// ours stays), then what we emitted goes; kube-runtime's finalizer helper
/// drops our finalizer once this returns Ok.
async fn cleanup(kind: Kind, obj: &DynamicObject, op: &Operator) -> Result<Action, Error> {
    let r = resource_from(kind, &serde_json::to_value(obj).unwrap_or_default());
    let old = resource::old_status(obj);
    if r.paused {
        return resource::pause(kind, obj, op, &old, true).await;
    }
    let entry = op
        .catalog
        .workload_for(kind.as_str())
        .cloned()
        .ok_or(Error::NoWorkloadChart(kind))?;
    let release_name = api::workloads::release_name(&entry.release_prefix, &r.name);
    let on = reference(obj, kind);
    if let Some(rel) = release_info(op, &r.namespace, &release_name)
        .await?
        .filter(|c| c.ours && c.is_live())
    {
        let result = release::uninstall_workload(op, &r.namespace, &rel.name).await;
        op.metrics
            .release_action(&rel.name, "uninstall", result.is_ok());
        result?;
        let note = format!(
            "release {} in namespace {}: the {kind} is being deleted",
            rel.name, rel.namespace
        );
        op.event(&on, EventType::Normal, "Uninstalled", note).await;
    }
    for o in &old.common.owned {
        if emit::delete_if_ours(op, o, &r.uid).await? {
            return Err(Error::CleanupPending(format!(
                "waiting for {} {}/{} to be deleted",
                o.kind, o.namespace, o.name
            )));
        }
    }
    Ok(Action::await_change())
}
