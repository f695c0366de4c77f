//! Values: Helm's coalescing of chart defaults with user values, globals,
//! and dependency processing (condition, tags, alias, import-values).

use super::Chart;
use crate::value::{Map, Value};

fn as_map(v: &Value) -> Option<Map> {
    match v {
        Value::Map(m, _) => Some(m.borrow().clone()),
        _ => None,
    }
}

fn is_table(v: &Value) -> bool {
    matches!(v, Value::Map(..))
}

/// Deep copy, so later merges never alias chart defaults.
pub fn deep(m: &Map) -> Map {
    m.iter().map(|(k, v)| (k.clone(), v.deep_copy())).collect()
}

fn strip_nils(m: &Map) -> Map {
    m.iter()
        .filter(|(_, v)| !v.is_nil())
        .map(|(k, v)| match v {
            Value::Map(inner, _) => (k.clone(), Value::map(strip_nils(&inner.borrow()))),
            other => (k.clone(), other.clone()),
        })
        .collect()
}

/// coalesceTablesFullKey: `dst` has priority over `src`.
pub fn coalesce_tables(dst: &mut Map, src: &Map, merge: bool) {
    let original = src;
    let mut src = src.clone();
    for (k, v) in dst.iter() {
        if v.is_nil() {
            src.insert(k.clone(), Value::Nil);
        }
    }
    for (k, sv) in src.iter() {
        match dst.get(k) {
            Some(dv) if dv.is_nil() => {
                // A user null deletes a default, but two nulls stay a null.
                if !merge && original.get(k).map(|v| !v.is_nil()).unwrap_or(false) {
                    dst.remove(k);
                }
            }
            None => {
                dst.insert(k.clone(), sv.clone());
            }
            Some(dv) => {
                if is_table(sv) {
                    if let (Some(mut d), Some(s)) = (as_map(dv), as_map(sv)) {
                        coalesce_tables(&mut d, &s, merge);
                        dst.insert(k.clone(), Value::map(d));
                    }
                }
            }
        }
    }
}

fn coalesce_values(chart: &Chart, v: &mut Map, merge: bool) {
    let sub_names: Vec<&str> = chart.dependencies.iter().map(|c| c.name()).collect();
    for (key, val) in deep(&chart.values) {
        match v.get(&key) {
            Some(value) => {
                if value.is_nil() && !merge {
                    v.remove(&key);
                } else if let Some(mut dest) = as_map(value) {
                    if let Some(src) = as_map(&val) {
                        let is_sub = sub_names.contains(&key.as_str());
                        let src = if is_sub || merge {
                            src
                        } else {
                            strip_nils(&src)
                        };
                        coalesce_tables(&mut dest, &src, merge || is_sub);
                        v.insert(key, Value::map(dest));
                    }
                }
            }
            None => {
                if val.is_nil() && !merge {
                    continue;
                }
                match &val {
                    Value::Map(m, _) if !merge => {
                        let s = strip_nils(&m.borrow());
                        v.insert(key, Value::map(s));
                    }
                    _ => {
                        v.insert(key, val);
                    }
                }
            }
        }
    }
}

fn coalesce_globals(dest: &mut Map, src: &Map) {
    let mut dg = match dest.get("global") {
        None => Map::new(),
        Some(v) => match as_map(v) {
            Some(m) => m,
            None => return,
        },
    };
    let sg = match src.get("global") {
        None => Map::new(),
        Some(v) => match as_map(v) {
            Some(m) => m,
            None => return,
        },
    };
    for (key, val) in sg.iter() {
        if let Some(vm) = as_map(val) {
            let mut vv = deep(&vm);
            match dg.get(key) {
                None => {
                    dg.insert(key.clone(), Value::map(vv));
                }
                Some(destv) => {
                    if let Some(dm) = as_map(destv) {
                        coalesce_tables(&mut vv, &dm, true);
                        dg.insert(key.clone(), Value::map(vv));
                    }
                }
            }
        } else if dg.get(key).map(is_table).unwrap_or(false) {
            // a table in the subchart is kept
        } else {
            dg.insert(key.clone(), val.clone());
        }
    }
    dest.insert("global".into(), Value::map(dg));
}

