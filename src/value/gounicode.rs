//! What Go's `unicode` package answers, from its own tables (Unicode
//! 15.0.0 in Go 1.26, which Helm v4.2.3 is built with): the general
//! categories and the simple, one-rune case mappings that Sprig's string
//! functions (through xstrings and goutils) and strings.ToUpper / ToLower /
//! Title use. Rust's `char` methods answer other questions (the Uppercase
//! and Alphabetic properties, full case mappings that may give several
//! characters) and a newer Unicode.
//!
//! A byte that is not UTF-8 (carried as a raw-byte marker, see
//! `gostr`) decodes in Go as `utf8.RuneError` (U+FFFD): `rune` gives that.

#[path = "gounicode_tables.rs"]
mod tables;

use crate::value::gostr;

fn in_table(t: &[(u32, u32, u32)], c: char) -> bool {
    let c = c as u32;
    // The last range starting at or before c.
    let i = t.partition_point(|r| r.0 <= c);
    if i == 0 {
        return false;
    }
    let (lo, hi, stride) = t[i - 1];
    c <= hi && (c - lo) % stride == 0
}

/// The rune Go's decoder sees: U+FFFD for a raw byte.
#[inline]
pub fn rune(c: char) -> char {
    if gostr::raw_byte(c).is_some() {
        '\u{FFFD}'
    } else {
        c
    }
}

/// unicode.IsUpper (category Lu).
pub fn is_upper(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_uppercase();
    }
    in_table(tables::LU, c)
}

/// unicode.IsLower (category Ll).
pub fn is_lower(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_lowercase();
    }
    in_table(tables::LL, c)
}

/// unicode.IsTitle (category Lt).
pub fn is_title(c: char) -> bool {
    !c.is_ascii() && in_table(tables::LT, c)
}

/// unicode.IsLetter (category L).
pub fn is_letter(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphabetic();
    }
    in_table(tables::L, c)
}

/// unicode.IsNumber (category N).
pub fn is_number(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_digit();
    }
    in_table(tables::N, c)
}

/// unicode.IsDigit (category Nd).
pub fn is_digit(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_digit();
    }
    in_table(tables::ND, c)
}

/// unicode.IsPunct (category P).
pub fn is_punct(c: char) -> bool {
    in_table(tables::P, c)
}

/// unicode.IsPrint (and strconv.IsPrint): letters, marks, numbers,
/// punctuation, symbols and the ASCII space.
pub fn is_print(c: char) -> bool {
    if c.is_ascii() {
        return (' '..='~').contains(&c);
    }
    in_table(tables::PRINT, c)
}

/// unicode.IsSpace: the Latin-1 spaces, then the White_Space property.
pub fn is_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n'
            | '\u{0B}'
            | '\u{0C}'
            | '\r'
            | ' '
            | '\u{85}'
            | '\u{A0}'
            | '\u{1680}'
            | '\u{2000}'
            ..='\u{200A}' | '\u{2028}' | '\u{2029}' | '\u{202F}' | '\u{205F}' | '\u{3000}'
    )
}

fn to(case: usize, c: char) -> char {
    let r = c as u32;
    let t = tables::CASE;
    let i = t.partition_point(|e| e.0 <= r);
    if i == 0 {
        return c;
    }
    let (lo, hi, d) = t[i - 1];
    if r > hi {
        return c;
    }
    let m = if d[case] == tables::UL {
        // Upper at even offsets, its lower next: Go's UpperLower.
        lo + (((r - lo) & !1) | (case as u32 & 1))
    } else {
        (r as i64 + d[case] as i64) as u32
    };
    char::from_u32(m).unwrap_or(c)
}

/// unicode.ToUpper.
pub fn to_upper(c: char) -> char {
    if c.is_ascii() {
        return c.to_ascii_uppercase();
    }
    to(0, c)
}

/// unicode.ToLower.
pub fn to_lower(c: char) -> char {
    if c.is_ascii() {
        return c.to_ascii_lowercase();
    }
    to(1, c)
}

/// unicode.ToTitle.
pub fn to_title(c: char) -> char {
    if c.is_ascii() {
        return c.to_ascii_uppercase();
    }
    to(2, c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn categories_and_cases_as_go() {
        assert!(is_upper('Ā') && !is_upper('ā') && is_lower('ā'));
        // Uppercase property but not Lu; Lowercase but not Ll.
        assert!(!is_upper('Ⅰ') && !is_upper('Ⓐ') && !is_lower('ª') && !is_lower('ʰ'));
        assert!(is_title('ǅ') && !is_upper('ǅ') && !is_lower('ǅ'));
        assert!(is_letter('ʰ') && !is_letter('\u{0345}') && is_number('½') && !is_digit('½'));
        assert!(is_punct('!') && is_punct('«') && !is_punct('+') && !is_punct('$'));
        assert!(is_space('\u{85}') && !is_space('\u{1C}') && !is_space('\u{180E}'));
        assert!(is_print('é') && is_print('\u{300}') && is_print('€') && !is_print('\u{A0}'));
        assert!(
            !is_print('\u{200B}')
                && !is_print('\u{378}')
                && !is_print('\u{E000}')
                && !is_print('\u{E0001}')
        );
        assert!(
            !is_print('\u{8E2}')
                && !is_print('\u{7F}')
                && is_print('\u{FFFD}')
                && !is_print('\u{1C89}')
        );
        assert_eq!(
            (to_upper('ā'), to_lower('Ā'), to_upper('Ā')),
            ('Ā', 'ā', 'Ā')
        );
        assert_eq!(
            (to_upper('ǆ'), to_title('ǆ'), to_lower('ǅ')),
            ('Ǆ', 'ǅ', 'ǆ')
        );
        // Simple mappings only: no ß -> SS, ǰ stays, ᾀ -> ᾈ, İ -> i.
        assert_eq!(
            (to_upper('ß'), to_upper('ǰ'), to_upper('ᾀ'), to_lower('İ')),
            ('ß', 'ǰ', 'ᾈ', 'i')
        );
        assert_eq!(
            (to_upper('ᾈ'), to_lower('ᾈ'), to_upper('µ'), to_upper('ÿ')),
            ('ᾈ', 'ᾀ', 'Μ', 'Ÿ')
        );
        // Unicode 16's Cyrillic TJE is not in Go 1.26's tables.
        assert_eq!(to_lower('\u{1C89}'), '\u{1C89}');
        assert_eq!(
            rune(gostr::from_bytes(b"\xff").chars().next().unwrap()),
            '\u{FFFD}'
        );
    }
}
