//! Sprig's string, regex, path, encoding, URL, reflection and default
//! functions.

use super::{arg_int, arg_str, strval, FResult, Registry, P};
use crate::gotmpl::format::{self, quote_go};
use crate::value::gostr;
use crate::value::gounicode as uni;
use crate::value::{ListKind, Map, MapKind, Value};
use base64::Engine as _;
use std::rc::Rc;

fn s(v: String) -> FResult {
    Ok(Value::string(v))
}

pub fn register(r: &mut Registry) {
    use P::*;
    r.add("hello", &[], None, |_, _| s("Hello!".into()));
    // Sprig's env and expandenv (os.Getenv, os.ExpandEnv): Helm deletes
    // them from a chart's functions; `--name-template` has them.
    r.add("env", &[Str], None, |_, a| s(getenv(arg_str(&a[0]))));
    r.add("expandenv", &[Str], None, |_, a| {
        s(expand_env(arg_str(&a[0])))
    });
    r.add("trim", &[Str], None, |_, a| {
        s(arg_str(&a[0]).trim_matches(char::is_whitespace).to_string())
    });
    r.add("trimAll", &[Str, Str], None, |_, a| {
        let cut: Vec<char> = arg_str(&a[0]).chars().collect();
        s(arg_str(&a[1])
            .trim_matches(|c| cut.contains(&c))
            .to_string())
    });
    r.alias("trimall", "trimAll");
    r.add("trimPrefix", &[Str, Str], None, |_, a| {
        s(arg_str(&a[1])
            .strip_prefix(arg_str(&a[0]))
            .unwrap_or(arg_str(&a[1]))
            .to_string())
    });
    r.add("trimSuffix", &[Str, Str], None, |_, a| {
        s(arg_str(&a[1])
            .strip_suffix(arg_str(&a[0]))
            .unwrap_or(arg_str(&a[1]))
            .to_string())
    });
    // strings.ToUpper / ToLower: strings.Map with unicode's one-rune
    // mappings, which writes each byte that is not UTF-8 as U+FFFD.
    r.add("upper", &[Str], None, |_, a| {
        s(arg_str(&a[0])
            .chars()
            .map(|c| uni::to_upper(uni::rune(c)))
            .collect())
    });
    r.add("lower", &[Str], None, |_, a| {
        s(arg_str(&a[0])
            .chars()
            .map(|c| uni::to_lower(uni::rune(c)))
            .collect())
    });
    r.add("title", &[Str], None, |_, a| s(title(arg_str(&a[0]))));
    r.add("untitle", &[Str], None, |_, a| s(untitle(arg_str(&a[0]))));
    r.add("repeat", &[Int, Str], None, |_, a| {
        let n = arg_int(&a[0]);
        if n < 0 {
            return Err("strings: negative Repeat count".into());
        }
        s(arg_str(&a[1]).repeat(n as usize))
    });
    r.add("substr", &[Int, Int, Str], None, |_, a| {
        substr(arg_int(&a[0]), arg_int(&a[1]), arg_str(&a[2]))
    });
    r.add("trunc", &[Int, Str], None, |_, a| {
        let c = arg_int(&a[0]);
        let st = arg_str(&a[1]);
        let bb = gostr::to_bytes(st);
        let b = &*bb;
        let l = b.len() as i64;
        if c < 0 && l + c > 0 {
            return s(go_lossy(&b[(l + c) as usize..]));
        }
        if c >= 0 && l > c {
            return s(go_lossy(&b[..c as usize]));
        }
        s(st.to_string())
    });
    r.add("abbrev", &[Int, Str], None, |_, a| {
        let w = arg_int(&a[0]);
        if w < 4 {
            return s(arg_str(&a[1]).to_string());
        }
        s(abbreviate_full(arg_str(&a[1]), 0, w).unwrap_or_default())
    });
    r.add("abbrevboth", &[Int, Int, Str], None, |_, a| {
        let (l, rt) = (arg_int(&a[0]), arg_int(&a[1]));
        if rt < 4 || l > 0 && rt < 7 {
            return s(arg_str(&a[2]).to_string());
        }
        s(abbreviate_full(arg_str(&a[2]), l, rt).unwrap_or_default())
    });
    // goutils reads these strings byte by byte, each byte taken as a rune
    // (Latin-1) and written back as that rune's UTF-8.
    r.add("initials", &[Str], None, |_, a| {
        let mut out = String::new();
        let mut gap = true;
        for &b in gostr::to_bytes(arg_str(&a[0])).iter() {
            if go_latin1_space(b) {
                gap = true;
            } else if gap {
                out.push(b as char);
                gap = false;
            }
        }
        s(out)
    });
    r.add("wrap", &[Int, Str], None, |_, a| {
        s(wrap_custom(arg_str(&a[1]), arg_int(&a[0]), "", false))
    });
    r.add("wrapWith", &[Int, Str, Str], None, |_, a| {
        s(wrap_custom(
            arg_str(&a[2]),
            arg_int(&a[0]),
            arg_str(&a[1]),
            true,
        ))
    });
    r.add("contains", &[Str, Str], None, |_, a| {
        Ok(Value::Bool(arg_str(&a[1]).contains(arg_str(&a[0]))))
    });
    r.add("hasPrefix", &[Str, Str], None, |_, a| {
        Ok(Value::Bool(arg_str(&a[1]).starts_with(arg_str(&a[0]))))
    });
    r.add("hasSuffix", &[Str, Str], None, |_, a| {
        Ok(Value::Bool(arg_str(&a[1]).ends_with(arg_str(&a[0]))))
    });
    r.add("quote", &[], Some(Any), |_, a| {
        s(a.iter()
            .filter(|v| !v.is_nil())
            .map(|v| quote_go(&strval(v)))
            .collect::<Vec<_>>()
            .join(" "))
    });
    r.add("squote", &[], Some(Any), |_, a| {
        s(a.iter()
            .filter(|v| !v.is_nil())
            .map(|v| format!("'{}'", format::format_v(v)))
            .collect::<Vec<_>>()
            .join(" "))
    });
    r.add("cat", &[], Some(Any), |_, a| {
        s(a.iter()
            .filter(|v| !v.is_nil())
            .map(format::format_v)
            .collect::<Vec<_>>()
            .join(" "))
    });
    r.add("indent", &[Int, Str], None, |_, a| {
        s(indent(arg_int(&a[0]), arg_str(&a[1])))
    });
    r.add("nindent", &[Int, Str], None, |_, a| {
        s(format!("\n{}", indent(arg_int(&a[0]), arg_str(&a[1]))))
    });
    r.add("replace", &[Str, Str, Str], None, |_, a| {
        s(go_replace(arg_str(&a[2]), arg_str(&a[0]), arg_str(&a[1])))
    });
    r.add("plural", &[Str, Str, Int], None, |_, a| {
        s(if arg_int(&a[2]) == 1 {
            arg_str(&a[0])
        } else {
            arg_str(&a[1])
        }
        .to_string())
    });
    r.add("snakecase", &[Str], None, |_, a| {
        s(camel_to_lower(arg_str(&a[0]), '_'))
    });
    r.add("kebabcase", &[Str], None, |_, a| {
        s(camel_to_lower(arg_str(&a[0]), '-'))
    });
    // Sprig 3.3 calls xstrings.ToPascalCase (xstrings 1.5's ToCamelCase
    // starts lower).
    r.add("camelcase", &[Str], None, |_, a| {
        s(pascal_case(arg_str(&a[0])))
    });
    r.add("swapcase", &[Str], None, |_, a| {
        s(swap_case(arg_str(&a[0])))
    });
    r.add("shuffle", &[Str], None, |_, a| {
        use rand::seq::SliceRandom;
        let mut c: Vec<char> = gostr::lossy(arg_str(&a[0])).chars().collect();
        c.shuffle(&mut rand::thread_rng());
        s(c.into_iter().collect())
    });
    // goutils.DeleteWhiteSpace: byte by byte, each kept byte written back
    // as the Latin-1 rune it is read as; the string itself when no byte goes.
    r.add("nospace", &[Str], None, |_, a| {
        let st = arg_str(&a[0]);
        let b = gostr::to_bytes(st);
        if !b.iter().any(|b| go_latin1_space(*b)) {
            return s(st.to_string());
        }
        s(b.iter()
            .copied()
            .filter(|b| !go_latin1_space(*b))
            .map(|b| b as char)
            .collect())
    });
    r.add("toString", &[Any], None, |_, a| s(strval(&a[0])));
    r.add("toStrings", &[Any], None, |_, a| {
        Ok(Value::str_list(strslice(&a[0])))
    });
    r.add("join", &[Str, Any], None, |_, a| {
        s(strslice(&a[1]).join(arg_str(&a[0])))
    });
    r.add("split", &[Str, Str], None, |_, a| {
        let parts = go_split(arg_str(&a[1]), arg_str(&a[0]), -1);
        Ok(split_map(parts))
    });
    r.add("splitn", &[Str, Int, Str], None, |_, a| {
        let parts = go_split(arg_str(&a[2]), arg_str(&a[0]), arg_int(&a[1]));
        Ok(split_map(parts))
    });
    r.add("splitList", &[Str, Str], None, |_, a| {
        Ok(Value::str_list(go_split(
            arg_str(&a[1]),
            arg_str(&a[0]),
            -1,
        )))
    });
    r.add("sortAlpha", &[Any], None, |_, a| {
        let mut l = match &a[0].as_go_slice() {
            v @ (Value::List(..) | Value::Bytes(_)) => strslice(v),
            other => vec![strval(other)],
        };
        l.sort();
        Ok(Value::str_list(l))
    });
    r.add("sha1sum", &[Str], None, |_, a| {
        use sha1::Digest;
        s(hex(&sha1::Sha1::digest(&*gostr::to_bytes(arg_str(&a[0])))))
    });
    r.add("sha256sum", &[Str], None, |_, a| {
        use sha2::Digest;
        s(hex(&sha2::Sha256::digest(&*gostr::to_bytes(arg_str(
            &a[0],
        )))))
    });
    r.add("sha512sum", &[Str], None, |_, a| {
        use sha2::Digest;
        s(hex(&sha2::Sha512::digest(&*gostr::to_bytes(arg_str(
            &a[0],
        )))))
    });
    r.add("adler32sum", &[Str], None, |_, a| {
        s(adler32(&gostr::to_bytes(arg_str(&a[0]))).to_string())
    });
    r.add("b64enc", &[Str], None, |_, a| {
        s(base64::engine::general_purpose::STANDARD.encode(gostr::to_bytes(arg_str(&a[0]))))
    });
    r.add("b64dec", &[Str], None, |_, a| {
        s(match go_b64_decode(arg_str(&a[0])) {
            Ok(b) => gostr::from_vec(b),
            // Sprig returns the error's text in place of the decoded string.
            Err(e) => e.to_string(),
        })
    });
    r.add("b32enc", &[Str], None, |_, a| {
        s(b32_encode(&gostr::to_bytes(arg_str(&a[0]))))
    });
    r.add("b32dec", &[Str], None, |_, a| {
        s(match b32_decode(arg_str(&a[0])) {
            Ok(b) => gostr::from_vec(b),
            // Sprig returns the error's text in place of the decoded string.
            Err(e) => e.to_string(),
        })
    });
    // Regular expressions.
    r.add("regexMatch", &[Str, Str], None, |_, a| {
        Ok(Value::Bool(
            compile(arg_str(&a[0]))
                .map(|re| re.is_match(arg_str(&a[1])))
                .unwrap_or(false),
        ))
    });
    r.add("mustRegexMatch", &[Str, Str], None, |_, a| {
        Ok(Value::Bool(
            compile(arg_str(&a[0]))?.is_match(arg_str(&a[1])),
        ))
    });
    r.add("regexFindAll", &[Str, Str, Int], None, |_, a| {
        regex_find_all(&a, true)
    });
    r.add("mustRegexFindAll", &[Str, Str, Int], None, |_, a| {
        regex_find_all(&a, false)
    });
    r.add("regexFind", &[Str, Str], None, |_, a| regex_find(&a, true));
    r.add("mustRegexFind", &[Str, Str], None, |_, a| {
        regex_find(&a, false)
    });
    r.add("regexReplaceAll", &[Str, Str, Str], None, |_, a| {
        regex_replace(&a, true, true)
    });
    r.add("mustRegexReplaceAll", &[Str, Str, Str], None, |_, a| {
        regex_replace(&a, true, false)
    });
    r.add("regexReplaceAllLiteral", &[Str, Str, Str], None, |_, a| {
        regex_replace(&a, false, true)
    });
    r.add(
        "mustRegexReplaceAllLiteral",
        &[Str, Str, Str],
        None,
        |_, a| regex_replace(&a, false, false),
    );
    r.add("regexSplit", &[Str, Str, Int], None, |_, a| {
        regex_split(&a, true)
    });
    r.add("mustRegexSplit", &[Str, Str, Int], None, |_, a| {
        regex_split(&a, false)
    });
    r.add("regexQuoteMeta", &[Str], None, |_, a| {
        s(quote_meta(arg_str(&a[0])))
    });
    // Paths.
    r.add("base", &[Str], None, |_, a| s(path_base(arg_str(&a[0]))));
    r.add("dir", &[Str], None, |_, a| s(path_dir(arg_str(&a[0]))));
    r.add("clean", &[Str], None, |_, a| s(path_clean(arg_str(&a[0]))));
    r.add("ext", &[Str], None, |_, a| s(path_ext(arg_str(&a[0]))));
    r.add("isAbs", &[Str], None, |_, a| {
        Ok(Value::Bool(arg_str(&a[0]).starts_with('/')))
    });
    r.alias("osBase", "base");
    r.alias("osDir", "dir");
    r.alias("osClean", "clean");
    r.alias("osExt", "ext");
    r.alias("osIsAbs", "isAbs");
    // URLs.
    r.add("urlParse", &[Str], None, |_, a| url_parse(arg_str(&a[0])));
    r.add("urlJoin", &[Dict], None, |_, a| url_join(&a[0]));
    // Reflection.
    r.add("typeOf", &[Any], None, |_, a| s(a[0].type_name()));
    r.add("typeIs", &[Str, Any], None, |_, a| {
        Ok(Value::Bool(arg_str(&a[0]) == a[1].type_name()))
    });
    r.add("typeIsLike", &[Str, Any], None, |_, a| {
        let t = a[1].type_name();
        let target = arg_str(&a[0]);
        Ok(Value::Bool(target == t || format!("*{target}") == t))
    });
    r.add("kindOf", &[Any], None, |_, a| {
        s(a[0].kind_name().to_string())
    });
    r.add("kindIs", &[Str, Any], None, |_, a| {
        Ok(Value::Bool(arg_str(&a[0]) == a[1].kind_name()))
    });
    r.add("deepEqual", &[Any, Any], None, |_, a| {
        Ok(Value::Bool(a[0].deep_equal(&a[1])))
    });
    // Defaults.
    r.add("default", &[Any], Some(Any), |_, a| {
        if a.len() < 2 || is_empty(&a[1]) {
            return Ok(a[0].clone());
        }
        Ok(a[1].clone())
    });
    r.add("empty", &[Any], None, |_, a| {
        Ok(Value::Bool(is_empty(&a[0])))
    });
    r.add("coalesce", &[], Some(Any), |_, a| {
        Ok(a.into_iter().find(|v| !is_empty(v)).unwrap_or(Value::Nil))
    });
    r.add("all", &[], Some(Any), |_, a| {
        Ok(Value::Bool(a.iter().all(|v| !is_empty(v))))
    });
    r.add("any", &[], Some(Any), |_, a| {
        Ok(Value::Bool(a.iter().any(|v| !is_empty(v))))
    });
    r.add("ternary", &[Any, Any, Bool], None, |_, a| {
        Ok(if a[2].truthy() {
            a[0].clone()
        } else {
            a[1].clone()
        })
    });
}

