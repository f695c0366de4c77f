//! values.schema.json validation (the JSON Schema keywords charts use),
//! with Helm's error layout.

use super::Chart;
use crate::goyaml::json;
use crate::value::{Map, Value};

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Nil => "null",
        Value::Bool(_) => "boolean",
        Value::Int(_) | Value::Int64(_) | Value::Uint64(_) | Value::Uint8(_) | Value::Uint32(_) => {
            "number"
        }
        Value::Float(_) => "number",
        Value::Str(_) => "string",
        Value::List(..) | Value::Bytes(_) => "array",
        Value::Map(..) => "object",
        Value::Object(_) => "object",
    }
}

fn num(v: &Value) -> Option<f64> {
    match v {
        Value::Int(i) | Value::Int64(i) => Some(*i as f64),
        Value::Uint64(u) => Some(*u as f64),
        Value::Uint8(u) => Some(*u as f64),
        Value::Uint32(u) => Some(*u as f64),
        Value::Float(f) => Some(*f),
        _ => None,
    }
}

fn type_ok(t: &str, v: &Value) -> bool {
    match t {
        "integer" => num(v).map(|f| f.fract() == 0.0).unwrap_or(false),
        "number" => num(v).is_some(),
        other => kind(v) == other,
    }
}

fn get<'a>(m: &'a Map, k: &str) -> Option<&'a Value> {
    m.get(k)
}

fn fmt_num(f: f64) -> String {
    crate::value::float::format_float_g(f)
}

/// The schema being checked: its root (for `$ref`) and its draft, as
/// santhosh-tekuri/jsonschema v6 reads `$schema` (2020-12 when absent).
struct Ctx<'a> {
    root: &'a Value,
    draft: u32,
    /// Other documents `$ref` may name by URL (a metaschema's vocabularies).
    docs: &'a [(&'static str, Value)],
}

fn draft_of(root: &Value) -> u32 {
    let Value::Map(m, _) = root else { return 2020 };
    let url = match m.borrow().get("$schema") {
        Some(Value::Str(u)) => u.to_string(),
        _ => return 2020,
    };
    let url = url.trim_end_matches('#');
    let url = url
        .trim_start_matches("https://")
        .trim_start_matches("http://");
    match url {
        "json-schema.org/draft-04/schema" => 4,
        "json-schema.org/draft-06/schema" => 6,
        "json-schema.org/draft-07/schema" => 7,
        "json-schema.org/draft/2019-09/schema" => 2019,
        _ => 2020,
    }
}

/// The metaschema of a draft (from santhosh-tekuri/jsonschema v6's
/// metaschemas directory), the URL v6 names it by, and the documents of its
/// vocabularies (2019-09, 2020-12) by their `$id`.
#[allow(clippy::type_complexity)]
fn metaschema(draft: u32) -> Option<(&'static str, Value, Vec<(&'static str, Value)>)> {
    let decode = |text: &str| json::decode(text).expect("a metaschema is JSON");
    macro_rules! docs {
        ($dir:literal, $base:literal, [$($name:literal),*]) => {
            vec![$((
                concat!($base, "meta/", $name),
                decode(include_str!(concat!("metaschemas/", $dir, "/", $name, ".json"))),
            )),*]
        };
    }
    match draft {
        4 => Some((
            "http://json-schema.org/draft-04/schema#",
            decode(include_str!("metaschemas/draft-04.json")),
            Vec::new(),
        )),
        6 => Some((
            "http://json-schema.org/draft-06/schema#",
            decode(include_str!("metaschemas/draft-06.json")),
            Vec::new(),
        )),
        7 => Some((
            "http://json-schema.org/draft-07/schema#",
            decode(include_str!("metaschemas/draft-07.json")),
            Vec::new(),
        )),
        2019 => Some((
            "https://json-schema.org/draft/2019-09/schema#",
            decode(include_str!("metaschemas/2019-09/schema.json")),
            docs!(
                "2019-09",
                "https://json-schema.org/draft/2019-09/",
                [
                    "applicator",
                    "content",
                    "core",
                    "format",
                    "meta-data",
                    "validation"
                ]
            ),
        )),
        _ => Some((
            "https://json-schema.org/draft/2020-12/schema#",
            decode(include_str!("metaschemas/2020-12/schema.json")),
            docs!(
                "2020-12",
                "https://json-schema.org/draft/2020-12/",
                [
                    "applicator",
                    "content",
                    "core",
                    "format-annotation",
                    "meta-data",
                    "unevaluated",
                    "validation"
                ]
            ),
        )),
    }
}

