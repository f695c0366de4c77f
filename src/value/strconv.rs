//! Go's number parsing (`strconv.ParseInt`/`ParseUint` with base 0,
//! `ParseFloat`), as templates and YAML's resolver both read numbers.

fn strip_underscores(s: &str) -> Option<String> {
    // Go only allows '_' between digits (or after a base prefix).
    if s.ends_with('_') || s.contains("__") {
        return None;
    }
    Some(s.replace('_', ""))
}

pub fn parse_go_uint(text: &str) -> Option<u64> {
    let s = text.strip_prefix('+').unwrap_or(text);
    if s.starts_with('-') || s.is_empty() {
        return None;
    }
    let (digits, radix) = if let Some(r) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        (r, 16)
    } else if let Some(r) = s.strip_prefix("0o").or_else(|| s.strip_prefix("0O")) {
        (r, 8)
    } else if let Some(r) = s.strip_prefix("0b").or_else(|| s.strip_prefix("0B")) {
        (r, 2)
    } else if s.len() > 1 && s.starts_with('0') {
        (&s[1..], 8)
    } else {
        (s, 10)
    };
    let digits = digits.strip_prefix('_').unwrap_or(digits);
    if digits.starts_with('_') {
        return None;
    }
    let d = strip_underscores(digits)?;
    if d.is_empty() {
        return None;
    }
    if radix == 10 && s.starts_with('_') {
        return None;
    }
    u64::from_str_radix(&d, radix).ok()
}

pub fn parse_go_int(text: &str) -> Option<i64> {
    let (neg, rest) = if let Some(r) = text.strip_prefix('-') {
        (true, r)
    } else {
        (false, text.strip_prefix('+').unwrap_or(text))
    };
    if rest.starts_with(['+', '-']) {
        return None;
    }
    let u = parse_go_uint(rest)?;
    if neg {
        if u <= i64::MAX as u64 + 1 {
            Some((u as i128).wrapping_neg() as i64)
        } else {
            None
        }
    } else if u <= i64::MAX as u64 {
        Some(u as i64)
    } else {
        None
    }
}

pub fn parse_go_float(text: &str) -> Option<f64> {
    let s = strip_underscores(text)?;
    let (neg, body) = if let Some(r) = s.strip_prefix('-') {
        (true, r.to_string())
    } else {
        (false, s.strip_prefix('+').unwrap_or(&s).to_string())
    };
    let v = if body.starts_with("0x") || body.starts_with("0X") {
        if !body.contains(['p', 'P']) || body.len() < 4 {
            return None;
        }
        parse_hex_float(&body[2..])?
    } else {
        if body.is_empty()
            || !body
                .chars()
                .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'))
        {
            return None;
        }
        body.parse::<f64>().ok()?
    };
    Some(if neg { -v } else { v })
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

fn parse_hex_float(s: &str) -> Option<f64> {
    let (mant, exp) = match s.find(['p', 'P']) {
        Some(i) => (&s[..i], s[i + 1..].parse::<i32>().ok()?),
        None => (s, 0),
    };
    let (ip, fp) = match mant.find('.') {
        Some(i) => (&mant[..i], &mant[i + 1..]),
        None => (mant, ""),
    };
    let mut v = 0f64;
    for c in ip.chars() {
        v = v * 16.0 + c.to_digit(16)? as f64;
    }
    let mut scale = 1.0 / 16.0;
    for c in fp.chars() {
        v += c.to_digit(16)? as f64 * scale;
        scale /= 16.0;
    }
    Some(v * 2f64.powi(exp))
}
