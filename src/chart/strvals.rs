//! Helm's `--set` syntax (pkg/strvals): dotted keys, list indexes, `{a,b}`
//! lists, backslash escapes, and its typing of values.

use crate::value::{Map, Value};

const MAX_INDEX: usize = 65536;
const MAX_NESTED: usize = 30;

#[derive(Clone, Copy, PartialEq)]
pub enum Mode {
    /// `--set`: values are typed (bool, null, int64, string).
    Typed,
    /// `--set-string`: always strings.
    String,
    /// `--set-json`: values are JSON.
    Json,
    /// `--set-literal`: the whole text after the first '=' is one string.
    Literal,
}

struct Scanner {
    r: Vec<char>,
    i: usize,
}

enum Stop {
    Eof,
    At(char),
}

impl Scanner {
    fn until(&mut self, stop: &[char]) -> (String, Stop) {
        let mut v = String::new();
        while self.i < self.r.len() {
            let c = self.r[self.i];
            self.i += 1;
            if stop.contains(&c) {
                return (v, Stop::At(c));
            }
            if c == '\\' {
                if self.i < self.r.len() {
                    v.push(self.r[self.i]);
                    self.i += 1;
                }
                continue;
            }
            v.push(c);
        }
        (v, Stop::Eof)
    }
}

fn typed(v: &str, mode: Mode) -> Value {
    if mode == Mode::String {
        return Value::str(v);
    }
    if v.eq_ignore_ascii_case("true") {
        return Value::Bool(true);
    }
    if v.eq_ignore_ascii_case("false") {
        return Value::Bool(false);
    }
    if v.eq_ignore_ascii_case("null") {
        return Value::Nil;
    }
    if v == "0" {
        return Value::Int64(0);
    }
    if !v.is_empty() && !v.starts_with('0') {
        if let Ok(i) = v.parse::<i64>() {
            return Value::Int64(i);
        }
    }
    Value::str(v)
}

struct Parser {
    sc: Scanner,
    mode: Mode,
}

enum KeyResult {
    Eof,
    Done,
    /// Input ended before a key: Go's key returns io.EOF (an error its
    /// callers see, which parse then takes as the end).
    Empty,
}

/// Why a `--set`-style expression is refused, in the words of Helm's
/// strvals parser (Go's `%q` where it quotes a key).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StrvalsError {
    /// A key path goes through a value that is not a map (Go's failed
    /// type assertion); holds that value's type.
    #[error("unable to parse key: interface conversion: interface {{}} is {0}, not map[string]interface {{}}")]
    NotAMap(String),
    /// An index goes into a value that is not a list.
    #[error(
        "unable to parse key: interface conversion: interface {{}} is {0}, not []interface {{}}"
    )]
    NotAList(String),
    #[error("list must terminate with '}}'")]
    UnterminatedList,
    #[error("key {0:?} has no value")]
    NoValue(String),
    #[error("key {0:?} has no value (cannot end with ,)")]
    NoValueBeforeComma(String),
    #[error("key map {0:?} has no value")]
    EmptyKeyMap(String),
    #[error(
        "value name nested level is greater than maximum supported nested level of {}",
        MAX_NESTED
    )]
    TooDeep,
    /// Go's io.EOF, wrapped by the index parser: the input simply ended.
    #[error("error parsing index: EOF")]
    IndexEof,
    #[error("error parsing index: strconv.Atoi: parsing {0:?}: invalid syntax")]
    IndexSyntax(String),
    #[error("negative {0} index not allowed")]
    NegativeIndex(i64),
    #[error("index of {} is greater than maximum supported index of {}", .0, MAX_INDEX)]
    IndexTooLarge(usize),
    /// Text after `]` where `[`, `.` or `=` should come; Go prints the
    /// text as a []rune with %q, each rune quoted.
    #[error("unexpected data at end of array index: [{}]", quoted_runes(.0))]
    DataAfterIndex(String),
    /// Go's io.EOF: the input ended inside a list item.
    #[error("EOF")]
    Eof,
    /// A `--set-json` value that is not JSON.
    #[error("{0}")]
    Json(#[source] crate::goyaml::json::JsonError),
}

fn quoted_runes(text: &str) -> String {
    let runes: Vec<String> = text
        .chars()
        .map(|c| crate::gotmpl::format::quote_with(&c.to_string(), '\'', false))
        .collect();
    runes.join(" ")
}

