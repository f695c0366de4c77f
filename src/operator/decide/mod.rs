//! What should change, as pure functions of what we know: what the admin
//! asks of our releases ([`configure`]), whether what we own drifted
//! ([`drift`]), whose each
//! capability operator is ([`provenance`]), what the resources need
//! ([`needs`]), what to do about each capability ([`plan`]), what was emitted
//! and is no longer wanted ([`gc`]), what the license allows ([`verdict`]),
//! the status to report ([`conditions`]), where the copies of the image
//! pull secrets go ([`pull_secrets`]), `plan`'s printed report
//! ([`report`]) and, per kind, the objects and values a spec realises
//! ([`realise`]). Nothing here reads or writes a cluster.

pub mod conditions;
pub mod configure;
pub mod drift;
pub mod gc;
pub mod needs;
pub mod plan;
pub mod provenance;
pub mod pull_secrets;
pub mod realise;
pub mod report;
pub mod standing;
pub mod verdict;
