//! Functions Helm adds to (or replaces in) Sprig's set.

use super::{arg_str, FuncError, Registry, P};
use crate::gotmpl::exec::Exec;
use crate::goyaml::{emit, json, parse};
use crate::value::{Map, Value};

fn json_opts(html: bool, indent: Option<&'static str>) -> json::Opts {
    json::Opts {
        escape_html: html,
        indent,
    }
}

pub fn register(r: &mut Registry) {
    use P::*;
    r.add("include", &[Str, Any], None, |x: &mut Exec, a| {
        let name = arg_str(&a[0]).to_string();
        Ok(Value::string(x.include(&name, a[1].clone())?))
    });
    r.add("tpl", &[Str, Any], None, |x: &mut Exec, a| {
        let text = arg_str(&a[0]).to_string();
        Ok(Value::string(x.tpl(&text, a[1].clone())?))
    });
    r.add("required", &[Str, Any], None, |x: &mut Exec, a| {
        let missing = match &a[1] {
            Value::Nil => true,
            Value::Str(s) => s.is_empty(),
            _ => false,
        };
        if missing {
            if x.options.lint {
                return Ok(Value::str(""));
            }
            return Err(FuncError::Fail(arg_str(&a[0]).to_string()));
        }
        Ok(a[1].clone())
    });
    r.add("fail", &[Str], None, |x: &mut Exec, a| {
        if x.options.lint {
            return Ok(Value::str(""));
        }
        Err(FuncError::Fail(arg_str(&a[0]).to_string()))
    });
    r.add("toYaml", &[Any], None, |_, a| {
        Ok(Value::string(emit::to_yaml(&a[0]).unwrap_or_default()))
    });
    r.add("mustToYaml", &[Any], None, |_, a| {
        emit::to_yaml(&a[0])
            .map(Value::string)
            .map_err(|e| FuncError::Msg(format!("error marshaling into JSON: {}", e.0)))
    });
    r.add("toYamlPretty", &[Any], None, |_, a| {
        Ok(Value::string(
            emit::to_yaml_pretty(&a[0]).unwrap_or_default(),
        ))
    });
    r.add("fromYaml", &[Str], None, |_, a| {
        Ok(match parse::parse_first(arg_str(&a[0])) {
            Ok(Value::Map(m, _)) => Value::Map(m, crate::value::MapKind::Any),
            Ok(Value::Nil) => Value::empty_map(),
            Ok(other) => error_map(format!(
                "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                parse::json_kind(&other)
            )),
            Err(e) => error_map(e.msg),
        })
    });
    r.add("fromYamlArray", &[Str], None, |_, a| {
        Ok(match parse::parse_first(arg_str(&a[0])) {
            Ok(Value::List(l, k)) => Value::List(l, k),
            Ok(Value::Nil) => Value::list(Vec::new()),
            Ok(other) => Value::list(vec![Value::string(format!(
                "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go value of type []interface {{}}",
                parse::json_kind(&other)
            ))]),
            Err(e) => Value::list(vec![Value::string(e.msg)]),
        })
    });
    r.add("toJson", &[Any], None, |_, a| {
        Ok(Value::string(
            json::encode(&a[0], json_opts(true, None)).unwrap_or_default(),
        ))
    });
    r.add("mustToJson", &[Any], None, |_, a| {
        json::encode(&a[0], json_opts(true, None))
            .map(Value::string)
            .map_err(|e| FuncError::Msg(e.to_string()))
    });
    r.add("toPrettyJson", &[Any], None, |_, a| {
        Ok(Value::string(
            json::encode(&a[0], json_opts(true, Some("  "))).unwrap_or_default(),
        ))
    });
    r.add("mustToPrettyJson", &[Any], None, |_, a| {
        json::encode(&a[0], json_opts(true, Some("  ")))
            .map(Value::string)
            .map_err(|e| FuncError::Msg(e.to_string()))
    });
    r.add("toRawJson", &[Any], None, |_, a| {
        Ok(Value::string(
            json::encode(&a[0], json_opts(false, None)).unwrap_or_default(),
        ))
    });
    r.add("mustToRawJson", &[Any], None, |_, a| {
        json::encode(&a[0], json_opts(false, None))
            .map(Value::string)
            .map_err(|e| FuncError::Msg(e.to_string()))
    });
    r.add("fromJson", &[Str], None, |_, a| {
        Ok(match json::decode_partial(arg_str(&a[0])) {
            Ok((Value::Map(m, _), soft)) => {
                if let Some(e) = soft {
                    m.borrow_mut()
                        .insert("Error".into(), Value::string(e.to_string()));
                }
                Value::Map(m, crate::value::MapKind::Any)
            }
            Ok((v, _)) => match v {
                Value::Map(..) => unreachable!(),
                Value::Nil => Value::empty_map(),
                other => error_map(format!(
                    "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                    parse::json_kind(&other)
                )),
            },
            Err(e) => error_map(e.to_string()),
        })
    });
    r.add("fromJsonArray", &[Str], None, |_, a| {
        Ok(match json::decode(arg_str(&a[0])) {
            Ok(Value::List(l, k)) => Value::List(l, k),
            Ok(Value::Nil) => Value::list(Vec::new()),
            Ok(other) => Value::list(vec![Value::string(format!(
                "json: cannot unmarshal {} into Go value of type []interface {{}}",
                parse::json_kind(&other)
            ))]),
            Err(e) => Value::list(vec![Value::string(e.to_string())]),
        })
    });
    r.add("mustFromJson", &[Str], None, |_, a| {
        json::decode(arg_str(&a[0])).map_err(|e| FuncError::Msg(e.to_string()))
    });
    r.add("toToml", &[Any], None, |_, a| {
        if a[0].is_nil() {
            // Sprig's toTOML panics in the encoder on a nil interface.
            return Err(FuncError::Msg(
                "reflect: call of reflect.Value.Type on zero Value".into(),
            ));
        }
        // Helm's toToml writes the error text in place of the document.
        Ok(Value::string(
            to_toml(&a[0]).unwrap_or_else(|e| e.to_string()),
        ))
    });
    r.add("mustToToml", &[Any], None, |_, a| {
        to_toml(&a[0]).map(Value::string).map_err(FuncError::from)
    });
    r.add("fromToml", &[Str], None, |_, a| {
        let text = crate::value::gostr::to_bytes(arg_str(&a[0]));
        match super::gotoml::parse(&text) {
            Ok(m) => Ok(super::gotoml::to_value(&m)),
            Err(super::gotoml::TomlErr::Parse(e)) => Ok(error_map(e)),
            // A Go panic inside the decoder: text/template reports it.
            Err(super::gotoml::TomlErr::Bug(e)) => Err(FuncError::Msg(e)),
        }
    });
    r.add(
        "lookup",
        &[Str, Str, Str, Str],
        None,
        |x: &mut Exec, a| match x.lookup {
            None => Ok(Value::empty_map()),
            Some(f) => f(
                arg_str(&a[0]),
                arg_str(&a[1]),
                arg_str(&a[2]),
                arg_str(&a[3]),
            )
            .map_err(FuncError::from),
        },
    );
    r.add("getHostByName", &[Str], None, |_, _| Ok(Value::str("")));
}

