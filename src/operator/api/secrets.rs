//! SecretsManagement (cluster-scoped): where secrets come from, a vault that
//! external-secrets connects as a ClusterSecretStore.

use super::CommonStatus;
use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "core.navique.com",
    version = "v1alpha1",
    kind = "SecretsManagement",
    doc = "Where secrets come from: a vault, connected by external-secrets.",
    plural = "secretsmanagements",
    status = "SecretsManagementStatus",
    shortname = "nvsm",
    category = "navique",
    printcolumn(name = "Server", type_ = "string", json_path = ".spec.vault.server"),
    printcolumn(name = "Phase", type_ = "string", json_path = ".status.phase"),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct SecretsManagementSpec {
    pub vault: Vault,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Vault {
    #[schemars(extend("pattern" = r"^https?://.+"))]
    pub server: String,
    /// The KV mount.
    #[schemars(extend("minLength" = 1))]
    pub path: String,
    #[serde(default = "v2")]
    #[schemars(extend("enum" = ["v1", "v2"]))]
    pub version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_bundle: Option<String>,
    pub auth: VaultAuth,
}

fn v2() -> String {
    "v2".into()
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("has(self.kubernetes) != has(self.tokenSecretRef)").message("exactly one of kubernetes or tokenSecretRef must be set"))]
pub struct VaultAuth {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubernetes: Option<KubernetesAuth>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_secret_ref: Option<NamespacedKeyRef>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubernetesAuth {
    #[schemars(extend("minLength" = 1))]
    pub mount_path: String,
    #[schemars(extend("minLength" = 1))]
    pub role: String,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
pub struct NamespacedKeyRef {
    #[schemars(extend("minLength" = 1, "maxLength" = 63, "pattern" = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"))]
    pub namespace: String,
    #[schemars(extend("minLength" = 1, "maxLength" = 253, "pattern" = super::NAME_PATTERN))]
    pub name: String,
    #[schemars(extend("minLength" = 1, "maxLength" = 253, "pattern" = super::SECRET_KEY_PATTERN))]
    pub key: String,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SecretsManagementStatus {
    #[serde(flatten)]
    pub common: CommonStatus,
    /// The ClusterSecretStore emitted, `navique-<name>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store: Option<String>,
}
