//! BurntSushi/toml v1.6.0's lexer (lex.go), state function by state
//! function: the same items, the same error texts and the same line numbers.

use crate::value::quote::{quote_go, quote_with};

pub const EOF: char = '\0';

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ItemType {
    Error,
    Eof,
    Text,
    String,
    StringEsc,
    RawString,
    MultilineString,
    RawMultilineString,
    Bool,
    Integer,
    Float,
    Datetime,
    Array,
    ArrayEnd,
    TableStart,
    TableEnd,
    ArrayTableStart,
    ArrayTableEnd,
    KeyStart,
    KeyEnd,
    CommentStart,
    InlineTableStart,
    InlineTableEnd,
}

impl ItemType {
    pub fn name(self) -> &'static str {
        use ItemType::*;
        match self {
            Error => "Error",
            Eof => "EOF",
            Text => "Text",
            String | StringEsc | RawString | MultilineString | RawMultilineString => "String",
            Bool => "Bool",
            Integer => "Integer",
            Float => "Float",
            Datetime => "DateTime",
            Array => "Array",
            ArrayEnd => "ArrayEnd",
            TableStart => "TableStart",
            TableEnd => "TableEnd",
            ArrayTableStart => "ArrayTableStart",
            ArrayTableEnd => "ArrayTableEnd",
            KeyStart => "KeyStart",
            KeyEnd => "KeyEnd",
            CommentStart => "CommentStart",
            InlineTableStart => "InlineTableStart",
            InlineTableEnd => "InlineTableEnd",
        }
    }
}

#[derive(Clone, Copy, Debug, Default)]
pub struct Position {
    pub line: i64,
    pub start: i64,
    pub len: i64,
}

#[derive(Clone, Debug)]
pub struct Item {
    pub typ: ItemType,
    pub val: Vec<u8>,
    pub err: Option<String>,
    pub pos: Position,
}

#[derive(Clone, Copy)]
pub struct State(fn(&mut Lexer) -> Option<State>);

fn st(f: fn(&mut Lexer) -> Option<State>) -> Option<State> {
    Some(State(f))
}

pub struct Lexer {
    pub input: Vec<u8>,
    start: usize,
    pos: usize,
    line: i64,
    state: Option<State>,
    items: std::collections::VecDeque<Item>,
    esc: bool,
    prev_widths: [usize; 4],
    nprev: usize,
    at_eof: bool,
    stack: Vec<State>,
    /// A Go panic in the lexer ("BUG in lexer: ...").
    pub bug: Option<String>,
}

/// Go's `%q` of a rune.
pub fn q_rune(r: char) -> String {
    quote_with(&r.to_string(), '\'', false)
}

/// Go's `%q` of a string of bytes.
pub fn q_bytes(b: &[u8]) -> String {
    quote_go(&crate::value::gostr::from_bytes(b))
}

pub fn bstr(b: &[u8]) -> String {
    crate::value::gostr::from_bytes(b).into_owned()
}

/// utf8.DecodeRune: (RuneError, 1) for a byte that starts no valid sequence.
fn decode_rune(b: &[u8]) -> (char, usize, bool) {
    let end = b.len().min(4);
    match std::str::from_utf8(&b[..end]) {
        Ok(s) => {
            let c = s.chars().next().unwrap_or('\u{FFFD}');
            (c, c.len_utf8(), false)
        }
        Err(e) => {
            if e.valid_up_to() > 0 {
                let s = std::str::from_utf8(&b[..e.valid_up_to()]).unwrap_or("");
                let c = s.chars().next().unwrap_or('\u{FFFD}');
                (c, c.len_utf8(), false)
            } else {
                ('\u{FFFD}', 1, true)
            }
        }
    }
}

impl Lexer {
    pub fn new(input: Vec<u8>) -> Lexer {
        Lexer {
            input,
            start: 0,
            pos: 0,
            line: 1,
            state: st(lex_top),
            items: Default::default(),
            esc: false,
            prev_widths: [0; 4],
            nprev: 0,
            at_eof: false,
            stack: Vec::new(),
            bug: None,
        }
    }

