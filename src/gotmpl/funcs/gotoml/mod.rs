//! BurntSushi/toml v1.6.0's parser (parse.go) as Helm's `fromToml` runs it:
//! `toml.Unmarshal` into a `map[string]any`, with the decoder's error texts,
//! line numbers and "last key", and values of the Go types it produces.

mod lex;

use lex::{bstr, is_digit, is_hex, Item, ItemType, Lexer, Position};
use std::collections::{BTreeMap, HashMap, HashSet};

pub use super::dates::TomlZone;

/// A decoded TOML value, as BurntSushi/toml stores it.
#[derive(Clone, Debug)]
pub enum TV {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    Time(chrono::NaiveDateTime, TomlZone),
    /// `[]any`
    Arr(Vec<TV>),
    /// `map[string]any`
    Table(TMap),
    /// `[]map[string]any`
    ArrTables(Vec<TMap>),
}

pub type TMap = BTreeMap<String, TV>;

/// Why fromToml failed.
#[derive(Debug, Clone)]
pub enum TomlErr {
    /// A ParseError; its Error() text.
    Parse(String),
    /// A Go panic inside the decoder.
    Bug(String),
}

type R<T> = Result<T, TomlErr>;

/// `toml.Unmarshal` into a `map[string]any`.
pub fn parse(input: &[u8]) -> R<TMap> {
    let mut data = input;
    if data.starts_with(b"\xff\xfe") || data.starts_with(b"\xfe\xff") {
        data = &data[2..];
    } else if data.starts_with(b"\xef\xbb\xbf") {
        data = &data[3..];
    }
    let ex = data.len().min(6);
    if data[..ex].contains(&0) {
        return Err(TomlErr::Parse(
            "toml: line 1: files cannot contain NULL bytes; probably using UTF-16; TOML files must be UTF-8".into(),
        ));
    }
    let mut p = Parser {
        lx: Lexer::new(data.to_vec()),
        context: vec![],
        current_key: String::new(),
        pos: Position::default(),
        key_info: HashMap::new(),
        mapping: TMap::new(),
        implicits: HashSet::new(),
    };
    loop {
        let item = p.next()?;
        if item.typ == ItemType::Eof {
            break;
        }
        p.top_level(item)?;
    }
    Ok(p.mapping)
}

/// meta.go's Key.String().
fn key_string(k: &[String]) -> String {
    k.iter().map(|k| key(k)).collect::<Vec<_>>().join(".")
}

/// One key as BurntSushi writes it: bare where every character may be, else
/// quoted (an empty key too).
pub(super) fn key(k: &str) -> String {
    if !k.is_empty() && k.chars().all(lex::is_bare_key_char) {
        k.to_string()
    } else {
        quoted(k)
    }
}

/// BurntSushi/toml's quoted (its dblQuotedReplacer, not Go's `%q`), for keys
/// and for string values alike.
pub(super) fn quoted(s: &str) -> String {
    let mut b = String::with_capacity(s.len() + 2);
    b.push('"');
    for c in s.chars() {
        match c {
            '"' => b.push_str("\\\""),
            '\\' => b.push_str("\\\\"),
            '\x08' => b.push_str("\\b"),
            '\t' => b.push_str("\\t"),
            '\n' => b.push_str("\\n"),
            '\x0c' => b.push_str("\\f"),
            '\r' => b.push_str("\\r"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                b.push_str(&format!("\\u{:04x}", c as u32))
            }
            c => b.push(c),
        }
    }
    b.push('"');
    b
}

fn current_of(ctx: &[String], ck: &str) -> String {
    if ck.is_empty() {
        return key_string(ctx);
    }
    if ctx.is_empty() {
        return ck.to_string();
    }
    format!("{}.{}", key_string(ctx), ck)
}

fn perr(line: i64, last_key: String, msg: String) -> TomlErr {
    if last_key.is_empty() {
        TomlErr::Parse(format!("toml: line {line}: {msg}"))
    } else {
        TomlErr::Parse(format!(
            "toml: line {line} (last key {}): {msg}",
            crate::value::quote::quote_go(&last_key)
        ))
    }
}

