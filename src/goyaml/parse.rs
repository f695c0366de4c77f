//! Reading YAML the way Helm does (sigs.k8s.io/yaml over go-yaml v2).

use super::resolve::{resolve_plain, Scalar};
use crate::value::{Map, Value};
use std::collections::HashMap;
use yaml_rust2::parser::{Event, Parser, Tag};
use yaml_rust2::scanner::TScalarStyle;

/// A YAML node with go-yaml v2 types, before JSON conversion.
#[derive(Debug, Clone)]
pub enum Node {
    Scalar(Scalar),
    Seq(Vec<Node>),
    /// Keys in document order; duplicates are resolved on conversion.
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

fn go_msg(info: &str) -> String {
    // go-yaml prints only the problem, not libyaml's "while scanning ...",
    // "while parsing ..." context.
    let mut i = info.to_string();
    if let Some(rest) = i.strip_prefix("while ") {
        if let Some(idx) = rest.find(", ") {
            i = rest[idx + 2..].to_string();
        }
    }
    if i == "expected ',' or ']'" {
        return "did not find expected ',' or ']'".into();
    }
    if i.contains("mapping values are not allowed") {
        return "mapping values are not allowed in this context".into();
    }
    if i.contains("did not find expected ',' or ']'") || i.contains("expected ',' or ']'") {
        return "did not find expected ',' or ']'".into();
    }
    if i.contains("expected ',' or '}'") {
        return "did not find expected ',' or '}'".into();
    }
    if i.contains("did not find expected key") {
        return "did not find expected key".into();
    }
    if i.starts_with("found a tab character") {
        return i;
    }
    // yaml-rust2's own checks on tabs, where libyaml meets a tab that
    // cannot start a token.
    if i.contains("found character that cannot start any token") || i.contains("tab") {
        return "found character that cannot start any token".into();
    }
    i
}

/// Errors raised by the parser (as opposed to the scanner); go-yaml numbers
/// their lines differently.
fn is_parser_error(info: &str) -> bool {
    info.starts_with("did not find expected <")
        || info.starts_with("while parsing node,")
        || info.starts_with("while parsing a node,")
        || info.starts_with("while parsing a block mapping,")
        || info.starts_with("while parsing a flow mapping,")
        || info.starts_with("while parsing a flow sequence,")
        || info.starts_with("while parsing a block collection,")
        || info.starts_with("found duplicate %")
}

pub fn scan_err(e: &yaml_rust2::scanner::ScanError, text: &str) -> YamlError {
    let m = e.marker();
    let line = m.line();
    let info = e.info();
    if info.contains("unknown anchor") {
        // go-yaml names the alias: the name after '*' at the error mark
        // (the mark counts characters; names are [0-9A-Za-z_-]).
        let at = text
            .char_indices()
            .nth(m.index())
            .map_or(text.len(), |(b, _)| b);
        let rest = &text[at..];
        let rest = rest.strip_prefix('*').unwrap_or(rest);
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
            .collect();
        return YamlError {
            line,
            column: m.col() + 1,
            msg: format!("yaml: unknown anchor '{name}' referenced"),
        };
    }
    let msg = go_msg(info);
    // go-yaml prints a scanner error's 1-based line, a parser error's
    // 0-based one, and neither when it is the first line.
    let shown = if is_parser_error(info) {
        line.saturating_sub(1)
    } else if line > 1 {
        line
    } else {
        0
    };
    let msg = if shown > 0 {
        format!("yaml: line {}: {}", shown, msg)
    } else {
        format!("yaml: {msg}")
    };
    YamlError {
        line,
        column: m.col() + 1,
        msg,
    }
}

struct Loader<'a> {
    text: &'a str,
    parser: Parser<std::str::Chars<'a>>,
    anchors: HashMap<usize, Node>,
}

impl<'a> Loader<'a> {
    fn next(&mut self) -> Result<(Event, yaml_rust2::scanner::Marker), YamlError> {
        let text = self.text;
        self.parser.next_token().map_err(|e| scan_err(&e, text))
    }

    fn node(&mut self, ev: Event, mark: yaml_rust2::scanner::Marker) -> Result<Node, YamlError> {
        match ev {
            Event::Alias(id) => self.anchors.get(&id).cloned().ok_or_else(|| YamlError {
                line: mark.line(),
                column: mark.col() + 1,
                msg: "yaml: unknown anchor referenced".into(),
            }),
            Event::Scalar(text, style, anchor, tag) => {
                let n = Node::Scalar(scalar(text, style, tag.as_ref()));
                if anchor > 0 {
                    self.anchors.insert(anchor, n.clone());
                }
                Ok(n)
            }
            Event::SequenceStart(anchor, _) => {
                let mut items = Vec::new();
                loop {
                    let (ev, m) = self.next()?;
                    if let Event::SequenceEnd = ev {
                        break;
                    }
                    items.push(self.node(ev, m)?);
                }
                let n = Node::Seq(items);
                if anchor > 0 {
                    self.anchors.insert(anchor, n.clone());
                }
                Ok(n)
            }
            Event::MappingStart(anchor, _) => {
                let mut pairs = Vec::new();
                loop {
                    let (ev, m) = self.next()?;
                    if let Event::MappingEnd = ev {
                        break;
                    }
                    let k = self.node(ev, m)?;
                    let (ev, m) = self.next()?;
                    let v = self.node(ev, m)?;
                    pairs.push((k, v));
                }
                let n = Node::Map(pairs);
                if anchor > 0 {
                    self.anchors.insert(anchor, n.clone());
                }
                Ok(n)
            }
            other => Err(YamlError {
                line: mark.line(),
                column: mark.col() + 1,
                msg: format!("yaml: unexpected event {other:?}"),
            }),
        }
    }
}