/// Bytes as a Go string holding them: each byte that starts no valid
/// UTF-8 sequence is kept as its raw-byte marker (see gotmpl::gostr).
pub fn go_lossy(b: &[u8]) -> String {
    gostr::from_bytes(b).into_owned()
}

/// unicode.IsSpace of a byte taken as a rune (Latin-1).
fn go_latin1_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | 0x0B | 0x0C | b'\r' | b' ' | 0x85 | 0xA0)
}

/// Sprig's `empty`.
pub fn is_empty(v: &Value) -> bool {
    match v {
        // A slice behind an object (VersionSet) is empty when it has no items.
        Value::Object(o) if matches!(o.kind_name(), "slice" | "array") => {
            matches!(o.to_data(), Value::List(l, _) if l.is_empty())
        }
        // Objects (certificates, .Files, ...) are structs or pointers to
        // them in Go: never empty.
        Value::Object(_) => false,
        other => !other.truthy(),
    }
}

pub fn hex(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len() * 2);
    for x in b {
        s.push_str(&format!("{:02x}", x));
    }
    s
}

fn adler32(data: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for &x in data {
        a = (a + x as u32) % 65521;
        b = (b + a) % 65521;
    }
    (b << 16) | a
}

/// Go's strings.Title: unicode.ToTitle of each rune after a separator;
/// bytes that are not UTF-8 become U+FFFD (strings.Map).
fn title(st: &str) -> String {
    let mut prev = ' ';
    st.chars()
        .map(|c| {
            let c = uni::rune(c);
            let out = if is_title_separator(prev) {
                uni::to_title(c)
            } else {
                c
            };
            prev = c;
            out
        })
        .collect()
}

