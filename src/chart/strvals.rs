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

fn as_map(v: Option<&Value>, key: &str) -> Result<Map, String> {
    match v {
        None => Ok(Map::new()),
        Some(Value::Map(m, _)) => Ok(m.borrow().clone()),
        Some(other) => Err(format!(
            "unable to parse key: interface conversion: interface {{}} is {}, not map[string]interface {{}}",
            if other.is_nil() { "nil".to_string() } else { other.type_name() }
        ))
        .map_err(|e: String| {
            let _ = key;
            e
        }),
    }
}

impl Parser {
    fn read_value(&mut self) -> Result<(Value, bool), String> {
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
                    Stop::Eof => return Err("list must terminate with '}'".into()),
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

    fn key(&mut self, data: &mut Map, level: usize) -> Result<KeyResult, String> {
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
                Err(format!("key {:?} has no value", k))
            }
            Stop::At('[') => {
                let i = self.key_index()?;
                let list = match data.get(&k) {
                    None => Vec::new(),
                    Some(Value::List(l, _)) => l.as_ref().clone(),
                    Some(other) => {
                        return Err(format!(
                            "unable to parse key: interface conversion: interface {{}} is {}, not []interface {{}}",
                            other.type_name()
                        ))
                    }
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
                Err(format!("key {:?} has no value (cannot end with ,)", k))
            }
            Stop::At(_) => {
                let level = level + 1;
                if level > MAX_NESTED {
                    return Err(format!("value name nested level is greater than maximum supported nested level of {MAX_NESTED}"));
                }
                let mut inner = as_map(data.get(&k), &k)?;
                let r = self.key(&mut inner, level);
                if matches!(r, Ok(KeyResult::Done | KeyResult::Eof)) && inner.is_empty() {
                    return Err(format!("key map {:?} has no value", k));
                }
                if !inner.is_empty() && !k.is_empty() {
                    data.insert(k, Value::map(inner));
                }
                r
            }
        }
    }

    fn key_index(&mut self) -> Result<usize, String> {
        let (v, last) = self.sc.until(&[']']);
        if let Stop::Eof = last {
            return Err("error parsing index: EOF".into());
        }
        let i: i64 = v.trim().parse().map_err(|_| {
            format!(
                "error parsing index: strconv.Atoi: parsing {:?}: invalid syntax",
                v
            )
        })?;
        if i < 0 {
            return Err(format!("negative {i} index not allowed"));
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
    ) -> (Vec<Value>, Result<KeyResult, String>) {
        let (k, last) = self.sc.until(&['[', '.', '=']);
        if !k.is_empty() {
            // Go's %q of a []rune: each rune quoted.
            let runes: Vec<String> = k
                .chars()
                .map(|c| crate::gotmpl::format::quote_with(&c.to_string(), '\'', false))
                .collect();
            return (
                list,
                Err(format!(
                    "unexpected data at end of array index: [{}]",
                    runes.join(" ")
                )),
            );
        }
        match last {
            Stop::Eof => (list, Err("EOF".into())),
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
                    Ok(KeyResult::Empty) => return (list, Err("EOF".into())),
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

fn set_index(list: &mut Vec<Value>, i: usize, v: Value) -> Result<(), String> {
    if i > MAX_INDEX {
        return Err(format!(
            "index of {i} is greater than maximum supported index of {MAX_INDEX}"
        ));
    }
    while list.len() <= i {
        list.push(Value::Nil);
    }
    list[i] = v;
    Ok(())
}

fn json_prefix(text: &str) -> Result<(Value, usize), String> {
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
                let v = crate::goyaml::json::decode(&text[..i])?;
                return Ok((v, i));
            }
            _ => {}
        }
    }
    let v = crate::goyaml::json::decode(text)?;
    Ok((v, text.len()))
}

/// Parse one `--set`-style argument into `dest`.
pub fn parse_into(s: &str, dest: &mut Map, mode: Mode) -> Result<(), String> {
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
            Err(e) if e == "EOF" || e == "error parsing index: EOF" => return Ok(()),
            Err(e) => return Err(e),
        }
        if p.sc.i >= p.sc.r.len() {
            return Ok(());
        }
    }
}
