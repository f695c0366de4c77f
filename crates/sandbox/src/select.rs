//! Label and field selectors as `kubectl -l` and `--field-selector` send them.

use serde_json::Value;

#[derive(Debug, Clone)]
enum Req {
    Eq(String, String),
    Ne(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    NotExists(String),
}

#[derive(Debug, Clone, Default)]
pub struct LabelSelector(Vec<Req>);

fn split_top(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

fn values(s: &str) -> Result<Vec<String>, String> {
    let inner = s
        .trim()
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .ok_or_else(|| format!("found '{s}', expected: '('"))?;
    Ok(inner
        .split(',')
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .collect())
}

impl LabelSelector {
    pub fn parse(s: &str) -> Result<LabelSelector, String> {
        let mut reqs = Vec::new();
        for part in split_top(s) {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            let req = if let Some(k) = part.strip_prefix('!') {
                Req::NotExists(k.trim().into())
            } else if let Some((k, v)) = part.split_once("!=") {
                Req::Ne(k.trim().into(), v.trim().into())
            } else if let Some((k, v)) = part.split_once("==") {
                Req::Eq(k.trim().into(), v.trim().into())
            } else if let Some((k, v)) = part.split_once('=') {
                Req::Eq(k.trim().into(), v.trim().into())
            } else if let Some((k, v)) = part.split_once(" notin ") {
                Req::NotIn(k.trim().into(), values(v)?)
            } else if let Some((k, v)) = part.split_once(" in ") {
                Req::In(k.trim().into(), values(v)?)
            } else if part.contains(' ') || part.contains('(') {
                return Err(format!("unable to parse requirement: {part:?}"));
            } else {
                Req::Exists(part.into())
            };
            reqs.push(req);
        }
        Ok(LabelSelector(reqs))
    }

    pub fn matches(&self, obj: &Value) -> bool {
        let labels = obj.pointer("/metadata/labels");
        let get = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
        self.0.iter().all(|r| match r {
            Req::Eq(k, v) => get(k) == Some(v.as_str()),
            Req::Ne(k, v) => get(k) != Some(v.as_str()),
            Req::In(k, vs) => get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            Req::NotIn(k, vs) => get(k).is_none_or(|x| !vs.iter().any(|v| v == x)),
            Req::Exists(k) => get(k).is_some(),
            Req::NotExists(k) => get(k).is_none(),
        })
    }
}

#[derive(Debug, Clone, Default)]
pub struct FieldSelector(Vec<(String, bool, String)>);

impl FieldSelector {
    pub fn parse(s: &str) -> Result<FieldSelector, String> {
        let mut reqs = Vec::new();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (k, eq, v) = if let Some((k, v)) = part.split_once("!=") {
                (k, false, v)
            } else if let Some((k, v)) = part.split_once("==") {
                (k, true, v)
            } else if let Some((k, v)) = part.split_once('=') {
                (k, true, v)
            } else {
                return Err(format!(
                    "invalid selector: '{part}'; can't understand '{part}'"
                ));
            };
            reqs.push((k.trim().to_string(), eq, v.trim().to_string()));
        }
        Ok(FieldSelector(reqs))
    }

    /// The field names used, to refuse those the server cannot select on.
    pub fn fields(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(k, _, _)| k.as_str())
    }

    pub fn matches(&self, obj: &Value) -> bool {
        self.0.iter().all(|(k, eq, v)| {
            let pointer = format!("/{}", k.replace('.', "/"));
            let actual = match obj.pointer(&pointer) {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Null) | None => String::new(),
                Some(other) => other.to_string(),
            };
            (actual == *v) == *eq
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn set_based_and_equality_requirements() {
        let o = json!({"metadata": {"labels": {"app": "web", "tier": "front"}}});
        assert!(LabelSelector::parse("app=web,tier in (front, back)")
            .unwrap()
            .matches(&o));
        assert!(!LabelSelector::parse("app!=web").unwrap().matches(&o));
        assert!(LabelSelector::parse("env notin (prod),!env,app")
            .unwrap()
            .matches(&o));
        assert!(!LabelSelector::parse("missing").unwrap().matches(&o));
        let f = FieldSelector::parse("metadata.name=x").unwrap();
        assert!(f.matches(&json!({"metadata": {"name": "x"}})));
        assert!(!f.matches(&json!({"metadata": {"name": "y"}})));
    }
}