/// strings.Title's isSeparator.
fn is_title_separator(c: char) -> bool {
    if c.is_ascii() {
        return !(c.is_ascii_alphanumeric() || c == '_');
    }
    if uni::is_letter(c) || uni::is_digit(c) {
        return false;
    }
    uni::is_space(c)
}

/// goutils.Uncapitalize: over []rune(str), unicode.ToLower of the first rune
/// and of each one after a unicode.IsSpace.
fn untitle(st: &str) -> String {
    let mut next = true;
    st.chars()
        .map(|c| {
            let c = uni::rune(c);
            if uni::is_space(c) {
                next = true;
                c
            } else if next {
                next = false;
                uni::to_lower(c)
            } else {
                c
            }
        })
        .collect()
}

/// goutils.SwapCase: over []rune(str), upper and title runes go lower, a
/// lower rune goes title at the start or after a space, upper elsewhere.
fn swap_case(st: &str) -> String {
    let mut space = true;
    st.chars()
        .map(|c| {
            let c = uni::rune(c);
            if uni::is_upper(c) || uni::is_title(c) {
                space = false;
                uni::to_lower(c)
            } else if uni::is_lower(c) {
                if std::mem::replace(&mut space, false) {
                    uni::to_title(c)
                } else {
                    uni::to_upper(c)
                }
            } else {
                space = uni::is_space(c);
                c
            }
        })
        .collect()
}

fn substr(start: i64, end: i64, st: &str) -> FResult {
    let bb = gostr::to_bytes(st);
    let b = &*bb;
    let l = b.len() as i64;
    let slice = |a: i64, z: i64| -> FResult {
        if a < 0 || z > l || a > z {
            if z > l {
                return Err(format!(
                    "runtime error: slice bounds out of range [:{z}] with length {l}"
                )
                .into());
            }
            return Err(format!("runtime error: slice bounds out of range [{a}:{z}]").into());
        }
        Ok(Value::string(go_lossy(&b[a as usize..z as usize])))
    };
    if start < 0 {
        return slice(0, end);
    }
    if end < 0 || end > l {
        if start > l {
            return Err(format!("runtime error: slice bounds out of range [{start}:{l}]").into());
        }
        return slice(start, l);
    }
    slice(start, end)
}

