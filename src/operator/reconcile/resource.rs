//! The controllers of the resources realised as emitted objects
//! (PostgresCluster, ClickHouseCluster, Gateway): validate the spec, wait
//! for the references and capabilities it needs, emit the upstream objects,
//! collect what it no longer wants, report Ready from what was emitted or
//! referenced; on delete, remove what we emitted (never an adopted object),
//! then drop the finalizer, after which the capability controller releases
//! the capability operator. What differs per kind is `realise`'s.

use super::{emit, reference, release, Error, Operator};
use crate::operator::api::{
    self, CapabilityUse, CommonStatus, Condition, ConditionType, Kind, Phase, Reason,
};
use crate::operator::decide::conditions::condition;
use crate::operator::decide::plan;
use crate::operator::decide::realise::{self, Inputs, PasswordSource, ReadyWhen};
use crate::operator::decide::standing::{self, Standing};
use crate::operator::decide::verdict::Verdict;
use crate::operator::model::licensing::Tier;
use crate::operator::model::snapshot::{resource_from, Resource};
use base64::Engine;
use k8s_openapi::api::core::v1::ObjectReference;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::events::EventType;
use kube::runtime::finalizer::Event;
use kube::ResourceExt;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// A resource's status: the common shape, plus the kind's own fields
/// (`connectionSecret`, `mode`, `type`, `endpoint`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub(super) struct Status {
    #[serde(flatten)]
    pub(super) common: CommonStatus,
    #[serde(flatten)]
    pub(super) fields: serde_json::Map<String, Value>,
}

impl Status {
    /// A status being made for `generation`, keeping what we own until
    /// this reconcile knows better.
    pub(super) fn observing(generation: Option<i64>, old: &Status) -> Status {
        Status {
            common: CommonStatus {
                observed_generation: generation,
                owned: old.common.owned.clone(),
                ..Default::default()
            },
            ..Default::default()
        }
    }
}

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

/// A resource's API; SecretsManagement is cluster-scoped (no namespace).
pub(super) fn api(op: &Operator, kind: Kind, namespace: &str) -> Api<DynamicObject> {
    if namespace.is_empty() {
        Api::all_with(op.client.clone(), &kind.api_resource())
    } else {
        Api::namespaced_with(op.client.clone(), namespace, &kind.api_resource())
    }
}

pub(super) fn old_status(obj: &DynamicObject) -> Status {
    obj.data
        .get("status")
        .and_then(|s| serde_json::from_value(s.clone()).ok())
        .unwrap_or_default()
}

/// What realise needs from the cluster: the password our connection Secret
/// keeps (a fresh one the first time), or the one an adopted object names.
pub(super) async fn inputs(op: &Operator, r: &Resource) -> Result<Inputs, Error> {
    let password = password(op, r).await?;
    let references = references(op, r).await?;
    Ok(Inputs {
        password,
        connection: connection(op, r, &references).await?,
        references,
        generated: generated(op, r).await?,
        copied: copied(op, r).await?,
        release_prefix: String::new(),
    })
}

/// One key of a Secret as read from the API, decoded; None when absent or
/// not text.
fn secret_value(secret: &Value, key: &str) -> Option<String> {
    secret
        .pointer(&format!("/data/{key}"))
        .and_then(Value::as_str)
        .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
        .and_then(|b| String::from_utf8(b).ok())
}

/// A Secret's key in the resource's namespace, if both exist.
async fn read_key(
    op: &Operator,
    r: &Resource,
    secret: &str,
    key: &str,
) -> Result<Option<String>, Error> {
    let found = emit::get(op, "v1", "Secret", &r.namespace, secret).await?;
    Ok(found.and_then(|s| secret_value(&s, key)))
}

