//! Go's `fmt` as templates observe it: `%v` printing of values, `%q`
//! quoting, shortest float formatting, and `Sprintf` with its verbs, flags
//! and error markers (`%!d(float64=42)`).

pub use crate::value::float::*;
pub use crate::value::quote::*;
use crate::value::Value;

/// `%v` formatting of a value as Go's fmt does it, nil printing `<nil>`.
pub fn format_v(v: &Value) -> String {
    let mut s = String::new();
    write_v(&mut s, v, false);
    s
}

/// `%+v` (same as %v for the data Helm has, except structs).
pub fn write_v(out: &mut String, v: &Value, _plus: bool) {
    match v {
        Value::Nil => out.push_str("<nil>"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) | Value::Int64(i) => out.push_str(&i.to_string()),
        Value::Uint64(u) => out.push_str(&u.to_string()),
        Value::Uint8(u) => out.push_str(&u.to_string()),
        Value::Uint32(u) => out.push_str(&u.to_string()),
        Value::Float(f) => out.push_str(&format_float_g(*f)),
        Value::Str(s) => out.push_str(s),
        Value::Bytes(b) => {
            out.push('[');
            for (i, x) in b.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(&x.to_string());
            }
            out.push(']');
        }
        Value::List(l, _) => {
            out.push('[');
            for (i, x) in l.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                write_v(out, x, _plus);
            }
            out.push(']');
        }
        Value::Map(m, _) => {
            out.push_str("map[");
            for (i, (k, x)) in m.borrow().iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(k);
                out.push(':');
                write_v(out, x, _plus);
            }
            out.push(']');
        }
        Value::Object(o) => out.push_str(&o.format()),
    }
}

/// Go `fmt.Sprint`: spaces between operands when neither is a string.
pub fn sprint(args: &[Value]) -> String {
    let mut out = String::new();
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            let prev_str = matches!(args[i - 1], Value::Str(_));
            let this_str = matches!(a, Value::Str(_));
            if !prev_str && !this_str {
                out.push(' ');
            }
        }
        write_v(&mut out, a, false);
    }
    out
}

/// Go `fmt.Sprintln`.
pub fn sprintln(args: &[Value]) -> String {
    let mut out = String::new();
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        write_v(&mut out, a, false);
    }
    out.push('\n');
    out
}

#[derive(Default, Clone, Copy)]
struct Flags {
    minus: bool,
    plus: bool,
    sharp: bool,
    space: bool,
    zero: bool,
    width: Option<usize>,
    prec: Option<usize>,
}

fn pad(out: &mut String, s: &str, f: &Flags) {
    let n = s.chars().count();
    let w = f.width.unwrap_or(0);
    if n >= w {
        out.push_str(s);
        return;
    }
    let fill = w - n;
    if f.minus {
        out.push_str(s);
        out.extend(std::iter::repeat(' ').take(fill));
    } else if f.zero {
        // zero padding goes after the sign
        let (sign, rest) = if s.starts_with(['-', '+', ' ']) {
            s.split_at(1)
        } else {
            ("", s)
        };
        out.push_str(sign);
        out.extend(std::iter::repeat('0').take(fill));
        out.push_str(rest);
    } else {
        out.extend(std::iter::repeat(' ').take(fill));
        out.push_str(s);
    }
}

fn bad_verb(out: &mut String, verb: char, v: &Value) {
    bad_verb_flags(out, verb, v, &Flags::default())
}

/// fmt's badVerb: the operand printed with %v and the flags in effect.
fn bad_verb_flags(out: &mut String, verb: char, v: &Value, f: &Flags) {
    out.push_str("%!");
    out.push(verb);
    out.push('(');
    match v {
        Value::Nil => out.push_str("<nil>"),
        _ => {
            out.push_str(&v.type_name());
            out.push('=');
            if f.prec.is_some() || f.width.is_some() {
                fmt_arg(out, v, 'v', f);
            } else {
                write_v(out, v, false);
            }
        }
    }
    out.push(')');
}

fn fmt_int(out: &mut String, neg: bool, mag: u128, verb: char, f: &Flags) {
    let mut digits = match verb {
        'd' | 'v' => mag.to_string(),
        'x' => format!("{:x}", mag),
        'X' => format!("{:X}", mag),
        'o' | 'O' => format!("{:o}", mag),
        'b' => format!("{:b}", mag),
        _ => mag.to_string(),
    };
    if let Some(p) = f.prec {
        if p == 0 && mag == 0 {
            digits.clear();
        }
        while digits.len() < p {
            digits.insert(0, '0');
        }
    }
    let prefix = match verb {
        'x' if f.sharp => "0x",
        'X' if f.sharp => "0X",
        'o' if f.sharp && !digits.starts_with('0') => "0",
        'O' => "0o",
        'b' if f.sharp => "0b",
        _ => "",
    };
    let sign = if neg {
        "-"
    } else if f.plus {
        "+"
    } else if f.space {
        " "
    } else {
        ""
    };
    let body = format!("{sign}{prefix}{digits}");
    let mut ff = *f;
    if f.prec.is_some() {
        ff.zero = false;
    }
    pad(out, &body, &ff);
}

