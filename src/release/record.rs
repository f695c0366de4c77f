//! The chart as a release records it: the root chart's metadata, lock,
//! templates, values, schema and files (subcharts are not stored, as in Helm).

use super::gojson::{self, Obj};
use crate::chart::metadata::Metadata;
use crate::chart::Chart;
use base64::Engine;
use serde_json::{json, Map, Value};

const ZERO_TIME: &str = "0001-01-01T00:00:00Z";

fn b64(data: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(data)
}

/// gotmpl values to JSON values (Go's encoding, as Helm stores them).
pub fn values_to_json(m: &crate::value::Map) -> Value {
    // A map never encodes to null: null means it could not be encoded.
    match value_to_json(&crate::value::Value::map(m.clone())) {
        Value::Null => Value::Object(Map::new()),
        v => v,
    }
}

fn value_to_json(v: &crate::value::Value) -> Value {
    crate::goyaml::json::encode(
        v,
        crate::goyaml::json::Opts {
            escape_html: false,
            indent: None,
        },
    )
    .ok()
    .and_then(|t| serde_json::from_str(&t).ok())
    .unwrap_or(Value::Null)
}

/// JSON values back to the engine's values (numbers become float64, as Go's
/// json.Unmarshal leaves them).
pub fn values_from_json(v: &Value) -> crate::value::Map {
    if !v.is_object() {
        return crate::value::Map::new();
    }
    match crate::goyaml::json::decode(&v.to_string()) {
        Ok(crate::value::Value::Map(m, _)) => m.borrow().clone(),
        _ => crate::value::Map::new(),
    }
}

fn metadata_json(m: &Metadata) -> Value {
    let mut o = Map::new();
    let mut put = |k: &str, v: Value| {
        o.insert(k.to_string(), v);
    };
    put("name", json!(m.name));
    put("home", json!(m.home));
    put("sources", json!(m.sources));
    put("version", json!(m.version));
    put("description", json!(m.description));
    put("keywords", json!(m.keywords));
    put(
        "maintainers",
        Value::Array(
            m.maintainers
                .iter()
                .map(|x| json!({"name": x.name, "email": x.email, "url": x.url}))
                .collect(),
        ),
    );
    put("icon", json!(m.icon));
    put("apiVersion", json!(m.api_version));
    put("condition", json!(m.condition));
    put("tags", json!(m.tags));
    put("appVersion", json!(m.app_version));
    put("deprecated", json!(m.deprecated));
    put("annotations", json!(m.annotations));
    put("kubeVersion", json!(m.kube_version));
    put(
        "dependencies",
        Value::Array(
            m.dependencies
                .iter()
                .map(|d| {
                    json!({"name": d.name, "version": d.version, "repository": d.repository, "condition": d.condition,
                        "tags": d.tags, "enabled": d.enabled, "import-values": d.import_values.iter().map(value_to_json).collect::<Vec<_>>(), "alias": d.alias})
                })
                .collect(),
        ),
    );
    put("type", json!(m.chart_type));
    Value::Object(o)
}

fn file_json(name: &str, data: &[u8]) -> Value {
    json!({"name": name, "data": b64(data)})
}

/// The record of `chart` (the processed root chart of a render).
pub fn chart_record(chart: &Chart) -> Value {
    let lock = chart
        .lock
        .as_ref()
        .and_then(|raw| crate::goyaml::parse_values(&String::from_utf8_lossy(raw)).ok())
        .map(|m| values_to_json(&m))
        .unwrap_or(Value::Null);
    let templates: Vec<Value> = chart
        .templates
        .iter()
        .map(|f| file_json(&f.name, &f.data))
        .collect();
    let files: Vec<Value> = chart
        .files
        .iter()
        .map(|f| file_json(&f.name, &f.data))
        .collect();
    json!({
        "metadata": metadata_json(&chart.metadata),
        "lock": lock,
        "templates": templates,
        "values": values_to_json(&chart.values),
        "schema": chart.schema.as_ref().map(|s| Value::String(b64(s))).unwrap_or(Value::Null),
        "schemamodtime": ZERO_TIME,
        "files": if files.is_empty() { Value::Null } else { Value::Array(files) },
    })
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
        Value::Number(n) => n.as_f64() == Some(0.0),
    }
}

