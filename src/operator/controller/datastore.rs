//! The PostgresCluster controller: validate the spec, wait for the
//! capabilities it needs, emit the CNPG Cluster (managed), collect what it
//! no longer wants, report Ready from the datastore; on delete, remove what
//! we emitted (never an adopted Cluster), then drop the finalizer, after
//! which the capability controller releases CloudNativePG.

use super::{emit, reference, release, Error, Operator};
use crate::operator::api::postgres::PostgresClusterStatus;
use crate::operator::api::{self, CapabilityUse, CommonStatus, Phase};
use crate::operator::observe::{self, Resource};
use crate::operator::plan;
use crate::operator::realise::{self, ReadyWhen};
use crate::operator::status::condition;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::events::EventType;
use kube::ResourceExt;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

const KIND: &str = "PostgresCluster";

pub async fn reconcile(obj: Arc<DynamicObject>, op: Arc<Operator>) -> Result<Action, Error> {
    super::measured(&op, KIND, &key(&obj), reconcile_one(&obj, &op)).await
}

fn key(obj: &DynamicObject) -> String {
    format!(
        "{KIND}/{}/{}",
        obj.namespace().unwrap_or_default(),
        obj.name_any()
    )
}

pub fn error_policy(obj: Arc<DynamicObject>, err: &Error, op: Arc<Operator>) -> Action {
    super::retry(&op, KIND, &key(&obj), err)
}

fn api(op: &Operator, namespace: &str) -> Api<DynamicObject> {
    Api::namespaced_with(op.client.clone(), namespace, &observe::resource_api(KIND))
}

fn old_status(obj: &DynamicObject) -> PostgresClusterStatus {
    obj.data
        .get("status")
        .and_then(|s| serde_json::from_value(s.clone()).ok())
        .unwrap_or_default()
}

