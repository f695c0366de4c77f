//! Parser for Go text/template, following Go's `text/template/parse`
//! closely: node positions and `String()` forms appear verbatim in
//! Helm's error messages, so they must be the same as Go's.

use super::lex::{lex_into, Item, Tok};
use super::source::Source;
use crate::value::strconv::{parse_go_float, parse_go_int, parse_go_uint};
use std::collections::HashMap;
use std::sync::Arc;

#[derive(Debug, Clone)]
pub enum Node {
    Text(TextSpan),
    Action(Pipe),
    If(Branch),
    Range(Branch),
    With(Branch),
    Template {
        pos: usize,
        name: String,
        pipe: Option<Pipe>,
    },
    Break {
        pos: usize,
    },
    Continue {
        pos: usize,
    },
}

/// Literal text of a template: a span of the source, shared rather than
/// copied (templates are often hundreds of kilobytes of YAML).
#[derive(Debug, Clone)]
pub struct TextSpan {
    pub src: Source,
    pub start: usize,
    pub end: usize,
}

impl std::ops::Deref for TextSpan {
    type Target = str;
    fn deref(&self) -> &str {
        &self.src[self.start..self.end]
    }
}

#[derive(Debug, Clone)]
pub struct Branch {
    pub pos: usize,
    pub pipe: Pipe,
    pub list: Vec<Node>,
    pub else_list: Option<Vec<Node>>,
}

#[derive(Debug, Clone)]
pub struct Pipe {
    pub pos: usize,
    pub is_assign: bool,
    pub decl: Vec<(usize, Arc<str>)>,
    pub cmds: Vec<Command>,
}

#[derive(Debug, Clone)]
pub struct Command {
    pub pos: usize,
    pub args: Vec<Arg>,
}

#[derive(Debug, Clone)]
pub enum Number {
    Int(i64),
    /// Integer literal that does not fit int64 (e.g. a large hex uint).
    BigUint(u64),
    Float(f64),
    Complex,
}

#[derive(Debug, Clone)]
pub struct NumberLit {
    pub text: String,
    /// Value as an integer, when the literal denotes one exactly.
    pub int: Option<i64>,
    pub uint: Option<u64>,
    /// Value as a float, when representable.
    pub float: Option<f64>,
    pub is_char: bool,
    pub is_complex: bool,
}

#[derive(Debug, Clone)]
pub enum Arg {
    Identifier {
        pos: usize,
        name: Arc<str>,
    },
    Dot {
        pos: usize,
    },
    Nil {
        pos: usize,
    },
    Variable {
        pos: usize,
        idents: Vec<String>,
    },
    Field {
        pos: usize,
        idents: Vec<Arc<str>>,
    },
    Bool {
        pos: usize,
        val: bool,
    },
    Number {
        pos: usize,
        lit: Arc<NumberLit>,
    },
    Str {
        pos: usize,
        quoted: Arc<str>,
        text: Arc<str>,
    },
    Pipe(Box<Pipe>),
    Chain {
        pos: usize,
        node: Box<Arg>,
        fields: Vec<Arc<str>>,
    },
}

impl Arg {
    pub fn pos(&self) -> usize {
        match self {
            Arg::Identifier { pos, .. }
            | Arg::Dot { pos }
            | Arg::Nil { pos }
            | Arg::Variable { pos, .. }
            | Arg::Field { pos, .. }
            | Arg::Bool { pos, .. }
            | Arg::Number { pos, .. }
            | Arg::Str { pos, .. }
            | Arg::Chain { pos, .. } => *pos,
            Arg::Pipe(p) => p.pos,
        }
    }
}

// Go's Node.String() forms.
impl std::fmt::Display for Arg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Arg::Identifier { name, .. } => write!(f, "{name}"),
            Arg::Dot { .. } => write!(f, "."),
            Arg::Nil { .. } => write!(f, "nil"),
            Arg::Variable { idents, .. } => write!(f, "{}", idents.join(".")),
            Arg::Field { idents, .. } => {
                for i in idents {
                    write!(f, ".{i}")?;
                }
                Ok(())
            }
            Arg::Bool { val, .. } => write!(f, "{val}"),
            Arg::Number { lit, .. } => write!(f, "{}", lit.text),
            Arg::Str { quoted, .. } => write!(f, "{quoted}"),
            Arg::Pipe(p) => write!(f, "({p})"),
            Arg::Chain { node, fields, .. } => {
                match node.as_ref() {
                    Arg::Pipe(p) => write!(f, "({p})")?,
                    n => write!(f, "{n}")?,
                }
                for i in fields {
                    write!(f, ".{i}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::fmt::Display for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, a) in self.args.iter().enumerate() {
            if i > 0 {
                write!(f, " ")?;
            }
            write!(f, "{a}")?;
        }
        Ok(())
    }
}

