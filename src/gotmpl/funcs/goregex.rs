//! Go's RE2 syntax (regexp/syntax) translated to the `regex` crate's, where
//! they differ: Go's `\d \w \s \b` are ASCII, Rust's are Unicode; Go reads
//! `[`, `&&`, `--` and `~~` inside a class literally, Rust as nested classes
//! and set operations; Go takes a `-` after a class escape (`[\w-.]`)
//! literally and a `{` that starts no valid repeat as a literal; Go has
//! `\Q...\E`. Errors are Go's, in Go's words.

const PERL_CLASSES: &[(char, &str)] =
    &[('d', "0-9"), ('w', "0-9A-Za-z_"), ('s', "\\t\\n\\x0C\\r ")];

fn perl_class(c: char) -> Option<(&'static str, bool)> {
    PERL_CLASSES
        .iter()
        .find(|(k, _)| *k == c.to_ascii_lowercase())
        .map(|(_, set)| (*set, c.is_ascii_uppercase()))
}

/// Escapes Go accepts after a backslash (besides punctuation).
fn valid_escape(c: char) -> bool {
    matches!(
        c,
        'a' | 'f' | 't' | 'n' | 'r' | 'v' | 'x' | 'p' | 'P' | 'A' | 'z' | 'b' | 'B' | 'Q' | 'E'
    ) || c.is_ascii_digit()
        || perl_class(c).is_some()
        || (c.is_ascii_punctuation())
}

/// The length in chars of a valid Go repeat `{n}`, `{n,}`, `{n,m}` at `s`,
/// and its counts; None when `{` is a literal there.
fn repeat_at(s: &[char]) -> Option<(usize, u32, Option<u32>)> {
    let mut i = 1;
    let num = |i: &mut usize| -> Option<u32> {
        let start = *i;
        while *i < s.len() && s[*i].is_ascii_digit() {
            *i += 1;
        }
        if *i == start {
            return None;
        }
        s[start..*i]
            .iter()
            .collect::<String>()
            .parse()
            .ok()
            .or(Some(u32::MAX))
    };
    let lo = num(&mut i)?;
    let hi = if s.get(i) == Some(&',') {
        i += 1;
        if s.get(i) == Some(&'}') {
            None
        } else {
            Some(num(&mut i)?)
        }
    } else {
        Some(lo)
    };
    (s.get(i) == Some(&'}')).then_some((i + 1, lo, hi))
}

/// Why Go's regexp/syntax refuses an expression, in its words; each
/// variant holds the offending text.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RegexError {
    #[error("trailing backslash at end of expression: ``")]
    TrailingBackslash,
    #[error("invalid escape sequence: `{0}`")]
    InvalidEscape(String),
    #[error("invalid repeat count: `{0}`")]
    InvalidRepeatCount(String),
    /// A class cut short inside an escape.
    #[error("missing closing ]")]
    UnclosedClassEscape,
    #[error("missing closing ]: `{0}`")]
    UnclosedClass(String),
    #[error("invalid character class range: `{0}`")]
    InvalidClassRange(String),
}

