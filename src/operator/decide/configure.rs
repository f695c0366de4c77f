//! What the platform admin asks of our release of a capability
//! (`Capability.spec`), judged against the catalog: the values our release
//! is made from, whether `spec.values` was refused and why, suspend and
//! the drift mode. Pure; the plan reads it, the capability controller
//! reports it.

use crate::operator::model::catalog::CapabilityEntry;
use serde_json::Value;

/// What to do when objects of our release drift.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DriftMode {
    /// Put back what we applied (the default).
    #[default]
    Correct,
    /// Report only (`DriftDetected` and a condition).
    Warn,
    /// Nothing.
    Off,
}

impl DriftMode {
    pub fn as_str(self) -> &'static str {
        match self {
            DriftMode::Correct => "correct",
            DriftMode::Warn => "warn",
            DriftMode::Off => "off",
        }
    }
}

/// How `spec.values` was taken.
#[derive(Clone, Debug, PartialEq)]
pub enum Configuration {
    /// No `spec.values`: the catalog's values alone.
    Catalog,
    /// `spec.values` merged over the catalog's.
    Accepted,
    /// Refused (why, naming the field); the release keeps its last accepted values.
    Refused(String),
}

/// The admin's settings for one capability, as the operator takes them.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    pub suspend: bool,
    pub drift: DriftMode,
    /// An unknown `spec.drift`, refused (the default mode applies).
    pub drift_refused: Option<String>,
    pub configuration: Configuration,
    /// The values our release is made from: the catalog's, with the
    /// accepted `spec.values` merged over them (Helm's merge: maps merge,
    /// anything else replaces, null is kept so that it removes a default).
    pub values: Value,
    /// The accepted `spec.values` as stored on our release (None: none).
    pub configured: Option<String>,
    /// `--image-pull-secret`: what every pod template of the release gets.
    pub pull_secrets: Vec<String>,
}

/// The settings `spec` asks for; `last_accepted` is the `spec.values` our
/// release was last made with (kept when this spec is refused).
pub fn settings(
    entry: &CapabilityEntry,
    spec: Option<&Value>,
    last_accepted: Option<&str>,
) -> Settings {
    let field = |name: &str| spec.and_then(|s| s.get(name)).filter(|v| !v.is_null());
    let (drift, drift_refused) = match field("drift").map(|d| d.as_str()) {
        None | Some(Some("correct")) => (DriftMode::Correct, None),
        Some(Some("warn")) => (DriftMode::Warn, None),
        Some(Some("off")) => (DriftMode::Off, None),
        Some(other) => (
            DriftMode::Correct,
            Some(format!(
                "spec.drift: unknown mode {}; one of correct, warn, off (correct applies)",
                other.map_or_else(
                    || field("drift").cloned().unwrap_or_default().to_string(),
                    |s| format!("{s:?}")
                )
            )),
        ),
    };
    let catalog = catalog_values(entry);
    let (configuration, accepted) = match field("values") {
        None => (Configuration::Catalog, None),
        Some(v) => match refusal(&catalog, v) {
            None => (Configuration::Accepted, Some(v.clone())),
            Some(why) => {
                let kept = last_accepted.and_then(|t| serde_json::from_str::<Value>(t).ok());
                (Configuration::Refused(why), kept)
            }
        },
    };
    let mut values = catalog;
    if let Some(a) = &accepted {
        merge(&mut values, a);
    }
    Settings {
        suspend: field("suspend").and_then(Value::as_bool).unwrap_or(false),
        drift,
        drift_refused,
        configuration,
        values,
        configured: accepted.map(|a| a.to_string()),
        pull_secrets: Vec::new(),
    }
}

fn catalog_values(entry: &CapabilityEntry) -> Value {
    crate::release::record::values_to_json(&entry.chart_values())
}