fn fmt_float(out: &mut String, x: f64, verb: char, f: &Flags) {
    let mut s = match verb {
        'v' | 'g' | 'G' => match f.prec {
            None => format_float_g(x),
            Some(p) => format_g_prec(x, p.max(1)),
        },
        'f' | 'F' => {
            if x.is_infinite() || x.is_nan() {
                format_float_g(x)
            } else {
                format!("{:.*}", f.prec.unwrap_or(6), x)
            }
        }
        'e' | 'E' => format_e(x, f.prec.unwrap_or(6)),
        _ => format_float_g(x),
    };
    if verb == 'G' || verb == 'E' {
        s = s.to_uppercase();
    }
    if f.plus && !s.starts_with('-') && !s.starts_with('+') {
        s.insert(0, '+');
    } else if f.space && !s.starts_with('-') {
        s.insert(0, ' ');
    }
    if s == "+Inf" && !f.plus {
        s = "+Inf".into();
    }
    pad(out, &s, f);
}

pub fn format_e(x: f64, prec: usize) -> String {
    if x.is_infinite() || x.is_nan() {
        return format_float_g(x);
    }
    let s = format!("{:.*e}", prec, x);
    let (m, e) = s.split_once('e').unwrap();
    let exp: i32 = e.parse().unwrap();
    format!("{}e{}{:02}", m, if exp < 0 { '-' } else { '+' }, exp.abs())
}

fn format_g_prec(x: f64, p: usize) -> String {
    if x == 0.0 {
        return "0".into();
    }
    if x.is_infinite() || x.is_nan() {
        return format_float_g(x);
    }
    let s = format!("{:.*e}", p - 1, x);
    let (m, e) = s.split_once('e').unwrap();
    let exp: i32 = e.parse().unwrap();
    let neg = m.starts_with('-');
    let digits: String = m.chars().filter(|c| c.is_ascii_digit()).collect();
    let digits = digits.trim_end_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    let mut eprec = p as i32;
    if eprec > digits.len() as i32 && digits.len() as i32 >= exp + 1 {
        eprec = digits.len() as i32;
    }
    let body = if exp < -4 || exp >= eprec {
        sci(digits, exp)
    } else {
        fixed(digits, exp)
    };
    if neg {
        format!("-{body}")
    } else {
        body
    }
}