/// v6's compiler refuses a schema its draft's metaschema refuses, before any
/// value is read: the SchemaValidationError's words, with no newline after.
fn metaschema_error(schema: &Value, draft: u32) -> Option<String> {
    let (url, meta, docs) = metaschema(draft)?;
    let ctx = Ctx {
        root: &meta,
        draft,
        docs: &docs,
    };
    let e = validate_at(&ctx, &meta, &meta, schema, Vec::new()).err()?;
    let causes = match e.kind {
        Kind::Group => e.causes,
        _ => vec![e],
    };
    let mut out = format!(
        "\"file:///values.schema.json#\" is not valid against metaschema: jsonschema validation failed with {}",
        kquote(url)
    );
    for c in &causes {
        c.display(&mut out, 1);
    }
    Some(out)
}

/// A `$ref`: the document it lands in and the schema it names. A URL
/// without fragment is resolved against the current document's `$id` among
/// the known documents; the fragment is a JSON pointer.
fn resolve_ref(ctx: &Ctx, doc: &Value, r: &str) -> Option<(Value, Value)> {
    let (url, frag) = r.split_once('#').unwrap_or((r, ""));
    let doc = if url.is_empty() {
        doc.clone()
    } else {
        let base = match doc {
            Value::Map(m, _) => match m.borrow().get("$id") {
                Some(Value::Str(id)) => id.to_string(),
                _ => String::new(),
            },
            _ => String::new(),
        };
        let abs = match base.rfind('/') {
            Some(i) if !url.contains("://") => format!("{}{url}", &base[..=i]),
            _ => url.to_string(),
        };
        ctx.docs.iter().find(|(u, _)| *u == abs)?.1.clone()
    };
    let mut cur = doc.clone();
    for part in frag.split('/').filter(|p| !p.is_empty()) {
        let part = part.replace("~1", "/").replace("~0", "~");
        cur = match &cur {
            Value::Map(m, _) => m.borrow().get(&part)?.clone(),
            Value::List(l, _) => l.get(part.parse::<usize>().ok()?)?.clone(),
            _ => return None,
        };
    }
    Some((doc, cur))
}

/// What a v6 ValidationError's kind prints, or how it is shown.
#[derive(Debug)]
enum Kind {
    /// A keyword's message ("got string, want number").
    Msg(String),
    /// Several errors of one schema at one place: "validation failed".
    Group,
    /// `$ref` failed: shown only when it holds more than one cause.
    Reference,
}

/// jsonschema v6's ValidationError: where, what, and its causes.
#[derive(Debug)]
struct VErr {
    at: Vec<String>,
    kind: Kind,
    causes: Vec<VErr>,
}

/// kind.go's quote: Go's %q, with single quotes outside.
fn kquote(s: &str) -> String {
    let q = crate::value::quote::quote_go(s);
    let inner = &q[1..q.len() - 1];
    format!("'{}'", inner.replace("\\\"", "\"").replace('\'', "\\'"))
}

fn json_ptr(at: &[String]) -> String {
    at.iter()
        .map(|t| format!("/{}", t.replace('~', "~0").replace('/', "~1")))
        .collect()
}

/// golang.org/x/text/message's %d in English: digits grouped by commas.
fn loc_int(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 {
        format!("-{out}")
    } else {
        out
    }
}

/// golang.org/x/text/message's %v of a float64 in English: the shortest
/// digits, as a grouped decimal when the exponent is in -4..6, else as
/// d.ddd×10 with the exponent in superscript, at least two digits.
fn loc_float(f: f64) -> String {
    if f == 0.0 {
        return "0".into();
    }
    let sci = format!("{:e}", f.abs());
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    let sign = if f < 0.0 { "-" } else { "" };
    if !(-4..6).contains(&exp) {
        const SUP: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
        let mut m = digits[..1].to_string();
        if digits.len() > 1 {
            m.push('.');
            m.push_str(&digits[1..]);
        }
        let e = format!("{:02}", exp.unsigned_abs());
        let sup: String = e.chars().map(|c| SUP[c as usize - '0' as usize]).collect();
        let minus = if exp < 0 { "⁻" } else { "" };
        return format!("{sign}{m}×10{minus}{sup}");
    }
    let (int, frac) = if exp >= 0 {
        let e = exp as usize + 1;
        if digits.len() > e {
            (digits[..e].to_string(), digits[e..].to_string())
        } else {
            (format!("{digits:0<e$}"), String::new())
        }
    } else {
        (
            "0".to_string(),
            format!("{}{digits}", "0".repeat((-exp - 1) as usize)),
        )
    };
    let int = loc_int(int.parse::<i64>().unwrap_or(0));
    if frac.is_empty() {
        format!("{sign}{int}")
    } else {
        format!("{sign}{int}.{frac}")
    }
}

