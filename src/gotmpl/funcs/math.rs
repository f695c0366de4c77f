//! Sprig's integer and float math and type conversions.

use super::cast::{atoi, to_float64, to_int64};
use super::{arg_int, Registry, P};
use crate::gotmpl::format::format_v;
use crate::value::{ListKind, Value};
use std::rc::Rc;

const DIV_ZERO: &str = "runtime error: integer divide by zero";

pub fn register(r: &mut Registry) {
    use P::*;
    r.add("add", &[], Some(Any), |_, a| {
        Ok(Value::Int64(
            a.iter().map(to_int64).fold(0i64, |x, y| x.wrapping_add(y)),
        ))
    });
    r.add("add1", &[Any], None, |_, a| {
        Ok(Value::Int64(to_int64(&a[0]).wrapping_add(1)))
    });
    r.add("sub", &[Any, Any], None, |_, a| {
        Ok(Value::Int64(to_int64(&a[0]).wrapping_sub(to_int64(&a[1]))))
    });
    r.add("div", &[Any, Any], None, |_, a| {
        let d = to_int64(&a[1]);
        if d == 0 {
            return Err(DIV_ZERO.into());
        }
        Ok(Value::Int64(to_int64(&a[0]).wrapping_div(d)))
    });
    r.add("mod", &[Any, Any], None, |_, a| {
        let d = to_int64(&a[1]);
        if d == 0 {
            return Err(DIV_ZERO.into());
        }
        Ok(Value::Int64(to_int64(&a[0]).wrapping_rem(d)))
    });
    r.add("mul", &[Any], Some(Any), |_, a| {
        Ok(Value::Int64(
            a.iter().map(to_int64).fold(1i64, |x, y| x.wrapping_mul(y)),
        ))
    });
    r.add("max", &[Any], Some(Any), |_, a| {
        Ok(Value::Int64(a.iter().map(to_int64).max().unwrap()))
    });
    r.alias("biggest", "max");
    r.add("min", &[Any], Some(Any), |_, a| {
        Ok(Value::Int64(a.iter().map(to_int64).min().unwrap()))
    });
    r.add("maxf", &[Any], Some(Any), |_, a| {
        Ok(Value::Float(
            a.iter().map(to_float64).fold(f64::NEG_INFINITY, go_max),
        ))
    });
    r.add("minf", &[Any], Some(Any), |_, a| {
        Ok(Value::Float(
            a.iter().map(to_float64).fold(f64::INFINITY, go_min),
        ))
    });
    r.add("randInt", &[Int, Int], None, |_, a| {
        use rand::Rng;
        let (lo, hi) = (arg_int(&a[0]), arg_int(&a[1]));
        if hi - lo <= 0 {
            return Err("invalid argument to Intn".into());
        }
        Ok(Value::Int(rand::thread_rng().gen_range(0..hi - lo) + lo))
    });
    r.add("add1f", &[Any], None, |_, a| {
        Ok(Value::Float(dec_op(to_float64(&a[0]), 1.0, '+')))
    });
    r.add("addf", &[], Some(Any), |_, a| {
        Ok(Value::Float(
            a.iter().map(to_float64).fold(0.0, |x, y| dec_op(x, y, '+')),
        ))
    });
    r.add("subf", &[Any], Some(Any), |_, a| {
        Ok(Value::Float(fold_dec(&a, '-')))
    });
    r.add("mulf", &[Any], Some(Any), |_, a| {
        Ok(Value::Float(fold_dec(&a, '*')))
    });
    r.add("divf", &[Any], Some(Any), |_, a| {
        if a[1..].iter().any(|v| to_float64(v) == 0.0) {
            return Err("decimal division by 0".into());
        }
        Ok(Value::Float(fold_dec(&a, '/')))
    });
    r.add("ceil", &[Any], None, |_, a| {
        Ok(Value::Float(to_float64(&a[0]).ceil()))
    });
    r.add("floor", &[Any], None, |_, a| {
        Ok(Value::Float(to_float64(&a[0]).floor()))
    });
    r.add("round", &[Any, Int], Some(Float), |_, a| {
        let round_on = a.get(2).map(to_float64).unwrap_or(0.5);
        let val = to_float64(&a[0]);
        let pow = 10f64.powf(arg_int(&a[1]) as f64);
        let digit = pow * val;
        let frac = digit.fract();
        let r = if frac >= round_on {
            digit.ceil()
        } else {
            digit.floor()
        };
        Ok(Value::Float(r / pow))
    });
    r.add("until", &[Int], None, |_, a| {
        let n = arg_int(&a[0]);
        Ok(int_list(until_step(0, n, if n < 0 { -1 } else { 1 })))
    });
    r.add("untilStep", &[Int, Int, Int], None, |_, a| {
        Ok(int_list(until_step(
            arg_int(&a[0]),
            arg_int(&a[1]),
            arg_int(&a[2]),
        )))
    });
    r.add("seq", &[], Some(Int), |_, a| {
        Ok(Value::string(seq(&a
            .iter()
            .map(arg_int)
            .collect::<Vec<_>>())))
    });
    r.add("atoi", &[Str], None, |_, a| {
        // Sprig ignores Atoi's error, and out of range Atoi returns the
        // nearest int with it.
        let text = a[0].as_str().unwrap_or("");
        let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
        let value = atoi(text).unwrap_or_else(|| {
            match !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
                true if text.starts_with('-') => i64::MIN,
                true => i64::MAX,
                false => 0,
            }
        });
        Ok(Value::Int(value))
    });
    r.add("int64", &[Any], None, |_, a| {
        Ok(Value::Int64(to_int64(&a[0])))
    });
    r.add("int", &[Any], None, |_, a| Ok(Value::Int(to_int64(&a[0]))));
    r.add("float64", &[Any], None, |_, a| {
        Ok(Value::Float(to_float64(&a[0])))
    });
    r.add("toDecimal", &[Any], None, |_, a| {
        let s = format_v(&a[0]);
        let (neg, body) = match s.strip_prefix('-') {
            Some(b) => (true, b),
            None => (false, s.strip_prefix('+').unwrap_or(&s)),
        };
        let v = i64::from_str_radix(body, 8)
            .map(|v| if neg { -v } else { v })
            .unwrap_or(0);
        Ok(Value::Int64(if body.is_empty() { 0 } else { v }))
    });
}