/// Go `fmt.Sprintf`.
pub fn sprintf(format: &str, args: &[Value]) -> String {
    // Go's fmt.(*pp).doPrintf, explicit argument indexes included.
    const TOO_LARGE: usize = 1_000_000;
    fn parsenum(c: &[char], start: usize, end: usize) -> (usize, bool, usize) {
        if start >= end {
            return (0, false, end);
        }
        let (mut num, mut isnum, mut i) = (0usize, false, start);
        while i < end && c[i].is_ascii_digit() {
            if num > TOO_LARGE {
                return (0, false, end);
            }
            num = num * 10 + (c[i] as usize - '0' as usize);
            isnum = true;
            i += 1;
        }
        (num, isnum, i)
    }
    // parseArgNumber: `[n]` at i; (index, width consumed, ok).
    fn parse_arg_number(c: &[char], i: usize) -> (isize, usize, bool) {
        if c.len() - i < 3 {
            return (0, 1, false);
        }
        for j in i + 1..c.len() {
            if c[j] == ']' {
                let (w, ok, newi) = parsenum(c, i + 1, j);
                if !ok || newi != j {
                    return (0, j - i + 1, false);
                }
                return (w as isize - 1, j - i + 1, true);
            }
        }
        (0, 1, false)
    }
    fn int_from_arg(args: &[Value], n: usize) -> (i64, bool, usize) {
        if n >= args.len() {
            return (0, false, n);
        }
        let v = match &args[n] {
            Value::Int(x) | Value::Int64(x) => Some(*x),
            Value::Uint8(x) => Some(*x as i64),
            Value::Uint32(x) => Some(*x as i64),
            Value::Uint64(x) if *x <= i64::MAX as u64 => Some(*x as i64),
            _ => None,
        };
        match v {
            Some(x) if x.unsigned_abs() <= TOO_LARGE as u64 => (x, true, n + 1),
            _ => (0, false, n + 1),
        }
    }
    let mut out = String::new();
    let c: Vec<char> = format.chars().collect();
    let end = c.len();
    let mut arg_num = 0usize;
    let mut reordered = false;
    let mut i = 0;
    while i < end {
        let mut good = true;
        let last = i;
        while i < end && c[i] != '%' {
            i += 1;
        }
        if i > last {
            out.extend(&c[last..i]);
        }
        if i >= end {
            break;
        }
        i += 1;
        let mut f = Flags::default();
        while i < end {
            match c[i] {
                '#' => f.sharp = true,
                '0' => f.zero = !f.minus,
                '+' => f.plus = true,
                '-' => {
                    f.minus = true;
                    f.zero = false
                }
                ' ' => f.space = true,
                _ => break,
            }
            i += 1;
        }
        let mut after_index;
        // argNumber
        let mut arg_number = |i: &mut usize, arg_num: &mut usize, good: &mut bool| -> bool {
            if *i >= end || c[*i] != '[' {
                return false;
            }
            reordered = true;
            let (index, wid, ok) = parse_arg_number(&c, *i);
            *i += wid;
            if ok && index >= 0 && (index as usize) < args.len() {
                *arg_num = index as usize;
                return true;
            }
            *good = false;
            ok
        };
        after_index = arg_number(&mut i, &mut arg_num, &mut good);
        if i < end && c[i] == '*' {
            i += 1;
            let (w, ok, n) = int_from_arg(args, arg_num);
            arg_num = n;
            if !ok {
                out.push_str("%!(BADWIDTH)");
            } else if w < 0 {
                f.minus = true;
                f.zero = false;
                f.width = Some(w.unsigned_abs() as usize);
            } else {
                f.width = Some(w as usize);
            }
            after_index = false;
        } else {
            let (w, present, ni) = parsenum(&c, i, end);
            i = ni;
            if present {
                f.width = Some(w);
                if after_index {
                    good = false;
                }
            }
        }
        if i + 1 < end && c[i] == '.' {
            i += 1;
            if after_index {
                good = false;
            }
            after_index = arg_number(&mut i, &mut arg_num, &mut good);
            if i < end && c[i] == '*' {
                i += 1;
                let (p, ok, n) = int_from_arg(args, arg_num);
                arg_num = n;
                if ok && p >= 0 {
                    f.prec = Some(p as usize);
                } else {
                    out.push_str("%!(BADPREC)");
                    f.prec = None;
                }
                after_index = false;
            } else {
                let (p, present, ni) = parsenum(&c, i, end);
                i = ni;
                f.prec = Some(if present { p } else { 0 });
            }
        }
        if !after_index {
            arg_number(&mut i, &mut arg_num, &mut good);
        }
        if i >= end {
            out.push_str("%!(NOVERB)");
            break;
        }
        let verb = c[i];
        i += 1;
        if verb == '%' {
            out.push('%');
            continue;
        }
        if !good {
            out.push_str(&format!("%!{verb}(BADINDEX)"));
            continue;
        }
        let Some(arg) = args.get(arg_num) else {
            out.push_str(&format!("%!{verb}(MISSING)"));
            continue;
        };
        if verb == 'v' {
            // %+v only changes struct printing; it is not a sign flag.
            f.plus = false;
        }
        arg_num += 1;
        fmt_arg(&mut out, arg, verb, &f);
    }
    if !reordered && arg_num < args.len() {
        out.push_str("%!(EXTRA ");
        for (k, a) in args[arg_num..].iter().enumerate() {
            if k > 0 {
                out.push_str(", ");
            }
            match a {
                Value::Nil => out.push_str("<nil>"),
                _ => {
                    out.push_str(&a.type_name());
                    out.push('=');
                    write_v(&mut out, a, false);
                }
            }
        }
        out.push(')');
    }
    out
}