    /// The next item; Err for a Go panic inside the lexer.
    pub fn next_item(&mut self) -> Result<Item, String> {
        loop {
            if let Some(it) = self.items.pop_front() {
                return Ok(it);
            }
            if let Some(b) = &self.bug {
                return Err(b.clone());
            }
            match self.state {
                Some(State(f)) => self.state = f(self),
                // Go would call a nil function.
                None => {
                    return Err(
                        "runtime error: invalid memory address or nil pointer dereference".into(),
                    )
                }
            }
        }
    }

    fn set_bug(&mut self, s: &str) {
        if self.bug.is_none() {
            self.bug = Some(s.to_string());
        }
    }

    fn push(&mut self, s: fn(&mut Lexer) -> Option<State>) {
        self.stack.push(State(s));
    }

    fn pop(&mut self) -> Option<State> {
        match self.stack.pop() {
            Some(s) => Some(s),
            None => {
                self.set_bug("BUG in lexer: no states to pop");
                None
            }
        }
    }

    fn current(&self) -> &[u8] {
        if self.start > self.pos {
            return &[];
        }
        &self.input[self.start..self.pos]
    }

    fn get_pos(&self) -> Position {
        let mut p = Position {
            line: self.line,
            start: self.start as i64,
            len: self.pos as i64 - self.start as i64,
        };
        if p.len <= 0 {
            p.len = 1;
        }
        p
    }

    fn emit(&mut self, typ: ItemType) {
        if self.start > self.pos {
            let b = self.input.get(self.pos).copied().unwrap_or(0);
            self.error(format!("invalid UTF-8 byte: 0x{:02x}", b));
            return;
        }
        let it = Item {
            typ,
            pos: self.get_pos(),
            val: self.current().to_vec(),
            err: None,
        };
        self.items.push_back(it);
        self.start = self.pos;
    }

    fn emit_trim(&mut self, typ: ItemType) {
        let cur = self.current();
        let s = bstr(cur);
        let it = Item {
            typ,
            pos: self.get_pos(),
            val: s.trim().as_bytes().to_vec(),
            err: None,
        };
        self.items.push_back(it);
        self.start = self.pos;
    }

    fn next(&mut self) -> char {
        if self.at_eof {
            self.set_bug("BUG in lexer: next called after EOF");
            return EOF;
        }
        if self.pos >= self.input.len() {
            self.at_eof = true;
            return EOF;
        }
        if self.input[self.pos] == b'\n' {
            self.line += 1;
        }
        self.prev_widths[3] = self.prev_widths[2];
        self.prev_widths[2] = self.prev_widths[1];
        self.prev_widths[1] = self.prev_widths[0];
        if self.nprev < 4 {
            self.nprev += 1;
        }
        let (r, w, bad) = decode_rune(&self.input[self.pos..]);
        if bad {
            let b = self.input[self.pos];
            self.error(format!("invalid UTF-8 byte: 0x{:02x}", b));
            return '\u{FFFD}';
        }
        if is_control(r)
            || (r == '\r'
                && (self.input.len() - 1 == self.pos || self.input[self.pos + 1] != b'\n'))
        {
            self.error_control_char(r);
            return '\u{FFFD}';
        }
        self.prev_widths[0] = w;
        self.pos += w;
        r
    }

    fn ignore(&mut self) {
        self.start = self.pos;
    }

    fn backup(&mut self) {
        if self.at_eof {
            self.at_eof = false;
            return;
        }
        if self.nprev < 1 {
            self.set_bug("BUG in lexer: backed up too far");
            return;
        }
        let w = self.prev_widths[0];
        self.prev_widths[0] = self.prev_widths[1];
        self.prev_widths[1] = self.prev_widths[2];
        self.prev_widths[2] = self.prev_widths[3];
        self.nprev -= 1;
        self.pos = self.pos.saturating_sub(w);
        if self.pos < self.input.len() && self.input[self.pos] == b'\n' {
            self.line -= 1;
        }
    }

    fn accept(&mut self, valid: char) -> bool {
        if self.next() == valid {
            return true;
        }
        self.backup();
        false
    }

