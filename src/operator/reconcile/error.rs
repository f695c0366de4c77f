//! Why a reconcile did not finish: one typed error for every controller,
//! with its source kept, and a label per variant for the metrics, so retries
//! and dashboards can tell a conflict from a timeout from a missing chart.

use crate::action::ActionError;
use crate::apply::ApplyError;
use crate::operator::api::Kind;
use crate::operator::model::catalog::CatalogError;
use kube::runtime::finalizer::Error as FinalizerError;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A request to the API server failed.
    #[error(transparent)]
    Kube(#[from] kube::Error),
    /// A release action (install, upgrade, uninstall), in Helm's words.
    #[error(transparent)]
    Action(#[from] Box<ActionError>),
    /// Discovery or a server-side apply outside a release action.
    #[error(transparent)]
    Apply(#[from] Box<ApplyError>),
    /// A pinned chart could not be loaded.
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    /// An emitted object's kind is not served (its operator's CRD is gone).
    #[error("{api_version} {kind}: the cluster does not serve this kind")]
    Unserved { api_version: String, kind: String },
    /// Another reconcile is acting on the release; this one looks again.
    #[error("an action on release {0} is still running")]
    ReleaseBusy(String),
    /// The catalog this build carries has no chart for a workload kind.
    #[error("the catalog has no workload chart for {0}")]
    NoWorkloadChart(Kind),
    #[error("starting a release worker: {0}")]
    Worker(#[source] std::io::Error),
    #[error("the release worker stopped")]
    WorkerStopped,
    /// Deletion goes on while objects we emitted are still being deleted:
    /// the finalizer stays, and the resource is looked at again soon.
    #[error("{0}")]
    CleanupPending(String),
    /// Paused by the annotation while being deleted: the finalizer stays
    /// until the pause is lifted (a change of the object looks again).
    #[error(
        "paused by {}: {}; the deletion waits",
        crate::operator::api::PAUSE_ANNOTATION,
        crate::operator::api::PAUSED
    )]
    Paused,
    /// Adding or removing our finalizer, or the reconcile it wrapped.
    #[error(transparent)]
    Finalizer(Box<kube::runtime::finalizer::Error<Error>>),
}

impl From<ActionError> for Error {
    fn from(e: ActionError) -> Self {
        Error::Action(Box::new(e))
    }
}

impl From<ApplyError> for Error {
    fn from(e: ApplyError) -> Self {
        Error::Apply(Box::new(e))
    }
}

impl Error {
    /// The `error` label of `navique_reconcile_errors_total`.
    pub fn metric_label(&self) -> &'static str {
        match self {
            Error::Kube(kube::Error::Api(s)) if s.code == 409 => "conflict",
            Error::Kube(_) => "kube",
            Error::Action(e) => match e.as_ref() {
                ActionError::Apply(ApplyError::Timeout(_)) => "action_timeout",
                ActionError::HookCreate { .. } | ActionError::Hooks { .. } => "action_hooks",
                _ => "action",
            },
            Error::Apply(_) => "apply",
            Error::Catalog(_) => "catalog",
            Error::Unserved { .. } => "unserved",
            Error::ReleaseBusy(_) => "release_busy",
            Error::NoWorkloadChart(_) => "no_workload_chart",
            Error::Worker(_) | Error::WorkerStopped => "worker",
            Error::CleanupPending(_) => "cleanup_pending",
            Error::Paused => "paused",
            Error::Finalizer(e) => match e.as_ref() {
                FinalizerError::ApplyFailed(e) | FinalizerError::CleanupFailed(e) => {
                    e.metric_label()
                }
                _ => "finalizer",
            },
        }
    }

    /// Whether the reconcile is only waiting (not failing): no backoff.
    /// A deletion held by the pause annotation: nothing to poll for.
    pub fn is_paused(&self) -> bool {
        match self {
            Error::Paused => true,
            Error::Finalizer(e) => matches!(
                e.as_ref(),
                FinalizerError::CleanupFailed(e) if e.is_paused()
            ),
            _ => false,
        }
    }

    pub fn is_waiting(&self) -> bool {
        match self {
            Error::CleanupPending(_) | Error::Paused => true,
            Error::Finalizer(e) => matches!(
                e.as_ref(),
                FinalizerError::CleanupFailed(e) if e.is_waiting()
            ),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_action_error_keeps_its_words_and_its_source() {
        let e: Error = ActionError::Apply(ApplyError::Timeout("timed out waiting".into())).into();
        assert_eq!(e.to_string(), "timed out waiting");
        assert_eq!(e.metric_label(), "action_timeout");
        assert!(std::error::Error::source(&e).is_some());
    }

    #[test]
    fn a_conflict_is_told_from_other_api_errors() {
        let status = |code| {
            kube::Error::Api(
                kube::core::Status::failure("the object has been modified", "Conflict")
                    .with_code(code)
                    .boxed(),
            )
        };
        assert_eq!(Error::Kube(status(409)).metric_label(), "conflict");
        assert_eq!(Error::Kube(status(500)).metric_label(), "kube");
    }
}
