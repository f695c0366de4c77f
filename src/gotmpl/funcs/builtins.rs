//! Go text/template's predefined functions.

use super::{FResult, Registry, P};
use crate::gotmpl::exec::Exec;
use crate::gotmpl::format::{self, sprint, sprintf, sprintln};
use crate::value::Value;

pub fn register(r: &mut Registry) {
    // and/or are handled by the executor (short-circuit); the entries give
    // their signatures.
    r.add("and", &[P::Raw], Some(P::Raw), |_, a| {
        Ok(a.into_iter().last().unwrap_or(Value::Nil))
    });
    r.add("or", &[P::Raw], Some(P::Raw), |_, a| {
        Ok(a.into_iter().last().unwrap_or(Value::Nil))
    });
    r.add("not", &[P::Raw], None, |_, a| {
        Ok(Value::Bool(!a[0].truthy()))
    });
    r.add("len", &[P::Raw], None, len);
    r.add("index", &[P::Raw], Some(P::Raw), index);
    r.add("eq", &[P::Raw], Some(P::Raw), eq);
    r.add("ne", &[P::Raw, P::Raw], None, |_, a| {
        Ok(Value::Bool(!eq_pair(&a[0], &a[1])?))
    });
    r.add("lt", &[P::Raw, P::Raw], None, |_, a| {
        Ok(Value::Bool(lt(&a[0], &a[1])?))
    });
    r.add("le", &[P::Raw, P::Raw], None, |_, a| {
        Ok(Value::Bool(le(&a[0], &a[1])?))
    });
    r.add("gt", &[P::Raw, P::Raw], None, |_, a| {
        Ok(Value::Bool(!le(&a[0], &a[1])?))
    });
    r.add("ge", &[P::Raw, P::Raw], None, |_, a| {
        Ok(Value::Bool(!lt(&a[0], &a[1])?))
    });
    r.add("print", &[], Some(P::Any), |_, a| {
        Ok(Value::string(sprint(&a)))
    });
    r.add("printf", &[P::Str], Some(P::Any), |_, a| {
        Ok(Value::string(sprintf(super::arg_str(&a[0]), &a[1..])))
    });
    r.add("println", &[], Some(P::Any), |_, a| {
        Ok(Value::string(sprintln(&a)))
    });
    r.add("html", &[], Some(P::Any), |_, a| {
        Ok(Value::string(html_escape(&eval_args(&a))))
    });
    r.add("js", &[], Some(P::Any), |_, a| {
        Ok(Value::string(js_escape(&eval_args(&a))))
    });
    r.add("urlquery", &[], Some(P::Any), |_, a| {
        Ok(Value::string(query_escape(&eval_args(&a))))
    });
    r.add("call", &[P::Raw], Some(P::Raw), |_, a| {
        Err(format!(
            "non-function {} of type {}",
            format::format_v(&a[0]),
            a[0].type_name()
        )
        .into())
    });
}

/// Go's evalArgs for html/js/urlquery.
fn eval_args(a: &[Value]) -> String {
    if a.len() == 1 {
        match &a[0] {
            Value::Str(s) => return s.to_string(),
            Value::Nil => return "<no value>".into(),
            _ => {}
        }
    }
    sprint(a)
}

fn len(x: &mut Exec, a: Vec<Value>) -> FResult {
    match &a[0] {
        Value::Nil if x.raw_iface.first().copied().unwrap_or(false) => {
            Err("len of nil pointer".into())
        }
        Value::Nil => Err("reflect: call of reflect.Value.Type on zero Value".into()),
        Value::Object(o) => match o.to_data() {
            Value::List(l, _) => Ok(Value::Int(l.len() as i64)),
            Value::Map(m, _) => Ok(Value::Int(m.borrow().len() as i64)),
            _ => Err(format!("len of type {}", o.type_name()).into()),
        },
        Value::Str(s) => Ok(Value::Int(crate::value::gostr::byte_len(s) as i64)),
        Value::Bytes(b) => Ok(Value::Int(b.len() as i64)),
        Value::List(l, _) => Ok(Value::Int(l.len() as i64)),
        Value::Map(m, _) => Ok(Value::Int(m.borrow().len() as i64)),
        other => Err(format!("len of type {}", other.type_name()).into()),
    }
}