    fn peek(&mut self) -> char {
        let r = self.next();
        self.backup();
        r
    }

    fn skip(&mut self, pred: fn(char) -> bool) {
        loop {
            let r = self.next();
            if self.bug.is_some() {
                return;
            }
            if pred(r) {
                continue;
            }
            self.backup();
            self.ignore();
            return;
        }
    }

    fn error(&mut self, err: String) -> Option<State> {
        if self.at_eof {
            return self.error_prev_line(err);
        }
        let pos = self.get_pos();
        self.items.push_back(Item {
            typ: ItemType::Error,
            pos,
            err: Some(err),
            val: vec![],
        });
        None
    }

    fn error_prev_line(&mut self, err: String) -> Option<State> {
        let mut pos = self.get_pos();
        pos.line -= 1;
        pos.len = 1;
        pos.start = self.pos as i64 - 1;
        self.items.push_back(Item {
            typ: ItemType::Error,
            pos,
            err: Some(err),
            val: vec![],
        });
        None
    }

    fn error_pos(&mut self, start: i64, length: i64, err: String) -> Option<State> {
        let mut pos = self.get_pos();
        pos.start = start;
        pos.len = length;
        self.items.push_back(Item {
            typ: ItemType::Error,
            pos,
            err: Some(err),
            val: vec![],
        });
        None
    }

    fn errorf(&mut self, msg: String) -> Option<State> {
        if self.at_eof {
            let mut pos = self.get_pos();
            if self.pos >= 1 && self.input[self.pos - 1] == b'\n' {
                pos.line -= 1;
            }
            pos.len = 1;
            pos.start = self.pos as i64 - 1;
            self.items.push_back(Item {
                typ: ItemType::Error,
                pos,
                err: Some(msg),
                val: vec![],
            });
            return None;
        }
        let pos = self.get_pos();
        self.items.push_back(Item {
            typ: ItemType::Error,
            pos,
            err: Some(msg),
            val: vec![],
        });
        None
    }

    fn error_control_char(&mut self, cc: char) -> Option<State> {
        self.error_pos(
            self.pos as i64 - 1,
            1,
            format!(
                "TOML files cannot contain control characters: '0x{:02x}'",
                cc as u32
            ),
        )
    }
}

const ERR_STRING_NL: &str = "strings cannot contain newlines";

fn lex_skip(lx: &mut Lexer, next: fn(&mut Lexer) -> Option<State>) -> Option<State> {
    lx.ignore();
    st(next)
}

fn lex_top(lx: &mut Lexer) -> Option<State> {
    let r = lx.next();
    if is_whitespace(r) || is_nl(r) {
        return lex_skip(lx, lex_top);
    }
    match r {
        '#' => {
            lx.push(lex_top);
            return st(lex_comment_start);
        }
        '[' => return st(lex_table_start),
        EOF => {
            if lx.pos > lx.start {
                return lx.errorf("unexpected EOF".into());
            }
            lx.emit(ItemType::Eof);
            return None;
        }
        _ => {}
    }
    lx.backup();
    lx.push(lex_top_end);
    st(lex_key_start)
}

fn lex_top_end(lx: &mut Lexer) -> Option<State> {
    let r = lx.next();
    if r == '#' {
        lx.push(lex_top);
        return st(lex_comment_start);
    }
    if is_whitespace(r) {
        return st(lex_top_end);
    }
    if is_nl(r) {
        lx.ignore();
        return st(lex_top);
    }
    if r == EOF {
        lx.emit(ItemType::Eof);
        return None;
    }
    lx.errorf(format!(
        "expected a top-level item to end with a newline, comment, or EOF, but got {} instead",
        q_rune(r)
    ))
}

fn lex_table_start(lx: &mut Lexer) -> Option<State> {
    if lx.peek() == '[' {
        lx.next();
        lx.emit(ItemType::ArrayTableStart);
        lx.push(lex_array_table_end);
    } else {
        lx.emit(ItemType::TableStart);
        lx.push(lex_table_end);
    }
    st(lex_table_name_start)
}

fn lex_table_end(lx: &mut Lexer) -> Option<State> {
    lx.emit(ItemType::TableEnd);
    st(lex_top_end)
}