impl std::fmt::Display for Pipe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if !self.decl.is_empty() {
            for (i, (_, v)) in self.decl.iter().enumerate() {
                if i > 0 {
                    write!(f, ", ")?;
                }
                write!(f, "{v}")?;
            }
            write!(f, " {} ", if self.is_assign { "=" } else { ":=" })?;
        }
        for (i, c) in self.cmds.iter().enumerate() {
            if i > 0 {
                write!(f, " | ")?;
            }
            write!(f, "{c}")?;
        }
        Ok(())
    }
}

/// A parsed template body together with the source it came from (needed to
/// turn byte offsets into line:column for errors).
#[derive(Debug)]
pub struct Tree {
    pub name: String,
    /// Name of the file the text came from (Go's ParseName).
    pub parse_name: Arc<str>,
    pub root: Vec<Node>,
    pub text: Source,
}

impl Tree {
    /// Go's ErrorContext location: `name:line:col`, col a 0-based byte offset.
    pub fn location(&self, pos: usize) -> String {
        let pos = pos.min(self.text.len());
        let before = &self.text.as_bytes()[..pos];
        let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
        let col = match before.iter().rposition(|&b| b == b'\n') {
            Some(nl) => pos - (nl + 1),
            None => pos,
        };
        format!("{}:{}:{}", self.parse_name, line, col)
    }
}

pub fn is_empty_tree(nodes: &[Node]) -> bool {
    nodes.iter().all(|n| matches!(n, Node::Text(t) if t.trim_matches(|c: char| c == ' ' || c == '\t' || c == '\n' || c == '\r').is_empty()))
}

#[derive(Debug, Clone)]
pub struct ParseError {
    pub parse_name: String,
    pub line: usize,
    pub msg: String,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "template: {}:{}: {}",
            self.parse_name, self.line, self.msg
        )
    }
}

type PResult<T> = Result<T, ParseError>;

struct Parser<'f> {
    items: Vec<Item>,
    /// Index of the next item to hand out.
    idx: usize,
    /// Highest index handed out so far; Go reports the line of `token[0]`,
    /// the last token taken from the lexer.
    high: usize,
    parse_name: Arc<str>,
    text: Source,
    vars: Vec<String>,
    range_depth: usize,
    /// Where the action being parsed starts (for error messages).
    action_pos: Option<usize>,
    has_func: &'f dyn Fn(&str) -> bool,
    trees: Vec<Tree>,
    /// Scratch stacks the lists under construction live on, nested lists
    /// above their parents', each moved into a vector of its exact size
    /// when complete: pushed one by one into vectors of their own they
    /// would grow by doubling, copied at each step and left half empty.
    nodes: Vec<Node>,
    args: Vec<Arg>,
    cmds: Vec<Command>,
}

/// Parse `text` (from file `parse_name`) into the main tree named `name` and
/// the trees of every `define`/`block` in it. Duplicate definitions inside
/// one text are rejected as Go does.
pub fn parse(
    name: &str,
    parse_name: &str,
    text: &str,
    has_func: &dyn Fn(&str) -> bool,
) -> PResult<Vec<Tree>> {
    parse_shared(name, parse_name, Source::from(text), has_func)
}

/// `parse` over source the caller already holds shared (no copy).
pub fn parse_shared(
    name: &str,
    parse_name: &str,
    text: Source,
    has_func: &dyn Fn(&str) -> bool,
) -> PResult<Vec<Tree>> {
    thread_local! {
        static TOKENS: std::cell::Cell<Vec<Item>> = const { std::cell::Cell::new(Vec::new()) };
    }
    let mut items = TOKENS.take();
    lex_into(&text, &mut items);
    let mut p = Parser {
        items,
        idx: 0,
        high: 0,
        parse_name: Arc::from(parse_name),
        text: text.clone(),
        vars: vec!["$".into()],
        range_depth: 0,
        action_pos: None,
        has_func,
        trees: Vec::new(),
        nodes: Vec::new(),
        args: Vec::new(),
        cmds: Vec::new(),
    };
    let parsed = p.parse_all(name, text);
    let mut items = std::mem::take(&mut p.items);
    // One unusually large template should not pin its tokens for good.
    if items.capacity() <= 1 << 16 {
        items.clear();
        TOKENS.set(items);
    }
    parsed
}