/// Why values could not be coalesced with a chart's, in Helm's words.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ValuesError {
    /// The values for a subchart are not a map: Helm prints the value with
    /// a `%t` verb that does not fit it.
    #[error("type mismatch on {subchart}: %!t({type_name}={value})")]
    TypeMismatch {
        subchart: String,
        type_name: String,
        value: String,
    },
}

fn coalesce_deps(chart: &Chart, dest: &mut Map, merge: bool) -> Result<(), ValuesError> {
    for sub in &chart.dependencies {
        let name = sub.name().to_string();
        let mut dv = match dest.get(&name) {
            None => Map::new(),
            Some(v) => match as_map(v) {
                Some(m) => m,
                None => {
                    return Err(ValuesError::TypeMismatch {
                        subchart: name,
                        type_name: v.type_name(),
                        value: crate::gotmpl::format::format_v(v),
                    })
                }
            },
        };
        coalesce_globals(&mut dv, dest);
        coalesce(sub, &mut dv, merge)?;
        dest.insert(name, Value::map(dv));
    }
    Ok(())
}

fn coalesce(chart: &Chart, dest: &mut Map, merge: bool) -> Result<(), ValuesError> {
    coalesce_values(chart, dest, merge);
    coalesce_deps(chart, dest, merge)
}

/// Helm's CoalesceValues(chart, userValues).
pub fn coalesce_values_for(chart: &Chart, user: &Map) -> Result<Map, ValuesError> {
    let mut dest = deep(user);
    coalesce(chart, &mut dest, false)?;
    Ok(dest)
}

/// Helm's MergeValues (like coalesce, but nulls are kept).
pub fn merge_values_for(chart: &Chart, user: &Map) -> Result<Map, ValuesError> {
    let mut dest = deep(user);
    coalesce(chart, &mut dest, true)?;
    Ok(dest)
}

/// Look up a dotted path; only a present value counts.
fn path_value(vals: &Map, path: &str) -> Option<Value> {
    let parts: Vec<&str> = path.split('.').collect();
    let mut cur = vals.clone();
    for (i, p) in parts.iter().enumerate() {
        let v = cur.get(*p)?.clone();
        if i == parts.len() - 1 {
            return Some(v);
        }
        cur = as_map(&v)?;
    }
    None
}

fn table(vals: &Map, path: &str) -> Option<Map> {
    let mut cur = vals.clone();
    for p in path.split('.') {
        if p.is_empty() {
            continue;
        }
        cur = as_map(cur.get(p)?)?;
    }
    Some(cur)
}

fn version_compatible(constraint: &str, version: &str) -> bool {
    if constraint.is_empty() {
        return true;
    }
    use crate::gotmpl::funcs::semver::{Constraint, Version};
    match (Constraint::parse(constraint), Version::parse(version)) {
        (Ok(c), Ok(v)) => c.check(&v),
        _ => false,
    }
}

fn process_enabled(c: &mut Chart, v: &Map, path: &str) -> Result<(), ValuesError> {
    if c.metadata.dependencies.is_empty() {
        return Ok(());
    }
    let mut deps: Vec<Chart> = Vec::new();
    for existing in &c.dependencies {
        let declared = c.metadata.dependencies.iter().any(|d| {
            d.name == existing.name() && version_compatible(&d.version, &existing.metadata.version)
        });
        if !declared {
            deps.push(existing.clone());
        }
    }
    for req in c.metadata.dependencies.iter_mut() {
        if let Some(found) = c.dependencies.iter().find(|ch| {
            ch.name() == req.name && version_compatible(&req.version, &ch.metadata.version)
        }) {
            let mut copy = found.clone();
            if !req.alias.is_empty() {
                copy.metadata.name = req.alias.clone();
            }
            deps.push(copy);
        }
        if !req.alias.is_empty() {
            req.name = req.alias.clone();
        }
    }
    c.dependencies = deps;
    for d in c.metadata.dependencies.iter_mut() {
        d.enabled = true;
    }
    let cvals = coalesce_values_for(c, v)?;
    // tags
    if let Some(tags) = table(&cvals, "tags") {
        for r in c.metadata.dependencies.iter_mut() {
            let (mut has_true, mut has_false) = (false, false);
            for t in &r.tags {
                if let Some(Value::Bool(b)) = tags.get(t) {
                    if *b {
                        has_true = true;
                    } else {
                        has_false = true;
                    }
                }
            }
            r.enabled = !(!has_true && has_false);
        }
    }
    // conditions
    for r in c.metadata.dependencies.iter_mut() {
        for cond in r.condition.trim().split(',') {
            if cond.is_empty() {
                continue;
            }
            if let Some(Value::Bool(b)) = path_value(&cvals, &format!("{path}{cond}")) {
                r.enabled = b;
                break;
            }
        }
    }
    let disabled: Vec<String> = c
        .metadata
        .dependencies
        .iter()
        .filter(|r| !r.enabled)
        .map(|r| r.name.clone())
        .collect();
    c.dependencies
        .retain(|d| !disabled.contains(&d.metadata.name));
    c.metadata
        .dependencies
        .retain(|d| !disabled.contains(&d.name));
    for sub in c.dependencies.iter_mut() {
        let subpath = format!("{path}{}.", sub.metadata.name);
        process_enabled(sub, &cvals, &subpath)?;
    }
    Ok(())
}

