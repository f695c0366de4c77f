//! The executor: walks parsed trees the way Go's `text/template/exec.go`
//! does, including its typing of arguments, `missingkey=zero` lookups and
//! the node each error is reported at.

use super::error::{Cause, Detail, Error, ExecError};
use super::format;
use super::funcs::{self, FuncError, P};
use super::parse::{Arg, Branch, Command, Node, NumberLit, Pipe, Tree};
use crate::value::{ListKind, MapKind, Value};
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

/// Go's maxExecDepth for `{{template}}` nesting.
pub const MAX_EXEC_DEPTH: usize = 100_000;
/// Helm's limit on nested `include` of one name.
pub const MAX_INCLUDE_DEPTH: usize = 1000;

/// A value plus whether Go would see it as an `interface {}` (a map element
/// or list element) rather than a concrete value. The difference shows in
/// error texts and in how nil behaves under field access.
#[derive(Clone, Debug)]
pub struct Slot {
    pub v: Value,
    pub iface: bool,
}

impl Slot {
    pub fn concrete(v: Value) -> Slot {
        Slot { v, iface: false }
    }
    fn static_type(&self) -> String {
        if self.iface {
            "interface {}".into()
        } else {
            self.v.type_name()
        }
    }
}

/// Callback for the `lookup` function against a live cluster.
pub type LookupFn = dyn Fn(&str, &str, &str, &str) -> Result<Value, funcs::LookupError>;

/// A set of named templates sharing one namespace of definitions.
#[derive(Default)]
pub struct TemplateSet {
    pub trees: HashMap<String, Rc<Tree>>,
}

impl TemplateSet {
    pub fn new() -> Self {
        Self::default()
    }

    /// Parse `text` as template `name` and add it and its definitions,
    /// replacing earlier definitions of the same names (unless the new body
    /// is empty, as in Go).
    pub fn parse(&mut self, name: &str, text: &str) -> Result<(), Error> {
        let trees = super::parse::parse(name, name, text, &funcs::exists).map_err(Error::Parse)?;
        for t in trees {
            self.add(t);
        }
        Ok(())
    }

    /// Parse several files, in order, as if `parse` were called for each:
    /// large sets are parsed on two threads, then added in the same order
    /// (later definitions win) and the first error in order is reported.
    pub fn parse_files(&mut self, files: &[(&str, &str)]) -> Result<(), Error> {
        let shared: Vec<(&str, super::source::Source)> = files
            .iter()
            .map(|(n, t)| (*n, super::source::Source::from(*t)))
            .collect();
        self.parse_shared_files(&shared)
    }

    /// `parse_files` over sources already held shared.
    pub fn parse_shared_files(
        &mut self,
        files: &[(&str, super::source::Source)],
    ) -> Result<(), Error> {
        let parse_one = |(name, text): &(&str, super::source::Source)| {
            super::parse::parse_shared(name, name, text.clone(), &funcs::exists)
        };
        let total: usize = files.iter().map(|(_, t)| t.len()).sum();
        let results: Vec<Result<Vec<Tree>, super::parse::ParseError>> =
            if total < 128 * 1024 || files.len() < 2 {
                files.iter().map(parse_one).collect()
            } else {
                crate::par::map_shared(files, parse_one)
            };
        for r in results {
            for t in r.map_err(Error::Parse)? {
                self.add(t);
            }
        }
        Ok(())
    }

    pub fn add(&mut self, t: Tree) {
        if let Some(old) = self.trees.get(&t.name) {
            if super::parse::is_empty_tree(&t.root) && !super::parse::is_empty_tree(&old.root) {
                return;
            }
        }
        self.trees.insert(t.name.clone(), Rc::new(t));
    }
}

#[derive(Clone, Copy)]
enum CurNode {
    None,
    Pipe(*const Pipe),
    Cmd(*const Command),
    Arg(*const Arg),
    Template(usize, *const String, Option<*const Pipe>),
}

enum Flow {
    Normal,
    Break,
    Continue,
}

/// Execution options Helm sets.
#[derive(Clone, Default)]
pub struct Options {
    /// `missingkey=error` (Helm's Strict mode).
    pub strict: bool,
    /// Lint mode: `required` and `fail` do not abort.
    pub lint: bool,
}

pub struct Exec<'s> {
    pub set: &'s TemplateSet,
    /// Definitions added by `tpl` strings, visible to nested calls.
    overlay: Vec<HashMap<String, Rc<Tree>>>,
    pub lookup: Option<&'s LookupFn>,
    pub options: Options,
    include_counts: HashMap<String, usize>,
    depth: usize,
    /// For built-ins taking raw values: whether each nil argument was typed.
    pub raw_iface: Vec<bool>,
    // Per-template-call state.
    tree: Option<Rc<Tree>>,
    vars: Vec<(Arc<str>, Slot)>,
    cur: CurNode,
}

type R<T> = Result<T, ExecError>;

impl<'s> Exec<'s> {
    pub fn new(set: &'s TemplateSet) -> Self {
        Exec {
            set,
            overlay: Vec::new(),
            lookup: None,
            options: Options::default(),
            include_counts: HashMap::new(),
            depth: 0,
            raw_iface: Vec::new(),
            tree: None,
            vars: Vec::new(),
            cur: CurNode::None,
        }
    }