fn error_map(msg: String) -> Value {
    let mut m = Map::new();
    m.insert("Error".into(), Value::string(msg));
    Value::map(m)
}

/// Why a value could not be written as TOML, in BurntSushi/toml's words
/// (and reflect's, for a nil).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TomlError {
    #[error("toml: top-level values must be Go maps or structs")]
    NotATable,
    #[error("reflect: call of reflect.Value.Type on zero Value")]
    Nil,
    #[error("toml: cannot encode array with nil element")]
    NilInArray,
}

/// BurntSushi/toml's encoder for the map shapes templates produce.
fn to_toml(v: &Value) -> Result<String, TomlError> {
    let Value::Map(m, _) = v else {
        // BurntSushi's encode: a value that is not a table is written bare
        // (writeKeyValue with no key); an array of tables needs a key.
        if table_array(v).is_some() {
            return Err(TomlError::NotATable);
        }
        return match v {
            Value::Nil => Err(TomlError::Nil),
            _ => toml_inline(v)?.ok_or(TomlError::NotATable),
        };
    };
    let mut out = String::new();
    toml_table(&mut out, &m.borrow(), &[])?;
    Ok(out)
}

fn toml_float(f: f64) -> String {
    if f.is_nan() {
        return if f.is_sign_negative() { "-nan" } else { "nan" }.into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let s = crate::value::float::format_float_g(f);
    if s.contains(['.', 'e', 'E']) {
        s
    } else {
        format!("{s}.0")
    }
}

fn toml_inline(v: &Value) -> Result<Option<String>, TomlError> {
    Ok(Some(match v {
        Value::Nil => return Ok(None),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) | Value::Int64(i) => i.to_string(),
        Value::Uint64(u) => u.to_string(),
        Value::Uint8(u) => u.to_string(),
        Value::Uint32(u) => u.to_string(),
        Value::Float(f) => toml_float(*f),
        Value::Str(s) => super::gotoml::quoted(s),
        Value::Object(_) if super::dates::toml_time_text(v).is_some() => {
            super::dates::toml_time_text(v).unwrap_or_default()
        }
        Value::List(l, _) => {
            let mut parts = Vec::new();
            for x in l.iter() {
                match toml_inline(x)? {
                    Some(s) => parts.push(s),
                    None => return Err(TomlError::NilInArray),
                }
            }
            format!("[{}]", parts.join(", "))
        }
        Value::Map(m, _) => {
            let mut parts = Vec::new();
            for (k, x) in m.borrow().iter() {
                if let Some(s) = toml_inline(x)? {
                    parts.push(format!("{} = {}", super::gotoml::key(k), s));
                }
            }
            format!("{{{}}}", parts.join(", "))
        }
        other => crate::gotmpl::format::quote_go(&crate::gotmpl::format::format_v(other)),
    }))
}

