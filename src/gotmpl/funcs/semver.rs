//! Masterminds semver v3: lenient version parsing and constraint checks,
//! used by `semver`, `semverCompare` and chart `kubeVersion` checks.

use super::{arg_str, FResult, Registry, P};
use crate::value::{MethodError, Object, Value};
use std::cmp::Ordering;
use std::rc::Rc;

#[derive(Clone, Debug, PartialEq)]
pub struct Version {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
    pub pre: String,
    pub metadata: String,
    pub original: String,
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        if !self.pre.is_empty() {
            write!(f, "-{}", self.pre)?;
        }
        if !self.metadata.is_empty() {
            write!(f, "+{}", self.metadata)?;
        }
        Ok(())
    }
}

/// Why a version or a constraint could not be parsed, in Masterminds'
/// words.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SemverError {
    #[error("invalid semantic version")]
    InvalidVersion,
    #[error("Version segment starts with 0")]
    LeadingZero,
    #[error("Error parsing version segment: {0}")]
    Segment(#[source] std::num::ParseIntError),
    #[error("improper constraint: {}", crate::gotmpl::format::quote_go(.0))]
    ImproperConstraint(String),
}

fn valid_idents(s: &str) -> bool {
    !s.is_empty()
        && s.split('.')
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
}

impl Version {
    pub fn parse(s: &str) -> Result<Version, SemverError> {
        let body = s.strip_prefix('v').unwrap_or(s);
        let (core_pre, metadata) = match body.find('+') {
            Some(i) => (&body[..i], body[i + 1..].to_string()),
            None => (body, String::new()),
        };
        let (core, pre) = match core_pre.find('-') {
            Some(i) => (&core_pre[..i], core_pre[i + 1..].to_string()),
            None => (core_pre, String::new()),
        };
        if !metadata.is_empty() || body.contains('+') {
            if !valid_idents(&metadata) {
                return Err(SemverError::InvalidVersion);
            }
        }
        if !pre.is_empty() || core_pre.contains('-') {
            if !valid_idents(&pre) {
                return Err(SemverError::InvalidVersion);
            }
            for p in pre.split('.') {
                if p.len() > 1 && p.starts_with('0') && p.chars().all(|c| c.is_ascii_digit()) {
                    return Err(SemverError::LeadingZero);
                }
            }
        }
        let parts: Vec<&str> = core.split('.').collect();
        if parts.is_empty()
            || parts.len() > 3
            || parts
                .iter()
                .any(|p| p.is_empty() || !p.chars().all(|c| c.is_ascii_digit()))
        {
            return Err(SemverError::InvalidVersion);
        }
        let num = |i: usize| -> Result<u64, SemverError> {
            match parts.get(i) {
                Some(p) => p.parse::<u64>().map_err(SemverError::Segment),
                None => Ok(0),
            }
        };
        Ok(Version {
            major: num(0)?,
            minor: num(1)?,
            patch: num(2)?,
            pre,
            metadata,
            original: s.to_string(),
        })
    }

    pub fn compare(&self, o: &Version) -> Ordering {
        self.major
            .cmp(&o.major)
            .then(self.minor.cmp(&o.minor))
            .then(self.patch.cmp(&o.patch))
            .then_with(|| compare_pre(&self.pre, &o.pre))
    }
}

