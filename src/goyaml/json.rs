//! Go's encoding/json as Helm's templates observe it: sorted keys, HTML
//! escaping, Go's float formatting; and a decoder with Go's error texts.

use crate::value::{Map, Value};

/// encoding/json's float64 text.
pub fn format_float(f: f64) -> String {
    let abs = f.abs();
    if abs != 0.0 && (abs < 1e-6 || abs >= 1e21) {
        let s = crate::value::float::format_e_shortest(f);
        // e-09 -> e-9
        if let Some(i) = s.find("e-0") {
            return format!("{}e-{}", &s[..i], &s[i + 3..]);
        }
        if let Some(i) = s.find("e+0") {
            return format!("{}e+{}", &s[..i], &s[i + 3..]);
        }
        return s;
    }
    let (neg, digits, x) = crate::value::float::shortest_digits(f);
    let body = crate::value::float::fixed_digits(&digits, x);
    if neg && f != 0.0 || (neg && f == 0.0) {
        format!("-{body}")
    } else {
        body
    }
}

/// encoding/json's errors, in its words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JsonError {
    /// A float JSON cannot hold (NaN, ±Inf), as Go formats it.
    #[error("json: unsupported value: {0}")]
    UnsupportedValue(String),
    #[error("unexpected end of JSON input")]
    UnexpectedEnd,
    #[error("invalid character in \\u hexadecimal character escape")]
    BadUnicodeEscape,
    /// A SyntaxError: the byte found, quoted as Go quotes it, and where.
    #[error("invalid character {found} {context}")]
    InvalidCharacter { found: String, context: String },
    /// An UnmarshalTypeError: a number float64 cannot hold.
    #[error("json: cannot unmarshal number {0} into Go value of type float64")]
    NumberOverflow(String),
}

#[derive(Clone, Copy)]
pub struct Opts {
    pub escape_html: bool,
    pub indent: Option<&'static str>,
}

pub fn encode(v: &Value, opts: Opts) -> Result<String, JsonError> {
    let mut out = String::new();
    enc(&mut out, v, opts, 0)?;
    Ok(out)
}

fn newline(out: &mut String, opts: Opts, depth: usize) {
    if let Some(ind) = opts.indent {
        out.push('\n');
        for _ in 0..depth {
            out.push_str(ind);
        }
    }
}

fn enc(out: &mut String, v: &Value, opts: Opts, depth: usize) -> Result<(), JsonError> {
    match v {
        Value::Nil => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) | Value::Int64(i) => out.push_str(&i.to_string()),
        Value::Uint64(u) => out.push_str(&u.to_string()),
        Value::Uint8(u) => out.push_str(&u.to_string()),
        Value::Uint32(u) => out.push_str(&u.to_string()),
        Value::Float(f) => {
            if !f.is_finite() {
                return Err(JsonError::UnsupportedValue(
                    crate::value::float::format_float_g(*f),
                ));
            }
            out.push_str(&format_float(*f));
        }
        Value::Str(s) => write_string(out, s, opts.escape_html),
        Value::Bytes(b) => {
            use base64::Engine as _;
            out.push('"');
            out.push_str(&base64::engine::general_purpose::STANDARD.encode(&b[..]));
            out.push('"');
        }
        Value::List(_, crate::value::ListKind::NilStr) => out.push_str("null"),
        Value::List(l, _) => {
            out.push('[');
            for (i, x) in l.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, opts, depth + 1);
                enc(out, x, opts, depth + 1)?;
            }
            if !l.is_empty() {
                newline(out, opts, depth);
            }
            out.push(']');
        }
        Value::Map(_, crate::value::MapKind::NilStrStr) => out.push_str("null"),
        Value::Map(m, _) => {
            let m = m.borrow();
            let pairs: Vec<(&str, &Value)> = m.iter().map(|(k, v)| (k.as_str(), v)).collect();
            enc_object(out, &pairs, opts, depth)?;
        }
        Value::Object(o) => match o.json_fields() {
            Some(fields) => {
                let pairs: Vec<(&str, &Value)> = fields.iter().map(|(k, v)| (*k, v)).collect();
                enc_object(out, &pairs, opts, depth)?
            }
            None => enc(out, &o.to_data(), opts, depth)?,
        },
    }
    Ok(())
}

