//! One Event store behind core `v1` Events and `events.k8s.io/v1` Events, as
//! on a real server: objects are stored in the core shape and an
//! events.k8s.io request converts on the way in and out, with the mapping of
//! Kubernetes' pkg/apis/events/v1/conversion.go (`regarding` is
//! `involvedObject`, `note` is `message`, `deprecatedSource` is `source`,
//! `deprecatedFirstTimestamp`/`deprecatedLastTimestamp`/`deprecatedCount` are
//! `firstTimestamp`/`lastTimestamp`/`count`, `reportingController` is
//! `reportingComponent`; `eventTime`, `series`, `reportingInstance`,
//! `action`, `reason`, `related` and `type` keep their names).
//! Field selectors are converted too (the events.k8s.io field label
//! conversions: `regarding.name` is `involvedObject.name`, ...).

use serde_json::{Map, Value};

/// (events.k8s.io/v1 name, core v1 name) of the fields that are renamed.
const RENAMED: &[(&str, &str)] = &[
    ("regarding", "involvedObject"),
    ("note", "message"),
    ("deprecatedSource", "source"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("deprecatedCount", "count"),
    ("reportingController", "reportingComponent"),
];

fn rename(v: Value, api_version: &str, from_events: bool) -> Value {
    let Value::Object(m) = v else { return v };
    let mut out = Map::with_capacity(m.len());
    for (k, val) in m {
        let key = RENAMED
            .iter()
            .find(|(e, c)| if from_events { *e == k } else { *c == k })
            .map(|(e, c)| if from_events { *c } else { *e })
            .unwrap_or(k.as_str())
            .to_string();
        out.insert(key, val);
    }
    if out.contains_key("apiVersion") || out.contains_key("kind") {
        out.insert("apiVersion".into(), Value::String(api_version.into()));
    }
    Value::Object(out)
}

/// An events.k8s.io/v1 Event (or a partial one: a patch) in the core v1 shape.
pub fn to_core(v: Value) -> Value {
    rename(v, "v1", true)
}

/// A stored core v1 Event as events.k8s.io/v1 presents it.
pub fn from_core(v: &Value) -> Value {
    let mut out = rename(v.clone(), "events.k8s.io/v1", false);
    if out.is_object() && out.get("eventTime").is_none() {
        // Not omitempty in events.k8s.io/v1.
        out["eventTime"] = Value::Null;
    }
    out
}

/// The events.k8s.io field labels, as core Event field paths.
fn field_label(events_v1: bool, label: &str) -> String {
    if events_v1 {
        if let Some(rest) = label.strip_prefix("regarding.") {
            return format!("involvedObject.{rest}");
        }
        if label == "reportingController" {
            return "reportingComponent".into();
        }
        label.to_string()
    } else {
        // The core selectable field `source` is source.component.
        match label {
            "source" => "source.component".into(),
            other => other.to_string(),
        }
    }
}

/// A field selector on Events rewritten to the stored (core) field paths.
pub fn field_selector(sel: &str, events_v1: bool) -> String {
    sel.split(',')
        .map(|term| {
            let at = term.find(['=', '!']).unwrap_or(term.len());
            let (label, rest) = term.split_at(at);
            format!("{}{rest}", field_label(events_v1, label.trim()))
        })
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn round_trip_between_the_two_groups() {
        let ev = json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": {"name": "e", "namespace": "ns"},
            "eventTime": "2025-01-01T00:00:00.000000Z",
            "series": {"count": 3, "lastObservedTime": "2025-01-01T00:01:00.000000Z"},
            "reportingController": "navique.dev/operator", "reportingInstance": "op-1",
            "action": "Reconcile", "reason": "Ready", "type": "Normal", "note": "all good",
            "regarding": {"kind": "PostgresCluster", "name": "app-db", "uid": "u1"},
            "deprecatedSource": {"component": "c"}, "deprecatedCount": 2,
            "deprecatedFirstTimestamp": "2025-01-01T00:00:00Z", "deprecatedLastTimestamp": "2025-01-01T00:02:00Z"});
        let core = to_core(ev.clone());
        assert_eq!(core["apiVersion"], "v1");
        assert_eq!(core["message"], "all good");
        assert_eq!(core["involvedObject"]["name"], "app-db");
        assert_eq!(core["source"]["component"], "c");
        assert_eq!(core["reportingComponent"], "navique.dev/operator");
        assert_eq!(core["reportingInstance"], "op-1");
        assert_eq!(core["count"], 2);
        assert_eq!(core["firstTimestamp"], "2025-01-01T00:00:00Z");
        assert_eq!(core["lastTimestamp"], "2025-01-01T00:02:00Z");
        assert_eq!(core["series"]["count"], 3);
        assert_eq!(from_core(&core), ev);
        // A merge patch converts alone.
        assert_eq!(
            to_core(json!({"series": {"count": 4}, "note": "x"})),
            json!({"series": {"count": 4}, "message": "x"})
        );
    }

    #[test]
    fn field_selectors_name_the_stored_fields() {
        assert_eq!(
            field_selector("regarding.name=app-db,regarding.kind!=Pod,reportingController=x,type==Warning", true),
            "involvedObject.name=app-db,involvedObject.kind!=Pod,reportingComponent=x,type==Warning"
        );
        assert_eq!(
            field_selector("involvedObject.uid=u,source=kubelet", false),
            "involvedObject.uid=u,source.component=kubelet"
        );
    }
}