fn go_max(x: f64, y: f64) -> f64 {
    if x.is_nan() || y.is_nan() {
        f64::NAN
    } else {
        x.max(y)
    }
}

fn go_min(x: f64, y: f64) -> f64 {
    if x.is_nan() || y.is_nan() {
        f64::NAN
    } else {
        x.min(y)
    }
}

fn int_list(v: Vec<i64>) -> Value {
    Value::List(
        Rc::new(v.into_iter().map(Value::Int).collect()),
        ListKind::Int,
    )
}

pub fn until_step(start: i64, stop: i64, step: i64) -> Vec<i64> {
    let mut v = Vec::new();
    if stop < start {
        if step >= 0 {
            return v;
        }
        let mut i = start;
        while i > stop {
            v.push(i);
            i += step;
        }
        return v;
    }
    if step <= 0 {
        return v;
    }
    let mut i = start;
    while i < stop {
        v.push(i);
        i += step;
    }
    v
}

fn seq(p: &[i64]) -> String {
    let join = |v: Vec<i64>| {
        v.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(" ")
    };
    match p.len() {
        1 => {
            let (start, end) = (1, p[0]);
            let inc = if end < start { -1 } else { 1 };
            join(until_step(start, end + inc, inc))
        }
        2 => {
            let (start, end) = (p[0], p[1]);
            let step = if end < start { -1 } else { 1 };
            join(until_step(start, end + step, step))
        }
        3 => {
            let (start, step, end) = (p[0], p[1], p[2]);
            let mut inc = 1;
            if end < start {
                inc = -1;
                if step > 0 {
                    return String::new();
                }
            }
            join(until_step(start, end + inc, step))
        }
        _ => String::new(),
    }
}

// ---- decimal arithmetic (shopspring/decimal as Sprig uses it) ----

/// Exact decimal: mantissa * 10^exp.
#[derive(Clone, Copy, Debug)]
struct Dec {
    m: i128,
    e: i32,
}

fn to_dec(f: f64) -> Option<Dec> {
    if !f.is_finite() {
        return None;
    }
    let (neg, digits, x) = crate::value::float::shortest_digits(f);
    if digits.len() > 30 {
        return None;
    }
    let m: i128 = digits.parse().ok()?;
    let e = x - (digits.len() as i32 - 1);
    Some(Dec {
        m: if neg { -m } else { m },
        e,
    })
}

fn align(a: Dec, b: Dec) -> Option<(i128, i128, i32)> {
    let e = a.e.min(b.e);
    let sa = 10i128.checked_pow((a.e - e) as u32)?;
    let sb = 10i128.checked_pow((b.e - e) as u32)?;
    Some((a.m.checked_mul(sa)?, b.m.checked_mul(sb)?, e))
}

fn dec_to_f64(d: Dec) -> f64 {
    format!("{}e{}", d.m, d.e).parse().unwrap_or(f64::NAN)
}

fn dec_op(x: f64, y: f64, op: char) -> f64 {
    let fallback = || match op {
        '+' => x + y,
        '-' => x - y,
        '*' => x * y,
        _ => x / y,
    };
    let (Some(a), Some(b)) = (to_dec(x), to_dec(y)) else {
        return fallback();
    };
    let r = match op {
        '+' | '-' => align(a, b).and_then(|(ma, mb, e)| {
            let m = if op == '+' {
                ma.checked_add(mb)?
            } else {
                ma.checked_sub(mb)?
            };
            Some(Dec { m, e })
        }),
        '*' => a.m.checked_mul(b.m).map(|m| Dec { m, e: a.e + b.e }),
        _ => {
            // shopspring: DivisionPrecision = 16 digits after the point.
            let prec = 16;
            let num = Dec { m: a.m, e: a.e };
            let shift = (num.e - b.e + prec) as u32;
            let scaled = 10i128.checked_pow(shift).and_then(|p| num.m.checked_mul(p));
            scaled.map(|n| {
                let q = n / b.m;
                let rem = n % b.m;
                // round half away from zero on the next digit
                let q = if (rem.abs() * 2) >= b.m.abs() {
                    q + q.signum().max(if (n < 0) != (b.m < 0) { -1 } else { 1 }) * 1
                } else {
                    q
                };
                Dec { m: q, e: -prec }
            })
        }
    };
    match r {
        Some(d) => dec_to_f64(d),
        None => fallback(),
    }
}

fn fold_dec(a: &[Value], op: char) -> f64 {
    let mut acc = to_float64(&a[0]);
    for v in &a[1..] {
        acc = dec_op(acc, to_float64(v), op);
    }
    acc
}