/// kind.go's display: a string quoted, a list or map as "value", else %v.
fn display(v: &Value) -> String {
    match v {
        Value::Str(s) => kquote(s),
        Value::List(..) | Value::Map(..) => "value".into(),
        Value::Nil => "<nil>".into(),
        Value::Bool(b) => b.to_string(),
        other => num(other).map(fmt_num).unwrap_or_default(),
    }
}

impl VErr {
    /// ValidationError.display (not verbose).
    fn display(&self, out: &mut String, mut indent: usize) {
        let skip = self.causes.len() == 1 && matches!(self.kind, Kind::Reference);
        if !skip {
            if indent > 0 {
                out.push('\n');
                for _ in 0..indent - 1 {
                    out.push_str("  ");
                }
                out.push_str("- ");
            }
            indent += 1;
            let msg = match &self.kind {
                Kind::Msg(m) => m.as_str(),
                Kind::Group | Kind::Reference => "validation failed",
            };
            out.push_str(&format!("at {}: {msg}", kquote(&json_ptr(&self.at))));
        }
        for c in &self.causes {
            c.display(out, indent);
        }
    }
}

/// One schema applied to one value (v6's validator): errors collected in
/// its keyword order, then none, the one, or a group of them.
struct Validator<'c, 'a> {
    ctx: &'c Ctx<'a>,
    /// The document the schema is in (what its `$ref`s are relative to).
    doc: Value,
    at: Vec<String>,
    errors: Vec<VErr>,
}

impl<'c, 'a> Validator<'c, 'a> {
    fn error(&self, kind: Kind) -> VErr {
        VErr {
            at: self.at.clone(),
            kind,
            causes: Vec::new(),
        }
    }
    fn add(&mut self, msg: String) {
        let e = self.error(Kind::Msg(msg));
        self.errors.push(e);
    }
    fn add_err(&mut self, e: Result<(), VErr>) {
        if let Err(e) = e {
            self.errors.push(e);
        }
    }
    fn add_errors(&mut self, causes: Vec<VErr>, msg: String) {
        let mut e = self.error(Kind::Msg(msg));
        e.causes = causes;
        self.errors.push(e);
    }
    /// validateSelf: another schema at the same place.
    fn validate_self(&self, schema: &Value, v: &Value) -> Result<(), VErr> {
        validate_at(self.ctx, &self.doc, schema, v, self.at.clone())
    }
    /// validateVal: a schema for a member of the value.
    fn validate_val(&self, schema: &Value, v: &Value, tok: String) -> Result<(), VErr> {
        let mut at = self.at.clone();
        at.push(tok);
        validate_at(self.ctx, &self.doc, schema, v, at)
    }
    /// validateRef: a `$ref`'s failure holds the target's errors.
    fn validate_ref(&self, doc: &Value, target: &Value, v: &Value) -> Result<(), VErr> {
        validate_at(self.ctx, doc, target, v, self.at.clone()).map_err(|e| {
            let mut r = self.error(Kind::Reference);
            r.causes = match e.kind {
                Kind::Group => e.causes,
                _ => vec![e],
            };
            r
        })
    }
    fn finish(mut self) -> Result<(), VErr> {
        match self.errors.len() {
            0 => Ok(()),
            1 => Err(self.errors.pop().unwrap()),
            _ => {
                let mut g = self.error(Kind::Group);
                g.causes = std::mem::take(&mut self.errors);
                Err(g)
            }
        }
    }
}

fn num_list(v: Option<&Value>) -> Option<f64> {
    v.and_then(num)
}

fn types_of(t: &Value) -> Vec<String> {
    let named: Vec<String> = match t {
        Value::Str(x) => vec![x.to_string()],
        Value::List(l, _) => l
            .iter()
            .filter_map(|x| x.as_str().map(|s| s.to_string()))
            .collect(),
        _ => vec![],
    };
    // Types.ToStrings: in this order, whatever the schema's.
    [
        "null", "boolean", "number", "integer", "string", "array", "object",
    ]
    .iter()
    .filter(|t| named.iter().any(|n| n == *t))
    .map(|t| t.to_string())
    .collect()
}

/// A decimal's digits and exponent (value = m * 10^e), from Go's %v.
fn decimal(f: f64) -> Option<(i128, i32)> {
    let t = format!("{:e}", f);
    let (m, e) = t.split_once('e')?;
    let e: i32 = e.parse().ok()?;
    let (int, frac) = m.split_once('.').unwrap_or((m, ""));
    let digits: i128 = format!("{int}{frac}").parse().ok()?;
    Some((digits, e - frac.len() as i32))
}