fn abbreviate_full(st: &str, offset: i64, max: i64) -> Option<String> {
    if st.is_empty() {
        return Some(String::new());
    }
    if max < 4 {
        return None;
    }
    let l = gostr::byte_len(st) as i64;
    if l <= max {
        return Some(st.to_string());
    }
    let mut offset = offset.min(l);
    if l - offset < max - 3 {
        offset = l - (max - 3);
    }
    let bb = gostr::to_bytes(st);
    let b = &*bb;
    let sub = |a: i64, z: i64| go_lossy(&b[a as usize..z as usize]);
    if offset <= 4 {
        return Some(sub(0, max - 3) + "...");
    }
    if max < 7 {
        return None;
    }
    if offset + max - 3 < l {
        let rest = abbreviate_full(&sub(offset, l), 0, max - 3)?;
        return Some(format!("...{rest}"));
    }
    Some(format!("...{}", sub(l - (max - 3), l)))
}

fn wrap_custom(st: &str, wrap_len: i64, nl: &str, wrap_long: bool) -> String {
    if st.is_empty() {
        return String::new();
    }
    let nl = if nl.is_empty() { "\n" } else { nl };
    let w = wrap_len.max(1) as usize;
    let bb = gostr::to_bytes(st);
    let b = &*bb;
    let n = b.len();
    let mut offset = 0usize;
    let mut out: Vec<u8> = Vec::new();
    while n - offset > w {
        if b[offset] == b' ' {
            offset += 1;
            continue;
        }
        let end = w + offset + 1;
        let space = b[offset..end].iter().rposition(|&c| c == b' ');
        if let Some(sp) = space {
            let at = sp + offset;
            out.extend_from_slice(&b[offset..at]);
            out.extend_from_slice(nl.as_bytes());
            offset = at + 1;
        } else if wrap_long {
            let end = w + offset;
            out.extend_from_slice(&b[offset..end]);
            out.extend_from_slice(nl.as_bytes());
            offset += w;
        } else {
            let end = w + offset;
            match b[end..].iter().position(|&c| c == b' ') {
                None => {
                    out.extend_from_slice(&b[offset..]);
                    offset = n;
                }
                Some(i) => {
                    let at = i + end;
                    out.extend_from_slice(&b[offset..at]);
                    out.extend_from_slice(nl.as_bytes());
                    offset = at + 1;
                }
            }
        }
    }
    out.extend_from_slice(&b[offset.min(n)..]);
    go_lossy(&out)
}

fn indent(n: i64, st: &str) -> String {
    let pad = " ".repeat(n.max(0) as usize);
    let mut out = String::with_capacity(st.len() + pad.len() * 4);
    out.push_str(&pad);
    for (i, part) in st.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
            out.push_str(&pad);
        }
        out.push_str(part);
    }
    out
}

/// Go's strings.Replace(s, old, new, -1), including the empty-`old` case.
fn go_replace(st: &str, old: &str, new: &str) -> String {
    if old.is_empty() {
        let mut out = String::new();
        out.push_str(new);
        for c in st.chars() {
            out.push(c);
            out.push_str(new);
        }
        return out;
    }
    st.replace(old, new)
}

/// Go's strings.SplitN (n < 0: all).
pub fn go_split(st: &str, sep: &str, n: i64) -> Vec<String> {
    if n == 0 {
        return Vec::new();
    }
    if sep.is_empty() {
        let chars: Vec<String> = st.chars().map(|c| c.to_string()).collect();
        if n > 0 && (n as usize) < chars.len() {
            let mut v: Vec<String> = chars[..n as usize - 1].to_vec();
            v.push(st.chars().skip(n as usize - 1).collect());
            return v;
        }
        return chars;
    }
    if n < 0 {
        st.split(sep).map(|x| x.to_string()).collect()
    } else {
        st.splitn(n as usize, sep).map(|x| x.to_string()).collect()
    }
}

fn split_map(parts: Vec<String>) -> Value {
    let mut m = Map::new();
    for (i, p) in parts.into_iter().enumerate() {
        m.insert(format!("_{i}"), Value::string(p));
    }
    Value::Map(Rc::new(std::cell::RefCell::new(m)), MapKind::StrStr)
}

/// Sprig's strslice.
pub fn strslice(v: &Value) -> Vec<String> {
    match v {
        Value::List(l, ListKind::Str | ListKind::NilStr) => l.iter().map(strval).collect(),
        Value::List(l, _) => l.iter().filter(|x| !x.is_nil()).map(strval).collect(),
        Value::Bytes(b) => b.iter().map(|x| x.to_string()).collect(),
        Value::Nil => Vec::new(),
        other => vec![strval(other)],
    }
}

// ---- huandu/xstrings 1.5 (camelcase, snakecase, kebabcase) ----
//
// Ported step by step: they walk the Go string's bytes with
// utf8.DecodeRuneInString, where each byte that is not UTF-8 (one raw-byte
// marker char here) is a RuneError of width 1. Runes they write back with
// WriteRune come out as U+FFFD; words they copy with WriteString keep the
// raw bytes.

const RUNE_ERROR: char = '\u{FFFD}';

/// xstrings' isConnector.
fn is_connector(c: char) -> bool {
    c == '-' || c == '_' || uni::is_space(c)
}

/// xstrings' isAlphabet: a letter, not a CJK ideograph.
fn is_alphabet(c: char) -> bool {
    if !uni::is_letter(c) {
        return false;
    }
    let r = c as u32;
    !(r >= 0x3400
        && ((0x4E00..=0x9FCC).contains(&r)
            || (0x3400..=0x4D85).contains(&r)
            || (0x20000..=0x2B81D).contains(&r)))
}

