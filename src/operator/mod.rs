//! The operator: what the user asked ([`api`]), what we know ([`catalog`],
//! [`observe`]), what we decide ([`provenance`], [`needs`], [`plan`],
//! [`realise`], [`gc`]; [`report`] prints it), how it happens
//! ([`controller`], [`process`], [`telemetry`]). Every decision is a plain
//! function of a snapshot; only `observe` and `controller` talk to a cluster.

pub mod airgap;
pub mod api;
pub mod cache;
pub mod catalog;
pub mod controller;
pub mod crds;
pub mod gc;
pub mod license;
pub mod needs;
pub mod observe;
pub mod olm;
pub mod plan;
pub mod process;
pub mod provenance;
pub mod rbac;
pub mod realise;
pub mod report;
pub mod shipping;
pub mod status;
pub mod telemetry;