/// big.Rat's v / m is an integer, on the decimals Go prints.
fn is_multiple(v: f64, m: f64) -> bool {
    let fallback = || (v / m).fract() == 0.0;
    let (Some((vm, ve)), Some((mm, me))) = (decimal(v), decimal(m)) else {
        return fallback();
    };
    if mm == 0 {
        return false;
    }
    let e = ve - me;
    if e >= 0 {
        match 10i128.checked_pow(e as u32).and_then(|p| vm.checked_mul(p)) {
            Some(n) => n % mm == 0,
            None => fallback(),
        }
    } else {
        match 10i128
            .checked_pow((-e) as u32)
            .and_then(|p| mm.checked_mul(p))
        {
            Some(d) => vm % d == 0,
            None => fallback(),
        }
    }
}

/// v6's validator.validate for `schema` against `v` at `at`.
fn validate_at(
    ctx: &Ctx,
    doc: &Value,
    schema: &Value,
    v: &Value,
    at: Vec<String>,
) -> Result<(), VErr> {
    let mut vd = Validator {
        ctx,
        doc: doc.clone(),
        at,
        errors: Vec::new(),
    };
    let sm = match schema {
        Value::Bool(true) => return Ok(()),
        Value::Bool(false) => return Err(vd.error(Kind::Msg("false schema".into()))),
        Value::Map(sm, _) => sm.borrow().clone(),
        _ => return Ok(()),
    };
    let s = &sm;
    let draft = ctx.draft;
    // type --
    if let Some(t) = get(s, "type") {
        let types = types_of(t);
        if !types.is_empty() && !types.iter().any(|t| type_ok(t, v)) {
            return Err(vd.error(Kind::Msg(format!(
                "got {}, want {}",
                kind(v),
                types.join(" or ")
            ))));
        }
    }
    // const --
    if let Some(c) = get(s, "const").filter(|_| draft >= 6) {
        if !json_eq(c, v) {
            let msg = match c {
                Value::List(..) | Value::Map(..) => "'const' failed".to_string(),
                c => format!("value must be {}", display(c)),
            };
            return Err(vd.error(Kind::Msg(msg)));
        }
    }
    // enum --
    if let Some(Value::List(e, _)) = get(s, "enum") {
        if !e.iter().any(|x| json_eq(x, v)) {
            let primitive = e
                .iter()
                .all(|x| !matches!(x, Value::List(..) | Value::Map(..)));
            let msg = if !primitive {
                "'enum' failed".to_string()
            } else if e.len() == 1 {
                format!("value must be {}", display(&e[0]))
            } else {
                let all: Vec<String> = e.iter().map(display).collect();
                format!("value must be one of {}", all.join(", "))
            };
            return Err(vd.error(Kind::Msg(msg)));
        }
    }
    // $ref -- (before 2019-09 its siblings are ignored)
    if let Some(Value::Str(r)) = get(s, "$ref") {
        if let Some((tdoc, target)) = resolve_ref(ctx, doc, r) {
            let err = vd.validate_ref(&tdoc, &target, v);
            if draft < 2019 {
                return err;
            }
            vd.add_err(err);
        }
    }
    match v {
        Value::Map(vm, _) => obj_validate(&mut vd, s, &vm.borrow()),
        Value::List(items, _) => arr_validate(&mut vd, s, items),
        Value::Str(st) => str_validate(&mut vd, s, st),
        _ => {
            if let Some(f) = num(v) {
                num_validate(&mut vd, s, f);
            }
        }
    }
    // $recursiveRef and $dynamicRef (2019-09 on): to the outermost
    // document, where the metaschemas' recursive and dynamic anchors lead.
    if draft >= 2019 {
        for kw in ["$recursiveRef", "$dynamicRef"] {
            if get(s, kw).is_some() {
                let root = ctx.root.clone();
                let e = vd.validate_ref(&root, &root, v);
                vd.add_err(e);
            }
        }
    }
    cond_validate(&mut vd, s, v);
    vd.finish()
}

fn missing(vm: &Map, req: Option<&Value>) -> Vec<String> {
    match req {
        Some(Value::List(req, _)) => req
            .iter()
            .filter_map(|r| r.as_str())
            .filter(|r| !vm.contains_key(*r))
            .map(|r| r.to_string())
            .collect(),
        _ => Vec::new(),
    }
}