async fn password(op: &Operator, r: &Resource) -> Result<Option<String>, Error> {
    Ok(match realise::password_source(r) {
        PasswordSource::None => None,
        PasswordSource::Keep { secret, key } => Some(
            read_key(op, r, &secret, &key)
                .await?
                .unwrap_or_else(fresh_password),
        ),
        PasswordSource::Adopted {
            api_version,
            kind,
            name,
        } => {
            let adopted = emit::get(op, &api_version, &kind, &r.namespace, &name).await?;
            match adopted.and_then(|a| realise::clickhouse::adopted_password_ref(&a)) {
                None => None,
                Some((secret, key)) => read_key(op, r, &secret, &key).await?,
            }
        }
    })
}

/// The resources the realisation reads, as they are now.
async fn references(op: &Operator, r: &Resource) -> Result<BTreeMap<(Kind, String), Value>, Error> {
    let mut references = BTreeMap::new();
    for (kind, name) in realise::references(r) {
        let ar = kind.api_resource();
        let api: Api<DynamicObject> = if !kind.namespaced() {
            Api::all_with(op.client.clone(), &ar)
        } else {
            Api::namespaced_with(op.client.clone(), &r.namespace, &ar)
        };
        if let Some(found) = api.get_opt(&name).await? {
            let found = serde_json::to_value(found).unwrap_or_default();
            references.insert((kind, name), found);
        }
    }
    Ok(references)
}

/// A workload wired to datastores reads where they are (never their
/// passwords: those stay in their Secrets, referenced by name).
async fn connection(
    op: &Operator,
    r: &Resource,
    references: &BTreeMap<(Kind, String), Value>,
) -> Result<BTreeMap<String, BTreeMap<String, String>>, Error> {
    let mut connection = BTreeMap::new();
    if r.kind != "Observability" {
        return Ok(connection);
    }
    for found in references.values() {
        let Some(secret) = found
            .pointer("/status/connectionSecret")
            .and_then(Value::as_str)
        else {
            continue;
        };
        if let Some(s) = emit::get(op, "v1", "Secret", &r.namespace, secret).await? {
            let fields = realise::CONNECTION_FIELDS
                .iter()
                .filter_map(|k| secret_value(&s, k).map(|v| (k.to_string(), v)))
                .collect();
            connection.insert(secret.to_string(), fields);
        }
    }
    Ok(connection)
}

/// Values the operator generates once and then keeps in its Secret.
async fn generated(op: &Operator, r: &Resource) -> Result<BTreeMap<String, String>, Error> {
    let mut generated = BTreeMap::new();
    if let Some((secret, keys)) = realise::generated(r) {
        let kept = emit::get(op, "v1", "Secret", &r.namespace, &secret).await?;
        for (key, how) in keys {
            let value = kept
                .as_ref()
                .and_then(|s| secret_value(s, key))
                .unwrap_or_else(|| fresh(how));
            generated.insert(key.to_string(), value);
        }
    }
    Ok(generated)
}

/// Keys of the admin's Secrets that the realisation copies into ours.
async fn copied(op: &Operator, r: &Resource) -> Result<BTreeMap<(String, String), String>, Error> {
    let mut copied = BTreeMap::new();
    let wanted = realise::of(r.kind)
        .map(|k| k.copied_keys(r))
        .unwrap_or_default();
    for (secret, key) in wanted {
        if let Some(value) = read_key(op, r, &secret, &key).await? {
            copied.insert((secret, key), value);
        }
    }
    Ok(copied)
}

fn fresh(how: realise::Generated) -> String {
    use rand::distributions::{Alphanumeric, DistString};
    match how {
        realise::Generated::Alphanumeric(n) => {
            Alphanumeric.sample_string(&mut rand::rngs::OsRng, n)
        }
        realise::Generated::Hex(n) => (0..n)
            .map(|_| {
                char::from_digit(rand::Rng::gen_range(&mut rand::rngs::OsRng, 0..16), 16)
                    .expect("a digit")
            })
            .collect(),
    }
}

fn fresh_password() -> String {
    use rand::distributions::{Alphanumeric, DistString};
    Alphanumeric.sample_string(&mut rand::rngs::OsRng, 32)
}

