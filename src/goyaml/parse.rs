//! Reading YAML the way Helm does (sigs.k8s.io/yaml over go-yaml v2): the
//! events come from the port of go-yaml's reader, scanner and parser in
//! `libyaml`; this file is decode.go's `parser` (the node tree of the
//! first document) and `decoder` for `interface{}` targets.

use super::libyaml::{ErrorType, Event, EventType, Parser};
use super::resolve::{resolve_plain, Scalar};
use crate::value::{Map, Value};
use std::collections::HashMap;

/// A YAML node as go-yaml v2's decoder leaves it in `interface{}` (aliases
/// expanded, merges applied), before sigs.k8s.io/yaml's JSON conversion.
#[derive(Debug, Clone)]
pub enum Node {
    Scalar(Scalar),
    Seq(Vec<Node>),
    /// Keys in the order the decoder sets them; a later duplicate wins.
    Map(Vec<(Node, Node)>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct YamlError {
    pub line: usize,
    pub column: usize,
    pub msg: String,
}

impl std::fmt::Display for YamlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.msg)
    }
}

impl std::error::Error for YamlError {}

/// Why a values file (values.yaml, `-f`) does not load, in LoadValues' words.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ValuesError {
    #[error("error reading yaml document: invalid Yaml document separator: {0}")]
    BadSeparator(String),
    #[error("cannot unmarshal yaml document: {0}")]
    Document(#[source] YamlError),
}

fn failf(msg: String) -> YamlError {
    YamlError {
        line: 0,
        column: 0,
        msg: format!("yaml: {msg}"),
    }
}

/// go-yaml's events, one at a time, as decode.go's parser reads them.
pub struct Events<'a> {
    p: Parser<'a>,
    event: Event,
}