fn as_map(v: Option<&Value>) -> Result<Map, StrvalsError> {
    match v {
        None => Ok(Map::new()),
        Some(Value::Map(m, _)) => Ok(m.borrow().clone()),
        Some(other) => Err(StrvalsError::NotAMap(if other.is_nil() {
            "nil".to_string()
        } else {
            other.type_name()
        })),
    }
}

impl Parser {
    fn read_value(&mut self) -> Result<(Value, bool), StrvalsError> {
        // returns (value, hit_eof)
        if self.mode == Mode::Json {
            let start = self.sc.i;
            let text: String = self.sc.r[start..].iter().collect();
            // Consume one JSON value, then an optional comma.
            let (v, used) = json_prefix(&text)?;
            self.sc.i = start + text[..used].chars().count();
            let eof = self.sc.i >= self.sc.r.len();
            if !eof && self.sc.r[self.sc.i] == ',' {
                self.sc.i += 1;
            }
            return Ok((v, eof));
        }
        if self.mode == Mode::Literal {
            let v: String = self.sc.r[self.sc.i..].iter().collect();
            self.sc.i = self.sc.r.len();
            return Ok((Value::string(v), true));
        }
        // A {a,b} list?
        if self.sc.i >= self.sc.r.len() {
            return Ok((Value::str(""), true));
        }
        if self.sc.r[self.sc.i] == '{' {
            self.sc.i += 1;
            let mut list = Vec::new();
            loop {
                let (rs, last) = self.sc.until(&[',', '}']);
                match last {
                    Stop::Eof => return Err(StrvalsError::UnterminatedList),
                    Stop::At('}') => {
                        if self.sc.i < self.sc.r.len() && self.sc.r[self.sc.i] == ',' {
                            self.sc.i += 1;
                        }
                        list.push(typed(&rs, self.mode));
                        let eof = self.sc.i >= self.sc.r.len();
                        return Ok((Value::list(list), eof));
                    }
                    Stop::At(_) => list.push(typed(&rs, self.mode)),
                }
            }
        }
        let (rs, last) = self.sc.until(&[',']);
        Ok((typed(&rs, self.mode), matches!(last, Stop::Eof)))
    }

    fn key(&mut self, data: &mut Map, level: usize) -> Result<KeyResult, StrvalsError> {
        let stop: &[char] = if self.mode == Mode::Literal {
            &['=', '[', '.']
        } else {
            &['=', '[', ',', '.']
        };
        let (k, last) = self.sc.until(stop);
        match last {
            Stop::Eof => {
                if k.is_empty() {
                    return Ok(KeyResult::Empty);
                }
                Err(StrvalsError::NoValue(k))
            }
            Stop::At('[') => {
                let i = self.key_index()?;
                let list = match data.get(&k) {
                    None => Vec::new(),
                    Some(Value::List(l, _)) => l.as_ref().clone(),
                    Some(other) => return Err(StrvalsError::NotAList(other.type_name())),
                };
                // Helm stores the list even when the item fails.
                let (list, r) = self.list_item(list, i, level);
                if !k.is_empty() {
                    data.insert(k, Value::list(list));
                }
                r
            }
            Stop::At('=') => {
                let (v, eof) = self.read_value()?;
                if !k.is_empty() {
                    data.insert(k, v);
                }
                Ok(if eof { KeyResult::Eof } else { KeyResult::Done })
            }
            Stop::At(',') => {
                if !k.is_empty() {
                    data.insert(k.clone(), Value::str(""));
                }
                Err(StrvalsError::NoValueBeforeComma(k))
            }
            Stop::At(_) => {
                let level = level + 1;
                if level > MAX_NESTED {
                    return Err(StrvalsError::TooDeep);
                }
                let mut inner = as_map(data.get(&k))?;
                let r = self.key(&mut inner, level);
                if matches!(r, Ok(KeyResult::Done | KeyResult::Eof)) && inner.is_empty() {
                    return Err(StrvalsError::EmptyKeyMap(k));
                }
                if !inner.is_empty() && !k.is_empty() {
                    data.insert(k, Value::map(inner));
                }
                r
            }
        }
    }

