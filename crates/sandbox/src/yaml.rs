//! YAML request bodies (kubectl and client libraries send JSON; YAML is for
//! hand-made requests): read by the operator's port of go-yaml v2's parser,
//! shared by path, and typed as YAML 1.1 plain scalars are (null, booleans,
//! integers, floats), everything else a string.

#[allow(dead_code)]
#[path = "../../../src/goyaml/libyaml/mod.rs"]
mod libyaml;

use libyaml::{Event, EventType, Parser, ScalarStyle};
use serde_json::{json, Map, Value};

struct Reader<'a> {
    p: Parser<'a>,
    anchors: std::collections::HashMap<Vec<u8>, Value>,
}

impl Reader<'_> {
    fn next(&mut self) -> Result<Event, String> {
        let mut e = Event::default();
        if !self.p.parse(&mut e) {
            let line = self.p.problem_mark.line + 1;
            return Err(format!("line {line}: {}", self.p.problem));
        }
        Ok(e)
    }

    fn node(&mut self, e: Event) -> Result<Value, String> {
        let anchor = e.anchor.clone();
        let v = match e.typ {
            EventType::Alias => {
                let name = e.anchor.unwrap_or_default();
                return self.anchors.get(&name).cloned().ok_or_else(|| {
                    format!(
                        "unknown anchor '{}' referenced",
                        String::from_utf8_lossy(&name)
                    )
                });
            }
            EventType::Scalar => scalar(&e),
            EventType::SequenceStart => {
                let mut items = Vec::new();
                loop {
                    let e = self.next()?;
                    if e.typ == EventType::SequenceEnd {
                        break;
                    }
                    items.push(self.node(e)?);
                }
                Value::Array(items)
            }
            EventType::MappingStart => {
                let mut m = Map::new();
                loop {
                    let e = self.next()?;
                    if e.typ == EventType::MappingEnd {
                        break;
                    }
                    let k = match self.node(e)? {
                        Value::String(s) => s,
                        Value::Null => "null".into(),
                        other => other.to_string(),
                    };
                    let e = self.next()?;
                    let v = self.node(e)?;
                    m.insert(k, v);
                }
                Value::Object(m)
            }
            other => return Err(format!("unexpected {}", other.go_name())),
        };
        if let Some(a) = anchor {
            self.anchors.insert(a, v.clone());
        }
        Ok(v)
    }
}

fn scalar(e: &Event) -> Value {
    let text = String::from_utf8_lossy(&e.value).into_owned();
    if e.style != ScalarStyle::Plain || !e.tag.is_empty() {
        return Value::String(text);
    }
    match text.as_str() {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "true" | "True" | "TRUE" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" => {
            return Value::Bool(true)
        }
        "false" | "False" | "FALSE" | "no" | "No" | "NO" | "off" | "Off" | "OFF" => {
            return Value::Bool(false)
        }
        _ => {}
    }
    if let Ok(i) = text.parse::<i64>() {
        return json!(i);
    }
    if text.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '+' || c == '.') {
        if let Ok(f) = text.parse::<f64>() {
            if f.is_finite() {
                return json!(f);
            }
        }
    }
    Value::String(text)
}

/// The first document of a YAML text as JSON (null for none).
pub fn first_document(bytes: &[u8]) -> Result<Value, String> {
    let input: &[u8] = if bytes.is_empty() { b"\n" } else { bytes };
    let mut r = Reader {
        p: Parser::new(input),
        anchors: Default::default(),
    };
    loop {
        let e = r.next()?;
        match e.typ {
            EventType::StreamStart | EventType::DocumentStart => continue,
            EventType::StreamEnd | EventType::DocumentEnd | EventType::None => {
                return Ok(Value::Null)
            }
            _ => return r.node(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_bodies() {
        let v = first_document(b"kind: ConfigMap\nmetadata:\n  name: x\ndata: {a: '1', b: 2, c: true, d: ~, e: [1.5, x]}\n").unwrap();
        assert_eq!(
            v,
            json!({"kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"a": "1", "b": 2, "c": true, "d": null, "e": [1.5, "x"]}})
        );
        assert_eq!(first_document(b"").unwrap(), Value::Null);
        assert!(first_document(b"a: b: c\n").is_err());
        assert_eq!(
            first_document(b"a: &x 1\nb: *x\n").unwrap(),
            json!({"a": 1, "b": 1})
        );
    }
}
