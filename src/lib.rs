//! Navique AI Core Operator: renders and installs Helm charts without Helm.
//!
//! Layers (each readable on its own):
//! - [`gotmpl`]: Go text/template + Sprig + Helm functions (pure).
//! - [`goyaml`]: YAML and JSON exactly as Helm's Go libraries read and write them (pure).
//! - [`chart`]: load a chart, coalesce values, render, assemble manifests.

pub mod action;
pub mod apply;
pub mod chart;
pub mod cli;
pub mod digest;
pub mod gotmpl;
pub mod goyaml;
pub mod memory;
pub mod oci;
pub mod operator;
pub mod packaging;
pub mod par;
pub mod release;
pub mod value;