impl<'a> Events<'a> {
    /// newParser: an empty text reads as a single line break.
    pub fn new(input: &'a [u8]) -> Events<'a> {
        let input: &'a [u8] = if input.is_empty() { b"\n" } else { input };
        Events {
            p: Parser::new(input),
            event: Event::default(),
        }
    }

    /// parser.fail(): go-yaml's message for the parser's error.
    fn fail(&self) -> YamlError {
        let p = &self.p;
        let mut line = 0;
        if p.problem_mark.line != 0 {
            line = p.problem_mark.line;
            // Scanner errors don't iterate line before returning error.
            if p.error == ErrorType::Scanner {
                line += 1;
            }
        } else if p.context_mark.line != 0 {
            line = p.context_mark.line;
        }
        let where_ = if line != 0 {
            format!("line {line}: ")
        } else {
            String::new()
        };
        let msg = if p.problem.is_empty() {
            "unknown problem parsing YAML content"
        } else {
            &p.problem
        };
        YamlError {
            line,
            column: p.problem_mark.column + 1,
            msg: format!("yaml: {where_}{msg}"),
        }
    }

    pub fn peek(&mut self) -> Result<EventType, YamlError> {
        if self.event.typ != EventType::None {
            return Ok(self.event.typ);
        }
        if !self.p.parse(&mut self.event) {
            return Err(self.fail());
        }
        Ok(self.event.typ)
    }

    /// The current event (parsed if needed), which `expect` then consumes.
    pub fn current(&mut self) -> Result<&Event, YamlError> {
        self.peek()?;
        Ok(&self.event)
    }

    /// parser.expect: consume an event of the given type.
    pub fn expect(&mut self, e: EventType) -> Result<Event, YamlError> {
        if self.event.typ == EventType::None && !self.p.parse(&mut self.event) {
            return Err(self.fail());
        }
        if self.event.typ == EventType::StreamEnd {
            return Err(failf(
                "attempted to go past the end of stream; corrupted value?".into(),
            ));
        }
        if self.event.typ != e {
            self.p.problem = format!(
                "expected {} event but got {}",
                e.go_name(),
                self.event.typ.go_name()
            );
            return Err(self.fail());
        }
        Ok(std::mem::take(&mut self.event))
    }

    /// The next event, whatever it is.
    pub fn next_event(&mut self) -> Result<Event, YamlError> {
        let t = self.peek()?;
        if t == EventType::StreamEnd {
            return Ok(std::mem::take(&mut self.event));
        }
        self.expect(t)
    }
}

/// A node of go-yaml's parser (decode.go's `node`), before decoding: the
/// whole first document is read into these before the decoder starts.
struct GNode {
    kind: GKind,
    /// The scalar's text; for an alias, its anchor's name.
    value: String,
    tag: String,
    implicit: bool,
    children: Vec<usize>,
    /// For an alias, the node its anchor named when the alias was read.
    alias: usize,
    /// Reachable through an alias (anchored, or inside an anchored node):
    /// the decoder may walk it more than once, so it is copied, not moved.
    shared: bool,
    /// decoder.aliases: this alias is being expanded.
    expanding: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum GKind {
    Scalar,
    Seq,
    Map,
    Alias,
}

/// decode.go's parser: the node tree of the first document, anchors
/// recorded as each node starts (so an alias inside its anchor's value
/// points at the node still being read, and a later anchor of the same
/// name replaces the earlier one for what follows).
struct Loader<'a> {
    ev: Events<'a>,
    nodes: Vec<GNode>,
    anchors: HashMap<Vec<u8>, usize>,
    /// How many anchored collections are open around the current node.
    in_anchor: usize,
}

/// decode.go's allowedAliasRatio.
fn allowed_alias_ratio(decode_count: u64) -> f64 {
    const LOW: u64 = 400_000;
    const HIGH: u64 = 4_000_000;
    if decode_count <= LOW {
        0.99
    } else if decode_count >= HIGH {
        0.10
    } else {
        0.99 - 0.89 * ((decode_count - LOW) as f64 / (HIGH - LOW) as f64)
    }
}

fn text_of(v: Vec<u8>) -> String {
    match String::from_utf8(v) {
        Ok(s) => s,
        Err(e) => crate::value::gostr::from_vec(e.into_bytes()),
    }
}

impl<'a> Loader<'a> {
    fn push(&mut self, kind: GKind, anchor: Option<Vec<u8>>) -> usize {
        let id = self.nodes.len();
        self.nodes.push(GNode {
            kind,
            value: String::new(),
            tag: String::new(),
            implicit: false,
            children: Vec::new(),
            alias: 0,
            shared: self.in_anchor > 0 || anchor.is_some(),
            expanding: false,
        });
        if let Some(a) = anchor {
            self.anchors.insert(a, id);
        }
        id
    }

    /// parser.parse() below the document.
    fn node(&mut self) -> Result<usize, YamlError> {
        match self.ev.peek()? {
            EventType::Scalar => {
                let e = self.ev.expect(EventType::Scalar)?;
                let id = self.push(GKind::Scalar, e.anchor);
                let n = &mut self.nodes[id];
                n.value = text_of(e.value);
                n.tag = text_of(e.tag);
                n.implicit = e.implicit;
                Ok(id)
            }
            EventType::Alias => {
                let name = self.ev.current()?.anchor.clone().unwrap_or_default();
                let Some(&target) = self.anchors.get(&name) else {
                    return Err(failf(format!(
                        "unknown anchor '{}' referenced",
                        text_of(name)
                    )));
                };
                self.ev.expect(EventType::Alias)?;
                let id = self.push(GKind::Alias, None);
                self.nodes[id].value = text_of(name);
                self.nodes[id].alias = target;
                Ok(id)
            }
            t @ (EventType::SequenceStart | EventType::MappingStart) => {
                let anchor = self.ev.current()?.anchor.clone();
                let anchored = anchor.is_some();
                let (kind, end) = if t == EventType::SequenceStart {
                    (GKind::Seq, EventType::SequenceEnd)
                } else {
                    (GKind::Map, EventType::MappingEnd)
                };
                let id = self.push(kind, anchor);
                self.ev.expect(t)?;
                self.in_anchor += usize::from(anchored);
                let mut children = Vec::new();
                while self.ev.peek()? != end {
                    children.push(self.node()?);
                    if kind == GKind::Map {
                        children.push(self.node()?);
                    }
                }
                self.in_anchor -= usize::from(anchored);
                self.ev.expect(end)?;
                self.nodes[id].children = children;
                Ok(id)
            }
            other => Err(failf(format!(
                "attempted to parse unknown event: {}",
                other.go_name()
            ))),
        }
    }
}

/// decode.go's decoder, unmarshalling into `interface{}`: it walks the
/// tree in document order (a merge's list from its end), expanding each
/// alias where it stands, and stops at the first failure in that order:
/// a scalar its tag refuses, an alias met again inside its own expansion,
/// a merge whose value is not a map, a key that is a list or a map, or
/// the check against alias bombs, made at every node it walks.
struct Decoder {
    nodes: Vec<GNode>,
    decode_count: u64,
    alias_count: u64,
    alias_depth: u32,
}

const MERGE_TAG: &str = "tag:yaml.org,2002:merge";

impl Decoder {
    /// decoder.unmarshal's count and check, made before every node.
    fn count(&mut self) -> Result<(), YamlError> {
        self.decode_count += 1;
        if self.alias_depth > 0 {
            self.alias_count += 1;
        }
        let (d, a) = (self.decode_count, self.alias_count);
        if a > 100 && d > 1000 && a as f64 / d as f64 > allowed_alias_ratio(d) {
            return Err(failf("document contains excessive aliasing".into()));
        }
        Ok(())
    }

