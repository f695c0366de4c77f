//! `.Files`: a chart's non-template files with Helm's accessor methods.

use crate::value::{ListKind, Map, MethodError, Object, Value};
use std::collections::BTreeMap;
use std::rc::Rc;

#[derive(Debug, Clone, Default)]
pub struct Files {
    pub files: BTreeMap<String, bytes::Bytes>,
}

impl Files {
    pub fn new(list: &[super::File]) -> Files {
        Files {
            files: list
                .iter()
                .map(|f| (f.name.clone(), f.data.clone()))
                .collect(),
        }
    }
}

/// gobwas/glob with '/' as the separator.
pub fn glob_match(pattern: &str, name: &str) -> Option<bool> {
    #[derive(Debug)]
    enum T {
        Lit(char),
        Any,
        Super,
        One,
        Class(bool, Vec<(char, char)>),
        Alt(Vec<Vec<T>>),
    }
    fn parse(p: &[char], i: &mut usize, in_alt: bool) -> Option<Vec<T>> {
        let mut out = Vec::new();
        while *i < p.len() {
            let c = p[*i];
            match c {
                '*' => {
                    if *i + 1 < p.len() && p[*i + 1] == '*' {
                        out.push(T::Super);
                        *i += 2;
                    } else {
                        out.push(T::Any);
                        *i += 1;
                    }
                }
                '?' => {
                    out.push(T::One);
                    *i += 1;
                }
                '[' => {
                    *i += 1;
                    let neg = *i < p.len() && p[*i] == '!';
                    if neg {
                        *i += 1;
                    }
                    let mut ranges = Vec::new();
                    while *i < p.len() && p[*i] != ']' {
                        let a = p[*i];
                        if *i + 2 < p.len() && p[*i + 1] == '-' && p[*i + 2] != ']' {
                            ranges.push((a, p[*i + 2]));
                            *i += 3;
                        } else {
                            ranges.push((a, a));
                            *i += 1;
                        }
                    }
                    if *i >= p.len() {
                        return None;
                    }
                    *i += 1;
                    out.push(T::Class(neg, ranges));
                }
                '{' => {
                    *i += 1;
                    let mut alts = Vec::new();
                    loop {
                        let alt = parse(p, i, true)?;
                        alts.push(alt);
                        if *i >= p.len() {
                            return None;
                        }
                        if p[*i] == ',' {
                            *i += 1;
                            continue;
                        }
                        if p[*i] == '}' {
                            *i += 1;
                            break;
                        }
                    }
                    out.push(T::Alt(alts));
                }
                ',' | '}' if in_alt => return Some(out),
                '\\' => {
                    if *i + 1 >= p.len() {
                        return None;
                    }
                    out.push(T::Lit(p[*i + 1]));
                    *i += 2;
                }
                c => {
                    out.push(T::Lit(c));
                    *i += 1;
                }
            }
        }
        if in_alt {
            return None;
        }
        Some(out)
    }
    fn m(t: &[T], n: &[char], rest: &dyn Fn(&[char]) -> bool) -> bool {
        if t.is_empty() {
            return rest(n);
        }
        match &t[0] {
            T::Lit(c) => !n.is_empty() && n[0] == *c && m(&t[1..], &n[1..], rest),
            T::One => !n.is_empty() && n[0] != '/' && m(&t[1..], &n[1..], rest),
            T::Class(neg, r) => {
                !n.is_empty()
                    && n[0] != '/'
                    && (r.iter().any(|(a, b)| *a <= n[0] && n[0] <= *b) != *neg)
                    && m(&t[1..], &n[1..], rest)
            }
            T::Any => {
                for k in 0..=n.len() {
                    if k > 0 && n[k - 1] == '/' {
                        break;
                    }
                    if m(&t[1..], &n[k..], rest) {
                        return true;
                    }
                }
                false
            }
            T::Super => (0..=n.len()).any(|k| m(&t[1..], &n[k..], rest)),
            T::Alt(alts) => alts
                .iter()
                .any(|a| m(a, n, &|r: &[char]| m(&t[1..], r, rest))),
        }
    }
    let p: Vec<char> = pattern.chars().collect();
    let mut i = 0;
    let toks = parse(&p, &mut i, false)?;
    let n: Vec<char> = name.chars().collect();
    Some(m(&toks, &n, &|r: &[char]| r.is_empty()))
}

