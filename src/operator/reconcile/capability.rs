//! The capability controller: for one catalog entry, observe, plan, carry
//! out the step (install, upgrade, recover, uninstall; adoption is only
//! recorded), then report on its `Capability` object.

use super::{reference, release, Error, Operator};
use crate::operator::api;
use crate::operator::api::capability::{CapabilityStatus, ReleaseLocation};
use crate::operator::api::{ConditionType, Reason};
use crate::operator::decide::conditions::condition;
use crate::operator::decide::plan::{self, CapabilityPlan, Step};
use crate::operator::decide::provenance::Provenance;
use crate::operator::model::catalog::CapabilityEntry;
use crate::operator::model::snapshot::Snapshot;
use k8s_openapi::api::core::v1::ObjectReference;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::events::EventType;
use kube::ResourceExt;
use std::sync::Arc;

const KIND: api::Kind = api::Kind::Capability;

pub async fn reconcile(obj: Arc<DynamicObject>, op: Arc<Operator>) -> Result<Action, Error> {
    super::measured(&op, KIND, &obj.name_any(), reconcile_one(&obj, &op)).await
}

pub fn error_policy(obj: Arc<DynamicObject>, err: &Error, op: Arc<Operator>) -> Action {
    super::retry(&op, KIND, &obj.name_any(), err)
}

async fn reconcile_one(obj: &DynamicObject, op: &Operator) -> Result<Action, Error> {
    let name = obj.name_any();
    let Some(entry) = op.catalog.capability(&name) else {
        // A Capability of another build's catalog: nothing of ours to manage.
        return Ok(Action::await_change());
    };
    let on = reference(obj, KIND);
    let old: CapabilityStatus = obj
        .data
        .get("status")
        .and_then(|s| serde_json::from_value(s.clone()).ok())
        .unwrap_or_default();
    let (p, snap) = decide(op, &name).await?;
    tracing::debug!(capability = %name, step = p.step.verb(), "planned");
    announce_settings(op, &on, &p, &old).await;
    let acted = match act(op, entry, &p, &snap).await {
        None => false,
        Some((reason, Ok(what))) => {
            tracing::info!(capability = %name, "{reason} {what}");
            op.event(&on, EventType::Normal, reason, format!("{reason} {what}"))
                .await;
            if configured_anew(&p) {
                let note = format!("spec.values took effect: {what}");
                op.event(&on, EventType::Normal, "Configured", note).await;
            }
            true
        }
        Some((_, Err(e))) => {
            let note = format!("{} of {name} failed: {e}", p.step.verb());
            op.event(&on, EventType::Warning, "Failed", note).await;
            let status = status_for(op, entry, &p, &old, Some(&e.to_string())).await;
            write_status(op, obj, &old, status).await?;
            return Err(e);
        }
    };
    if let Step::Adopt(evidence) = &p.step {
        announce_adoption(op, &on, entry, &p, &old, evidence).await;
    }
    // After an action, report what the cluster holds now.
    let p = if acted {
        fresh_plan(op, &name).await?.0
    } else {
        p
    };
    let drifted = super::drift::check(op, entry, &p, &on).await?;
    let mut status = status_for(op, entry, &p, &old, None).await;
    status.conditions.extend(drift_condition(&old, drifted));
    op.metrics.capability(
        &name,
        &status.installed_version,
        &status.provenance,
        status.ready,
    );
    write_status(op, obj, &old, status).await?;
    let settled = matches!(p.step, Step::Nothing | Step::Adopt(_) | Step::Suspended)
        && (p.readiness.ready || !p.needed || p.step == Step::Suspended);
    Ok(if settled && !acted {
        Action::requeue(op.settled_after(&name))
    } else {
        Action::requeue(op.poll)
    })
}

/// The capability's plan, decided on the watched view; a step that acts is
/// decided again on a fresh read, and acted on only if that agrees.
async fn decide(op: &Operator, name: &str) -> Result<(CapabilityPlan, Snapshot), Error> {
    let snap = op.observed().await?;
    let p = plan_of(op, &snap, name);
    if p.step.acts() {
        return fresh_plan(op, name).await;
    }
    Ok((p, snap))
}

async fn fresh_plan(op: &Operator, name: &str) -> Result<(CapabilityPlan, Snapshot), Error> {
    let snap = op.snapshot().await?;
    Ok((plan_of(op, &snap, name), snap))
}

fn plan_of(op: &Operator, snap: &Snapshot, name: &str) -> CapabilityPlan {
    plan::capability(&plan::capabilities(&op.catalog, snap), name)
        .expect("every catalog entry is planned")
        .clone()
}