    /// decoder.alias around `then`, which decodes the anchor's node.
    fn alias<T>(
        &mut self,
        id: usize,
        then: impl FnOnce(&mut Self, usize) -> Result<T, YamlError>,
    ) -> Result<T, YamlError> {
        if self.nodes[id].expanding {
            return Err(failf(format!(
                "anchor '{}' value contains itself",
                self.nodes[id].value
            )));
        }
        self.nodes[id].expanding = true;
        self.alias_depth += 1;
        let r = then(self, self.nodes[id].alias);
        self.alias_depth -= 1;
        self.nodes[id].expanding = false;
        r
    }

    fn children(&mut self, id: usize) -> Vec<usize> {
        if self.nodes[id].shared {
            self.nodes[id].children.clone()
        } else {
            std::mem::take(&mut self.nodes[id].children)
        }
    }

    fn unmarshal(&mut self, id: usize) -> Result<Node, YamlError> {
        self.count()?;
        match self.nodes[id].kind {
            GKind::Alias => self.alias(id, Self::unmarshal),
            GKind::Scalar => {
                let n = &mut self.nodes[id];
                let text = if n.shared {
                    n.value.clone()
                } else {
                    std::mem::take(&mut n.value)
                };
                match resolve_scalar(text, &n.tag, n.implicit)? {
                    // Only a key is a merge; as a value, "<<" is a string.
                    Scalar::Merge => Ok(Node::Scalar(Scalar::Str("<<".into()))),
                    s => Ok(Node::Scalar(s)),
                }
            }
            GKind::Seq => {
                let items = self.children(id);
                let mut out = Vec::with_capacity(items.len());
                for i in items {
                    out.push(self.unmarshal(i)?);
                }
                Ok(Node::Seq(out))
            }
            GKind::Map => {
                let mut pairs = Vec::new();
                self.mapping(id, &mut pairs)?;
                Ok(Node::Map(pairs))
            }
        }
    }

    /// decoder.mapping into a map already made (a merge decodes into the
    /// map that holds it): pairs in the order they are set.
    fn mapping(&mut self, id: usize, pairs: &mut Vec<(Node, Node)>) -> Result<(), YamlError> {
        let children = self.children(id);
        for kv in children.chunks(2) {
            let (k, v) = (kv[0], kv[1]);
            let kn = &self.nodes[k];
            if kn.kind == GKind::Scalar && kn.value == "<<" && (kn.implicit || kn.tag == MERGE_TAG)
            {
                self.merge(v, pairs)?;
                continue;
            }
            let key = self.unmarshal(k)?;
            if let Node::Seq(_) | Node::Map(_) = key {
                return Err(failf(format!("invalid map key: {}", go_sharp_v(&key))));
            }
            let value = self.unmarshal(v)?;
            pairs.push((key, value));
        }
        Ok(())
    }