    pub fn find_tree(&self, name: &str) -> Option<Rc<Tree>> {
        for o in self.overlay.iter().rev() {
            if let Some(t) = o.get(name) {
                return Some(t.clone());
            }
        }
        self.set.trees.get(name).cloned()
    }

    /// Execute the named template with `dot`, returning its output.
    pub fn execute(&mut self, name: &str, dot: Value) -> Result<String, Error> {
        let mut out = String::new();
        self.exec_named(name, Slot::concrete(dot), &mut out)
            .map_err(Error::Exec)?;
        Ok(out)
    }

    /// Go's `Template.ExecuteTemplate` on the shared set: a fresh state.
    pub fn exec_named(&mut self, name: &str, dot: Slot, out: &mut String) -> R<()> {
        let Some(tree) = self.find_tree(name) else {
            return Err(ExecError {
                location: None,
                name: name.to_string(),
                context: String::new(),
                detail: Detail::Msg(format!("no such template {}", format::quote_go(name))),
            });
        };
        self.run_tree(tree, dot, out)
    }

    fn run_tree(&mut self, tree: Rc<Tree>, dot: Slot, out: &mut String) -> R<()> {
        // Templates may recurse as deep as Go allows (100000 levels); grow
        // the stack on the heap instead of overflowing it.
        stacker::maybe_grow(256 * 1024, 4 * 1024 * 1024, || {
            self.run_tree_inner(tree, dot, out)
        })
    }

    fn run_tree_inner(&mut self, tree: Rc<Tree>, dot: Slot, out: &mut String) -> R<()> {
        let saved_tree = self.tree.replace(tree.clone());
        let saved_vars = std::mem::replace(&mut self.vars, vec![(Arc::from("$"), dot.clone())]);
        let saved_cur = self.cur;
        self.cur = CurNode::None;
        let r = self.walk_list(&dot, &tree.root, out);
        self.tree = saved_tree;
        self.vars = saved_vars;
        self.cur = saved_cur;
        r.map(|_| ())
    }

    // ---- errors ----

    fn error_at(&self, msg: String) -> ExecError {
        self.make_error(Detail::Msg(msg))
    }

    fn make_error(&self, detail: Detail) -> ExecError {
        let tree = self.tree.as_ref();
        let name = tree.map(|t| t.name.clone()).unwrap_or_default();
        let (pos, ctx) = match self.cur {
            CurNode::None => {
                return ExecError {
                    location: None,
                    name,
                    context: String::new(),
                    detail,
                };
            }
            // SAFETY: nodes point into trees kept alive by `self.tree` and the
            // call stack for as long as they are current.
            CurNode::Pipe(p) => unsafe { ((*p).pos, (*p).to_string()) },
            CurNode::Cmd(c) => unsafe { ((*c).pos, (*c).to_string()) },
            CurNode::Arg(a) => unsafe { ((*a).pos(), (*a).to_string()) },
            CurNode::Template(pos, name, pipe) => unsafe {
                let mut s = format!("{{{{template {}", format::quote_go(&*name));
                if let Some(p) = pipe {
                    s.push(' ');
                    s.push_str(&(*p).to_string());
                }
                s.push_str("}}");
                (pos, s)
            },
        };
        let location = tree.map(|t| t.location(pos));
        ExecError {
            location,
            name,
            context: ctx,
            detail,
        }
    }

    fn errorf<T>(&self, msg: impl Into<String>) -> R<T> {
        Err(self.error_at(msg.into()))
    }

    fn at_pipe(&mut self, p: &Pipe) {
        self.cur = CurNode::Pipe(p as *const _);
    }
    fn at_cmd(&mut self, c: &Command) {
        self.cur = CurNode::Cmd(c as *const _);
    }
    fn at_arg(&mut self, a: &Arg) {
        self.cur = CurNode::Arg(a as *const _);
    }

    // ---- walking ----

    fn walk_list(&mut self, dot: &Slot, nodes: &[Node], out: &mut String) -> R<Flow> {
        for n in nodes {
            match self.walk(dot, n, out)? {
                Flow::Normal => {}
                f => return Ok(f),
            }
        }
        Ok(Flow::Normal)
    }