fn compare_pre(a: &str, b: &str) -> Ordering {
    match (a.is_empty(), b.is_empty()) {
        (true, true) => return Ordering::Equal,
        (true, false) => return Ordering::Greater,
        (false, true) => return Ordering::Less,
        _ => {}
    }
    let (pa, pb): (Vec<&str>, Vec<&str>) = (a.split('.').collect(), b.split('.').collect());
    for i in 0..pa.len().max(pb.len()) {
        let (x, y) = match (pa.get(i), pb.get(i)) {
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) => (*x, *y),
            _ => unreachable!(),
        };
        let (nx, ny) = (x.parse::<u64>().ok(), y.parse::<u64>().ok());
        let o = match (nx, ny) {
            (Some(a), Some(b)) => a.cmp(&b),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            _ => x.cmp(y),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

#[derive(Debug, Clone)]
struct Term {
    op: String,
    con: Version,
    minor_dirty: bool,
    patch_dirty: bool,
    dirty: bool,
}

fn parse_term(s: &str) -> Result<Term, SemverError> {
    let improper = || SemverError::ImproperConstraint(s.to_string());
    let s = s.trim();
    let ops = ["!=", ">=", "=>", "<=", "=<", "~>", "^", "~", ">", "<", "="];
    let mut op = "";
    let mut rest = s;
    for o in ops {
        if let Some(r) = s.strip_prefix(o) {
            op = o;
            rest = r.trim_start();
            break;
        }
    }
    let op = match op {
        "=>" => ">=",
        "=<" => "<=",
        "~>" => "~",
        o => o,
    };
    let body = rest.strip_prefix('v').unwrap_or(rest);
    let (core, tail) = match body.find(['-', '+']) {
        Some(i) => (&body[..i], &body[i..]),
        None => (body, ""),
    };
    let parts: Vec<&str> = if core.is_empty() {
        vec![]
    } else {
        core.split('.').collect()
    };
    let is_wild = |p: &str| p == "x" || p == "X" || p == "*";
    if parts.len() > 3 || parts.is_empty() && !tail.is_empty() {
        return Err(improper());
    }
    let mut nums = [0u64; 3];
    let mut minor_dirty = false;
    let mut patch_dirty = false;
    let mut dirty = false;
    for i in 0..3 {
        match parts.get(i) {
            None => {
                if i == 0 {
                    minor_dirty = true;
                }
                if i <= 1 {
                    minor_dirty = minor_dirty || i == 1;
                }
                patch_dirty = true;
                dirty = true;
            }
            Some(p) if is_wild(p) => {
                if i <= 1 {
                    minor_dirty = true;
                }
                patch_dirty = true;
                dirty = true;
            }
            Some(p) => {
                if dirty {
                    return Err(improper());
                }
                nums[i] = p.parse().map_err(|_| improper())?;
            }
        }
    }
    if parts.first().map(|p| is_wild(p)).unwrap_or(true) {
        minor_dirty = true;
    }
    let mut vs = format!("{}.{}.{}", nums[0], nums[1], nums[2]);
    vs.push_str(tail);
    let con = Version::parse(&vs).map_err(|_| improper())?;
    Ok(Term {
        op: op.to_string(),
        con,
        minor_dirty,
        patch_dirty,
        dirty,
    })
}

fn check_term(t: &Term, v: &Version) -> bool {
    if !v.pre.is_empty() && t.con.pre.is_empty() {
        return false;
    }
    let c = &t.con;
    let cmp = v.compare(c);
    match t.op.as_str() {
        "" | "=" => {
            if t.dirty {
                tilde_like(t, v)
            } else {
                cmp == Ordering::Equal
            }
        }
        "!=" => {
            if t.dirty {
                !tilde_like(t, v)
            } else {
                cmp != Ordering::Equal
            }
        }
        ">" => {
            if !t.dirty {
                return cmp == Ordering::Greater;
            }
            if v.major != c.major {
                return v.major > c.major;
            }
            if t.minor_dirty {
                return false;
            }
            v.minor > c.minor
        }
        "<" => cmp == Ordering::Less,
        ">=" => cmp != Ordering::Less,
        "<=" => {
            if !t.dirty {
                return cmp != Ordering::Greater;
            }
            if v.major != c.major {
                return v.major < c.major;
            }
            if t.minor_dirty {
                return true;
            }
            v.minor <= c.minor
        }
        "~" => {
            if cmp == Ordering::Less {
                return false;
            }
            if c.major == 0 && c.minor == 0 && c.patch == 0 && !t.minor_dirty && !t.patch_dirty {
                return true;
            }
            if v.major != c.major {
                return false;
            }
            if v.minor != c.minor && !t.minor_dirty {
                return false;
            }
            true
        }
        "^" => {
            if cmp == Ordering::Less {
                return false;
            }
            if c.major > 0 || t.minor_dirty {
                return v.major == c.major;
            }
            if v.major > 0 {
                return false;
            }
            if c.minor > 0 || t.patch_dirty {
                return v.minor == c.minor;
            }
            if v.minor > 0 {
                return false;
            }
            c.patch == v.patch
        }
        _ => false,
    }
}

fn tilde_like(t: &Term, v: &Version) -> bool {
    let c = &t.con;
    if t.minor_dirty
        && t.patch_dirty
        && c.major == 0
        && t.dirty
        && t.con.major == 0
        && t.minor_dirty
    {
        // `*` / `x` / empty major
        if t.op.is_empty() || t.op == "=" || t.op == "!=" {
            // "*" matches everything; "0.x" matches major 0.
        }
    }
    if v.major != c.major {
        return t.minor_dirty && c.major == 0 && is_any(t);
    }
    if t.minor_dirty {
        return true;
    }
    v.minor == c.minor
}

fn is_any(t: &Term) -> bool {
    t.minor_dirty && t.patch_dirty && t.con.major == 0 && t.con.minor == 0
}

/// A parsed constraint: OR of AND groups.
pub struct Constraint {
    groups: Vec<Vec<Term>>,
}

impl Constraint {
    pub fn parse(s: &str) -> Result<Constraint, SemverError> {
        // Masterminds names the whole constraint, not the term it tripped on.
        let improper = || SemverError::ImproperConstraint(s.to_string());
        let mut groups = Vec::new();
        for or in s.split("||") {
            let or = or.trim();
            let mut terms = Vec::new();
            // hyphen ranges
            let normalized = expand_hyphens(or);
            for part in split_and(&normalized) {
                if part.is_empty() {
                    continue;
                }
                terms.push(parse_term(&part).map_err(|_| improper())?);
            }
            if terms.is_empty() {
                return Err(improper());
            }
            groups.push(terms);
        }
        Ok(Constraint { groups })
    }

    pub fn check(&self, v: &Version) -> bool {
        self.groups
            .iter()
            .any(|g| g.iter().all(|t| check_term(t, v)))
    }
}

fn expand_hyphens(s: &str) -> String {
    let toks: Vec<&str> = s.split_whitespace().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        if i + 2 < toks.len() && toks[i + 1] == "-" {
            out.push(format!(">={},", toks[i]));
            out.push(format!("<={}", toks[i + 2]));
            i += 3;
        } else {
            out.push(toks[i].to_string());
            i += 1;
        }
    }
    out.join(" ")
}

fn split_and(s: &str) -> Vec<String> {
    // Terms are separated by commas or by spaces not following an operator.
    let mut out: Vec<String> = Vec::new();
    for chunk in s.split(',') {
        let mut cur = String::new();
        for tok in chunk.split_whitespace() {
            if !cur.is_empty() && !cur.chars().all(|c| "<>=!~^".contains(c)) {
                out.push(std::mem::take(&mut cur));
            }
            cur.push_str(tok);
        }
        if !cur.is_empty() {
            out.push(cur);
        }
    }
    out
}

impl Object for Version {
    fn type_name(&self) -> String {
        "*semver.Version".into()
    }
    fn kind_name(&self) -> &'static str {
        "ptr"
    }
    fn is_pointer(&self) -> bool {
        true
    }
    fn field(&self, _name: &str) -> Option<Value> {
        None
    }
    fn has_method(&self, name: &str) -> bool {
        matches!(
            name,
            "Major"
                | "Minor"
                | "Patch"
                | "Prerelease"
                | "Metadata"
                | "Original"
                | "String"
                | "Compare"
                | "LessThan"
                | "GreaterThan"
                | "Equal"
        )
    }
    fn call_method(&self, name: &str, args: Vec<Value>) -> Result<Value, MethodError> {
        const VERSION: &str = "*semver.Version";
        let other = || -> Result<Version, MethodError> {
            match args.first() {
                Some(Value::Object(o)) => o
                    .as_any()
                    .downcast_ref::<Version>()
                    .cloned()
                    .ok_or(MethodError::NotA { expected: VERSION }),
                Some(v) => Err(MethodError::WrongType {
                    expected: VERSION,
                    got: v.type_name(),
                }),
                None => Err(MethodError::NoArguments),
            }
        };
        Ok(match name {
            "Major" => Value::Uint64(self.major),
            "Minor" => Value::Uint64(self.minor),
            "Patch" => Value::Uint64(self.patch),
            "Prerelease" => Value::string(self.pre.clone()),
            "Metadata" => Value::string(self.metadata.clone()),
            "Original" => Value::string(self.original.clone()),
            "String" => Value::string(self.to_string()),
            "Compare" => Value::Int(self.compare(&other()?) as i64),
            "LessThan" => Value::Bool(self.compare(&other()?) == Ordering::Less),
            "GreaterThan" => Value::Bool(self.compare(&other()?) == Ordering::Greater),
            "Equal" => Value::Bool(self.compare(&other()?) == Ordering::Equal),
            _ => return Err(MethodError::Unknown(name.to_string())),
        })
    }
    fn format(&self) -> String {
        self.to_string()
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

pub fn register(r: &mut Registry) {
    r.add("semver", &[P::Str], None, |_, a| {
        let v = Version::parse(arg_str(&a[0]))?;
        Ok(Value::Object(Rc::new(v)))
    });
    r.add("semverCompare", &[P::Str, P::Str], None, semver_compare);
}

fn semver_compare(_: &mut crate::gotmpl::exec::Exec, a: Vec<Value>) -> FResult {
    let c = Constraint::parse(arg_str(&a[0]))?;
    let v = Version::parse(arg_str(&a[1]))?;
    Ok(Value::Bool(c.check(&v)))
}