fn join_quoted(names: &[String]) -> String {
    names
        .iter()
        .map(|n| kquote(n))
        .collect::<Vec<_>>()
        .join(", ")
}

/// minProperties/maxProperties, minItems/maxItems, minLength/maxLength: a
/// count against the schema's bounds, in v6's words.
fn count_bounds(vd: &mut Validator, s: &Map, n: usize, min: &str, max: &str) {
    for (key, over) in [(min, false), (max, true)] {
        let Some(m) = num_list(get(s, key)) else {
            continue;
        };
        if (over && n as f64 > m) || (!over && (n as f64) < m) {
            vd.add(format!(
                "{key}: got {}, want {}",
                loc_int(n as i64),
                loc_int(m as i64)
            ));
        }
    }
}

fn obj_validate(vd: &mut Validator, s: &Map, vm: &Map) {
    let draft = vd.ctx.draft;
    count_bounds(vd, s, vm.len(), "minProperties", "maxProperties");
    let miss = missing(vm, get(s, "required"));
    if !miss.is_empty() {
        vd.add(if miss.len() == 1 {
            format!("missing property {}", kquote(&miss[0]))
        } else {
            format!("missing properties {}", join_quoted(&miss))
        });
    }
    // dependencies (every draft) --
    {
        if let Some(Value::Map(deps, _)) = get(s, "dependencies") {
            for (pname, dep) in deps.borrow().iter() {
                if !vm.contains_key(pname) {
                    continue;
                }
                match dep {
                    Value::List(..) => {
                        let miss = missing(vm, Some(dep));
                        if !miss.is_empty() {
                            vd.add(format!(
                                "properties {} required, if {} exists",
                                join_quoted(&miss),
                                kquote(pname)
                            ));
                        }
                    }
                    schema => {
                        let e = vd.validate_self(schema, &Value::map(vm.clone()));
                        vd.add_err(e);
                    }
                }
            }
        }
    }
    let props = match get(s, "properties") {
        Some(Value::Map(p, _)) => p.borrow().clone(),
        _ => Map::new(),
    };
    let patterns: Vec<(regex::Regex, Value)> = match get(s, "patternProperties") {
        Some(Value::Map(p, _)) => p
            .borrow()
            .iter()
            .filter_map(|(k, v)| regex::Regex::new(k).ok().map(|r| (r, v.clone())))
            .collect(),
        _ => Vec::new(),
    };
    let additional = get(s, "additionalProperties");
    let mut not_allowed = Vec::new();
    for (pname, pvalue) in vm.iter() {
        let mut evaluated = false;
        if let Some(ps) = props.get(pname) {
            evaluated = true;
            let e = vd.validate_val(ps, pvalue, pname.clone());
            vd.add_err(e);
        }
        for (re, ps) in &patterns {
            if re.is_match(pname) {
                evaluated = true;
                let e = vd.validate_val(ps, pvalue, pname.clone());
                vd.add_err(e);
            }
        }
        if !evaluated {
            match additional {
                Some(Value::Bool(false)) => not_allowed.push(pname.clone()),
                Some(ap @ Value::Map(..)) => {
                    let e = vd.validate_val(ap, pvalue, pname.clone());
                    vd.add_err(e);
                }
                _ => {}
            }
        }
    }
    if !not_allowed.is_empty() {
        vd.add(format!(
            "additional properties {} not allowed",
            join_quoted(&not_allowed)
        ));
    }
    if draft == 4 {
        return;
    }
    // propertyNames: each name checked as a value of its own (at '').
    if let Some(pn) = get(s, "propertyNames") {
        for pname in vm.keys() {
            let ctx = vd.ctx;
            if let Err(e) = validate_at(ctx, &vd.doc, pn, &Value::str(pname), Vec::new()) {
                let causes = match e.kind {
                    Kind::Group => e.causes,
                    _ => vec![e],
                };
                vd.errors.push(VErr {
                    at: Vec::new(),
                    kind: Kind::Msg(format!("invalid propertyName {}", kquote(pname))),
                    causes,
                });
            }
        }
    }
    if draft == 6 {
        return;
    }
    if draft >= 2019 {
        if let Some(Value::Map(deps, _)) = get(s, "dependentSchemas") {
            for (pname, dep) in deps.borrow().iter() {
                if vm.contains_key(pname) {
                    let e = vd.validate_self(dep, &Value::map(vm.clone()));
                    vd.add_err(e);
                }
            }
        }
        if let Some(Value::Map(deps, _)) = get(s, "dependentRequired") {
            for (pname, req) in deps.borrow().iter() {
                if vm.contains_key(pname) {
                    let miss = missing(vm, Some(req));
                    if !miss.is_empty() {
                        vd.add(format!(
                            "properties {} required, if {} exists",
                            join_quoted(&miss),
                            kquote(pname)
                        ));
                    }
                }
            }
        }
    }
}