fn ordered(out: &mut String, v: &Value, order: &[&str], omit_empty: bool) {
    let Some(m) = v.as_object() else {
        gojson::value(out, v);
        return;
    };
    let mut o = Obj::new(out);
    for k in order {
        if let Some(x) = m.get(*k) {
            if omit_empty && is_empty(x) {
                continue;
            }
            o.value(k, x);
        }
    }
    for (k, x) in m {
        if !order.contains(&k.as_str()) {
            o.value(k, x);
        }
    }
    o.end();
}

const METADATA_ORDER: &[&str] = &[
    "name",
    "home",
    "sources",
    "version",
    "description",
    "keywords",
    "maintainers",
    "icon",
    "apiVersion",
    "condition",
    "tags",
    "appVersion",
    "deprecated",
    "annotations",
    "kubeVersion",
    "dependencies",
    "type",
];

/// Writes a chart record in Helm's field order.
pub fn write_chart(out: &mut String, chart: &Value) {
    let Some(m) = chart.as_object() else {
        gojson::value(out, chart);
        return;
    };
    let mut o = Obj::new(out);
    let null = Value::Null;
    o.raw("metadata", |out| {
        let meta = m.get("metadata").unwrap_or(&null);
        let Some(mm) = meta.as_object() else {
            gojson::value(out, meta);
            return;
        };
        let mut mo = Obj::new(out);
        for k in METADATA_ORDER {
            let Some(x) = mm.get(*k) else { continue };
            if is_empty(x) {
                continue;
            }
            match *k {
                "maintainers" => mo.raw(k, |out| write_list(out, x, &["name", "email", "url"])),
                "dependencies" => mo.raw(k, |out| {
                    write_list(
                        out,
                        x,
                        &[
                            "name",
                            "version",
                            "repository",
                            "condition",
                            "tags",
                            "enabled",
                            "import-values",
                            "alias",
                        ],
                    )
                }),
                _ => mo.value(k, x),
            };
        }
        mo.end();
    });
    o.value("lock", m.get("lock").unwrap_or(&null));
    o.raw("templates", |out| {
        write_files(out, m.get("templates").unwrap_or(&null))
    });
    o.value("values", m.get("values").unwrap_or(&null));
    o.value("schema", m.get("schema").unwrap_or(&null));
    o.value(
        "schemamodtime",
        m.get("schemamodtime").unwrap_or(&json!(ZERO_TIME)),
    );
    o.raw("files", |out| {
        write_files(out, m.get("files").unwrap_or(&null))
    });
    if let Some(t) = m.get("modtime").filter(|t| !is_empty(t)) {
        o.value("modtime", t);
    }
    o.end();
}

fn write_list(out: &mut String, v: &Value, order: &[&str]) {
    match v.as_array() {
        Some(items) => {
            out.push('[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                ordered(out, x, order, true);
            }
            out.push(']');
        }
        None => gojson::value(out, v),
    }
}

fn write_files(out: &mut String, v: &Value) {
    match v.as_array() {
        Some(items) => {
            out.push('[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                let mut o = Obj::new(out);
                if let Some(m) = x.as_object() {
                    o.value("name", m.get("name").unwrap_or(&Value::Null));
                    o.value("data", m.get("data").unwrap_or(&Value::Null));
                    if let Some(t) = m.get("modtime").filter(|t| !is_empty(t)) {
                        o.value("modtime", t);
                    }
                }
                o.end();
            }
            out.push(']');
        }
        None => gojson::value(out, v),
    }
}