/// xstrings' toCamelCase(str, isBig) (ToPascalCase when big).
fn to_camel_case(st: &str, big: bool) -> String {
    if st.is_empty() {
        return String::new();
    }
    let mut out = String::with_capacity(st.len());
    let mut chars = st.chars().map(uni::rune).peekable();
    let mut first_upper = false;
    let mut r0 = RUNE_ERROR;
    // Leading connectors appear in the output.
    while let Some(c) = chars.next() {
        r0 = c;
        if !is_connector(r0) {
            first_upper = uni::is_upper(r0);
            r0 = if big {
                uni::to_upper(r0)
            } else {
                uni::to_lower(r0)
            };
            break;
        }
        out.push(r0);
    }
    if chars.peek().is_none() {
        // Go writes the last rune read once more here, even when it was a
        // connector already written.
        out.push(r0);
        return out;
    }
    for c in chars {
        let r1 = r0;
        r0 = c;
        if is_connector(r0) && is_connector(r1) {
            out.push(r1);
            continue;
        }
        if is_connector(r1) {
            first_upper = uni::is_upper(r0);
            r0 = uni::to_upper(r0);
        } else {
            if first_upper {
                if uni::is_upper(r0) {
                    r0 = uni::to_lower(r0);
                } else {
                    first_upper = false;
                }
            }
            out.push(r1);
        }
    }
    if first_upper && !big {
        r0 = uni::to_lower(r0);
    }
    out.push(r0);
    out
}

fn pascal_case(st: &str) -> String {
    to_camel_case(st, true)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Word {
    Invalid,
    Number,
    Upper,
    Alphabet,
    Connector,
    Punct,
    Other,
}

/// xstrings' nextValidRune: the first rune that is not RuneError and the
/// width up to and including it; `prev` and the whole width if none.
fn next_valid_rune(s: &[char], prev: char) -> (char, usize) {
    for (i, &c) in s.iter().enumerate() {
        let r = uni::rune(c);
        if r != RUNE_ERROR {
            return (r, i + 1);
        }
    }
    (prev, s.len())
}

/// xstrings' nextWord.
fn next_word(st: &[char]) -> (Word, &[char], &[char]) {
    if st.is_empty() {
        return (Word::Invalid, st, st);
    }
    let mut remaining = st;
    let (mut r, mut size) = next_valid_rune(remaining, RUNE_ERROR);
    let mut offset = size;
    if r == RUNE_ERROR {
        return (Word::Invalid, &st[..offset], &st[offset..]);
    }
    // Extend the word while `keep` holds for the next valid rune.
    fn run(remaining: &mut &[char], offset: &mut usize, r: &mut char, keep: &dyn Fn(char) -> bool) {
        while !remaining.is_empty() {
            let (nr, sz) = next_valid_rune(remaining, *r);
            *r = nr;
            if !keep(nr) {
                break;
            }
            *offset += sz;
            *remaining = &remaining[sz..];
        }
    }
    let wt;
    if is_connector(r) {
        wt = Word::Connector;
        remaining = &remaining[size..];
        run(&mut remaining, &mut offset, &mut r, &is_connector);
    } else if uni::is_punct(r) {
        wt = Word::Punct;
        remaining = &remaining[size..];
        run(&mut remaining, &mut offset, &mut r, &uni::is_punct);
    } else if uni::is_upper(r) {
        wt = Word::Upper;
        remaining = &remaining[size..];
        if !remaining.is_empty() {
            (r, size) = next_valid_rune(remaining, r);
            if uni::is_upper(r) {
                let mut prev_size = size;
                offset += size;
                remaining = &remaining[size..];
                while !remaining.is_empty() {
                    (r, size) = next_valid_rune(remaining, r);
                    if !uni::is_upper(r) {
                        break;
                    }
                    prev_size = size;
                    offset += size;
                    remaining = &remaining[size..];
                }
                // "HTTPStatus": the S starts the next word.
                if !remaining.is_empty() && is_alphabet(r) {
                    offset -= prev_size;
                    remaining = &st[offset..];
                }
            } else if is_alphabet(r) {
                offset += size;
                remaining = &remaining[size..];
                run(&mut remaining, &mut offset, &mut r, &|c| {
                    is_alphabet(c) && !uni::is_upper(c)
                });
            }
        }
    } else if is_alphabet(r) {
        wt = Word::Alphabet;
        remaining = &remaining[size..];
        run(&mut remaining, &mut offset, &mut r, &|c| {
            is_alphabet(c) && !uni::is_upper(c)
        });
    } else if uni::is_number(r) {
        wt = Word::Number;
        remaining = &remaining[size..];
        run(&mut remaining, &mut offset, &mut r, &uni::is_number);
    } else {
        wt = Word::Other;
        remaining = &remaining[size..];
        // (nextValidRune never gives width 0 on a non-empty rest.)
        run(&mut remaining, &mut offset, &mut r, &|c| {
            !(is_connector(c) || is_alphabet(c) || uni::is_number(c) || uni::is_punct(c))
        });
    }
    (wt, &st[..offset], remaining)
}

/// xstrings' toLower: upper and connector words rune by rune, the others
/// copied as they are.
fn words_to_lower(out: &mut String, wt: Word, word: &[char], conn: char) {
    if wt != Word::Upper && wt != Word::Connector {
        out.extend(word.iter());
        return;
    }
    for &c in word {
        let r = uni::rune(c);
        if is_connector(r) {
            out.push(conn);
        } else if uni::is_upper(r) {
            out.push(uni::to_lower(r));
        } else {
            out.push(r);
        }
    }
}

/// xstrings' camelCaseToLowerCase (ToSnakeCase, ToKebabCase).
fn camel_to_lower(st: &str, conn: char) -> String {
    if st.is_empty() {
        return String::new();
    }
    let chars: Vec<char> = st.chars().collect();
    let mut out = String::with_capacity(st.len() + 8);
    let (mut wt, mut word, mut remaining) = next_word(&chars);
    while !remaining.is_empty() {
        if wt != Word::Connector {
            words_to_lower(&mut out, wt, word, conn);
        }
        let prev = wt;
        let last = word;
        (wt, word, remaining) = next_word(remaining);
        match prev {
            Word::Number => {
                while wt == Word::Alphabet || wt == Word::Number {
                    words_to_lower(&mut out, wt, word, conn);
                    (wt, word, remaining) = next_word(remaining);
                }
                if wt != Word::Invalid && wt != Word::Punct && wt != Word::Connector {
                    out.push(conn);
                }
            }
            Word::Connector => words_to_lower(&mut out, prev, last, conn),
            Word::Punct => {}
            _ => {
                if wt != Word::Number {
                    if wt != Word::Connector && wt != Word::Punct {
                        out.push(conn);
                    }
                    continue;
                }
                if remaining.is_empty() {
                    continue;
                }
                let last = word;
                (wt, word, remaining) = next_word(remaining);
                // "Bld4Floor": the number belongs to the word before.
                if wt != Word::Alphabet {
                    words_to_lower(&mut out, Word::Number, last, conn);
                    if wt != Word::Connector && wt != Word::Punct {
                        out.push(conn);
                    }
                    continue;
                }
                // "HTTP2xx": lower letters after the number start a word.
                out.push(conn);
                words_to_lower(&mut out, Word::Number, last, conn);
                while wt == Word::Alphabet || wt == Word::Number {
                    words_to_lower(&mut out, wt, word, conn);
                    (wt, word, remaining) = next_word(remaining);
                }
                if wt != Word::Invalid && wt != Word::Connector && wt != Word::Punct {
                    out.push(conn);
                }
            }
        }
    }
    words_to_lower(&mut out, wt, word, conn);
    out
}

// ---- base64 / base32 with Go's error texts ----

/// Go's base64 and base32 CorruptInputError: the offset of the first
/// input byte that does not decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CorruptInput {
    #[error("illegal base64 data at input byte {0}")]
    Base64(usize),
    #[error("illegal base32 data at input byte {0}")]
    Base32(usize),
}