    fn key_index(&mut self) -> Result<usize, StrvalsError> {
        let (v, last) = self.sc.until(&[']']);
        if let Stop::Eof = last {
            return Err(StrvalsError::IndexEof);
        }
        let i: i64 = v
            .trim()
            .parse()
            .map_err(|_| StrvalsError::IndexSyntax(v.clone()))?;
        if i < 0 {
            return Err(StrvalsError::NegativeIndex(i));
        }
        Ok(i as usize)
    }

    /// Helm's listItem: the list comes back whatever happens (the caller
    /// stores it), with the item's outcome.
    fn list_item(
        &mut self,
        mut list: Vec<Value>,
        i: usize,
        level: usize,
    ) -> (Vec<Value>, Result<KeyResult, StrvalsError>) {
        let (k, last) = self.sc.until(&['[', '.', '=']);
        if !k.is_empty() {
            return (list, Err(StrvalsError::DataAfterIndex(k)));
        }
        match last {
            Stop::Eof => (list, Err(StrvalsError::Eof)),
            Stop::At('=') => {
                let (v, eof) = match self.read_value() {
                    Ok(x) => x,
                    Err(e) => return (list, Err(e)),
                };
                if let Err(e) = set_index(&mut list, i, v) {
                    return (list, Err(e));
                }
                (list, Ok(if eof { KeyResult::Eof } else { KeyResult::Done }))
            }
            Stop::At('[') => {
                let next = match self.key_index() {
                    Ok(n) => n,
                    Err(e) => return (list, Err(e)),
                };
                let cur = match list.get(i) {
                    Some(Value::List(l, _)) => l.as_ref().clone(),
                    _ => Vec::new(),
                };
                let (l2, r) = self.list_item(cur, next, level);
                let r = match r {
                    Ok(r) => r,
                    Err(e) => return (list, Err(e)),
                };
                if let Err(e) = set_index(&mut list, i, Value::list(l2)) {
                    return (list, Err(e));
                }
                (list, Ok(r))
            }
            Stop::At(_) => {
                let mut inner = match list.get(i) {
                    Some(Value::Map(m, _)) => m.borrow().clone(),
                    _ => Map::new(),
                };
                let r = match self.key(&mut inner, level) {
                    Ok(KeyResult::Empty) => return (list, Err(StrvalsError::Eof)),
                    Ok(r) => r,
                    Err(e) => return (list, Err(e)),
                };
                if let Err(e) = set_index(&mut list, i, Value::map(inner)) {
                    return (list, Err(e));
                }
                (list, Ok(r))
            }
        }
    }
}

fn set_index(list: &mut Vec<Value>, i: usize, v: Value) -> Result<(), StrvalsError> {
    if i > MAX_INDEX {
        return Err(StrvalsError::IndexTooLarge(i));
    }
    while list.len() <= i {
        list.push(Value::Nil);
    }
    list[i] = v;
    Ok(())
}

fn json_prefix(text: &str) -> Result<(Value, usize), StrvalsError> {
    // Find the longest prefix up to a top-level comma that decodes.
    let mut depth = 0i32;
    let mut in_str = false;
    let mut esc = false;
    for (i, c) in text.char_indices() {
        if in_str {
            if esc {
                esc = false;
            } else if c == '\\' {
                esc = true;
            } else if c == '"' {
                in_str = false;
            }
            continue;
        }
        match c {
            '"' => in_str = true,
            '{' | '[' => depth += 1,
            '}' | ']' => depth -= 1,
            ',' if depth == 0 => {
                let v = crate::goyaml::json::decode(&text[..i]).map_err(StrvalsError::Json)?;
                return Ok((v, i));
            }
            _ => {}
        }
    }
    let v = crate::goyaml::json::decode(text).map_err(StrvalsError::Json)?;
    Ok((v, text.len()))
}

/// Parse one `--set`-style argument into `dest`.
pub fn parse_into(s: &str, dest: &mut Map, mode: Mode) -> Result<(), StrvalsError> {
    let mut p = Parser {
        sc: Scanner {
            r: s.chars().collect(),
            i: 0,
        },
        mode,
    };
    loop {
        match p.key(dest, 0) {
            Ok(KeyResult::Eof | KeyResult::Empty) => return Ok(()),
            Ok(KeyResult::Done) => {}
            // parse stops without error on io.EOF, wrapped or not.
            Err(StrvalsError::Eof | StrvalsError::IndexEof) => return Ok(()),
            Err(e) => return Err(e),
        }
        if p.sc.i >= p.sc.r.len() {
            return Ok(());
        }
    }
}