    fn walk(&mut self, dot: &Slot, node: &Node, out: &mut String) -> R<Flow> {
        match node {
            Node::Text(t) => out.push_str(t),
            Node::Action(pipe) => {
                let v = self.eval_pipeline(dot, pipe)?;
                if pipe.decl.is_empty() {
                    self.print_value(&v, out)?;
                }
            }
            Node::If(b) => return self.walk_if_or_with(true, dot, b, out),
            Node::With(b) => return self.walk_if_or_with(false, dot, b, out),
            Node::Range(b) => return self.walk_range(dot, b, out),
            Node::Template { name, pipe, pos } => {
                self.cur = CurNode::Template(
                    *pos,
                    name as *const String,
                    pipe.as_ref().map(|p| p as *const Pipe),
                );
                let Some(tree) = self.find_tree(name) else {
                    return self.errorf(format!("template {} not defined", format::quote_go(name)));
                };
                if self.depth >= MAX_EXEC_DEPTH {
                    return self.errorf(format!(
                        "exceeded maximum template depth ({MAX_EXEC_DEPTH})"
                    ));
                }
                let newdot = match pipe {
                    Some(p) => Slot::concrete(self.eval_pipeline(dot, p)?),
                    None => Slot::concrete(Value::Nil),
                };
                self.depth += 1;
                let r = self.run_tree(tree, newdot, out);
                self.depth -= 1;
                r?;
            }
            Node::Break { .. } => return Ok(Flow::Break),
            Node::Continue { .. } => return Ok(Flow::Continue),
        }
        Ok(Flow::Normal)
    }

    fn walk_if_or_with(
        &mut self,
        is_if: bool,
        dot: &Slot,
        b: &Branch,
        out: &mut String,
    ) -> R<Flow> {
        let mark = self.vars.len();
        let val = self.eval_pipeline(dot, &b.pipe)?;
        let truth = self.is_true(&val)?;
        let r = if truth {
            if is_if {
                self.walk_list(dot, &b.list, out)
            } else {
                self.walk_list(&Slot::concrete(val), &b.list, out)
            }
        } else if let Some(el) = &b.else_list {
            self.walk_list(dot, el, out)
        } else {
            Ok(Flow::Normal)
        };
        self.vars.truncate(mark);
        r
    }

    fn is_true(&self, v: &Value) -> R<bool> {
        Ok(v.truthy())
    }

    fn walk_range(&mut self, dot: &Slot, b: &Branch, out: &mut String) -> R<Flow> {
        let mark = self.vars.len();
        let val = self.eval_pipeline(dot, &b.pipe)?;
        // The pipeline pushed its declared variables; iterations overwrite them.
        let ndecl = b.pipe.decl.len();
        let r = self.range_items(dot, b, &val, mark, ndecl, out);
        self.vars.truncate(mark);
        r
    }