impl<'f> Parser<'f> {
    fn parse_all(&mut self, name: &str, text: Source) -> PResult<Vec<Tree>> {
        let root = self.parse_top()?;
        let main = Tree {
            name: name.to_string(),
            parse_name: self.parse_name.clone(),
            root,
            text,
        };
        self.add_tree(main)?;
        Ok(std::mem::take(&mut self.trees))
    }
}

impl<'f> Parser<'f> {
    fn err<T>(&self, msg: impl Into<String>) -> PResult<T> {
        let line = self
            .items
            .get(self.high.saturating_sub(1))
            .map(|i| self.line_of(i.pos))
            .unwrap_or(1);
        Err(ParseError {
            parse_name: self.parse_name.to_string(),
            line,
            msg: msg.into(),
        })
    }

    /// Line of a byte offset, counted only when an error needs it.
    fn line_of(&self, pos: usize) -> usize {
        1 + memchr::memchr_iter(b'\n', &self.text.as_bytes()[..pos.min(self.text.len())]).count()
    }

    fn next(&mut self) -> Item {
        let it = self.items[self.idx.min(self.items.len() - 1)].clone();
        if self.idx < self.items.len() - 1 || it.typ != Tok::Eof && it.typ != Tok::Error {
            self.idx += 1;
        } else {
            self.idx = self.items.len();
        }
        self.high = self.high.max(self.idx);
        it
    }

    fn backup(&mut self) {
        self.idx -= 1;
    }

    fn next_non_space(&mut self) -> Item {
        loop {
            let it = self.next();
            if it.typ != Tok::Space {
                return it;
            }
        }
    }

    /// Type and position of the next item, without cloning it.
    fn peek_typ(&mut self) -> (Tok, usize) {
        let n = self.items.len();
        let i = self.idx.min(n - 1);
        self.high = self.high.max((i + 1).min(n));
        (self.items[i].typ, self.items[i].pos)
    }

    /// Type and position of the next non-space item, without consuming it.
    fn peek_ns(&mut self) -> (Tok, usize) {
        let n = self.items.len();
        let mut i = self.idx.min(n - 1);
        while self.items[i].typ == Tok::Space && i < n - 1 {
            i += 1;
        }
        // Like Go's peekNonSpace, the spaces are consumed.
        self.idx = self.idx.max(i);
        self.high = self.high.max((i + 1).min(n));
        (self.items[i].typ, self.items[i].pos)
    }

    fn peek_non_space(&mut self) -> Item {
        let it = self.next_non_space();
        self.backup();
        it
    }

    fn expect(&mut self, typ: Tok, context: &str) -> PResult<Item> {
        let it = self.next_non_space();
        if it.typ != typ {
            return self.unexpected(&it, context);
        }
        Ok(it)
    }

    fn unexpected<T>(&self, it: &Item, context: &str) -> PResult<T> {
        if it.typ == Tok::Error {
            let mut extra = String::new();
            let action_line = self.action_pos.map(|p| self.line_of(p)).unwrap_or(0);
            if action_line != 0 && action_line != self.line_of(it.pos) {
                extra = format!(" in action started at {}:{}", self.parse_name, action_line);
                if it.val(&self.text).ends_with(" action") {
                    extra = extra[" in action".len()..].to_string();
                }
            }
            return self.err(format!("{}{}", it.describe(&self.text), extra));
        }
        self.err(format!(
            "unexpected {} in {}",
            it.describe(&self.text),
            context
        ))
    }

    fn add_tree(&mut self, tree: Tree) -> PResult<()> {
        if let Some(i) = self.trees.iter().position(|t| t.name == tree.name) {
            if is_empty_tree(&self.trees[i].root) {
                self.trees[i] = tree;
                return Ok(());
            }
            if !is_empty_tree(&tree.root) {
                return self.err(format!(
                    "template: multiple definition of template {}",
                    super::format::quote_go(&tree.name)
                ));
            }
            return Ok(());
        }
        self.trees.push(tree);
        Ok(())
    }