fn arr_validate(vd: &mut Validator, s: &Map, items: &[Value]) {
    let draft = vd.ctx.draft;
    let n = items.len();
    count_bounds(vd, s, n, "minItems", "maxItems");
    if let Some(Value::Bool(true)) = get(s, "uniqueItems") {
        'dups: for i in 1..n {
            for j in 0..i {
                if json_eq(&items[i], &items[j]) {
                    vd.add(format!(
                        "items at {} and {} are equal",
                        loc_int(j as i64),
                        loc_int(i as i64)
                    ));
                    break 'dups;
                }
            }
        }
    }
    if draft < 2020 {
        let mut evaluated = 0;
        match get(s, "items") {
            Some(Value::List(schemas, _)) => {
                let min = n.min(schemas.len());
                for (i, item) in items[..min].iter().enumerate() {
                    let e = vd.validate_val(&schemas[i], item, i.to_string());
                    vd.add_err(e);
                }
                evaluated = min;
            }
            Some(is @ (Value::Map(..) | Value::Bool(_))) => {
                for (i, item) in items.iter().enumerate() {
                    let e = vd.validate_val(is, item, i.to_string());
                    vd.add_err(e);
                }
                evaluated = n;
            }
            _ => {}
        }
        // additionalItems counts only after an array of items.
        if matches!(get(s, "items"), Some(Value::List(..))) || get(s, "items").is_none() {
            match get(s, "additionalItems") {
                Some(Value::Bool(false)) if evaluated != n => {
                    vd.add(format!(
                        "last {} additionalItem(s) not allowed",
                        loc_int((n - evaluated) as i64)
                    ));
                }
                Some(ai @ Value::Map(..)) => {
                    for (i, item) in items[evaluated..].iter().enumerate() {
                        let e = vd.validate_val(ai, item, i.to_string());
                        vd.add_err(e);
                    }
                }
                _ => {}
            }
        }
    } else {
        let prefix = match get(s, "prefixItems") {
            Some(Value::List(p, _)) => p.iter().cloned().collect::<Vec<_>>(),
            _ => Vec::new(),
        };
        let evaluated = prefix.len().min(n);
        for (i, item) in items[..evaluated].iter().enumerate() {
            let e = vd.validate_val(&prefix[i], item, i.to_string());
            vd.add_err(e);
        }
        if let Some(is @ (Value::Map(..) | Value::Bool(_))) = get(s, "items") {
            // v6 names these by their index after the prefix.
            for (i, item) in items[evaluated..].iter().enumerate() {
                let e = vd.validate_val(is, item, i.to_string());
                vd.add_err(e);
            }
        }
    }
    if draft >= 6 {
        if let Some(c) = get(s, "contains") {
            let mut errors = Vec::new();
            let mut matched = Vec::new();
            for (i, item) in items.iter().enumerate() {
                match vd.validate_val(c, item, i.to_string()) {
                    Err(e) => errors.push(e),
                    Ok(()) => matched.push(i),
                }
            }
            let list = |m: &[usize]| {
                m.iter()
                    .map(|i| i.to_string())
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            let min = if draft >= 2019 {
                num_list(get(s, "minContains"))
            } else {
                None
            };
            match min {
                Some(want) if (matched.len() as f64) < want => {
                    let msg = if matched.is_empty() {
                        format!(
                            "min {} items required to match contains schema, but none matched",
                            loc_int(want as i64)
                        )
                    } else {
                        format!(
                                "min {} items required to match contains schema, but matched {} items at {}",
                                loc_int(want as i64),
                                loc_int(matched.len() as i64),
                                list(&matched)
                            )
                    };
                    vd.add_errors(errors, msg);
                }
                // minContains, when given, replaces contains' own check.
                None if matched.is_empty() => {
                    vd.add_errors(errors, "no items match contains schema".into());
                }
                _ => {}
            }
            if draft >= 2019 {
                if let Some(want) = num_list(get(s, "maxContains")) {
                    if (matched.len() as f64) > want {
                        vd.add(format!(
                            "max {} items required to match contains schema, but matched {} items at {}",
                            loc_int(want as i64),
                            loc_int(matched.len() as i64),
                            list(&matched)
                        ));
                    }
                }
            }
        }
    }
}

