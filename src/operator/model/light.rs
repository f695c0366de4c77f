//! Objects as the operator reads them, without what it never looks at:
//! every object's `managedFields` (a field set as large as the object's
//! structure: a CRD's runs to hundreds of KB, parsed into a JSON tree on
//! every watch event) and a CRD's schemas (nearly all of its bytes, skipped
//! by the JSON parser without being built).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};
use serde::{Deserialize, Deserializer};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::marker::PhantomData;

/// The metadata a decision or a watch reads: everything but `managedFields`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct MetaFields {
    name: Option<String>,
    generate_name: Option<String>,
    namespace: Option<String>,
    uid: Option<String>,
    resource_version: Option<String>,
    generation: Option<i64>,
    creation_timestamp: Option<Time>,
    deletion_timestamp: Option<Time>,
    deletion_grace_period_seconds: Option<i64>,
    labels: Option<BTreeMap<String, String>>,
    annotations: Option<BTreeMap<String, String>>,
    owner_references: Option<Vec<OwnerReference>>,
    finalizers: Option<Vec<String>>,
}

/// `metadata` without its `managedFields` (the field is skipped unparsed).
pub fn meta_without_managed_fields<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<ObjectMeta, D::Error> {
    let m = Option::<MetaFields>::deserialize(d)?;
    let Some(m) = m else {
        return Ok(ObjectMeta::default());
    };
    Ok(ObjectMeta {
        name: m.name,
        generate_name: m.generate_name,
        namespace: m.namespace,
        uid: m.uid,
        resource_version: m.resource_version,
        generation: m.generation,
        creation_timestamp: m.creation_timestamp,
        deletion_timestamp: m.deletion_timestamp,
        deletion_grace_period_seconds: m.deletion_grace_period_seconds,
        labels: m.labels,
        annotations: m.annotations,
        owner_references: m.owner_references,
        finalizers: m.finalizers,
        ..Default::default()
    })
}

/// An object of kind `K` read as metadata only (the API server sends
/// `PartialObjectMetadata`), like kube's `PartialObjectMeta` but without
/// `managedFields`.
#[derive(Deserialize, serde::Serialize)]
pub struct Meta<K> {
    #[serde(default, deserialize_with = "meta_without_managed_fields")]
    pub metadata: ObjectMeta,
    #[serde(skip)]
    _kind: PhantomData<fn() -> K>,
}

impl<K> Clone for Meta<K> {
    fn clone(&self) -> Self {
        Meta {
            metadata: self.metadata.clone(),
            _kind: PhantomData,
        }
    }
}

impl<K> std::fmt::Debug for Meta<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Meta")
            .field("metadata", &self.metadata)
            .finish()
    }
}

impl<K: kube::Resource> kube::Resource for Meta<K> {
    type DynamicType = K::DynamicType;
    type Scope = K::Scope;

    fn metadata_api() -> bool {
        true
    }
    fn kind(dt: &Self::DynamicType) -> Cow<'_, str> {
        K::kind(dt)
    }
    fn group(dt: &Self::DynamicType) -> Cow<'_, str> {
        K::group(dt)
    }
    fn version(dt: &Self::DynamicType) -> Cow<'_, str> {
        K::version(dt)
    }
    fn plural(dt: &Self::DynamicType) -> Cow<'_, str> {
        K::plural(dt)
    }
    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

/// A CustomResourceDefinition as the operator reads it: its metadata
/// (without `managedFields`), group, names, versions (name and storage
/// only) and conditions. The schemas are skipped unparsed.
#[derive(Clone, Debug, Default, Deserialize, serde::Serialize)]
pub struct CrdHead {
    #[serde(default, deserialize_with = "meta_without_managed_fields")]
    pub metadata: ObjectMeta,
    #[serde(default, deserialize_with = "or_default")]
    pub spec: CrdHeadSpec,
    #[serde(default, deserialize_with = "or_default")]
    pub status: CrdHeadStatus,
}

#[derive(Clone, Debug, Default, Deserialize, serde::Serialize)]
pub struct CrdHeadSpec {
    #[serde(default, deserialize_with = "or_default")]
    pub group: String,
    #[serde(default, deserialize_with = "or_default")]
    pub names: CrdHeadNames,
    #[serde(default, deserialize_with = "or_default")]
    pub versions: Vec<CrdHeadVersion>,
}