    fn parse_top(&mut self) -> PResult<Vec<Node>> {
        let start = self.nodes.len();
        while self.peek_typ().0 != Tok::Eof {
            if self.peek_typ().0 == Tok::LeftDelim {
                let save = self.idx;
                self.next();
                if self.next_non_space().typ == Tok::Define {
                    self.parse_definition()?;
                    continue;
                }
                self.idx = save;
            }
            match self.text_or_action()? {
                Parsed::End(_) => return self.err("unexpected {{end}}"),
                Parsed::Else(_) => return self.err("unexpected {{else}}"),
                Parsed::Node(Some(n)) => self.nodes.push(n),
                Parsed::Node(None) => {}
            }
        }
        Ok(self.nodes.drain(start..).collect())
    }

    fn parse_definition(&mut self) -> PResult<()> {
        let context = "define clause";
        let it = self.next_non_space();
        if it.typ != Tok::String && it.typ != Tok::RawString {
            return self.unexpected(&it, context);
        }
        let name = match unquote(it.val(&self.text)) {
            Ok(s) => s,
            Err(e) => return self.err(e.to_string()),
        };
        self.expect(Tok::RightDelim, context)?;
        let saved_vars = std::mem::replace(&mut self.vars, vec!["$".into()]);
        let (list, end) = self.item_list()?;
        self.vars = saved_vars;
        if !matches!(end, ListEnd::End) {
            return self.err(format!("unexpected {{{{else}}}} in {context}"));
        }
        let tree = Tree {
            name,
            parse_name: self.parse_name.clone(),
            root: list,
            text: self.text.clone(),
        };
        self.add_tree(tree)
    }

    fn item_list(&mut self) -> PResult<(Vec<Node>, ListEnd)> {
        let start = self.nodes.len();
        while self.peek_ns().0 != Tok::Eof {
            match self.text_or_action()? {
                Parsed::End(_) => return Ok((self.nodes.drain(start..).collect(), ListEnd::End)),
                Parsed::Else(pos) => {
                    return Ok((self.nodes.drain(start..).collect(), ListEnd::ElseAt(pos)))
                }
                Parsed::Node(Some(n)) => self.nodes.push(n),
                Parsed::Node(None) => {}
            }
        }
        self.err("unexpected EOF")
    }

    fn text_or_action(&mut self) -> PResult<Parsed> {
        let tok = self.next_non_space();
        match tok.typ {
            Tok::Text => Ok(Parsed::Node(Some(Node::Text(TextSpan {
                src: self.text.clone(),
                start: tok.pos,
                end: tok.end,
            })))),
            Tok::LeftDelim => {
                self.action_pos = Some(tok.pos);
                let r = self.action();
                self.action_pos = None;
                r
            }
            Tok::Comment => Ok(Parsed::Node(None)),
            _ => self.unexpected(&tok, "input"),
        }
    }

    fn action(&mut self) -> PResult<Parsed> {
        let tok = self.next_non_space();
        match tok.typ {
            Tok::Block => return self.block_control().map(|n| Parsed::Node(Some(n))),
            Tok::Break | Tok::Continue => {
                let what = if tok.typ == Tok::Break {
                    "break"
                } else {
                    "continue"
                };
                let t = self.next_non_space();
                if t.typ != Tok::RightDelim {
                    return self.unexpected(&t, &format!("{{{{{what}}}}}"));
                }
                if self.range_depth == 0 {
                    return self.err(format!("{{{{{what}}}}} outside {{{{range}}}}"));
                }
                return Ok(Parsed::Node(Some(if tok.typ == Tok::Break {
                    Node::Break { pos: tok.pos }
                } else {
                    Node::Continue { pos: tok.pos }
                })));
            }
            Tok::Else => return self.else_control(),
            Tok::End => {
                let t = self.expect(Tok::RightDelim, "end")?;
                return Ok(Parsed::End(t.pos));
            }
            Tok::If => return self.if_control().map(|n| Parsed::Node(Some(n))),
            Tok::Range => return self.range_control().map(|n| Parsed::Node(Some(n))),
            Tok::Template => return self.template_control().map(|n| Parsed::Node(Some(n))),
            Tok::With => return self.with_control().map(|n| Parsed::Node(Some(n))),
            _ => {}
        }
        self.backup();
        let pipe = self.pipeline("command", Tok::RightDelim)?;
        Ok(Parsed::Node(Some(Node::Action(pipe))))
    }

