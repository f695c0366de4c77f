//! The OpenAPI part of each CRD (types, required fields, enums, bounds,
//! lengths, patterns, keyed lists), checked again before a spec is
//! realised: an API server that never validated the object (one without
//! the CRD's latest schema, or an object stored before a rule existed)
//! must still get a condition naming the field, never half a realisation.
//! The checks read the very schema the CRDs are generated from, so the two
//! cannot drift apart. The CEL rules are checked again where each kind is
//! realised (`check_blocks` and the like).

use super::SpecError;
use regex::Regex;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::OnceLock;

struct Schemas {
    /// Kind -> the schema of its `spec`.
    specs: BTreeMap<String, Value>,
    patterns: BTreeMap<String, Regex>,
}

fn schemas() -> &'static Schemas {
    static SCHEMAS: OnceLock<Schemas> = OnceLock::new();
    SCHEMAS.get_or_init(|| {
        let mut specs = BTreeMap::new();
        let mut patterns = BTreeMap::new();
        for crd in crate::operator::api::crds::all() {
            let json = serde_json::to_value(&crd.spec).expect("a CRD serialises");
            let Some(spec) = json.pointer("/versions/0/schema/openAPIV3Schema/properties/spec")
            else {
                continue;
            };
            collect_patterns(spec, &mut patterns);
            specs.insert(crd.spec.names.kind.clone(), spec.clone());
        }
        Schemas { specs, patterns }
    })
}

fn collect_patterns(schema: &Value, out: &mut BTreeMap<String, Regex>) {
    match schema {
        Value::Object(m) => {
            if let Some(Value::String(p)) = m.get("pattern") {
                let re = Regex::new(p).expect("the CRDs' patterns are valid regular expressions");
                out.insert(p.clone(), re);
            }
            m.values().for_each(|v| collect_patterns(v, out));
        }
        Value::Array(a) => a.iter().for_each(|v| collect_patterns(v, out)),
        _ => {}
    }
}

/// The schema of `kind`'s `spec`, as its CRD is generated.
pub fn spec_schema(kind: &str) -> Option<&'static Value> {
    schemas().specs.get(kind)
}

/// Every kind with a CRD.
pub fn kinds() -> impl Iterator<Item = &'static str> {
    schemas().specs.keys().map(String::as_str)
}

/// Checks `spec` against the CRD schema of `kind`; kinds without one pass.
pub fn check(kind: &str, spec: &Value) -> Result<(), SpecError> {
    let s = schemas();
    match s.specs.get(kind) {
        Some(schema) => check_value(s, schema, spec, "spec"),
        None => Ok(()),
    }
}

