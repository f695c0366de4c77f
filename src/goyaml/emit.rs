//! go-yaml v2's emitter (a port of libyaml's), as `toYaml` reaches it
//! through sigs.k8s.io/yaml: values go through JSON first, so numbers come
//! back typed from their JSON text, and maps are sorted in go-yaml's
//! "natural" key order.

use super::resolve::{is_base60_float, resolve_plain, Scalar};
use crate::value::Value;
use std::cmp::Ordering;

/// The data model after the JSON round trip.
enum Y {
    Null,
    Bool(bool),
    Int(String),
    Float(f64),
    Str(String),
    Seq(Vec<Y>),
    Map(Vec<(String, Y)>),
}

pub struct JsonError(pub String);

fn to_y_mode(v: &Value, pretty: bool) -> Result<Y, JsonError> {
    Ok(match v {
        Value::Nil => Y::Null,
        Value::Bool(b) => Y::Bool(*b),
        Value::Int(i) | Value::Int64(i) => Y::Int(i.to_string()),
        Value::Uint64(u) => Y::Int(u.to_string()),
        Value::Uint8(u) => Y::Int(u.to_string()),
        Value::Uint32(u) => Y::Int(u.to_string()),
        Value::Float(f) => {
            if !f.is_finite() {
                return Err(JsonError(format!(
                    "json: unsupported value: {}",
                    crate::value::float::format_float_g(*f)
                )));
            }
            if pretty {
                return Ok(Y::Float(*f));
            }
            let text = super::json::format_float(*f);
            match resolve_plain(&text) {
                Scalar::Int(i) => Y::Int(i.to_string()),
                Scalar::Uint(u) => Y::Int(u.to_string()),
                Scalar::Float(x) => Y::Float(x),
                _ => Y::Float(*f),
            }
        }
        Value::Str(s) => Y::Str(s.to_string()),
        Value::Bytes(b) => {
            use base64::Engine as _;
            Y::Str(base64::engine::general_purpose::STANDARD.encode(&b[..]))
        }
        Value::List(_, crate::value::ListKind::NilStr) => Y::Null,
        Value::List(l, _) => Y::Seq(
            l.iter()
                .map(|x| to_y_mode(x, pretty))
                .collect::<Result<_, _>>()?,
        ),
        Value::Map(_, crate::value::MapKind::NilStrStr) => Y::Null,
        Value::Map(m, _) => {
            let mut pairs: Vec<(String, Y)> = m
                .borrow()
                .iter()
                .map(|(k, v)| Ok((k.clone(), to_y_mode(v, pretty)?)))
                .collect::<Result<_, JsonError>>()?;
            pairs.sort_by(|a, b| natural_cmp(&a.0, &b.0));
            Y::Map(pairs)
        }
        Value::Object(o) => to_y_mode(&o.to_data(), pretty)?,
    })
}

/// go-yaml v2's keyList.Less for two string keys.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let ar: Vec<char> = a.chars().collect();
    let br: Vec<char> = b.chars().collect();
    let mut i = 0;
    while i < ar.len() && i < br.len() {
        if ar[i] == br[i] {
            i += 1;
            continue;
        }
        let al = ar[i].is_alphabetic();
        let bl = br[i].is_alphabetic();
        if al && bl {
            return ar[i].cmp(&br[i]);
        }
        if al || bl {
            return if bl {
                Ordering::Less
            } else {
                Ordering::Greater
            };
        }
        let mut an: i64 = 0;
        let mut bn: i64 = 0;
        if ar[i] == '0' || br[i] == '0' {
            let mut j = i;
            while j > 0 && ar[j - 1].is_ascii_digit() {
                j -= 1;
                if ar[j] != '0' {
                    an = 1;
                    bn = 1;
                    break;
                }
            }
        }
        let mut ai = i;
        while ai < ar.len() && ar[ai].is_ascii_digit() {
            an = an.wrapping_mul(10).wrapping_add(ar[ai] as i64 - '0' as i64);
            ai += 1;
        }
        let mut bi = i;
        while bi < br.len() && br[bi].is_ascii_digit() {
            bn = bn.wrapping_mul(10).wrapping_add(br[bi] as i64 - '0' as i64);
            bi += 1;
        }
        if an != bn {
            return an.cmp(&bn);
        }
        if ai != bi {
            return ai.cmp(&bi);
        }
        return ar[i].cmp(&br[i]);
    }
    ar.len().cmp(&br.len())
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Style {
    Plain,
    Single,
    Double,
    Literal,
}