pub fn go_b64_decode(st: &str) -> Result<Vec<u8>, CorruptInput> {
    let alphabet = |c: u8| -> Option<u8> {
        match c {
            b'A'..=b'Z' => Some(c - b'A'),
            b'a'..=b'z' => Some(c - b'a' + 26),
            b'0'..=b'9' => Some(c - b'0' + 52),
            b'+' => Some(62),
            b'/' => Some(63),
            _ => None,
        }
    };
    let src = st.as_bytes();
    let mut out = Vec::new();
    let mut si = 0usize;
    loop {
        let mut dbuf = [0u8; 4];
        let mut dlen = 4;
        let mut j = 0;
        while j < 4 {
            if si == src.len() {
                if j == 0 {
                    return Ok(out);
                }
                return Err(CorruptInput::Base64(si - j));
            }
            let c = src[si];
            si += 1;
            if c == b'\n' || c == b'\r' {
                continue;
            }
            if let Some(v) = alphabet(c) {
                dbuf[j] = v;
                j += 1;
                continue;
            }
            if c != b'=' {
                return Err(CorruptInput::Base64(si - 1));
            }
            // padding
            match j {
                0 | 1 => return Err(CorruptInput::Base64(si - 1)),
                2 => {
                    while si < src.len() && (src[si] == b'\n' || src[si] == b'\r') {
                        si += 1;
                    }
                    if si == src.len() {
                        return Err(CorruptInput::Base64(src.len()));
                    }
                    if src[si] != b'=' {
                        return Err(CorruptInput::Base64(si - 1));
                    }
                    si += 1;
                }
                _ => {}
            }
            while si < src.len() && (src[si] == b'\n' || src[si] == b'\r') {
                si += 1;
            }
            if si < src.len() {
                return Err(CorruptInput::Base64(si));
            }
            dlen = j;
            break;
        }
        let val = (dbuf[0] as u32) << 18
            | (dbuf[1] as u32) << 12
            | (dbuf[2] as u32) << 6
            | dbuf[3] as u32;
        let bytes = [(val >> 16) as u8, (val >> 8) as u8, val as u8];
        match dlen {
            4 => out.extend_from_slice(&bytes),
            3 => out.extend_from_slice(&bytes[..2]),
            2 => out.push(bytes[0]),
            _ => {}
        }
        if dlen < 4 {
            return Ok(out);
        }
    }
}

const B32: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

