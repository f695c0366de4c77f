//! PostgresCluster: a PostgreSQL datastore, realised by CloudNativePG
//! (managed), a user's CNPG Cluster (adopt) or a connection Secret (external).

use super::{CommonStatus, ExternalConnection, LocalRef, Mode, Storage};
use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[kube(
    group = "core.navique.com",
    version = "v1alpha1",
    kind = "PostgresCluster",
    doc = "A PostgreSQL datastore: CloudNativePG (managed), a user's CNPG Cluster (adopt) or a connection Secret (external).",
    namespaced,
    status = "PostgresClusterStatus",
    shortname = "nvpg",
    category = "navique",
    printcolumn(name = "Mode", type_ = "string", json_path = ".spec.mode"),
    printcolumn(name = "Phase", type_ = "string", json_path = ".status.phase"),
    printcolumn(
        name = "Secret",
        type_ = "string",
        json_path = ".status.connectionSecret"
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[x_kube(validation = Rule::new(crate::operator::api::MODE_RULE).message(crate::operator::api::MODE_RULE_MESSAGE))]
#[serde(rename_all = "camelCase")]
pub struct PostgresClusterSpec {
    pub mode: Mode,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub managed: Option<PostgresManaged>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adopt: Option<PostgresAdopt>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external: Option<ExternalConnection>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PostgresManaged {
    /// CNPG `spec.instances`.
    #[serde(default = "one")]
    #[schemars(range(min = 1))]
    pub instances: i32,
    #[serde(default)]
    pub storage: Storage,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_name: Option<String>,
    /// `bootstrap.initdb.database` (default `app`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database: Option<String>,
    /// `bootstrap.initdb.owner` (default `app`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// `postgresql.parameters`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub parameters: BTreeMap<String, String>,
}

fn one() -> i32 {
    1
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PostgresAdopt {
    /// An existing CNPG Cluster in this namespace.
    pub cluster_ref: LocalRef,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PostgresClusterStatus {
    #[serde(flatten)]
    pub common: CommonStatus,
    /// The Secret consumers read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection_secret: Option<String>,
    /// The mode last realised.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<Mode>,
}

/// The keys an external connection Secret must hold.
pub const EXTERNAL_KEYS: &[&str] = &["host", "port", "username", "password", "dbname"];
