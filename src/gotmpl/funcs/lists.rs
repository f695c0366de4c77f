//! Sprig's list functions. Each accepts any Go slice and returns
//! `[]interface {}`; the `must` variants differ only in how Go reports the
//! failure, which reaches the template the same way.

use super::cast::to_int64;
use super::strings::is_empty;
use super::{FResult, FuncError, Registry, P};
use crate::value::{ListKind, Value};
use std::rc::Rc;

const NIL_DEREF: &str = "runtime error: invalid memory address or nil pointer dereference";

fn items(v: &Value, what: &str) -> Result<Vec<Value>, FuncError> {
    match &v.as_go_slice() {
        Value::List(l, _) => Ok(l.as_ref().clone()),
        Value::Bytes(b) => Ok(b.iter().map(|x| Value::Uint8(*x)).collect()),
        Value::Nil => Err(NIL_DEREF.into()),
        other => Err(format!("Cannot {what} on type {}", other.kind_name()).into()),
    }
}

fn find_items(v: &Value, what: &str) -> Result<Vec<Value>, FuncError> {
    match &v.as_go_slice() {
        v @ (Value::List(..) | Value::Bytes(_) | Value::Nil) => items(v, what),
        other => Err(format!("Cannot find {what} on type {}", other.kind_name()).into()),
    }
}

fn list(v: Vec<Value>) -> FResult {
    Ok(Value::list(v))
}

pub fn register(r: &mut Registry) {
    use P::*;
    r.add("list", &[], Some(Any), |_, a| list(a));
    r.alias("tuple", "list");
    r.add("append", &[Any, Any], None, |_, a| {
        let mut l = items(&a[0], "push")?;
        l.push(a[1].clone());
        list(l)
    });
    r.alias("push", "append");
    r.alias("mustAppend", "append");
    r.alias("mustPush", "append");
    r.add("prepend", &[Any, Any], None, |_, a| {
        let mut l = items(&a[0], "prepend")?;
        l.insert(0, a[1].clone());
        list(l)
    });
    r.alias("mustPrepend", "prepend");
    r.add("first", &[Any], None, |_, a| {
        Ok(find_items(&a[0], "first")?
            .into_iter()
            .next()
            .unwrap_or(Value::Nil))
    });
    r.alias("mustFirst", "first");
    r.add("last", &[Any], None, |_, a| {
        Ok(find_items(&a[0], "last")?.pop().unwrap_or(Value::Nil))
    });
    r.alias("mustLast", "last");
    r.add("rest", &[Any], None, |_, a| {
        let l = find_items(&a[0], "rest")?;
        if l.is_empty() {
            return list(Vec::new());
        }
        list(l[1..].to_vec())
    });
    r.alias("mustRest", "rest");
    r.add("initial", &[Any], None, |_, a| {
        let l = find_items(&a[0], "initial")?;
        if l.is_empty() {
            return list(Vec::new());
        }
        list(l[..l.len() - 1].to_vec())
    });
    r.alias("mustInitial", "initial");
    r.add("reverse", &[Any], None, |_, a| {
        let mut l = find_items(&a[0], "reverse")?;
        l.reverse();
        list(l)
    });
    r.alias("mustReverse", "reverse");
    r.add("uniq", &[Any], None, |_, a| {
        let l = find_items(&a[0], "uniq")?;
        let mut out: Vec<Value> = Vec::new();
        for v in l {
            if !out.iter().any(|x| x.deep_equal(&v)) {
                out.push(v);
            }
        }
        list(out)
    });
    r.alias("mustUniq", "uniq");
    r.add("without", &[Any], Some(Any), |_, a| {
        let l = find_items(&a[0], "without")?;
        list(
            l.into_iter()
                .filter(|v| !a[1..].iter().any(|o| o.deep_equal(v)))
                .collect(),
        )
    });
    r.alias("mustWithout", "without");
    r.add("has", &[Any, Any], None, |_, a| {
        if a[1].is_nil() {
            return Ok(Value::Bool(false));
        }
        let l = find_items(&a[1], "has")?;
        Ok(Value::Bool(l.iter().any(|v| v.deep_equal(&a[0]))))
    });
    r.alias("mustHas", "has");
    r.add("compact", &[Any], None, |_, a| {
        let l = match &a[0].as_go_slice() {
            Value::List(..) | Value::Bytes(_) | Value::Nil => items(&a[0], "compact")?,
            other => return Err(format!("Cannot compact on type {}", other.kind_name()).into()),
        };
        list(l.into_iter().filter(|v| !is_empty(v)).collect())
    });
    r.alias("mustCompact", "compact");
    r.add("slice", &[Any], Some(Any), |_, mut a| {
        a[0] = a[0].as_go_slice();
        let kind = match &a[0] {
            Value::List(_, k) => *k,
            Value::Nil => return Err(NIL_DEREF.into()),
            Value::Bytes(_) => ListKind::Any,
            other => {
                return Err(format!(
                    "list should be type of slice or array but {}",
                    other.kind_name()
                )
                .into())
            }
        };
        let l = items(&a[0], "slice")?;
        if l.is_empty() {
            return Ok(Value::Nil);
        }
        let start = a.get(1).map(to_int64).unwrap_or(0);
        let end = if a.len() < 3 {
            l.len() as i64
        } else {
            to_int64(&a[2])
        };
        if start < 0 || end < start || end as usize > l.len() {
            return Err("reflect.Value.Slice: slice index out of bounds".into());
        }
        if let Value::Bytes(b) = &a[0] {
            return Ok(Value::Bytes(b.slice(start as usize..end as usize)));
        }
        Ok(Value::List(
            Rc::new(l[start as usize..end as usize].to_vec()),
            kind,
        ))
    });
    r.alias("mustSlice", "slice");
    r.add("concat", &[], Some(Any), |_, a| {
        let mut out = Vec::new();
        for v in &a {
            match &v.as_go_slice() {
                v @ (Value::List(..) | Value::Bytes(_)) => out.extend(items(v, "concat")?),
                Value::Nil => return Err(NIL_DEREF.into()),
                other => {
                    return Err(format!("Cannot concat type {} as list", other.kind_name()).into())
                }
            }
        }
        list(out)
    });
    r.add("chunk", &[Int, Any], None, |_, a| {
        let size = super::arg_int(&a[0]);
        let l = match &a[1].as_go_slice() {
            v @ (Value::List(..) | Value::Bytes(_) | Value::Nil) => items(v, "chunk")?,
            other => return Err(format!("Cannot chunk type {}", other.kind_name()).into()),
        };
        if size <= 0 {
            return Err("runtime error: integer divide by zero".into());
        }
        list(
            l.chunks(size as usize)
                .map(|c| Value::list(c.to_vec()))
                .collect(),
        )
    });
    r.alias("mustChunk", "chunk");
}
