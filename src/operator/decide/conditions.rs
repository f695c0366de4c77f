//! Status and conditions as the Kubernetes conventions want them: a
//! condition's lastTransitionTime moves only when its status does, so an
//! unchanged state writes an unchanged status (and so, nothing at all).

use crate::operator::api::{Condition, ConditionType, Reason};

pub fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// The condition as wanted now, keeping the old transition time when its
/// status did not change.
pub fn condition(
    old: &[Condition],
    type_: ConditionType,
    ok: bool,
    reason: Reason,
    message: &str,
    generation: Option<i64>,
) -> Condition {
    let status = if ok { "True" } else { "False" };
    let since = old
        .iter()
        .find(|c| c.type_ == type_.as_str() && c.status == status)
        .map(|c| c.last_transition_time.clone())
        .unwrap_or_else(now);
    Condition {
        type_: type_.to_string(),
        status: status.into(),
        reason: reason.to_string(),
        message: message.into(),
        observed_generation: generation,
        last_transition_time: since,
    }
}

/// Whether `wanted` is already part of `existing` (every field it sets has
/// that value there); what an apply would change otherwise. Lists compare
/// whole, except that list items may carry fields the server added.
pub fn is_subset(wanted: &serde_json::Value, existing: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (wanted, existing) {
        (Value::Object(w), Value::Object(e)) => w.iter().all(|(k, v)| {
            e.get(k).is_some_and(|ev| is_subset(v, ev)) || (v.is_null() && !e.contains_key(k))
        }),
        (Value::Array(w), Value::Array(e)) => {
            w.len() == e.len() && w.iter().zip(e).all(|(a, b)| is_subset(a, b))
        }
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        (a, b) => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn transition_time_moves_only_with_the_status() {
        let c = condition(
            &[],
            ConditionType::Ready,
            false,
            Reason::Waiting,
            "x",
            Some(1),
        );
        let mut old = vec![c.clone()];
        old[0].last_transition_time = "2020-01-01T00:00:00Z".into();
        let same = condition(
            &old,
            ConditionType::Ready,
            false,
            Reason::Waiting,
            "y",
            Some(2),
        );
        assert_eq!(same.last_transition_time, "2020-01-01T00:00:00Z");
        let flipped = condition(&old, ConditionType::Ready, true, Reason::Ready, "", Some(2));
        assert_ne!(flipped.last_transition_time, "2020-01-01T00:00:00Z");
    }

    #[test]
    fn subset_ignores_what_the_server_added() {
        let wanted = json!({"spec": {"instances": 1, "storage": {"size": "1Gi"}}, "metadata": {"labels": {"a": "b"}}});
        let existing = json!({"spec": {"instances": 1, "storage": {"size": "1Gi", "resizeInUseVolumes": true}}, "metadata": {"labels": {"a": "b", "c": "d"}, "uid": "x"}});
        assert!(is_subset(&wanted, &existing));
        let changed = json!({"spec": {"instances": 2}});
        assert!(!is_subset(&changed, &existing));
    }
}