pub fn scalar(text: String, style: TScalarStyle, tag: Option<&Tag>) -> Scalar {
    if let Some(t) = tag {
        let full = if t.handle == "!!" || t.handle == "tag:yaml.org,2002:" {
            t.suffix.clone()
        } else {
            String::new()
        };
        match full.as_str() {
            "str" => return Scalar::Str(text),
            "null" => return Scalar::Null,
            "bool" | "int" | "float" => {
                let r = resolve_plain(&text);
                return match (&full[..], r) {
                    ("float", Scalar::Int(i)) => Scalar::Float(i as f64),
                    (_, r) => r,
                };
            }
            "binary" => {
                use base64::Engine as _;
                let clean: String = text.chars().filter(|c| !c.is_whitespace()).collect();
                return match base64::engine::general_purpose::STANDARD.decode(clean) {
                    Ok(b) => Scalar::Str(String::from_utf8_lossy(&b).into_owned()),
                    Err(_) => Scalar::Str(text),
                };
            }
            _ => {
                if style == TScalarStyle::Plain
                    && full.is_empty()
                    && t.handle == "!"
                    && t.suffix.is_empty()
                {
                    return Scalar::Str(text);
                }
                if !full.is_empty() || t.handle == "!" {
                    if style != TScalarStyle::Plain {
                        return Scalar::Str(text);
                    }
                    return match resolve_plain(&text) {
                        Scalar::Timestamp(s) => Scalar::Str(s),
                        _ if t.handle == "!" => Scalar::Str(text),
                        r => r,
                    };
                }
            }
        }
    }
    if style != TScalarStyle::Plain {
        return Scalar::Str(text);
    }
    resolve_plain(&text)
}

/// Parse every document of a YAML stream.
/// The first YAML document of a text, as go-yaml's Unmarshal reads it
/// (sigs.k8s.io/yaml, and so Helm for values files, Chart.yaml and each
/// manifest): it stops at the end of that document, so whatever follows
/// (another document, or text no parser would accept) is never read.
/// `None` for a text with no document.
pub fn parse_first_document(text: &str) -> Result<Option<Node>, YamlError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut l = Loader {
        text,
        parser: Parser::new_from_str(text),
        anchors: HashMap::new(),
    };
    loop {
        let (ev, m) = l.next()?;
        match ev {
            Event::StreamStart | Event::DocumentEnd | Event::Nothing => {}
            Event::StreamEnd => return Ok(None),
            Event::DocumentStart => {
                let (ev, m) = l.next()?;
                if let Event::DocumentEnd = ev {
                    return Ok(Some(Node::Scalar(Scalar::Null)));
                }
                let node = l.node(ev, m)?;
                // The document's end is read (libyaml peeks at the token
                // after the content, which may be an error).
                l.next()?;
                return Ok(Some(node));
            }
            other => {
                let node = l.node(other, m)?;
                l.next()?;
                return Ok(Some(node));
            }
        }
    }
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
        if let Node::Scalar(Scalar::Merge) = k {
            match v {
                Node::Map(p) => map_to_json(p, out)?,
                Node::Seq(items) => {
                    for it in items.iter().rev() {
                        match it {
                            Node::Map(p) => map_to_json(p, out)?,
                            _ => return Err(merge_error()),
                        }
                    }
                }
                _ => return Err(merge_error()),
            }
            continue;
        }
        let key = match k {
            Node::Scalar(s) => match s {
                Scalar::Str(s) | Scalar::Timestamp(s) => s.clone(),
                Scalar::Int(i) => i.to_string(),
                Scalar::Uint(u) => u.to_string(),
                Scalar::Float(f) => float32_key(*f),
                Scalar::Bool(b) => b.to_string(),
                Scalar::Null => {
                    return Err(YamlError {
                        line: 0,
                        column: 0,
                        msg: "error converting YAML to JSON: Unsupported map key of type: %!s(<nil>), key: <nil>".into(),
                    })
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
            kv.sort();
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
pub fn load_values(text: &str) -> Result<Map, String> {
    let mut out = Map::new();
    let mut doc = String::new();
    let flush = |doc: &mut String, out: &mut Map| -> Result<(), String> {
        if doc.is_empty() {
            return Ok(());
        }
        let m =
            parse_values(doc).map_err(|e| format!("cannot unmarshal yaml document: {}", e.msg))?;
        merge_docs(out, m);
        doc.clear();
        Ok(())
    };
    for line in text.split_inclusive('\n') {
        if let Some(rest) = line.strip_prefix("---") {
            let trimmed = rest.trim_matches(|c: char| c.is_whitespace());
            if !trimmed.is_empty() && !trimmed.starts_with('#') {
                return Err(format!(
                    "error reading yaml document: invalid Yaml document separator: {trimmed}"
                ));
            }
            flush(&mut doc, &mut out)?;
            continue;
        }
        doc.push_str(line);
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