/// strconv.FormatFloat(x, 'x', prec, 64): `0x1.cp+01`.
fn hex_float(x: f64, prec: Option<usize>) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    let sign = if x.is_sign_negative() { "-" } else { "" };
    let bits = x.abs().to_bits();
    let (mut mant, mut exp) = (
        (bits & ((1 << 52) - 1)) as u128,
        ((bits >> 52) & 0x7ff) as i64,
    );
    if exp == 0 && mant == 0 {
        let zeros = prec
            .filter(|p| *p > 0)
            .map(|p| format!(".{}", "0".repeat(p)))
            .unwrap_or_default();
        return format!("{sign}0x0{zeros}p+00");
    }
    if exp == 0 {
        // Subnormal: normalise so the leading digit is 1.
        exp = -1022;
        while mant & (1 << 52) == 0 {
            mant <<= 1;
            exp -= 1;
        }
        mant &= (1 << 52) - 1;
    } else {
        exp -= 1023;
    }
    // 52 fraction bits are 13 hex digits.
    let mut lead = 1u128;
    let mut digits = format!("{mant:013x}");
    if let Some(p) = prec {
        if p < 13 {
            let drop = (13 - p) * 4;
            let full = (1u128 << 52) | mant;
            let half = 1u128 << (drop - 1);
            let rem = full & ((1u128 << drop) - 1);
            let mut kept = full >> drop;
            if rem > half || (rem == half && kept & 1 == 1) {
                kept += 1;
            }
            if kept >> (p * 4) >= 2 {
                kept >>= 1;
                exp += 1;
            }
            lead = kept >> (p * 4);
            digits = if p == 0 {
                String::new()
            } else {
                format!("{:0w$x}", kept & ((1u128 << (p * 4)) - 1), w = p)
            };
        } else {
            digits.push_str(&"0".repeat(p - 13));
        }
    } else {
        digits = digits.trim_end_matches('0').to_string();
    }
    let frac = if digits.is_empty() {
        String::new()
    } else {
        format!(".{digits}")
    };
    let esign = if exp < 0 { '-' } else { '+' };
    format!("{sign}0x{lead}{frac}p{esign}{:02}", exp.abs())
}

/// `%#v` of a slice or map: Go syntax, `[]interface {}{1, "a"}`.
fn go_syntax(out: &mut String, v: &Value, inside: bool) {
    match v {
        Value::Nil if inside => out.push_str("interface {}(nil)"),
        Value::Str(s) => out.push_str(&quote_go(s)),
        Value::List(l, _) => {
            out.push_str(&v.type_name());
            out.push('{');
            for (i, x) in l.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                go_syntax(out, x, true);
            }
            out.push('}');
        }
        Value::Map(m, _) => {
            out.push_str(&v.type_name());
            out.push('{');
            for (i, (k, x)) in m.borrow().iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&quote_go(k));
                out.push(':');
                go_syntax(out, x, true);
            }
            out.push('}');
        }
        other => write_v(out, other, false),
    }
}

fn fmt_arg(out: &mut String, arg: &Value, verb: char, f: &Flags) {
    if verb == 'T' {
        pad(out, &arg.type_name(), f);
        return;
    }
    if verb == 'v' && f.sharp && matches!(arg, Value::List(..) | Value::Map(..)) {
        let mut s = String::new();
        go_syntax(&mut s, arg, false);
        pad(out, &s, f);
        return;
    }
    match arg {
        Value::Nil => match verb {
            'v' => pad(out, "<nil>", f),
            _ => bad_verb(out, verb, arg),
        },
        Value::Bool(b) => match verb {
            'v' | 't' => pad(out, if *b { "true" } else { "false" }, f),
            _ => bad_verb(out, verb, arg),
        },
        Value::Int(n) | Value::Int64(n) => {
            fmt_integer(out, arg, *n < 0, (*n as i128).unsigned_abs(), verb, f)
        }
        Value::Uint64(n) => fmt_integer(out, arg, false, *n as u128, verb, f),
        Value::Uint8(n) => fmt_integer(out, arg, false, *n as u128, verb, f),
        Value::Uint32(n) => fmt_integer(out, arg, false, *n as u128, verb, f),
        Value::Float(x) => match verb {
            'v' | 'g' | 'G' | 'f' | 'F' | 'e' | 'E' => fmt_float(out, *x, verb, f),
            'x' | 'X' => {
                let mut h = hex_float(*x, f.prec);
                if f.plus && !h.starts_with('-') && !h.starts_with('+') {
                    h.insert(0, '+');
                }
                if verb == 'X' {
                    h = h.to_uppercase();
                }
                pad(out, &h, f)
            }
            'b' => bad_verb(out, verb, arg),
            _ => bad_verb(out, verb, arg),
        },
        Value::Str(s) => fmt_string(out, &crate::value::gostr::to_bytes(s), verb, f, arg),
        Value::Bytes(b) => match verb {
            's' | 'q' | 'x' | 'X' => fmt_string(out, b, verb, f, arg),
            _ => {
                let mut s = String::new();
                s.push('[');
                for (i, x) in b.iter().enumerate() {
                    if i > 0 {
                        s.push(' ');
                    }
                    let mut tmp = String::new();
                    fmt_integer(
                        &mut tmp,
                        &Value::Uint8(*x),
                        false,
                        *x as u128,
                        verb,
                        &Flags::default(),
                    );
                    s.push_str(&tmp);
                }
                s.push(']');
                pad(out, &s, f);
            }
        },
        Value::List(l, _) => {
            let mut s = String::from("[");
            for (i, x) in l.iter().enumerate() {
                if i > 0 {
                    s.push(' ');
                }
                // printValue: a nil interface inside a slice is <nil> for every verb.
                if x.is_nil() {
                    s.push_str("<nil>");
                    continue;
                }
                fmt_arg(&mut s, x, verb, &Flags { width: None, ..*f });
            }
            s.push(']');
            pad(out, &s, &Flags { width: None, ..*f });
        }
        Value::Map(m, _) => {
            let mut s = String::from("map[");
            for (i, (k, x)) in m.borrow().iter().enumerate() {
                if i > 0 {
                    s.push(' ');
                }
                fmt_arg(&mut s, &Value::str(k), verb, &Flags { width: None, ..*f });
                s.push(':');
                if x.is_nil() {
                    s.push_str("<nil>");
                    continue;
                }
                fmt_arg(&mut s, x, verb, &Flags { width: None, ..*f });
            }
            s.push(']');
            out.push_str(&s);
        }
        Value::Object(o) => match verb {
            'v' | 's' => pad(out, &o.format(), f),
            'q' => pad(out, &quote_go(&o.format()), f),
            _ => bad_verb(out, verb, arg),
        },
    }
}

