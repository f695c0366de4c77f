//! Sprig's date functions and a Go `time.Time` value with its location.
//! The process's own zone (Go's `time.Local`) is read as Go's initLocal
//! reads it: the TZif file `TZ` names (a path, or a name under the
//! system's zone directories) or, `TZ` unset, `/etc/localtime`
//! (`zoneinfo.rs`); named zones (`dateInZone`) are read as Go's
//! LoadLocation reads them, from `ZONEINFO` or the system's zone
//! directories. A zone Go cannot load is UTC, as Sprig falls back.

use super::{arg_str, Registry, P};
use crate::value::{MethodError, Object, Value};
use chrono::{
    DateTime, Datelike, Duration, FixedOffset, NaiveDate, NaiveDateTime, TimeZone, Timelike, Utc,
};
use std::rc::Rc;

/// A Go `time.Location`: the offset a new instant in it gets and the name
/// its times print for `MST`.
#[derive(Clone, Debug, PartialEq)]
pub enum Loc {
    Utc,
    /// `time.FixedZone(name, offset)`; an empty name prints as `-0700`.
    Fixed(Option<String>, i32),
    /// A zone read from a TZif file, as Go reads it: the process's zone or
    /// one `time.LoadLocation` found by name.
    File(std::sync::Arc<super::zoneinfo::Location>),
}

impl Loc {
    fn offset_at(&self, instant: &NaiveDateTime) -> i32 {
        match self {
            Loc::Utc => 0,
            Loc::Fixed(_, off) => *off,
            Loc::File(l) => l.lookup(instant.and_utc().timestamp()).offset,
        }
    }

    /// The zone's abbreviation at an instant, as Go's Format prints `MST`.
    fn name_at(&self, instant: &NaiveDateTime) -> String {
        match self {
            Loc::Utc => "UTC".into(),
            Loc::File(l) => l.lookup(instant.and_utc().timestamp()).name,
            Loc::Fixed(Some(name), _) if !name.is_empty() => name.clone(),
            Loc::Fixed(_, off) => {
                let (sign, m) = if *off < 0 {
                    ('-', -off / 60)
                } else {
                    ('+', off / 60)
                };
                format!("{sign}{:02}{:02}", m / 60, m % 60)
            }
        }
    }

    /// `time.LoadLocation`: "" and "UTC" are UTC, "Local" the process's zone.
    pub fn load(name: &str) -> Option<Loc> {
        match name {
            "" | "UTC" => Some(Loc::Utc),
            "Local" => Some(local()),
            _ => super::zoneinfo::load_named(name).map(Loc::File),
        }
    }
}

/// Go's initLocal over `TZ` (`None`: unset): UTC when nothing loads.
fn init_local(tz: Option<&str>) -> Loc {
    super::zoneinfo::init_local(tz).map_or(Loc::Utc, Loc::File)
}

/// The process's zone, from its own `TZ` (or `/etc/localtime`).
fn process_zone() -> Loc {
    let tz = std::env::var_os("TZ").map(|v| crate::value::gostr::from_vec(v.into_encoded_bytes()));
    init_local(tz.as_deref())
}

/// A stand-in for the process's `TZ`, set by tests that render as Helm
/// processes started with different zones would (one process, many zones).
static LOCAL_OVERRIDE: std::sync::RwLock<Option<Loc>> = std::sync::RwLock::new(None);

/// Go's `time.Local`.
pub fn local() -> Loc {
    static PROCESS: std::sync::OnceLock<Loc> = std::sync::OnceLock::new();
    let over = LOCAL_OVERRIDE
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    over.unwrap_or_else(|| PROCESS.get_or_init(process_zone).clone())
}

/// Renders from now on as if the process's `TZ` were `tz` (`None`: the
/// process's own zone again). Process-wide: for tests only.
pub fn set_local_zone(tz: Option<&str>) {
    let zone = tz.map(|tz| init_local(Some(tz)));
    *LOCAL_OVERRIDE.write().unwrap_or_else(|e| e.into_inner()) = zone;
}

#[derive(Clone, Debug)]
pub struct GoTime {
    pub t: DateTime<FixedOffset>,
    /// Set for `now`: Go prints the monotonic clock reading.
    pub monotonic: bool,
    pub loc: Loc,
}