    fn else_control(&mut self) -> PResult<Parsed> {
        let (pt, ppos) = self.peek_ns();
        if pt == Tok::If || pt == Tok::With {
            return Ok(Parsed::Else(ppos));
        }
        let t = self.expect(Tok::RightDelim, "else")?;
        Ok(Parsed::Else(t.pos))
    }

    fn if_control(&mut self) -> PResult<Node> {
        Ok(Node::If(self.parse_control("if")?))
    }

    fn with_control(&mut self) -> PResult<Node> {
        Ok(Node::With(self.parse_control("with")?))
    }

    fn range_control(&mut self) -> PResult<Node> {
        Ok(Node::Range(self.parse_control("range")?))
    }

    fn parse_control(&mut self, context: &str) -> PResult<Branch> {
        let nvars = self.vars.len();
        let r = self.parse_control_inner(context);
        self.vars.truncate(nvars);
        r
    }

    fn parse_control_inner(&mut self, context: &str) -> PResult<Branch> {
        let pipe = self.pipeline(context, Tok::RightDelim)?;
        if context == "range" {
            self.range_depth += 1;
        }
        let (list, next) = self.item_list()?;
        if context == "range" {
            self.range_depth -= 1;
        }
        let mut else_list = None;
        if let ListEnd::ElseAt(_) = next {
            if context == "if" && self.peek_typ().0 == Tok::If {
                self.next();
                else_list = Some(vec![self.if_control()?]);
            } else if context == "with" && self.peek_typ().0 == Tok::With {
                self.next();
                else_list = Some(vec![self.with_control()?]);
            } else {
                let (l, n) = self.item_list()?;
                if !matches!(n, ListEnd::End) {
                    return self.err("expected end; found {{else}}");
                }
                else_list = Some(l);
            }
        }
        Ok(Branch {
            pos: pipe.pos,
            pipe,
            list,
            else_list,
        })
    }

    fn parse_template_name(&mut self, tok: &Item, context: &str) -> PResult<String> {
        match tok.typ {
            Tok::String | Tok::RawString => match unquote(tok.val(&self.text)) {
                Ok(s) => Ok(s),
                Err(e) => self.err(e.to_string()),
            },
            _ => self.unexpected(tok, context),
        }
    }

    fn template_control(&mut self) -> PResult<Node> {
        let context = "template clause";
        let tok = self.next_non_space();
        let name = self.parse_template_name(&tok, context)?;
        let mut pipe = None;
        if self.next_non_space().typ != Tok::RightDelim {
            self.backup();
            pipe = Some(self.pipeline(context, Tok::RightDelim)?);
        }
        Ok(Node::Template {
            pos: tok.pos,
            name,
            pipe,
        })
    }

    fn block_control(&mut self) -> PResult<Node> {
        let context = "block clause";
        let tok = self.next_non_space();
        let name = self.parse_template_name(&tok, context)?;
        let pipe = self.pipeline(context, Tok::RightDelim)?;
        let saved_vars = std::mem::replace(&mut self.vars, vec!["$".into()]);
        let saved_depth = std::mem::replace(&mut self.range_depth, 0);
        let r = self.item_list();
        self.vars = saved_vars;
        self.range_depth = saved_depth;
        let (list, end) = r?;
        if !matches!(end, ListEnd::End) {
            return self.err(format!("unexpected {{{{else}}}} in {context}"));
        }
        let tree = Tree {
            name: name.clone(),
            parse_name: self.parse_name.clone(),
            root: list,
            text: self.text.clone(),
        };
        self.add_tree(tree)?;
        Ok(Node::Template {
            pos: tok.pos,
            name,
            pipe: Some(pipe),
        })
    }

    fn pipeline(&mut self, context: &str, end: Tok) -> PResult<Pipe> {
        // Parenthesised pipelines nest without limit in Go: grow the stack.
        stacker::maybe_grow(256 * 1024, 4 * 1024 * 1024, || {
            self.pipeline_inner(context, end)
        })
    }