/// Carries out the plan's release step, if it has one: the Event reason
/// and what was done, or why it failed.
async fn act(
    op: &Operator,
    entry: &CapabilityEntry,
    p: &CapabilityPlan,
    snap: &Snapshot,
) -> Option<(&'static str, Result<String, Error>)> {
    let (verb, reason) = match &p.step {
        Step::Install => ("install", "Installed"),
        Step::Upgrade { .. } => ("upgrade", "Upgraded"),
        Step::Recover { revision } => {
            tracing::info!(capability = %entry.name, revision, "recovering a release an interrupted run left pending");
            ("upgrade", "Upgraded")
        }
        Step::Uninstall => ("uninstall", "Uninstalled"),
        _ => return None,
    };
    let result = if verb == "uninstall" {
        release::uninstall(op, entry).await
    } else {
        release::install_or_upgrade(op, entry, &p.settings, snap).await
    };
    op.metrics
        .release_action(&entry.release, verb, result.is_ok());
    Some((reason, result))
}

/// With `spec.drift: warn`, what drifted and stays so; kept as it was when
/// nothing was checked.
fn drift_condition(
    old: &CapabilityStatus,
    found: super::drift::Found,
) -> Option<crate::operator::api::Condition> {
    let Some(drifted) = found else {
        return old
            .conditions
            .iter()
            .find(|c| c.type_ == ConditionType::Drifted.as_str())
            .cloned();
    };
    let before = old
        .conditions
        .iter()
        .find(|c| c.type_ == ConditionType::Drifted.as_str());
    // Reported once something drifted under `warn`: a first look that
    // finds nothing writes nothing.
    if drifted.is_empty() && before.is_none() {
        return None;
    }
    let (reason, message) = if drifted.is_empty() {
        (Reason::NoDrift, String::new())
    } else {
        (Reason::DriftDetected, drifted.join("; "))
    };
    Some(condition(
        &old.conditions,
        ConditionType::Drifted,
        !drifted.is_empty(),
        reason,
        &message,
        None,
    ))
}

/// Whether the step carries new `spec.values` into our release.
fn configured_anew(p: &CapabilityPlan) -> bool {
    let before = match &p.provenance {
        Provenance::Owned(r) => r.configured.as_ref(),
        _ => None,
    };
    matches!(p.step, Step::Install | Step::Upgrade { .. })
        && p.settings.configured.is_some()
        && before != p.settings.configured.as_ref()
}

/// The admin's spec, announced once per change: refused values or drift
/// mode (Warning), suspended and resumed.
async fn announce_settings(
    op: &Operator,
    on: &ObjectReference,
    p: &CapabilityPlan,
    old: &CapabilityStatus,
) {
    let was = |t: ConditionType| old.conditions.iter().find(|c| c.type_ == t.as_str());
    let configured = settings_conditions(p, &[]);
    let now_refused = &configured[0];
    if now_refused.status == "False"
        && now_refused.reason == Reason::Refused.as_str()
        && was(ConditionType::Configured).map(|c| &c.message) != Some(&now_refused.message)
    {
        op.event(
            on,
            EventType::Warning,
            "Configured",
            now_refused.message.clone(),
        )
        .await;
    }
    let suspended_before = was(ConditionType::Suspended).is_some_and(|c| c.status == "True");
    let suspended = p.settings.suspend && !matches!(p.step, Step::Adopt(_));
    if suspended != suspended_before && (suspended || was(ConditionType::Suspended).is_some()) {
        let (reason, note) = if suspended {
            ("Suspended", "spec.suspend is true: our release is left as it is (no install, upgrade, uninstall or drift correction)")
        } else {
            ("Resumed", "spec.suspend is false: reconciling again")
        };
        op.event(on, EventType::Normal, reason, note.into()).await;
    }
}

/// The Configured and Suspended conditions the admin's spec gives.
fn settings_conditions(
    p: &CapabilityPlan,
    old: &[crate::operator::api::Condition],
) -> Vec<crate::operator::api::Condition> {
    use crate::operator::decide::configure::Configuration;
    let s = &p.settings;
    let adopted = matches!(p.step, Step::Adopt(_));
    let asks = s.configuration != Configuration::Catalog || s.drift_refused.is_some();
    let (ok, reason, message) = match (&s.configuration, &s.drift_refused) {
        _ if adopted && asks => (
            false,
            Reason::NotOurs,
            "installed by someone else: spec.values and spec.drift have no effect on it"
                .to_string(),
        ),
        (Configuration::Refused(why), _) => (
            false,
            Reason::Refused,
            format!("{why}; the release keeps its last accepted values"),
        ),
        (_, Some(why)) => (false, Reason::Refused, why.clone()),
        (Configuration::Accepted, None) => (
            true,
            Reason::Configured,
            format!(
                "spec.values merged over the catalog's values; drift: {}",
                s.drift.as_str()
            ),
        ),
        (Configuration::Catalog, None) => (
            true,
            Reason::CatalogValues,
            format!("the catalog's values; drift: {}", s.drift.as_str()),
        ),
    };
    let suspended = s.suspend && !adopted;
    vec![
        condition(old, ConditionType::Configured, ok, reason, &message, None),
        condition(
            old,
            ConditionType::Suspended,
            suspended,
            if suspended {
                Reason::Suspended
            } else {
                Reason::Resumed
            },
            if suspended {
                "spec.suspend is true"
            } else {
                ""
            },
            None,
        ),
    ]
}