fn str_map_yaml(m: BTreeMap<String, String>) -> String {
    let map: Map = m.into_iter().map(|(k, v)| (k, Value::string(v))).collect();
    crate::goyaml::to_yaml(&Value::map(map)).unwrap_or_default()
}

fn base(p: &str) -> String {
    crate::gotmpl::funcs::strings::path_base(p)
}

impl Object for Files {
    fn type_name(&self) -> String {
        "engine.files".into()
    }
    fn kind_name(&self) -> &'static str {
        "map"
    }
    fn field(&self, name: &str) -> Option<Value> {
        Some(match self.files.get(name) {
            Some(b) => Value::Bytes(b.clone()),
            None => Value::Nil,
        })
    }
    fn has_method(&self, name: &str) -> bool {
        matches!(
            name,
            "Get" | "GetBytes" | "Glob" | "Lines" | "AsConfig" | "AsSecrets"
        )
    }
    fn method_sig(
        &self,
        name: &str,
    ) -> Option<(
        &'static [crate::gotmpl::funcs::P],
        Option<crate::gotmpl::funcs::P>,
    )> {
        use crate::gotmpl::funcs::P;
        Some(match name {
            "AsConfig" | "AsSecrets" => (&[], None),
            _ => (&[P::Str], None),
        })
    }
    fn call_method(&self, name: &str, args: Vec<Value>) -> Result<Value, MethodError> {
        let want = match name {
            "AsConfig" | "AsSecrets" => 0,
            _ => 1,
        };
        if args.len() != want {
            return Err(MethodError::ArgCountOf {
                method: name.to_string(),
                want,
                got: args.len(),
            });
        }
        let arg = || -> Result<String, MethodError> {
            match &args[0] {
                Value::Str(s) => Ok(s.to_string()),
                other => Err(MethodError::WrongType {
                    expected: "string",
                    got: other.type_name(),
                }),
            }
        };
        Ok(match name {
            "Get" => Value::string(
                self.files
                    .get(&arg()?)
                    .map(|b| crate::value::gostr::from_bytes(b).into_owned())
                    .unwrap_or_default(),
            ),
            "GetBytes" => Value::Bytes(self.files.get(&arg()?).cloned().unwrap_or_default()),
            "Lines" => {
                let p = arg()?;
                match self.files.get(&p) {
                    None => Value::List(Rc::new(Vec::new()), ListKind::Str),
                    Some(b) => {
                        let mut s = crate::value::gostr::from_bytes(b).into_owned();
                        if s.ends_with('\n') {
                            s.pop();
                        }
                        Value::str_list(s.split('\n').map(|x| x.to_string()).collect())
                    }
                }
            }
            "Glob" => {
                let pat = arg()?;
                let files = self
                    .files
                    .iter()
                    .filter(|(n, _)| glob_match(&pat, n).unwrap_or(true))
                    .map(|(n, b)| (n.clone(), b.clone()))
                    .collect();
                Value::Object(Rc::new(Files { files }))
            }
            "AsConfig" => str_map_yaml(
                self.files
                    .iter()
                    .map(|(k, v)| (base(k), crate::value::gostr::from_bytes(v).into_owned()))
                    .collect(),
            )
            .into(),
            "AsSecrets" => {
                use base64::Engine as _;
                str_map_yaml(
                    self.files
                        .iter()
                        .map(|(k, v)| {
                            (
                                base(k),
                                base64::engine::general_purpose::STANDARD.encode(&v[..]),
                            )
                        })
                        .collect(),
                )
                .into()
            }
            _ => return Err(MethodError::Unknown(name.to_string())),
        })
    }
    fn format(&self) -> String {
        let mut s = String::from("map[");
        for (i, (k, v)) in self.files.iter().enumerate() {
            if i > 0 {
                s.push(' ');
            }
            s.push_str(k);
            s.push(':');
            s.push_str(&crate::gotmpl::format::format_v(&Value::Bytes(v.clone())));
        }
        s.push(']');
        s
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn to_data(&self) -> Value {
        Value::map(
            self.files
                .iter()
                .map(|(k, v)| (k.clone(), Value::Bytes(v.clone())))
                .collect(),
        )
    }
}
