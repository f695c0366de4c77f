//! spf13/cast v1.7.0 conversions, which Sprig uses for `int`, `int64`,
//! `float64` and the implicit conversions of its math functions.

use crate::gotmpl::parse::{parse_go_float, parse_go_int};
use crate::gotmpl::value::Value;

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

/// Go's strconv.ParseFloat(s, 64).
pub fn parse_float(s: &str) -> Option<f64> {
    let l = s.to_ascii_lowercase();
    let body = l.trim_start_matches(['+', '-']);
    if s.len() - body.len() > 1 {
        return None;
    }
    let neg = l.starts_with('-');
    match body {
        "inf" | "infinity" => {
            return Some(if neg {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            })
        }
        "nan" => return Some(f64::NAN),
        _ => {}
    }
    if body.starts_with("0x") {
        if !body.contains('p') {
            return None;
        }
        return parse_go_float(s);
    }
    let plain: String;
    let s = if s.contains('_') {
        if !underscores_ok(s) {
            return None;
        }
        plain = s.replace('_', "");
        plain.as_str()
    } else {
        s
    };
    let body = body.replace('_', "");
    if body.is_empty()
        || !body
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | '+' | '-'))
    {
        return None;
    }
    // Out of range: Go returns ±Inf with ErrRange, which callers take as failure.
    s.parse::<f64>().ok().filter(|f| f.is_finite())
}

/// Go's underscoreOK: an underscore only between digits, or between a base
/// prefix and a digit.
fn underscores_ok(s: &str) -> bool {
    let b = s.strip_prefix(['+', '-']).unwrap_or(s).as_bytes();
    let (mut saw, mut i, mut hex) = (b'^', 0, false);
    if b.len() >= 2 && b[0] == b'0' && matches!(b[1].to_ascii_lowercase(), b'b' | b'o' | b'x') {
        (i, saw, hex) = (2, b'0', b[1].to_ascii_lowercase() == b'x');
    }
    for &c in &b[i..] {
        if c.is_ascii_digit() || (hex && c.is_ascii_hexdigit()) {
            saw = b'0';
        } else if c == b'_' {
            if saw != b'0' {
                return false;
            }
            saw = b'_';
        } else if saw == b'_' {
            return false;
        } else {
            saw = b'!';
        }
    }
    saw != b'_'
}

/// Go's strconv.Atoi.
pub fn atoi(s: &str) -> Option<i64> {
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    if body.is_empty() || !body.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse::<i64>().ok()
}
