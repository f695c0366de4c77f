//! Capability (cluster-scoped, written by the operator only): one per
//! catalog entry, so `kubectl get capabilities` says what is installed, by
//! whom, for whom. Output only: nothing the operator decides reads it back.

use super::Condition;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
#[kube(
    group = "core.navique.com",
    version = "v1alpha1",
    kind = "Capability",
    doc = "A capability operator of the catalog: what is installed, by whom, for whom. Written by the operator only.",
    plural = "capabilities",
    status = "CapabilityStatus",
    shortname = "nvcap",
    category = "navique",
    printcolumn(
        name = "Provenance",
        type_ = "string",
        json_path = ".status.provenance"
    ),
    printcolumn(
        name = "Bundled",
        type_ = "string",
        json_path = ".status.bundledVersion"
    ),
    printcolumn(
        name = "Installed",
        type_ = "string",
        json_path = ".status.installedVersion"
    ),
    printcolumn(name = "Ready", type_ = "boolean", json_path = ".status.ready"),
    printcolumn(
        name = "Consumers",
        type_ = "integer",
        json_path = ".status.consumerCount"
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
pub struct CapabilitySpec {}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
pub struct Consumer {
    pub kind: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    pub name: String,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
pub struct ReleaseLocation {
    pub name: String,
    pub namespace: String,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CapabilityStatus {
    /// owned | adopted | absent
    #[serde(default)]
    #[schemars(extend("enum" = ["owned", "adopted", "absent", ""]))]
    pub provenance: String,
    #[serde(default)]
    pub needed: bool,
    #[serde(default)]
    pub consumers: Vec<Consumer>,
    /// `consumers` counted, for the CONSUMERS column (JSONPath cannot count).
    #[serde(default)]
    pub consumer_count: i64,
    #[serde(default)]
    pub bundled_version: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub installed_version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release: Option<ReleaseLocation>,
    #[serde(default)]
    pub ready: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}
