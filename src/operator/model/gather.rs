//! One fresh read of everything a decision needs, for the decisions that
//! act (a watched copy may lag a write by a moment).

use crate::operator::api;
use crate::operator::model::catalog::Catalog;
use crate::operator::model::licensing::Licensing;
use crate::operator::model::light::CrdHead;
use crate::operator::model::snapshot::*;
use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, StatefulSet};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DynamicObject, ListParams};
use kube::core::GroupVersionKind;
use kube::discovery::ApiResource;
use serde_json::Value;
use std::collections::BTreeMap;

/// Reads the snapshot from the cluster. CRDs and emitted objects only for
/// the catalog's CRDs; release Secrets as metadata only.
pub async fn gather(
    client: &kube::Client,
    catalog: &Catalog,
    licensing: &Licensing,
) -> Result<Snapshot, kube::Error> {
    let mut snap = Snapshot {
        releases: releases_from(&release_secrets(client).await?),
        ..Default::default()
    };
    catalog_crds(client, catalog, &mut snap).await?;
    let secrets: Api<Secret> = Api::all(client.clone());
    for s in secrets.list_metadata(&ours()).await?.items {
        snap.emitted_secrets.push((
            s.metadata.namespace.unwrap_or_default(),
            s.metadata.name.unwrap_or_default(),
        ));
    }
    snap.workloads
        .extend(workloads::<Deployment>(client, "Deployment").await?);
    snap.workloads
        .extend(workloads::<StatefulSet>(client, "StatefulSet").await?);
    snap.workloads
        .extend(workloads::<DaemonSet>(client, "DaemonSet").await?);
    for kind in crate::operator::api::Kind::resources() {
        snap.resources.extend(resources(client, kind).await?);
    }
    snap.capability_specs = capability_specs(client).await?;
    let licenses: Api<Secret> = Api::namespaced(client.clone(), &licensing.namespace);
    let data = licenses
        .get_opt(crate::operator::model::licensing::SECRET_NAME)
        .await?
        .map(|s| license_data(&s));
    snap.read_license(data.as_ref(), licensing);
    Ok(snap)
}

/// Our label selector: what the operator emitted.
fn ours() -> ListParams {
    ListParams::default().labels(&format!("{}={}", api::MANAGED_BY_LABEL, api::MANAGED_BY))
}

/// Every Helm release Secret's metadata, a page at a time.
async fn release_secrets(client: &kube::Client) -> Result<Vec<SecretMeta>, kube::Error> {
    let secrets: Api<Secret> = Api::all(client.clone());
    let mut found = Vec::new();
    let mut lp = ListParams::default().labels("owner=helm").limit(500);
    loop {
        let page = secrets.list_metadata(&lp).await?;
        found.extend(page.items.iter().map(|s| secret_meta(&s.metadata)));
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(c) => lp = lp.continue_token(&c),
            None => return Ok(found),
        }
    }
}

/// The catalog's CRDs that exist, and the objects we emitted of each.
async fn catalog_crds(
    client: &kube::Client,
    catalog: &Catalog,
    snap: &mut Snapshot,
) -> Result<(), kube::Error> {
    let crds: Api<CrdHead> = Api::all(client.clone());
    let mut wanted: Vec<&String> = catalog.capability.iter().flat_map(|c| &c.crds).collect();
    wanted.sort();
    wanted.dedup();
    for name in wanted {
        let Some(full) = crds.get_opt(name).await? else {
            continue;
        };
        snap.crds.insert(name.clone(), crd_info(&full).1);
        let objs: Api<DynamicObject> = Api::all_with(client.clone(), &stored_resource(&full));
        if let Ok(list) = objs.list(&ours()).await {
            let items: Vec<Value> = list
                .items
                .into_iter()
                .filter_map(|o| serde_json::to_value(o).ok())
                .collect();
            if !items.is_empty() {
                snap.emitted.insert(name.clone(), items);
            }
        }
    }
    Ok(())
}

/// The CRD's objects at its storage version.
fn stored_resource(crd: &CrdHead) -> ApiResource {
    let version = crd
        .spec
        .versions
        .iter()
        .find(|v| v.storage)
        .or_else(|| crd.spec.versions.first())
        .map(|v| v.name.clone())
        .unwrap_or_default();
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk(&crd.spec.group, &version, &crd.spec.names.kind),
        &crd.spec.names.plural,
    )
}

/// Every Deployment, StatefulSet or DaemonSet as the decisions read it.
async fn workloads<K>(client: &kube::Client, kind: &str) -> Result<Vec<Workload>, kube::Error>
where
    K: kube::Resource<DynamicType = ()> + Clone + serde::de::DeserializeOwned + serde::Serialize,
    K: std::fmt::Debug,
{
    let api: Api<K> = Api::all(client.clone());
    let list = api.list(&ListParams::default()).await?;
    Ok(list
        .items
        .into_iter()
        .map(|o| workload_from(kind, &serde_json::to_value(o).unwrap_or_default()))
        .collect())
}

/// Our resources of one kind; none while our CRDs are not installed.
async fn resources(client: &kube::Client, kind: api::Kind) -> Result<Vec<Resource>, kube::Error> {
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &kind.api_resource());
    match api.list(&ListParams::default()).await {
        Ok(list) => Ok(list
            .items
            .into_iter()
            .map(|o| resource_from(kind, &serde_json::to_value(o).unwrap_or_default()))
            .collect()),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

/// Each Capability's spec, by name (none before our CRDs are installed).
async fn capability_specs(client: &kube::Client) -> Result<BTreeMap<String, Value>, kube::Error> {
    let api: Api<DynamicObject> = Api::all_with(
        client.clone(),
        &crate::operator::api::Kind::Capability.api_resource(),
    );
    match api.list(&ListParams::default()).await {
        Ok(list) => Ok(list.items.iter().map(capability_spec).collect()),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(BTreeMap::new()),
        Err(e) => Err(e),
    }
}

/// A Capability object's name and spec, as the decisions read them.
pub fn capability_spec(o: &DynamicObject) -> (String, Value) {
    (
        o.metadata.name.clone().unwrap_or_default(),
        o.data.get("spec").cloned().unwrap_or(Value::Null),
    )
}

/// The chart version of a release we did not write, from its newest
/// revision's body (one Secret read, only for evidence we report).
pub async fn chart_version_of(
    client: &kube::Client,
    name: &str,
    namespace: &str,
) -> Option<String> {
    let storage = crate::release::storage::Storage::new(client.clone(), namespace);
    storage
        .last(name)
        .await
        .ok()
        .flatten()
        .map(|r| r.chart_version())
}