/// One reconcile of a live resource: read what the decision needs, let
/// `realise` and the plan decide, emit and collect, report.
async fn apply(kind: Kind, obj: &DynamicObject, op: &Operator) -> Result<Action, Error> {
    let r = resource_from(kind, &serde_json::to_value(obj).unwrap_or_default());
    let old = old_status(obj);
    if r.paused {
        return pause(kind, obj, op, &old, false).await;
    }
    if let Some(note) = standing::resumed(&old.common.conditions) {
        op.note(&reference(obj, kind), note).await;
    }
    let planned = op.planned(&r.uid, r.generation).await?;
    let verdict = planned.verdict(&r.uid);
    if !verdict.is_licensed() {
        return reject(kind, obj, op, &old, &verdict, &planned.tier).await;
    }
    let generation = Some(r.generation);
    let licensed = licensed_condition(&old, &verdict, &planned.tier, generation);
    let mut status = Status::observing(generation, &old);
    let realised = match realise::realise(&r, &inputs(op, &r).await?) {
        Ok(x) => x,
        Err(e) => {
            let message = e.to_string();
            let caps = condition(
                &old.common.conditions,
                ConditionType::CapabilitiesReady,
                false,
                Reason::InvalidSpec,
                &message,
                generation,
            );
            let standing = Standing::Invalid(message);
            finish(op, kind, obj, &old, status, &standing, caps, licensed).await?;
            return Ok(Action::await_change());
        }
    };
    status.fields = realised.status.clone();
    let (uses, unready) = capability_uses(op, &planned, &realised.needs).await;
    status.common.capabilities = uses;
    let caps = capabilities_condition(&old, &unready, generation);
    // References first: a PostgresCluster not Ready yet is the first thing
    // a Gateway waits for.
    let waits: Vec<String> = realised
        .waiting_for
        .iter()
        .chain(&unready)
        .cloned()
        .collect();
    if !waits.is_empty() {
        let standing = Standing::Waiting(waits.join("; "));
        finish(op, kind, obj, &old, status, &standing, caps, licensed).await?;
        if !realised.waiting_for.is_empty() {
            op.wait_for_references(&r);
        }
        return Ok(Action::requeue(op.poll));
    }
    let on = reference(obj, kind);
    status.common.owned = emit_and_collect(op, &on, &r, &old.common.owned, &realised.emit).await?;
    let (ready, why) = datastore_ready(op, &r, &realised.ready_when).await?;
    let standing = if ready {
        Standing::Ready(ready_message(&realised))
    } else {
        Standing::Provisioning(why)
    };
    finish(op, kind, obj, &old, status, &standing, caps, licensed).await?;
    Ok(if ready {
        Action::requeue(until_expiry(&planned.tier).min(op.settled_after(&r.uid)))
    } else {
        op.wait_for_own(&r);
        Action::requeue(op.poll)
    })
}

pub(super) fn licensed_condition(
    old: &Status,
    verdict: &Verdict,
    tier: &Tier,
    generation: Option<i64>,
) -> Condition {
    condition(
        &old.common.conditions,
        ConditionType::Licensed,
        true,
        Reason::Licensed,
        &verdict.message(tier),
        generation,
    )
}

/// Each capability operator the resource needs, as found now, and why
/// those that are not Ready are not.
async fn capability_uses(
    op: &Operator,
    planned: &super::Planned,
    needs: &[String],
) -> (Vec<CapabilityUse>, Vec<String>) {
    let mut uses = Vec::new();
    let mut unready = Vec::new();
    for need in needs {
        let Some(p) = plan::capability(&planned.capabilities, need) else {
            continue;
        };
        let entry = op
            .catalog
            .capability(need)
            .expect("planned from the catalog");
        let location = p.provenance.location(entry);
        uses.push(CapabilityUse {
            name: need.clone(),
            chart_version: release::installed_version(&op.client, &p.provenance).await,
            provenance: p.provenance.as_str().into(),
            release: location.as_ref().map(|l| l.0.clone()).unwrap_or_default(),
            namespace: location.map(|l| l.1).unwrap_or_default(),
            ready: p.readiness.ready,
        });
        if !p.readiness.ready {
            unready.push(format!(
                "capability {need} is not Ready: {}",
                p.readiness.reason
            ));
        }
    }
    (uses, unready)
}

