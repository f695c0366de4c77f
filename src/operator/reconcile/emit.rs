//! Objects emitted for a resource: applied only when they differ from what
//! the cluster holds (so a converged reconcile writes nothing), deleted only
//! when they are ours (our label and an ownerReference to the resource).

use super::{Error, Operator};
use crate::apply::objects::Object;
use crate::operator::api;
use crate::operator::decide::drift;
use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams};
use serde_json::Value;

fn as_object(v: &Value) -> Object {
    let meta = |k: &str| {
        v.pointer(&format!("/metadata/{k}"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    Object {
        api_version: v
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .into(),
        kind: v
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .into(),
        name: meta("name"),
        namespace: meta("namespace"),
        body: v.clone(),
    }
}

pub async fn api_for(
    op: &Operator,
    api_version: &str,
    kind: &str,
    namespace: &str,
) -> Result<Option<Api<DynamicObject>>, Error> {
    let o = Object {
        api_version: api_version.into(),
        kind: kind.into(),
        namespace: namespace.into(),
        ..Object::default()
    };
    match op.cluster.api_for(&o).await {
        Ok(a) => Ok(Some(a)),
        Err(crate::apply::ApplyError::Unknown(_)) => {
            // The CRD may have been installed since discovery was cached.
            op.cluster.refresh();
            match op.cluster.api_for(&o).await {
                Ok(a) => Ok(Some(a)),
                Err(crate::apply::ApplyError::Unknown(_)) => Ok(None),
                Err(e) => Err(e.into()),
            }
        }
        Err(e) => Err(e.into()),
    }
}

pub async fn get(
    op: &Operator,
    api_version: &str,
    kind: &str,
    namespace: &str,
    name: &str,
) -> Result<Option<Value>, Error> {
    let Some(api) = api_for(op, api_version, kind, namespace).await? else {
        return Ok(None);
    };
    Ok(api
        .get_opt(name)
        .await?
        .map(|o| serde_json::to_value(o).unwrap_or_default()))
}

/// What applying an emitted object did.
#[derive(Clone, Debug, PartialEq)]
pub enum Emitted {
    /// The cluster held it already: nothing written.
    Unchanged,
    /// Written; the fields that differed (`["(deleted)"]`: it was not there).
    Written(Vec<String>),
}

/// Server-side applies `wanted` unless the cluster already holds it (as
/// server-side apply judges it: `decide::drift`).
pub async fn apply(op: &Operator, wanted: &Value) -> Result<Emitted, Error> {
    let mut body = if op.images.is_active() {
        with_mirrored_images(op, wanted)
    } else {
        wanted.clone()
    };
    crate::apply::pull_secrets::inject(&mut body, &op.pull_secrets.names);
    let wanted = &body;
    let o = as_object(wanted);
    let Some(api) = api_for(op, &o.api_version, &o.kind, &o.namespace).await? else {
        return Err(Error::Unserved {
            api_version: o.api_version.clone(),
            kind: o.kind.clone(),
        });
    };
    let existing = live(&api, &o.name).await?;
    let differs = drift::drifted(wanted, existing.as_ref());
    if differs.is_empty() {
        return Ok(Emitted::Unchanged);
    }
    apply_ours(&api, &o.name, wanted, existing.as_ref()).await?;
    op.watch_owned(
        &o.api_version,
        &o.kind,
        crate::operator::model::owned::Owner::Resource,
    )
    .await;
    Ok(Emitted::Written(differs))
}

/// The object `name` as the API server holds it now (None: absent).
pub async fn live(api: &Api<DynamicObject>, name: &str) -> Result<Option<Value>, Error> {
    Ok(api
        .get_opt(name)
        .await?
        .map(|l| serde_json::to_value(l).unwrap_or_default()))
}

/// Server-side applies `wanted` as ours (forced), leaving out the fields
/// `live` shows a co-writer holding through a subresource.
pub async fn apply_ours(
    api: &Api<DynamicObject>,
    name: &str,
    wanted: &Value,
    live: Option<&Value>,
) -> Result<(), Error> {
    let body = drift::without_co_written(wanted, live);
    let pp = PatchParams::apply(crate::action::DEFAULT_FIELD_MANAGER).force();
    api.patch(name, &pp, &Patch::Apply(&body)).await?;
    Ok(())
}

/// An emitted object with every image through the mirror; an image field
/// the upstream CRD would default (LiteLLMProxy's proxy image) is set from
/// its pin first, since the default names an upstream registry.
fn with_mirrored_images(op: &Operator, wanted: &Value) -> Value {
    let mut body = wanted.clone();
    for pin in op.catalog.image.iter().filter(|i| i.set_by.is_some()) {
        let by = pin.set_by.as_deref().unwrap_or_default();
        for (group, kind, pointer) in crate::oci::images::CR_IMAGE_FIELDS {
            let is_it = body.get("kind").and_then(Value::as_str) == Some(kind)
                && body["apiVersion"]
                    .as_str()
                    .unwrap_or_default()
                    .starts_with(group)
                && by.contains(kind);
            if is_it && body.pointer(pointer).is_none() {
                if let Some(spec) = body.get_mut("spec").and_then(Value::as_object_mut) {
                    let field = pointer.trim_start_matches("/spec/");
                    spec.insert(field.to_string(), Value::String(pin.tagged()));
                }
            }
        }
    }
    op.images.rewrite(&mut body);
    body
}

/// Deletes an emitted object if it exists and is ours; returns whether it
/// still exists (deleting, or not ours to delete).
pub async fn delete_if_ours(op: &Operator, o: &api::OwnedObject, uid: &str) -> Result<bool, Error> {
    let Some(api) = api_for(op, &o.api_version, &o.kind, &o.namespace).await? else {
        return Ok(false);
    };
    let Some(existing) = api.get_opt(&o.name).await? else {
        return Ok(false);
    };
    let v = serde_json::to_value(&existing).unwrap_or_default();
    if !crate::operator::decide::gc::is_ours(&v, uid) {
        // Someone else's (adopted, or taken over by hand): never deleted.
        return Ok(false);
    }
    if v.pointer("/metadata/deletionTimestamp").is_none() {
        match api.delete(&o.name, &DeleteParams::background()).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 404 => return Ok(false),
            Err(e) => return Err(e.into()),
        }
    }
    Ok(api.get_opt(&o.name).await?.is_some())
}

pub fn owned_ref(v: &Value) -> api::OwnedObject {
    let o = as_object(v);
    api::OwnedObject {
        api_version: o.api_version,
        kind: o.kind,
        namespace: o.namespace,
        name: o.name,
    }
}