fn b32_encode(data: &[u8]) -> String {
    let mut out = String::new();
    for chunk in data.chunks(5) {
        let mut buf = [0u8; 5];
        buf[..chunk.len()].copy_from_slice(chunk);
        let v = buf.iter().fold(0u64, |acc, &b| acc << 8 | b as u64);
        let nchars = match chunk.len() {
            1 => 2,
            2 => 4,
            3 => 5,
            4 => 7,
            _ => 8,
        };
        for i in 0..8 {
            if i < nchars {
                out.push(B32[((v >> (35 - i * 5)) & 31) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn b32_decode(st: &str) -> Result<Vec<u8>, CorruptInput> {
    let src: Vec<u8> = st.bytes().filter(|&c| c != b'\n' && c != b'\r').collect();
    if src.len() % 8 != 0 {
        return Err(CorruptInput::Base32((src.len() / 8) * 8));
    }
    let mut out = Vec::new();
    for (ci, chunk) in src.chunks(8).enumerate() {
        let mut v = 0u64;
        let mut n = 0;
        for (i, &c) in chunk.iter().enumerate() {
            if c == b'=' {
                if chunk[i..].iter().any(|&x| x != b'=') || ci != src.len() / 8 - 1 {
                    return Err(CorruptInput::Base32(ci * 8 + i));
                }
                break;
            }
            let Some(p) = B32.iter().position(|&x| x == c) else {
                return Err(CorruptInput::Base32(ci * 8 + i));
            };
            v |= (p as u64) << (35 - i * 5);
            n += 1;
        }
        let nbytes = match n {
            8 => 5,
            7 => 4,
            5 => 3,
            4 => 2,
            2 => 1,
            _ => return Err(CorruptInput::Base32(ci * 8 + n)),
        };
        for i in 0..nbytes {
            out.push((v >> (32 - i * 8)) as u8);
        }
    }
    Ok(out)
}

// ---- regex ----

/// Why a template's regular expression did not compile: Go's own syntax
/// check, or the regex engine's, reworded as Go's.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RegexCompileError {
    #[error("error parsing regexp: {0}")]
    Syntax(#[source] super::goregex::RegexError),
    #[error("error parsing regexp: {go_text}")]
    Engine {
        go_text: String,
        #[source]
        source: regex::Error,
    },
}

fn compile(re: &str) -> Result<regex::Regex, RegexCompileError> {
    // Charts call the same few patterns over and over: compile each once.
    thread_local! {
        static CACHE: std::cell::RefCell<std::collections::HashMap<String, regex::Regex>> = Default::default();
    }
    if let Some(r) = CACHE.with(|c| c.borrow().get(re).cloned()) {
        return Ok(r);
    }
    let translated = super::goregex::translate(re).map_err(RegexCompileError::Syntax)?;
    let r = regex::Regex::new(&translated).map_err(|e| RegexCompileError::Engine {
        go_text: regex_err_text(&e, re),
        source: e,
    })?;
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() > 1024 {
            c.clear();
        }
        c.insert(re.to_string(), r.clone());
    });
    Ok(r)
}

fn regex_err_text(e: &regex::Error, re: &str) -> String {
    let msg = e.to_string();
    if msg.contains("unclosed group") {
        return format!("missing closing ): `{re}`");
    }
    if msg.contains("unopened group") {
        return format!("unexpected ): `{re}`");
    }
    if msg.contains("unclosed character class") {
        return format!("missing closing ]: `{}`", &re[re.find('[').unwrap_or(0)..]);
    }
    if msg.contains("repetition operator missing expression") {
        return format!(
            "missing argument to repetition operator: `{}`",
            re.chars().next().unwrap_or('*')
        );
    }
    msg.lines().last().unwrap_or("").trim().to_string()
}

fn must<T>(
    r: Result<T, RegexCompileError>,
    panicky: bool,
    re: &str,
) -> Result<T, super::FuncError> {
    r.map_err(|e| {
        if panicky {
            super::FuncError::Msg(format!(
                "regexp: Compile({}): {}",
                quote_go(re).replace('"', "`"),
                e
            ))
        } else {
            super::FuncError::from(e)
        }
    })
}

fn find_all<'t>(re: &regex::Regex, st: &'t str, n: i64) -> Vec<regex::Match<'t>> {
    if n == 0 {
        return Vec::new();
    }
    let mut v = Vec::new();
    let mut prev_end: Option<usize> = None;
    for m in re.find_iter(st) {
        if m.start() == m.end() && Some(m.start()) == prev_end {
            continue;
        }
        prev_end = Some(m.end());
        v.push(m);
        if n > 0 && v.len() as i64 >= n {
            break;
        }
    }
    v
}

fn regex_find_all(a: &[Value], panicky: bool) -> FResult {
    let re = must(compile(arg_str(&a[0])), panicky, arg_str(&a[0]))?;
    let st = arg_str(&a[1]);
    let v: Vec<String> = find_all(&re, st, arg_int(&a[2]))
        .iter()
        .map(|m| m.as_str().to_string())
        .collect();
    // FindAllString returns nil when nothing matches (or n is 0).
    if v.is_empty() {
        return Ok(Value::List(Rc::new(Vec::new()), ListKind::NilStr));
    }
    Ok(Value::str_list(v))
}

fn regex_find(a: &[Value], panicky: bool) -> FResult {
    let re = must(compile(arg_str(&a[0])), panicky, arg_str(&a[0]))?;
    Ok(Value::string(
        re.find(arg_str(&a[1]))
            .map(|m| m.as_str().to_string())
            .unwrap_or_default(),
    ))
}

fn regex_replace(a: &[Value], expand: bool, panicky: bool) -> FResult {
    let re = must(compile(arg_str(&a[0])), panicky, arg_str(&a[0]))?;
    let st = arg_str(&a[1]);
    let repl = arg_str(&a[2]);
    let out = if expand {
        re.replace_all(st, repl).into_owned()
    } else {
        re.replace_all(st, regex::NoExpand(repl)).into_owned()
    };
    Ok(Value::string(out))
}

fn regex_split(a: &[Value], panicky: bool) -> FResult {
    let re = must(compile(arg_str(&a[0])), panicky, arg_str(&a[0]))?;
    let st = arg_str(&a[1]);
    let n = arg_int(&a[2]);
    if n == 0 {
        return Ok(Value::List(Rc::new(Vec::new()), ListKind::NilStr));
    }
    if !arg_str(&a[0]).is_empty() && st.is_empty() {
        return Ok(Value::str_list(vec![String::new()]));
    }
    let matches = find_all(&re, st, n);
    let mut out: Vec<String> = Vec::new();
    let (mut beg, mut end) = (0usize, 0usize);
    for m in matches {
        if n > 0 && out.len() as i64 == n - 1 {
            break;
        }
        end = m.start();
        if m.end() != 0 {
            out.push(st[beg..end].to_string());
        }
        beg = m.end();
    }
    if end != st.len() {
        out.push(st[beg..].to_string());
    }
    Ok(Value::str_list(out))
}

fn quote_meta(st: &str) -> String {
    let mut out = String::new();
    for c in st.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

// ---- paths (Go's `path` package) ----

pub fn path_clean(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let rooted = p.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if !parts.is_empty() && *parts.last().unwrap() != ".." {
                    parts.pop();
                } else if !rooted {
                    parts.push("..");
                }
            }
            s => parts.push(s),
        }
    }
    let body = parts.join("/");
    if rooted {
        format!("/{body}")
    } else if body.is_empty() {
        ".".into()
    } else {
        body
    }
}

pub fn path_base(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let t = p.trim_end_matches('/');
    if t.is_empty() {
        return "/".into();
    }
    t.rsplit('/').next().unwrap_or(t).to_string()
}

pub fn path_dir(p: &str) -> String {
    let dir = match p.rfind('/') {
        Some(i) => &p[..i + 1],
        None => "",
    };
    path_clean(dir)
}

pub fn path_ext(p: &str) -> String {
    for (i, c) in p.char_indices().rev() {
        if c == '/' {
            break;
        }
        if c == '.' {
            return p[i..].to_string();
        }
    }
    String::new()
}

// ---- URLs ----