    fn range_items(
        &mut self,
        _dot: &Slot,
        b: &Branch,
        val: &Value,
        mark: usize,
        ndecl: usize,
        out: &mut String,
    ) -> R<Flow> {
        let items: Vec<(Value, Slot)> = match val {
            Value::List(l, _) => l
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    (
                        Value::Int(i as i64),
                        Slot {
                            v: v.clone(),
                            iface: true,
                        },
                    )
                })
                .collect(),
            Value::Bytes(bs) => bs
                .iter()
                .enumerate()
                .map(|(i, v)| (Value::Int(i as i64), Slot::concrete(Value::Uint8(*v))))
                .collect(),
            Value::Map(m, kind) => {
                let iface = !kind.strings();
                m.borrow()
                    .iter()
                    .map(|(k, v)| {
                        (
                            Value::str(k),
                            Slot {
                                v: v.clone(),
                                iface,
                            },
                        )
                    })
                    .collect()
            }
            Value::Int(n) | Value::Int64(n) => {
                if ndecl > 1 {
                    return self.errorf(format!(
                        "can't use {} to iterate over more than one variable",
                        n
                    ));
                }
                let ctor = |i: i64| {
                    if matches!(val, Value::Int(_)) {
                        Value::Int(i)
                    } else {
                        Value::Int64(i)
                    }
                };
                (0..(*n).max(0))
                    .map(|i| (ctor(i), Slot::concrete(ctor(i))))
                    .collect()
            }
            Value::Nil => Vec::new(),
            Value::Object(o) => match o.to_data() {
                Value::List(l, _) => l
                    .iter()
                    .enumerate()
                    .map(|(i, v)| {
                        (
                            Value::Int(i as i64),
                            Slot {
                                v: v.clone(),
                                iface: false,
                            },
                        )
                    })
                    .collect(),
                Value::Map(m, _) => m
                    .borrow()
                    .iter()
                    .map(|(k, v)| (Value::str(k), Slot::concrete(v.clone())))
                    .collect(),
                _ => {
                    return self.errorf(format!(
                        "range can't iterate over {}",
                        format::format_v(val)
                    ));
                }
            },
            other => {
                return self.errorf(format!(
                    "range can't iterate over {}",
                    format::format_v(other)
                ));
            }
        };
        if items.is_empty() {
            if let Some(el) = &b.else_list {
                return self.walk_list(_dot, el, out);
            }
            return Ok(Flow::Normal);
        }
        let int_range = matches!(val, Value::Int(_) | Value::Int64(_));
        for (k, v) in items {
            // Go sets the element variable first, then the key.
            if ndecl > 0 {
                if int_range {
                    self.vars[mark].1 = Slot::concrete(k.clone());
                } else if ndecl == 1 {
                    self.vars[mark].1 = v.clone();
                } else {
                    self.vars[mark].1 = Slot::concrete(k.clone());
                    self.vars[mark + 1].1 = v.clone();
                }
            }
            let inner = self.vars.len();
            let f = self.walk_list(&v, &b.list, out);
            self.vars.truncate(inner);
            match f? {
                Flow::Break => break,
                Flow::Continue | Flow::Normal => {}
            }
        }
        Ok(Flow::Normal)
    }

    fn print_value(&self, v: &Value, out: &mut String) -> R<()> {
        match v {
            Value::Nil => out.push_str("<no value>"),
            other => format::write_v(out, other, false),
        }
        Ok(())
    }

    // ---- pipelines and commands ----

    pub fn eval_pipeline(&mut self, dot: &Slot, pipe: &Pipe) -> R<Value> {
        stacker::maybe_grow(256 * 1024, 4 * 1024 * 1024, || {
            self.eval_pipeline_inner(dot, pipe)
        })
    }

    fn eval_pipeline_inner(&mut self, dot: &Slot, pipe: &Pipe) -> R<Value> {
        self.at_pipe(pipe);
        let mut value: Option<Slot> = None;
        for cmd in &pipe.cmds {
            let v = self.eval_command(dot, cmd, value.take())?;
            value = Some(Slot::concrete(v.v));
        }
        let value = value.map(|s| s.v).unwrap_or(Value::Nil);
        for (_, name) in &pipe.decl {
            if pipe.is_assign {
                self.set_var(name, value.clone())?;
            } else {
                self.vars
                    .push((name.clone(), Slot::concrete(value.clone())));
            }
        }
        Ok(value)
    }

    fn set_var(&mut self, name: &str, v: Value) -> R<()> {
        for (n, slot) in self.vars.iter_mut().rev() {
            if &**n == name {
                *slot = Slot::concrete(v);
                return Ok(());
            }
        }
        self.errorf(format!("undefined variable: {name}"))
    }

    fn var_value(&self, name: &str) -> R<Slot> {
        for (n, slot) in self.vars.iter().rev() {
            if &**n == name {
                return Ok(slot.clone());
            }
        }
        self.errorf(format!("undefined variable: {name}"))
    }

    fn eval_command(&mut self, dot: &Slot, cmd: &Command, fin: Option<Slot>) -> R<Slot> {
        let first = &cmd.args[0];
        match first {
            Arg::Field { idents, .. } => {
                self.at_arg(first);
                return self.eval_field_chain(dot, dot.clone(), idents, Some(cmd), fin);
            }
            Arg::Chain { node, fields, .. } => {
                return self.eval_chain(dot, first, node, fields, Some(cmd), fin)
            }
            Arg::Identifier { name, .. } => {
                self.at_arg(first);
                return self.eval_function(dot, name, cmd, fin);
            }
            Arg::Pipe(p) => {
                self.not_a_function(cmd, &fin)?;
                return Ok(Slot::concrete(self.eval_pipeline(dot, p)?));
            }
            Arg::Variable { idents, .. } => {
                return self.eval_variable(dot, first, idents, Some(cmd), fin)
            }
            _ => {}
        }
        self.at_arg(first);
        self.not_a_function(cmd, &fin)?;
        match first {
            Arg::Bool { val, .. } => Ok(Slot::concrete(Value::Bool(*val))),
            Arg::Dot { .. } => Ok(dot.clone()),
            Arg::Nil { .. } => self.errorf("nil is not a command"),
            Arg::Number { lit, .. } => Ok(Slot::concrete(self.ideal_constant(lit)?)),
            Arg::Str { text, .. } => Ok(Slot::concrete(Value::Str(text.clone()))),
            _ => self.errorf(format!(
                "can't evaluate command {}",
                format::quote_go(&first.to_string())
            )),
        }
    }

    fn not_a_function(&self, cmd: &Command, fin: &Option<Slot>) -> R<()> {
        if cmd.args.len() > 1 || fin.is_some() {
            return self.errorf(format!(
                "can't give argument to non-function {}",
                cmd.args[0]
            ));
        }
        Ok(())
    }

    fn ideal_constant(&self, lit: &NumberLit) -> R<Value> {
        if lit.is_complex {
            return match Complex::parse(&lit.text) {
                Some(c) => Ok(Value::Object(Rc::new(c))),
                None => self.errorf(format!(
                    "illegal number syntax: {}",
                    format::quote_go(&lit.text)
                )),
            };
        }
        let t = &lit.text;
        let is_hex_int = (t.starts_with("0x")
            || t.starts_with("0X")
            || t.starts_with("-0x")
            || t.starts_with("+0x"))
            && !t.contains(['p', 'P']);
        if lit.float.is_some()
            && !is_hex_int
            && !lit.is_char
            && t.contains(['.', 'e', 'E', 'p', 'P'])
        {
            return Ok(Value::Float(lit.float.unwrap()));
        }
        if let Some(i) = lit.int {
            return Ok(Value::Int(i));
        }
        if lit.uint.is_some() {
            return self.errorf(format!("{} overflows int", t));
        }
        // An integer literal too large for int64 and uint64.
        self.errorf(format!("{} overflows int", t))
    }

    fn eval_variable(
        &mut self,
        dot: &Slot,
        node: &Arg,
        idents: &[String],
        cmd: Option<&Command>,
        fin: Option<Slot>,
    ) -> R<Slot> {
        self.at_arg(node);
        let value = self.var_value(&idents[0])?;
        if idents.len() == 1 {
            if let Some(c) = cmd {
                self.not_a_function(c, &fin)?;
            }
            return Ok(value);
        }
        let rest: Vec<Arc<str>> = idents[1..].iter().map(|s| Arc::from(s.as_str())).collect();
        self.eval_field_chain(dot, value, &rest, cmd, fin)
    }

    fn eval_chain(
        &mut self,
        dot: &Slot,
        node: &Arg,
        inner: &Arg,
        fields: &[Arc<str>],
        cmd: Option<&Command>,
        fin: Option<Slot>,
    ) -> R<Slot> {
        self.at_arg(node);
        if matches!(inner, Arg::Nil { .. }) {
            return self.errorf(format!("indirection through explicit nil in {}", node));
        }
        let recv = self.eval_arg(dot, P::Raw, inner)?;
        self.eval_field_chain(dot, recv, fields, cmd, fin)
    }

    fn eval_field_chain(
        &mut self,
        dot: &Slot,
        mut recv: Slot,
        idents: &[Arc<str>],
        cmd: Option<&Command>,
        fin: Option<Slot>,
    ) -> R<Slot> {
        let n = idents.len();
        for id in &idents[..n - 1] {
            recv = self.eval_field(dot, id, None, None, recv)?;
        }
        self.eval_field(dot, &idents[n - 1], cmd, fin, recv)
    }

    fn eval_field(
        &mut self,
        dot: &Slot,
        name: &str,
        cmd: Option<&Command>,
        fin: Option<Slot>,
        recv: Slot,
    ) -> R<Slot> {
        let has_args = cmd.map(|c| c.args.len() > 1).unwrap_or(false) || fin.is_some();
        match &recv.v {
            Value::Nil => {
                if !recv.iface {
                    if self.options.strict {
                        return self.errorf(format!(
                            "nil data; no entry for key {}",
                            format::quote_go(name)
                        ));
                    }
                    return Ok(Slot {
                        v: Value::Nil,
                        iface: false,
                    });
                }
                self.errorf(format!(
                    "nil pointer evaluating {}.{}",
                    recv.static_type(),
                    name
                ))
            }
            Value::Map(m, kind) => {
                if *kind == MapKind::Values && matches!(name, "YAML" | "AsMap" | "Table" | "Encode")
                {
                    return self.call_values_method(dot, name, &recv.v, cmd, fin);
                }
                if has_args {
                    return self.errorf(format!("{name} is not a method but has arguments"));
                }
                let got = m.borrow().get(name).cloned();
                match got {
                    Some(v) => Ok(Slot {
                        v,
                        iface: !kind.strings(),
                    }),
                    None => {
                        if self.options.strict {
                            return self.errorf(format!(
                                "map has no entry for key {}",
                                format::quote_go(name)
                            ));
                        }
                        if kind.strings() {
                            Ok(Slot::concrete(Value::str("")))
                        } else {
                            Ok(Slot {
                                v: Value::Nil,
                                iface: true,
                            })
                        }
                    }
                }
            }
            Value::Object(o) => {
                if o.has_method(name) {
                    let o = o.clone();
                    let args = match o.method_sig(name) {
                        Some((params, variadic)) => {
                            let args: &[Arg] = cmd.map(|c| &c.args[1..]).unwrap_or(&[]);
                            self.eval_call_args(dot, name, params, variadic, args, fin)?
                        }
                        None => self.eval_method_args(dot, cmd, fin)?,
                    };
                    return match o.call_method(name, args) {
                        Ok(v) => Ok(Slot::concrete(v)),
                        Err(e) => {
                            if let Some(c) = cmd {
                                self.at_cmd(c);
                            }
                            Err(self.make_error(Detail::Call {
                                func: name.to_string(),
                                cause: Box::new(Cause::Plain(e.to_string())),
                            }))
                        }
                    };
                }
                match o.field(name) {
                    Some(v) => {
                        if has_args {
                            return self.errorf(format!(
                                "{name} has arguments but cannot be invoked as function"
                            ));
                        }
                        Ok(Slot::concrete(v))
                    }
                    None => self.errorf(format!(
                        "can't evaluate field {} in type {}",
                        name,
                        recv.static_type()
                    )),
                }
            }
            _ => self.errorf(format!(
                "can't evaluate field {} in type {}",
                name,
                recv.static_type()
            )),
        }
    }

    /// Check arity and evaluate arguments against Go parameter types.
    /// Go's arity check for a call of `name`.
    fn check_arity(
        &self,
        name: &str,
        nfixed: usize,
        variadic: bool,
        nargs: usize,
        has_final: bool,
    ) -> R<()> {
        let num_in = nargs + usize::from(has_final);
        if variadic {
            if num_in < nfixed {
                return self.errorf(format!(
                    "wrong number of args for {name}: want at least {nfixed} got {nargs}"
                ));
            }
        } else if num_in != nfixed {
            return self.errorf(format!(
                "wrong number of args for {name}: want {nfixed} got {num_in}"
            ));
        }
        Ok(())
    }

    /// Check arity and evaluate arguments against Go parameter types;
    /// records for raw (reflect.Value) parameters whether a nil was typed.
    fn eval_call_args(
        &mut self,
        dot: &Slot,
        name: &str,
        params: &[P],
        variadic: Option<P>,
        args: &[Arg],
        fin: Option<Slot>,
    ) -> R<Vec<Value>> {
        self.check_arity(
            name,
            params.len(),
            variadic.is_some(),
            args.len(),
            fin.is_some(),
        )?;
        let num_in = args.len() + usize::from(fin.is_some());
        let nfixed = params.len();
        let mut argv = Vec::with_capacity(num_in);
        self.raw_iface.clear();
        let mut i = 0;
        while i < nfixed && i < args.len() {
            let slot = self.eval_arg_raw(dot, params[i], &args[i])?;
            self.raw_iface.push(slot.iface);
            argv.push(slot.v);
            i += 1;
        }
        if let Some(vt) = variadic {
            while i < args.len() {
                argv.push(self.eval_arg(dot, vt, &args[i])?.v);
                i += 1;
            }
        }
        if let Some(f) = fin {
            let t = if num_in - 1 < nfixed {
                params[num_in - 1]
            } else {
                variadic.unwrap_or(P::Any)
            };
            argv.push(self.validate_type(f, t)?);
        }
        Ok(argv)
    }

    fn eval_method_args(
        &mut self,
        dot: &Slot,
        cmd: Option<&Command>,
        fin: Option<Slot>,
    ) -> R<Vec<Value>> {
        let mut args = Vec::new();
        if let Some(c) = cmd {
            for a in &c.args[1..] {
                args.push(self.eval_arg(dot, P::Any, a)?.v);
            }
        }
        if let Some(f) = fin {
            args.push(f.v);
        }
        Ok(args)
    }

    fn call_values_method(
        &mut self,
        dot: &Slot,
        name: &str,
        recv: &Value,
        cmd: Option<&Command>,
        fin: Option<Slot>,
    ) -> R<Slot> {
        let args = self.eval_method_args(dot, cmd, fin)?;
        match name {
            "AsMap" => {
                if let Value::Map(m, _) = recv {
                    Ok(Slot::concrete(Value::Map(m.clone(), MapKind::Any)))
                } else {
                    unreachable!()
                }
            }
            "YAML" => Ok(Slot::concrete(Value::string(
                crate::goyaml::emit::to_yaml_document(recv),
            ))),
            "Table" => {
                let key = args
                    .first()
                    .and_then(|a| a.as_str())
                    .unwrap_or("")
                    .to_string();
                let mut cur = recv.clone();
                for part in key.split('.') {
                    cur = match &cur {
                        Value::Map(m, _) => match m.borrow().get(part) {
                            Some(Value::Map(mm, _)) => Value::Map(mm.clone(), MapKind::Values),
                            _ => {
                                return Err(self.make_error(Detail::Call {
                                    func: "Table".into(),
                                    cause: Box::new(Cause::Plain(format!(
                                        "no table named {}",
                                        format::quote_go(&key)
                                    ))),
                                }))
                            }
                        },
                        _ => unreachable!(),
                    };
                }
                Ok(Slot::concrete(cur))
            }
            _ => self.errorf(format!("can't evaluate field {name}")),
        }
    }

    // ---- function calls ----

    fn eval_function(
        &mut self,
        dot: &Slot,
        name: &str,
        cmd: &Command,
        fin: Option<Slot>,
    ) -> R<Slot> {
        let Some(func) = funcs::get(name) else {
            return self.errorf(format!(
                "{} is not a defined function",
                format::quote_go(name)
            ));
        };
        let args = &cmd.args[1..];
        self.check_arity(
            name,
            func.params.len(),
            func.variadic.is_some(),
            args.len(),
            fin.is_some(),
        )?;

        // and/or short-circuit and return the operand itself.
        if name == "and" || name == "or" {
            let want = name == "or";
            let mut v = Value::Nil;
            for a in args {
                v = self.eval_arg(dot, P::Raw, a)?.v;
                if v.truthy() == want {
                    return Ok(Slot::concrete(v));
                }
            }
            if let Some(f) = fin {
                v = f.v;
            }
            return Ok(Slot::concrete(v));
        }

        if name == "call" {
            let fnv = self.eval_arg(dot, P::Raw, &args[0])?;
            self.at_cmd(cmd);
            let msg = if fnv.v.is_nil() {
                "call of nil".to_string()
            } else {
                format!("non-function {} of type {}", args[0], fnv.v.type_name())
            };
            return Err(self.make_error(Detail::Call {
                func: name.to_string(),
                cause: Box::new(Cause::Plain(msg)),
            }));
        }
        let argv = self.eval_call_args(dot, name, func.params, func.variadic, args, fin)?;
        match (func.f)(self, argv) {
            Ok(v) => Ok(Slot::concrete(v)),
            Err(e) => {
                self.at_cmd(cmd);
                let cause = match e {
                    FuncError::Msg(m) => Cause::Plain(m),
                    FuncError::Exec(inner) => Cause::Exec(*inner),
                    FuncError::Fail(m) => Cause::Fail(m),
                };
                Err(self.make_error(Detail::Call {
                    func: name.to_string(),
                    cause: Box::new(cause),
                }))
            }
        }
    }

    /// Go's evalArg: evaluate an argument node for a parameter of type `t`.
    /// Like eval_arg, but for reflect.Value parameters keeps whether a nil
    /// came out of a map (a typed nil) or is untyped.
    fn eval_arg_raw(&mut self, dot: &Slot, t: P, n: &Arg) -> R<Slot> {
        if t == P::Raw {
            let iface = match n {
                Arg::Field { idents, .. } => {
                    self.at_arg(n);
                    let v = self.eval_field_chain(dot, dot.clone(), idents, None, None)?;
                    return Ok(v);
                }
                Arg::Variable { idents, .. } => {
                    let v = self.eval_variable(dot, n, idents, None, None)?;
                    return Ok(v);
                }
                Arg::Dot { .. } => return Ok(dot.clone()),
                _ => false,
            };
            let v = self.eval_arg(dot, t, n)?;
            return Ok(Slot { v: v.v, iface });
        }
        self.eval_arg(dot, t, n)
    }

    fn eval_arg(&mut self, dot: &Slot, t: P, n: &Arg) -> R<Slot> {
        self.at_arg(n);
        match n {
            Arg::Dot { .. } => return Ok(Slot::concrete(self.validate_type(dot.clone(), t)?)),
            Arg::Nil { .. } => {
                if t == P::Raw {
                    return Ok(Slot::concrete(Value::Nil));
                }
                if t.can_be_nil() {
                    return Ok(Slot::concrete(t.zero()));
                }
                return self.errorf(format!("cannot assign nil to {}", t.go_name()));
            }
            Arg::Field { idents, .. } => {
                let v = self.eval_field_chain(dot, dot.clone(), idents, None, None)?;
                return Ok(Slot::concrete(self.validate_type(v, t)?));
            }
            Arg::Variable { idents, .. } => {
                let v = self.eval_variable(dot, n, idents, None, None)?;
                return Ok(Slot::concrete(self.validate_type(v, t)?));
            }
            Arg::Pipe(p) => {
                let v = self.eval_pipeline(dot, p)?;
                return Ok(Slot::concrete(self.validate_type(Slot::concrete(v), t)?));
            }
            Arg::Identifier { name, .. } => {
                let cmd = Command {
                    pos: n.pos(),
                    args: vec![n.clone()],
                };
                let v = self.eval_function(dot, name, &cmd, None)?;
                self.at_arg(n);
                return Ok(Slot::concrete(self.validate_type(v, t)?));
            }
            Arg::Chain { node, fields, .. } => {
                let v = self.eval_chain(dot, n, node, fields, None, None)?;
                return Ok(Slot::concrete(self.validate_type(v, t)?));
            }
            _ => {}
        }
        match t {
            P::Bool => match n {
                Arg::Bool { val, .. } => Ok(Slot::concrete(Value::Bool(*val))),
                _ => self.errorf(format!("expected bool; found {n}")),
            },
            P::Int | P::Int64 | P::Uint32 => match n {
                Arg::Number { lit, .. } if lit.int.is_some() && t != P::Uint32 => {
                    Ok(Slot::concrete(match t {
                        P::Int => Value::Int(lit.int.unwrap()),
                        _ => Value::Int64(lit.int.unwrap()),
                    }))
                }
                Arg::Number { lit, .. } if t == P::Uint32 && lit.uint.is_some() => {
                    Ok(Slot::concrete(Value::Uint32(lit.uint.unwrap() as u32)))
                }
                _ if t == P::Uint32 => self.errorf(format!("expected unsigned integer; found {n}")),
                _ => self.errorf(format!("expected integer; found {n}")),
            },
            P::Float => match n {
                Arg::Number { lit, .. } if lit.float.is_some() && !lit.is_complex => {
                    Ok(Slot::concrete(Value::Float(lit.float.unwrap())))
                }
                _ => self.errorf(format!("expected float; found {n}")),
            },
            P::Str => match n {
                Arg::Str { text, .. } => Ok(Slot::concrete(Value::Str(text.clone()))),
                _ => self.errorf(format!("expected string; found {n}")),
            },
            P::Any | P::Raw => match n {
                Arg::Bool { val, .. } => Ok(Slot::concrete(Value::Bool(*val))),
                Arg::Number { lit, .. } => Ok(Slot::concrete(self.ideal_constant(lit)?)),
                Arg::Str { text, .. } => Ok(Slot::concrete(Value::Str(text.clone()))),
                _ => self.errorf(format!(
                    "can't handle {} for arg of type {}",
                    n,
                    t.go_name()
                )),
            },
            _ => self.errorf(format!(
                "can't handle {} for arg of type {}",
                n,
                t.go_name()
            )),
        }
    }

    /// Go's validateType: the value must be assignable to the parameter type.
    fn validate_type(&self, s: Slot, t: P) -> R<Value> {
        if let P::Any | P::Raw = t {
            return Ok(s.v);
        }
        if s.v.is_nil() {
            if s.iface {
                return self.errorf(format!(
                    "wrong type for value; expected {}; got interface {{}}",
                    t.go_name()
                ));
            }
            if t.can_be_nil() {
                return Ok(t.zero());
            }
            return self.errorf(format!("invalid value; expected {}", t.go_name()));
        }
        let ok = match (t, &s.v) {
            (P::Str, Value::Str(_)) => true,
            (P::Int, Value::Int(_)) => true,
            (P::Int64, Value::Int64(_)) => true,
            (P::Uint32, Value::Uint32(_)) => true,
            (P::Float, Value::Float(_)) => true,
            (P::Bool, Value::Bool(_)) => true,
            (P::List, Value::List(_, ListKind::Any)) => true,
            (P::Dict, Value::Map(_, MapKind::Any | MapKind::Values)) => true,
            (P::Cert, Value::Object(o)) => o.type_name() == "sprig.certificate",
            _ => false,
        };
        if ok {
            return Ok(s.v);
        }
        self.errorf(format!(
            "wrong type for value; expected {}; got {}",
            t.go_name(),
            s.v.type_name()
        ))
    }

    // ---- Helm's include / tpl ----

    pub fn include(&mut self, name: &str, data: Value) -> Result<String, FuncError> {
        let count = self.include_counts.entry(name.to_string()).or_insert(0);
        if *count > MAX_INCLUDE_DEPTH {
            return Err(FuncError::Msg(format!(
                "rendering template has a nested reference name: {name}: unable to execute template"
            )));
        }
        *count += 1;
        let mut out = String::new();
        let r = self.exec_named(name, Slot::concrete(data), &mut out);
        if let Some(c) = self.include_counts.get_mut(name) {
            *c -= 1;
        }
        match r {
            Ok(()) => Ok(out),
            Err(e) => {
                if e.location.is_none() && self.find_tree(name).is_none() {
                    return Err(FuncError::Msg(format!(
                        "template: no template {} associated with template \"gotpl\"",
                        format::quote_go(name)
                    )));
                }
                Err(FuncError::Exec(Box::new(e)))
            }
        }
    }

    pub fn tpl(&mut self, text: &str, data: Value) -> Result<String, FuncError> {
        let trees = super::parse::parse("gotpl", "gotpl", text, &funcs::exists).map_err(|e| {
            FuncError::Msg(format!(
                "cannot parse template {}: {}",
                format::quote_go(text),
                e
            ))
        })?;
        let mut layer = HashMap::new();
        for t in trees {
            layer.insert(t.name.clone(), Rc::new(t));
        }
        self.overlay.push(layer);
        let mut out = String::new();
        let r = self.exec_named("gotpl", Slot::concrete(data), &mut out);
        self.overlay.pop();
        match r {
            Ok(()) => Ok(out.replace("<no value>", "")),
            Err(e) => {
                if let Some(m) = e.fail_msg_public() {
                    return Err(FuncError::Fail(m));
                }
                Err(FuncError::Msg(format!(
                    "error during tpl function execution for {}: {}",
                    format::quote_go(text),
                    e
                )))
            }
        }
    }
}

