//! Go `encoding/json` output for release records: struct fields in
//! declaration order, map keys sorted, HTML characters escaped, floats in
//! Go's shortest form. Helm reads what it wrote only by field name, so order
//! is for fidelity, not for correctness.

use serde_json::Value;

pub struct Obj<'a> {
    out: &'a mut String,
    first: bool,
}

impl<'a> Obj<'a> {
    pub fn new(out: &'a mut String) -> Obj<'a> {
        out.push('{');
        Obj { out, first: true }
    }

    fn key(&mut self, k: &str) {
        if !self.first {
            self.out.push(',');
        }
        self.first = false;
        string(self.out, k);
        self.out.push(':');
    }

    pub fn str(&mut self, k: &str, v: &str) -> &mut Self {
        self.key(k);
        string(self.out, v);
        self
    }

    /// `omitempty` string.
    pub fn str_opt(&mut self, k: &str, v: &str) -> &mut Self {
        if !v.is_empty() {
            self.str(k, v);
        }
        self
    }

    pub fn int(&mut self, k: &str, v: i64) -> &mut Self {
        self.key(k);
        self.out.push_str(&v.to_string());
        self
    }

    pub fn bool(&mut self, k: &str, v: bool) -> &mut Self {
        self.key(k);
        self.out.push_str(if v { "true" } else { "false" });
        self
    }

    pub fn value(&mut self, k: &str, v: &Value) -> &mut Self {
        self.key(k);
        value(self.out, v);
        self
    }

    /// A field whose content the caller writes.
    pub fn raw(&mut self, k: &str, f: impl FnOnce(&mut String)) -> &mut Self {
        self.key(k);
        f(self.out);
        self
    }

    pub fn end(&mut self) {
        self.out.push('}');
    }
}

pub fn string(out: &mut String, s: &str) {
    crate::goyaml::json::write_string(out, s, true);
}

pub fn value(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                out.push_str(&i.to_string());
            } else if let Some(u) = n.as_u64() {
                out.push_str(&u.to_string());
            } else {
                out.push_str(&crate::goyaml::json::format_float(
                    n.as_f64().unwrap_or(0.0),
                ));
            }
        }
        Value::String(s) => string(out, s),
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                value(out, x);
            }
            out.push(']');
        }
        Value::Object(m) => {
            out.push('{');
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                string(out, k);
                out.push(':');
                value(out, x);
            }
            out.push('}');
        }
    }
}

pub fn strings(out: &mut String, items: &[String]) {
    out.push('[');
    for (i, s) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        string(out, s);
    }
    out.push(']');
}

/// Go's time.Time JSON: RFC 3339 with nanoseconds, trailing zeros trimmed.
pub fn time_text(t: &chrono::DateTime<chrono::Utc>) -> String {
    let base = t.format("%Y-%m-%dT%H:%M:%S").to_string();
    let nanos = t.timestamp_subsec_nanos();
    if nanos == 0 {
        return format!("{base}Z");
    }
    let frac = format!("{nanos:09}");
    format!("{base}.{}Z", frac.trim_end_matches('0'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_trim_trailing_zeros_like_rfc3339nano() {
        use chrono::TimeZone;
        let t = chrono::Utc
            .timestamp_opt(1_700_000_000, 546_700_000)
            .unwrap();
        assert_eq!(time_text(&t), "2023-11-14T22:13:20.5467Z");
        let t = chrono::Utc.timestamp_opt(1_700_000_000, 0).unwrap();
        assert_eq!(time_text(&t), "2023-11-14T22:13:20Z");
    }

    #[test]
    fn escapes_html_and_sorts_keys_like_go() {
        let mut out = String::new();
        value(
            &mut out,
            &serde_json::json!({"b": "<&>", "a": 1.5, "c": [true, null]}),
        );
        assert_eq!(out, r#"{"a":1.5,"b":"\u003c\u0026\u003e","c":[true,null]}"#);
    }
}