fn enc_object(
    out: &mut String,
    m: &[(&str, &Value)],
    opts: Opts,
    depth: usize,
) -> Result<(), JsonError> {
    out.push('{');
    for (i, (k, x)) in m.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        newline(out, opts, depth + 1);
        write_string(out, k, opts.escape_html);
        out.push(':');
        if opts.indent.is_some() {
            out.push(' ');
        }
        enc(out, x, opts, depth + 1)?;
    }
    if !m.is_empty() {
        newline(out, opts, depth);
    }
    out.push('}');
    Ok(())
}

/// A JSON string as Go's encoding/json writes it. Runs of bytes that need
/// no escape are copied whole: release records are megabytes of such text.
pub fn write_string(out: &mut String, s: &str, escape_html: bool) {
    let special = if escape_html { &SPECIAL_HTML } else { &SPECIAL };
    out.reserve(s.len() + 2);
    out.push('"');
    let bytes = s.as_bytes();
    let mut copied_to = 0;
    while let Some(n) = bytes[copied_to..].iter().position(|&b| special[b as usize]) {
        let i = copied_to + n;
        out.push_str(&s[copied_to..i]);
        let c = s[i..].chars().next().expect("a character starts here");
        write_char(out, c, escape_html);
        copied_to = i + c.len_utf8();
    }
    out.push_str(&s[copied_to..]);
    out.push('"');
}

/// Bytes that may start a character Go escapes: quotes, backslashes,
/// control characters, and the lead bytes of U+2028 and U+2029 (E2) and of
/// the code points that stand for bytes that are not UTF-8 (F4); a
/// character with such a lead byte may still be written as it is.
/// Continuation bytes are below both lead bytes.
const fn special_bytes(escape_html: bool) -> [bool; 256] {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = true;
        b += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table[0xE2] = true;
    table[0xF4] = true;
    if escape_html {
        table[b'<' as usize] = true;
        table[b'>' as usize] = true;
        table[b'&' as usize] = true;
    }
    table
}

static SPECIAL: [bool; 256] = special_bytes(false);
static SPECIAL_HTML: [bool; 256] = special_bytes(true);

fn write_char(out: &mut String, c: char, escape_html: bool) {
    use std::fmt::Write;
    match c {
        // encoding/json writes each byte that is not UTF-8 as \ufffd.
        c if crate::value::gostr::raw_byte(c).is_some() => out.push_str("\\ufffd"),
        '"' => out.push_str("\\\""),
        '\\' => out.push_str("\\\\"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\u{8}' => out.push_str("\\b"),
        '\u{c}' => out.push_str("\\f"),
        '<' | '>' | '&' if escape_html => write!(out, "\\u{:04x}", c as u32).expect("to a String"),
        '\u{2028}' | '\u{2029}' => write!(out, "\\u{:04x}", c as u32).expect("to a String"),
        c if (c as u32) < 0x20 => write!(out, "\\u{:04x}", c as u32).expect("to a String"),
        c => out.push(c),
    }
}

// ---- decoding ----

struct Dec<'a> {
    b: &'a [u8],
    i: usize,
    /// Go reports a number that does not fit float64 but keeps decoding.
    soft_error: Option<JsonError>,
}

fn ctx_char(c: u8) -> String {
    match c {
        b'\'' => "'\\''".into(),
        b'"' => "'\"'".into(),
        c if c < 0x20 => format!("'\\x{:02x}'", c),
        c => format!("'{}'", c as char),
    }
}