fn str_validate(vd: &mut Validator, s: &Map, st: &str) {
    let n = st.chars().count();
    count_bounds(vd, s, n, "minLength", "maxLength");
    if let Some(Value::Str(p)) = get(s, "pattern") {
        if let Ok(re) = regex::Regex::new(p) {
            if !re.is_match(st) {
                vd.add(format!(
                    "{} does not match pattern {}",
                    kquote(st),
                    kquote(p)
                ));
            }
        }
    }
}

fn num_validate(vd: &mut Validator, s: &Map, f: f64) {
    let draft = vd.ctx.draft;
    // Draft 4: exclusiveMinimum/Maximum are booleans that make the bound
    // exclusive.
    let excl = |k: &str| matches!(get(s, k), Some(Value::Bool(true)));
    let (min, xmin) = match (num_list(get(s, "minimum")), draft) {
        (Some(m), 4) if excl("exclusiveMinimum") => (None, Some(m)),
        (m, 4) => (m, None),
        (m, _) => (m, num_list(get(s, "exclusiveMinimum"))),
    };
    let (max, xmax) = match (num_list(get(s, "maximum")), draft) {
        (Some(m), 4) if excl("exclusiveMaximum") => (None, Some(m)),
        (m, 4) => (m, None),
        (m, _) => (m, num_list(get(s, "exclusiveMaximum"))),
    };
    let msg = |k: &str, w: f64| format!("{k}: got {}, want {}", loc_float(f), loc_float(w));
    if let Some(m) = min.filter(|m| f < *m) {
        vd.add(msg("minimum", m));
    }
    if let Some(m) = max.filter(|m| f > *m) {
        vd.add(msg("maximum", m));
    }
    if let Some(m) = xmin.filter(|m| f <= *m) {
        vd.add(msg("exclusiveMinimum", m));
    }
    if let Some(m) = xmax.filter(|m| f >= *m) {
        vd.add(msg("exclusiveMaximum", m));
    }
    if let Some(m) = num_list(get(s, "multipleOf")) {
        if !is_multiple(f, m) {
            vd.add(msg("multipleOf", m));
        }
    }
}

fn cond_validate(vd: &mut Validator, s: &Map, v: &Value) {
    let draft = vd.ctx.draft;
    if let Some(not) = get(s, "not") {
        if vd.validate_self(not, v).is_ok() {
            vd.add("'not' failed".into());
        }
    }
    if let Some(Value::List(all, _)) = get(s, "allOf") {
        let errors: Vec<VErr> = all
            .iter()
            .filter_map(|sub| vd.validate_self(sub, v).err())
            .collect();
        if !errors.is_empty() {
            vd.add_errors(errors, "'allOf' failed".into());
        }
    }
    if let Some(Value::List(any, _)) = get(s, "anyOf") {
        let mut errors = Vec::new();
        let mut matched = false;
        for sub in any.iter() {
            match vd.validate_self(sub, v) {
                Err(e) => errors.push(e),
                Ok(()) => {
                    matched = true;
                    break;
                }
            }
        }
        if !matched {
            vd.add_errors(errors, "'anyOf' failed".into());
        }
    }
    if let Some(Value::List(one, _)) = get(s, "oneOf") {
        let mut matched: Option<usize> = None;
        let mut errors = Vec::new();
        for (i, sub) in one.iter().enumerate() {
            match vd.validate_self(sub, v) {
                Err(e) => {
                    if matched.is_none() {
                        errors.push(e);
                    }
                }
                Ok(()) => match matched {
                    None => matched = Some(i),
                    Some(first) => {
                        vd.add(format!(
                            "'oneOf' failed, subschemas {}, {} matched",
                            loc_int(first as i64),
                            loc_int(i as i64)
                        ));
                        break;
                    }
                },
            }
        }
        if matched.is_none() {
            vd.add_errors(errors, "'oneOf' failed, none matched".into());
        }
    }
    if draft >= 7 {
        if let Some(iff) = get(s, "if") {
            let branch = if vd.validate_self(iff, v).is_ok() {
                get(s, "then")
            } else {
                get(s, "else")
            };
            if let Some(b) = branch {
                let e = vd.validate_self(b, v);
                vd.add_err(e);
            }
        }
    }
}

/// Schema.Validate: the root's error as a "jsonschema validation failed"
/// node over its causes, printed as Helm's JSONSchemaValidationError prints
/// it (that first line cut, a newline added); None when the values pass.
fn report(ctx: &Ctx, values: &Value) -> Option<String> {
    let e = validate_at(ctx, ctx.root, ctx.root, values, Vec::new()).err()?;
    let causes = match e.kind {
        Kind::Group => e.causes,
        _ => vec![e],
    };
    let mut out = String::new();
    for c in &causes {
        c.display(&mut out, 1);
    }
    // Each cause starts with a newline: the first is the cut first line's.
    Some(format!("{}\n", out.strip_prefix('\n').unwrap_or(&out)))
}

