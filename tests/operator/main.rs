//! The operator's rules, one scenario each, on the embedded API server (or
//! the cluster NAVIQUE_TEST_KUBECONFIG names): cluster state afterwards
//! (releases, objects, Capability status, Events) is what is asserted.
//! CloudNativePG never runs here: the tests write the status it would write
//! on its Cluster (`Env::cnpg_reports_ready`).
//!
//! The scenarios live in one file per topic, each opening with the rules it
//! holds, over one harness (`harness.rs`: the cluster, the operator, real
//! Helm and kubectl, the upstream controllers' part) and the helpers several
//! topics share (`common.rs`):
//!
//! - `capabilities.rs`: installing, upgrading and releasing the capability
//!   operators we own;
//! - `adoption.rs`: what is already there is adopted, never duplicated or
//!   touched;
//! - `datastores.rs`: PostgresCluster and ClickHouseCluster, their modes and
//!   the moves between them;
//! - `workloads.rs`: Gateway, SecretsManagement, ChatUI, MeilisearchInstance
//!   and Observability;
//! - `licensing.rs`: the free tier and a signed license;
//! - `process.rs`: stop and start, leader election, health, metrics, logs,
//!   `plan`, no secret leaving the process;
//! - `pull_secrets.rs`: `--image-pull-secret`'s copies, where they are
//!   listed, and what a missing or wrong one does;
//! - `reliability.rs`: bad input, API server faults, SIGKILL, requests when
//!   converged;
//! - `day2.rs`: after the first install: the admin's Capability spec
//!   (values, suspend), the pause annotation, drift healing.
//!
//! Each test keeps its name: `cargo test --test operator <name>` runs it.

mod common;
mod day2;
mod harness;

mod adoption;
mod capabilities;
mod datastores;
mod licensing;
mod process;
mod pull_secrets;
mod reliability;
mod workloads;
