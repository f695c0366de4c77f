//! The function table: Go's built-ins, Sprig v3 as Helm exposes it, and
//! Helm's own functions. Each entry declares Go's parameter types because
//! the executor checks arguments against them exactly as Go does.

mod builtins;
pub mod cast;
mod crypto;
mod dates;
mod gotoml;
pub use dates::set_local_zone;
mod dicts;
mod goregex;
mod helm;
mod lists;
mod math;
mod pki;
pub mod semver;
pub mod strings;
mod zoneinfo;

use super::error::ExecError;
use super::exec::Exec;
use crate::value::{Map, Value};
use std::collections::HashMap;
use std::sync::OnceLock;

pub use crate::value::go_type::P;

pub enum FuncError {
    Msg(String),
    Exec(Box<ExecError>),
    /// `fail` / `required`.
    Fail(String),
}

impl From<String> for FuncError {
    fn from(s: String) -> Self {
        FuncError::Msg(s)
    }
}
impl From<&str> for FuncError {
    fn from(s: &str) -> Self {
        FuncError::Msg(s.to_string())
    }
}

/// A function's typed error becomes the text Go's executor prints after
/// `error calling NAME: `: template errors are reported as text, so only
/// the message crosses into them.
macro_rules! func_error_from {
    ($($error:ty),* $(,)?) => {
        $(impl From<$error> for FuncError {
            fn from(e: $error) -> Self {
                FuncError::Msg(e.to_string())
            }
        })*
    };
}
func_error_from!(
    semver::SemverError,
    builtins::CompareError,
    builtins::IndexError,
    strings::RegexCompileError,
    dates::TimeParseError,
    helm::TomlError,
    LookupError,
);

/// What a cluster lookup (`lookup`) failed with: any error the callback's
/// client raises.
pub type LookupError = Box<dyn std::error::Error + Send + Sync>;

pub type FResult = Result<Value, FuncError>;
pub type FnImpl = fn(&mut Exec, Vec<Value>) -> FResult;

pub struct Func {
    pub params: &'static [P],
    pub variadic: Option<P>,
    pub f: FnImpl,
}

pub struct Registry {
    map: HashMap<&'static str, Func>,
}

impl Registry {
    pub fn add(
        &mut self,
        name: &'static str,
        params: &'static [P],
        variadic: Option<P>,
        f: FnImpl,
    ) {
        self.map.insert(
            name,
            Func {
                params,
                variadic,
                f,
            },
        );
    }
    /// Same function under several names.
    pub fn alias(&mut self, name: &'static str, existing: &'static str) {
        let f = self.map.get(existing).expect("alias of a known function");
        let copy = Func {
            params: f.params,
            variadic: f.variadic,
            f: f.f,
        };
        self.map.insert(name, copy);
    }
}

fn registry() -> &'static Registry {
    static REG: OnceLock<Registry> = OnceLock::new();
    REG.get_or_init(|| {
        let mut r = Registry {
            map: HashMap::new(),
        };
        builtins::register(&mut r);
        strings::register(&mut r);
        math::register(&mut r);
        lists::register(&mut r);
        dicts::register(&mut r);
        dates::register(&mut r);
        crypto::register(&mut r);
        semver::register(&mut r);
        helm::register(&mut r);
        r
    })
}

pub fn get(name: &str) -> Option<&'static Func> {
    registry().map.get(name)
}

/// Functions of sprig.TxtFuncMap that Helm's engine deletes.
const SPRIG_ONLY: &[&str] = &["env", "expandenv"];

/// Functions Helm's engine adds to Sprig's (pkg/engine/funcs.go funcMap).
const HELM_ONLY: &[&str] = &[
    "toToml",
    "mustToToml",
    "fromToml",
    "toYaml",
    "mustToYaml",
    "toYamlPretty",
    "fromYaml",
    "fromYamlArray",
    "fromJsonArray",
    "include",
    "tpl",
    "required",
    "lookup",
];

/// A function a chart's templates may call (Helm's funcMap).
pub fn exists(name: &str) -> bool {
    registry().map.contains_key(name) && !SPRIG_ONLY.contains(&name)
}

/// A function of sprig.TxtFuncMap alone (Helm's `--name-template`).
pub fn exists_in_sprig(name: &str) -> bool {
    registry().map.contains_key(name) && !HELM_ONLY.contains(&name)
}

pub fn names() -> Vec<&'static str> {
    let mut v: Vec<_> = registry().map.keys().copied().collect();
    v.sort();
    v
}

// ---- helpers shared by the function modules ----

pub fn arg_str(v: &Value) -> &str {
    v.as_str().unwrap_or("")
}

pub fn arg_int(v: &Value) -> i64 {
    match v {
        Value::Int(i) | Value::Int64(i) => *i,
        Value::Uint32(u) => *u as i64,
        _ => 0,
    }
}

pub fn arg_map(v: &Value) -> Option<std::rc::Rc<std::cell::RefCell<Map>>> {
    match v {
        Value::Map(m, _) => Some(m.clone()),
        _ => None,
    }
}

/// Go's `fmt.Sprintf("%v", v)` for a single value, as Sprig's `strval`.
pub fn strval(v: &Value) -> String {
    match v {
        Value::Str(s) => s.to_string(),
        Value::Bytes(b) => crate::value::gostr::from_bytes(b).into_owned(),
        other => super::format::format_v(other),
    }
}
