//! go-yaml v2's implicit typing of plain scalars (YAML 1.1).

#[derive(Debug, Clone, PartialEq)]
pub enum Scalar {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    /// A string; also timestamps, which go-yaml v2 hands to `interface{}`
    /// targets as their text.
    Str(String),
    /// Text that resolves to a timestamp (kept as a string by the decoder,
    /// but it makes the encoder quote the string).
    Timestamp(String),
    Merge,
}

fn resolve_map(s: &str) -> Option<Scalar> {
    Some(match s {
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            Scalar::Bool(true)
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            Scalar::Bool(false)
        }
        "" | "~" | "null" | "Null" | "NULL" => Scalar::Null,
        ".nan" | ".NaN" | ".NAN" => Scalar::Float(f64::NAN),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => Scalar::Float(f64::INFINITY),
        "-.inf" | "-.Inf" | "-.INF" => Scalar::Float(f64::NEG_INFINITY),
        "<<" => Scalar::Merge,
        _ => return None,
    })
}

fn is_yaml_style_float(s: &str) -> bool {
    // ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let st = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - st
    };
    if i < b.len() && b[i] == b'.' {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if i < b.len() && b[i] == b'.' {
            i += 1;
            digits(&mut i);
        }
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// go-yaml v2's parseTimestamp: the layouts it accepts.
pub fn is_timestamp(s: &str) -> bool {
    // Quick check: digits-digits-digits at the start.
    let b = s.as_bytes();
    let mut i = 0;
    let num = |i: &mut usize, min: usize, max: usize| {
        let st = *i;
        while *i < b.len() && b[*i].is_ascii_digit() && *i - st < max {
            *i += 1;
        }
        *i - st >= min
    };
    if !num(&mut i, 4, 4) || i >= b.len() || b[i] != b'-' {
        return false;
    }
    i += 1;
    if !num(&mut i, 1, 2) || i >= b.len() || b[i] != b'-' {
        return false;
    }
    i += 1;
    if !num(&mut i, 1, 2) {
        return false;
    }
    if i == b.len() {
        return valid_date(s);
    }
    // Time part: [Tt ] h:m:s(.frac)?(Z|±hh:mm)? (the space form has no zone)
    let sep = b[i];
    if sep != b'T' && sep != b't' && sep != b' ' {
        return false;
    }
    i += 1;
    if !num(&mut i, 1, 2) || i >= b.len() || b[i] != b':' {
        return false;
    }
    i += 1;
    if !num(&mut i, 1, 2) || i >= b.len() || b[i] != b':' {
        return false;
    }
    i += 1;
    if !num(&mut i, 1, 2) {
        return false;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        if !num(&mut i, 1, 9) {
            return false;
        }
    }
    if i == b.len() {
        return valid_date(s);
    }
    if sep == b' ' {
        return false;
    }
    if b[i] == b'Z' {
        return i + 1 == b.len() && valid_date(s);
    }
    if b[i] == b'+' || b[i] == b'-' {
        i += 1;
        if !num(&mut i, 2, 2) || i >= b.len() || b[i] != b':' {
            return false;
        }
        i += 1;
        return num(&mut i, 2, 2) && i == b.len() && valid_date(s);
    }
    false
}

fn valid_date(s: &str) -> bool {
    let parts: Vec<&str> = s.splitn(3, '-').collect();
    if parts.len() < 3 {
        return false;
    }
    let y: i32 = parts[0].parse().unwrap_or(0);
    let m: u32 = parts[1].parse().unwrap_or(0);
    let dstr: String = parts[2]
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    let d: u32 = dstr.parse().unwrap_or(0);
    chrono::NaiveDate::from_ymd_opt(y, m, d).is_some()
}

/// Go's strconv.ParseInt(s, 0, 64) after underscores were removed.
fn parse_int0(s: &str) -> Option<i64> {
    crate::value::strconv::parse_go_int(s).filter(|_| !s.contains('_'))
}

fn parse_uint0(s: &str) -> Option<u64> {
    if s.starts_with(['+', '-']) {
        return None;
    }
    crate::value::strconv::parse_go_uint(s)
}

/// Resolve a plain scalar's text to its YAML 1.1 type.
pub fn resolve_plain(s: &str) -> Scalar {
    let hint = s.as_bytes().first().copied();
    let hint_kind = match hint {
        None => 'N',
        Some(b'+' | b'-') => 'S',
        Some(b'0'..=b'9') => 'D',
        Some(b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'o' | b'O' | b'~') => 'M',
        Some(b'.') => '.',
        Some(b'<') => 'M',
        _ => return Scalar::Str(s.to_string()),
    };
    if let Some(v) = resolve_map(s) {
        return v;
    }
    match hint_kind {
        '.' => {
            // strconv.ParseFloat refuses what overflows (ErrRange).
            if let Some(f) = crate::value::strconv::parse_float(s).filter(|f| f.is_finite()) {
                if is_yaml_style_float(s) || s.parse::<f64>().is_ok() {
                    return Scalar::Float(f);
                }
            }
        }
        'D' | 'S' => {
            if is_timestamp(s) {
                return Scalar::Timestamp(s.to_string());
            }
            let plain = s.replace('_', "");
            if let Some(i) = parse_int0(&plain) {
                return Scalar::Int(i);
            }
            if let Some(u) = parse_uint0(&plain) {
                return Scalar::Uint(u);
            }
            if is_yaml_style_float(&plain) {
                if let Ok(f) = plain.parse::<f64>() {
                    if f.is_finite() {
                        return Scalar::Float(f);
                    }
                }
            }
            if let Some(r) = plain.strip_prefix("0b") {
                if let Ok(i) = i64::from_str_radix(r, 2) {
                    return Scalar::Int(i);
                }
                if let Ok(u) = u64::from_str_radix(r, 2) {
                    return Scalar::Uint(u);
                }
            } else if let Some(r) = plain.strip_prefix("-0b") {
                if let Ok(i) = i64::from_str_radix(&format!("-{r}"), 2) {
                    return Scalar::Int(i);
                }
            }
        }
        _ => {}
    }
    Scalar::Str(s.to_string())
}

/// go-yaml v2's isBase60Float, which the encoder quotes for compatibility.
pub fn is_base60_float(s: &str) -> bool {
    // ^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$
    let b = s.as_bytes();
    if b.is_empty() {
        return false;
    }
    let c = b[0];
    if !(c == b'+' || c == b'-' || c.is_ascii_digit()) || !s.contains(':') {
        return false;
    }
    let mut i = 0;
    if b[i] == b'+' || b[i] == b'-' {
        i += 1;
    }
    if i >= b.len() || !b[i].is_ascii_digit() {
        return false;
    }
    i += 1;
    while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
        i += 1;
    }
    let mut groups = 0;
    while i < b.len() && b[i] == b':' {
        i += 1;
        let st = i;
        while i < b.len() && b[i].is_ascii_digit() && i - st < 2 {
            i += 1;
        }
        let n = i - st;
        if n == 0 {
            return false;
        }
        if n == 2 && b[st] > b'5' {
            return false;
        }
        groups += 1;
    }
    if groups == 0 {
        return false;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
            i += 1;
        }
    }
    i == b.len()
}