struct Analysis {
    multiline: bool,
    flow_plain: bool,
    block_plain: bool,
    single_allowed: bool,
    block_allowed: bool,
}

fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

fn is_blankz(c: Option<char>) -> bool {
    match c {
        None => true,
        Some(c) => c == ' ' || c == '\t' || is_break(c) || c == '\0',
    }
}

/// libyaml's IS_PRINTABLE (on the UTF-8 encoding).
fn is_printable(c: char) -> bool {
    let u = c as u32;
    u == 0x0A
        || (0x20..=0x7E).contains(&u)
        || (0xA0..=0xD7FF).contains(&u)
        || ((0xE000..=0xFFFD).contains(&u) && u != 0xFEFF)
}

fn analyze(s: &str) -> Analysis {
    if s.is_empty() {
        return Analysis {
            multiline: false,
            flow_plain: false,
            block_plain: true,
            single_allowed: true,
            block_allowed: false,
        };
    }
    let chars: Vec<char> = s.chars().collect();
    let mut block_ind = false;
    let mut flow_ind = false;
    if s.starts_with("---") || s.starts_with("...") {
        block_ind = true;
        flow_ind = true;
    }
    let mut preceded_ws = true;
    let mut followed_ws = is_blankz(chars.get(1).copied());
    let (mut line_breaks, mut special) = (false, false);
    let (mut leading_space, mut leading_break, mut trailing_space, mut trailing_break) =
        (false, false, false, false);
    let (mut break_space, mut space_break, mut prev_space, mut prev_break) =
        (false, false, false, false);
    let n = chars.len();
    for i in 0..n {
        let c = chars[i];
        if i == 0 {
            if "#,[]{}&*!|>'\"%@`".contains(c) {
                flow_ind = true;
                block_ind = true;
            }
            if c == '?' || c == ':' {
                flow_ind = true;
                if followed_ws {
                    block_ind = true;
                }
            }
            if c == '-' && followed_ws {
                flow_ind = true;
                block_ind = true;
            }
        } else {
            if ",?[]{}".contains(c) {
                flow_ind = true;
            }
            if c == ':' {
                flow_ind = true;
                if followed_ws {
                    block_ind = true;
                }
            }
            if c == '#' && preceded_ws {
                flow_ind = true;
                block_ind = true;
            }
        }
        if !is_printable(c) {
            special = true;
        }
        if is_break(c) {
            line_breaks = true;
        }
        if c == ' ' {
            if i == 0 {
                leading_space = true;
            }
            if i == n - 1 {
                trailing_space = true;
            }
            if prev_break {
                break_space = true;
            }
            prev_space = true;
            prev_break = false;
        } else if is_break(c) {
            if i == 0 {
                leading_break = true;
            }
            if i == n - 1 {
                trailing_break = true;
            }
            if prev_space {
                space_break = true;
            }
            prev_space = false;
            prev_break = true;
        } else {
            prev_space = false;
            prev_break = false;
        }
        preceded_ws = is_blankz(Some(c));
        if i + 1 < n {
            followed_ws = is_blankz(chars.get(i + 2).copied());
        }
    }
    let mut a = Analysis {
        multiline: line_breaks,
        flow_plain: true,
        block_plain: true,
        single_allowed: true,
        block_allowed: true,
    };
    if leading_space || leading_break || trailing_space || trailing_break {
        a.flow_plain = false;
        a.block_plain = false;
    }
    if trailing_space {
        a.block_allowed = false;
    }
    if break_space {
        a.flow_plain = false;
        a.block_plain = false;
        a.single_allowed = false;
    }
    if space_break || special {
        a.flow_plain = false;
        a.block_plain = false;
        a.single_allowed = false;
        a.block_allowed = false;
    }
    if line_breaks {
        a.flow_plain = false;
        a.block_plain = false;
    }
    if flow_ind {
        a.flow_plain = false;
    }
    if block_ind {
        a.block_plain = false;
    }
    a
}