fn invalid(path: &str, message: String) -> Result<(), SpecError> {
    Err(SpecError {
        field: path.to_string(),
        message,
    })
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Messages in the API server's words, so a refusal reads the same here
/// and from `kubectl apply`.
fn check_value(s: &Schemas, schema: &Value, v: &Value, path: &str) -> Result<(), SpecError> {
    // Null stands for absent: required fields are checked by the parent,
    // and the spec's own parsing refuses a null where a value must be.
    if v.is_null() {
        return Ok(());
    }
    if let Some(want) = schema.get("type").and_then(Value::as_str) {
        let have = json_type(v);
        let fits = have == want || (want == "number" && have == "integer");
        if !fits {
            return invalid(path, format!("must be of type {want}, not {have}"));
        }
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array) {
        if !allowed.contains(v) {
            let list: Vec<String> = allowed.iter().map(Value::to_string).collect();
            let why = format!(
                "Unsupported value: {v}: supported values: {}",
                list.join(", ")
            );
            return invalid(path, why);
        }
    }
    match v {
        Value::String(text) => check_string(s, schema, text, path),
        Value::Number(n) => check_number(schema, n.as_f64().unwrap_or_default(), path),
        Value::Array(items) => check_array(s, schema, items, path),
        Value::Object(fields) => check_object(s, schema, fields, path),
        Value::Bool(_) | Value::Null => Ok(()),
    }
}

fn check_string(s: &Schemas, schema: &Value, text: &str, path: &str) -> Result<(), SpecError> {
    let chars = text.chars().count() as u64;
    if let Some(min) = schema.get("minLength").and_then(Value::as_u64) {
        if chars < min {
            return invalid(path, format!("should be at least {min} chars long"));
        }
    }
    if let Some(max) = schema.get("maxLength").and_then(Value::as_u64) {
        if chars > max {
            return invalid(path, format!("may not be longer than {max}"));
        }
    }
    if let Some(p) = schema.get("pattern").and_then(Value::as_str) {
        if !s.patterns[p].is_match(text) {
            let v = Value::String(text.to_string());
            return invalid(path, format!("Invalid value: {v}: should match '{p}'"));
        }
    }
    Ok(())
}

fn check_number(schema: &Value, x: f64, path: &str) -> Result<(), SpecError> {
    if let Some(min) = schema.get("minimum").and_then(Value::as_f64) {
        if x < min {
            return invalid(path, format!("should be greater than or equal to {min}"));
        }
    }
    if let Some(max) = schema.get("maximum").and_then(Value::as_f64) {
        if x > max {
            return invalid(path, format!("should be less than or equal to {max}"));
        }
    }
    Ok(())
}

/// Each item against `items`; a map-typed list's keys must be unique.
fn check_array(s: &Schemas, schema: &Value, items: &[Value], path: &str) -> Result<(), SpecError> {
    if let Some(item) = schema.get("items") {
        for (i, x) in items.iter().enumerate() {
            check_value(s, item, x, &format!("{path}[{i}]"))?;
        }
    }
    if schema.get("x-kubernetes-list-type").and_then(Value::as_str) != Some("map") {
        return Ok(());
    }
    let keys: Vec<&str> = schema
        .get("x-kubernetes-list-map-keys")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let mut seen = BTreeMap::new();
    for (i, x) in items.iter().enumerate() {
        let key: Vec<&Value> = keys.iter().map(|k| &x[*k]).collect();
        let key = serde_json::to_string(&key).unwrap_or_default();
        if let Some(j) = seen.insert(key, i) {
            let why = format!(
                "Duplicate value: the same {} as {path}[{j}]",
                keys.join(", ")
            );
            return invalid(&format!("{path}[{i}]"), why);
        }
    }
    Ok(())
}

/// Required fields first, then each field against its property's schema
/// (or `additionalProperties`).
fn check_object(
    s: &Schemas,
    schema: &Value,
    fields: &serde_json::Map<String, Value>,
    path: &str,
) -> Result<(), SpecError> {
    for name in schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if fields.get(name).is_none_or(Value::is_null) {
            return invalid(&format!("{path}.{name}"), "Required value".into());
        }
    }
    let properties = schema.get("properties").and_then(Value::as_object);
    for (k, x) in fields {
        let child = format!("{path}.{k}");
        match (
            properties.and_then(|p| p.get(k)),
            schema.get("additionalProperties"),
        ) {
            (Some(sub), _) => check_value(s, sub, x, &child)?,
            (None, Some(sub)) if sub.is_object() => check_value(s, sub, x, &child)?,
            // Unknown fields are pruned by the API server and ignored by
            // the spec's parsing.
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::check;
    use serde_json::json;

    fn refusal(kind: &str, spec: serde_json::Value) -> String {
        check(kind, &spec).expect_err("refused").to_string()
    }

    #[test]
    fn valid_specs_pass() {
        check(
            "Gateway",
            &json!({"masterKey": {"secretKeyRef": {"name": "m", "key": "key"}}, "replicas": 0,
                    "models": [{"name": "gpt-4o", "model": "openai/gpt-4o", "apiBase": ""},
                               {"name": "llama", "model": "ollama/llama3", "apiBase": "http://ollama:11434"}]}),
        )
        .unwrap();
        check(
            "PostgresCluster",
            &json!({"mode": "managed", "managed": {"instances": 1, "storage": {"size": "1.5Gi"}}}),
        )
        .unwrap();
        check(
            "ChatUI",
            &json!({"gatewayRef": {"name": "gw"}, "values": {"any": [1, {"x": null}]}}),
        )
        .unwrap();
    }

    #[test]
    fn each_check_names_the_field_in_the_api_servers_words() {
        let gw = |models: serde_json::Value| json!({"masterKey": {"secretKeyRef": {"name": "m", "key": "key"}}, "models": models});
        assert_eq!(
            refusal("Gateway", json!({"masterKey": {"secretKeyRef": {"name": "m", "key": "a b"}}})),
            "spec.masterKey.secretKeyRef.key: Invalid value: \"a b\": should match '^[-._a-zA-Z0-9]+$'"
        );
        assert_eq!(
            refusal(
                "Gateway",
                gw(json!([{"name": "a", "model": "x"}, {"name": "a", "model": "y"}]))
            ),
            "spec.models[1]: Duplicate value: the same name as spec.models[0]"
        );
        assert_eq!(
            refusal("Gateway", gw(json!([{"name": "", "model": "x"}]))),
            "spec.models[0].name: should be at least 1 chars long"
        );
        assert_eq!(
            refusal(
                "Gateway",
                gw(json!([{"name": "a", "model": "x", "apiBase": "ftp://h"}]))
            ),
            "spec.models[0].apiBase: Invalid value: \"ftp://h\": should match '^(https?://.+)?$'"
        );
        assert_eq!(
            refusal("Gateway", json!({"masterKey": {}, "replicas": -1})),
            "spec.replicas: should be greater than or equal to 0"
        );
        assert_eq!(
            refusal("Gateway", json!({"replicas": 1})),
            "spec.masterKey: Required value"
        );
        assert_eq!(
            refusal("ChatUI", json!({"gatewayRef": {"name": "Team_GW"}})),
            format!(
                "spec.gatewayRef.name: Invalid value: \"Team_GW\": should match '{}'",
                crate::operator::api::NAME_PATTERN
            )
        );
        assert_eq!(
            refusal(
                "ChatUI",
                json!({"gatewayRef": {"name": "gw"}, "replicas": "2"})
            ),
            "spec.replicas: must be of type integer, not string"
        );
        assert_eq!(
            refusal(
                "PostgresCluster",
                json!({"mode": "managed", "managed": {"storage": {"size": "ten gigs"}}})
            ),
            format!(
                "spec.managed.storage.size: Invalid value: \"ten gigs\": should match '{}'",
                crate::operator::api::QUANTITY_PATTERN
            )
        );
        assert_eq!(
            refusal("PostgresCluster", json!({"mode": "sometimes"})),
            "spec.mode: Unsupported value: \"sometimes\": supported values: \"managed\", \"adopt\", \"external\""
        );
        assert_eq!(
            refusal(
                "SecretsManagement",
                json!({"vault": {"server": "https://v:8200", "path": "secret", "version": "v3",
                "auth": {"kubernetes": {"mountPath": "kubernetes", "role": "r"}}}})
            ),
            "spec.vault.version: Unsupported value: \"v3\": supported values: \"v1\", \"v2\""
        );
    }
}