pub fn translate(re: &str) -> Result<String, RegexError> {
    let s: Vec<char> = re.chars().collect();
    let mut out = String::with_capacity(re.len() + 8);
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        match c {
            '\\' => {
                let Some(&n) = s.get(i + 1) else {
                    return Err(RegexError::TrailingBackslash);
                };
                if !valid_escape(n) {
                    return Err(RegexError::InvalidEscape(format!("\\{n}")));
                }
                if n == 'Q' {
                    let rest: String = s[i + 2..].iter().collect();
                    let (lit, after) = match rest.find("\\E") {
                        Some(p) => (rest[..p].to_string(), i + 2 + rest[..p].chars().count() + 2),
                        None => (rest.clone(), s.len()),
                    };
                    out.push_str(&regex::escape(&lit));
                    i = after;
                    continue;
                }
                if n == 'E' {
                    // A stray \E ends nothing: Go ignores it.
                    i += 2;
                    continue;
                }
                if let Some((set, negated)) = perl_class(n) {
                    out.push_str(if negated { "[^" } else { "[" });
                    out.push_str(set);
                    out.push(']');
                } else if n == 'b' || n == 'B' {
                    out.push_str(&format!("(?-u:\\{n})"));
                } else {
                    out.push('\\');
                    out.push(n);
                }
                i += 2;
            }
            '[' => {
                i = class(&s, i, &mut out)?;
            }
            '{' => match repeat_at(&s[i..]) {
                Some((len, lo, hi)) => {
                    if lo > 1000 || hi.is_some_and(|h| h > 1000 || h < lo) {
                        let text: String = s[i..i + len].iter().collect();
                        return Err(RegexError::InvalidRepeatCount(text));
                    }
                    out.extend(&s[i..i + len]);
                    i += len;
                }
                None => {
                    out.push_str("\\{");
                    i += 1;
                }
            },
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    Ok(out)
}

/// One class item: a single char (for ranges) or a set already written.
enum Item {
    Char(char, String),
    Set(String),
}

fn class_char(c: char) -> String {
    if matches!(c, '[' | ']' | '\\' | '-' | '^' | '&' | '~') {
        format!("\\{c}")
    } else {
        c.to_string()
    }
}

/// Reads one item of a class at `s[i]`; returns it and the next index.
fn class_item(s: &[char], i: usize) -> Result<(Item, usize), RegexError> {
    let c = s[i];
    if c == '[' && s.get(i + 1) == Some(&':') {
        let rest: String = s[i..].iter().collect();
        if let Some(end) = rest.find(":]") {
            let name = &rest[..end + 2];
            return Ok((Item::Set(name.to_string()), i + name.chars().count()));
        }
    }
    if c != '\\' {
        return Ok((Item::Char(c, class_char(c)), i + 1));
    }
    let Some(&n) = s.get(i + 1) else {
        return Err(RegexError::UnclosedClassEscape);
    };
    if let Some((set, negated)) = perl_class(n) {
        return Ok((
            Item::Set(if negated {
                format!("[^{set}]")
            } else {
                set.to_string()
            }),
            i + 2,
        ));
    }
    if matches!(n, 'p' | 'P') {
        let mut j = i + 2;
        if s.get(j) == Some(&'{') {
            while j < s.len() && s[j] != '}' {
                j += 1;
            }
            j += 1;
        } else {
            j += 1;
        }
        return Ok((Item::Set(s[i..j.min(s.len())].iter().collect()), j));
    }
    let ch = match n {
        'a' => '\x07',
        'f' => '\x0C',
        't' => '\t',
        'n' => '\n',
        'r' => '\r',
        'v' => '\x0B',
        c if c.is_ascii_punctuation() => c,
        _ => {
            // Octal, \x and the like: let the regex crate read them.
            let mut j = i + 2;
            if n == 'x' && s.get(j) == Some(&'{') {
                while j < s.len() && s[j] != '}' {
                    j += 1;
                }
                j += 1;
            } else if n == 'x' {
                j += 2;
            } else if !valid_escape(n) || n.is_ascii_alphabetic() {
                return Err(RegexError::InvalidEscape(format!("\\{n}")));
            }
            let text: String = s[i..j.min(s.len())].iter().collect();
            return Ok((Item::Set(text), j));
        }
    };
    Ok((Item::Char(ch, class_char(ch)), i + 2))
}

/// Translates the class starting at `s[start] == '['`; returns the index after it.
fn class(s: &[char], start: usize, out: &mut String) -> Result<usize, RegexError> {
    let mut i = start + 1;
    let mut body = String::new();
    if s.get(i) == Some(&'^') {
        body.push('^');
        i += 1;
    }
    // A `]` first is a literal, as in Go.
    let mut first = true;
    loop {
        let Some(&c) = s.get(i) else {
            let text: String = s[start..].iter().collect();
            return Err(RegexError::UnclosedClass(text));
        };
        if c == ']' && !first {
            i += 1;
            break;
        }
        first = false;
        let (item, next) = class_item(s, i)?;
        i = next;
        match item {
            Item::Set(set) => body.push_str(&set),
            Item::Char(lo, lo_text) => {
                // A range needs a single char after the `-`, and no `]` there.
                if s.get(i) == Some(&'-') && s.get(i + 1).is_some_and(|&n| n != ']') {
                    let (hi, after) = class_item(s, i + 1)?;
                    match hi {
                        Item::Char(hi, hi_text) => {
                            if hi < lo {
                                let text: String = s[i - 1..after].iter().collect();
                                return Err(RegexError::InvalidClassRange(text));
                            }
                            body.push_str(&lo_text);
                            body.push('-');
                            body.push_str(&hi_text);
                            i = after;
                        }
                        Item::Set(_) => {
                            // Go reads a range's end as one char: a class escape there is invalid.
                            let text: String = s[i + 1..after].iter().collect();
                            return Err(RegexError::InvalidEscape(text));
                        }
                    }
                } else {
                    body.push_str(&lo_text);
                }
            }
        }
    }
    out.push('[');
    out.push_str(&body);
    out.push(']');
    Ok(i)
}

#[cfg(test)]
mod tests {
    use super::translate;

    fn matches(re: &str, s: &str) -> bool {
        regex::Regex::new(&translate(re).unwrap())
            .unwrap()
            .is_match(s)
    }

    #[test]
    fn go_classes_are_ascii_and_class_punctuation_is_literal() {
        assert!(matches(r"^[\w-\.]+$", "a-b.c"));
        assert!(!matches(r"^\w+$", "é"));
        assert!(!matches(r"^\d$", "٣"));
        assert!(matches(r"^[a&&b]$", "&"));
        assert!(matches(r"^[[]$", "["));
        assert!(matches(r"^[~~a]$", "~"));
        assert!(matches(r"^[[:alpha:]]$", "a"));
        assert!(matches(r"^[^\W]$", "a"));
        assert!(matches(r"^a{,2}$", "a{,2}"));
        assert!(matches(r"x{2", "x{2"));
        assert!(matches(r"\Qa.b\E", "a.b") && !matches(r"^\Qa.b\E$", "axb"));
        assert!(matches(r"^[a-]$", "-"));
        assert!(matches(r"^[\d-z]$", "-"));
    }

    #[test]
    fn go_errors_in_go_words() {
        assert_eq!(
            translate(r"\Z").unwrap_err().to_string(),
            r"invalid escape sequence: `\Z`"
        );
        assert_eq!(
            translate("a{1001}").unwrap_err().to_string(),
            "invalid repeat count: `{1001}`"
        );
        assert_eq!(
            translate("[a--b]").unwrap_err().to_string(),
            "invalid character class range: `a--`"
        );
        assert_eq!(
            translate(r"[a-\d]").unwrap_err().to_string(),
            r"invalid escape sequence: `\d`"
        );
    }
}
