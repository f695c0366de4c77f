//! Go's string quoting (`strconv.Quote`, `%q`), with Go's idea of a
//! printable character.

/// `strconv.Quote`.
pub fn quote_go(s: &str) -> String {
    quote_with(s, '"', false)
}

pub fn quote_bytes_go(b: &[u8]) -> String {
    let mut out = String::from("\"");
    let mut i = 0;
    while i < b.len() {
        match std::str::from_utf8(&b[i..]).map(|s| s.chars().next()) {
            Ok(Some(c)) => {
                escape_rune(&mut out, c, '"', false);
                i += c.len_utf8();
            }
            _ => {
                // Decode one valid char if possible else escape the byte.
                let end = (i + 4).min(b.len());
                let mut done = false;
                for j in (i + 1..=end).rev() {
                    if let Ok(s) = std::str::from_utf8(&b[i..j]) {
                        if let Some(c) = s.chars().next() {
                            if c.len_utf8() == j - i {
                                escape_rune(&mut out, c, '"', false);
                                i = j;
                                done = true;
                                break;
                            }
                        }
                    }
                }
                if !done {
                    out.push_str(&format!("\\x{:02x}", b[i]));
                    i += 1;
                }
            }
        }
    }
    out.push('"');
    out
}

/// strconv.CanBackquote.
pub fn can_backquote(s: &str) -> bool {
    s.chars().all(|c| {
        c != '\u{FEFF}'
            && crate::value::gostr::raw_byte(c).is_none()
            && !((c < ' ' && c != '\t') || c == '`' || c == '\u{7F}')
    })
}

pub fn quote_with(s: &str, q: char, ascii_only: bool) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push(q);
    for c in s.chars() {
        escape_rune(&mut out, c, q, ascii_only);
    }
    out.push(q);
    out
}

fn escape_rune(out: &mut String, c: char, q: char, ascii_only: bool) {
    if let Some(b) = crate::value::gostr::raw_byte(c) {
        out.push_str(&format!("\\x{:02x}", b));
        return;
    }
    if c == q || c == '\\' {
        out.push('\\');
        out.push(c);
        return;
    }
    if ascii_only {
        if (c as u32) < 0x80 && is_go_print(c) {
            out.push(c);
            return;
        }
    } else if is_go_print(c) {
        out.push(c);
        return;
    }
    match c {
        '\x07' => out.push_str("\\a"),
        '\x08' => out.push_str("\\b"),
        '\x0c' => out.push_str("\\f"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\x0b' => out.push_str("\\v"),
        c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
        c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
        c => out.push_str(&format!("\\U{:08x}", c as u32)),
    }
}

/// Go's unicode.IsPrint / strconv.IsPrint (letters, marks, numbers,
/// punctuation, symbols and ASCII space), from Go's own tables.
pub fn is_go_print(c: char) -> bool {
    super::gounicode::is_print(c)
}
