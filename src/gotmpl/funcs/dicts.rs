//! Sprig's dictionary functions, with Go's map reference semantics:
//! `set`, `unset`, `merge` and `mergeOverwrite` mutate their first map.

use super::strings::is_empty;
use super::{arg_map, arg_str, strval, Registry, P};
use crate::value::{Map, MapKind, Value};
use std::cell::RefCell;
use std::rc::Rc;

pub fn register(r: &mut Registry) {
    use P::*;
    r.add("dict", &[], Some(Any), |_, a| {
        let mut m = Map::new();
        let mut i = 0;
        while i < a.len() {
            let k = strval(&a[i]);
            let v = if i + 1 < a.len() {
                a[i + 1].clone()
            } else {
                Value::str("")
            };
            m.insert(k, v);
            i += 2;
        }
        Ok(Value::map(m))
    });
    r.add("get", &[Dict, Str], None, |_, a| {
        let m = map_or_new(&a[0]);
        let v = m.borrow().get(arg_str(&a[1])).cloned();
        Ok(v.unwrap_or_else(|| Value::str("")))
    });
    r.add("set", &[Dict, Str, Any], None, |_, a| {
        let Some(m) = arg_map(&a[0]) else {
            return Err("assignment to entry in nil map".into());
        };
        let v = acyclic(&m, a[2].clone());
        m.borrow_mut().insert(arg_str(&a[1]).to_string(), v);
        Ok(a[0].clone())
    });
    r.add("unset", &[Dict, Str], None, |_, a| {
        if let Some(m) = arg_map(&a[0]) {
            m.borrow_mut().remove(arg_str(&a[1]));
        }
        Ok(a[0].clone())
    });
    r.add("hasKey", &[Dict, Str], None, |_, a| {
        Ok(Value::Bool(
            map_or_new(&a[0]).borrow().contains_key(arg_str(&a[1])),
        ))
    });
    r.add("pluck", &[Str], Some(Dict), |_, a| {
        let k = arg_str(&a[0]);
        Ok(Value::list(
            a[1..]
                .iter()
                .filter_map(|m| arg_map(m).and_then(|m| m.borrow().get(k).cloned()))
                .collect(),
        ))
    });
    r.add("keys", &[], Some(Dict), |_, a| {
        let mut out = Vec::new();
        for m in &a {
            out.extend(map_or_new(m).borrow().keys().cloned());
        }
        Ok(Value::str_list(out))
    });
    r.add("values", &[Dict], None, |_, a| {
        Ok(Value::list(
            map_or_new(&a[0]).borrow().values().cloned().collect(),
        ))
    });
    r.add("pick", &[Dict], Some(Str), |_, a| {
        let m = map_or_new(&a[0]);
        let m = m.borrow();
        let mut out = Map::new();
        for k in &a[1..] {
            if let Some(v) = m.get(arg_str(k)) {
                out.insert(arg_str(k).to_string(), v.clone());
            }
        }
        Ok(Value::map(out))
    });
    r.add("omit", &[Dict], Some(Str), |_, a| {
        let m = map_or_new(&a[0]);
        let drop: Vec<&str> = a[1..].iter().map(arg_str).collect();
        let out: Map = m
            .borrow()
            .iter()
            .filter(|(k, _)| !drop.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        Ok(Value::map(out))
    });
    r.add("merge", &[Dict], Some(Dict), |_, a| {
        let dst = map_or_new(&a[0]);
        for src in &a[1..] {
            merge_into(&dst, &map_or_new(src), false);
        }
        Ok(if a[0].is_nil() {
            Value::Map(dst, MapKind::Any)
        } else {
            a[0].clone()
        })
    });
    r.alias("mustMerge", "merge");
    r.add("mergeOverwrite", &[Dict], Some(Dict), |_, a| {
        let dst = map_or_new(&a[0]);
        for src in &a[1..] {
            merge_into(&dst, &map_or_new(src), true);
        }
        Ok(if a[0].is_nil() {
            Value::Map(dst, MapKind::Any)
        } else {
            a[0].clone()
        })
    });
    r.alias("mustMergeOverwrite", "mergeOverwrite");
    r.add("deepCopy", &[Any], None, |_, a| Ok(a[0].deep_copy()));
    r.alias("mustDeepCopy", "deepCopy");
    r.add("dig", &[], Some(Any), |_, a| {
        if a.len() < 3 {
            return Err("dig needs at least three arguments".into());
        }
        let dict = &a[a.len() - 1];
        let def = a[a.len() - 2].clone();
        let mut keys = Vec::new();
        for k in &a[..a.len() - 2] {
            match k {
                Value::Str(s) => keys.push(s.to_string()),
                other => return Err(iface_conv(other, "string").into()),
            }
        }
        let mut cur = dict.clone();
        for (i, k) in keys.iter().enumerate() {
            let m = match &cur {
                Value::Map(m, MapKind::Any) => m.clone(),
                other => return Err(iface_conv(other, "map[string]interface {}").into()),
            };
            let step = m.borrow().get(k).cloned();
            match step {
                None => return Ok(def),
                Some(v) => {
                    if i == keys.len() - 1 {
                        return Ok(v);
                    }
                    cur = v;
                }
            }
        }
        Ok(def)
    });
}

/// Whether `v` reaches the map `target` (so storing `v` in it would make
/// a reference cycle).
fn reaches(
    v: &Value,
    target: &Rc<RefCell<Map>>,
    seen: &mut std::collections::HashSet<usize>,
) -> bool {
    match v {
        Value::Map(m, _) => {
            if Rc::ptr_eq(m, target) {
                return true;
            }
            if !seen.insert(Rc::as_ptr(m) as usize) {
                return false;
            }
            m.borrow().values().any(|x| reaches(x, target, seen))
        }
        Value::List(l, _) => l.iter().any(|x| reaches(x, target, seen)),
        _ => false,
    }
}

/// Go's garbage collector tolerates a map that contains itself; reference
/// counting would leak it. Such a value is stored as a snapshot instead.
pub fn acyclic(target: &Rc<RefCell<Map>>, v: Value) -> Value {
    if matches!(v, Value::Map(..) | Value::List(..)) && reaches(&v, target, &mut Default::default())
    {
        return v.deep_copy();
    }
    v
}

/// A map argument; a nil map reads as empty.
fn map_or_new(v: &Value) -> Rc<RefCell<Map>> {
    arg_map(v).unwrap_or_else(|| Rc::new(RefCell::new(Map::new())))
}

fn iface_conv(v: &Value, want: &str) -> String {
    let got = if v.is_nil() {
        "nil".to_string()
    } else {
        v.type_name()
    };
    format!("interface conversion: interface {{}} is {got}, not {want}")
}

/// mergo.Merge / mergo.MergeWithOverwrite on `map[string]interface{}`.
pub fn merge_into(dst: &Rc<RefCell<Map>>, src: &Rc<RefCell<Map>>, overwrite: bool) {
    if Rc::ptr_eq(dst, src) {
        return;
    }
    let entries: Vec<(String, Value)> = src
        .borrow()
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for (k, sv) in entries {
        if sv.is_nil() {
            if overwrite {
                dst.borrow_mut().insert(k, Value::Nil);
            }
            continue;
        }
        let dv = dst.borrow().get(&k).cloned();
        if let (Value::Map(sm, _), Some(Value::Map(dm, _))) = (&sv, &dv) {
            merge_into(dm, sm, overwrite);
        }
        if let Some(d) = &dv {
            if !is_empty(d) {
                if matches!(sv, Value::List(..)) {
                    if overwrite {
                        {
                            let sv = acyclic(dst, sv);
                            dst.borrow_mut().insert(k, sv);
                        }
                    }
                    continue;
                }
                if matches!(sv, Value::Map(..)) && matches!(d, Value::Map(..)) {
                    continue;
                }
            }
        }
        if overwrite || dv.is_none() || dv.as_ref().map(is_empty).unwrap_or(true) {
            {
                let sv = acyclic(dst, sv);
                dst.borrow_mut().insert(k, sv);
            }
        }
    }
}
