//! Where a resource stands once a reconcile has decided and acted: the
//! phase, the conditions and the Event to publish, as one pure function,
//! so every path a reconcile ends on is reported the same way (and an
//! Event is published once per change of what is reported, not on every
//! reconcile).

use crate::operator::api::{Condition, ConditionType, Phase, Reason};
use crate::operator::decide::conditions::condition;

/// How a reconcile of a resource ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Standing {
    /// The spec cannot be realised (a field named in the message).
    Invalid(String),
    /// References or capability operators are not there or not Ready.
    Waiting(String),
    /// A release of the wanted name exists and is someone else's.
    NotOurs(String),
    /// The release action failed (its Event is published where it failed).
    ReleaseFailed(String),
    /// Everything was applied; what it waits for to be Ready.
    Provisioning(String),
    /// Ready, with what it offers its consumers.
    Ready(String),
}

/// An Event to publish on the resource.
#[derive(Clone, Debug, PartialEq)]
pub struct Note {
    pub warning: bool,
    pub reason: &'static str,
    pub message: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    pub phase: Phase,
    pub conditions: Vec<Condition>,
    pub note: Option<Note>,
}

/// The report of `standing`, next to the capabilities' and the license's
/// conditions; `old` keeps transition times and tells what changed.
pub fn report(
    old: &[Condition],
    standing: &Standing,
    capabilities: Condition,
    licensed: Condition,
    generation: Option<i64>,
) -> Report {
    use Standing::*;
    let (phase, ok, reason, message) = match standing {
        Invalid(m) => (Phase::Failed, false, Reason::InvalidSpec, m),
        Waiting(m) => (Phase::Pending, false, Reason::Waiting, m),
        NotOurs(m) => (Phase::Failed, false, Reason::NotOurs, m),
        ReleaseFailed(m) => (Phase::Failed, false, Reason::ReleaseFailed, m),
        Provisioning(m) => (Phase::Provisioning, false, Reason::Provisioning, m),
        Ready(m) => (Phase::Ready, true, Reason::Ready, m),
    };
    let ready = condition(old, ConditionType::Ready, ok, reason, message, generation);
    let said_before = old.iter().any(|c| {
        c.type_ == ConditionType::Ready.as_str()
            && c.message == *message
            && (c.reason == reason.as_str() || matches!(standing, Invalid(_)))
    });
    let note = match standing {
        Invalid(m) if !said_before => Some(Note {
            warning: true,
            reason: "Failed",
            message: format!("invalid spec: {m}"),
        }),
        Waiting(m) if !said_before => Some(Note {
            warning: false,
            reason: "Waiting",
            message: m.clone(),
        }),
        _ => None,
    };
    Report {
        phase,
        conditions: vec![ready, capabilities, licensed],
        note,
    }
}

/// Being deleted, waiting for what `message` names; what was known of the
/// capabilities and the license stays.
pub fn deleting(old: &[Condition], message: &str, generation: Option<i64>) -> Report {
    let ready = condition(
        old,
        ConditionType::Ready,
        false,
        Reason::Deleting,
        message,
        generation,
    );
    Report {
        phase: Phase::Deleting,
        conditions: std::iter::once(ready)
            .chain(
                old.iter()
                    .filter(|c| c.type_ != ConditionType::Ready.as_str())
                    .cloned(),
            )
            .collect(),
        note: None,
    }
}

/// Paused by the annotation: the phase stays, Ready says why nothing moves
/// (a deletion waits for the resume too); announced once when it starts.
pub fn paused(old: &[Condition], phase: Phase, deleting: bool, generation: Option<i64>) -> Report {
    let message = if deleting {
        format!(
            "{}: {} is set; the deletion waits until it is removed (nothing is garbage-collected meanwhile)",
            crate::operator::api::PAUSE_ANNOTATION,
            crate::operator::api::PAUSED
        )
    } else {
        format!(
            "{}: {} is set; nothing is written for it until it is removed",
            crate::operator::api::PAUSE_ANNOTATION,
            crate::operator::api::PAUSED
        )
    };
    let was_paused = is_paused(old);
    let ready = condition(
        old,
        ConditionType::Ready,
        false,
        Reason::Suspended,
        &message,
        generation,
    );
    Report {
        phase: if deleting { Phase::Deleting } else { phase },
        conditions: std::iter::once(ready)
            .chain(
                old.iter()
                    .filter(|c| c.type_ != ConditionType::Ready.as_str())
                    .cloned(),
            )
            .collect(),
        note: (!was_paused).then(|| Note {
            warning: false,
            reason: "Suspended",
            message,
        }),
    }
}

/// Whether the last report said paused.
pub fn is_paused(old: &[Condition]) -> bool {
    old.iter()
        .any(|c| c.type_ == ConditionType::Ready.as_str() && c.reason == Reason::Suspended.as_str())
}

/// The Event of a resume: the last report said paused and this one acts.
pub fn resumed(old: &[Condition]) -> Option<Note> {
    is_paused(old).then(|| Note {
        warning: false,
        reason: "Resumed",
        message: format!(
            "{} removed: reconciling again",
            crate::operator::api::PAUSE_ANNOTATION
        ),
    })
}

