//! Go strings hold arbitrary bytes; ours are Rust `str`. A byte that starts
//! no valid UTF-8 sequence (where Go's `range` sees `utf8.RuneError` of
//! width 1) is carried inside our strings as one code point of the
//! Supplementary Private Use Area-B, U+10FF00 + byte (U+10FF80..U+10FFFF).
//! Every string operation then sees one rune per such byte, as Go does, and
//! the bytes come back exactly wherever Go hands them on as bytes: template
//! output, `b64enc`, the checksums, `len`, `%q`, `%x`.
//!
//! Valid UTF-8 (nearly every chart file) is borrowed untouched; the markers
//! are found by a byte search for 0xF4, which only code points from
//! U+100000 up use. The one ambiguity: a file that genuinely contains the
//! code points U+10FF80..U+10FFFF (private use and two noncharacters) reads
//! back as the raw bytes they stand for.

use std::borrow::Cow;

/// The marker of raw byte `b` (0x80..=0xFF) is F4 8F BE|BF xx.
const LEAD: u8 = 0xF4;
const SECOND: u8 = 0x8F;

/// Bytes as a Go string: borrowed when they are UTF-8, otherwise each byte
/// that starts no valid sequence becomes its marker.
pub fn from_bytes(b: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(b) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => Cow::Owned(encode(b)),
    }
}

/// Like `from_bytes`, taking ownership.
pub fn from_vec(b: Vec<u8>) -> String {
    match String::from_utf8(b) {
        Ok(s) => s,
        Err(e) => encode(e.as_bytes()),
    }
}

fn encode(b: &[u8]) -> String {
    let mut out = String::with_capacity(b.len() + 8);
    let mut rest = b;
    loop {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                out.push_str(s);
                return out;
            }
            Err(e) => {
                let (valid, after) = rest.split_at(e.valid_up_to());
                // SAFETY: from_utf8 validated this prefix.
                out.push_str(unsafe { std::str::from_utf8_unchecked(valid) });
                out.push(marker(after[0]));
                rest = &after[1..];
            }
        }
    }
}

fn marker(b: u8) -> char {
    char::from_u32(0x10FF00 + b as u32).expect("plane 16 code point")
}

/// The raw byte a char stands for, if it is a marker.
pub fn raw_byte(c: char) -> Option<u8> {
    let c = c as u32;
    (0x10FF80..=0x10FFFF)
        .contains(&c)
        .then(|| (c - 0x10FF00) as u8)
}

/// Whether the string carries any raw byte.
#[inline]
pub fn has_raw(s: &str) -> bool {
    let b = s.as_bytes();
    let mut from = 0;
    while let Some(i) = memchr::memchr(LEAD, &b[from..]) {
        let i = from + i;
        if b.get(i + 1) == Some(&SECOND) && matches!(b.get(i + 2), Some(0xBE | 0xBF)) {
            return true;
        }
        from = i + 1;
    }
    false
}

/// The Go string's bytes.
pub fn to_bytes(s: &str) -> Cow<'_, [u8]> {
    if !has_raw(s) {
        return Cow::Borrowed(s.as_bytes());
    }
    let mut out = Vec::with_capacity(s.len());
    let mut buf = [0u8; 4];
    for c in s.chars() {
        match raw_byte(c) {
            Some(b) => out.push(b),
            None => out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes()),
        }
    }
    Cow::Owned(out)
}

/// Go's `len` of the string: its length in bytes.
pub fn byte_len(s: &str) -> usize {
    if !has_raw(s) {
        return s.len();
    }
    s.len() - 3 * s.chars().filter(|c| raw_byte(*c).is_some()).count()
}

/// The string as valid text the way Go's encoders see it (encoding/json,
/// and so sigs.k8s.io/yaml): each raw byte becomes U+FFFD.
pub fn lossy(s: &str) -> Cow<'_, str> {
    if !has_raw(s) {
        return Cow::Borrowed(s);
    }
    Cow::Owned(
        s.chars()
            .map(|c| if raw_byte(c).is_some() { '\u{FFFD}' } else { c })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_bytes_round_trip_one_rune_each() {
        let raw = b"BZh\xff\xe2\x82A\xc3\xa9";
        let s = from_bytes(raw);
        assert_eq!(s.chars().count(), 8);
        assert!(has_raw(&s));
        assert_eq!(&*to_bytes(&s), raw);
        assert_eq!(byte_len(&s), raw.len());
        assert_eq!(lossy(&s), "BZh\u{FFFD}\u{FFFD}\u{FFFD}A\u{e9}");
        let ok = from_bytes("plain ü".as_bytes());
        assert!(matches!(ok, Cow::Borrowed(_)));
        assert!(!has_raw("\u{10FF7F} \u{100000}"));
        for b in 0x80..=0xFFu8 {
            let raw = [b'a', b, b'z'];
            let s = from_bytes(&raw);
            assert_eq!(&*to_bytes(&s), &raw);
        }
    }
}
