//! Healing our releases (capability operators and workload releases): the
//! objects of a release that the watches saw change (`model::owned`) are
//! compared with what the release's stored manifest applied
//! (`decide::drift`) and, in `correct` mode, put back by server-side apply.
//! A correction re-applies; it writes no new Helm revision.

use super::{release, Error, Operator};
use crate::action::Context;
use crate::apply::objects::Object;
use crate::operator::decide::configure::DriftMode;
use crate::operator::decide::drift;
use crate::operator::decide::plan::{CapabilityPlan, Step};
use crate::operator::decide::provenance::Provenance;
use crate::operator::model::catalog::CapabilityEntry;
use crate::operator::model::owned::{ObjectKey, Owner};
use k8s_openapi::api::core::v1::ObjectReference;
use kube::runtime::events::EventType;

/// What a check found: the objects that drifted and their fields, as
/// "Kind namespace/name: fields". None: nothing was checked.
pub type Found = Option<Vec<String>>;

/// A settled release of ours, as a drift check needs it.
pub struct Settled<'a> {
    /// Whom the watches keep its changed objects for: the capability's
    /// name, or the owner annotation of a workload release.
    pub checker: &'a str,
    /// The key `Busy` holds it under while an action runs.
    pub busy: &'a str,
    pub release: &'a str,
    pub revision: i64,
    pub namespace: &'a str,
    /// Its action context, made only when there is something to look at
    /// (every settled reconcile asks; few find a suspect).
    pub context: &'a (dyn Fn() -> Context + Sync),
    pub owner: Owner,
    pub mode: DriftMode,
}

/// Checks our release of `entry` when it is settled and ours to heal.
pub async fn check(
    op: &Operator,
    entry: &CapabilityEntry,
    p: &CapabilityPlan,
    on: &ObjectReference,
) -> Result<Found, Error> {
    let Provenance::Owned(info) = &p.provenance else {
        return Ok(None);
    };
    if p.step != Step::Nothing || info.status != crate::release::Status::Deployed {
        return Ok(None);
    }
    let context = || release::context(op, entry, &p.settings);
    let settled = Settled {
        checker: &entry.name,
        busy: &entry.release,
        release: &entry.release,
        revision: info.revision,
        namespace: &entry.namespace,
        context: &context,
        owner: Owner::Capability,
        mode: p.settings.drift,
    };
    heal(op, &settled, on).await
}

/// Looks at the objects of a settled release that changed (all of them, the
/// first time a revision is looked at: what changed while no watch ran),
/// reports each that drifted and, in `correct` mode, puts it back.
pub async fn heal(op: &Operator, s: &Settled<'_>, on: &ObjectReference) -> Result<Found, Error> {
    let Some(watches) = op.owned.read().expect("lock").clone() else {
        return Ok(None);
    };
    if s.mode == DriftMode::Off {
        return Ok(None);
    }
    let suspects = watches.take_suspects(s.checker);
    let release_key = format!("{}/{}", s.namespace, s.release);
    let first_look = watches.first_look(&release_key, s.revision);
    if suspects.is_empty() && !first_look {
        return Ok(None);
    }
    // A revision we just applied only needs its watches started (a change
    // in the milliseconds before they list is left to the next restart's
    // first look); one found in place is compared object by object.
    let compare_all = first_look && !watches.was_made_here(&release_key, s.revision);
    if op.busy.lock().expect("lock").contains(s.busy) {
        watches.put_back(s.checker, suspects);
        return Ok(None);
    }
    let ctx = (s.context)();
    let rel = ctx
        .storage
        .get(s.release, s.revision)
        .await
        .map_err(|e| Error::from(crate::action::ActionError::from(e)))?;
    let mut objects =
        crate::apply::objects::parse_manifest(&rel.manifest, s.namespace).unwrap_or_default();
    op.cluster
        .resolve_scopes(&mut objects)
        .await
        .map_err(|e| Error::from(Box::new(e)))?;
    for (api_version, kind) in kinds(&objects) {
        op.watch_owned(&api_version, &kind, s.owner).await;
    }
    let opts = ctx.apply_options(s.release);
    let mut found = Vec::new();
    for o in objects
        .iter()
        .filter(|o| compare_all || suspects.contains(&key(o)))
    {
        if let Some(what) = put_back(op, s, on, &opts.prepared(o), o).await? {
            // Looked at again on the next reconcile (a change of mode, say).
            watches.put_back(s.checker, [key(o)].into());
            found.push(what);
        }
    }
    Ok(Some(found))
}

/// Compares one object of the release with what it applied; reports drift
/// and, in `correct` mode, puts it back. What drifted and stays so, if any.
async fn put_back(
    op: &Operator,
    s: &Settled<'_>,
    on: &ObjectReference,
    wanted: &serde_json::Value,
    o: &Object,
) -> Result<Option<String>, Error> {
    let api = op
        .cluster
        .api_for(o)
        .await
        .map_err(|e| Error::from(Box::new(e)))?;
    let live = super::emit::live(&api, &o.name).await?;
    let fields = drift::drifted(wanted, live.as_ref());
    if fields.is_empty() {
        return Ok(None);
    }
    let what = format!("{} {}: {}", o.kind, place(o), fields.join(", "));
    let note = format!("{what} differs from what release {} applied", s.release);
    // Named as the related object: one Event per object, not one series.
    let related = Some(reference_to(o));
    op.event_related(
        on,
        EventType::Warning,
        "DriftDetected",
        note,
        related.clone(),
    )
    .await;
    if s.mode != DriftMode::Correct {
        return Ok(Some(what));
    }
    super::emit::apply_ours(&api, &o.name, wanted, live.as_ref()).await?;
    let note = format!("{what} put back as release {} applied it", s.release);
    op.event_related(on, EventType::Normal, "DriftCorrected", note, related)
        .await;
    op.metrics.drift_corrected(&o.kind);
    tracing::info!(release = %s.release, object = %what, "drift corrected");
    Ok(None)
}

fn kinds(objects: &[Object]) -> std::collections::BTreeSet<(String, String)> {
    objects
        .iter()
        .map(|o| (o.api_version.clone(), o.kind.clone()))
        .collect()
}

fn key(o: &Object) -> ObjectKey {
    (
        o.api_version.clone(),
        o.kind.clone(),
        o.namespace.clone(),
        o.name.clone(),
    )
}

fn reference_to(o: &Object) -> ObjectReference {
    ObjectReference {
        api_version: Some(o.api_version.clone()),
        kind: Some(o.kind.clone()),
        namespace: (!o.namespace.is_empty()).then(|| o.namespace.clone()),
        name: Some(o.name.clone()),
        ..Default::default()
    }
}

fn place(o: &Object) -> String {
    if o.namespace.is_empty() {
        o.name.clone()
    } else {
        format!("{}/{}", o.namespace, o.name)
    }
}
