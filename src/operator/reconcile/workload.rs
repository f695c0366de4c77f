//! The controllers of the resources realised as a workload release of ours
//! (ChatUI, MeilisearchInstance): wait for references, install or upgrade
//! the release when its inputs (chart digest + computed values) differ from
//! those recorded on it, report Ready from the release and its workloads;
//! on delete, uninstall the release, then drop the finalizer. A release of
//! that name that is not ours is never touched.

use super::resource::{self, Status};
use super::{emit, reference, release, Error, Operator};
use crate::operator::api::Kind;
use crate::operator::api::{self, CommonStatus, Phase};
use crate::operator::decide::conditions::condition;
use crate::operator::decide::realise::workload;
use crate::operator::decide::verdict::Verdict;
use crate::operator::model::snapshot::{ReleaseInfo, Resource};
use k8s_openapi::api::apps::v1::{Deployment, StatefulSet};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DynamicObject, ListParams};
use kube::runtime::controller::Action;
use kube::runtime::events::EventType;
use kube::ResourceExt;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

pub async fn reconcile(
    kind: Kind,
    obj: Arc<DynamicObject>,
    op: Arc<Operator>,
) -> Result<Action, Error> {
    let key = format!(
        "{kind}/{}/{}",
        obj.namespace().unwrap_or_default(),
        obj.name_any()
    );
    super::measured(&op, kind, &key, reconcile_one(kind, &obj, &op)).await
}