struct Emitter {
    out: String,
    column: usize,
    indent: i64,
    indents: Vec<i64>,
    whitespace: bool,
    indention: bool,
    best_width: usize,
    best_indent: i64,
    /// toYamlPretty (go-yaml v3 style): no folding.
    fold: bool,
}

impl Emitter {
    fn put(&mut self, c: char) {
        self.out.push(c);
        self.column += 1;
    }
    fn put_break(&mut self) {
        self.out.push('\n');
        self.column = 0;
    }
    fn write(&mut self, c: char) {
        self.out.push(c);
        self.column += 1;
    }
    fn write_break(&mut self, c: char) {
        if c == '\n' {
            self.put_break();
        } else {
            self.out.push(c);
            self.column = 0;
        }
    }
    fn write_indent(&mut self) {
        let indent = self.indent.max(0) as usize;
        if !self.indention || self.column > indent || (self.column == indent && !self.whitespace) {
            self.put_break();
        }
        while self.column < indent {
            self.put(' ');
        }
        self.whitespace = true;
        self.indention = true;
    }
    fn write_indicator(&mut self, ind: &str, need_ws: bool, is_ws: bool, is_indention: bool) {
        if need_ws && !self.whitespace {
            self.put(' ');
        }
        for c in ind.chars() {
            self.put(c);
        }
        self.whitespace = is_ws;
        self.indention = self.indention && is_indention;
    }
    fn increase_indent(&mut self, flow: bool, indentless: bool) {
        self.indents.push(self.indent);
        if self.indent < 0 {
            self.indent = if flow { self.best_indent } else { 0 };
        } else if !indentless {
            self.indent += self.best_indent;
        }
    }
    fn pop_indent(&mut self) {
        self.indent = self.indents.pop().unwrap_or(-1);
    }

    fn emit_node(&mut self, y: &Y, mapping_ctx: bool, simple_key: bool) {
        match y {
            Y::Null => self.emit_scalar("null", Style::Plain, simple_key),
            Y::Bool(b) => {
                self.emit_scalar(if *b { "true" } else { "false" }, Style::Plain, simple_key)
            }
            Y::Int(s) => self.emit_scalar(s, Style::Plain, simple_key),
            Y::Float(f) => {
                let s = if f.is_nan() {
                    ".nan".to_string()
                } else if f.is_infinite() {
                    if *f > 0.0 {
                        ".inf".into()
                    } else {
                        "-.inf".into()
                    }
                } else {
                    crate::value::float::format_float_g(*f)
                };
                self.emit_scalar(&s, Style::Plain, simple_key)
            }
            Y::Str(s) => {
                // go-yaml v2 writes the merge key `<<` as a plain string too.
                let can_plain = matches!(resolve_plain(s), Scalar::Str(_) | Scalar::Merge)
                    && !is_base60_float(s);
                let style = if s.contains('\n') {
                    Style::Literal
                } else if can_plain {
                    Style::Plain
                } else {
                    Style::Double
                };
                self.emit_scalar(s, style, simple_key)
            }
            Y::Seq(items) => {
                if items.is_empty() {
                    self.increase_indent(true, false);
                    self.write_indicator("[", true, true, false);
                    self.write_indicator("]", false, false, false);
                    self.pop_indent();
                    return;
                }
                self.increase_indent(false, self.fold && mapping_ctx && !self.indention);
                for it in items {
                    self.write_indent();
                    self.write_indicator("-", true, false, true);
                    self.emit_node(it, false, false);
                }
                self.pop_indent();
            }
            Y::Map(pairs) => {
                if pairs.is_empty() {
                    self.increase_indent(true, false);
                    self.write_indicator("{", true, true, false);
                    self.write_indicator("}", false, false, false);
                    self.pop_indent();
                    return;
                }
                self.increase_indent(false, false);
                for (k, v) in pairs {
                    self.write_indent();
                    self.emit_node(&Y::Str(k.clone()), true, true);
                    self.write_indicator(":", false, false, false);
                    self.emit_node(v, true, false);
                }
                self.pop_indent();
            }
        }
    }