fn bug<T>(msg: String) -> R<T> {
    Err(TomlErr::Bug(format!("BUG: {msg}\n\n")))
}

enum Walk {
    NotEstablished(Vec<String>),
    Defined(Vec<String>),
}

/// setValue's walk down the context: the table it names.
fn walk<'a>(mut hash: &'a mut TMap, ctx: &[String]) -> Result<&'a mut TMap, Walk> {
    let mut kc = Vec::new();
    for k in ctx {
        kc.push(k.clone());
        hash = match hash.get_mut(k) {
            None => return Err(Walk::NotEstablished(kc)),
            Some(TV::ArrTables(t)) => match t.last_mut() {
                Some(m) => m,
                None => return Err(Walk::Defined(kc)),
            },
            Some(TV::Table(m)) => m,
            Some(_) => return Err(Walk::Defined(kc)),
        };
    }
    Ok(hash)
}

struct Parser {
    lx: Lexer,
    context: Vec<String>,
    current_key: String,
    pos: Position,
    /// Key → "is an array" (tomlArray).
    key_info: HashMap<String, bool>,
    mapping: TMap,
    implicits: HashSet<String>,
}

impl Parser {
    fn current(&self) -> String {
        current_of(&self.context, &self.current_key)
    }

    fn item_err(&self, it: &Item, msg: String) -> TomlErr {
        perr(it.pos.line, self.current(), msg)
    }

    fn panicf(&self, msg: String) -> TomlErr {
        perr(self.pos.line, self.current(), msg)
    }

    fn next(&mut self) -> R<Item> {
        let it = self.lx.next_item().map_err(TomlErr::Bug)?;
        if it.typ == ItemType::Error {
            let msg = it.err.clone().unwrap_or_else(|| bstr(&it.val));
            return Err(self.item_err(&it, msg));
        }
        Ok(it)
    }

    fn next_pos(&mut self) -> R<Item> {
        let it = self.next()?;
        self.pos = it.pos;
        Ok(it)
    }

    fn expect(&mut self, typ: ItemType) -> R<Item> {
        let it = self.next()?;
        self.assert_equal(typ, it.typ)?;
        Ok(it)
    }

    fn assert_equal(&self, expected: ItemType, got: ItemType) -> R<()> {
        if expected != got {
            return bug(format!(
                "Expected '{}' but got '{}'.",
                expected.name(),
                got.name()
            ));
        }
        Ok(())
    }

    fn read_key(&mut self, first: Item, end: ItemType) -> R<Vec<String>> {
        let mut key = Vec::new();
        let mut name = first;
        while name.typ != end && name.typ != ItemType::Eof {
            key.push(self.key_string(&name)?);
            name = self.next()?;
        }
        self.assert_equal(end, name.typ)?;
        Ok(key)
    }

    fn top_level(&mut self, item: Item) -> R<()> {
        match item.typ {
            ItemType::CommentStart => {
                self.expect(ItemType::Text)?;
            }
            ItemType::TableStart => {
                let name = self.next_pos()?;
                let key = self.read_key(name, ItemType::TableEnd)?;
                self.add_context(&key, false)?;
                self.set_type("", false);
            }
            ItemType::ArrayTableStart => {
                let name = self.next_pos()?;
                let key = self.read_key(name, ItemType::ArrayTableEnd)?;
                self.add_context(&key, true)?;
                self.set_type("", false);
            }
            ItemType::KeyStart => {
                let outer = self.context.clone();
                let k = self.next_pos()?;
                let key = self.read_key(k, ItemType::KeyEnd)?;
                self.current_key = key.last().cloned().unwrap_or_default();
                let parent = &key[..key.len().saturating_sub(1)];
                for i in 0..parent.len() {
                    let mut c = self.context.clone();
                    c.push(parent[i].clone());
                    self.add_implicit_context(&c)?;
                }
                let v_item = self.next()?;
                let (val, is_arr) = self.value(v_item, false)?;
                let ck = self.current_key.clone();
                self.set_value(&ck, val)?;
                self.set_type(&ck, is_arr);
                self.context = outer;
                self.current_key = String::new();
            }
            t => return bug(format!("Unexpected type at top level: {}", t.name())),
        }
        Ok(())
    }