fn capabilities_condition(old: &Status, unready: &[String], generation: Option<i64>) -> Condition {
    let (ok, reason, message) = if unready.is_empty() {
        (true, Reason::Ready, String::new())
    } else {
        (false, Reason::Waiting, unready.join("; "))
    };
    condition(
        &old.common.conditions,
        ConditionType::CapabilitiesReady,
        ok,
        reason,
        &message,
        generation,
    )
}

/// Applies what is wanted, then deletes what we emitted before and no
/// longer want; the objects we own afterwards, sorted.
async fn emit_and_collect(
    op: &Operator,
    on: &ObjectReference,
    r: &Resource,
    before: &[api::OwnedObject],
    wanted: &[Value],
) -> Result<Vec<api::OwnedObject>, Error> {
    let mut owned: Vec<api::OwnedObject> = Vec::new();
    for o in wanted {
        owned.push(emit_one(op, on, r, o).await?);
    }
    for gone in crate::operator::decide::gc::unwanted(before, &owned) {
        if emit::delete_if_ours(op, &gone, &r.uid).await? {
            owned.push(gone);
            continue;
        }
        let note = format!(
            "deleted {} {}/{}: the spec no longer asks for it",
            gone.kind, gone.namespace, gone.name
        );
        let related = Some(object_reference(&gone));
        op.event_related(on, EventType::Normal, "GarbageCollected", note, related)
            .await;
    }
    owned.sort();
    Ok(owned)
}

/// Applies one object emitted for `r`, announcing drift that the write put
/// back; the object as `status.owned` lists it.
pub(super) async fn emit_one(
    op: &Operator,
    on: &ObjectReference,
    r: &Resource,
    o: &Value,
) -> Result<api::OwnedObject, Error> {
    let emitted = match emit::apply(op, o).await {
        Ok(e) => e,
        Err(e) => {
            let note = format!("applying {}: {e}", describe(o));
            op.event(on, EventType::Warning, "Failed", note).await;
            return Err(e);
        }
    };
    let this = emit::owned_ref(o);
    if let emit::Emitted::Written(fields) = emitted {
        if put_back(op, r, &this).await {
            corrected(op, on, &this, &fields).await;
        }
    }
    Ok(this)
}

/// Whether a write of `o` put back what an unchanged spec had realised:
/// the resource as last written (read afresh, since the controller's copy
/// may lag behind our own status write) had realised its current spec and
/// recorded `o` as ours. Asked only after a write.
async fn put_back(op: &Operator, r: &Resource, o: &api::OwnedObject) -> bool {
    let Ok(Some(fresh)) = api(op, r.kind, &r.namespace).get_opt(&r.name).await else {
        return false;
    };
    let last = old_status(&fresh);
    last.common.observed_generation == fresh.metadata.generation && last.common.owned.contains(o)
}

/// Announces drift of an emitted object that was just put back.
async fn corrected(op: &Operator, on: &ObjectReference, o: &api::OwnedObject, fields: &[String]) {
    let what = format!("{} {}/{}", o.kind, o.namespace, o.name);
    let fields = fields.join(", ");
    let related = Some(object_reference(o));
    let detected = format!("{what} differs from what we applied: {fields}");
    op.event_related(
        on,
        EventType::Warning,
        "DriftDetected",
        detected,
        related.clone(),
    )
    .await;
    let put_back = format!("{what} put back as we applied it: {fields}");
    op.event_related(on, EventType::Normal, "DriftCorrected", put_back, related)
        .await;
    op.metrics.drift_corrected(&o.kind);
    tracing::info!(object = %what, %fields, "drift corrected");
}

