//! Every kind the operator serves, in one list: its names, its scope, how it
//! is carried out, what the free tier allows of it, and its CRD. What used
//! to be six lists (observe, realise, workload, crds, olm, the test harness)
//! is read from here.
//!
//! Adding a kind: its types in a new file of this folder, a variant below
//! with its facts, and its `Realise` implementation registered in
//! `crate::operator::decide::realise::of`.

use super::*;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::core::GroupVersionKind;
use kube::discovery::ApiResource;
use kube::CustomResourceExt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    PostgresCluster,
    ClickHouseCluster,
    Gateway,
    ChatUI,
    MeilisearchInstance,
    Observability,
    SecretsManagement,
    Capability,
}

/// How a kind is carried out, which decides the controller that serves it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// Realised as upstream objects the operator emits (a CNPG Cluster, a
    /// LiteLLM proxy, an external-secrets store).
    Emitting,
    /// Realised as a Helm release of a bundled workload chart.
    Workload,
    /// One per catalog entry, written by the operator: where a capability
    /// operator stands.
    Capability,
}

/// What the rest of the operator needs to know of a kind.
pub struct Facts {
    pub plural: &'static str,
    pub namespaced: bool,
    pub family: Family,
    /// Instances the free tier allows (a license names its own limits).
    pub free_limit: u32,
    /// The license feature every instance needs, if any.
    pub feature: Option<&'static str>,
    /// As the OLM console shows it.
    pub display_name: &'static str,
    pub description: &'static str,
    crd: fn() -> CustomResourceDefinition,
}

impl Kind {
    /// Every kind, in the order CRDs are generated and controllers started.
    pub const ALL: [Kind; 8] = [
        Kind::PostgresCluster,
        Kind::ClickHouseCluster,
        Kind::Gateway,
        Kind::ChatUI,
        Kind::MeilisearchInstance,
        Kind::Observability,
        Kind::SecretsManagement,
        Kind::Capability,
    ];

    pub fn facts(self) -> &'static Facts {
        match self {
            Kind::PostgresCluster => &Facts {
                plural: "postgresclusters",
                namespaced: true,
                family: Family::Emitting,
                free_limit: 2,
                feature: None,
                display_name: "PostgreSQL cluster",
                description: "A PostgreSQL database: managed (CloudNativePG, installed when needed), adopted, or external.",
                crd: PostgresCluster::crd,
            },
            Kind::ClickHouseCluster => &Facts {
                plural: "clickhouseclusters",
                namespaced: true,
                family: Family::Emitting,
                free_limit: 1,
                feature: None,
                display_name: "ClickHouse cluster",
                description: "A ClickHouse database on the ClickHouse Inc. or Altinity operator: managed, adopted, or external.",
                crd: ClickHouseCluster::crd,
            },
            Kind::Gateway => &Facts {
                plural: "gateways",
                namespaced: true,
                family: Family::Emitting,
                free_limit: 1,
                feature: None,
                display_name: "LLM gateway",
                description: "A LiteLLM proxy and its models, through the LiteLLM operator.",
                crd: Gateway::crd,
            },
            Kind::ChatUI => &Facts {
                plural: "chatuis",
                namespaced: true,
                family: Family::Workload,
                free_limit: 1,
                feature: None,
                display_name: "Chat UI",
                description: "Hugging Face chat-ui wired to a Gateway, as a Helm release.",
                crd: ChatUI::crd,
            },
            Kind::MeilisearchInstance => &Facts {
                plural: "meilisearchinstances",
                namespaced: true,
                family: Family::Workload,
                free_limit: 1,
                feature: None,
                display_name: "Meilisearch",
                description: "A Meilisearch search engine, as a Helm release.",
                crd: MeilisearchInstance::crd,
            },
            Kind::Observability => &Facts {
                plural: "observabilities",
                namespaced: true,
                family: Family::Workload,
                free_limit: 0,
                feature: Some(FEATURE_OBSERVABILITY),
                display_name: "Observability (Langfuse)",
                description: "Langfuse on the platform's PostgreSQL and ClickHouse, as a Helm release.",
                crd: Observability::crd,
            },
            Kind::SecretsManagement => &Facts {
                plural: "secretsmanagements",
                namespaced: false,
                family: Family::Emitting,
                free_limit: 0,
                feature: Some(FEATURE_SECRETS_MANAGEMENT),
                display_name: "Secrets management",
                description: "A Vault connection through external-secrets, for SecretSource.vault.",
                crd: SecretsManagement::crd,
            },
            Kind::Capability => &Facts {
                plural: "capabilities",
                namespaced: false,
                family: Family::Capability,
                free_limit: 0,
                feature: None,
                display_name: "Capability",
                description: "A capability operator: whether it is installed, by whom and for whom (written by the operator).",
                crd: Capability::crd,
            },
        }
    }

    /// The kinds users write (every kind but Capability).
    pub fn resources() -> impl Iterator<Item = Kind> {
        Kind::ALL
            .into_iter()
            .filter(|k| k.facts().family != Family::Capability)
    }

    pub fn of_family(family: Family) -> impl Iterator<Item = Kind> {
        Kind::ALL
            .into_iter()
            .filter(move |k| k.facts().family == family)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::PostgresCluster => "PostgresCluster",
            Kind::ClickHouseCluster => "ClickHouseCluster",
            Kind::Gateway => "Gateway",
            Kind::ChatUI => "ChatUI",
            Kind::MeilisearchInstance => "MeilisearchInstance",
            Kind::Observability => "Observability",
            Kind::SecretsManagement => "SecretsManagement",
            Kind::Capability => "Capability",
        }
    }

    pub fn parse(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == name)
    }

    pub fn namespaced(self) -> bool {
        self.facts().namespaced
    }

    pub fn family(self) -> Family {
        self.facts().family
    }

    /// The API resource the untyped watches and requests use.
    pub fn api_resource(self) -> ApiResource {
        ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk(GROUP, VERSION, self.as_str()),
            self.facts().plural,
        )
    }

    /// The CRD as the types generate it (before `crds::all` adjusts it).
    pub fn generated_crd(self) -> CustomResourceDefinition {
        (self.facts().crd)()
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<str> for Kind {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<Kind> for String {
    fn eq(&self, other: &Kind) -> bool {
        self.as_str() == other.as_str()
    }
}

impl serde::Serialize for Kind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl PartialEq<&str> for Kind {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// The features a license can include, by the names payloads use.
pub const FEATURE_OBSERVABILITY: &str = "Observability";
pub const FEATURE_SECRETS_MANAGEMENT: &str = "SecretsManagement";
pub const FEATURE_ALTINITY: &str = "altinity";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_named_as_its_type_and_its_crd() {
        for kind in Kind::ALL {
            assert_eq!(Kind::parse(kind.as_str()), Some(kind));
            let crd = kind.generated_crd();
            assert_eq!(crd.spec.names.kind, kind.as_str());
            assert_eq!(crd.spec.names.plural, kind.facts().plural);
            assert_eq!(crd.spec.scope == "Namespaced", kind.namespaced());
        }
    }
}