    fn key_string(&mut self, it: &Item) -> R<String> {
        match it.typ {
            ItemType::Text => Ok(bstr(&it.val)),
            ItemType::String
            | ItemType::StringEsc
            | ItemType::MultilineString
            | ItemType::RawString
            | ItemType::RawMultilineString => match self.value(it.clone(), false)?.0 {
                TV::Str(s) => Ok(s),
                _ => bug("string".into()),
            },
            t => bug(format!("Unexpected key type: {}", t.name())),
        }
    }

    /// The value and whether its type is tomlArray.
    fn value(&mut self, it: Item, parent_is_array: bool) -> R<(TV, bool)> {
        let s = |v: String| Ok((TV::Str(v), false));
        match it.typ {
            ItemType::String | ItemType::RawString => s(bstr(&it.val)),
            ItemType::StringEsc => {
                let v = bstr(&it.val);
                s(self.replace_escapes(&it, &v)?)
            }
            ItemType::MultilineString => {
                let v = bstr(&it.val);
                let v = strip_escaped_newlines(strip_first_newline(&v));
                s(self.replace_escapes(&it, &v)?)
            }
            ItemType::RawMultilineString => s(strip_first_newline(&bstr(&it.val)).to_string()),
            ItemType::Integer => Ok((self.value_integer(&it)?, false)),
            ItemType::Float => Ok((self.value_float(&it)?, false)),
            ItemType::Bool => match it.val.as_slice() {
                b"true" => Ok((TV::Bool(true), false)),
                b"false" => Ok((TV::Bool(false), false)),
                _ => bug(format!(
                    "Expected boolean value, but got '{}'.",
                    bstr(&it.val)
                )),
            },
            ItemType::Datetime => Ok((self.value_datetime(&it)?, false)),
            ItemType::Array => Ok((self.value_array(&it)?, true)),
            ItemType::InlineTableStart => Ok((self.value_inline_table(parent_is_array)?, false)),
            t => bug(format!("Unexpected value type: {}", t.name())),
        }
    }

    fn value_integer(&mut self, it: &Item) -> R<TV> {
        let val = bstr(&it.val);
        if !num_underscores_ok(&val) {
            return Err(self.item_err(
                it,
                format!(
                    "Invalid integer {}: underscores must be surrounded by digits",
                    quote(&val)
                ),
            ));
        }
        if num_has_leading_zero(&val) {
            return Err(self.item_err(
                it,
                format!(
                    "Invalid integer {}: cannot have leading zeroes",
                    quote(&val)
                ),
            ));
        }
        match parse_int(&val) {
            Ok(n) => Ok(TV::Int(n)),
            Err(true) => Err(self.item_err(it, format!("{val} is out of range for int64"))),
            Err(false) => bug(format!("Expected integer value, but got '{val}'.")),
        }
    }

    fn value_float(&mut self, it: &Item) -> R<TV> {
        let val = bstr(&it.val);
        let parts: Vec<&str> = val
            .split(['.', 'e', 'E'])
            .filter(|p| !p.is_empty())
            .collect();
        for part in &parts {
            if !num_underscores_ok(part) {
                return Err(self.item_err(
                    it,
                    format!(
                        "Invalid float {}: underscores must be surrounded by digits",
                        quote(&val)
                    ),
                ));
            }
        }
        if !parts.is_empty() && num_has_leading_zero(parts[0]) {
            return Err(self.item_err(
                it,
                format!("Invalid float {}: cannot have leading zeroes", quote(&val)),
            ));
        }
        if !num_periods_ok(&val) {
            return Err(self.item_err(
                it,
                format!(
                    "Invalid float {}: '.' must be followed by one or more digits",
                    quote(&val)
                ),
            ));
        }
        let mut v = val.replace('_', "");
        let mut signbit = false;
        if v == "+nan" || v == "-nan" {
            signbit = v == "-nan";
            v = "nan".into();
        }
        let num = match crate::value::strconv::parse_float(&v) {
            Some(n) => {
                let lit_inf = v.trim_start_matches(['+', '-']).eq_ignore_ascii_case("inf")
                    || v.trim_start_matches(['+', '-'])
                        .eq_ignore_ascii_case("infinity");
                if n.is_infinite() && !lit_inf {
                    return Err(self.item_err(it, format!("{val} is out of range for float64")));
                }
                n
            }
            // Go's ParseFloat: ErrRange past the largest float64.
            None if v.parse::<f64>().is_ok_and(f64::is_infinite) => {
                return Err(self.item_err(it, format!("{val} is out of range for float64")))
            }
            None => return Err(self.item_err(it, format!("Invalid float value: {}", quote(&val)))),
        };
        Ok(TV::Float(if signbit { -num.abs() } else { num }))
    }