/// Why `values` cannot be taken: not an object, or it changes a value the
/// catalog locks (every value the catalog sets is one the operator relies on).
fn refusal(catalog: &Value, values: &Value) -> Option<String> {
    if !values.is_object() {
        return Some(format!(
            "spec.values must be an object of Helm values, not {}",
            json_type(values)
        ));
    }
    locked_path_changed(catalog, values, "").map(|path| {
        format!("spec.values.{path} is set by the catalog and locked: the operator relies on it")
    })
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// The first locked path (dotted) that `values` changes.
fn locked_path_changed(catalog: &Value, values: &Value, prefix: &str) -> Option<String> {
    let (Value::Object(locked), Value::Object(asked)) = (catalog, values) else {
        return None;
    };
    locked.iter().find_map(|(key, locked_value)| {
        let path = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        let asked_value = asked.get(key)?;
        match (locked_value, asked_value) {
            (Value::Object(_), Value::Object(_)) => {
                locked_path_changed(locked_value, asked_value, &path)
            }
            (l, a) if same(l, a) => None,
            _ => Some(path),
        }
    })
}

fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

/// Helm's merge of one values file over another: maps merge key by key,
/// anything else replaces (a null too, which later removes the chart's default).
fn merge(into: &mut Value, over: &Value) {
    match (into, over) {
        (Value::Object(dst), Value::Object(src)) => {
            for (k, v) in src {
                match dst.get_mut(k) {
                    Some(d) if d.is_object() && v.is_object() => merge(d, v),
                    _ => {
                        dst.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (into, over) => *into = over.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operator::model::catalog::Catalog;
    use serde_json::json;

    fn cert_manager() -> CapabilityEntry {
        Catalog::built_in()
            .capability("cert-manager")
            .expect("in the catalog")
            .clone()
    }

    #[test]
    fn no_spec_is_the_catalog_alone() {
        let s = settings(&cert_manager(), None, None);
        assert_eq!(s.configuration, Configuration::Catalog);
        assert_eq!(s.values, json!({"crds": {"enabled": true}}));
        assert_eq!(
            (s.suspend, s.drift, s.configured),
            (false, DriftMode::Correct, None)
        );
    }

    #[test]
    fn values_merge_over_the_catalog_and_keep_null() {
        let spec =
            json!({"values": {"crds": {"keep": false}, "replicaCount": 2, "podLabels": null}});
        let s = settings(&cert_manager(), Some(&spec), None);
        assert_eq!(s.configuration, Configuration::Accepted);
        assert_eq!(
            s.values,
            json!({"crds": {"enabled": true, "keep": false}, "replicaCount": 2, "podLabels": null})
        );
        assert_eq!(
            s.configured.as_deref(),
            Some(spec["values"].to_string().as_str())
        );
    }

    #[test]
    fn a_locked_value_changed_refuses_the_whole_spec_naming_the_path() {
        let last = r#"{"replicaCount":3}"#;
        for (values, path) in [
            (
                json!({"crds": {"enabled": false}, "replicaCount": 2}),
                "crds.enabled",
            ),
            (json!({"crds": null}), "crds"),
            (json!({"crds": "yes"}), "crds"),
        ] {
            let s = settings(
                &cert_manager(),
                Some(&json!({"values": values})),
                Some(last),
            );
            let Configuration::Refused(why) = &s.configuration else {
                panic!("{values} accepted")
            };
            assert!(why.contains(&format!("spec.values.{path} ")), "{why}");
            // The last accepted values stand.
            assert_eq!(
                s.values,
                json!({"crds": {"enabled": true}, "replicaCount": 3})
            );
            assert_eq!(s.configured.as_deref(), Some(last));
        }
        // The locked value restated as it is changes nothing.
        let same = json!({"values": {"crds": {"enabled": true}}});
        assert_eq!(
            settings(&cert_manager(), Some(&same), None).configuration,
            Configuration::Accepted
        );
    }

    #[test]
    fn values_that_are_not_an_object_and_unknown_drift_modes_are_named() {
        let s = settings(
            &cert_manager(),
            Some(&json!({"values": "x", "drift": "heal"})),
            None,
        );
        assert!(
            matches!(&s.configuration, Configuration::Refused(w) if w.contains("spec.values must be an object")),
            "{s:?}"
        );
        assert_eq!(s.values, json!({"crds": {"enabled": true}}));
        assert!(s
            .drift_refused
            .as_deref()
            .unwrap()
            .contains("spec.drift: unknown mode \"heal\""));
        let s = settings(
            &cert_manager(),
            Some(&json!({"drift": "warn", "suspend": true})),
            None,
        );
        assert_eq!(
            (s.drift, s.suspend, s.drift_refused),
            (DriftMode::Warn, true, None)
        );
    }
}
