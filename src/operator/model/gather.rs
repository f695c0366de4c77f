//! One fresh read of everything a decision needs, for the decisions that
//! act (a watched copy may lag a write by a moment).

use crate::operator::api;
use crate::operator::model::catalog::Catalog;
use crate::operator::model::licensing::Licensing;
use crate::operator::model::snapshot::*;
use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, StatefulSet};
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
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
    let mut snap = Snapshot::default();
    let secrets: Api<Secret> = Api::all(client.clone());
    let mut found = Vec::new();
    let mut lp = ListParams::default().labels("owner=helm").limit(500);
    loop {
        let page = secrets.list_metadata(&lp).await?;
        found.extend(page.items.iter().map(|s| secret_meta(&s.metadata)));
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(c) => lp = lp.continue_token(&c),
            None => break,
        }
    }
    snap.releases = releases_from(&found);

    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let mut wanted: Vec<&String> = catalog.capability.iter().flat_map(|c| &c.crds).collect();
    wanted.sort();
    wanted.dedup();
    for name in wanted {
        let Some(full) = crds.get_opt(name).await? else {
            continue;
        };
        snap.crds.insert(name.clone(), crd_info(&full).1);
        let version = full
            .spec
            .versions
            .iter()
            .find(|v| v.storage)
            .or_else(|| full.spec.versions.first())
            .map(|v| v.name.clone())
            .unwrap_or_default();
        let ar = ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk(&full.spec.group, &version, &full.spec.names.kind),
            &full.spec.names.plural,
        );
        let objs: Api<DynamicObject> = Api::all_with(client.clone(), &ar);
        let lp =
            ListParams::default().labels(&format!("{}={}", api::MANAGED_BY_LABEL, api::MANAGED_BY));
        if let Ok(list) = objs.list(&lp).await {
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

    let ours =
        ListParams::default().labels(&format!("{}={}", api::MANAGED_BY_LABEL, api::MANAGED_BY));
    for s in secrets.list_metadata(&ours).await?.items {
        snap.emitted_secrets.push((
            s.metadata.namespace.unwrap_or_default(),
            s.metadata.name.unwrap_or_default(),
        ));
    }

    let deployments: Api<Deployment> = Api::all(client.clone());
    for d in deployments.list(&ListParams::default()).await?.items {
        snap.workloads.push(workload_from(
            "Deployment",
            &serde_json::to_value(d).unwrap_or_default(),
        ));
    }
    let sets: Api<StatefulSet> = Api::all(client.clone());
    for s in sets.list(&ListParams::default()).await?.items {
        snap.workloads.push(workload_from(
            "StatefulSet",
            &serde_json::to_value(s).unwrap_or_default(),
        ));
    }
    let daemons: Api<DaemonSet> = Api::all(client.clone());
    for d in daemons.list(&ListParams::default()).await?.items {
        snap.workloads.push(workload_from(
            "DaemonSet",
            &serde_json::to_value(d).unwrap_or_default(),
        ));
    }

    for kind in crate::operator::api::Kind::resources() {
        let ar = kind.api_resource();
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &ar);
        match api.list(&ListParams::default()).await {
            Ok(list) => {
                for o in list.items {
                    let v = serde_json::to_value(o).unwrap_or_default();
                    snap.resources.push(resource_from(kind, &v));
                }
            }
            // Our CRDs not installed yet: no resources of that kind.
            Err(kube::Error::Api(s)) if s.code == 404 => {}
            Err(e) => return Err(e),
        }
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