    fn value_datetime(&mut self, it: &Item) -> R<TV> {
        let val: String = bstr(&it.val)
            .chars()
            .map(|c| match c {
                'z' => 'Z',
                't' | ' ' => 'T',
                c => c,
            })
            .collect();
        let bad = || format!("invalid datetime: {}", quote(&val));
        for (layout, kind) in DT_TYPES {
            if let Some((dt, zone)) = parse_time(layout, &val, *kind) {
                if missing_leading_zero(&val, layout) {
                    return Err(self.item_err(it, bad()));
                }
                return Ok(TV::Time(dt, zone));
            }
        }
        Err(self.item_err(it, bad()))
    }

    fn value_array(&mut self, _it: &Item) -> R<TV> {
        let ck = self.current_key.clone();
        self.set_type(&ck, true);
        let mut array = Vec::new();
        loop {
            let it = self.next()?;
            if it.typ == ItemType::ArrayEnd {
                break;
            }
            if it.typ == ItemType::CommentStart {
                self.expect(ItemType::Text)?;
                continue;
            }
            let (v, _) = self.value(it, true)?;
            array.push(v);
        }
        Ok(TV::Arr(array))
    }

    fn value_inline_table(&mut self, parent_is_array: bool) -> R<TV> {
        let mut top = TMap::new();
        let outer_context = self.context.clone();
        let outer_key = self.current_key.clone();
        self.context.push(self.current_key.clone());
        let prev_context = self.context.clone();
        self.current_key = String::new();
        self.implicits.insert(key_string(&self.context));
        let ctx = self.context.clone();
        self.add_context(&ctx, parent_is_array)?;
        loop {
            let it = self.next()?;
            if it.typ == ItemType::InlineTableEnd {
                break;
            }
            if it.typ == ItemType::CommentStart {
                self.expect(ItemType::Text)?;
                continue;
            }
            let k = self.next_pos()?;
            let key = self.read_key(k, ItemType::KeyEnd)?;
            self.current_key = key.last().cloned().unwrap_or_default();
            let parent: Vec<String> = key[..key.len().saturating_sub(1)].to_vec();
            for c in &parent {
                let mut cc = self.context.clone();
                cc.push(c.clone());
                self.add_implicit_context(&cc)?;
            }
            let v_item = self.next()?;
            let (val, is_arr) = self.value(v_item, false)?;
            let ck = self.current_key.clone();
            self.set_value(&ck, val.clone())?;
            self.set_type(&ck, is_arr);
            if !insert_path(&mut top, &parent, ck, val) {
                let q = crate::value::quote::quote_go(&key_string(&self.context));
                return Err(self.panicf(format!("{q} is not a table")));
            }
            self.context = prev_context.clone();
        }
        self.context = outer_context;
        self.current_key = outer_key;
        Ok(TV::Table(top))
    }