    fn emit_scalar(&mut self, s: &str, mut style: Style, simple_key: bool) {
        // Helm's YAML goes through encoding/json: bytes that are not UTF-8
        // arrive as U+FFFD.
        let lossy = crate::value::gostr::lossy(s);
        let s = &*lossy;
        let a = analyze(s);
        if simple_key && a.multiline {
            style = Style::Double;
        }
        if style == Style::Plain {
            if !a.block_plain {
                style = Style::Single;
            }
            if s.is_empty() && simple_key {
                style = Style::Single;
            }
        }
        if style == Style::Single && !a.single_allowed {
            style = Style::Double;
        }
        if style == Style::Literal && (!a.block_allowed || simple_key) {
            style = Style::Double;
        }
        self.increase_indent(true, false);
        let allow_breaks = !simple_key && self.fold;
        match style {
            Style::Plain => self.write_plain(s, allow_breaks),
            Style::Single => self.write_single(s, allow_breaks),
            Style::Double => self.write_double(s, allow_breaks),
            Style::Literal => self.write_literal(s),
        }
        self.pop_indent();
    }

    fn write_plain(&mut self, s: &str, allow_breaks: bool) {
        if !self.whitespace {
            self.put(' ');
        }
        let chars: Vec<char> = s.chars().collect();
        let (mut spaces, mut breaks) = (false, false);
        for i in 0..chars.len() {
            let c = chars[i];
            if c == ' ' {
                if allow_breaks
                    && !spaces
                    && self.column > self.best_width
                    && chars.get(i + 1) != Some(&' ')
                {
                    self.write_indent();
                } else {
                    self.write(c);
                }
                spaces = true;
            } else if is_break(c) {
                if !breaks && c == '\n' {
                    self.put_break();
                }
                self.write_break(c);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                self.write(c);
                self.indention = false;
                spaces = false;
                breaks = false;
            }
        }
        self.whitespace = false;
        self.indention = false;
    }

    fn write_single(&mut self, s: &str, allow_breaks: bool) {
        self.write_indicator("'", true, false, false);
        let chars: Vec<char> = s.chars().collect();
        let n = chars.len();
        let (mut spaces, mut breaks) = (false, false);
        for i in 0..n {
            let c = chars[i];
            if c == ' ' {
                if allow_breaks
                    && !spaces
                    && self.column > self.best_width
                    && i != 0
                    && i != n - 1
                    && chars.get(i + 1) != Some(&' ')
                {
                    self.write_indent();
                } else {
                    self.write(c);
                }
                spaces = true;
            } else if is_break(c) {
                if !breaks && c == '\n' {
                    self.put_break();
                }
                self.write_break(c);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                if c == '\'' {
                    self.put('\'');
                }
                self.write(c);
                self.indention = false;
                spaces = false;
                breaks = false;
            }
        }
        if breaks {
            self.write_indent();
        }
        self.write_indicator("'", false, false, false);
    }

