//! Capability (cluster-scoped): one per catalog entry, so `kubectl get
//! capabilities` says what is installed, by whom, for whom. The status is
//! the operator's and output only (nothing it decides reads it back); the
//! spec is the platform admin's (values, suspend, drift) and never written
//! by the operator.

use super::Condition;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
#[kube(
    group = "core.navique.com",
    version = "v1alpha1",
    kind = "Capability",
    doc = "A capability operator of the catalog: what is installed, by whom, for whom (status, written by the operator), and how the platform admin wants our release of it configured (spec).",
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
    printcolumn(name = "Suspended", type_ = "boolean", json_path = ".spec.suspend"),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
pub struct CapabilitySpec {
    /// true: no install, upgrade, uninstall or drift correction of our
    /// release; its status is still reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspend: Option<bool>,
    /// What to do when objects of our release drift: correct (default),
    /// warn (report only) or off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["correct", "warn", "off"]))]
    pub drift: Option<String>,
    /// Helm values merged over the catalog's for our release only (Helm's
    /// coalescing: null removes a chart default). Values the catalog sets
    /// are locked: a spec that changes one is refused as a whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "free_object")]
    pub values: Option<serde_json::Value>,
}

/// An object of any fields, kept as written (no pruning).
fn free_object(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": true
    })
}

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