/// Writes down where the resource stands (status, and the Event when what
/// is reported changed).
#[allow(clippy::too_many_arguments)]
pub(super) async fn finish(
    op: &Operator,
    kind: Kind,
    obj: &DynamicObject,
    old: &Status,
    mut status: Status,
    standing: &Standing,
    capabilities: Condition,
    licensed: Condition,
) -> Result<(), Error> {
    let generation = status.common.observed_generation;
    let report = standing::report(
        &old.common.conditions,
        standing,
        capabilities,
        licensed,
        generation,
    );
    status.common.phase = Some(report.phase);
    status.common.conditions = report.conditions;
    let ns = obj.namespace().unwrap_or_default();
    let pull = super::pull_secrets::condition(op, &ns, &old.common.conditions, generation).await;
    status.common.conditions.extend(pull);
    if let Some(note) = report.note {
        op.note(&reference(obj, kind), note).await;
    }
    write_status(op, kind, obj, old, status).await
}

/// How long until the license expires: the next look must not be later,
/// since expiry changes what is allowed with nothing else changing.
fn until_expiry(tier: &Tier) -> Duration {
    match tier {
        Tier::Licensed(p) => {
            (p.expires - chrono::Utc::now())
                .to_std()
                .unwrap_or_default()
                + Duration::from_secs(1)
        }
        Tier::Free { .. } => Duration::MAX,
    }
}

/// A resource the license does not cover: reported, never acted for, and
/// nothing of what it has is deleted. It is looked at again on a license
/// change (watched) and every few polls (an older resource may go).
pub(super) async fn reject(
    kind: Kind,
    obj: &DynamicObject,
    op: &Operator,
    old: &Status,
    verdict: &Verdict,
    tier: &Tier,
) -> Result<Action, Error> {
    let generation = Some(obj.metadata.generation.unwrap_or_default());
    let message = verdict.message(tier);
    let report = standing::rejected(
        &old.common.conditions,
        verdict.reason(),
        &message,
        generation,
    );
    let mut status = old.clone();
    status.common.phase = Some(report.phase);
    status.common.observed_generation = generation;
    status.common.conditions = report.conditions;
    if let Some(note) = report.note {
        op.note(&reference(obj, kind), note).await;
    }
    write_status(op, kind, obj, old, status).await?;
    Ok(Action::requeue(op.poll * 5))
}

/// Paused by the annotation: report it and write nothing else; a deletion
/// keeps our finalizer until the pause is lifted.
pub(super) async fn pause(
    kind: Kind,
    obj: &DynamicObject,
    op: &Operator,
    old: &Status,
    deleting: bool,
) -> Result<Action, Error> {
    let generation = obj.metadata.generation;
    let phase = old.common.phase.unwrap_or(Phase::Pending);
    let report = standing::paused(&old.common.conditions, phase, deleting, generation);
    let mut status = old.clone();
    status.common.phase = Some(report.phase);
    status.common.conditions = report.conditions;
    if let Some(note) = report.note {
        op.note(&reference(obj, kind), note).await;
    }
    write_status(op, kind, obj, old, status).await?;
    if deleting {
        return Err(Error::Paused);
    }
    Ok(Action::await_change())
}

/// What a Ready resource offers its consumers.
fn ready_message(realised: &realise::Realised) -> String {
    if let Some(secret) = realised.connection_secret() {
        return format!("connection Secret {secret}");
    }
    match realised.status.get("endpoint").and_then(Value::as_str) {
        Some(endpoint) => format!("endpoint {endpoint}"),
        None => String::new(),
    }
}