async fn reconcile_one(obj: &DynamicObject, op: &Operator) -> Result<Action, Error> {
    let r = observe::resource_from(KIND, &serde_json::to_value(obj).unwrap_or_default());
    let old = old_status(obj);
    if r.deleting {
        return cleanup(obj, op, &r, &old).await;
    }
    ensure_finalizer(op, obj).await?;
    let on = reference(obj, api::API_VERSION, KIND);
    let generation = Some(r.generation);
    let mut status = PostgresClusterStatus {
        common: CommonStatus {
            observed_generation: generation,
            owned: old.common.owned.clone(),
            ..Default::default()
        },
        ..Default::default()
    };
    let licensed = condition(
        &old.common.conditions,
        "Licensed",
        true,
        "NotEnforced",
        "licensing is not enforced by this build",
        generation,
    );

    let realised = match realise::postgres::realise(&r) {
        Ok(x) => x,
        Err(e) => {
            let message = e.to_string();
            let was = old
                .common
                .conditions
                .iter()
                .find(|c| c.type_ == "Ready")
                .map(|c| c.message.clone());
            if was.as_deref() != Some(message.as_str()) {
                op.event(
                    &on,
                    EventType::Warning,
                    "Failed",
                    format!("invalid spec: {message}"),
                )
                .await;
            }
            status.common.phase = Some(Phase::Failed);
            status.common.conditions = vec![
                condition(
                    &old.common.conditions,
                    "Ready",
                    false,
                    "InvalidSpec",
                    &message,
                    generation,
                ),
                condition(
                    &old.common.conditions,
                    "CapabilitiesReady",
                    false,
                    "InvalidSpec",
                    &message,
                    generation,
                ),
                licensed,
            ];
            write_status(op, obj, &old, status).await?;
            return Ok(Action::await_change());
        }
    };
    status.connection_secret = Some(realised.connection_secret.clone());
    status.mode = Some(realised.mode);

    let plans = op.capability_plans().await?;
    let mut waiting = Vec::new();
    for need in &realised.needs {
        let Some(p) = plan::capability(&plans, need) else {
            continue;
        };
        let entry = op
            .catalog
            .capability(need)
            .expect("planned from the catalog");
        let location = p.provenance.location(entry);
        status.common.capabilities.push(CapabilityUse {
            name: need.clone(),
            chart_version: release::installed_version(&op.client, &p.provenance).await,
            provenance: p.provenance.as_str().into(),
            release: location.as_ref().map(|l| l.0.clone()).unwrap_or_default(),
            namespace: location.map(|l| l.1).unwrap_or_default(),
            ready: p.readiness.ready,
        });
        if !p.readiness.ready {
            waiting.push(format!(
                "capability {need} is not Ready: {}",
                p.readiness.reason
            ));
        }
    }
    let caps_ready = waiting.is_empty();
    let caps_condition = if caps_ready {
        condition(
            &old.common.conditions,
            "CapabilitiesReady",
            true,
            "Ready",
            "",
            generation,
        )
    } else {
        condition(
            &old.common.conditions,
            "CapabilitiesReady",
            false,
            "Waiting",
            &waiting.join("; "),
            generation,
        )
    };
    if !caps_ready {
        let was = old
            .common
            .conditions
            .iter()
            .find(|c| c.type_ == "CapabilitiesReady")
            .map(|c| c.message.clone());
        if was.as_deref() != Some(caps_condition.message.as_str()) {
            op.event(
                &on,
                EventType::Normal,
                "Waiting",
                caps_condition.message.clone(),
            )
            .await;
        }
        status.common.phase = Some(Phase::Pending);
        status.common.conditions = vec![
            condition(
                &old.common.conditions,
                "Ready",
                false,
                "Waiting",
                &caps_condition.message,
                generation,
            ),
            caps_condition,
            licensed,
        ];
        write_status(op, obj, &old, status).await?;
        return Ok(Action::requeue(op.poll));
    }

    // Emit what is wanted, then collect what we emitted before and no longer want.
    let mut owned: Vec<api::OwnedObject> = Vec::new();
    for o in &realised.emit {
        if let Err(e) = emit::apply(op, o).await {
            op.event(
                &on,
                EventType::Warning,
                "Failed",
                format!("applying {}: {e}", describe(o)),
            )
            .await;
            return Err(e);
        }
        owned.push(emit::owned_ref(o));
    }
    let unwanted = crate::operator::gc::unwanted(&old.common.owned, &owned);
    for gone in &unwanted {
        let still = emit::delete_if_ours(op, gone, &r.uid).await?;
        if still {
            owned.push(gone.clone());
        } else {
            op.event(
                &on,
                EventType::Normal,
                "GarbageCollected",
                format!(
                    "deleted {} {}/{}: the spec no longer asks for it",
                    gone.kind, gone.namespace, gone.name
                ),
            )
            .await;
        }
    }
    owned.sort();
    status.common.owned = owned;

    let (ready, why) = datastore_ready(op, &r, &realised.ready_when).await?;
    status.common.phase = Some(if ready {
        Phase::Ready
    } else {
        Phase::Provisioning
    });
    status.common.conditions = vec![
        if ready {
            condition(
                &old.common.conditions,
                "Ready",
                true,
                "Ready",
                &format!("connection Secret {}", realised.connection_secret),
                generation,
            )
        } else {
            condition(
                &old.common.conditions,
                "Ready",
                false,
                "Provisioning",
                &why,
                generation,
            )
        },
        caps_condition,
        licensed,
    ];
    write_status(op, obj, &old, status).await?;
    Ok(if ready {
        Action::requeue(Duration::from_secs(300))
    } else {
        Action::requeue(op.poll)
    })
}

fn describe(o: &Value) -> String {
    format!(
        "{} {}/{}",
        o["kind"].as_str().unwrap_or_default(),
        o["metadata"]["namespace"].as_str().unwrap_or_default(),
        o["metadata"]["name"].as_str().unwrap_or_default()
    )
}