fn lex_array_table_end(lx: &mut Lexer) -> Option<State> {
    let r = lx.next();
    if r != ']' {
        return lx.errorf(format!(
            "expected end of table array name delimiter ']', but got {} instead",
            q_rune(r)
        ));
    }
    lx.emit(ItemType::ArrayTableEnd);
    st(lex_top_end)
}

fn lex_table_name_start(lx: &mut Lexer) -> Option<State> {
    lx.skip(is_whitespace);
    let r = lx.peek();
    if r == ']' || r == EOF {
        return lx.errorf("unexpected end of table name (table names cannot be empty)".into());
    }
    if r == '.' {
        return lx.errorf("unexpected table separator (table names cannot be empty)".into());
    }
    if r == '"' || r == '\'' {
        lx.ignore();
        lx.push(lex_table_name_end);
        return st(lex_quoted_name);
    }
    lx.push(lex_table_name_end);
    st(lex_bare_name)
}

fn lex_table_name_end(lx: &mut Lexer) -> Option<State> {
    lx.skip(is_whitespace);
    let r = lx.next();
    if r == '.' {
        lx.ignore();
        return st(lex_table_name_start);
    }
    if r == ']' {
        return lx.pop();
    }
    lx.errorf(format!(
        "expected '.' or ']' to end table name, but got {} instead",
        q_rune(r)
    ))
}

fn lex_bare_name(lx: &mut Lexer) -> Option<State> {
    let r = lx.next();
    if is_bare_key_char(r) {
        return st(lex_bare_name);
    }
    lx.backup();
    lx.emit(ItemType::Text);
    lx.pop()
}

fn lex_quoted_name(lx: &mut Lexer) -> Option<State> {
    let r = lx.next();
    if r == '"' {
        lx.ignore();
        return st(lex_string);
    }
    if r == '\'' {
        lx.ignore();
        return st(lex_raw_string);
    }
    if is_whitespace(r) {
        return lex_skip(lx, lex_value);
    }
    if r == EOF {
        return lx.errorf("unexpected EOF; expected value".into());
    }
    lx.errorf(format!("expected value but found {} instead", q_rune(r)))
}

fn lex_key_start(lx: &mut Lexer) -> Option<State> {
    lx.skip(is_whitespace);
    let r = lx.peek();
    if r == '=' || r == EOF {
        return lx.errorf("unexpected '=': key name appears blank".into());
    }
    if r == '.' {
        return lx.errorf("unexpected '.': keys cannot start with a '.'".into());
    }
    if r == '"' || r == '\'' {
        lx.ignore();
    }
    lx.emit(ItemType::KeyStart);
    st(lex_key_name_start)
}

fn lex_key_name_start(lx: &mut Lexer) -> Option<State> {
    lx.skip(is_whitespace);
    let r = lx.peek();
    if r == '"' || r == '\'' {
        lx.ignore();
        lx.push(lex_key_end);
        return st(lex_quoted_name);
    }
    if r == '=' || r == EOF {
        return lx.errorf("unexpected '='".into());
    }
    if r == '.' {
        return lx.errorf("unexpected '.'".into());
    }
    lx.push(lex_key_end);
    st(lex_bare_name)
}

fn lex_key_end(lx: &mut Lexer) -> Option<State> {
    lx.skip(is_whitespace);
    let r = lx.next();
    if is_whitespace(r) {
        return lex_skip(lx, lex_key_end);
    }
    if r == EOF {
        return lx.errorf("unexpected EOF; expected key separator '='".into());
    }
    if r == '.' {
        lx.ignore();
        return st(lex_key_name_start);
    }
    if r == '=' {
        lx.emit(ItemType::KeyEnd);
        return lex_skip(lx, lex_value);
    }
    let msg = format!("expected '.' or '=', but got {} instead", q_rune(r));
    if r == '\n' {
        return lx.error_prev_line(msg);
    }
    lx.errorf(msg)
}