pub(super) fn object_reference(
    o: &api::OwnedObject,
) -> k8s_openapi::api::core::v1::ObjectReference {
    k8s_openapi::api::core::v1::ObjectReference {
        api_version: Some(o.api_version.clone()),
        kind: Some(o.kind.clone()),
        namespace: Some(o.namespace.clone()),
        name: Some(o.name.clone()),
        ..Default::default()
    }
}

fn describe(o: &Value) -> String {
    format!(
        "{} {}/{}",
        o["kind"].as_str().unwrap_or_default(),
        o["metadata"]["namespace"].as_str().unwrap_or_default(),
        o["metadata"]["name"].as_str().unwrap_or_default()
    )
}

/// The first unmet readiness check, or Ready.
pub(super) async fn datastore_ready(
    op: &Operator,
    r: &Resource,
    checks: &[ReadyWhen],
) -> Result<(bool, String), Error> {
    for check in checks {
        let (ready, why) = check_ready(op, r, check).await?;
        if !ready {
            return Ok((false, why));
        }
    }
    Ok((true, String::new()))
}

pub(super) async fn check_ready(
    op: &Operator,
    r: &Resource,
    when: &ReadyWhen,
) -> Result<(bool, String), Error> {
    let ns = &r.namespace;
    Ok(match when {
        ReadyWhen::ConditionReady {
            api_version,
            kind,
            name,
        } => match emit::get(op, api_version, kind, ns, name).await? {
            None => (false, format!("{kind} {ns}/{name} does not exist")),
            Some(o) => {
                let ready = o
                    .pointer("/status/conditions")
                    .and_then(Value::as_array)
                    .is_some_and(|cs| {
                        cs.iter()
                            .any(|c| c["type"] == "Ready" && c["status"] == "True")
                    });
                if ready {
                    (true, String::new())
                } else {
                    (
                        false,
                        format!("{kind} {ns}/{name} does not report Ready=True yet"),
                    )
                }
            }
        },
        ReadyWhen::StatusEquals {
            api_version,
            kind,
            name,
            pointer,
            value,
        } => match emit::get(op, api_version, kind, ns, name).await? {
            None => (false, format!("{kind} {ns}/{name} does not exist")),
            Some(o) => {
                let found = o.pointer(pointer).and_then(Value::as_str);
                if found == Some(value.as_str()) {
                    (true, String::new())
                } else {
                    let field = pointer.trim_start_matches('/').replace('/', ".");
                    (
                        false,
                        format!(
                            "{kind} {ns}/{name} reports {field} {}, not {value} yet",
                            found.map_or("unset".to_string(), |f| format!("{f:?}"))
                        ),
                    )
                }
            }
        },
        ReadyWhen::SecretKeys { name, keys } => {
            match emit::get(op, "v1", "Secret", ns, name).await? {
                None => (false, format!("Secret {ns}/{name} does not exist")),
                Some(s) => {
                    let missing = realise::missing_keys(Some(&s), keys);
                    if missing.is_empty() {
                        (true, String::new())
                    } else {
                        (
                            false,
                            format!("Secret {ns}/{name} lacks key {}", missing.join(", ")),
                        )
                    }
                }
            }
        }
    })
}

