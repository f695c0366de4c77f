//! The Go parameter types a template function or method declares: the
//! executor checks arguments against them before a call.

/// Go parameter types the executor distinguishes.
use super::Value;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum P {
    /// `interface {}`
    Any,
    /// `reflect.Value` (built-ins that take raw values)
    Raw,
    Str,
    Int,
    Int64,
    Float,
    Bool,
    Uint32,
    /// `[]interface {}`
    List,
    /// `map[string]interface {}`
    Dict,
    /// Sprig's `certificate` struct (genSignedCert's CA argument).
    Cert,
}

impl P {
    pub fn go_name(self) -> &'static str {
        match self {
            P::Any => "interface {}",
            P::Raw => "reflect.Value",
            P::Str => "string",
            P::Int => "int",
            P::Int64 => "int64",
            P::Float => "float64",
            P::Bool => "bool",
            P::Uint32 => "uint32",
            P::List => "[]interface {}",
            P::Dict => "map[string]interface {}",
            P::Cert => "sprig.certificate",
        }
    }
    pub fn can_be_nil(self) -> bool {
        matches!(self, P::Any | P::Raw | P::List | P::Dict)
    }
    pub fn zero(self) -> Value {
        match self {
            P::List => Value::list(Vec::new()),
            // A nil map: reads see it empty, writes fail as in Go.
            P::Dict => Value::Nil,
            _ => Value::Nil,
        }
    }
}