impl<'a> Dec<'a> {
    fn ws(&mut self) {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }
    fn err_char(&self, what: &str) -> JsonError {
        match self.b.get(self.i) {
            None => JsonError::UnexpectedEnd,
            Some(&c) => JsonError::InvalidCharacter {
                found: ctx_char(c),
                context: what.to_string(),
            },
        }
    }
    fn value(&mut self) -> Result<Value, JsonError> {
        self.ws();
        let Some(&c) = self.b.get(self.i) else {
            return Err(JsonError::UnexpectedEnd);
        };
        match c {
            b'{' => {
                self.i += 1;
                let mut m = Map::new();
                self.ws();
                if self.b.get(self.i) == Some(&b'}') {
                    self.i += 1;
                    return Ok(Value::map(m));
                }
                loop {
                    self.ws();
                    if self.b.get(self.i) != Some(&b'"') {
                        return Err(self.err_char("looking for beginning of object key string"));
                    }
                    let k = self.string()?;
                    self.ws();
                    if self.b.get(self.i) != Some(&b':') {
                        return Err(self.err_char("after object key"));
                    }
                    self.i += 1;
                    let v = self.value()?;
                    m.insert(k, v);
                    self.ws();
                    match self.b.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b'}') => {
                            self.i += 1;
                            return Ok(Value::map(m));
                        }
                        _ => return Err(self.err_char("after object key:value pair")),
                    }
                }
            }
            b'[' => {
                self.i += 1;
                let mut l = Vec::new();
                self.ws();
                if self.b.get(self.i) == Some(&b']') {
                    self.i += 1;
                    return Ok(Value::list(l));
                }
                loop {
                    l.push(self.value()?);
                    self.ws();
                    match self.b.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b']') => {
                            self.i += 1;
                            return Ok(Value::list(l));
                        }
                        _ => return Err(self.err_char("after array element")),
                    }
                }
            }
            b'"' => Ok(Value::string(self.string()?)),
            b't' => self.lit("true", Value::Bool(true)),
            b'f' => self.lit("false", Value::Bool(false)),
            b'n' => self.lit("null", Value::Nil),
            b'-' | b'0'..=b'9' => self.number(),
            _ => Err(self.err_char("looking for beginning of value")),
        }
    }
    fn lit(&mut self, word: &str, v: Value) -> Result<Value, JsonError> {
        for (k, &w) in word.as_bytes().iter().enumerate() {
            match self.b.get(self.i + k) {
                Some(&c) if c == w => {}
                None => return Err(JsonError::UnexpectedEnd),
                Some(&c) => {
                    return Err(JsonError::InvalidCharacter {
                        found: ctx_char(c),
                        context: format!("in literal {word} (expecting {})", ctx_char(w)),
                    })
                }
            }
        }
        self.i += word.len();
        Ok(v)
    }
    fn number(&mut self) -> Result<Value, JsonError> {
        let st = self.i;
        if self.b[self.i] == b'-' {
            self.i += 1;
        }
        let digits = |d: &mut Dec| {
            let s = d.i;
            while d.i < d.b.len() && d.b[d.i].is_ascii_digit() {
                d.i += 1;
            }
            d.i - s
        };
        match self.b.get(self.i) {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => {
                digits(self);
            }
            _ => return Err(self.err_char("in numeric literal")),
        }
        if self.b.get(self.i) == Some(&b'.') {
            self.i += 1;
            if digits(self) == 0 {
                return Err(self.err_char("after decimal point in numeric literal"));
            }
        }
        if matches!(self.b.get(self.i), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.b.get(self.i), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if digits(self) == 0 {
                return Err(self.err_char("in exponent of numeric literal"));
            }
        }
        let text = std::str::from_utf8(&self.b[st..self.i]).unwrap();
        let f = text.parse::<f64>().unwrap_or(f64::INFINITY);
        if !f.is_finite() {
            if self.soft_error.is_none() {
                self.soft_error = Some(JsonError::NumberOverflow(text.to_string()));
            }
            return Ok(Value::Nil);
        }
        Ok(Value::Float(f))
    }
    fn string(&mut self) -> Result<String, JsonError> {
        self.i += 1;
        let mut out: Vec<u8> = Vec::new();
        loop {
            // Copy the run of plain bytes up to the next quote, escape or control byte.
            let run = self.b[self.i..]
                .iter()
                .position(|&c| c == b'"' || c == b'\\' || c < 0x20)
                .unwrap_or(self.b.len() - self.i);
            out.extend_from_slice(&self.b[self.i..self.i + run]);
            self.i += run;
            let Some(&c) = self.b.get(self.i) else {
                return Err(JsonError::UnexpectedEnd);
            };
            self.i += 1;
            match c {
                b'"' => break,
                b'\\' => {
                    let Some(&e) = self.b.get(self.i) else {
                        return Err(JsonError::UnexpectedEnd);
                    };
                    self.i += 1;
                    match e {
                        b'"' => out.push(b'"'),
                        b'\\' => out.push(b'\\'),
                        b'/' => out.push(b'/'),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        b'n' => out.push(b'\n'),
                        b'r' => out.push(b'\r'),
                        b't' => out.push(b'\t'),
                        b'u' => {
                            let h =
                                std::str::from_utf8(self.b.get(self.i..self.i + 4).unwrap_or(b""))
                                    .unwrap_or("");
                            let cp = u32::from_str_radix(h, 16)
                                .map_err(|_| JsonError::BadUnicodeEscape)?;
                            self.i += 4;
                            let mut ch = char::from_u32(cp);
                            if (0xD800..0xDC00).contains(&cp)
                                && self.b.get(self.i) == Some(&b'\\')
                                && self.b.get(self.i + 1) == Some(&b'u')
                            {
                                let h2 = std::str::from_utf8(
                                    self.b.get(self.i + 2..self.i + 6).unwrap_or(b""),
                                )
                                .unwrap_or("");
                                if let Ok(lo) = u32::from_str_radix(h2, 16) {
                                    if (0xDC00..0xE000).contains(&lo) {
                                        ch = char::from_u32(
                                            0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00),
                                        );
                                        self.i += 6;
                                    }
                                }
                            }
                            let ch = ch.unwrap_or('\u{FFFD}');
                            let mut buf = [0u8; 4];
                            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                        }
                        _ => {
                            self.i -= 1;
                            return Err(self.err_char("in string escape code"));
                        }
                    }
                }
                c if c < 0x20 => {
                    self.i -= 1;
                    return Err(self.err_char("in string literal"));
                }
                c => out.push(c),
            }
        }
        Ok(match String::from_utf8(out) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        })
    }
}