fn lex_value(lx: &mut Lexer) -> Option<State> {
    let r = lx.next();
    if is_whitespace(r) {
        return lex_skip(lx, lex_value);
    }
    if is_digit(r) {
        lx.backup();
        return st(lex_number_or_date_start);
    }
    match r {
        '[' => {
            lx.ignore();
            lx.emit(ItemType::Array);
            return st(lex_array_value);
        }
        '{' => {
            lx.ignore();
            lx.emit(ItemType::InlineTableStart);
            return st(lex_inline_table_value);
        }
        '"' => {
            if lx.accept('"') {
                if lx.accept('"') {
                    lx.ignore();
                    return st(lex_multiline_string);
                }
                lx.backup();
            }
            lx.ignore();
            return st(lex_string);
        }
        '\'' => {
            if lx.accept('\'') {
                if lx.accept('\'') {
                    lx.ignore();
                    return st(lex_multiline_raw_string);
                }
                lx.backup();
            }
            lx.ignore();
            return st(lex_raw_string);
        }
        '.' => return lx.errorf("floats must start with a digit, not '.'".into()),
        'i' | 'n' => {
            if (lx.accept('n') && lx.accept('f')) || (lx.accept('a') && lx.accept('n')) {
                lx.emit(ItemType::Float);
                return lx.pop();
            }
        }
        '-' | '+' => return st(lex_decimal_number_start),
        _ => {}
    }
    if crate::value::gounicode::is_letter(r) {
        lx.backup();
        return st(lex_bool);
    }
    if r == EOF {
        return lx.errorf("unexpected EOF; expected value".into());
    }
    let msg = format!("expected value but found {} instead", q_rune(r));
    if r == '\n' {
        return lx.error_prev_line(msg);
    }
    lx.errorf(msg)
}

fn lex_array_value(lx: &mut Lexer) -> Option<State> {
    let r = lx.next();
    if is_whitespace(r) || is_nl(r) {
        return lex_skip(lx, lex_array_value);
    }
    if r == '#' {
        lx.push(lex_array_value);
        return st(lex_comment_start);
    }
    if r == ',' {
        return lx.errorf("unexpected comma".into());
    }
    if r == ']' {
        return st(lex_array_end);
    }
    lx.backup();
    lx.push(lex_array_value_end);
    st(lex_value)
}

fn lex_array_value_end(lx: &mut Lexer) -> Option<State> {
    let r = lx.next();
    if is_whitespace(r) || is_nl(r) {
        return lex_skip(lx, lex_array_value_end);
    }
    if r == '#' {
        lx.push(lex_array_value_end);
        return st(lex_comment_start);
    }
    if r == ',' {
        lx.ignore();
        return st(lex_array_value);
    }
    if r == ']' {
        return st(lex_array_end);
    }
    lx.errorf(format!(
        "expected a comma (',') or array terminator (']'), but got {}",
        rune_or_eof(r)
    ))
}

fn lex_array_end(lx: &mut Lexer) -> Option<State> {
    lx.ignore();
    lx.emit(ItemType::ArrayEnd);
    lx.pop()
}

fn lex_inline_table_value(lx: &mut Lexer) -> Option<State> {
    let r = lx.next();
    if is_whitespace(r) || is_nl(r) {
        return lex_skip(lx, lex_inline_table_value);
    }
    if r == '#' {
        lx.push(lex_inline_table_value);
        return st(lex_comment_start);
    }
    if r == ',' {
        return lx.errorf("unexpected comma".into());
    }
    if r == '}' {
        return st(lex_inline_table_end);
    }
    lx.backup();
    lx.push(lex_inline_table_value_end);
    st(lex_key_start)
}

fn lex_inline_table_value_end(lx: &mut Lexer) -> Option<State> {
    let r = lx.next();
    if is_whitespace(r) || is_nl(r) {
        return lex_skip(lx, lex_inline_table_value_end);
    }
    if r == '#' {
        lx.push(lex_inline_table_value_end);
        return st(lex_comment_start);
    }
    if r == ',' {
        lx.ignore();
        lx.skip(is_whitespace);
        if lx.peek() == '}' {
            return st(lex_inline_table_value_end);
        }
        return st(lex_inline_table_value);
    }
    if r == '}' {
        return st(lex_inline_table_end);
    }
    lx.errorf(format!(
        "expected a comma or an inline table terminator '}}', but got {} instead",
        rune_or_eof(r)
    ))
}