/// A resource the license does not cover: reported, never acted for, and
/// nothing of what it has is deleted; the capabilities' condition stays as
/// it was (or says Rejected the first time).
pub fn rejected(
    old: &[Condition],
    reason: Reason,
    message: &str,
    generation: Option<i64>,
) -> Report {
    let licensed_before = old
        .iter()
        .find(|c| c.type_ == ConditionType::Licensed.as_str())
        .map(|c| (c.status.as_str(), c.reason.as_str()));
    let note = (licensed_before != Some(("False", reason.as_str()))).then(|| Note {
        warning: true,
        reason: reason.as_str(),
        message: message.to_string(),
    });
    let capabilities = old
        .iter()
        .find(|c| c.type_ == ConditionType::CapabilitiesReady.as_str())
        .cloned()
        .unwrap_or_else(|| {
            condition(
                &[],
                ConditionType::CapabilitiesReady,
                false,
                Reason::Rejected,
                message,
                generation,
            )
        });
    Report {
        phase: Phase::Rejected,
        conditions: vec![
            condition(
                old,
                ConditionType::Ready,
                false,
                Reason::Rejected,
                message,
                generation,
            ),
            capabilities,
            condition(
                old,
                ConditionType::Licensed,
                false,
                reason,
                message,
                generation,
            ),
        ],
        note,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pause_is_announced_once_keeps_the_phase_and_its_resume_once() {
        let old = report(
            &[],
            &Standing::Ready("up".into()),
            caps(),
            licensed(),
            Some(1),
        );
        let p = paused(&old.conditions, Phase::Ready, false, Some(1));
        assert_eq!(p.phase, Phase::Ready);
        assert_eq!(p.note.as_ref().map(|n| n.reason), Some("Suspended"));
        assert_eq!(p.conditions[0].reason, "Suspended");
        assert_eq!(p.conditions.len(), 3);
        let again = paused(&p.conditions, Phase::Ready, true, Some(1));
        assert_eq!((again.phase, again.note), (Phase::Deleting, None));
        assert!(again.conditions[0].message.contains("deletion waits"));
        assert_eq!(
            resumed(&again.conditions).map(|n| n.reason),
            Some("Resumed")
        );
        assert_eq!(resumed(&old.conditions), None);
    }

    fn caps() -> Condition {
        condition(
            &[],
            ConditionType::CapabilitiesReady,
            true,
            Reason::Ready,
            "",
            Some(1),
        )
    }

    fn licensed() -> Condition {
        condition(
            &[],
            ConditionType::Licensed,
            true,
            Reason::Licensed,
            "free",
            Some(1),
        )
    }

    #[test]
    fn a_wait_is_announced_once_and_its_transition_time_kept() {
        let first = report(
            &[],
            &Standing::Waiting("Gateway gw".into()),
            caps(),
            licensed(),
            Some(1),
        );
        assert_eq!(first.phase, Phase::Pending);
        assert_eq!(first.note.as_ref().map(|n| n.reason), Some("Waiting"));
        let mut old = first.conditions.clone();
        old[0].last_transition_time = "2026-01-01T00:00:00Z".into();
        let again = report(
            &old,
            &Standing::Waiting("Gateway gw".into()),
            caps(),
            licensed(),
            Some(1),
        );
        assert_eq!(again.note, None);
        assert_eq!(
            again.conditions[0].last_transition_time,
            "2026-01-01T00:00:00Z"
        );
        let other = report(
            &old,
            &Standing::Waiting("PostgresCluster db".into()),
            caps(),
            licensed(),
            Some(1),
        );
        assert!(other.note.is_some());
    }

    #[test]
    fn an_invalid_spec_is_a_warning_once_per_message() {
        let r = report(
            &[],
            &Standing::Invalid("spec.mode: unknown".into()),
            caps(),
            licensed(),
            Some(2),
        );
        assert_eq!(r.phase, Phase::Failed);
        assert_eq!(r.conditions[0].reason, "InvalidSpec");
        let note = r.note.unwrap();
        assert!(note.warning);
        assert_eq!(note.message, "invalid spec: spec.mode: unknown");
        let again = report(
            &r.conditions,
            &Standing::Invalid("spec.mode: unknown".into()),
            caps(),
            licensed(),
            Some(2),
        );
        assert_eq!(again.note, None);
    }

    #[test]
    fn ready_and_provisioning_publish_nothing() {
        for s in [
            Standing::Ready("connection Secret db".into()),
            Standing::Provisioning("Cluster not Ready".into()),
        ] {
            let r = report(&[], &s, caps(), licensed(), Some(1));
            assert_eq!(r.note, None);
            assert_eq!(r.conditions.len(), 3);
        }
    }

    #[test]
    fn deletion_keeps_the_other_conditions() {
        let old = vec![caps(), licensed()];
        let r = deleting(&old, "waiting for Cluster a/db to be deleted", Some(1));
        assert_eq!(r.phase, Phase::Deleting);
        let types: Vec<_> = r.conditions.iter().map(|c| c.type_.as_str()).collect();
        assert_eq!(types, ["Ready", "CapabilitiesReady", "Licensed"]);
    }

    #[test]
    fn a_rejection_is_announced_once_and_keeps_the_capabilities_condition() {
        let first = rejected(
            &[caps()],
            Reason::InstanceLimitExceeded,
            "over the limit",
            Some(1),
        );
        assert_eq!(first.phase, Phase::Rejected);
        assert_eq!(first.conditions[1], caps());
        assert_eq!(
            first.note.as_ref().map(|n| n.reason),
            Some("InstanceLimitExceeded")
        );
        let again = rejected(
            &first.conditions,
            Reason::InstanceLimitExceeded,
            "over the limit",
            Some(1),
        );
        assert_eq!(again.note, None);
        let fresh = rejected(&[], Reason::LicenseSkipped, "no feature", Some(1));
        assert_eq!(fresh.conditions[1].reason, "Rejected");
    }
}