    fn add_context(&mut self, key: &[String], array: bool) -> R<()> {
        let parent = &key[..key.len().saturating_sub(1)];
        let last = key.last().cloned().unwrap_or_default();
        let mut kc: Vec<String> = Vec::new();
        {
            let mut hash = &mut self.mapping;
            for k in parent {
                kc.push(k.clone());
                if !hash.contains_key(k) {
                    self.implicits.insert(key_string(&kc));
                    hash.insert(k.clone(), TV::Table(TMap::new()));
                }
                hash = match hash.get_mut(k) {
                    Some(TV::ArrTables(t)) if !t.is_empty() => t.last_mut().unwrap(),
                    Some(TV::Table(m)) => m,
                    _ => {
                        let msg =
                            format!("Key '{}' was already created as a hash.", key_string(&kc));
                        return Err(perr(
                            self.pos.line,
                            current_of(&self.context, &self.current_key),
                            msg,
                        ));
                    }
                };
            }
            self.context = kc.clone();
            if array {
                if !hash.contains_key(&last) {
                    hash.insert(last.clone(), TV::ArrTables(Vec::new()));
                }
                match hash.get_mut(&last) {
                    Some(TV::ArrTables(t)) => t.push(TMap::new()),
                    _ => {
                        let msg = format!(
                            "Key '{}' was already created and cannot be used as an array.",
                            key_string(key)
                        );
                        return Err(perr(
                            self.pos.line,
                            current_of(&self.context, &self.current_key),
                            msg,
                        ));
                    }
                }
            }
        }
        if !array {
            self.set_value(&last, TV::Table(TMap::new()))?;
        }
        self.context.push(last);
        Ok(())
    }

    fn set_value(&mut self, key: &str, value: TV) -> R<()> {
        let line = self.pos.line;
        let cur = self.current();
        let mut kc = self.context.clone();
        kc.push(key.to_string());
        let ks = key_string(&kc);
        let hash = match walk(&mut self.mapping, &self.context) {
            Ok(h) => h,
            Err(Walk::NotEstablished(k)) => {
                return bug(format!(
                    "Context for key '{}' has not been established.",
                    key_string(&k)
                ))
            }
            Err(Walk::Defined(k)) => {
                return Err(perr(
                    line,
                    cur,
                    format!("Key '{}' has already been defined.", key_string(&k)),
                ))
            }
        };
        if hash.contains_key(key) {
            if self.key_info.get(&ks) == Some(&true) {
                if !self.implicits.contains(&ks) {
                    return Err(perr(
                        line,
                        cur,
                        format!("Key '{ks}' has already been defined."),
                    ));
                }
                self.implicits.remove(&ks);
                hash.insert(key.to_string(), value);
                return Ok(());
            }
            if self.implicits.contains(&ks) {
                self.implicits.remove(&ks);
                return Ok(());
            }
            return Err(perr(
                line,
                cur,
                format!("Key '{ks}' has already been defined."),
            ));
        }
        hash.insert(key.to_string(), value);
        Ok(())
    }

    fn set_type(&mut self, key: &str, is_array: bool) {
        let mut kc = self.context.clone();
        if !key.is_empty() {
            kc.push(key.to_string());
        }
        if kc.is_empty() {
            kc = vec![String::new()];
        }
        self.key_info.insert(key_string(&kc), is_array);
    }

    fn add_implicit_context(&mut self, key: &[String]) -> R<()> {
        self.implicits.insert(key_string(key));
        self.add_context(key, false)
    }

    fn replace_escapes(&self, it: &Item, s: &str) -> R<String> {
        let b = s.as_bytes();
        let mut out = String::with_capacity(s.len());
        let mut skip = 0usize;
        for (i, c) in s.char_indices() {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            if c != '\\' {
                out.push(c);
                continue;
            }
            let Some(&n) = b.get(i + 1) else {
                return bug("Escape sequence at end of string.".into());
            };
            let hex = |len: usize| -> R<char> {
                let h = s.get(i + 2..i + 2 + len).unwrap_or("");
                self.ascii_escape_to_unicode(it, h)
            };
            match n {
                b' ' | b'\t' => {
                    return Err(self.item_err(it, format!("invalid escape: '\\{}'", n as char)))
                }
                b'b' => out.push('\x08'),
                b't' => out.push('\t'),
                b'n' => out.push('\n'),
                b'f' => out.push('\x0c'),
                b'r' => out.push('\r'),
                b'e' => out.push('\x1b'),
                b'"' => out.push('"'),
                b'\\' => out.push('\\'),
                b'x' => {
                    out.push(hex(2)?);
                    skip = 3;
                    continue;
                }
                b'u' => {
                    out.push(hex(4)?);
                    skip = 5;
                    continue;
                }
                b'U' => {
                    out.push(hex(8)?);
                    skip = 9;
                    continue;
                }
                _ => {
                    return bug(format!(
                        "Expected valid escape code after \\, but got {}.",
                        lex::q_rune(n as char)
                    ))
                }
            }
            skip = 1;
        }
        Ok(out)
    }