/// Deletion: the objects we emitted go first; kube-runtime's finalizer
/// helper drops our finalizer once this returns Ok, so while any is still
/// there this is `CleanupPending`. Releasing the capability is the
/// capability controller's, which no longer counts this resource and waits
/// for the emitted objects too.
async fn cleanup(kind: Kind, obj: &DynamicObject, op: &Operator) -> Result<Action, Error> {
    let r = resource_from(kind, &serde_json::to_value(obj).unwrap_or_default());
    let old = old_status(obj);
    if r.paused {
        return pause(kind, obj, op, &old, true).await;
    }
    let on = reference(obj, kind);
    let mut remaining = Vec::new();
    for o in emitted_or_wanted(&r, &old) {
        if emit::delete_if_ours(op, &o, &r.uid).await? {
            remaining.push(o);
        } else if old.common.owned.contains(&o) {
            let note = format!(
                "deleted {} {}/{}: the {kind} is being deleted",
                o.kind, o.namespace, o.name
            );
            let related = Some(object_reference(&o));
            op.event_related(&on, EventType::Normal, "GarbageCollected", note, related)
                .await;
        }
    }
    let mut status = old.clone();
    status.common.phase = Some(Phase::Deleting);
    status.common.owned = remaining.clone();
    if remaining.is_empty() {
        write_status(op, kind, obj, &old, status).await?;
        return Ok(Action::await_change());
    }
    let message = format!(
        "waiting for {} to be deleted",
        what_holds(op, &remaining).await?.join(", ")
    );
    let report = standing::deleting(&old.common.conditions, &message, Some(r.generation));
    status.common.conditions = report.conditions;
    write_status(op, kind, obj, &old, status).await?;
    Err(Error::CleanupPending(message))
}

/// What the status says we emitted, and what the spec asks for now (if it
/// still parses): objects emitted that the status never recorded (a crash
/// between apply and status) go too. Only ours are deleted (label and
/// ownerReference), so asking is safe.
fn emitted_or_wanted(r: &Resource, old: &Status) -> Vec<api::OwnedObject> {
    let mut owned = old.common.owned.clone();
    let placeholder = Inputs {
        password: Some(String::new()),
        ..Default::default()
    };
    if let Ok(x) = realise::realise(r, &placeholder) {
        for o in x.emit.iter().map(emit::owned_ref) {
            if !owned.contains(&o) {
                owned.push(o);
            }
        }
    }
    owned
}

/// Each object still there, with the finalizers that hold it: a finalizer
/// of an upstream operator that no longer runs would otherwise be a silent
/// hang.
async fn what_holds(op: &Operator, remaining: &[api::OwnedObject]) -> Result<Vec<String>, Error> {
    let mut waits = Vec::new();
    for o in remaining {
        let finalizers = emit::get(op, &o.api_version, &o.kind, &o.namespace, &o.name)
            .await?
            .and_then(|v| v.pointer("/metadata/finalizers").cloned())
            .and_then(|f| serde_json::from_value::<Vec<String>>(f).ok())
            .unwrap_or_default();
        let what = format!("{} {}/{}", o.kind, o.namespace, o.name);
        waits.push(if finalizers.is_empty() {
            what
        } else {
            format!("{what} (finalizers: {})", finalizers.join(", "))
        });
    }
    Ok(waits)
}

pub(super) async fn write_status(
    op: &Operator,
    kind: Kind,
    obj: &DynamicObject,
    old: &Status,
    new: Status,
) -> Result<(), Error> {
    if *old == new && obj.data.get("status").is_some() {
        return Ok(());
    }
    let body = json!({"apiVersion": api::API_VERSION, "kind": kind, "status": new});
    match api(op, kind, &obj.namespace().unwrap_or_default())
        .patch_status(
            &obj.name_any(),
            &PatchParams::apply(crate::action::DEFAULT_FIELD_MANAGER).force(),
            &Patch::Apply(&body),
        )
        .await
    {
        Ok(_) => Ok(()),
        // Deleted meanwhile: nothing left to report on.
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_keeps_the_common_shape_and_the_kinds_own_fields_apart() {
        let v = json!({"phase": "Ready", "observedGeneration": 2, "connectionSecret": "analytics-clickhouse",
            "type": "altinity", "mode": "managed",
            "owned": [{"apiVersion": "v1", "kind": "Secret", "namespace": "a", "name": "analytics-clickhouse"}]});
        let s: Status = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(s.common.phase, Some(Phase::Ready));
        assert_eq!(s.common.owned.len(), 1);
        let keys: Vec<&str> = s.fields.keys().map(String::as_str).collect();
        assert_eq!(keys, ["connectionSecret", "mode", "type"]);
        assert_eq!(serde_json::to_value(&s).unwrap(), v);
    }
}
