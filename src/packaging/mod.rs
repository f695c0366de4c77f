//! What ships the operator, made at build time from the same types and
//! catalog the operator runs with: the Kubernetes manifests and the
//! operator's own Helm chart ([`shipping`]), the OLM bundle ([`olm`]), the
//! RBAC the bundled charts need ([`rbac`]), the images an air-gapped mirror
//! must hold ([`airgap`]), and the generated `crds/` directory ([`crds`]).
//! Nothing here runs in the cluster.

pub mod airgap;
pub mod crds;
pub mod olm;
pub mod rbac;
pub mod shipping;

use crate::action::ActionError;
use crate::operator::model::catalog::CatalogError;

/// Why the shipped files could not be made from the bundled charts.
#[derive(Debug, thiserror::Error)]
pub enum PackagingError {
    /// A pinned chart is missing or does not verify.
    #[error("{0}")]
    Chart(#[source] CatalogError),
    /// A bundled chart did not render as release `release`.
    #[error("{release}: {source}")]
    Render {
        release: String,
        #[source]
        source: ActionError,
    },
    /// A hook's manifest does not read as objects.
    #[error("{release}: hook {path}: {source}")]
    Hook {
        release: String,
        path: String,
        #[source]
        source: crate::apply::objects::ObjectsError,
    },
    /// A rendered kind the RBAC table cannot name the resource of.
    #[error(
        "chart {chart}: kind {kind} ({group}) is not in the RBAC table of src/operator/rbac.rs"
    )]
    KindNotInRbacTable {
        chart: String,
        kind: String,
        group: String,
    },
    /// A Role or ClusterRole `name` of `chart` grants what the operator
    /// refuses to hold.
    #[error("chart {chart}: {kind} {name}: {source}")]
    Role {
        chart: String,
        kind: String,
        name: String,
        #[source]
        source: rbac::WildcardGrant,
    },
    #[error("CRD kind {0} is not one of the operator's kinds")]
    UnknownCrdKind(String),
}