fn rune_or_eof(r: char) -> String {
    if r == EOF {
        return "end of file".into();
    }
    format!("'{}'", r)
}

fn lex_inline_table_end(lx: &mut Lexer) -> Option<State> {
    lx.ignore();
    lx.emit(ItemType::InlineTableEnd);
    lx.pop()
}

fn lex_string(lx: &mut Lexer) -> Option<State> {
    let r = lx.next();
    if r == EOF {
        return lx.errorf("unexpected EOF; expected '\"'".into());
    }
    if is_nl(r) {
        return lx.error_prev_line(ERR_STRING_NL.into());
    }
    if r == '\\' {
        lx.push(lex_string);
        return st(lex_string_escape);
    }
    if r == '"' {
        lx.backup();
        if lx.esc {
            lx.esc = false;
            lx.emit(ItemType::StringEsc);
        } else {
            lx.emit(ItemType::String);
        }
        lx.next();
        lx.ignore();
        return lx.pop();
    }
    st(lex_string)
}

fn ends_with(b: &[u8], s: &str) -> bool {
    b.ends_with(s.as_bytes())
}

fn lex_multiline_string(lx: &mut Lexer) -> Option<State> {
    let r = lx.next();
    match r {
        EOF => lx.errorf("unexpected EOF; expected '\"\"\"'".into()),
        '\\' => st(lex_multiline_string_escape),
        '"' => {
            if lx.accept('"') {
                if lx.accept('"') {
                    if lx.peek() == '"' {
                        if ends_with(lx.current(), "\"\"\"\"\"")
                            && !ends_with(lx.current(), "\\\"\"\"\"\"")
                        {
                            return lx.errorf("unexpected '\"\"\"\"\"\"'".into());
                        }
                        lx.backup();
                        lx.backup();
                        return st(lex_multiline_string);
                    }
                    lx.backup();
                    lx.backup();
                    lx.backup();
                    lx.esc = false;
                    lx.emit(ItemType::MultilineString);
                    lx.next();
                    lx.next();
                    lx.next();
                    lx.ignore();
                    return lx.pop();
                }
                lx.backup();
            }
            st(lex_multiline_string)
        }
        _ => st(lex_multiline_string),
    }
}

fn lex_raw_string(lx: &mut Lexer) -> Option<State> {
    let r = lx.next();
    if r == EOF {
        return lx.errorf("unexpected EOF; expected \"'\"".into());
    }
    if is_nl(r) {
        return lx.error_prev_line(ERR_STRING_NL.into());
    }
    if r == '\'' {
        lx.backup();
        lx.emit(ItemType::RawString);
        lx.next();
        lx.ignore();
        return lx.pop();
    }
    st(lex_raw_string)
}

fn lex_multiline_raw_string(lx: &mut Lexer) -> Option<State> {
    let r = lx.next();
    match r {
        EOF => lx.errorf("unexpected EOF; expected \"'''\"".into()),
        '\'' => {
            if lx.accept('\'') {
                if lx.accept('\'') {
                    if lx.peek() == '\'' {
                        if ends_with(lx.current(), "'''''") {
                            return lx.errorf("unexpected \"''''''\"".into());
                        }
                        lx.backup();
                        lx.backup();
                        return st(lex_multiline_raw_string);
                    }
                    lx.backup();
                    lx.backup();
                    lx.backup();
                    lx.emit(ItemType::RawMultilineString);
                    lx.next();
                    lx.next();
                    lx.next();
                    lx.ignore();
                    return lx.pop();
                }
                lx.backup();
            }
            st(lex_multiline_raw_string)
        }
        _ => st(lex_multiline_raw_string),
    }
}

fn lex_multiline_string_escape(lx: &mut Lexer) -> Option<State> {
    if is_nl(lx.next()) {
        return st(lex_multiline_string);
    }
    lx.backup();
    lx.push(lex_multiline_string);
    lex_string_escape(lx)
}