    fn pipeline_inner(&mut self, context: &str, end: Tok) -> PResult<Pipe> {
        let (_, tok_pos) = self.peek_ns();
        let mut pipe = Pipe {
            pos: tok_pos,
            is_assign: false,
            decl: Vec::new(),
            cmds: Vec::new(),
        };
        'decls: loop {
            if self.peek_ns().0 == Tok::Variable {
                let v = self.peek_non_space();
                let save = self.idx;
                self.next_non_space();
                let next = self.peek_non_space();
                if next.typ == Tok::Assign || next.typ == Tok::Declare {
                    pipe.is_assign = next.typ == Tok::Assign;
                    self.next_non_space();
                    pipe.decl.push((v.pos, Arc::from(v.val(&self.text))));
                    self.vars.push(v.val(&self.text).to_string());
                } else if next.typ == Tok::Char && next.val(&self.text) == "," {
                    self.next_non_space();
                    pipe.decl.push((v.pos, Arc::from(v.val(&self.text))));
                    self.vars.push(v.val(&self.text).to_string());
                    if context == "range" && pipe.decl.len() < 2 {
                        match self.peek_ns().0 {
                            Tok::Variable | Tok::RightDelim | Tok::RightParen => continue 'decls,
                            _ => return self.err("range can only initialize variables"),
                        }
                    }
                    return self.err(format!("too many declarations in {context}"));
                } else {
                    self.idx = save;
                }
            }
            break;
        }
        let start = self.cmds.len();
        loop {
            let tok = self.next_non_space();
            if tok.typ == end {
                pipe.cmds = self.cmds.drain(start..).collect();
                self.check_pipeline(&pipe, context)?;
                return Ok(pipe);
            }
            match tok.typ {
                Tok::Bool
                | Tok::CharConstant
                | Tok::Complex
                | Tok::Dot
                | Tok::Field
                | Tok::Identifier
                | Tok::Number
                | Tok::Nil
                | Tok::RawString
                | Tok::String
                | Tok::Variable
                | Tok::LeftParen => {
                    self.backup();
                    let c = self.command()?;
                    self.cmds.push(c);
                }
                _ => return self.unexpected(&tok, context),
            }
        }
    }

    fn check_pipeline(&self, pipe: &Pipe, context: &str) -> PResult<()> {
        if pipe.cmds.is_empty() {
            return self.err(format!("missing value for {context}"));
        }
        for (i, c) in pipe.cmds.iter().enumerate().skip(1) {
            if matches!(
                c.args[0],
                Arg::Bool { .. }
                    | Arg::Dot { .. }
                    | Arg::Nil { .. }
                    | Arg::Number { .. }
                    | Arg::Str { .. }
            ) {
                return self.err(format!(
                    "non executable command in pipeline stage {}",
                    i + 1
                ));
            }
        }
        Ok(())
    }

    fn command(&mut self) -> PResult<Command> {
        let pos = self.peek_ns().1;
        let start = self.args.len();
        loop {
            self.peek_ns();
            if let Some(op) = self.operand()? {
                self.args.push(op);
            }
            let tok = self.next();
            match tok.typ {
                Tok::Space => continue,
                Tok::RightDelim | Tok::RightParen => self.backup(),
                Tok::Pipe => {}
                _ => return self.unexpected(&tok, "operand"),
            }
            break;
        }
        let cmd = Command {
            pos,
            args: self.args.drain(start..).collect(),
        };
        if cmd.args.is_empty() {
            return self.err("empty command");
        }
        Ok(cmd)
    }

    fn operand(&mut self) -> PResult<Option<Arg>> {
        let Some(node) = self.term()? else {
            return Ok(None);
        };
        if self.peek_typ().0 == Tok::Field {
            let pos = self.peek_typ().1;
            let mut fields: Vec<Arc<str>> = Vec::new();
            while self.peek_typ().0 == Tok::Field {
                let f = self.next();
                fields.push(Arc::from(&f.val(&self.text)[1..]));
            }
            return match node {
                Arg::Field { idents, .. } => {
                    let mut all = idents;
                    all.extend(fields);
                    Ok(Some(Arg::Field { pos, idents: all }))
                }
                Arg::Variable { idents, .. } => {
                    let mut all = idents;
                    all.extend(fields.iter().map(|f| f.to_string()));
                    Ok(Some(Arg::Variable { pos, idents: all }))
                }
                Arg::Bool { .. }
                | Arg::Str { .. }
                | Arg::Number { .. }
                | Arg::Nil { .. }
                | Arg::Dot { .. } => self.err(format!(
                    "unexpected . after term {}",
                    super::format::quote_go(&node.to_string())
                )),
                other => Ok(Some(Arg::Chain {
                    pos,
                    node: Box::new(other),
                    fields,
                })),
            };
        }
        Ok(Some(node))
    }

    fn term(&mut self) -> PResult<Option<Arg>> {
        let tok = self.next_non_space();
        let pos = tok.pos;
        Ok(Some(match tok.typ {
            Tok::Identifier => {
                if !(self.has_func)(tok.val(&self.text)) {
                    return self.err(format!(
                        "function {} not defined",
                        super::format::quote_go(tok.val(&self.text))
                    ));
                }
                Arg::Identifier {
                    pos,
                    name: Arc::from(tok.val(&self.text)),
                }
            }
            Tok::Dot => Arg::Dot { pos },
            Tok::Nil => Arg::Nil { pos },
            Tok::Variable => {
                let idents: Vec<String> = tok
                    .val(&self.text)
                    .split('.')
                    .map(|s| s.to_string())
                    .collect();
                if !self.vars.iter().any(|v| *v == idents[0]) {
                    return self.err(format!(
                        "undefined variable {}",
                        super::format::quote_go(&idents[0])
                    ));
                }
                Arg::Variable { pos, idents }
            }
            Tok::Field => Arg::Field {
                pos,
                idents: vec![Arc::from(&tok.val(&self.text)[1..])],
            },
            Tok::Bool => Arg::Bool {
                pos,
                val: tok.val(&self.text) == "true",
            },
            Tok::CharConstant | Tok::Complex | Tok::Number => {
                match parse_number(tok.val(&self.text), tok.typ) {
                    Ok(lit) => Arg::Number {
                        pos,
                        lit: Arc::new(lit),
                    },
                    Err(e) => return self.err(e.to_string()),
                }
            }
            Tok::LeftParen => Arg::Pipe(Box::new(
                self.pipeline("parenthesized pipeline", Tok::RightParen)?,
            )),
            Tok::String | Tok::RawString => match unquote(tok.val(&self.text)) {
                Ok(s) => Arg::Str {
                    pos,
                    quoted: Arc::from(tok.val(&self.text)),
                    text: Arc::from(s),
                },
                Err(e) => return self.err(e.to_string()),
            },
            _ => {
                self.backup();
                return Ok(None);
            }
        }))
    }
}