#[derive(Clone, Debug, Default, Deserialize, serde::Serialize)]
pub struct CrdHeadNames {
    #[serde(default, deserialize_with = "or_default")]
    pub kind: String,
    #[serde(default, deserialize_with = "or_default")]
    pub plural: String,
}

#[derive(Clone, Debug, Default, Deserialize, serde::Serialize)]
pub struct CrdHeadVersion {
    #[serde(default, deserialize_with = "or_default")]
    pub name: String,
    #[serde(default, deserialize_with = "or_default")]
    pub storage: bool,
}

#[derive(Clone, Debug, Default, Deserialize, serde::Serialize)]
pub struct CrdHeadStatus {
    #[serde(default, deserialize_with = "or_default")]
    pub conditions: Vec<CrdHeadCondition>,
}

#[derive(Clone, Debug, Default, Deserialize, serde::Serialize)]
pub struct CrdHeadCondition {
    #[serde(rename = "type", default, deserialize_with = "or_default")]
    pub type_: String,
    #[serde(default, deserialize_with = "or_default")]
    pub status: String,
}

/// A JSON null read as the type's default, as Go's decoder leaves a field.
fn or_default<'de, D: Deserializer<'de>, T: Deserialize<'de> + Default>(
    d: D,
) -> Result<T, D::Error> {
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

impl CrdHead {
    pub fn established(&self) -> bool {
        self.status
            .conditions
            .iter()
            .any(|c| c.type_ == "Established" && c.status == "True")
    }
}

impl kube::Resource for CrdHead {
    type DynamicType = ();
    type Scope = kube::core::ClusterResourceScope;

    fn kind(_: &()) -> Cow<'_, str> {
        "CustomResourceDefinition".into()
    }
    fn group(_: &()) -> Cow<'_, str> {
        "apiextensions.k8s.io".into()
    }
    fn version(_: &()) -> Cow<'_, str> {
        "v1".into()
    }
    fn plural(_: &()) -> Cow<'_, str> {
        "customresourcedefinitions".into()
    }
    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_crd_is_read_without_its_schemas_or_managed_fields() {
        let json = serde_json::json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "clusters.postgresql.cnpg.io", "resourceVersion": "7",
                "annotations": {"meta.helm.sh/release-name": "cnpg"},
                "managedFields": [{"manager": "x", "fieldsV1": {"f:spec": {"f:group": {}}}}]},
            "spec": {"group": "postgresql.cnpg.io", "names": {"kind": "Cluster", "plural": "clusters"},
                "scope": "Namespaced",
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object"}}}}}]},
            "status": {"conditions": [{"type": "NamesAccepted", "status": "True"},
                {"type": "Established", "status": "True", "reason": "InitialNamesAccepted"}],
                "acceptedNames": null}
        });
        let crd: CrdHead = serde_json::from_value(json).unwrap();
        assert_eq!(
            crd.metadata.name.as_deref(),
            Some("clusters.postgresql.cnpg.io")
        );
        assert_eq!(crd.metadata.resource_version.as_deref(), Some("7"));
        assert!(crd.metadata.managed_fields.is_none());
        assert_eq!(crd.spec.group, "postgresql.cnpg.io");
        assert_eq!(
            (crd.spec.names.kind.as_str(), crd.spec.names.plural.as_str()),
            ("Cluster", "clusters")
        );
        assert_eq!(crd.spec.versions.len(), 1);
        assert!(crd.spec.versions[0].storage);
        assert!(crd.established());
        let fresh: CrdHead = serde_json::from_str(
            r#"{"metadata": {"name": "a"}, "spec": {"versions": null}, "status": null}"#,
        )
        .unwrap();
        assert!(!fresh.established());
    }

    #[test]
    fn metadata_is_read_without_managed_fields() {
        let m: Meta<k8s_openapi::api::core::v1::Secret> = serde_json::from_str(
            r#"{"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                "metadata": {"name": "s", "namespace": "n", "uid": "u", "generation": 2,
                  "labels": {"owner": "helm"}, "managedFields": [{"manager": "m", "fieldsV1": {"f:data": {}}}]}}"#,
        )
        .unwrap();
        assert_eq!(m.metadata.name.as_deref(), Some("s"));
        assert_eq!(m.metadata.generation, Some(2));
        assert_eq!(m.metadata.labels.unwrap()["owner"], "helm");
        assert!(m.metadata.managed_fields.is_none());
    }
}