/// An array every element of which is a table: written as `[[key]]` blocks.
fn table_array(v: &Value) -> Option<Vec<Value>> {
    match v {
        Value::List(l, _) if !l.is_empty() && l.iter().all(|x| matches!(x, Value::Map(..))) => {
            Some(l.to_vec())
        }
        _ => None,
    }
}

/// BurntSushi/toml's eMapOrStruct: plain keys first, then tables and arrays
/// of tables in key order; keys indented one level per table, headers one
/// less; a blank line before each top-level table and each `[[...]]`.
fn toml_table(out: &mut String, m: &Map, path: &[String]) -> Result<(), TomlError> {
    // Keys sit one level per table deep; a sub-table's header at its parent's keys.
    let ind = "  ".repeat(path.len());
    for (k, v) in m.iter() {
        if matches!(v, Value::Map(..)) || table_array(v).is_some() {
            continue;
        }
        if let Some(s) = toml_inline(v)? {
            out.push_str(&format!("{ind}{} = {}\n", super::gotoml::key(k), s));
        }
    }
    for (k, v) in m.iter() {
        let mut p = path.to_vec();
        p.push(super::gotoml::key(k));
        if let Value::Map(sub, _) = v {
            if p.len() == 1 && !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&format!("{ind}[{}]\n", p.join(".")));
            toml_table(out, &sub.borrow(), &p)?;
        } else if let Some(items) = table_array(v) {
            for item in items {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(&format!("{ind}[[{}]]\n", p.join(".")));
                if let Value::Map(sub, _) = item {
                    toml_table(out, &sub.borrow(), &p)?;
                }
            }
        }
    }
    Ok(())
}