/// Decode one JSON value (numbers as float64), rejecting trailing data.
pub fn decode(text: &str) -> Result<Value, JsonError> {
    let (v, soft) = decode_partial(text)?;
    match soft {
        Some(e) => Err(e),
        None => Ok(v),
    }
}

/// Decode, returning also Go's deferred type error (the value is kept,
/// with nulls where numbers overflowed).
pub fn decode_partial(text: &str) -> Result<(Value, Option<JsonError>), JsonError> {
    let mut d = Dec {
        b: text.as_bytes(),
        i: 0,
        soft_error: None,
    };
    let v = d.value()?;
    d.ws();
    if d.i < d.b.len() {
        return Err(d.err_char("after top-level value"));
    }
    Ok((v, d.soft_error))
}

#[cfg(test)]
mod tests {
    use super::write_string;

    fn written(s: &str, escape_html: bool) -> String {
        let mut out = String::new();
        write_string(&mut out, s, escape_html);
        out
    }

    #[test]
    fn strings_are_escaped_as_go_escapes_them_around_runs_copied_whole() {
        let raw_byte = char::from_u32(0x10FF80 + 0x7F).expect("a code point"); // byte 0xFF
        let text = format!("a<b>&c\u{2028}€é\u{1F600}{raw_byte}\"\\\n\u{1}\u{7f}z");
        assert_eq!(
            written(&text, true),
            "\"a\\u003cb\\u003e\\u0026c\\u2028€é\u{1F600}\\ufffd\\\"\\\\\\n\\u0001\u{7f}z\""
        );
        assert_eq!(
            written(&text, false),
            "\"a<b>&c\\u2028€é\u{1F600}\\ufffd\\\"\\\\\\n\\u0001\u{7f}z\""
        );
        assert_eq!(written("", true), "\"\"");
        // U+10FF7F is not a raw byte: written as itself.
        assert_eq!(written("\u{10FF7F}", true), "\"\u{10FF7F}\"");
    }
}
