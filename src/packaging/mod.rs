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
