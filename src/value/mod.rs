//! The runtime values templates operate on, modelled on the Go types Helm's
//! data and functions produce. Go's static types leak into observable
//! behaviour (`typeOf`, strict argument checks, `eq` errors), so the variants
//! keep the distinctions Go makes: `int` vs `int64` vs `float64`, `[]string`
//! vs `[]interface {}`, `common.Values` vs `map[string]interface {}`.

pub mod float;
pub mod go_type;
pub mod gostr;
pub mod gounicode;
pub mod quote;
pub mod strconv;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;

pub type Map = BTreeMap<String, Value>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListKind {
    /// `[]interface {}`
    Any,
    /// `[]string`
    Str,
    /// A nil `[]string` (what Go's regexp returns for no match): empty, but
    /// `null` to JSON and YAML.
    NilStr,
    /// `[]int`
    Int,
    /// `[]map[string]interface {}` (BurntSushi/toml's arrays of tables)
    Maps,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapKind {
    /// `map[string]interface {}`
    Any,
    /// `common.Values`: Helm's named map type for `.Values` and render contexts.
    Values,
    /// `map[string]string`
    StrStr,
    /// A nil `map[string]string` (an absent `annotations:` of Chart.yaml):
    /// empty, but `null` to JSON and YAML.
    NilStrStr,
}

impl MapKind {
    /// `map[string]string`, nil or not: its values are strings, not interfaces.
    pub fn strings(self) -> bool {
        matches!(self, MapKind::StrStr | MapKind::NilStrStr)
    }
}

/// A Go value as seen by a template.
#[derive(Clone)]
pub enum Value {
    Nil,
    Bool(bool),
    /// Go `int`
    Int(i64),
    /// Go `int64`
    Int64(i64),
    /// Go `uint64` (semver accessors)
    Uint64(u64),
    /// Go `uint8`, a byte taken out of a string by `index`
    Uint8(u8),
    /// Go `uint32`
    Uint32(u32),
    Float(f64),
    Str(Arc<str>),
    /// `[]uint8`; shared with the chart file it may come from (`.Files`).
    Bytes(bytes::Bytes),
    List(Rc<Vec<Value>>, ListKind),
    /// Go maps are references: `set` and `merge` mutate in place and every
    /// holder sees the change.
    Map(Rc<RefCell<Map>>, MapKind),
    Object(Rc<dyn Object>),
}

/// Why a template object's method could not be called, in the words Go's
/// reflect-based calls use.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MethodError {
    #[error("can't call method {0}")]
    Unknown(String),
    #[error("wrong number of args")]
    NoArguments,
    #[error("wrong number of args: want {want} got {got}")]
    ArgCount { want: usize, got: usize },
    #[error("wrong number of args for {method}: want {want} got {got}")]
    ArgCountOf {
        method: String,
        want: usize,
        got: usize,
    },
    /// An object argument of another Go type than the method takes.
    #[error("wrong type for value; expected {expected}")]
    NotA { expected: &'static str },
    #[error("wrong type for value; expected {expected}; got {got}")]
    WrongType { expected: &'static str, got: String },
}

/// Helm's special objects (Files, Capabilities, semver, time, certificates):
/// struct-like values with fields and methods.
pub trait Object {
    fn type_name(&self) -> String;
    /// Go reflect kind name, for `kindOf`.
    fn kind_name(&self) -> &'static str {
        "struct"
    }
    fn field(&self, name: &str) -> Option<Value>;
    fn has_method(&self, _name: &str) -> bool {
        false
    }
    /// Go parameter types of a method (fixed, variadic), checked like a
    /// function's arguments before the call.
    fn method_sig(&self, _name: &str) -> Option<(&'static [go_type::P], Option<go_type::P>)> {
        None
    }
    fn call_method(&self, name: &str, _args: Vec<Value>) -> Result<Value, MethodError> {
        Err(MethodError::Unknown(name.to_string()))
    }
    /// `%v` rendering.
    fn format(&self) -> String;
    fn as_any(&self) -> &dyn std::any::Any;
    /// Whether the object is a Go pointer (nil-able, never "empty").
    fn is_pointer(&self) -> bool {
        false
    }
    /// The object's contents as plain data, for `toJson` / `toYaml`.
    fn to_data(&self) -> Value {
        Value::Str(self.format().into())
    }
    /// A Go struct's fields in declaration order, which encoding/json keeps
    /// (a map's keys it sorts); `None` encodes `to_data`.
    fn json_fields(&self) -> Option<Vec<(&'static str, Value)>> {
        None
    }
}

impl Value {
    /// A Go slice behind a Helm object (`common.VersionSet`) as the list it
    /// is, for functions that reach slices through reflection (Sprig's list
    /// functions, `index`, `slice`); anything else as it is.
    pub fn as_go_slice(&self) -> Value {
        if let Value::Object(o) = self {
            if matches!(o.kind_name(), "slice" | "array") {
                if let l @ Value::List(..) = o.to_data() {
                    return l;
                }
            }
        }
        self.clone()
    }

    pub fn str(s: impl AsRef<str>) -> Value {
        Value::Str(Arc::from(s.as_ref()))
    }
    pub fn string(s: String) -> Value {
        Value::Str(Arc::from(s))
    }
    pub fn list(items: Vec<Value>) -> Value {
        Value::List(Rc::new(items), ListKind::Any)
    }
    pub fn str_list(items: Vec<String>) -> Value {
        Value::List(
            Rc::new(items.into_iter().map(Value::string).collect()),
            ListKind::Str,
        )
    }
    pub fn map(m: Map) -> Value {
        Value::Map(Rc::new(RefCell::new(m)), MapKind::Any)
    }
    pub fn values_map(m: Map) -> Value {
        Value::Map(Rc::new(RefCell::new(m)), MapKind::Values)
    }
    pub fn empty_map() -> Value {
        Value::map(Map::new())
    }

    pub fn is_nil(&self) -> bool {
        matches!(self, Value::Nil)
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The Go type name as `%T` / `typeOf` print it.
    pub fn type_name(&self) -> String {
        match self {
            Value::Nil => "<nil>".into(),
            Value::Bool(_) => "bool".into(),
            Value::Int(_) => "int".into(),
            Value::Int64(_) => "int64".into(),
            Value::Uint64(_) => "uint64".into(),
            Value::Uint8(_) => "uint8".into(),
            Value::Uint32(_) => "uint32".into(),
            Value::Float(_) => "float64".into(),
            Value::Str(_) => "string".into(),
            Value::Bytes(_) => "[]uint8".into(),
            Value::List(_, ListKind::Any) => "[]interface {}".into(),
            Value::List(_, ListKind::Str | ListKind::NilStr) => "[]string".into(),
            Value::List(_, ListKind::Int) => "[]int".into(),
            Value::List(_, ListKind::Maps) => "[]map[string]interface {}".into(),
            Value::Map(_, MapKind::Any) => "map[string]interface {}".into(),
            Value::Map(_, MapKind::Values) => "common.Values".into(),
            Value::Map(_, MapKind::StrStr | MapKind::NilStrStr) => "map[string]string".into(),
            Value::Object(o) => o.type_name(),
        }
    }

    /// Go reflect kind, as `kindOf` prints it.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Value::Nil => "invalid",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Int64(_) => "int64",
            Value::Uint64(_) => "uint64",
            Value::Uint8(_) => "uint8",
            Value::Uint32(_) => "uint32",
            Value::Float(_) => "float64",
            Value::Str(_) => "string",
            Value::Bytes(_) | Value::List(..) => "slice",
            Value::Map(..) => "map",
            Value::Object(o) => o.kind_name(),
        }
    }

    /// Go template truthiness.
    pub fn truthy(&self) -> bool {
        match self {
            Value::Nil => false,
            Value::Bool(b) => *b,
            Value::Int(i) | Value::Int64(i) => *i != 0,
            Value::Uint64(u) => *u != 0,
            Value::Uint8(u) => *u != 0,
            Value::Uint32(u) => *u != 0,
            Value::Float(f) => *f != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::Bytes(b) => !b.is_empty(),
            Value::List(l, _) => !l.is_empty(),
            Value::Map(m, _) => !m.borrow().is_empty(),
            Value::Object(_) => true,
        }
    }

    /// Sprig's notion of "empty" (`default`, `empty`, `compact`, `merge`).
    pub fn is_empty(&self) -> bool {
        !self.truthy()
    }

    pub fn deep_copy(&self) -> Value {
        match self {
            Value::List(l, k) => {
                Value::List(Rc::new(l.iter().map(|v| v.deep_copy()).collect()), *k)
            }
            Value::Map(m, k) => Value::Map(
                Rc::new(RefCell::new(
                    m.borrow()
                        .iter()
                        .map(|(k, v)| (k.clone(), v.deep_copy()))
                        .collect(),
                )),
                *k,
            ),
            other => other.clone(),
        }
    }

    /// Go `reflect.DeepEqual`, which compares types as well as contents.
    pub fn deep_equal(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Nil, Value::Nil) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Int(a), Value::Int(b)) => a == b,
            (Value::Int64(a), Value::Int64(b)) => a == b,
            (Value::Uint64(a), Value::Uint64(b)) => a == b,
            (Value::Uint8(a), Value::Uint8(b)) => a == b,
            (Value::Uint32(a), Value::Uint32(b)) => a == b,
            (Value::Float(a), Value::Float(b)) => a == b,
            (Value::Str(a), Value::Str(b)) => a == b,
            (Value::Bytes(a), Value::Bytes(b)) => a == b,
            (Value::List(a, ka), Value::List(b, kb)) => {
                ka == kb
                    && a.len() == b.len()
                    && a.iter().zip(b.iter()).all(|(x, y)| x.deep_equal(y))
            }
            (Value::Map(a, ka), Value::Map(b, kb)) => {
                if ka != kb {
                    return false;
                }
                if Rc::ptr_eq(a, b) {
                    return true;
                }
                let (a, b) = (a.borrow(), b.borrow());
                a.len() == b.len()
                    && a.iter()
                        .all(|(k, v)| b.get(k).map(|w| v.deep_equal(w)).unwrap_or(false))
            }
            (Value::Object(a), Value::Object(b)) => {
                a.format() == b.format() && a.type_name() == b.type_name()
            }
            _ => false,
        }
    }

    /// Items of any Go slice value.
    pub fn list_items(&self) -> Option<Vec<Value>> {
        match self {
            Value::List(l, _) => Some(l.as_ref().clone()),
            Value::Bytes(b) => Some(b.iter().map(|x| Value::Uint8(*x)).collect()),
            _ => None,
        }
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}
impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::str(s)
    }
}
impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::string(s)
    }
}
