//! Gateway: an LLM gateway (LiteLLM proxy and its models). Shares its kind
//! with Gateway API's, so it is addressed as `gateways.core.navique.com`.

use super::{CommonStatus, LocalRef, SecretSource};
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "core.navique.com",
    version = "v1alpha1",
    kind = "Gateway",
    doc = "An LLM gateway: a LiteLLM proxy and one model per entry of models.",
    namespaced,
    status = "GatewayStatus",
    shortname = "nvgw",
    category = "navique",
    printcolumn(name = "Phase", type_ = "string", json_path = ".status.phase"),
    printcolumn(name = "Endpoint", type_ = "string", json_path = ".status.endpoint"),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct GatewaySpec {
    /// LiteLLM in database mode, on this PostgresCluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub postgres_cluster_ref: Option<LocalRef>,
    pub master_key: SecretSource,
    #[serde(default = "one")]
    #[schemars(range(min = 0))]
    pub replicas: i32,
    /// Keyed by name: two entries of one name are refused on admission, and
    /// server-side apply merges the list entry by entry.
    #[serde(default)]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"]))]
    pub models: Vec<GatewayModel>,
}

fn one() -> i32 {
    1
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GatewayModel {
    #[schemars(extend("minLength" = 1))]
    pub name: String,
    /// LiteLLM's provider/model, for example `openai/gpt-4o`.
    #[schemars(extend("minLength" = 1))]
    pub model: String,
    /// An http(s) URL, or empty for the provider's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("pattern" = r"^(https?://.+)?$"))]
    pub api_base: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key: Option<SecretSource>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GatewayStatus {
    #[serde(flatten)]
    pub common: CommonStatus,
    /// The proxy's in-cluster URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
}
