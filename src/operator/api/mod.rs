//! The custom resources users write (group `core.navique.com`, version
//! `v1alpha1`), one file per kind, and the shapes they share. These types
//! generate the CRDs (`navique-operator crds`) and parse specs; the
//! controllers watch the kinds untyped so that one malformed object becomes
//! a condition on that object instead of breaking the watch for all of them.

pub mod capability;
pub mod clickhouse;
pub mod conditions;
pub mod crds;
pub mod gateway;
pub mod kind;
pub mod postgres;
pub mod secrets;
pub mod workloads;

use kube::KubeSchema;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use capability::{Capability, CapabilitySpec, CapabilityStatus};
pub use clickhouse::{ClickHouseCluster, ClickHouseClusterSpec, ClickHouseClusterStatus};
pub use conditions::{ConditionType, Reason};
pub use gateway::{Gateway, GatewaySpec, GatewayStatus};
pub use kind::{Family, Kind};
pub use postgres::{PostgresCluster, PostgresClusterSpec, PostgresClusterStatus};
pub use secrets::{SecretsManagement, SecretsManagementSpec, SecretsManagementStatus};
pub use workloads::{
    ChatUI, ChatUISpec, MeilisearchInstance, MeilisearchInstanceSpec, Observability,
    ObservabilitySpec, WorkloadStatus,
};

pub const GROUP: &str = "core.navique.com";
pub const VERSION: &str = "v1alpha1";
pub const API_VERSION: &str = "core.navique.com/v1alpha1";
pub const CATEGORY: &str = "navique";
pub const FINALIZER: &str = "core.navique.com/cleanup";
pub const MANAGED_BY: &str = "navique-ai-core-operator";
pub const MANAGED_BY_LABEL: &str = "app.kubernetes.io/managed-by";
pub const PROVENANCE_ANNOTATION: &str = "core.navique.com/provenance";
pub const CAPABILITY_LABEL: &str = "core.navique.com/capability";
/// `core.navique.com/reconcile: disabled` on a resource: hands off it (no
/// write of any kind for it) until the annotation goes.
pub const PAUSE_ANNOTATION: &str = "core.navique.com/reconcile";
pub const PAUSED: &str = "disabled";
/// `<Kind>/<namespace>/<name>`: an annotation, since label values cannot hold a slash.
pub const OWNER_ANNOTATION: &str = "core.navique.com/owner";
/// On every object of a workload release of ours, naming the release: what
/// the drift watches select (the owner annotation cannot be selected).
pub const WORKLOAD_LABEL: &str = "core.navique.com/workload";

/// A secret value, wherever a spec needs one: exactly one of the two.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("has(self.secretKeyRef) != has(self.vault)").message("exactly one of secretKeyRef or vault must be set"))]
pub struct SecretSource {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_key_ref: Option<SecretKeyRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vault: Option<VaultRef>,
}

/// An object name (a DNS-1123 subdomain), as the API server requires of
/// Secrets, CNPG Clusters and our own kinds.
pub const NAME_PATTERN: &str = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";
/// A key of a Secret's data.
pub const SECRET_KEY_PATTERN: &str = r"^[-._a-zA-Z0-9]+$";
/// A Kubernetes quantity (`10Gi`, `500M`, `1e3`).
pub const QUANTITY_PATTERN: &str = r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$";

/// A key of a Secret in the resource's namespace.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
pub struct SecretKeyRef {
    #[schemars(extend("minLength" = 1, "maxLength" = 253, "pattern" = NAME_PATTERN))]
    pub name: String,
    #[schemars(extend("minLength" = 1, "maxLength" = 253, "pattern" = SECRET_KEY_PATTERN))]
    pub key: String,
}

/// A value in the vault that the `SecretsManagement` named `store` connects.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
pub struct VaultRef {
    #[schemars(extend("minLength" = 1))]
    pub store: String,
    #[schemars(extend("minLength" = 1))]
    pub path: String,
    #[schemars(extend("minLength" = 1))]
    pub property: String,
}

/// A reference to an object by name, in the resource's namespace.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
pub struct LocalRef {
    #[schemars(extend("minLength" = 1, "maxLength" = 253, "pattern" = NAME_PATTERN))]
    pub name: String,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExternalConnection {
    pub connection_secret_ref: LocalRef,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Storage {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("pattern" = QUANTITY_PATTERN))]
    pub size: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage_class: Option<String>,
}

/// Where every kind stands, in the words `kubectl get` shows.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum Phase {
    Pending,
    Provisioning,
    Ready,
    Failed,
    Rejected,
    Deleting,
}

/// A condition in the Kubernetes shape (metav1.Condition).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    #[serde(rename = "type")]
    pub type_: String,
    /// "True", "False" or "Unknown".
    pub status: String,
    pub reason: String,
    #[serde(default)]
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// RFC 3339.
    pub last_transition_time: String,
}

/// One capability operator a resource needs, as found now.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CapabilityUse {
    pub name: String,
    #[serde(default)]
    pub chart_version: String,
    /// owned | adopted | absent
    pub provenance: String,
    #[serde(default)]
    pub release: String,
    #[serde(default)]
    pub namespace: String,
    pub ready: bool,
}

/// An object the operator created for a resource: the basis of migration GC.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OwnedObject {
    pub api_version: String,
    pub kind: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    pub name: String,
}

/// The status fields every kind has.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommonStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<Phase>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub capabilities: Vec<CapabilityUse>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub owned: Vec<OwnedObject>,
}

/// The three ways a datastore can be provided.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Mode {
    Managed,
    Adopt,
    External,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Managed => "managed",
            Mode::Adopt => "adopt",
            Mode::External => "external",
        }
    }
}

/// The CEL rule tying `mode` to exactly one matching block.
/// The members of the datastores' mode union, one per mode.
pub const MODE_BRANCHES: [&str; 3] = ["managed", "adopt", "external"];
pub const MODE_RULE: &str = "(self.mode == 'managed') == has(self.managed) && (self.mode == 'adopt') == has(self.adopt) && (self.mode == 'external') == has(self.external)";
pub const MODE_RULE_MESSAGE: &str =
    "exactly one of managed, adopt or external must be set, the one that mode names";