fn url_parse(raw: &str) -> FResult {
    let mut rest = raw;
    let mut m = Map::new();
    let mut fragment = String::new();
    if let Some(i) = rest.find('#') {
        fragment = percent_decode(&rest[i + 1..]);
        rest = &rest[..i];
    }
    let mut scheme = String::new();
    if let Some(i) = rest.find(':') {
        let cand = &rest[..i];
        if !cand.is_empty()
            && cand.chars().next().unwrap().is_ascii_alphabetic()
            && cand
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        {
            scheme = cand.to_lowercase();
            rest = &rest[i + 1..];
        } else if cand.is_empty() {
            return Err(format!(
                "unable to parse url: parse {}: missing protocol scheme",
                quote_go(raw)
            )
            .into());
        }
    }
    let mut query = String::new();
    if let Some(i) = rest.find('?') {
        query = rest[i + 1..].to_string();
        rest = &rest[..i];
    }
    let mut opaque = String::new();
    let mut host = String::new();
    let mut userinfo = String::new();
    let mut path = String::new();
    if !scheme.is_empty() && !rest.starts_with('/') {
        opaque = rest.to_string();
    } else if let Some(r) = rest.strip_prefix("//") {
        let (authority, p) = match r.find('/') {
            Some(i) => (&r[..i], &r[i..]),
            None => (r, ""),
        };
        let authority = match authority.rfind('@') {
            Some(i) => {
                userinfo = authority[..i].to_string();
                &authority[i + 1..]
            }
            None => authority,
        };
        host = authority.to_string();
        path = percent_decode(p);
    } else {
        path = percent_decode(rest);
    }
    let hostname = if host.starts_with('[') {
        host[1..host.find(']').unwrap_or(host.len())].to_string()
    } else {
        host.split(':').next().unwrap_or("").to_string()
    };
    m.insert("scheme".into(), Value::string(scheme));
    m.insert("host".into(), Value::string(host));
    m.insert("hostname".into(), Value::string(hostname));
    m.insert("path".into(), Value::string(path));
    m.insert("query".into(), Value::string(query));
    m.insert("opaque".into(), Value::string(opaque));
    m.insert("fragment".into(), Value::string(fragment));
    m.insert("userinfo".into(), Value::string(userinfo));
    Ok(Value::map(m))
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() + 1 && i + 2 <= b.len() - 1 {
            let hex = |c: u8| (c as char).to_digit(16);
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    go_lossy(&out)
}

fn url_join(d: &Value) -> FResult {
    let get = |k: &str| -> Result<String, super::FuncError> {
        match d {
            Value::Map(m, _) => match m.borrow().get(k) {
                None => Ok(String::new()),
                Some(Value::Str(s)) => Ok(s.to_string()),
                Some(other) => {
                    Err(format!("unable to parse {k}: {}", format::format_v(other)).into())
                }
            },
            _ => Ok(String::new()),
        }
    };
    let scheme = get("scheme")?;
    let host = get("host")?;
    let path = get("path")?;
    let query = get("query")?;
    let opaque = get("opaque")?;
    let fragment = get("fragment")?;
    let userinfo = get("userinfo")?;
    let mut out = String::new();
    if !scheme.is_empty() {
        out.push_str(&scheme);
        out.push(':');
    }
    if !opaque.is_empty() {
        out.push_str(&opaque);
    } else {
        if !scheme.is_empty() || !host.is_empty() || !userinfo.is_empty() {
            if !host.is_empty() || !path.is_empty() || !userinfo.is_empty() {
                out.push_str("//");
            }
            if !userinfo.is_empty() {
                out.push_str(&userinfo);
                out.push('@');
            }
            out.push_str(&host);
        }
        if !path.is_empty() && !path.starts_with('/') && !host.is_empty() {
            out.push('/');
        }
        out.push_str(&path);
    }
    if !query.is_empty() {
        out.push('?');
        out.push_str(&query);
    }
    if !fragment.is_empty() {
        out.push('#');
        out.push_str(&fragment);
    }
    Ok(Value::string(out))
}

/// os.Getenv: the variable's bytes, "" when unset.
fn getenv(name: &str) -> String {
    if name.is_empty() || name.contains(['=', '\0']) {
        return String::new();
    }
    std::env::var_os(name)
        .map(|v| crate::value::gostr::from_vec(v.into_encoded_bytes()))
        .unwrap_or_default()
}

/// os.ExpandEnv: os.Expand with os.Getenv.
fn expand_env(s: &str) -> String {
    expand(s, getenv)
}

/// os.Expand: `$name` and `${name}` replaced by `mapping`'s value (shell
/// special variables of one character, bad syntax eaten, a lone `$` kept).
fn expand(s: &str, mapping: impl Fn(&str) -> String) -> String {
    fn special(c: u8) -> bool {
        matches!(
            c,
            b'*' | b'#' | b'$' | b'@' | b'!' | b'?' | b'-' | b'0'..=b'9'
        )
    }
    fn alnum(c: u8) -> bool {
        c == b'_' || c.is_ascii_alphanumeric()
    }
    /// getShellName: the name after `$` and how many bytes it took.
    fn shell_name(s: &[u8]) -> (&[u8], usize) {
        if s[0] == b'{' {
            if s.len() > 2 && special(s[1]) && s[2] == b'}' {
                return (&s[1..2], 3);
            }
            for i in 1..s.len() {
                if s[i] == b'}' {
                    if i == 1 {
                        return (&[], 2);
                    }
                    return (&s[1..i], i + 1);
                }
            }
            return (&[], 1);
        }
        if special(s[0]) {
            return (&s[..1], 1);
        }
        let n = s.iter().take_while(|&&c| alnum(c)).count();
        (&s[..n], n)
    }
    let b = crate::value::gostr::to_bytes(s);
    let mut out: Vec<u8> = Vec::with_capacity(b.len());
    let (mut i, mut j) = (0, 0);
    while j < b.len() {
        if b[j] == b'$' && j + 1 < b.len() {
            out.extend_from_slice(&b[i..j]);
            let (name, w) = shell_name(&b[j + 1..]);
            if name.is_empty() && w > 0 {
                // Bad syntax: eaten.
            } else if name.is_empty() {
                out.push(b'$');
            } else {
                let name = crate::value::gostr::from_vec(name.to_vec());
                out.extend_from_slice(&crate::value::gostr::to_bytes(&mapping(&name)));
            }
            j += w;
            i = j + 1;
        }
        j += 1;
    }
    out.extend_from_slice(&b[i.min(b.len())..]);
    crate::value::gostr::from_vec(out)
}

#[cfg(test)]
mod expand_tests {
    /// Go's os/env_test.go expandTests.
    #[test]
    fn expands_as_os_expand() {
        let mapping = |name: &str| -> String {
            match name {
                "*" => "all the args",
                "#" => "NARGS",
                "$" => "PID",
                "1" => "ARGUMENT1",
                "HOME" => "/usr/gopher",
                "H" => "(Value of H)",
                "home_1" => "/usr/foo",
                "_" => "underscore",
                _ => "",
            }
            .to_string()
        };
        for (input, want) in [
            ("", ""),
            ("$*", "all the args"),
            ("$$", "PID"),
            ("${*}", "all the args"),
            ("$1", "ARGUMENT1"),
            ("${1}", "ARGUMENT1"),
            ("now is the time", "now is the time"),
            ("$HOME", "/usr/gopher"),
            ("$home_1", "/usr/foo"),
            ("${HOME}", "/usr/gopher"),
            ("${H}OME", "(Value of H)OME"),
            (
                "A$$$#$1$H$home_1*B",
                "APIDNARGSARGUMENT1(Value of H)/usr/foo*B",
            ),
            ("start$+middle$^end$", "start$+middle$^end$"),
            ("mixed$|bag$$$", "mixed$|bagPID$"),
            ("$", "$"),
            ("$}", "$}"),
            ("${", ""),
            ("${}", ""),
        ] {
            assert_eq!(super::expand(input, mapping), want, "{input:?}");
        }
    }
}