enum Parsed {
    Node(Option<Node>),
    End(#[allow(dead_code)] usize),
    Else(#[allow(dead_code)] usize),
}

enum ListEnd {
    End,
    ElseAt(#[allow(dead_code)] usize),
}

/// Why a string, character or number literal could not be read, in the
/// words of Go's strconv and text/template/parse.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LiteralError {
    #[error("invalid syntax")]
    InvalidSyntax,
    #[error("malformed character constant: {0}")]
    MalformedCharacter(String),
    #[error("illegal number syntax: {}", super::format::quote_go(.0))]
    IllegalNumber(String),
}

/// Go's strconv.Unquote for "..." and `...` literals.
pub fn unquote(s: &str) -> Result<String, LiteralError> {
    if s.len() >= 2 && s.starts_with('`') && s.ends_with('`') {
        let inner = &s[1..s.len() - 1];
        if inner.contains('`') {
            return Err(LiteralError::InvalidSyntax);
        }
        return Ok(inner.replace('\r', ""));
    }
    if s.len() < 2 || !s.starts_with('"') || !s.ends_with('"') {
        return Err(LiteralError::InvalidSyntax);
    }
    // A Go string holds any bytes: "\xff" stays one raw byte.
    unescape_bytes(&s[1..s.len() - 1], '"')
        .map(crate::value::gostr::from_vec)
        .ok_or(LiteralError::InvalidSyntax)
}

fn unescape(s: &str, quote: char) -> Option<String> {
    unescape_bytes(s, quote).map(|out| String::from_utf8_lossy(&out).into_owned())
}

fn unescape_bytes(s: &str, quote: char) -> Option<Vec<u8>> {
    let mut out = Vec::<u8>::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == quote && quote != '\'' {
            return None;
        }
        if c != '\\' {
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            continue;
        }
        let e = chars.next()?;
        match e {
            'a' => out.push(7),
            'b' => out.push(8),
            'f' => out.push(12),
            'n' => out.push(b'\n'),
            'r' => out.push(b'\r'),
            't' => out.push(b'\t'),
            'v' => out.push(11),
            '\\' => out.push(b'\\'),
            '\'' if quote == '\'' => out.push(b'\''),
            '"' if quote == '"' => out.push(b'"'),
            'x' => {
                let h: String = (0..2).filter_map(|_| chars.next()).collect();
                if h.len() != 2 {
                    return None;
                }
                out.push(u8::from_str_radix(&h, 16).ok()?);
            }
            'u' | 'U' => {
                let n = if e == 'u' { 4 } else { 8 };
                let h: String = (0..n).filter_map(|_| chars.next()).collect();
                if h.len() != n {
                    return None;
                }
                let cp = u32::from_str_radix(&h, 16).ok()?;
                let ch = char::from_u32(cp)?;
                let mut buf = [0u8; 4];
                out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
            }
            '0'..='7' => {
                let mut v = e.to_digit(8)?;
                for _ in 0..2 {
                    v = v * 8 + chars.next()?.to_digit(8)?;
                }
                if v > 255 {
                    return None;
                }
                out.push(v as u8);
            }
            _ => return None,
        }
    }
    Some(out)
}

/// Go's parse.newNumber.
pub fn parse_number(text: &str, typ: Tok) -> Result<NumberLit, LiteralError> {
    let mut lit = NumberLit {
        text: text.into(),
        int: None,
        uint: None,
        float: None,
        is_char: false,
        is_complex: false,
    };
    if typ == Tok::CharConstant {
        let inner = &text[1..text.len() - 1];
        let s = if inner == "\"" {
            Some("\"".to_string())
        } else {
            unescape(inner, '\'')
        };
        let s = s.ok_or(LiteralError::InvalidSyntax)?;
        let mut it = s.chars();
        let c = it.next().ok_or(LiteralError::InvalidSyntax)?;
        if it.next().is_some() {
            return Err(LiteralError::MalformedCharacter(text.to_string()));
        }
        lit.int = Some(c as i64);
        lit.uint = Some(c as u64);
        lit.float = Some(c as u32 as f64);
        lit.is_char = true;
        return Ok(lit);
    }
    if typ == Tok::Complex || text.ends_with('i') {
        lit.is_complex = true;
        return Ok(lit);
    }
    if let Some(u) = parse_go_uint(text) {
        lit.uint = Some(u);
    }
    if let Some(i) = parse_go_int(text) {
        lit.int = Some(i);
        if i == 0 {
            // Go: "if n == 0 && text[0]=='-'" keeps IsUint true for -0.
            lit.uint = Some(0);
        }
    }
    if let Some(i) = lit.int {
        lit.float = Some(i as f64);
    } else if let Some(u) = lit.uint {
        lit.float = Some(u as f64);
    } else {
        let f = parse_go_float(text)
            .filter(|f| f.is_finite())
            .ok_or_else(|| LiteralError::IllegalNumber(text.to_string()))?;
        let looks_int = !text.contains(['.', 'e', 'E', 'p', 'P'])
            || (text.starts_with("0x") || text.starts_with("0X")) && !text.contains(['p', 'P']);
        if !looks_int {
            lit.float = Some(f);
            if f.fract() == 0.0 && f.abs() < 9.2e18 {
                lit.int = Some(f as i64);
                if f >= 0.0 {
                    lit.uint = Some(f as u64);
                }
            }
        } else {
            // integer syntax that overflows: Go keeps it as a float only.
            lit.float = Some(f);
        }
    }
    if lit.int.is_none() && lit.uint.is_none() && lit.float.is_none() {
        return Err(LiteralError::IllegalNumber(text.to_string()));
    }
    Ok(lit)
}

/// All the trees defined by a set of parsed files.
pub type TreeSet = HashMap<String, std::rc::Rc<Tree>>;
