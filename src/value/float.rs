//! Go's shortest float formatting (`strconv.FormatFloat` with precision
//! -1): what `%v`, YAML and JSON print for a number.

/// `strconv.FormatFloat(f, 'g', -1, 64)`.
pub fn format_float_g(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    let (neg, digits, exp) = shortest_digits(f);
    let x = exp; // decimal exponent of d.ddd form
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    if x < -4 || x >= 6 {
        out.push_str(&sci(&digits, x));
    } else {
        out.push_str(&fixed(&digits, x));
    }
    out
}

/// Shortest round-trip decimal digits of |f| and the decimal exponent of
/// the first digit (value = 0.d1d2.. * 10^(exp+1)).
pub fn shortest_digits(f: f64) -> (bool, String, i32) {
    let neg = f.is_sign_negative();
    let a = f.abs();
    if a == 0.0 {
        return (neg, "0".into(), 0);
    }
    let s = format!("{:e}", a);
    let (m, e) = s.split_once('e').unwrap();
    let exp: i32 = e.parse().unwrap();
    let digits: String = m.chars().filter(|c| *c != '.').collect();
    (neg, digits, exp)
}

pub(crate) fn sci(digits: &str, x: i32) -> String {
    let mut s = String::new();
    s.push_str(&digits[..1]);
    if digits.len() > 1 {
        s.push('.');
        s.push_str(&digits[1..]);
    }
    s.push('e');
    s.push(if x < 0 { '-' } else { '+' });
    let ax = x.abs();
    if ax < 10 {
        s.push('0');
    }
    s.push_str(&ax.to_string());
    s
}

pub(crate) fn fixed(digits: &str, x: i32) -> String {
    let nd = digits.len() as i32;
    if x < 0 {
        let mut s = String::from("0.");
        for _ in 0..(-x - 1) {
            s.push('0');
        }
        s.push_str(digits);
        s
    } else if x + 1 >= nd {
        let mut s = digits.to_string();
        for _ in 0..(x + 1 - nd) {
            s.push('0');
        }
        s
    } else {
        format!(
            "{}.{}",
            &digits[..(x + 1) as usize],
            &digits[(x + 1) as usize..]
        )
    }
}

/// `strconv.FormatFloat(f, 'e', -1, 64)`.
pub fn format_e_shortest(f: f64) -> String {
    let (neg, digits, x) = shortest_digits(f);
    let s = sci(&digits, x);
    if neg {
        format!("-{s}")
    } else {
        s
    }
}

/// Plain decimal text of `digits` with decimal exponent `x` of the first digit.
pub fn fixed_digits(digits: &str, x: i32) -> String {
    fixed(digits, x)
}

/// Go's %g formatting of a float32 value (shortest float32 digits).
pub fn format_float32_g(f: f32) -> String {
    if f == 0.0 {
        return if f.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let s = format!("{:e}", f.abs());
    let (m, e) = s.split_once('e').unwrap();
    let x: i32 = e.parse().unwrap();
    let digits: String = m.chars().filter(|c| *c != '.').collect();
    let body = if x < -4 || x >= 6 {
        sci(&digits, x)
    } else {
        fixed(&digits, x)
    };
    if f < 0.0 {
        format!("-{body}")
    } else {
        body
    }
}