fn path_to_map(path: &str, data: Map) -> Map {
    if path == "." {
        return data;
    }
    let parts: Vec<&str> = path.split('.').filter(|p| !p.is_empty()).collect();
    let mut cur = data;
    for p in parts.iter().rev() {
        let mut m = Map::new();
        m.insert(p.to_string(), Value::map(cur));
        cur = m;
    }
    cur
}

fn process_imports(c: &mut Chart) -> Result<(), ValuesError> {
    for d in c.dependencies.iter_mut() {
        process_imports(d)?;
    }
    if c.metadata.dependencies.is_empty() {
        return Ok(());
    }
    let cvals = merge_values_for(c, &Map::new())?;
    let mut b = Map::new();
    for r in c.metadata.dependencies.iter_mut() {
        let mut out = Vec::new();
        for iv in &r.import_values {
            match iv {
                Value::Map(m, _) => {
                    let m = m.borrow();
                    let child = m
                        .get("child")
                        .map(crate::gotmpl::format::format_v)
                        .unwrap_or_else(|| "<nil>".into());
                    let parent = m
                        .get("parent")
                        .map(crate::gotmpl::format::format_v)
                        .unwrap_or_else(|| "<nil>".into());
                    let mut o = Map::new();
                    o.insert("child".into(), Value::str(&child));
                    o.insert("parent".into(), Value::str(&parent));
                    out.push(Value::map(o));
                    if let Some(vv) = table(&cvals, &format!("{}.{}", r.name, child)) {
                        coalesce_tables(&mut b, &path_to_map(&parent, vv), true);
                    }
                }
                Value::Str(s) => {
                    let child = format!("exports.{s}");
                    let mut o = Map::new();
                    o.insert("child".into(), Value::str(&child));
                    o.insert("parent".into(), Value::str("."));
                    out.push(Value::map(o));
                    if let Some(vm) = table(&cvals, &format!("{}.{}", r.name, child)) {
                        coalesce_tables(&mut b, &vm, true);
                    }
                }
                _ => {}
            }
        }
        r.import_values = out;
    }
    let mut vals = deep(&cvals);
    coalesce_tables(&mut vals, &b, true);
    c.values = vals;
    Ok(())
}

/// Helm's ProcessDependencies: drop disabled subcharts, apply aliases and
/// import values. Returns the processed copy.
pub fn process_dependencies(chart: &Chart, user: &Map) -> Result<Chart, ValuesError> {
    let mut c = chart.clone();
    process_enabled(&mut c, user, "")?;
    process_imports(&mut c)?;
    Ok(c)
}

/// Merge `src` into `dst` as Helm merges values files (maps deep, others replaced).
pub fn merge_maps(dst: &mut Map, src: Map) {
    for (k, v) in src {
        if let Value::Map(sm, _) = &v {
            if let Some(Value::Map(dm, _)) = dst.get(&k) {
                let mut d = dm.borrow().clone();
                merge_maps(&mut d, sm.borrow().clone());
                dst.insert(k, Value::map(d));
                continue;
            }
        }
        dst.insert(k, v);
    }
}