pub fn error_policy(kind: Kind, obj: Arc<DynamicObject>, err: &Error, op: Arc<Operator>) -> Action {
    let key = format!(
        "{kind}/{}/{}",
        obj.namespace().unwrap_or_default(),
        obj.name_any()
    );
    super::retry(&op, kind, &key, err)
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

async fn reconcile_one(kind: Kind, obj: &DynamicObject, op: &Operator) -> Result<Action, Error> {
    let r = crate::operator::model::snapshot::resource_from(
        kind,
        &serde_json::to_value(obj).unwrap_or_default(),
    );
    let old = resource::old_status(obj);
    let Some(entry) = op.catalog.workload_for(kind.as_str()).cloned() else {
        return Err(Error::Release(format!(
            "the catalog has no workload chart for {kind}"
        )));
    };
    let release_name = api::workloads::release_name(&entry.release_prefix, &r.name);
    if r.deleting {
        return cleanup(kind, obj, op, &r, &old, &release_name).await;
    }
    resource::ensure_finalizer(op, kind, obj).await?;
    let on = reference(obj, kind);
    let generation = Some(r.generation);
    let planned = op.planned(&r.uid, r.generation).await?;
    let verdict = planned
        .verdicts
        .get(&r.uid)
        .cloned()
        .unwrap_or(Verdict::Licensed);
    if !verdict.is_licensed() {
        return resource::reject(kind, obj, op, &old, &verdict, &planned.tier).await;
    }
    let licensed = condition(
        &old.common.conditions,
        "Licensed",
        true,
        "Licensed",
        &verdict.message(&planned.tier),
        generation,
    );
    let caps = condition(
        &old.common.conditions,
        "CapabilitiesReady",
        true,
        "Ready",
        "a workload release needs no capability operator",
        generation,
    );
    let mut status = Status {
        common: CommonStatus {
            observed_generation: generation,
            owned: old.common.owned.clone(),
            ..Default::default()
        },
        fields: old.fields.clone(),
    };
    let report = |status: &mut Status, phase: Phase, ok: bool, reason: &str, message: &str| {
        status.common.phase = Some(phase);
        status.common.conditions = vec![
            condition(
                &old.common.conditions,
                "Ready",
                ok,
                reason,
                message,
                generation,
            ),
            caps.clone(),
            licensed.clone(),
        ];
    };

    let w = match workload::realise(&r, &entry.release_prefix, &resource::inputs(op, &r).await?) {
        Ok(w) => w,
        Err(e) => {
            let message = e.to_string();
            if old
                .common
                .conditions
                .iter()
                .find(|c| c.type_ == "Ready")
                .map(|c| c.message.as_str())
                != Some(message.as_str())
            {
                op.event(
                    &on,
                    EventType::Warning,
                    "Failed",
                    format!("invalid spec: {message}"),
                )
                .await;
            }
            report(&mut status, Phase::Failed, false, "InvalidSpec", &message);
            resource::write_status(op, kind, obj, &old, status).await?;
            return Ok(Action::await_change());
        }
    };
    if !w.waiting_for.is_empty() {
        let message = w.waiting_for.join("; ");
        if !resource::ready_says(&old, "Waiting", &message) {
            op.event(&on, EventType::Normal, "Waiting", message.clone())
                .await;
        }
        report(&mut status, Phase::Pending, false, "Waiting", &message);
        resource::write_status(op, kind, obj, &old, status).await?;
        return Ok(Action::requeue(op.poll));
    }
    let mut owned = Vec::new();
    for o in &w.emit {
        emit::apply(op, o).await?;
        owned.push(emit::owned_ref(o));
    }
    owned.sort();
    status.common.owned = owned;

    let wanted = release::WorkloadRelease {
        name: w.release.clone(),
        namespace: r.namespace.clone(),
        pin: entry.pin.clone(),
        values: w.values.clone(),
        owner: format!("{kind}/{}/{}", r.namespace, r.name),
    };
    let digest = wanted.inputs_digest();
    let current = release_info(op, &r.namespace, &w.release).await?;
    if let Some(c) = current.as_ref().filter(|c| !c.ours && c.is_live()) {
        let message = format!(
            "release {} in namespace {} exists and is not ours: it is never touched",
            c.name, c.namespace
        );
        report(&mut status, Phase::Failed, false, "NotOurs", &message);
        resource::write_status(op, kind, obj, &old, status).await?;
        return Ok(Action::requeue(Duration::from_secs(60)));
    }
    let up_to_date = current.as_ref().is_some_and(|c| {
        c.is_live() && c.inputs.as_deref() == Some(digest.as_str()) && c.status == "deployed"
    });
    if !up_to_date {
        let (verb, action) = if current.as_ref().is_some_and(|c| c.is_live()) {
            ("Upgraded", "upgrade")
        } else {
            ("Installed", "install")
        };
        match release::apply_workload(op, wanted).await {
            Ok(rel) => {
                op.metrics.release_action(&rel.name, action, true);
                op.event(
                    &on,
                    EventType::Normal,
                    verb,
                    format!(
                        "release {} revision {} in namespace {}: chart {}-{}",
                        rel.name,
                        rel.version,
                        rel.namespace,
                        rel.chart_name(),
                        rel.chart_version()
                    ),
                )
                .await;
            }
            Err(e) => {
                op.metrics.release_action(&w.release, action, false);
                op.event(
                    &on,
                    EventType::Warning,
                    "Failed",
                    format!("release {}: {e}", w.release),
                )
                .await;
                report(
                    &mut status,
                    Phase::Failed,
                    false,
                    "ReleaseFailed",
                    &e.to_string(),
                );
                resource::write_status(op, kind, obj, &old, status).await?;
                return Err(e);
            }
        }
    }
    let Some(rel) = release_info(op, &r.namespace, &w.release).await? else {
        return Ok(Action::requeue(op.poll));
    };
    status.fields.insert("release".into(), release_status(&rel));
    let mut why = workloads_unready(op, &r.namespace, &rel.name).await?;
    if why.is_none() {
        let (ok, reason) = resource::datastore_ready(op, &r, &w.ready_when).await?;
        if !ok {
            why = Some(reason);
        }
    }
    match &why {
        None => report(
            &mut status,
            Phase::Ready,
            true,
            "Ready",
            &format!("release {} revision {}", rel.name, rel.revision),
        ),
        Some(reason) => report(
            &mut status,
            Phase::Provisioning,
            false,
            "Provisioning",
            reason,
        ),
    }
    resource::write_status(op, kind, obj, &old, status).await?;
    Ok(if why.is_none() {
        Action::requeue(op.settled_after(&r.uid))
    } else {
        Action::requeue(op.poll)
    })
}

/// Deletion: our release is uninstalled (a release of that name that is not
/// ours stays), then what we emitted goes, then the finalizer.
async fn cleanup(
    kind: Kind,
    obj: &DynamicObject,
    op: &Operator,
    r: &Resource,
    old: &Status,
    release_name: &str,
) -> Result<Action, Error> {
    if !obj.finalizers().iter().any(|f| f == api::FINALIZER) {
        return Ok(Action::await_change());
    }
    let on = reference(obj, kind);
    if let Some(rel) = release_info(op, &r.namespace, release_name)
        .await?
        .filter(|c| c.ours && c.is_live())
    {
        let result = release::uninstall_workload(op, &r.namespace, &rel.name).await;
        op.metrics
            .release_action(&rel.name, "uninstall", result.is_ok());
        result?;
        op.event(
            &on,
            EventType::Normal,
            "Uninstalled",
            format!(
                "release {} in namespace {}: the {kind} is being deleted",
                rel.name, rel.namespace
            ),
        )
        .await;
    }
    for o in &old.common.owned {
        if emit::delete_if_ours(op, o, &r.uid).await? {
            return Ok(Action::requeue(op.poll));
        }
    }
    resource::remove_finalizer(op, kind, obj).await?;
    Ok(Action::await_change())
}
