//! spf13/cast v1.7.0 conversions, which Sprig uses for `int`, `int64`,
//! `float64` and the implicit conversions of its math functions.

pub use crate::value::strconv::parse_float;
use crate::value::strconv::parse_go_int;
use crate::value::Value;

fn trim_zero_decimal(s: &str) -> &str {
    let b = s.as_bytes();
    let mut found_zero = false;
    let mut i = b.len();
    while i > 0 {
        match b[i - 1] {
            b'.' => {
                if found_zero {
                    return &s[..i - 1];
                }
            }
            b'0' => found_zero = true,
            _ => return s,
        }
        i -= 1;
    }
    s
}

/// Go's strconv.ParseInt(s, 0, 64).
pub fn parse_int_base0(s: &str) -> Option<i64> {
    if s.is_empty() {
        return None;
    }
    let body = s.trim_start_matches(['+', '-']);
    if s.len() - body.len() > 1 || body.starts_with('_') {
        return None;
    }
    // Base 0 accepts underscores as Go integer literals do.
    parse_go_int(s)
}

pub fn to_int64(v: &Value) -> i64 {
    match v {
        Value::Int(i) | Value::Int64(i) => *i,
        Value::Uint64(u) => *u as i64,
        Value::Uint8(u) => *u as i64,
        Value::Uint32(u) => *u as i64,
        Value::Float(f) => go_float_to_int64(*f),
        Value::Bool(b) => *b as i64,
        Value::Str(s) => parse_int_base0(trim_zero_decimal(s)).unwrap_or(0),
        _ => 0,
    }
}

/// Go's `int64(f)` on amd64 (CVTTSD2SQ): out of range or NaN gives the
/// minimum int64, where Rust's `as` saturates.
pub fn go_float_to_int64(f: f64) -> i64 {
    if f.is_nan() || f >= 9.223372036854775807e18 || f < -9.223372036854775808e18 {
        i64::MIN
    } else {
        f as i64
    }
}

pub fn to_float64(v: &Value) -> f64 {
    match v {
        Value::Int(i) | Value::Int64(i) => *i as f64,
        Value::Uint64(u) => *u as f64,
        Value::Uint8(u) => *u as f64,
        Value::Uint32(u) => *u as f64,
        Value::Float(f) => *f,
        Value::Bool(b) => *b as i64 as f64,
        Value::Str(s) => parse_float(s).unwrap_or(0.0),
        _ => 0.0,
    }
}

/// Go's strconv.Atoi.
pub fn atoi(s: &str) -> Option<i64> {
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    if body.is_empty() || !body.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse::<i64>().ok()
}