    fn write_double(&mut self, s: &str, allow_breaks: bool) {
        self.write_indicator("\"", true, false, false);
        let chars: Vec<char> = s.chars().collect();
        let n = chars.len();
        let mut spaces = false;
        for i in 0..n {
            let c = chars[i];
            if !is_printable(c) || c == '\u{feff}' || is_break(c) || c == '"' || c == '\\' {
                self.put('\\');
                let u = c as u32;
                match c {
                    '\0' => self.put('0'),
                    '\x07' => self.put('a'),
                    '\x08' => self.put('b'),
                    '\t' => self.put('t'),
                    '\n' => self.put('n'),
                    '\x0b' => self.put('v'),
                    '\x0c' => self.put('f'),
                    '\r' => self.put('r'),
                    '\x1b' => self.put('e'),
                    '"' => self.put('"'),
                    '\\' => self.put('\\'),
                    '\u{85}' => self.put('N'),
                    '\u{a0}' => self.put('_'),
                    '\u{2028}' => self.put('L'),
                    '\u{2029}' => self.put('P'),
                    _ => {
                        let (p, w) = if u <= 0xFF {
                            ('x', 2)
                        } else if u <= 0xFFFF {
                            ('u', 4)
                        } else {
                            ('U', 8)
                        };
                        self.put(p);
                        for ch in format!("{:0w$X}", u, w = w).chars() {
                            self.put(ch);
                        }
                    }
                }
                spaces = false;
            } else if c == ' ' {
                if allow_breaks && !spaces && self.column > self.best_width && i != 0 && i != n - 1
                {
                    self.write_indent();
                    if chars.get(i + 1) == Some(&' ') {
                        self.put('\\');
                    }
                } else {
                    self.write(c);
                }
                spaces = true;
            } else {
                self.write(c);
                spaces = false;
            }
        }
        self.write_indicator("\"", false, false, false);
    }

    fn write_literal(&mut self, s: &str) {
        self.write_indicator("|", true, false, false);
        // block scalar hints
        let first = s.chars().next();
        if let Some(c) = first {
            if c == ' ' || is_break(c) {
                let hint = self.best_indent.to_string();
                self.write_indicator(&hint, false, false, false);
            }
        }
        let chars: Vec<char> = s.chars().collect();
        let chomp = if chars.is_empty() {
            Some("-")
        } else if !is_break(*chars.last().unwrap()) {
            Some("-")
        } else if chars.len() == 1 {
            Some("+")
        } else if is_break(chars[chars.len() - 2]) {
            Some("+")
        } else {
            None
        };
        if let Some(h) = chomp {
            self.write_indicator(h, false, false, false);
        }
        self.put_break();
        self.indention = true;
        self.whitespace = true;
        let mut breaks = true;
        for &c in &chars {
            if is_break(c) {
                self.write_break(c);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                self.write(c);
                self.indention = false;
                breaks = false;
            }
        }
    }
}

fn emit_document(v: &Value, fold: bool) -> Result<String, JsonError> {
    let y = to_y_mode(v, !fold)?;
    let mut e = Emitter {
        out: String::new(),
        column: 0,
        indent: -1,
        indents: Vec::new(),
        whitespace: true,
        indention: true,
        best_width: 80,
        best_indent: 2,
        fold,
    };
    e.emit_node(&y, false, false);
    // Document end: implicit, followed by a line break.
    e.indent = -1;
    e.write_indent();
    Ok(e.out)
}

/// sigs.k8s.io/yaml Marshal output (with its trailing newline).
pub fn marshal(v: &Value) -> Result<String, JsonError> {
    emit_document(v, true)
}

/// Helm's `toYaml`: Marshal without the final newline; errors give "".
pub fn to_yaml(v: &Value) -> Result<String, JsonError> {
    let s = marshal(v)?;
    Ok(s.strip_suffix('\n').map(|x| x.to_string()).unwrap_or(s))
}

/// The YAML of a `common.Values` map (its `YAML` method).
pub fn to_yaml_document(v: &Value) -> String {
    marshal(v).unwrap_or_default()
}

/// Helm's `toYamlPretty` (go-yaml v3 encoder, indent 2, no folding).
pub fn to_yaml_pretty(v: &Value) -> Result<String, JsonError> {
    let s = emit_document(v, false)?;
    Ok(s.strip_suffix('\n').map(|x| x.to_string()).unwrap_or(s))
}
