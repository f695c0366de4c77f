//! ChatUI, MeilisearchInstance and Observability: each one Helm release of a
//! bundled workload chart, in the resource's namespace, owned by us.

use super::{CommonStatus, LocalRef, SecretSource, Storage};
use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Free-form chart values, merged over what the operator computes.
pub type Values = serde_json::Map<String, serde_json::Value>;

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "core.navique.com",
    version = "v1alpha1",
    kind = "ChatUI",
    doc = "A chat front end (Hugging Face chat-ui) wired to a Gateway.",
    plural = "chatuis",
    namespaced,
    status = "WorkloadStatus",
    shortname = "nvchat",
    category = "navique",
    printcolumn(name = "Phase", type_ = "string", json_path = ".status.phase"),
    printcolumn(name = "Release", type_ = "string", json_path = ".status.release.name"),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct ChatUISpec {
    /// The chart's OpenAI-compatible endpoint is this Gateway's endpoint + "/v1".
    pub gateway_ref: LocalRef,
    #[serde(default = "one")]
    #[schemars(range(min = 0))]
    pub replicas: i32,
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    #[schemars(extend("x-kubernetes-preserve-unknown-fields" = true))]
    pub values: Values,
}

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[kube(
    group = "core.navique.com",
    version = "v1alpha1",
    kind = "MeilisearchInstance",
    doc = "A Meilisearch search engine.",
    namespaced,
    status = "WorkloadStatus",
    shortname = "nvms",
    category = "navique",
    printcolumn(name = "Phase", type_ = "string", json_path = ".status.phase"),
    printcolumn(name = "Release", type_ = "string", json_path = ".status.release.name"),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct MeilisearchInstanceSpec {
    pub master_key: SecretSource,
    #[serde(default)]
    pub persistence: Storage,
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    #[schemars(extend("x-kubernetes-preserve-unknown-fields" = true))]
    pub values: Values,
}

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[kube(
    group = "core.navique.com",
    version = "v1alpha1",
    kind = "Observability",
    doc = "LLM tracing and metrics (Langfuse) wired to the platform's datastores.",
    plural = "observabilities",
    namespaced,
    status = "WorkloadStatus",
    shortname = "nvobs",
    category = "navique",
    printcolumn(name = "Phase", type_ = "string", json_path = ".status.phase"),
    printcolumn(name = "Release", type_ = "string", json_path = ".status.release.name"),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[x_kube(validation = Rule::new(OBSERVABILITY_RULE).message(OBSERVABILITY_RULE_MESSAGE))]
#[serde(rename_all = "camelCase")]
pub struct ObservabilitySpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub postgres_cluster_ref: Option<LocalRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub click_house_cluster_ref: Option<LocalRef>,
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    #[schemars(extend("x-kubernetes-preserve-unknown-fields" = true))]
    pub values: Values,
}

/// Optional in the schema (a later build may bundle Langfuse's own
/// datastores), required by this one.
pub const OBSERVABILITY_RULE: &str =
    "has(self.postgresClusterRef) && has(self.clickHouseClusterRef)";
pub const OBSERVABILITY_RULE_MESSAGE: &str = "postgresClusterRef and clickHouseClusterRef are required: this build runs Langfuse on the platform's datastores";

fn one() -> i32 {
    1
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReleaseRef {
    pub name: String,
    pub namespace: String,
    pub revision: i64,
    pub chart_version: String,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadStatus {
    #[serde(flatten)]
    pub common: CommonStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release: Option<ReleaseRef>,
}

/// `chat-ui-<name>` and the like; over 53 characters, cut to 40 and suffixed
/// with `-` and 12 hex characters of the full name's SHA-256.
pub fn release_name(prefix: &str, name: &str) -> String {
    use sha2::{Digest, Sha256};
    let full = format!("{prefix}-{name}");
    if full.len() <= 53 {
        return full;
    }
    let digest = Sha256::digest(full.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    let cut = full[..40].trim_end_matches('-');
    format!("{cut}-{}", &hex[..12])
}

#[cfg(test)]
mod tests {
    #[test]
    fn long_release_names_are_cut_and_hashed() {
        assert_eq!(super::release_name("chat-ui", "web"), "chat-ui-web");
        let long = "x".repeat(60);
        let n = super::release_name("langfuse", &long);
        assert_eq!(n.len(), 53);
        assert!(n.starts_with(&format!("langfuse-{}-", "x".repeat(31))));
    }
}