    /// decoder.unmarshal of a map node (or an alias of one) into `pairs`.
    fn unmarshal_into(
        &mut self,
        id: usize,
        pairs: &mut Vec<(Node, Node)>,
    ) -> Result<(), YamlError> {
        self.count()?;
        match self.nodes[id].kind {
            GKind::Alias => self.alias(id, |d, target| d.unmarshal_into(target, pairs)),
            GKind::Map => self.mapping(id, pairs),
            // merge() lets only maps and aliases of maps through.
            GKind::Scalar | GKind::Seq => Err(merge_error()),
        }
    }

    /// decoder.merge.
    fn merge(&mut self, id: usize, pairs: &mut Vec<(Node, Node)>) -> Result<(), YamlError> {
        let is_map_alias = |d: &Self, i: usize| d.nodes[d.nodes[i].alias].kind == GKind::Map;
        match self.nodes[id].kind {
            GKind::Map => self.unmarshal_into(id, pairs),
            GKind::Alias => {
                if !is_map_alias(self, id) {
                    return Err(merge_error());
                }
                self.unmarshal_into(id, pairs)
            }
            GKind::Seq => {
                // Step backwards as earlier nodes take precedence.
                let items = self.children(id);
                for &i in items.iter().rev() {
                    let ok = match self.nodes[i].kind {
                        GKind::Alias => is_map_alias(self, i),
                        k => k == GKind::Map,
                    };
                    if !ok {
                        return Err(merge_error());
                    }
                    self.unmarshal_into(i, pairs)?;
                }
                Ok(())
            }
            GKind::Scalar => Err(merge_error()),
        }
    }
}

const LONG_TAG_PREFIX: &str = "tag:yaml.org,2002:";

fn short_tag(tag: &str) -> String {
    match tag.strip_prefix(LONG_TAG_PREFIX) {
        Some(rest) => format!("!!{rest}"),
        None => tag.to_string(),
    }
}

/// decoder.scalar with resolve() for an `interface{}` target: the value a
/// scalar event stands for, or the decoder's error.
pub fn resolve_scalar(text: String, tag: &str, implicit: bool) -> Result<Scalar, YamlError> {
    if tag.is_empty() && !implicit {
        return Ok(Scalar::Str(text));
    }
    let short = tag.strip_prefix(LONG_TAG_PREFIX);
    let resolvable = match short {
        _ if tag.is_empty() => true,
        Some("str" | "bool" | "int" | "float" | "null" | "timestamp") => true,
        _ => false,
    };
    if !resolvable {
        // decode.go's isMerge: "<<" plain (or under "!") or tagged !!merge.
        if text == "<<" && ((tag == "!" && implicit) || short == Some("merge")) {
            return Ok(Scalar::Merge);
        }
        if short == Some("binary") {
            use base64::Engine as _;
            let clean: String = text.chars().filter(|c| *c != '\r' && *c != '\n').collect();
            return match base64::engine::general_purpose::STANDARD.decode(clean) {
                Ok(b) => Ok(Scalar::Str(String::from_utf8_lossy(&b).into_owned())),
                Err(_) => Err(failf("!!binary value contains invalid base64 data".into())),
            };
        }
        return Ok(Scalar::Str(text));
    }
    if short == Some("str") {
        return Ok(Scalar::Str(text));
    }
    let mut r = resolve_plain(&text);
    if let Scalar::Timestamp(_) = r {
        // Timestamps are only tried untagged or with !!timestamp.
        if !(tag.is_empty() || short == Some("timestamp")) {
            r = Scalar::Str(text.clone());
        }
    }
    let rtag = match &r {
        Scalar::Null => "null",
        Scalar::Bool(_) => "bool",
        Scalar::Int(_) | Scalar::Uint(_) => "int",
        Scalar::Float(_) => "float",
        // resolve() reads "<<" as a string; the decoder sees a merge in it.
        Scalar::Str(_) | Scalar::Merge => "str",
        Scalar::Timestamp(_) => "timestamp",
    };
    match short {
        None => Ok(r),
        Some(t) if t == rtag => Ok(r),
        Some("float") if matches!(r, Scalar::Int(_)) => match r {
            Scalar::Int(i) => Ok(Scalar::Float(i as f64)),
            _ => unreachable!(),
        },
        Some(_) => Err(failf(format!(
            "cannot decode {} `{}` as a {}",
            short_tag(&format!("{LONG_TAG_PREFIX}{rtag}")),
            text,
            short_tag(tag)
        ))),
    }
}

/// The first YAML document of a text, as go-yaml's Unmarshal reads it
/// (sigs.k8s.io/yaml, and so Helm for values files, Chart.yaml and each
/// manifest): it stops at the end of that document, so whatever follows
/// (another document, or text no parser would accept) is never read.
/// `None` for a text with no document.
pub fn parse_first_document(text: &str) -> Result<Option<Node>, YamlError> {
    let bytes = crate::value::gostr::to_bytes(text);
    let mut l = Loader {
        ev: Events::new(&bytes),
        nodes: Vec::new(),
        anchors: HashMap::new(),
        in_anchor: 0,
    };
    l.ev.expect(EventType::StreamStart)?;
    let root = match l.ev.peek()? {
        EventType::StreamEnd => return Ok(None),
        EventType::DocumentStart => {
            l.ev.expect(EventType::DocumentStart)?;
            let n = l.node()?;
            l.ev.expect(EventType::DocumentEnd)?;
            n
        }
        _ => l.node()?,
    };
    let mut d = Decoder {
        nodes: l.nodes,
        // The document node.
        decode_count: 1,
        alias_count: 0,
        alias_depth: 0,
    };
    d.unmarshal(root).map(Some)
}

fn merge_error() -> YamlError {
    YamlError {
        line: 0,
        column: 0,
        msg: "yaml: map merge requires map or sequence of maps as the value".into(),
    }
}

/// go-yaml v2's decoding of a mapping into `map[interface{}]interface{}`
/// followed by sigs.k8s.io's conversion of keys to strings.
fn map_to_json(pairs: &[(Node, Node)], out: &mut Map) -> Result<(), YamlError> {
    for (k, v) in pairs {
        let key = match k {
            Node::Scalar(s) => match s {
                Scalar::Str(s) | Scalar::Timestamp(s) => s.clone(),
                Scalar::Int(i) => i.to_string(),
                Scalar::Uint(u) => u.to_string(),
                Scalar::Float(f) => float32_key(*f),
                Scalar::Bool(b) => b.to_string(),
                Scalar::Null => {
                    // sigs.k8s.io/yaml: "%s, key: %+#v, value: %+#v".
                    let value = match v {
                        Node::Scalar(Scalar::Null) => "<nil>".to_string(),
                        v => go_sharp_v(v),
                    };
                    return Err(YamlError {
                        line: 0,
                        column: 0,
                        msg: format!("error converting YAML to JSON: unsupported map key of type: %!s(<nil>), key: <nil>, value: {value}"),
                    });
                }
                Scalar::Merge => "<<".into(),
            },
            // go-yaml's decoder: failf("invalid map key: %#v", key).
            other => {
                return Err(YamlError {
                    line: 0,
                    column: 0,
                    msg: format!("yaml: invalid map key: {}", go_sharp_v(other)),
                });
            }
        };
        out.insert(key, to_json_checked(v)?);
    }
    Ok(())
}

/// Go's `%#v` of a node as go-yaml v2 decodes it into interface{}.
fn go_sharp_v(n: &Node) -> String {
    use crate::value::{float::format_float_g, quote::quote_go};
    match n {
        Node::Scalar(s) => match s {
            Scalar::Str(s) | Scalar::Timestamp(s) => quote_go(s),
            Scalar::Int(i) => i.to_string(),
            Scalar::Uint(u) => u.to_string(),
            Scalar::Float(f) => format_float_g(*f),
            Scalar::Bool(b) => b.to_string(),
            Scalar::Null => "interface {}(nil)".into(),
            Scalar::Merge => quote_go("<<"),
        },
        Node::Seq(items) => format!(
            "[]interface {{}}{{{}}}",
            items.iter().map(go_sharp_v).collect::<Vec<_>>().join(", ")
        ),
        // fmt prints a map's entries sorted by key.
        Node::Map(pairs) => {
            let mut kv: Vec<(String, String)> = pairs
                .iter()
                .map(|(k, v)| (go_sharp_v(k), go_sharp_v(v)))
                .collect();
            // Go's map holds the value set last for a key.
            kv.reverse();
            kv.sort_by(|a, b| a.0.cmp(&b.0));
            kv.dedup_by(|a, b| a.0 == b.0);
            format!(
                "map[interface {{}}]interface {{}}{{{}}}",
                kv.iter()
                    .map(|(k, v)| format!("{k}:{v}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    }
}

fn float32_key(f: f64) -> String {
    if f.is_nan() {
        return ".nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            ".inf".into()
        } else {
            "-.inf".into()
        };
    }
    crate::value::float::format_float32_g(f as f32)
}

/// The first value JSON cannot hold, in the order json.Marshal meets it:
/// map keys sorted, sequences in order.
fn first_non_finite(n: &Node) -> Option<f64> {
    match n {
        Node::Scalar(Scalar::Float(f)) if !f.is_finite() => Some(*f),
        Node::Scalar(_) => None,
        Node::Seq(items) => items.iter().find_map(first_non_finite),
        Node::Map(pairs) => {
            let mut sorted: Vec<(String, &Node)> =
                pairs.iter().map(|(k, v)| (key_text(k), v)).collect();
            sorted.sort_by(|a, b| a.0.cmp(&b.0));
            sorted.into_iter().find_map(|(_, v)| first_non_finite(v))
        }
    }
}

fn key_text(k: &Node) -> String {
    match k {
        Node::Scalar(Scalar::Str(s) | Scalar::Timestamp(s)) => s.clone(),
        Node::Scalar(Scalar::Int(i)) => i.to_string(),
        Node::Scalar(Scalar::Uint(u)) => u.to_string(),
        Node::Scalar(Scalar::Bool(b)) => b.to_string(),
        Node::Scalar(Scalar::Null) => "null".into(),
        Node::Scalar(Scalar::Merge) => "<<".into(),
        _ => String::new(),
    }
}

/// Convert a node to the value Helm's templates see (JSON semantics).
pub fn to_json(n: &Node) -> Result<Value, YamlError> {
    if let Some(f) = first_non_finite(n) {
        let t = if f.is_nan() {
            "NaN"
        } else if f > 0.0 {
            "+Inf"
        } else {
            "-Inf"
        };
        return Err(YamlError {
            line: 0,
            column: 0,
            msg: format!("error converting YAML to JSON: json: unsupported value: {t}"),
        });
    }
    to_json_checked(n)
}

fn to_json_checked(n: &Node) -> Result<Value, YamlError> {
    Ok(match n {
        Node::Scalar(s) => match s {
            Scalar::Null => Value::Nil,
            Scalar::Bool(b) => Value::Bool(*b),
            Scalar::Int(i) => Value::Float(*i as f64),
            Scalar::Uint(u) => Value::Float(*u as f64),
            Scalar::Float(f) => {
                if !f.is_finite() {
                    let t = if f.is_nan() {
                        "NaN"
                    } else if *f > 0.0 {
                        "+Inf"
                    } else {
                        "-Inf"
                    };
                    return Err(YamlError {
                        line: 0,
                        column: 0,
                        msg: format!("error converting YAML to JSON: json: unsupported value: {t}"),
                    });
                }
                Value::Float(*f)
            }
            Scalar::Str(s) | Scalar::Timestamp(s) => Value::str(s),
            Scalar::Merge => Value::str("<<"),
        },
        Node::Seq(items) => Value::list(
            items
                .iter()
                .map(to_json_checked)
                .collect::<Result<Vec<_>, _>>()?,
        ),
        Node::Map(pairs) => {
            let mut m = Map::new();
            map_to_json(pairs, &mut m)?;
            Value::map(m)
        }
    })
}

fn prefix_json_error(mut e: YamlError) -> YamlError {
    if !e.msg.starts_with("error converting YAML to JSON") {
        e.msg = format!("error converting YAML to JSON: {}", e.msg);
    }
    e
}

/// Deep-merge later documents of a values file into earlier ones.
fn merge_docs(dst: &mut Map, src: Map) {
    for (k, v) in src {
        match (dst.get_mut(&k), v) {
            (Some(Value::Map(d, _)), Value::Map(s, _)) => {
                let s = s.borrow().clone();
                merge_docs(&mut d.borrow_mut(), s);
            }
            (_, v) => {
                dst.insert(k, v);
            }
        }
    }
}

/// Helm v4's loader.LoadValues, for values.yaml and `-f` files: the text is
/// cut into documents by Kubernetes' YAMLReader (a line starting with `---`
/// ends a document and may only be followed by spaces or a comment), each
/// non-empty document is parsed on its own as a map and merged over the
/// ones before. The error is LoadValues' text.
pub fn load_values(text: &str) -> Result<Map, ValuesError> {
    let mut out = Map::new();
    let mut doc = String::new();
    let flush = |doc: &mut String, out: &mut Map| -> Result<(), ValuesError> {
        if doc.is_empty() {
            return Ok(());
        }
        let m = parse_values(doc).map_err(ValuesError::Document)?;
        merge_docs(out, m);
        doc.clear();
        Ok(())
    };
    for line in text.split_inclusive('\n') {
        // The LineReader under it reads each line with bufio's ReadLine
        // (which drops "\n" or "\r\n") and writes it back with "\n", the
        // last line too.
        let line = match line.strip_suffix('\n') {
            Some(l) => l.strip_suffix('\r').unwrap_or(l),
            None => line,
        };
        if let Some(rest) = line.strip_prefix("---") {
            let trimmed = rest.trim_matches(|c: char| c.is_whitespace());
            if !trimmed.is_empty() && !trimmed.starts_with('#') {
                return Err(ValuesError::BadSeparator(trimmed.to_string()));
            }
            if !doc.is_empty() {
                flush(&mut doc, &mut out)?;
                continue;
            }
            // A separator that starts a document stays in it.
        }
        doc.push_str(line);
        doc.push('\n');
    }
    flush(&mut doc, &mut out)?;
    Ok(out)
}

/// Parse a values file (values.yaml, `-f`): a map, numbers as float64, from
/// the text's first document (load_values cuts the file into documents
/// first); an empty file is an empty map.
pub fn parse_values(text: &str) -> Result<Map, YamlError> {
    let doc = parse_first_document(text).map_err(prefix_json_error)?;
    let mut out = Map::new();
    if let Some(d) = doc {
        match to_json(&d).map_err(prefix_json_error)? {
            Value::Map(m, _) => {
                let m = m.borrow().clone();
                merge_docs(&mut out, m);
            }
            Value::Nil => {}
            other => {
                return Err(YamlError {
                    line: 0,
                    column: 0,
                    msg: format!(
                        "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                        json_kind(&other)
                    ),
                });
            }
        }
    }
    Ok(out)
}

pub fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::List(..) => "array",
        Value::Str(_) => "string",
        Value::Bool(_) => "bool",
        Value::Float(_) | Value::Int(_) | Value::Int64(_) => "number",
        _ => "object",
    }
}

/// Parse the first YAML document into a value (sigs.k8s.io/yaml Unmarshal
/// into interface{}).
pub fn parse_first(text: &str) -> Result<Value, YamlError> {
    match parse_first_document(text).map_err(prefix_json_error)? {
        None => Ok(Value::Nil),
        Some(d) => to_json(&d).map_err(prefix_json_error),
    }
}
