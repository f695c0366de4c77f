//! ClickHouseCluster: a ClickHouse datastore, by the ClickHouse Inc.
//! operator (`type: clickhouse`) or Altinity's (`type: altinity`).

use super::{CommonStatus, ExternalConnection, LocalRef, Mode, Storage};
use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ClickHouseType {
    Clickhouse,
    Altinity,
}

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[kube(
    group = "core.navique.com",
    version = "v1alpha1",
    kind = "ClickHouseCluster",
    doc = "A ClickHouse datastore, by the ClickHouse Inc. operator or Altinity's.",
    namespaced,
    status = "ClickHouseClusterStatus",
    shortname = "nvch",
    category = "navique",
    printcolumn(name = "Type", type_ = "string", json_path = ".spec.type"),
    printcolumn(name = "Mode", type_ = "string", json_path = ".spec.mode"),
    printcolumn(name = "Phase", type_ = "string", json_path = ".status.phase"),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[x_kube(validation = Rule::new(crate::operator::api::MODE_RULE).message(crate::operator::api::MODE_RULE_MESSAGE))]
#[serde(rename_all = "camelCase")]
pub struct ClickHouseClusterSpec {
    #[serde(rename = "type")]
    pub type_: ClickHouseType,
    pub mode: Mode,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub managed: Option<ClickHouseManaged>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adopt: Option<ClickHouseAdopt>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external: Option<ExternalConnection>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClickHouseManaged {
    #[serde(default = "one")]
    #[schemars(range(min = 1))]
    pub shards: i32,
    #[serde(default = "one")]
    #[schemars(range(min = 1))]
    pub replicas: i32,
    #[serde(default)]
    pub storage: Storage,
    #[serde(default)]
    pub keeper: Keeper,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
pub struct Keeper {
    #[serde(default)]
    #[schemars(range(min = 0))]
    pub replicas: i32,
}

fn one() -> i32 {
    1
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
pub struct ClickHouseAdopt {
    /// A clickhouse.com ClickHouseCluster, or an Altinity ClickHouseInstallation.
    #[serde(rename = "ref")]
    pub ref_: LocalRef,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClickHouseClusterStatus {
    #[serde(flatten)]
    pub common: CommonStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection_secret: Option<String>,
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<ClickHouseType>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<Mode>,
}

pub const EXTERNAL_KEYS: &[&str] = &[
    "host",
    "httpPort",
    "nativePort",
    "username",
    "password",
    "database",
];