/// Why a value cannot index a slice, array or string, in Go's words.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum IndexError {
    #[error("cannot index slice/array with nil")]
    Nil,
    #[error("cannot index slice/array with type {0}")]
    NotAnInteger(String),
}

fn index_value(v: &Value) -> Result<i64, IndexError> {
    match v {
        Value::Int(i) | Value::Int64(i) => Ok(*i),
        Value::Uint64(u) => Ok(*u as i64),
        Value::Uint8(u) => Ok(*u as i64),
        Value::Uint32(u) => Ok(*u as i64),
        Value::Nil => Err(IndexError::Nil),
        other => Err(IndexError::NotAnInteger(other.type_name())),
    }
}

fn index(x: &mut Exec, a: Vec<Value>) -> FResult {
    let mut item = a[0].clone();
    let _ = x;
    if item.is_nil() {
        // index unwraps interfaces first, so even a map's nil is untyped here.
        return Err("index of untyped nil".into());
    }
    for idx in &a[1..] {
        item = match &item.as_go_slice() {
            Value::List(l, _) => {
                let i = index_value(idx)?;
                if i < 0 || i as usize >= l.len() {
                    return Err(format!("index out of range: {i}").into());
                }
                l[i as usize].clone()
            }
            Value::Bytes(b) => {
                let i = index_value(idx)?;
                if i < 0 || i as usize >= b.len() {
                    return Err(format!("index out of range: {i}").into());
                }
                Value::Uint8(b[i as usize])
            }
            Value::Str(s) => {
                let i = index_value(idx)?;
                let b = crate::value::gostr::to_bytes(s);
                if i < 0 || i as usize >= b.len() {
                    return Err(format!("index out of range: {i}").into());
                }
                Value::Uint8(b[i as usize])
            }
            Value::Map(m, kind) => {
                let key = match idx {
                    Value::Str(s) => s.to_string(),
                    Value::Nil => {
                        return Err(format!("value is nil; should be of type string").into());
                    }
                    other => {
                        return Err(format!(
                            "value has type {}; should be string",
                            other.type_name()
                        )
                        .into());
                    }
                };
                match m.borrow().get(&key) {
                    Some(v) => v.clone(),
                    None => {
                        if kind.strings() {
                            Value::str("")
                        } else {
                            Value::Nil
                        }
                    }
                }
            }
            Value::Nil => return Err("index of nil pointer".into()),
            other => return Err(format!("can't index item of type {}", other.type_name()).into()),
        };
    }
    Ok(item)
}

#[derive(PartialEq, Eq, Clone, Copy, Debug)]
enum Kind {
    Invalid,
    Bool,
    Int,
    Uint,
    Float,
    Str,
    Other,
}

fn basic_kind(v: &Value) -> Kind {
    match v {
        Value::Nil => Kind::Invalid,
        Value::Bool(_) => Kind::Bool,
        Value::Int(_) | Value::Int64(_) => Kind::Int,
        Value::Uint64(_) | Value::Uint8(_) | Value::Uint32(_) => Kind::Uint,
        Value::Float(_) => Kind::Float,
        Value::Str(_) => Kind::Str,
        _ => Kind::Other,
    }
}

fn as_i(v: &Value) -> i64 {
    super::arg_int(v)
}

fn as_u(v: &Value) -> u64 {
    match v {
        Value::Uint64(u) => *u,
        Value::Uint8(u) => *u as u64,
        Value::Uint32(u) => *u as u64,
        _ => 0,
    }
}

fn eq(_: &mut Exec, a: Vec<Value>) -> FResult {
    if a.len() < 2 {
        return Err("missing argument for comparison".into());
    }
    for b in &a[1..] {
        if eq_pair(&a[0], b)? {
            return Ok(Value::Bool(true));
        }
    }
    Ok(Value::Bool(false))
}

/// Why `eq`, `lt` and the like cannot compare two values, in Go's words.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CompareError {
    #[error("incompatible types for comparison: {0} and {1}")]
    Incompatible(String, String),
    /// Two values of distinct non-basic types.
    #[error("non-comparable types {shown}: {left_type}, {right_type}: {right}")]
    NonComparableTypes {
        shown: String,
        left_type: String,
        right_type: String,
        right: String,
    },
    /// Slices, maps and byte slices have no `==` in Go.
    #[error("non-comparable type {shown}: {type_name}")]
    NonComparable { shown: String, type_name: String },
    #[error("invalid type for comparison")]
    InvalidType,
}