fn json_eq(a: &Value, b: &Value) -> bool {
    match (num(a), num(b)) {
        (Some(x), Some(y)) => x == y,
        _ => {
            a.deep_equal(b)
                || json::encode(
                    a,
                    json::Opts {
                        escape_html: false,
                        indent: None,
                    },
                )
                .ok()
                    == json::encode(
                        b,
                        json::Opts {
                            escape_html: false,
                            indent: None,
                        },
                    )
                    .ok()
        }
    }
}

/// Why values were refused by the charts' JSON schemas, in Helm's words.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SchemaError {
    /// A chart's values.schema.json is not JSON.
    #[error("unable to parse schema of chart {chart}: {reason}")]
    Unparsable {
        chart: String,
        #[source]
        reason: crate::goyaml::json::JsonError,
    },
    /// The report: for each chart with violations, its name, then each
    /// violation at its JSON pointer.
    #[error(
        "values don't meet the specifications of the schema(s) in the following chart(s):\n{0}"
    )]
    Violations(String),
}

/// Validate the coalesced values of every chart in the tree that has a schema.
pub fn validate_tree(chart: &Chart, values: &Map) -> Result<(), SchemaError> {
    PendingValidation::collect(chart, values).run()
}

/// The schema checks of a chart tree as plain data, so they can run on
/// another thread while the templates render.
pub struct PendingValidation {
    /// (chart name, schema bytes, values as JSON), in tree order.
    jobs: Vec<(String, bytes::Bytes, String)>,
}

impl PendingValidation {
    pub fn collect(chart: &Chart, values: &Map) -> PendingValidation {
        fn walk(c: &Chart, v: &Map, jobs: &mut Vec<(String, bytes::Bytes, String)>) {
            if let Some(schema) = &c.schema {
                let text = json::encode(
                    &Value::map(v.clone()),
                    json::Opts {
                        escape_html: false,
                        indent: None,
                    },
                )
                .unwrap_or_else(|_| "{}".into());
                jobs.push((c.name().to_string(), schema.clone(), text));
            }
            for sub in &c.dependencies {
                let sv = match v.get(sub.name()) {
                    Some(Value::Map(m, _)) => m.borrow().clone(),
                    _ => Map::new(),
                };
                walk(sub, &sv, jobs);
            }
        }
        let mut jobs = Vec::new();
        walk(chart, values, &mut jobs);
        PendingValidation { jobs }
    }

    pub fn is_empty(&self) -> bool {
        self.jobs.is_empty()
    }

    /// Run the checks; the error text is the same as `validate_tree`'s.
    pub fn run(self) -> Result<(), SchemaError> {
        let mut report_all = String::new();
        for (name, schema, values) in self.jobs {
            let sv = json::decode(&crate::chart::load::utf8_text(&schema)).map_err(|reason| {
                SchemaError::Unparsable {
                    chart: name.clone(),
                    reason,
                }
            })?;
            let vals = json::decode(&values).unwrap_or(Value::Nil);
            let draft = draft_of(&sv);
            if let Some(e) = metaschema_error(&sv, draft) {
                report_all.push_str(&format!("{name}:\n{e}"));
                continue;
            }
            let ctx = Ctx {
                root: &sv,
                draft,
                docs: &[],
            };
            if let Some(r) = report(&ctx, &vals) {
                report_all.push_str(&format!("{name}:\n{r}"));
            }
        }
        if report_all.is_empty() {
            return Ok(());
        }
        Err(SchemaError::Violations(report_all))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn numbers_print_as_x_text_prints_them_in_english() {
        for (f, want) in [
            (1000.0, "1,000"),
            (1234.5, "1,234.5"),
            (100000.0, "100,000"),
            (1e6, "1×10⁰⁶"),
            (-1234567.25, "-1.23456725×10⁰⁶"),
            (2e-5, "2×10⁻⁰⁵"),
            (1e21, "1×10²¹"),
            (1.5e15, "1.5×10¹⁵"),
            (-0.25, "-0.25"),
            (0.0001, "0.0001"),
            (5.0, "5"),
        ] {
            assert_eq!(super::loc_float(f), want, "{f}");
        }
        assert_eq!(super::loc_int(1500), "1,500");
        assert_eq!(super::loc_int(-1234567), "-1,234,567");
        assert_eq!(super::loc_int(12), "12");
    }
}
