//! The operator, read top-down as the story it tells:
//!
//! - [`api`]: what users write (the custom resources and their CRDs);
//! - [`model`]: what we know (the catalog of pinned charts, one fresh read of
//!   the cluster or the copy the watches keep, the license as found);
//! - [`decide`]: what should change, as pure functions of what we know
//!   (provenance, lazy needs, the plan, garbage collection, the licence
//!   verdict, conditions, and per kind the objects and values it realises);
//! - [`reconcile`]: small controllers that read once, decide, act through
//!   the release and apply layers, and report (status, Events, metrics);
//! - [`runtime`]: the process around them (leader election, metrics and
//!   health, image mirrors).
//!
//! Only `model` and `reconcile` talk to a cluster; a decision that needs a
//! cluster to be tested is in the wrong place. Build-time packaging (the
//! chart, the OLM bundle, RBAC, air-gap lists) is in [`crate::packaging`].

pub mod api;
pub mod decide;
pub mod model;
pub mod reconcile;
pub mod runtime;
