//! Lexer for Go text/template, a port of the state machine in Go's
//! `text/template/parse/lex.go`: the exact whitespace rules of trim markers
//! and the token boundaries decide both output bytes and error messages.

use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tok {
    Error,
    Bool,
    Char,
    CharConstant,
    Comment,
    Complex,
    Assign,
    Declare,
    Eof,
    Field,
    Identifier,
    LeftDelim,
    LeftParen,
    Number,
    Pipe,
    RawString,
    RightDelim,
    RightParen,
    Space,
    String,
    Text,
    Variable,
    // Keywords.
    Block,
    Break,
    Continue,
    Dot,
    Define,
    Else,
    End,
    If,
    Nil,
    Range,
    Template,
    With,
}

impl Tok {
    pub fn is_keyword(self) -> bool {
        matches!(
            self,
            Tok::Block
                | Tok::Break
                | Tok::Continue
                | Tok::Dot
                | Tok::Define
                | Tok::Else
                | Tok::End
                | Tok::If
                | Tok::Nil
                | Tok::Range
                | Tok::Template
                | Tok::With
        )
    }
}

#[derive(Clone, Debug)]
pub struct Item {
    pub typ: Tok,
    pub pos: usize,
    /// End of the token's text in the input (`pos..end`).
    pub end: usize,
    /// The message of an `Error` item.
    pub msg: Option<Arc<str>>,
    pub line: usize,
}

impl Item {
    /// Go's `item.String()`, used in "unexpected X in Y" messages.
    /// The token's text (for errors, the message).
    pub fn val<'t>(&'t self, text: &'t str) -> &'t str {
        match &self.msg {
            Some(m) => m,
            None => &text[self.pos..self.end],
        }
    }

    pub fn describe(&self, text: &str) -> String {
        let val = self.val(text);
        match self.typ {
            Tok::Eof => "EOF".into(),
            Tok::Error => val.to_string(),
            t if t.is_keyword() => format!("<{}>", val),
            _ => {
                if val.chars().count() > 10 {
                    let short: String = val.chars().take(10).collect();
                    format!("{}...", go_quote(&short))
                } else {
                    go_quote(val)
                }
            }
        }
    }
}

/// Go's `%q` for a string.
pub fn go_quote(s: &str) -> String {
    crate::gotmpl::format::quote_go(s)
}

const LEFT: &str = "{{";
const RIGHT: &str = "}}";
const LEFT_COMMENT: &str = "/*";
const RIGHT_COMMENT: &str = "*/";

fn is_space(c: char) -> bool {
    c == ' ' || c == '\t' || c == '\r' || c == '\n'
}

/// text/template's isAlphaNumeric: `_`, unicode.IsLetter, unicode.IsDigit.
pub fn is_alnum(c: char) -> bool {
    c == '_' || crate::value::gounicode::is_letter(c) || crate::value::gounicode::is_digit(c)
}

fn has_left_trim(s: &[u8]) -> bool {
    s.len() >= 2 && s[0] == b'-' && is_space(s[1] as char)
}

fn has_right_trim(s: &[u8]) -> bool {
    s.len() >= 2 && is_space(s[0] as char) && s[1] == b'-'
}

pub struct Lexer<'a> {
    input: &'a str,
    pos: usize,
    start: usize,
    paren_depth: i32,
    items: Vec<Item>,
    /// Line counting is incremental: `counted` bytes have been scanned and
    /// `line` is the line at that point.
    counted: usize,
    line: usize,
}

/// Lex the whole input into `items`, a buffer the caller reuses: a chart's
/// templates are lexed one after the other, and a fresh token vector for
/// each costs fresh pages. The token stream ends with `Eof` or with one `Error`.
pub fn lex_into(input: &str, items: &mut Vec<Item>) {
    items.clear();
    // Growing by doubling copies every token again; most templates
    // have about one token per 64 bytes or fewer. A buffer too small is
    // replaced, not grown: growing would copy (and fault in) its whole old
    // capacity for nothing.
    let want = input.len() / 64 + 16;
    if items.capacity() < want {
        *items = Vec::with_capacity(want);
    }
    let mut l = Lexer {
        input,
        pos: 0,
        start: 0,
        paren_depth: 0,
        items: std::mem::take(items),
        counted: 0,
        line: 1,
    };
    l.run();
    *items = l.items;
}

