//! The simple JSONPath of CRD `additionalPrinterColumns`: `.a.b`, `[n]`,
//! `['key.with.dots']`, `[*]` and filters `[?(@.type=="Ready")]`.
//! Only the first result is used, as apiextensions-apiserver does.

use serde_json::Value;

enum Step {
    Field(String),
    Index(i64),
    All,
    Filter(String, Value),
}

fn parse(path: &str) -> Option<Vec<Step>> {
    let p = path.trim();
    let p = p
        .strip_prefix('{')
        .and_then(|x| x.strip_suffix('}'))
        .unwrap_or(p);
    let p = p.strip_prefix('$').unwrap_or(p);
    let b = p.as_bytes();
    let mut steps = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'.' => {
                let start = i + 1;
                let mut j = start;
                while j < b.len() && b[j] != b'.' && b[j] != b'[' {
                    j += 1;
                }
                if j > start {
                    steps.push(Step::Field(p[start..j].to_string()));
                }
                i = j;
            }
            b'[' => {
                let end = find_close(p, i)?;
                let inner = p[i + 1..end].trim();
                if inner == "*" {
                    steps.push(Step::All);
                } else if let Some(f) = inner.strip_prefix("?(").and_then(|x| x.strip_suffix(')')) {
                    let (lhs, rhs) = f.split_once("==")?;
                    let field = lhs.trim().strip_prefix("@.")?.to_string();
                    let rhs = rhs.trim();
                    let value = if let Some(s) = unquote(rhs) {
                        Value::String(s)
                    } else {
                        serde_json::from_str(rhs).ok()?
                    };
                    steps.push(Step::Filter(field, value));
                } else if let Some(s) = unquote(inner) {
                    steps.push(Step::Field(s));
                } else {
                    steps.push(Step::Index(inner.parse().ok()?));
                }
                i = end + 1;
            }
            _ => {
                // A leading bare field name.
                let mut j = i;
                while j < b.len() && b[j] != b'.' && b[j] != b'[' {
                    j += 1;
                }
                steps.push(Step::Field(p[i..j].to_string()));
                i = j;
            }
        }
    }
    Some(steps)
}

fn find_close(p: &str, open: usize) -> Option<usize> {
    let mut quote: Option<u8> = None;
    for (k, &c) in p.as_bytes().iter().enumerate().skip(open + 1) {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, b'\'' | b'"') => quote = Some(c),
            (None, b']') => return Some(k),
            _ => {}
        }
    }
    None
}

fn unquote(s: &str) -> Option<String> {
    let s = s.trim();
    if s.len() >= 2
        && ((s.starts_with('\'') && s.ends_with('\'')) || (s.starts_with('"') && s.ends_with('"')))
    {
        Some(s[1..s.len() - 1].to_string())
    } else {
        None
    }
}

fn field<'a>(v: &'a Value, dotted: &str) -> Option<&'a Value> {
    dotted.split('.').try_fold(v, |v, k| v.get(k))
}

fn walk<'a>(v: &'a Value, steps: &[Step], out: &mut Vec<&'a Value>) {
    let Some((step, rest)) = steps.split_first() else {
        out.push(v);
        return;
    };
    match step {
        Step::Field(k) => {
            if let Some(x) = v.get(k.as_str()) {
                walk(x, rest, out)
            }
        }
        Step::Index(n) => {
            if let Some(a) = v.as_array() {
                let idx = if *n < 0 { a.len() as i64 + n } else { *n };
                if let Some(x) = usize::try_from(idx).ok().and_then(|i| a.get(i)) {
                    walk(x, rest, out)
                }
            }
        }
        Step::All => match v {
            Value::Array(a) => a.iter().for_each(|x| walk(x, rest, out)),
            Value::Object(m) => m.values().for_each(|x| walk(x, rest, out)),
            _ => {}
        },
        Step::Filter(f, want) => {
            if let Some(a) = v.as_array() {
                for x in a {
                    if field(x, f) == Some(want) {
                        walk(x, rest, out)
                    }
                }
            }
        }
    }
}

/// The first value `path` finds in `v`.
pub fn first(v: &Value, path: &str) -> Option<Value> {
    let steps = parse(path)?;
    let mut out = Vec::new();
    walk(v, &steps, &mut out);
    out.first().map(|x| (*x).clone())
}

#[cfg(test)]
mod tests {
    use super::first;
    use serde_json::json;

    #[test]
    fn printer_column_paths() {
        let o = json!({"metadata": {"name": "a", "labels": {"app.kubernetes.io/name": "x"}},
            "spec": {"replicas": 3},
            "status": {"conditions": [{"type": "Synced", "status": "False"}, {"type": "Ready", "status": "True"}],
                "items": [1, 2]}});
        assert_eq!(first(&o, ".spec.replicas"), Some(json!(3)));
        assert_eq!(
            first(&o, ".status.conditions[?(@.type==\"Ready\")].status"),
            Some(json!("True"))
        );
        assert_eq!(
            first(&o, ".status.conditions[?(@.type=='Synced')].status"),
            Some(json!("False"))
        );
        assert_eq!(
            first(&o, ".metadata.labels['app.kubernetes.io/name']"),
            Some(json!("x"))
        );
        assert_eq!(first(&o, ".status.items[1]"), Some(json!(2)));
        assert_eq!(first(&o, ".status.items[*]"), Some(json!(1)));
        assert_eq!(first(&o, ".status.missing"), None);
        assert_eq!(first(&o, "{.metadata.name}"), Some(json!("a")));
    }
}