fn eq_pair(a: &Value, b: &Value) -> Result<bool, CompareError> {
    let (k1, k2) = (basic_kind(a), basic_kind(b));
    if k1 != k2 {
        return match (k1, k2) {
            (Kind::Int, Kind::Uint) => Ok(as_i(a) >= 0 && as_i(a) as u64 == as_u(b)),
            (Kind::Uint, Kind::Int) => Ok(as_i(b) >= 0 && as_u(a) == as_i(b) as u64),
            _ => {
                if !a.is_nil() && !b.is_nil() {
                    Err(CompareError::Incompatible(a.type_name(), b.type_name()))
                } else {
                    Ok(false)
                }
            }
        };
    }
    Ok(match k1 {
        Kind::Bool => a.truthy() == b.truthy(),
        Kind::Int => as_i(a) == as_i(b),
        Kind::Uint => as_u(a) == as_u(b),
        Kind::Float => match (a, b) {
            (Value::Float(x), Value::Float(y)) => x == y,
            _ => false,
        },
        Kind::Str => a.as_str() == b.as_str(),
        Kind::Invalid => true,
        Kind::Other => {
            if a.type_name() != b.type_name() {
                return Err(CompareError::NonComparableTypes {
                    shown: sprintf("%s", &[a.clone()]),
                    left_type: a.type_name(),
                    right_type: b.type_name(),
                    right: format::format_v(b),
                });
            }
            match a {
                Value::List(..) | Value::Map(..) | Value::Bytes(_) => {
                    return Err(CompareError::NonComparable {
                        shown: sprintf("%s", &[b.clone()]),
                        type_name: b.type_name(),
                    });
                }
                _ => a.deep_equal(b),
            }
        }
    })
}

fn lt(a: &Value, b: &Value) -> Result<bool, CompareError> {
    let k1 = basic_kind(a);
    if matches!(k1, Kind::Invalid | Kind::Other) {
        return Err(CompareError::InvalidType);
    }
    let k2 = basic_kind(b);
    if matches!(k2, Kind::Invalid | Kind::Other) {
        return Err(CompareError::InvalidType);
    }
    if k1 != k2 {
        return match (k1, k2) {
            (Kind::Int, Kind::Uint) => Ok(as_i(a) < 0 || (as_i(a) as u64) < as_u(b)),
            (Kind::Uint, Kind::Int) => Ok(as_i(b) >= 0 && as_u(a) < as_i(b) as u64),
            _ => Err(CompareError::Incompatible(a.type_name(), b.type_name())),
        };
    }
    Ok(match k1 {
        Kind::Bool => return Err(CompareError::InvalidType),
        Kind::Int => as_i(a) < as_i(b),
        Kind::Uint => as_u(a) < as_u(b),
        Kind::Float => match (a, b) {
            (Value::Float(x), Value::Float(y)) => x < y,
            _ => false,
        },
        Kind::Str => a.as_str().unwrap() < b.as_str().unwrap(),
        _ => false,
    })
}

fn le(a: &Value, b: &Value) -> Result<bool, CompareError> {
    if lt(a, b)? {
        return Ok(true);
    }
    eq_pair(a, b)
}

pub fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\0' => out.push('\u{FFFD}'),
            '"' => out.push_str("&#34;"),
            '\'' => out.push_str("&#39;"),
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

pub fn js_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '"' => out.push_str("\\\""),
            '<' => out.push_str("\\u003C"),
            '>' => out.push_str("\\u003E"),
            '&' => out.push_str("\\u0026"),
            '=' => out.push_str("\\u003D"),
            c if (c as u32) < 0x80 => {
                if c.is_ascii_graphic() || c == ' ' {
                    out.push(c)
                } else {
                    out.push_str(&format!("\\u{:04X}", c as u32))
                }
            }
            c => {
                if format::is_go_print(c) {
                    out.push(c)
                } else {
                    out.push_str(&format!("\\u{:04X}", c as u32))
                }
            }
        }
    }
    out
}

/// Go's url.QueryEscape.
pub fn query_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{:02X}", b)),
        }
    }
    out
}