impl GoTime {
    /// The instant `t` seen in `loc`.
    fn at(t: DateTime<FixedOffset>, loc: Loc) -> GoTime {
        let instant = t.naive_utc();
        let off = FixedOffset::east_opt(loc.offset_at(&instant)).expect("zone offset");
        GoTime {
            t: t.with_timezone(&off),
            monotonic: false,
            loc,
        }
    }

    fn zone_name(&self) -> String {
        self.loc.name_at(&self.t.naive_utc())
    }

    fn format_layout(&self, layout: &str) -> String {
        go_format_in(&self.t, layout, Some(&self.zone_name()))
    }
}

impl Object for GoTime {
    fn type_name(&self) -> String {
        "time.Time".into()
    }
    fn field(&self, _name: &str) -> Option<Value> {
        None
    }
    fn has_method(&self, name: &str) -> bool {
        matches!(name, "Unix" | "Year" | "Format" | "UTC" | "String")
    }
    fn call_method(&self, name: &str, args: Vec<Value>) -> Result<Value, MethodError> {
        match name {
            "Unix" => Ok(Value::Int64(self.t.timestamp())),
            "Year" => Ok(Value::Int(self.t.year() as i64)),
            "Format" => Ok(Value::string(
                self.format_layout(args.first().and_then(|v| v.as_str()).unwrap_or("")),
            )),
            "UTC" => Ok(time_value(GoTime::at(self.t, Loc::Utc))),
            "String" => Ok(Value::string(self.format())),
            _ => Err(MethodError::Unknown(name.to_string())),
        }
    }
    fn format(&self) -> String {
        let mut s = self.format_layout("2006-01-02 15:04:05.999999999 -0700 MST");
        if self.monotonic {
            s.push_str(" m=+0.000000001");
        }
        s
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn to_data(&self) -> Value {
        Value::string(go_format(&self.t, "2006-01-02T15:04:05.999999999Z07:00"))
    }
}

pub fn time_value(t: GoTime) -> Value {
    Value::Object(Rc::new(t))
}

fn now() -> GoTime {
    let mut t = GoTime::at(Utc::now().fixed_offset(), local());
    t.monotonic = true;
    t
}

fn as_time(v: &Value) -> Option<GoTime> {
    match v {
        Value::Object(o) => o.as_any().downcast_ref::<GoTime>().cloned(),
        _ => None,
    }
}

/// Sprig's `date` argument: time, or Unix seconds as int/int32/int64 (a
/// time in Local); any other value silently means now.
fn date_arg(v: &Value) -> GoTime {
    if let Some(t) = as_time(v) {
        return t;
    }
    match v {
        Value::Int(i) | Value::Int64(i) => Utc
            .timestamp_opt(*i, 0)
            .single()
            .map(|t| GoTime::at(t.fixed_offset(), local()))
            .unwrap_or_else(now),
        _ => now(),
    }
}

/// Sprig's dateInZone: `t.In(loc).Format(layout)`, UTC for a zone Go cannot load.
fn format_in_zone(layout: &str, t: &GoTime, zone: &str) -> String {
    GoTime::at(t.t, Loc::load(zone).unwrap_or(Loc::Utc)).format_layout(layout)
}

pub fn register(r: &mut Registry) {
    use P::*;
    r.add("now", &[], None, |_, _| Ok(time_value(now())));
    r.add("date", &[Str, Any], None, |_, a| {
        Ok(Value::string(format_in_zone(
            arg_str(&a[0]),
            &date_arg(&a[1]),
            "Local",
        )))
    });
    r.add("dateInZone", &[Str, Any, Str], None, |_, a| {
        Ok(Value::string(format_in_zone(
            arg_str(&a[0]),
            &date_arg(&a[1]),
            arg_str(&a[2]),
        )))
    });
    r.alias("date_in_zone", "dateInZone");
    r.add("htmlDate", &[Any], None, |_, a| {
        Ok(Value::string(format_in_zone(
            "2006-01-02",
            &date_arg(&a[0]),
            "Local",
        )))
    });
    r.add("htmlDateInZone", &[Any, Str], None, |_, a| {
        Ok(Value::string(format_in_zone(
            "2006-01-02",
            &date_arg(&a[0]),
            arg_str(&a[1]),
        )))
    });
    r.add("unixEpoch", &[Any], None, |_, a| match as_time(&a[0]) {
        Some(t) => Ok(Value::string(t.t.timestamp().to_string())),
        None => Err(format!(
            "wrong type for value; expected time.Time; got {}",
            a[0].type_name()
        )
        .into()),
    });
    r.add("dateModify", &[Str, Any], None, |_, a| {
        let t = as_time(&a[1]).ok_or_else(|| {
            format!(
                "wrong type for value; expected time.Time; got {}",
                a[1].type_name()
            )
        })?;
        Ok(match parse_duration(arg_str(&a[0])) {
            Some(ns) => time_value(modify(t, ns)),
            None => time_value(t),
        })
    });
    r.alias("date_modify", "dateModify");
    r.add("mustDateModify", &[Str, Any], None, |_, a| {
        let t = as_time(&a[1]).ok_or_else(|| {
            format!(
                "wrong type for value; expected time.Time; got {}",
                a[1].type_name()
            )
        })?;
        match parse_duration(arg_str(&a[0])) {
            Some(ns) => Ok(time_value(modify(t, ns))),
            None => Err(format!(
                "time: invalid duration {}",
                crate::gotmpl::format::quote_go(arg_str(&a[0]))
            )
            .into()),
        }
    });
    r.alias("must_date_modify", "mustDateModify");
    r.add("toDate", &[Str, Str], None, |_, a| {
        Ok(time_value(
            parse_in_location(arg_str(&a[0]), arg_str(&a[1]), &local())
                .unwrap_or_else(|_| zero_time()),
        ))
    });
    r.add(
        "mustToDate",
        &[Str, Str],
        None,
        |_, a| match parse_in_location(arg_str(&a[0]), arg_str(&a[1]), &local()) {
            Ok(t) => Ok(time_value(t)),
            Err(e) => Err(e.into()),
        },
    );
    r.add("ago", &[Any], None, |_, a| {
        let t = date_arg(&a[0]);
        let secs = (now().t - t.t).num_seconds();
        Ok(Value::string(format_duration(secs as i128 * 1_000_000_000)))
    });
    r.add("duration", &[Any], None, |_, a| {
        let secs: i64 = match &a[0] {
            Value::Str(s) => super::cast::parse_int_base0(s).unwrap_or(0),
            Value::Int64(i) => *i,
            _ => 0,
        };
        Ok(Value::string(format_duration(secs as i128 * 1_000_000_000)))
    });
    r.add("durationRound", &[Any], None, |_, a| {
        let ns: i128 = match &a[0] {
            Value::Str(s) => parse_duration(s).unwrap_or(0),
            Value::Int64(i) => *i as i128,
            v => match as_time(v) {
                Some(t) => (now().t - t.t).num_nanoseconds().unwrap_or(0) as i128,
                None => 0,
            },
        };
        Ok(Value::string(duration_round(ns)))
    });
}

/// `t.Add(d)`: the same location, its offset at the new instant.
fn modify(t: GoTime, ns: i128) -> GoTime {
    GoTime::at(t.t + Duration::nanoseconds(ns as i64), t.loc)
}

fn zero_time() -> GoTime {
    let t = NaiveDate::from_ymd_opt(1, 1, 1)
        .unwrap()
        .and_hms_opt(0, 0, 0)
        .unwrap()
        .and_utc()
        .fixed_offset();
    GoTime::at(t, Loc::Utc)
}

fn duration_round(ns: i128) -> String {
    let u = ns.unsigned_abs();
    let sec = 1_000_000_000u128;
    let (minute, hour) = (60 * sec, 3600 * sec);
    let day = 24 * hour;
    let (month, year) = (30 * day, 365 * day);
    if u > year {
        format!("{}y", u / year)
    } else if u > month {
        format!("{}mo", u / month)
    } else if u > day {
        format!("{}d", u / day)
    } else if u > hour {
        format!("{}h", u / hour)
    } else if u > minute {
        format!("{}m", u / minute)
    } else if u > sec {
        format!("{}s", u / sec)
    } else {
        "0s".into()
    }
}

/// Go's time.Duration.String().
pub fn format_duration(ns: i128) -> String {
    if ns == 0 {
        return "0s".into();
    }
    let neg = ns < 0;
    let u = ns.unsigned_abs();
    let mut out = String::new();
    if u < 1_000_000_000 {
        let (unit, div) = if u < 1_000 {
            ("ns", 1u128)
        } else if u < 1_000_000 {
            ("µs", 1_000)
        } else {
            ("ms", 1_000_000)
        };
        out.push_str(&frac_str(u, div));
        out.push_str(unit);
    } else {
        let h = u / 3_600_000_000_000;
        let rem = u % 3_600_000_000_000;
        let m = rem / 60_000_000_000;
        let s_ns = rem % 60_000_000_000;
        if h > 0 {
            out.push_str(&format!("{h}h"));
        }
        if h > 0 || m > 0 {
            out.push_str(&format!("{m}m"));
        }
        out.push_str(&frac_str(s_ns, 1_000_000_000));
        out.push('s');
    }
    if neg {
        format!("-{out}")
    } else {
        out
    }
}

fn frac_str(v: u128, div: u128) -> String {
    let whole = v / div;
    let frac = v % div;
    if frac == 0 {
        return whole.to_string();
    }
    let width = (div as f64).log10() as usize;
    let f = format!("{:0width$}", frac, width = width);
    format!("{}.{}", whole, f.trim_end_matches('0'))
}

/// Go's time.ParseDuration, in nanoseconds.
pub fn parse_duration(s: &str) -> Option<i128> {
    let (neg, mut rest) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    if rest == "0" {
        return Some(0);
    }
    if rest.is_empty() {
        return None;
    }
    let mut total: f64 = 0.0;
    while !rest.is_empty() {
        let num_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if num_end == 0 {
            return None;
        }
        let num: f64 = rest[..num_end].parse().ok()?;
        rest = &rest[num_end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = &rest[..unit_end];
        rest = &rest[unit_end..];
        let mult = match unit {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return None,
        };
        total += num * mult;
    }
    let v = total.round() as i128;
    Some(if neg { -v } else { v })
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

/// Go's Time.Format with a reference-time layout.
pub fn go_format(t: &DateTime<FixedOffset>, layout: &str) -> String {
    go_format_in(t, layout, None)
}

/// Go's Time.Format, with the zone's abbreviation for `MST` when known.
pub fn go_format_in(t: &DateTime<FixedOffset>, layout: &str, zone_name: Option<&str>) -> String {
    let mut out = String::new();
    let mut rest = layout;
    let off = t.offset().local_minus_utc();
    while !rest.is_empty() {
        let tokens: &[(&str, &dyn Fn() -> String)] = &[
            ("January", &|| MONTHS[t.month0() as usize].into()),
            ("Jan", &|| MONTHS[t.month0() as usize][..3].into()),
            ("Monday", &|| {
                DAYS[t.weekday().num_days_from_sunday() as usize].into()
            }),
            ("Mon", &|| {
                DAYS[t.weekday().num_days_from_sunday() as usize][..3].into()
            }),
            ("MST", &|| {
                if let Some(n) = zone_name {
                    n.to_string()
                } else if off == 0 {
                    "UTC".into()
                } else {
                    fmt_offset(off, false, false)
                }
            }),
            ("2006", &|| format!("{:04}", t.year())),
            ("-070000", &|| fmt_offset(off, false, true)),
            ("-07:00:00", &|| fmt_offset(off, true, true)),
            ("-0700", &|| fmt_offset(off, false, false)),
            ("-07:00", &|| fmt_offset(off, true, false)),
            ("-07", &|| fmt_offset(off, false, false)[..3].into()),
            ("Z070000", &|| {
                if off == 0 {
                    "Z".into()
                } else {
                    fmt_offset(off, false, true)
                }
            }),
            ("Z07:00:00", &|| {
                if off == 0 {
                    "Z".into()
                } else {
                    fmt_offset(off, true, true)
                }
            }),
            ("Z0700", &|| {
                if off == 0 {
                    "Z".into()
                } else {
                    fmt_offset(off, false, false)
                }
            }),
            ("Z07:00", &|| {
                if off == 0 {
                    "Z".into()
                } else {
                    fmt_offset(off, true, false)
                }
            }),
            ("Z07", &|| {
                if off == 0 {
                    "Z".into()
                } else {
                    fmt_offset(off, false, false)[..3].into()
                }
            }),
            ("01", &|| format!("{:02}", t.month())),
            ("02", &|| format!("{:02}", t.day())),
            ("03", &|| format!("{:02}", hour12(t.hour()))),
            ("04", &|| format!("{:02}", t.minute())),
            ("05", &|| format!("{:02}", t.second())),
            ("06", &|| format!("{:02}", t.year() % 100)),
            ("002", &|| format!("{:03}", t.ordinal())),
            ("15", &|| format!("{:02}", t.hour())),
            ("PM", &|| {
                if t.hour() >= 12 {
                    "PM".into()
                } else {
                    "AM".into()
                }
            }),
            ("pm", &|| {
                if t.hour() >= 12 {
                    "pm".into()
                } else {
                    "am".into()
                }
            }),
            ("_2", &|| format!("{:>2}", t.day())),
            ("1", &|| t.month().to_string()),
            ("2", &|| t.day().to_string()),
            ("3", &|| hour12(t.hour()).to_string()),
            ("4", &|| t.minute().to_string()),
            ("5", &|| t.second().to_string()),
        ];
        // Fractional seconds: .000 / .999 (also with a comma).
        if (rest.starts_with(".0")
            || rest.starts_with(".9")
            || rest.starts_with(",0")
            || rest.starts_with(",9"))
            && rest.len() >= 2
        {
            let digit = rest.as_bytes()[1];
            let n = rest[1..].bytes().take_while(|&b| b == digit).count();
            let after = rest.as_bytes().get(1 + n).copied();
            if !after.map(|b| b.is_ascii_digit()).unwrap_or(false) {
                let ns = t.nanosecond() % 1_000_000_000;
                let digits = format!("{:09}", ns);
                let mut frac = digits[..n.min(9)].to_string();
                if digit == b'9' {
                    frac = frac.trim_end_matches('0').to_string();
                    if !frac.is_empty() {
                        out.push(rest.as_bytes()[0] as char);
                        out.push_str(&frac);
                    }
                } else {
                    out.push(rest.as_bytes()[0] as char);
                    out.push_str(&frac);
                }
                rest = &rest[1 + n..];
                continue;
            }
        }
        let mut matched = false;
        for (tok, f) in tokens {
            if rest.starts_with(tok) {
                out.push_str(&f());
                rest = &rest[tok.len()..];
                matched = true;
                break;
            }
        }
        if !matched {
            let c = rest.chars().next().unwrap();
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

fn hour12(h: u32) -> u32 {
    match h % 12 {
        0 => 12,
        x => x,
    }
}

fn fmt_offset(off: i32, colon: bool, secs: bool) -> String {
    let sign = if off < 0 { '-' } else { '+' };
    let a = off.abs();
    let (h, m, s) = (a / 3600, (a % 3600) / 60, a % 60);
    let mut r = if colon {
        format!("{sign}{h:02}:{m:02}")
    } else {
        format!("{sign}{h:02}{m:02}")
    };
    if secs {
        if colon {
            r.push_str(&format!(":{s:02}"));
        } else {
            r.push_str(&format!("{s:02}"));
        }
    }
    r
}

/// Why a time did not parse, in Go's time.Parse words (every text quoted).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TimeParseError {
    /// `rest` of the value did not match the layout's `element`.
    #[error("parsing time {} as {}: cannot parse {} as {}", q(.value), q(.layout), q(.rest), q(.element))]
    Cannot {
        value: String,
        layout: String,
        rest: String,
        element: String,
    },
    #[error("parsing time {}: extra text: {}", q(.value), q(.extra))]
    ExtraText { value: String, extra: String },
    #[error("parsing time {}: {what} out of range", q(.value))]
    OutOfRange { value: String, what: &'static str },
}

fn q(s: &str) -> String {
    crate::gotmpl::format::quote_go(s)
}

/// Go's time.Parse for numeric and name layouts, with Go's error texts.
fn go_parse_parts(
    layout: &str,
    value: &str,
) -> Result<(NaiveDateTime, ParsedZone), TimeParseError> {
    let cannot = |v: &str, elem: &str| TimeParseError::Cannot {
        value: value.to_string(),
        layout: layout.to_string(),
        rest: v.to_string(),
        element: elem.to_string(),
    };
    let range = |what: &'static str| TimeParseError::OutOfRange {
        value: value.to_string(),
        what,
    };
    const STD: &[&str] = &[
        "January",
        "Jan",
        "Monday",
        "Mon",
        "MST",
        "2006",
        "Z07:00:00",
        "Z070000",
        "Z07:00",
        "Z0700",
        "Z07",
        "-07:00:00",
        "-070000",
        "-07:00",
        "-0700",
        "-07",
        "002",
        "01",
        "02",
        "03",
        "04",
        "05",
        "06",
        "15",
        "PM",
        "pm",
        "_2",
        "1",
        "2",
        "3",
        "4",
        "5",
    ];
    let (mut year, mut month, mut day, mut hour, mut min, mut sec, mut nsec) =
        (1i32, 1i64, 1i64, 0i64, 0i64, 0i64, 0i64);
    let mut zone = ParsedZone::default();
    let mut pm: Option<bool> = None;
    let mut l = layout;
    let mut v = value;
    fn num(v: &str, min_digits: usize, max_digits: usize) -> Option<(i64, usize)> {
        let n = v
            .bytes()
            .take(max_digits)
            .take_while(|b| b.is_ascii_digit())
            .count();
        if n < min_digits {
            return None;
        }
        Some((v[..n].parse().ok()?, n))
    }
    while !l.is_empty() {
        // fractional seconds
        if (l.starts_with(".0")
            || l.starts_with(".9")
            || l.starts_with(",0")
            || l.starts_with(",9"))
            && {
                let d = l.as_bytes()[1];
                let n = l[1..].bytes().take_while(|&b| b == d).count();
                !l[1 + n..].starts_with(|c: char| c.is_ascii_digit())
            }
        {
            let d = l.as_bytes()[1];
            let n = l[1..].bytes().take_while(|&b| b == d).count();
            l = &l[1 + n..];
            if v.starts_with(['.', ',']) {
                let digits = v[1..].bytes().take_while(|b| b.is_ascii_digit()).count();
                let frac = &v[1..1 + digits];
                let padded = format!("{:0<9}", &frac[..frac.len().min(9)]);
                nsec = padded.parse().unwrap_or(0);
                v = &v[1 + digits..];
            } else if d == b'0' {
                return Err(cannot(v, &format!(".{}", "0".repeat(n))));
            }
            continue;
        }
        let tok = STD.iter().find(|t| l.starts_with(**t));
        let Some(tok) = tok else {
            let c = l.chars().next().unwrap();
            // literal text up to the next token
            if !v.starts_with(c) {
                let lit: String = l
                    .chars()
                    .take_while(|ch| !"0123456789JMPZ-_.,".contains(*ch) || *ch == c)
                    .collect();
                return Err(cannot(
                    v,
                    if lit.is_empty() {
                        &l[..c.len_utf8()]
                    } else {
                        &lit
                    },
                ));
            }
            l = &l[c.len_utf8()..];
            v = &v[c.len_utf8()..];
            continue;
        };
        l = &l[tok.len()..];
        let err = || cannot(v, tok);
        match *tok {
            "2006" => {
                let (y, n) = num(v, 4, 4).ok_or_else(err)?;
                year = y as i32;
                v = &v[n..];
            }
            "06" => {
                let (y, n) = num(v, 2, 2).ok_or_else(err)?;
                year = if y >= 69 {
                    1900 + y as i32
                } else {
                    2000 + y as i32
                };
                v = &v[n..];
            }
            "01" | "02" | "03" | "04" | "05" | "15" => {
                let (x, n) = num(v, 2, 2).ok_or_else(err)?;
                match *tok {
                    "01" => month = x,
                    "02" => day = x,
                    "03" => hour = x,
                    "04" => min = x,
                    "05" => sec = x,
                    _ => hour = x,
                }
                v = &v[n..];
            }
            "1" | "2" | "3" | "4" | "5" | "_2" => {
                let vv = if *tok == "_2" {
                    v.strip_prefix(' ').unwrap_or(v)
                } else {
                    v
                };
                let (x, n) = num(vv, 1, 2).ok_or_else(err)?;
                match *tok {
                    "1" => month = x,
                    "2" | "_2" => day = x,
                    "3" => hour = x,
                    "4" => min = x,
                    _ => sec = x,
                }
                v = &vv[n..];
            }
            "002" => {
                let (_, n) = num(v, 3, 3).ok_or_else(err)?;
                v = &v[n..];
            }
            "Jan" | "January" => {
                let idx = MONTHS.iter().position(|m| {
                    let name = if *tok == "Jan" { &m[..3] } else { m };
                    v.len() >= name.len() && v[..name.len()].eq_ignore_ascii_case(name)
                });
                let i = idx.ok_or_else(err)?;
                month = i as i64 + 1;
                v = &v[if *tok == "Jan" { 3 } else { MONTHS[i].len() }..];
            }
            "Mon" | "Monday" => {
                let idx = DAYS.iter().position(|d| {
                    let name = if *tok == "Mon" { &d[..3] } else { d };
                    v.len() >= name.len() && v[..name.len()].eq_ignore_ascii_case(name)
                });
                let i = idx.ok_or_else(err)?;
                v = &v[if *tok == "Mon" { 3 } else { DAYS[i].len() }..];
            }
            "PM" | "pm" => {
                if v.len() < 2 {
                    return Err(err());
                }
                pm = Some(match &v[..2] {
                    "PM" | "pm" => true,
                    "AM" | "am" => false,
                    _ => return Err(err()),
                });
                v = &v[2..];
            }
            "MST" => {
                let n = v.bytes().take_while(|b| b.is_ascii_uppercase()).count();
                if n < 3 {
                    return Err(err());
                }
                zone.name = Some(v[..n].to_string());
                v = &v[n..];
            }
            z => {
                if z.starts_with('Z') && v.starts_with('Z') {
                    v = &v[1..];
                    zone.utc = true;
                    continue;
                }
                let sign = match v.as_bytes().first() {
                    Some(b'+') => 1,
                    Some(b'-') => -1,
                    _ => return Err(err()),
                };
                let body = &v[1..];
                let colon = z.contains(':');
                let (h, m, used) = if colon {
                    if body.len() < 5 || body.as_bytes()[2] != b':' {
                        return Err(err());
                    }
                    (
                        body[..2].parse::<i32>().map_err(|_| err())?,
                        body[3..5].parse::<i32>().map_err(|_| err())?,
                        5,
                    )
                } else if z.ends_with("07") {
                    (
                        body.get(..2)
                            .and_then(|x| x.parse::<i32>().ok())
                            .ok_or_else(err)?,
                        0,
                        2,
                    )
                } else {
                    (
                        body.get(..2)
                            .and_then(|x| x.parse::<i32>().ok())
                            .ok_or_else(err)?,
                        body.get(2..4)
                            .and_then(|x| x.parse::<i32>().ok())
                            .ok_or_else(err)?,
                        4,
                    )
                };
                zone.offset = Some(sign * (h * 3600 + m * 60));
                v = &body[used..];
            }
        }
    }
    if !v.is_empty() {
        return Err(TimeParseError::ExtraText {
            value: value.to_string(),
            extra: v.to_string(),
        });
    }
    if let Some(p) = pm {
        if hour > 12 {
            return Err(range("hour"));
        }
        if p && hour < 12 {
            hour += 12;
        } else if !p && hour == 12 {
            hour = 0;
        }
    }
    if !(1..=12).contains(&month) {
        return Err(range("month"));
    }
    if hour > 23 {
        return Err(range("hour"));
    }
    if min > 59 {
        return Err(range("minute"));
    }
    if sec > 59 {
        return Err(range("second"));
    }
    let date =
        NaiveDate::from_ymd_opt(year, month as u32, day as u32).ok_or_else(|| range("day"))?;
    let dt = date
        .and_hms_nano_opt(hour as u32, min as u32, sec as u32, nsec as u32)
        .ok_or_else(|| range("second"))?;
    if zone
        .offset
        .is_some_and(|o| FixedOffset::east_opt(o).is_none())
    {
        return Err(range("time zone offset"));
    }
    Ok((dt, zone))
}

/// What a layout's zone elements read: `Z`, a numeric offset, a name.
#[derive(Default)]
struct ParsedZone {
    utc: bool,
    offset: Option<i32>,
    name: Option<String>,
}

/// Go's time.ParseInLocation: a wall time without zone is in `loc`; an
/// offset or name `loc` has at that time gives `loc`, any other a fabricated
/// fixed zone (an unknown name with offset 0, `GMT+3` with its hours).
fn parse_in_location(layout: &str, value: &str, loc: &Loc) -> Result<GoTime, TimeParseError> {
    let (wall, zone) = go_parse_parts(layout, value)?;
    let fixed = |instant: NaiveDateTime, off: i32| {
        FixedOffset::east_opt(off)
            .expect("checked offset")
            .from_utc_datetime(&instant)
    };
    if zone.utc {
        return Ok(GoTime::at(wall.and_utc().fixed_offset(), Loc::Utc));
    }
    if let Some(off) = zone.offset {
        let instant = wall - Duration::seconds(off.into());
        let matches_loc = loc.offset_at(&instant) == off
            && zone
                .name
                .as_ref()
                .is_none_or(|n| *n == loc.name_at(&instant));
        let in_loc = if matches_loc {
            loc.clone()
        } else {
            Loc::Fixed(zone.name.clone(), off)
        };
        return Ok(GoTime::at(fixed(instant, off), in_loc));
    }
    if let Some(name) = zone.name {
        if let Loc::File(l) = loc {
            if let Some(off) = l.lookup_name(&name, wall.and_utc().timestamp()) {
                let instant = wall - Duration::seconds(off.into());
                return Ok(GoTime::at(fixed(instant, off), loc.clone()));
            }
        }
        // lookupName: an offset of the location that has this abbreviation,
        // the one in effect at that wall time first.
        let candidates = [wall, wall - Duration::days(182), wall + Duration::days(182)];
        let candidates = if matches!(loc, Loc::File(_)) {
            &candidates[..0]
        } else {
            &candidates[..]
        };
        for &guess in candidates {
            let off = loc.offset_at(&guess);
            let instant = wall - Duration::seconds(off.into());
            if loc.name_at(&instant) == name || loc.name_at(&guess) == name {
                let off_then = loc.offset_at(&instant);
                let instant = wall - Duration::seconds(off_then.into());
                return Ok(GoTime::at(fixed(instant, off_then), loc.clone()));
            }
        }
        let off = match name.strip_prefix("GMT") {
            Some(hours) if !hours.is_empty() => hours.parse::<i32>().unwrap_or(0) * 3600,
            _ => 0,
        };
        return Ok(GoTime::at(fixed(wall, off), Loc::Fixed(Some(name), off)));
    }
    // Go's Date: the offset in effect at the wall time read as UTC, unless
    // the instant it gives lies in another period (DST transitions).
    let first = loc.offset_at(&wall);
    let mut off = first;
    let utc = wall - Duration::seconds(first.into());
    if loc.offset_at(&utc) != first {
        off = loc.offset_at(&utc);
    }
    let instant = wall - Duration::seconds(off.into());
    Ok(GoTime::at(fixed(instant, off), loc.clone()))
}

/// The zone of a time BurntSushi/toml parsed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TomlZone {
    /// `Z`: time.UTC.
    Utc,
    /// A numeric offset: time.Local if it has that offset then, else a
    /// nameless fixed zone (Go's ParseInLocation).
    Offset(i32),
    /// No zone: the fixed zone `datetime-local`, `date-local` or
    /// `time-local`, with the offset the process's zone had at start.
    Local(&'static str),
}

/// A TOML datetime as the `time.Time` BurntSushi/toml decodes it to.
pub fn toml_time(dt: NaiveDateTime, zone: &TomlZone) -> Value {
    let fixed = |off: i32| FixedOffset::east_opt(off).unwrap_or(FixedOffset::east_opt(0).unwrap());
    let t = match zone {
        TomlZone::Utc => GoTime::at(Utc.from_utc_datetime(&dt).fixed_offset(), Loc::Utc),
        TomlZone::Offset(off) => {
            let t = dt
                .and_local_timezone(fixed(*off))
                .single()
                .unwrap_or_else(|| Utc.from_utc_datetime(&dt).fixed_offset());
            let loc = local();
            let loc = if loc.offset_at(&t.naive_utc()) == *off {
                loc
            } else {
                Loc::Fixed(None, *off)
            };
            GoTime::at(t, loc)
        }
        TomlZone::Local(name) => {
            let off = local().offset_at(&Utc::now().naive_utc());
            let t = dt
                .and_local_timezone(fixed(off))
                .single()
                .unwrap_or_else(|| Utc.from_utc_datetime(&dt).fixed_offset());
            GoTime::at(t, Loc::Fixed(Some(name.to_string()), off))
        }
    };
    time_value(t)
}

/// A time as BurntSushi/toml's encoder writes it: the TOML-local kinds in
/// their own layouts (after `In(time.UTC)`), any other as RFC 3339.
pub fn toml_time_text(v: &Value) -> Option<String> {
    let t = as_time(v)?;
    let layout = match &t.loc {
        Loc::Fixed(Some(n), _) if n == "datetime-local" => "2006-01-02T15:04:05.999999999",
        Loc::Fixed(Some(n), _) if n == "date-local" => "2006-01-02",
        Loc::Fixed(Some(n), _) if n == "time-local" => "15:04:05.999999999",
        _ => return Some(t.format_layout("2006-01-02T15:04:05.999999999Z07:00")),
    };
    Some(GoTime::at(t.t, Loc::Utc).format_layout(layout))
}
