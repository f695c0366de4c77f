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
        Value::Float(f) => {
            if f.fract() == 0.0 {
                "number"
            } else {
                "number"
            }
        }
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

struct Ctx<'a> {
    root: &'a Value,
}

fn resolve_ref<'a>(ctx: &Ctx<'a>, r: &str) -> Option<Value> {
    let path = r.strip_prefix("#")?;
    let mut cur = ctx.root.clone();
    for part in path.split('/').filter(|p| !p.is_empty()) {
        let part = part.replace("~1", "/").replace("~0", "~");
        cur = match &cur {
            Value::Map(m, _) => m.borrow().get(&part)?.clone(),
            Value::List(l, _) => l.get(part.parse::<usize>().ok()?)?.clone(),
            _ => return None,
        };
    }
    Some(cur)
}

fn validate(ctx: &Ctx, schema: &Value, v: &Value, ptr: &str, errs: &mut Vec<(String, String)>) {
    let Value::Map(sm, _) = schema else {
        if let Value::Bool(false) = schema {
            errs.push((ptr.into(), "false schema".into()));
        }
        return;
    };
    let s = sm.borrow();
    if let Some(Value::Str(r)) = get(&s, "$ref") {
        if let Some(target) = resolve_ref(ctx, r) {
            validate(ctx, &target, v, ptr, errs);
        }
    }
    if let Some(t) = get(&s, "type") {
        let types: Vec<String> = match t {
            Value::Str(x) => vec![x.to_string()],
            Value::List(l, _) => l
                .iter()
                .filter_map(|x| x.as_str().map(|s| s.to_string()))
                .collect(),
            _ => vec![],
        };
        if !types.is_empty() && !types.iter().any(|t| type_ok(t, v)) {
            let got = if let Some(f) = num(v) {
                if f.fract() == 0.0 && types.iter().any(|t| t == "integer") {
                    "integer"
                } else {
                    "number"
                }
            } else {
                kind(v)
            };
            errs.push((
                ptr.into(),
                format!("got {}, want {}", got, types.join(" or ")),
            ));
            return;
        }
    }
    if let Some(Value::List(e, _)) = get(&s, "enum") {
        if !e.iter().any(|x| json_eq(x, v)) {
            let shown: Vec<String> = e
                .iter()
                .map(|x| {
                    json::encode(
                        x,
                        json::Opts {
                            escape_html: false,
                            indent: None,
                        },
                    )
                    .unwrap_or_default()
                })
                .collect();
            errs.push((
                ptr.into(),
                format!("value must be one of {}", shown.join(", ")),
            ));
        }
    }
    if let Some(c) = get(&s, "const") {
        if !json_eq(c, v) {
            errs.push((
                ptr.into(),
                format!(
                    "value must be {}",
                    json::encode(
                        c,
                        json::Opts {
                            escape_html: false,
                            indent: None
                        }
                    )
                    .unwrap_or_default()
                ),
            ));
        }
    }
    if let Some(f) = num(v) {
        if let Some(m) = get(&s, "minimum").and_then(num) {
            if f < m {
                errs.push((
                    ptr.into(),
                    format!("minimum: got {}, want {}", fmt_num(f), fmt_num(m)),
                ));
            }
        }
        if let Some(m) = get(&s, "maximum").and_then(num) {
            if f > m {
                errs.push((
                    ptr.into(),
                    format!("maximum: got {}, want {}", fmt_num(f), fmt_num(m)),
                ));
            }
        }
        if let Some(m) = get(&s, "exclusiveMinimum").and_then(num) {
            if f <= m {
                errs.push((
                    ptr.into(),
                    format!("exclusiveMinimum: got {}, want {}", fmt_num(f), fmt_num(m)),
                ));
            }
        }
        if let Some(m) = get(&s, "exclusiveMaximum").and_then(num) {
            if f >= m {
                errs.push((
                    ptr.into(),
                    format!("exclusiveMaximum: got {}, want {}", fmt_num(f), fmt_num(m)),
                ));
            }
        }
    }
    if let Value::Str(st) = v {
        let n = st.chars().count() as f64;
        if let Some(m) = get(&s, "minLength").and_then(num) {
            if n < m {
                errs.push((ptr.into(), format!("minLength: got {}, want {}", n, m)));
            }
        }
        if let Some(m) = get(&s, "maxLength").and_then(num) {
            if n > m {
                errs.push((ptr.into(), format!("maxLength: got {}, want {}", n, m)));
            }
        }
        if let Some(Value::Str(p)) = get(&s, "pattern") {
            if let Ok(re) = regex::Regex::new(p) {
                if !re.is_match(st) {
                    errs.push((
                        ptr.into(),
                        format!(
                            "{} does not match pattern {}",
                            crate::gotmpl::format::quote_with(st, '\'', false),
                            crate::gotmpl::format::quote_with(p, '\'', false)
                        ),
                    ));
                }
            }
        }
    }
    if let Value::List(items, _) = v {
        if let Some(m) = get(&s, "minItems").and_then(num) {
            if (items.len() as f64) < m {
                errs.push((
                    ptr.into(),
                    format!("minItems: got {}, want {}", items.len(), m),
                ));
            }
        }
        if let Some(m) = get(&s, "maxItems").and_then(num) {
            if (items.len() as f64) > m {
                errs.push((
                    ptr.into(),
                    format!("maxItems: got {}, want {}", items.len(), m),
                ));
            }
        }
        if let Some(is) = get(&s, "items") {
            if matches!(is, Value::Map(..) | Value::Bool(_)) {
                for (i, it) in items.iter().enumerate() {
                    validate(ctx, is, it, &format!("{ptr}/{i}"), errs);
                }
            }
        }
    }
    if let Value::Map(vm, _) = v {
        let vm = vm.borrow();
        if let Some(Value::List(req, _)) = get(&s, "required") {
            let missing: Vec<String> = req
                .iter()
                .filter_map(|r| r.as_str())
                .filter(|r| !vm.contains_key(*r))
                .map(|r| format!("'{r}'"))
                .collect();
            if !missing.is_empty() {
                errs.push((
                    ptr.into(),
                    format!("missing property {}", missing.join(", ")),
                ));
            }
        }
        let props = match get(&s, "properties") {
            Some(Value::Map(p, _)) => p.borrow().clone(),
            _ => Map::new(),
        };
        for (k, ps) in props.iter() {
            if let Some(val) = vm.get(k) {
                validate(
                    ctx,
                    ps,
                    val,
                    &format!("{ptr}/{}", k.replace('~', "~0").replace('/', "~1")),
                    errs,
                );
            }
        }
        let pattern_props = match get(&s, "patternProperties") {
            Some(Value::Map(p, _)) => p.borrow().clone(),
            _ => Map::new(),
        };
        for (pat, ps) in pattern_props.iter() {
            if let Ok(re) = regex::Regex::new(pat) {
                for (k, val) in vm.iter() {
                    if re.is_match(k) {
                        validate(ctx, ps, val, &format!("{ptr}/{k}"), errs);
                    }
                }
            }
        }
        if let Some(ap) = get(&s, "additionalProperties") {
            let extra: Vec<&String> = vm
                .keys()
                .filter(|k| {
                    !props.contains_key(*k)
                        && !pattern_props
                            .keys()
                            .any(|p| regex::Regex::new(p).map(|r| r.is_match(k)).unwrap_or(false))
                })
                .collect();
            match ap {
                Value::Bool(false) => {
                    if !extra.is_empty() {
                        let names: Vec<String> = extra.iter().map(|k| format!("'{k}'")).collect();
                        errs.push((
                            ptr.into(),
                            format!("additional properties {} not allowed", names.join(", ")),
                        ));
                    }
                }
                Value::Map(..) => {
                    for k in extra {
                        validate(ctx, ap, &vm[k], &format!("{ptr}/{k}"), errs);
                    }
                }
                _ => {}
            }
        }
    }
    if let Some(Value::List(all, _)) = get(&s, "allOf") {
        for sub in all.iter() {
            validate(ctx, sub, v, ptr, errs);
        }
    }
    if let Some(Value::List(any, _)) = get(&s, "anyOf") {
        if !any.iter().any(|sub| {
            let mut e = Vec::new();
            validate(ctx, sub, v, ptr, &mut e);
            e.is_empty()
        }) {
            errs.push((ptr.into(), "anyOf failed".into()));
        }
    }
    if let Some(Value::List(one, _)) = get(&s, "oneOf") {
        let n = one
            .iter()
            .filter(|sub| {
                let mut e = Vec::new();
                validate(ctx, sub, v, ptr, &mut e);
                e.is_empty()
            })
            .count();
        if n != 1 {
            errs.push((
                ptr.into(),
                if n == 0 {
                    "oneOf failed".into()
                } else {
                    "valid against more than one schema in oneOf".into()
                },
            ));
        }
    }
    if let Some(not) = get(&s, "not") {
        let mut e = Vec::new();
        validate(ctx, not, v, ptr, &mut e);
        if e.is_empty() {
            errs.push((ptr.into(), "not failed".into()));
        }
    }
    if let (Some(iff), Value::Map(..)) = (get(&s, "if"), schema) {
        let mut e = Vec::new();
        validate(ctx, iff, v, ptr, &mut e);
        let branch = if e.is_empty() {
            get(&s, "then")
        } else {
            get(&s, "else")
        };
        if let Some(b) = branch {
            validate(ctx, b, v, ptr, errs);
        }
    }
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
        let mut report = String::new();
        for (name, schema, values) in self.jobs {
            let sv = json::decode(&crate::chart::load::utf8_text(&schema)).map_err(|reason| {
                SchemaError::Unparsable {
                    chart: name.clone(),
                    reason,
                }
            })?;
            let vals = json::decode(&values).unwrap_or(Value::Nil);
            let ctx = Ctx { root: &sv };
            let mut errs = Vec::new();
            validate(&ctx, &sv, &vals, "", &mut errs);
            if !errs.is_empty() {
                report.push_str(&format!("{name}:\n"));
                if errs.len() == 1 {
                    report.push_str(&format!("- at '{}': {}\n", errs[0].0, errs[0].1));
                } else {
                    report.push_str("- at '': validation failed\n");
                    for (p, m) in &errs {
                        report.push_str(&format!("  - at '{p}': {m}\n"));
                    }
                }
            }
        }
        if report.is_empty() {
            return Ok(());
        }
        Err(SchemaError::Violations(report))
    }
}