enum State {
    Text,
    LeftDelim,
    Comment,
    RightDelim,
    InsideAction,
    Done,
}

impl<'a> Lexer<'a> {
    fn line_of(&mut self, pos: usize) -> usize {
        if pos >= self.counted {
            self.line +=
                memchr::memchr_iter(b'\n', &self.input.as_bytes()[self.counted..pos]).count();
            self.counted = pos;
            self.line
        } else {
            1 + memchr::memchr_iter(b'\n', &self.input.as_bytes()[..pos]).count()
        }
    }

    fn rest(&self) -> &'a [u8] {
        &self.input.as_bytes()[self.pos..]
    }

    fn peek(&self) -> Option<char> {
        self.input[self.pos..].chars().next()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    fn backup(&mut self, c: Option<char>) {
        if let Some(c) = c {
            self.pos -= c.len_utf8();
        }
    }

    fn emit(&mut self, typ: Tok) {
        let line = self.line_of(self.start);
        self.items.push(Item {
            typ,
            pos: self.start,
            end: self.pos,
            msg: None,
            line,
        });
        self.start = self.pos;
    }

    fn ignore(&mut self) {
        self.start = self.pos;
    }

    fn error(&mut self, msg: String) -> State {
        let line = self.line_of(self.start);
        self.items.push(Item {
            typ: Tok::Error,
            pos: self.start,
            end: self.start,
            msg: Some(Arc::from(msg.as_str())),
            line,
        });
        State::Done
    }

    fn accept(&mut self, valid: &str) -> bool {
        if let Some(c) = self.peek() {
            if valid.contains(c) {
                self.pos += c.len_utf8();
                return true;
            }
        }
        false
    }

    fn accept_run(&mut self, valid: &str) {
        while self.accept(valid) {}
    }

    fn run(&mut self) {
        let mut state = State::Text;
        loop {
            state = match state {
                State::Text => self.lex_text(),
                State::LeftDelim => self.lex_left_delim(),
                State::Comment => self.lex_comment(),
                State::RightDelim => self.lex_right_delim(),
                State::InsideAction => self.lex_inside_action(),
                State::Done => return,
            };
        }
    }

    fn lex_text(&mut self) -> State {
        if let Some(x) = memchr::memmem::find(&self.input.as_bytes()[self.pos..], LEFT.as_bytes()) {
            if x > 0 {
                self.pos += x;
                let delim_end = self.pos + LEFT.len();
                let mut trim = 0;
                if has_left_trim(&self.input.as_bytes()[delim_end..]) {
                    let text = &self.input[self.start..self.pos];
                    trim = text.len() - text.trim_end_matches(is_space).len();
                }
                self.pos -= trim;
                if self.pos > self.start {
                    self.emit(Tok::Text);
                }
                self.pos += trim;
                self.ignore();
            }
            return State::LeftDelim;
        }
        self.pos = self.input.len();
        if self.pos > self.start {
            self.emit(Tok::Text);
        }
        self.emit(Tok::Eof);
        State::Done
    }

    fn at_right_delim(&self) -> (bool, bool) {
        let r = self.rest();
        if has_right_trim(r) && r[2..].starts_with(RIGHT.as_bytes()) {
            return (true, true);
        }
        if r.starts_with(RIGHT.as_bytes()) {
            return (true, false);
        }
        (false, false)
    }

    fn lex_left_delim(&mut self) -> State {
        self.pos += LEFT.len();
        let trim = has_left_trim(self.rest());
        let after = if trim { 2 } else { 0 };
        if self.input.as_bytes()[self.pos + after..].starts_with(LEFT_COMMENT.as_bytes()) {
            self.pos += after;
            self.ignore();
            return State::Comment;
        }
        self.emit(Tok::LeftDelim);
        self.pos += after;
        self.ignore();
        self.paren_depth = 0;
        State::InsideAction
    }

    fn lex_comment(&mut self) -> State {
        self.pos += LEFT_COMMENT.len();
        let Some(x) = self.input[self.pos..].find(RIGHT_COMMENT) else {
            return self.error("unclosed comment".into());
        };
        self.pos += x + RIGHT_COMMENT.len();
        let (delim, trim) = self.at_right_delim();
        if !delim {
            return self.error("comment ends before closing delimiter".into());
        }
        if trim {
            self.pos += 2;
        }
        self.pos += RIGHT.len();
        if trim {
            let r = &self.input[self.pos..];
            self.pos += r.len() - r.trim_start_matches(is_space).len();
        }
        self.ignore();
        State::Text
    }

    fn lex_right_delim(&mut self) -> State {
        let (_, trim) = self.at_right_delim();
        if trim {
            self.pos += 2;
            self.ignore();
        }
        self.pos += RIGHT.len();
        self.emit(Tok::RightDelim);
        if trim {
            let r = &self.input[self.pos..];
            self.pos += r.len() - r.trim_start_matches(is_space).len();
            self.ignore();
        }
        State::Text
    }

    fn lex_inside_action(&mut self) -> State {
        let (delim, _) = self.at_right_delim();
        if delim {
            if self.paren_depth == 0 {
                return State::RightDelim;
            }
            return self.error("unclosed left paren".into());
        }
        let c = self.next();
        match c {
            None => return self.error("unclosed action".into()),
            Some(c) if is_space(c) => {
                self.backup(Some(c));
                return self.lex_space();
            }
            Some('=') => self.emit(Tok::Assign),
            Some(':') => {
                if self.next() != Some('=') {
                    return self.error("expected :=".into());
                }
                self.emit(Tok::Declare);
            }
            Some('|') => self.emit(Tok::Pipe),
            Some('"') => return self.lex_quote(),
            Some('`') => return self.lex_raw_quote(),
            Some('$') => return self.lex_variable(),
            Some('\'') => return self.lex_char(),
            Some('.') => {
                if self.pos < self.input.len() {
                    let r = self.input.as_bytes()[self.pos];
                    if !r.is_ascii_digit() {
                        return self.lex_field_or_variable(Tok::Field);
                    }
                }
                self.backup(c);
                return self.lex_number();
            }
            Some(c) if c == '+' || c == '-' || c.is_ascii_digit() => {
                self.backup(Some(c));
                return self.lex_number();
            }
            Some(c) if is_alnum(c) => {
                self.backup(Some(c));
                return self.lex_identifier();
            }
            Some('(') => {
                self.emit(Tok::LeftParen);
                self.paren_depth += 1;
            }
            Some(')') => {
                self.paren_depth -= 1;
                if self.paren_depth < 0 {
                    return self.error("unexpected right paren".into());
                }
                self.emit(Tok::RightParen);
            }
            Some(c) if (c as u32) < 0x80 && !c.is_ascii_control() => self.emit(Tok::Char),
            Some(c) => {
                return self.error(format!(
                    "unrecognized character in action: {}",
                    unicode_plus(c)
                ));
            }
        }
        State::InsideAction
    }

    fn lex_space(&mut self) -> State {
        let mut n = 0;
        while let Some(c) = self.peek() {
            if !is_space(c) {
                break;
            }
            self.next();
            n += 1;
        }
        let b = self.input.as_bytes();
        if has_right_trim(&b[self.pos - 1..]) && b[self.pos - 1 + 2..].starts_with(RIGHT.as_bytes())
        {
            self.pos -= 1;
            if n == 1 {
                return State::RightDelim;
            }
        }
        self.emit(Tok::Space);
        State::InsideAction
    }

    fn at_terminator(&self) -> bool {
        match self.peek() {
            None => true,
            Some(c) if is_space(c) => true,
            Some('.' | ',' | '|' | ':' | ')' | '(') => true,
            _ => self.rest().starts_with(RIGHT.as_bytes()),
        }
    }

    fn lex_identifier(&mut self) -> State {
        loop {
            let c = self.next();
            match c {
                Some(c) if is_alnum(c) => {}
                _ => {
                    self.backup(c);
                    if !self.at_terminator() {
                        let r = self.peek();
                        return self.error(format!("bad character {}", unicode_plus_opt(r)));
                    }
                    let word = &self.input[self.start..self.pos];
                    let typ = match word {
                        "block" => Tok::Block,
                        "break" => Tok::Break,
                        "continue" => Tok::Continue,
                        "define" => Tok::Define,
                        "else" => Tok::Else,
                        "end" => Tok::End,
                        "if" => Tok::If,
                        "nil" => Tok::Nil,
                        "range" => Tok::Range,
                        "template" => Tok::Template,
                        "with" => Tok::With,
                        "true" | "false" => Tok::Bool,
                        _ => Tok::Identifier,
                    };
                    self.emit(typ);
                    return State::InsideAction;
                }
            }
        }
    }

    fn lex_variable(&mut self) -> State {
        if self.at_terminator() {
            self.emit(Tok::Variable);
            return State::InsideAction;
        }
        self.lex_field_or_variable(Tok::Variable)
    }

    fn lex_field_or_variable(&mut self, typ: Tok) -> State {
        if self.at_terminator() {
            self.emit(if typ == Tok::Variable {
                Tok::Variable
            } else {
                Tok::Dot
            });
            return State::InsideAction;
        }
        let mut last;
        loop {
            last = self.next();
            match last {
                Some(c) if is_alnum(c) => {}
                _ => {
                    self.backup(last);
                    break;
                }
            }
        }
        if !self.at_terminator() {
            return self.error(format!("bad character {}", unicode_plus_opt(last)));
        }
        self.emit(typ);
        State::InsideAction
    }

    fn lex_char(&mut self) -> State {
        loop {
            match self.next() {
                Some('\\') => {
                    let r = self.next();
                    if r.is_some() && r != Some('\n') {
                        continue;
                    }
                    return self.error("unterminated character constant".into());
                }
                None | Some('\n') => return self.error("unterminated character constant".into()),
                Some('\'') => break,
                _ => {}
            }
        }
        self.emit(Tok::CharConstant);
        State::InsideAction
    }

    fn lex_number(&mut self) -> State {
        if !self.scan_number() {
            let t = self.input[self.start..self.pos].to_string();
            return self.error(format!("bad number syntax: {}", go_quote(&t)));
        }
        if let Some(sign @ ('+' | '-')) = self.peek() {
            let _ = sign;
            if !self.scan_number() || !self.input[..self.pos].ends_with('i') {
                let t = self.input[self.start..self.pos].to_string();
                return self.error(format!("bad number syntax: {}", go_quote(&t)));
            }
            self.emit(Tok::Complex);
            return State::InsideAction;
        }
        self.emit(Tok::Number);
        State::InsideAction
    }

    fn scan_number(&mut self) -> bool {
        self.accept("+-");
        let mut digits = "0123456789_";
        if self.accept("0") {
            if self.accept("xX") {
                digits = "0123456789abcdefABCDEF_";
            } else if self.accept("oO") {
                digits = "01234567_";
            } else if self.accept("bB") {
                digits = "01_";
            }
        }
        self.accept_run(digits);
        if self.accept(".") {
            self.accept_run(digits);
        }
        if digits.len() == 11 && self.accept("eE") {
            self.accept("+-");
            self.accept_run("0123456789_");
        }
        if digits.len() == 23 && self.accept("pP") {
            self.accept("+-");
            self.accept_run("0123456789_");
        }
        self.accept("i");
        if let Some(c) = self.peek() {
            if is_alnum(c) {
                self.next();
                return false;
            }
        }
        true
    }

    fn lex_quote(&mut self) -> State {
        loop {
            match self.next() {
                Some('\\') => {
                    let r = self.next();
                    if r.is_some() && r != Some('\n') {
                        continue;
                    }
                    return self.error("unterminated quoted string".into());
                }
                None | Some('\n') => return self.error("unterminated quoted string".into()),
                Some('"') => break,
                _ => {}
            }
        }
        self.emit(Tok::String);
        State::InsideAction
    }

    fn lex_raw_quote(&mut self) -> State {
        loop {
            match self.next() {
                None => return self.error("unterminated raw quoted string".into()),
                Some('`') => break,
                _ => {}
            }
        }
        self.emit(Tok::RawString);
        State::InsideAction
    }
}

/// Go's `%#U`: `U+0041 'A'`.
fn unicode_plus(c: char) -> String {
    if c.is_control() {
        format!("U+{:04X}", c as u32)
    } else {
        format!("U+{:04X} '{}'", c as u32, c)
    }
}

fn unicode_plus_opt(c: Option<char>) -> String {
    match c {
        Some(c) => unicode_plus(c),
        None => "U+FFFFFFFFFFFFFFFF".into(),
    }
}