fn lex_string_escape(lx: &mut Lexer) -> Option<State> {
    lx.esc = true;
    let r = lx.next();
    match r {
        'e' | 'b' | 't' | 'n' | 'f' | 'r' | '"' | ' ' | '\t' | '\\' => lx.pop(),
        'x' => st(lex_hex_escape),
        'u' => st(lex_short_unicode_escape),
        'U' => st(lex_long_unicode_escape),
        _ => lx.error(format!("invalid escape in string '\\{}'", r)),
    }
}

fn hex_escape(lx: &mut Lexer, n: usize, what: &str, c: char) -> Option<State> {
    for _ in 0..n {
        let r = lx.next();
        if !is_hex(r) {
            let cur = q_bytes(lx.current());
            return lx.errorf(format!(
                "expected {what} hexadecimal digits after '\\{c}', but got {cur} instead"
            ));
        }
    }
    lx.pop()
}

fn lex_hex_escape(lx: &mut Lexer) -> Option<State> {
    hex_escape(lx, 2, "two", 'x')
}

fn lex_short_unicode_escape(lx: &mut Lexer) -> Option<State> {
    hex_escape(lx, 4, "four", 'u')
}

fn lex_long_unicode_escape(lx: &mut Lexer) -> Option<State> {
    hex_escape(lx, 8, "eight", 'U')
}

fn lex_number_or_date_start(lx: &mut Lexer) -> Option<State> {
    if lx.next() == '0' {
        return st(lex_base_number_or_date);
    }
    st(lex_number_or_date)
}

fn lex_number_or_date(lx: &mut Lexer) -> Option<State> {
    let r = lx.next();
    if is_digit(r) {
        return st(lex_number_or_date);
    }
    match r {
        '-' | ':' => return st(lex_datetime),
        '_' => return st(lex_decimal_number),
        '.' | 'e' | 'E' => return st(lex_float),
        _ => {}
    }
    lx.backup();
    lx.emit(ItemType::Integer);
    lx.pop()
}

fn lex_datetime(lx: &mut Lexer) -> Option<State> {
    let r = lx.next();
    if is_digit(r) {
        return st(lex_datetime);
    }
    if matches!(r, '-' | ':' | 'T' | 't' | ' ' | '.' | 'Z' | 'z' | '+') {
        return st(lex_datetime);
    }
    lx.backup();
    lx.emit_trim(ItemType::Datetime);
    lx.pop()
}

fn lex_based_integer(
    lx: &mut Lexer,
    ok: fn(char) -> bool,
    again: fn(&mut Lexer) -> Option<State>,
) -> Option<State> {
    let r = lx.next();
    if ok(r) || r == '_' {
        return st(again);
    }
    lx.backup();
    lx.emit(ItemType::Integer);
    lx.pop()
}

fn lex_hex_integer(lx: &mut Lexer) -> Option<State> {
    lex_based_integer(lx, is_hex, lex_hex_integer)
}

fn lex_octal_integer(lx: &mut Lexer) -> Option<State> {
    lex_based_integer(lx, is_octal, lex_octal_integer)
}

fn lex_binary_integer(lx: &mut Lexer) -> Option<State> {
    lex_based_integer(lx, is_binary, lex_binary_integer)
}

fn lex_decimal_number(lx: &mut Lexer) -> Option<State> {
    let r = lx.next();
    if is_digit(r) {
        return st(lex_decimal_number);
    }
    match r {
        '.' | 'e' | 'E' => return st(lex_float),
        '_' => return st(lex_decimal_number),
        _ => {}
    }
    lx.backup();
    lx.emit(ItemType::Integer);
    lx.pop()
}

