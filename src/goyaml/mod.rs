//! YAML as Helm reads and writes it: go-yaml v2 (YAML 1.1 scalars) behind
//! sigs.k8s.io/yaml, which routes everything through JSON. Reading turns
//! every number into a float64; writing reproduces go-yaml v2's emitter
//! byte for byte (key order, quoting, folding, block scalars).

pub mod emit;
pub mod json;
pub mod libyaml;
pub mod parse;
pub mod resolve;

pub use emit::to_yaml;
pub use parse::{load_values, parse_values, YamlError};