impl ExecError {
    pub fn fail_msg_public(&self) -> Option<String> {
        match &self.detail {
            Detail::Fail(m) => Some(m.clone()),
            Detail::Call { cause, .. } => match cause.as_ref() {
                Cause::Exec(e) => e.fail_msg_public(),
                Cause::Fail(m) => Some(m.clone()),
                Cause::Plain(_) => None,
            },
            Detail::Msg(_) => None,
        }
    }
}

/// A Go complex128 constant (`1+2i`), which templates can only print.
#[derive(Debug, Clone, Copy)]
pub struct Complex {
    pub re: f64,
    pub im: f64,
}

impl Complex {
    fn parse(text: &str) -> Option<Complex> {
        let body = text.strip_suffix('i')?;
        // Split at the last sign that is not part of an exponent.
        let b = body.as_bytes();
        let mut split = None;
        for i in (1..b.len()).rev() {
            if (b[i] == b'+' || b[i] == b'-') && !matches!(b[i - 1], b'e' | b'E' | b'p' | b'P') {
                split = Some(i);
                break;
            }
        }
        let num = |s: &str| {
            crate::value::strconv::parse_go_float(s)
                .or_else(|| crate::value::strconv::parse_go_int(s).map(|i| i as f64))
        };
        match split {
            Some(i) => Some(Complex {
                re: num(&body[..i])?,
                im: num(&body[i..])?,
            }),
            None => Some(Complex {
                re: 0.0,
                im: num(body)?,
            }),
        }
    }
}

impl crate::value::Object for Complex {
    fn type_name(&self) -> String {
        "complex128".into()
    }
    fn kind_name(&self) -> &'static str {
        "complex128"
    }
    fn field(&self, _name: &str) -> Option<Value> {
        None
    }
    fn format(&self) -> String {
        let im = format::format_float_g(self.im);
        let sign = if im.starts_with('-') || im.starts_with('+') {
            ""
        } else {
            "+"
        };
        format!("({}{}{}i)", format::format_float_g(self.re), sign, im)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