fn fmt_integer(out: &mut String, arg: &Value, neg: bool, mag: u128, verb: char, f: &Flags) {
    match verb {
        'v' | 'd' | 'x' | 'X' | 'o' | 'O' | 'b' => fmt_int(out, neg, mag, verb, f),
        'c' => pad(
            out,
            &char::from_u32(mag as u32).unwrap_or('\u{FFFD}').to_string(),
            f,
        ),
        'q' => pad(
            out,
            &quote_with(
                &char::from_u32(mag as u32).unwrap_or('\u{FFFD}').to_string(),
                '\'',
                false,
            ),
            f,
        ),
        'U' => pad(out, &format!("U+{:04X}", mag), f),
        // Go's fmt has no float verbs for integers: a bad verb, whose value
        // is printed with the verb's width and precision still in effect.
        'e' | 'E' | 'f' | 'F' | 'g' | 'G' => {
            out.push_str("%!");
            out.push(verb);
            out.push('(');
            out.push_str(&arg.type_name());
            out.push('=');
            fmt_int(out, neg, mag, 'v', f);
            out.push(')');
        }
        _ => bad_verb(out, verb, arg),
    }
}

fn fmt_string(out: &mut String, b: &[u8], verb: char, f: &Flags, arg: &Value) {
    let s = crate::value::gostr::from_bytes(b);
    match verb {
        'v' | 's' => {
            let s: String = match f.prec {
                Some(p) => s.chars().take(p).collect(),
                None => s.into_owned(),
            };
            pad(out, &s, f)
        }
        'q' => {
            // fmtQ: truncate to the precision (in runes) first.
            let s: std::borrow::Cow<str> = match f.prec {
                Some(p) => s.chars().take(p).collect::<String>().into(),
                None => s,
            };
            if f.sharp && can_backquote(&s) {
                pad(out, &format!("`{s}`"), f)
            } else {
                pad(out, &quote_with(&s, '"', f.plus), f)
            }
        }
        'x' | 'X' => {
            // fmtSbx: at most `prec` bytes; `#` adds 0x, before each byte under ` `.
            let n = f.prec.map_or(b.len(), |p| p.min(b.len()));
            if n == 0 {
                return pad(out, "", f);
            }
            let prefix = if verb == 'x' { "0x" } else { "0X" };
            let mut h = String::new();
            if f.sharp {
                h.push_str(prefix);
            }
            for (i, byte) in b[..n].iter().enumerate() {
                if f.space && i > 0 {
                    h.push(' ');
                    if f.sharp {
                        h.push_str(prefix);
                    }
                }
                if verb == 'x' {
                    h.push_str(&format!("{:02x}", byte));
                } else {
                    h.push_str(&format!("{:02X}", byte));
                }
            }
            pad(out, &h, f)
        }
        _ => bad_verb_flags(out, verb, arg, f),
    }
}

/// `Type(%v)`, as the engine's tests and errors print a value.
impl std::fmt::Debug for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}({})", self.type_name(), format_v(self))
    }
}