/// An adopted capability is announced once per change of where it is.
async fn announce_adoption(
    op: &Operator,
    on: &ObjectReference,
    entry: &CapabilityEntry,
    p: &CapabilityPlan,
    old: &CapabilityStatus,
    evidence: &impl std::fmt::Display,
) {
    let found = p
        .provenance
        .location(entry)
        .map(|(name, namespace)| ReleaseLocation { name, namespace });
    if old.provenance != "adopted" || old.release != found {
        let note = format!(
            "{} is installed by someone else ({evidence}); recorded, never touched",
            entry.name
        );
        op.event(on, EventType::Normal, "Adopted", note).await;
    }
}

async fn status_for(
    op: &Operator,
    entry: &crate::operator::model::catalog::CapabilityEntry,
    p: &CapabilityPlan,
    old: &CapabilityStatus,
    failure: Option<&str>,
) -> CapabilityStatus {
    let installed_version = release::installed_version(&op.client, &p.provenance).await;
    let (ready_reason, ready_message) = if p.readiness.ready {
        (Reason::Ready, String::new())
    } else if matches!(p.provenance, Provenance::Absent) {
        (Reason::NotInstalled, p.readiness.reason.clone())
    } else {
        (Reason::NotReady, p.readiness.reason.clone())
    };
    let step_message = match &p.step {
        Step::Wait { reason } | Step::HoldUninstall { reason } | Step::Upgrade { reason } => {
            reason.clone()
        }
        Step::Adopt(e) => e.to_string(),
        _ => String::new(),
    };
    let mut conditions = vec![condition(
        &old.conditions,
        ConditionType::Ready,
        p.readiness.ready,
        ready_reason,
        &ready_message,
        None,
    )];
    conditions.push(match failure {
        Some(e) => condition(
            &old.conditions,
            ConditionType::Progressing,
            false,
            Reason::Failed,
            e,
            None,
        ),
        None => condition(
            &old.conditions,
            ConditionType::Progressing,
            true,
            step_reason(&p.step),
            &step_message,
            None,
        ),
    });
    conditions.extend(settings_conditions(p, &old.conditions));
    if matches!(p.provenance, Provenance::Owned(_)) {
        let pull = super::pull_secrets::condition(op, &entry.namespace, &old.conditions, None);
        conditions.extend(pull.await);
    }
    CapabilityStatus {
        provenance: p.provenance.as_str().into(),
        needed: p.needed,
        consumer_count: p.consumers.len() as i64,
        consumers: p.consumers.clone(),
        bundled_version: entry.pin.version.clone(),
        installed_version,
        release: p
            .provenance
            .location(entry)
            .map(|(name, namespace)| ReleaseLocation { name, namespace }),
        ready: p.readiness.ready,
        conditions,
    }
}

fn step_reason(s: &Step) -> Reason {
    match s {
        Step::Nothing => Reason::UpToDate,
        Step::Adopt(_) => Reason::Adopted,
        Step::Install => Reason::Installing,
        Step::Upgrade { .. } => Reason::Upgrading,
        Step::Recover { .. } => Reason::Recovering,
        Step::Wait { .. } => Reason::WaitingForPrerequisites,
        Step::Uninstall => Reason::Uninstalling,
        Step::HoldUninstall { .. } => Reason::UninstallHeld,
        Step::Suspended => Reason::Suspended,
    }
}

/// Writes the status only when it changed: a converged reconcile writes nothing.
async fn write_status(
    op: &Operator,
    obj: &DynamicObject,
    old: &CapabilityStatus,
    new: CapabilityStatus,
) -> Result<(), Error> {
    if *old == new && obj.data.get("status").is_some() {
        return Ok(());
    }
    let api: Api<DynamicObject> = Api::all_with(op.client.clone(), &KIND.api_resource());
    let body = serde_json::json!({
        "apiVersion": api::API_VERSION,
        "kind": KIND,
        "status": new,
    });
    api.patch_status(
        &obj.name_any(),
        &PatchParams::apply(crate::action::DEFAULT_FIELD_MANAGER).force(),
        &Patch::Apply(&body),
    )
    .await?;
    Ok(())
}