async fn datastore_ready(
    op: &Operator,
    r: &Resource,
    when: &ReadyWhen,
) -> Result<(bool, String), Error> {
    Ok(match when {
        ReadyWhen::ConditionReady {
            api_version,
            kind,
            name,
        } => match emit::get(op, api_version, kind, &r.namespace, name).await? {
            None => (
                false,
                format!("{kind} {}/{name} does not exist", r.namespace),
            ),
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
                        format!(
                            "{kind} {}/{name} does not report Ready=True yet",
                            r.namespace
                        ),
                    )
                }
            }
        },
        ReadyWhen::SecretKeys { name, keys } => {
            let secret = emit::get(op, "v1", "Secret", &r.namespace, name).await?;
            match secret {
                None => (
                    false,
                    format!("Secret {}/{name} does not exist", r.namespace),
                ),
                Some(s) => {
                    let missing = realise::postgres::missing_keys(Some(&s), keys);
                    if missing.is_empty() {
                        (true, String::new())
                    } else {
                        (
                            false,
                            format!(
                                "Secret {}/{name} lacks key {}",
                                r.namespace,
                                missing.join(", ")
                            ),
                        )
                    }
                }
            }
        }
    })
}

async fn ensure_finalizer(op: &Operator, obj: &DynamicObject) -> Result<(), Error> {
    let finalizers = obj.finalizers();
    if finalizers.iter().any(|f| f == api::FINALIZER) {
        return Ok(());
    }
    let mut list = finalizers.to_vec();
    list.push(api::FINALIZER.into());
    let patch =
        json!({"metadata": {"finalizers": list, "resourceVersion": obj.resource_version()}});
    api(op, &obj.namespace().unwrap_or_default())
        .patch(
            &obj.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await?;
    Ok(())
}

/// Deletion: the objects we emitted go first; the finalizer goes once they
/// are gone. Releasing the capability is the capability controller's, which
/// no longer counts this resource and waits for the emitted objects too.
async fn cleanup(
    obj: &DynamicObject,
    op: &Operator,
    r: &Resource,
    old: &PostgresClusterStatus,
) -> Result<Action, Error> {
    if !obj.finalizers().iter().any(|f| f == api::FINALIZER) {
        return Ok(Action::await_change());
    }
    let on = reference(obj, api::API_VERSION, KIND);
    let mut owned = old.common.owned.clone();
    // An emitted Cluster the status never recorded (a crash between apply and status).
    let own_cluster = api::OwnedObject {
        api_version: realise::postgres::CNPG_API_VERSION.into(),
        kind: "Cluster".into(),
        namespace: r.namespace.clone(),
        name: r.name.clone(),
    };
    if !owned.contains(&own_cluster) {
        owned.push(own_cluster);
    }
    let mut remaining = Vec::new();
    for o in &owned {
        if emit::delete_if_ours(op, o, &r.uid).await? {
            remaining.push(o.clone());
        } else if old.common.owned.contains(o) {
            op.event(
                &on,
                EventType::Normal,
                "GarbageCollected",
                format!(
                    "deleted {} {}/{}: the {KIND} is being deleted",
                    o.kind, o.namespace, o.name
                ),
            )
            .await;
        }
    }
    let mut status = old.clone();
    status.common.phase = Some(Phase::Deleting);
    status.common.owned = remaining.clone();
    write_status(op, obj, old, status).await?;
    if !remaining.is_empty() {
        return Ok(Action::requeue(op.poll));
    }
    // A JSON patch that tests the position: another finalizer added
    // meanwhile is kept, and a stale index fails instead of removing it.
    let Some(i) = obj.finalizers().iter().position(|f| f == api::FINALIZER) else {
        return Ok(Action::await_change());
    };
    let patch: json_patch::Patch = serde_json::from_value(json!([
        {"op": "test", "path": format!("/metadata/finalizers/{i}"), "value": api::FINALIZER},
        {"op": "remove", "path": format!("/metadata/finalizers/{i}")},
    ]))
    .expect("a JSON patch");
    match api(op, &r.namespace)
        .patch(
            &obj.name_any(),
            &PatchParams::default(),
            &Patch::<()>::Json(patch),
        )
        .await
    {
        Ok(_) => {}
        Err(kube::Error::Api(s)) if s.code == 404 => {}
        Err(e) => return Err(e.into()),
    }
    Ok(Action::await_change())
}

async fn write_status(
    op: &Operator,
    obj: &DynamicObject,
    old: &PostgresClusterStatus,
    new: PostgresClusterStatus,
) -> Result<(), Error> {
    if *old == new && obj.data.get("status").is_some() {
        return Ok(());
    }
    let body = json!({"apiVersion": api::API_VERSION, "kind": KIND, "status": new});
    match api(op, &obj.namespace().unwrap_or_default())
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
