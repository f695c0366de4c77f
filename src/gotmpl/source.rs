//! A template's text held shared: usually the very bytes of the chart file
//! it came from (a slice of the decompressed archive), checked once as UTF-8.

use bytes::Bytes;

#[derive(Clone, Default)]
pub struct Source(Bytes);

impl Source {
    /// The bytes as text without a copy, or the bytes back when they are not UTF-8.
    pub fn from_utf8(bytes: Bytes) -> Result<Source, Bytes> {
        match std::str::from_utf8(&bytes) {
            Ok(_) => Ok(Source(bytes)),
            Err(_) => Err(bytes),
        }
    }
}

impl std::ops::Deref for Source {
    type Target = str;
    fn deref(&self) -> &str {
        // SAFETY: every constructor checked the bytes as UTF-8 or took them from a str.
        unsafe { std::str::from_utf8_unchecked(&self.0) }
    }
}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, f)
    }
}

impl From<String> for Source {
    fn from(s: String) -> Self {
        Source(Bytes::from(s))
    }
}

impl From<&str> for Source {
    fn from(s: &str) -> Self {
        Source(Bytes::copy_from_slice(s.as_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_bytes_become_text_without_a_copy_and_other_bytes_come_back() {
        let file = Bytes::from_static("kind: {{ .Values.kind }} ü\n".as_bytes());
        let text = Source::from_utf8(file.slice(6..)).expect("UTF-8");
        assert_eq!(&*text, "{{ .Values.kind }} ü\n");
        assert_eq!(text.as_ptr(), file[6..].as_ptr());
        let bad = Bytes::from_static(b"a\xffb");
        assert_eq!(Source::from_utf8(bad.clone()).unwrap_err(), bad);
        assert_eq!(&*Source::from(String::from("x")), "x");
    }
}