    fn ascii_escape_to_unicode(&self, it: &Item, s: &str) -> R<char> {
        let Ok(h) = u32::from_str_radix(&s.to_lowercase(), 16) else {
            return bug(format!(
                "Could not parse '{s}' as a hexadecimal number, but the lexer claims it's OK"
            ));
        };
        match char::from_u32(h) {
            Some(c) => Ok(c),
            None => Err(self.item_err(
                it,
                format!("Escaped character '\\u{s}' is not valid UTF-8."),
            )),
        }
    }
}

/// valueInlineTable's walk of its own table down a dotted key; false when
/// a part is not a table.
fn insert_path(hash: &mut TMap, parent: &[String], key: String, val: TV) -> bool {
    let Some((first, rest)) = parent.split_first() else {
        hash.insert(key, val);
        return true;
    };
    match hash
        .entry(first.clone())
        .or_insert_with(|| TV::Table(TMap::new()))
    {
        TV::Table(m) => insert_path(m, rest, key, val),
        _ => false,
    }
}

fn quote(s: &str) -> String {
    crate::value::quote::quote_go(s)
}

/// strconv.ParseInt(s, 0, 64) on a number the lexer accepted: Err(true) is
/// a range error.
fn parse_int(s: &str) -> Result<i64, bool> {
    let (neg, rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (digits, radix) = if let Some(r) = rest.strip_prefix("0x") {
        (r, 16)
    } else if let Some(r) = rest.strip_prefix("0o") {
        (r, 8)
    } else if let Some(r) = rest.strip_prefix("0b") {
        (r, 2)
    } else {
        (rest, 10)
    };
    let d = digits.replace('_', "");
    if d.is_empty() || !d.chars().all(|c| c.is_digit(radix)) {
        return Err(false);
    }
    let d = d.trim_start_matches('0');
    if d.len() > 30 {
        return Err(true);
    }
    let m = if d.is_empty() {
        0
    } else {
        i128::from_str_radix(d, radix).map_err(|_| true)?
    };
    let v = if neg { -m } else { m };
    i64::try_from(v).map_err(|_| true)
}

fn num_has_leading_zero(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() > 1 && b[0] == b'0' && !(b[1] == b'b' || b[1] == b'o' || b[1] == b'x') {
        return true;
    }
    if b.len() > 2 && (b[0] == b'-' || b[0] == b'+') && b[1] == b'0' {
        return true;
    }
    false
}

fn num_underscores_ok(s: &str) -> bool {
    if matches!(s, "nan" | "+nan" | "-nan" | "inf" | "-inf" | "+inf") {
        return true;
    }
    let mut accept = false;
    for r in s.chars() {
        if r == '_' && !accept {
            return false;
        }
        accept = is_hex(r);
    }
    accept
}

fn num_periods_ok(s: &str) -> bool {
    let mut period = false;
    for r in s.chars() {
        if period && !is_digit(r) {
            return false;
        }
        period = r == '.';
    }
    !period
}

fn strip_first_newline(s: &str) -> &str {
    if let Some(r) = s.strip_prefix('\n') {
        return r;
    }
    if let Some(r) = s.strip_prefix("\r\n") {
        return r;
    }
    s
}

fn strip_escaped_newlines(s: &str) -> String {
    let mut b = String::with_capacity(s.len());
    let mut s = s.to_string();
    let mut i = 0usize;
    loop {
        let Some(ix) = s[i..].find('\\') else {
            b.push_str(&s);
            return b;
        };
        i += ix;
        let sb = s.as_bytes();
        if sb.len() > i + 1 && sb[i + 1] == b'\\' {
            i += 2;
            continue;
        }
        let mut j = i + 1;
        while j < sb.len() && matches!(sb[j], b' ' | b'\t' | b'\r' | b'\n') {
            j += 1;
        }
        if j == i + 1 {
            i += 1;
            continue;
        }
        if !s[i..j].contains('\n') {
            i += 1;
            continue;
        }
        b.push_str(&s[..i]);
        s = s[j..].to_string();
        i = 0;
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Tok {
    Lit(&'static str),
    Year,
    Month,
    Day,
    Hour,
    Min,
    Sec,
    Frac,
    Zone,
}

use Tok::*;

const RFC3339_NANO: &[Tok] = &[
    Year,
    Lit("-"),
    Month,
    Lit("-"),
    Day,
    Lit("T"),
    Hour,
    Lit(":"),
    Min,
    Lit(":"),
    Sec,
    Frac,
    Zone,
];
const LOCAL_DT: &[Tok] = &[
    Year,
    Lit("-"),
    Month,
    Lit("-"),
    Day,
    Lit("T"),
    Hour,
    Lit(":"),
    Min,
    Lit(":"),
    Sec,
    Frac,
];
const LOCAL_DATE: &[Tok] = &[Year, Lit("-"), Month, Lit("-"), Day];
const LOCAL_TIME: &[Tok] = &[Hour, Lit(":"), Min, Lit(":"), Sec, Frac];
const DT_MIN_ZONE: &[Tok] = &[
    Year,
    Lit("-"),
    Month,
    Lit("-"),
    Day,
    Lit("T"),
    Hour,
    Lit(":"),
    Min,
    Zone,
];
const LOCAL_DT_MIN: &[Tok] = &[
    Year,
    Lit("-"),
    Month,
    Lit("-"),
    Day,
    Lit("T"),
    Hour,
    Lit(":"),
    Min,
];
const LOCAL_TIME_MIN: &[Tok] = &[Hour, Lit(":"), Min];

/// The zone a layout's times get: None is time.Local (the layout has a zone).
const DT_TYPES: &[(&[Tok], Option<&str>)] = &[
    (RFC3339_NANO, None),
    (LOCAL_DT, Some("datetime-local")),
    (LOCAL_DATE, Some("date-local")),
    (LOCAL_TIME, Some("time-local")),
    (DT_MIN_ZONE, None),
    (LOCAL_DT_MIN, Some("datetime-local")),
    (LOCAL_TIME_MIN, Some("time-local")),
];

fn layout_string(l: &[Tok]) -> String {
    l.iter()
        .map(|t| match t {
            Lit(s) => *s,
            Year => "2006",
            Month => "01",
            Day => "02",
            Hour => "15",
            Min => "04",
            Sec => "05",
            Frac => ".999999999",
            Zone => "Z07:00",
        })
        .collect()
}

fn missing_leading_zero(d: &str, l: &[Tok]) -> bool {
    let l = layout_string(l);
    let d = d.as_bytes();
    for (i, c) in l.bytes().enumerate() {
        if c == b'.' || c == b'Z' {
            return false;
        }
        if !c.is_ascii_digit() && d.get(i) != Some(&c) {
            return true;
        }
    }
    false
}

fn two_digits(v: &[u8]) -> Option<u32> {
    if v.len() >= 2 && v[0].is_ascii_digit() && v[1].is_ascii_digit() {
        Some(((v[0] - b'0') * 10 + (v[1] - b'0')) as u32)
    } else {
        None
    }
}

/// Go's time.ParseInLocation with one of the layouts above; None on error.
fn parse_time(
    layout: &[Tok],
    value: &str,
    local_kind: Option<&'static str>,
) -> Option<(chrono::NaiveDateTime, TomlZone)> {
    let mut v = value.as_bytes();
    let (mut year, mut month, mut day) = (0i32, 1u32, 1u32);
    let (mut hour, mut min, mut sec, mut nsec) = (0u32, 0u32, 0u32, 0u32);
    let mut zone: Option<i32> = None; // Some(offset); utc flag separately
    let mut utc = false;
    for t in layout {
        match t {
            Lit(s) => v = v.strip_prefix(s.as_bytes())?,
            Year => {
                if v.len() < 4 || !v[..4].iter().all(u8::is_ascii_digit) {
                    return None;
                }
                year = std::str::from_utf8(&v[..4]).ok()?.parse().ok()?;
                v = &v[4..];
            }
            Month => {
                month = two_digits(v)?;
                v = &v[2..];
                if !(1..=12).contains(&month) {
                    return None;
                }
            }
            Day => {
                day = two_digits(v)?;
                v = &v[2..];
            }
            Hour => {
                if v.is_empty() || !v[0].is_ascii_digit() {
                    return None;
                }
                if v.len() < 2 || !v[1].is_ascii_digit() {
                    hour = (v[0] - b'0') as u32;
                    v = &v[1..];
                } else {
                    hour = two_digits(v)?;
                    v = &v[2..];
                }
                if hour >= 24 {
                    return None;
                }
            }
            Min => {
                min = two_digits(v)?;
                v = &v[2..];
                if min >= 60 {
                    return None;
                }
            }
            Sec => {
                sec = two_digits(v)?;
                v = &v[2..];
                if sec >= 60 {
                    return None;
                }
            }
            Frac => {
                if v.len() < 2 || !(v[0] == b'.' || v[0] == b',') || !v[1].is_ascii_digit() {
                    continue;
                }
                let mut i = 0;
                while i + 1 < v.len() && v[i + 1].is_ascii_digit() {
                    i += 1;
                }
                let nbytes = (1 + i).min(10);
                let mut ns: u32 = std::str::from_utf8(&v[1..nbytes]).ok()?.parse().ok()?;
                for _ in 0..(10 - nbytes) {
                    ns *= 10;
                }
                nsec = ns;
                v = &v[1 + i..];
            }
            Zone => {
                if v.first() == Some(&b'Z') {
                    v = &v[1..];
                    utc = true;
                    continue;
                }
                if v.len() < 6 || v[3] != b':' {
                    return None;
                }
                let hr = two_digits(&v[1..3])?;
                let mm = two_digits(&v[4..6])?;
                if hr > 24 || mm > 60 {
                    return None;
                }
                let off = ((hr * 60 + mm) * 60) as i32;
                let off = match v[0] {
                    b'+' => off,
                    b'-' => -off,
                    _ => return None,
                };
                zone = Some(off);
                v = &v[6..];
            }
        }
    }
    if !v.is_empty() {
        return None;
    }
    let date = chrono::NaiveDate::from_ymd_opt(year, month, day)?;
    // Go normalises minutes of offsets >= 60 and 24:00 hours; chrono cannot.
    let dt = date.and_hms_nano_opt(hour, min, sec, nsec)?;
    let z = if utc {
        TomlZone::Utc
    } else if let Some(off) = zone {
        TomlZone::Offset(off)
    } else {
        TomlZone::Local(local_kind.unwrap_or("Local"))
    };
    Some((dt, z))
}

/// The decoded document as template values.
pub fn to_value(m: &TMap) -> crate::value::Value {
    use crate::value::Value;
    fn conv(v: &TV) -> Value {
        match v {
            TV::Str(s) => Value::str(s),
            TV::Int(i) => Value::Int64(*i),
            TV::Float(f) => Value::Float(*f),
            TV::Bool(b) => Value::Bool(*b),
            TV::Time(dt, z) => super::dates::toml_time(*dt, z),
            TV::Arr(a) => Value::list(a.iter().map(conv).collect()),
            TV::Table(t) => to_value(t),
            TV::ArrTables(a) => Value::List(
                std::rc::Rc::new(a.iter().map(to_value).collect()),
                crate::value::ListKind::Maps,
            ),
        }
    }
    Value::map(m.iter().map(|(k, v)| (k.clone(), conv(v))).collect())
}