fn lex_decimal_number_start(lx: &mut Lexer) -> Option<State> {
    let r = lx.next();
    match r {
        'i' => {
            if !lx.accept('n') || !lx.accept('f') {
                let cur = bstr(lx.current());
                return lx.errorf(format!("invalid float: '{cur}'"));
            }
            lx.emit(ItemType::Float);
            return lx.pop();
        }
        'n' => {
            if !lx.accept('a') || !lx.accept('n') {
                let cur = bstr(lx.current());
                return lx.errorf(format!("invalid float: '{cur}'"));
            }
            lx.emit(ItemType::Float);
            return lx.pop();
        }
        '0' => {
            let p = lx.peek();
            if matches!(p, 'b' | 'o' | 'x') {
                let cur = bstr(lx.current());
                return lx.errorf(format!(
                    "cannot use sign with non-decimal numbers: '{cur}{p}'"
                ));
            }
        }
        '.' => return lx.errorf("floats must start with a digit, not '.'".into()),
        _ => {}
    }
    if is_digit(r) {
        return st(lex_decimal_number);
    }
    lx.errorf(format!("expected a digit but got {}", q_rune(r)))
}

fn lex_base_number_or_date(lx: &mut Lexer) -> Option<State> {
    let r = lx.next();
    if is_digit(r) {
        return st(lex_number_or_date);
    }
    match r {
        '_' => return st(lex_decimal_number),
        '.' | 'e' | 'E' => return st(lex_float),
        'b' => {
            let p = lx.peek();
            if !is_binary(p) {
                let cur = bstr(lx.current());
                lx.errorf(format!("not a binary number: '{cur}{p}'"));
            }
            return st(lex_binary_integer);
        }
        'o' => {
            let p = lx.peek();
            if !is_octal(p) {
                let cur = bstr(lx.current());
                lx.errorf(format!("not an octal number: '{cur}{p}'"));
            }
            return st(lex_octal_integer);
        }
        'x' => {
            let p = lx.peek();
            if !is_hex(p) {
                let cur = bstr(lx.current());
                lx.errorf(format!("not a hexadecimal number: '{cur}{p}'"));
            }
            return st(lex_hex_integer);
        }
        _ => {}
    }
    lx.backup();
    lx.emit(ItemType::Integer);
    lx.pop()
}

fn lex_float(lx: &mut Lexer) -> Option<State> {
    let r = lx.next();
    if is_digit(r) {
        return st(lex_float);
    }
    if matches!(r, '_' | '.' | '-' | '+' | 'e' | 'E') {
        return st(lex_float);
    }
    lx.backup();
    lx.emit(ItemType::Float);
    lx.pop()
}

fn lex_bool(lx: &mut Lexer) -> Option<State> {
    let mut rs = String::new();
    loop {
        let r = lx.next();
        if lx.bug.is_some() {
            return None;
        }
        if !crate::value::gounicode::is_letter(r) {
            lx.backup();
            break;
        }
        rs.push(r);
    }
    if rs == "true" || rs == "false" {
        lx.emit(ItemType::Bool);
        return lx.pop();
    }
    lx.errorf(format!(
        "expected value but found {} instead",
        quote_go(&rs)
    ))
}

fn lex_comment_start(lx: &mut Lexer) -> Option<State> {
    lx.ignore();
    lx.emit(ItemType::CommentStart);
    st(lex_comment)
}

fn lex_comment(lx: &mut Lexer) -> Option<State> {
    let r = lx.next();
    if is_nl(r) || r == EOF {
        lx.backup();
        lx.emit(ItemType::Text);
        return lx.pop();
    }
    st(lex_comment)
}

pub fn is_whitespace(r: char) -> bool {
    r == '\t' || r == ' '
}
pub fn is_nl(r: char) -> bool {
    r == '\n' || r == '\r'
}
pub fn is_control(r: char) -> bool {
    match r {
        '\t' | '\r' | '\n' => false,
        _ => (r as u32) <= 0x1f || r as u32 == 0x7f,
    }
}
pub fn is_digit(r: char) -> bool {
    r.is_ascii_digit()
}
pub fn is_binary(r: char) -> bool {
    r == '0' || r == '1'
}
pub fn is_octal(r: char) -> bool {
    ('0'..='7').contains(&r)
}
pub fn is_hex(r: char) -> bool {
    let l = (r as u32) | 0x20;
    r.is_ascii_digit() || (l >= 'a' as u32 && l <= 'f' as u32)
}
pub fn is_bare_key_char(r: char) -> bool {
    r.is_ascii_alphanumeric() || r == '_' || r == '-'
}
