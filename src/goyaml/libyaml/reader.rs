//! readerc.go: decoding the input into the character buffer, 512 raw bytes
//! at a time, refusing bytes that are not UTF-8 and control characters
//! only when their chunk is decoded.

use super::{Encoding, ErrorType, Parser};

impl<'a> Parser<'a> {
    fn set_reader_error(&mut self, problem: &str, offset: usize, value: i64) -> bool {
        self.error = ErrorType::Reader;
        self.problem = problem.to_string();
        self.problem_offset = offset;
        self.problem_value = value;
        false
    }

    fn determine_encoding(&mut self) -> bool {
        while !self.eof && self.raw_buffer_len - self.raw_buffer_pos < 3 {
            if !self.update_raw_buffer() {
                return false;
            }
        }
        let buf = &self.raw_buffer;
        let pos = self.raw_buffer_pos;
        let avail = self.raw_buffer_len - pos;
        if avail >= 2 && buf[pos] == 0xFF && buf[pos + 1] == 0xFE {
            self.encoding = Encoding::Utf16Le;
            self.raw_buffer_pos += 2;
            self.offset += 2;
        } else if avail >= 2 && buf[pos] == 0xFE && buf[pos + 1] == 0xFF {
            self.encoding = Encoding::Utf16Be;
            self.raw_buffer_pos += 2;
            self.offset += 2;
        } else if avail >= 3 && buf[pos] == 0xEF && buf[pos + 1] == 0xBB && buf[pos + 2] == 0xBF {
            self.encoding = Encoding::Utf8;
            self.raw_buffer_pos += 3;
            self.offset += 3;
        } else {
            self.encoding = Encoding::Utf8;
        }
        true
    }

    fn update_raw_buffer(&mut self) -> bool {
        let cap = self.raw_buffer.len();
        if self.raw_buffer_pos == 0 && self.raw_buffer_len == cap {
            return true;
        }
        if self.eof {
            return true;
        }
        if self.raw_buffer_pos > 0 && self.raw_buffer_pos < self.raw_buffer_len {
            self.raw_buffer
                .copy_within(self.raw_buffer_pos..self.raw_buffer_len, 0);
        }
        self.raw_buffer_len -= self.raw_buffer_pos;
        self.raw_buffer_pos = 0;
        // yaml_string_read_handler
        if self.input_pos == self.input.len() {
            self.eof = true;
            return true;
        }
        let n = (cap - self.raw_buffer_len).min(self.input.len() - self.input_pos);
        self.raw_buffer[self.raw_buffer_len..self.raw_buffer_len + n]
            .copy_from_slice(&self.input[self.input_pos..self.input_pos + n]);
        self.input_pos += n;
        self.raw_buffer_len += n;
        true
    }

    /// yaml_parser_update_buffer: make sure `length` characters are in the
    /// buffer (NULs past the end of the input).
    #[inline(never)]
    pub(super) fn update_buffer(&mut self, length: usize) -> bool {
        if self.unread >= length {
            return true;
        }
        if self.encoding == Encoding::Any && !self.determine_encoding() {
            return false;
        }
        let mut buffer_len = self.buffer_len;
        if self.buffer_pos > 0 && self.buffer_pos < buffer_len {
            self.buffer.copy_within(self.buffer_pos..buffer_len, 0);
            buffer_len -= self.buffer_pos;
            self.buffer_pos = 0;
        } else if self.buffer_pos == buffer_len {
            buffer_len = 0;
            self.buffer_pos = 0;
        }
        let mut first = true;
        while self.unread < length {
            if (!first || self.raw_buffer_pos == self.raw_buffer_len) && !self.update_raw_buffer() {
                self.buffer_len = buffer_len;
                return false;
            }
            first = false;
            'inner: while self.raw_buffer_pos != self.raw_buffer_len {
                let raw_unread = self.raw_buffer_len - self.raw_buffer_pos;
                let value: u32;
                let width: usize;
                match self.encoding {
                    Encoding::Utf8 | Encoding::Any => {
                        // A run of printable ASCII (and tab, LF, CR), in one
                        // copy: each byte is one character.
                        let run = self.raw_buffer[self.raw_buffer_pos..self.raw_buffer_len]
                            .iter()
                            .take_while(|&&b| {
                                (0x20..=0x7E).contains(&b) || b == b'\n' || b == b'\t' || b == b'\r'
                            })
                            .count();
                        if run > 0 {
                            self.buffer[buffer_len..buffer_len + run].copy_from_slice(
                                &self.raw_buffer[self.raw_buffer_pos..self.raw_buffer_pos + run],
                            );
                            buffer_len += run;
                            self.raw_buffer_pos += run;
                            self.offset += run;
                            self.unread += run;
                            continue 'inner;
                        }
                        let octet = self.raw_buffer[self.raw_buffer_pos];
                        if octet < 0x80 {
                            // The common case, in one step.
                            if !(octet == 0x09
                                || octet == 0x0A
                                || octet == 0x0D
                                || (0x20..=0x7E).contains(&octet))
                            {
                                self.buffer_len = buffer_len;
                                return self.set_reader_error(
                                    "control characters are not allowed",
                                    self.offset,
                                    octet as i64,
                                );
                            }
                            self.raw_buffer_pos += 1;
                            self.offset += 1;
                            self.buffer[buffer_len] = octet;
                            buffer_len += 1;
                            self.unread += 1;
                            continue 'inner;
                        }
                        width = if octet & 0xE0 == 0xC0 {
                            2
                        } else if octet & 0xF0 == 0xE0 {
                            3
                        } else if octet & 0xF8 == 0xF0 {
                            4
                        } else {
                            self.buffer_len = buffer_len;
                            return self.set_reader_error(
                                "invalid leading UTF-8 octet",
                                self.offset,
                                octet as i64,
                            );
                        };
                        if width > raw_unread {
                            if self.eof {
                                self.buffer_len = buffer_len;
                                return self.set_reader_error(
                                    "incomplete UTF-8 octet sequence",
                                    self.offset,
                                    -1,
                                );
                            }
                            break 'inner;
                        }
                        let mut v: u32 = match width {
                            2 => (octet & 0x1F) as u32,
                            3 => (octet & 0x0F) as u32,
                            _ => (octet & 0x07) as u32,
                        };
                        for k in 1..width {
                            let o = self.raw_buffer[self.raw_buffer_pos + k];
                            if o & 0xC0 != 0x80 {
                                self.buffer_len = buffer_len;
                                return self.set_reader_error(
                                    "invalid trailing UTF-8 octet",
                                    self.offset + k,
                                    o as i64,
                                );
                            }
                            v = (v << 6) + (o & 0x3F) as u32;
                        }
                        if !((width == 2 && v >= 0x80)
                            || (width == 3 && v >= 0x800)
                            || (width == 4 && v >= 0x10000))
                        {
                            self.buffer_len = buffer_len;
                            return self.set_reader_error(
                                "invalid length of a UTF-8 sequence",
                                self.offset,
                                -1,
                            );
                        }
                        if (0xD800..=0xDFFF).contains(&v) || v > 0x10FFFF {
                            self.buffer_len = buffer_len;
                            return self.set_reader_error(
                                "invalid Unicode character",
                                self.offset,
                                v as i64,
                            );
                        }
                        value = v;
                    }
                    Encoding::Utf16Le | Encoding::Utf16Be => {
                        let (low, high) = if self.encoding == Encoding::Utf16Le {
                            (0, 1)
                        } else {
                            (1, 0)
                        };
                        if raw_unread < 2 {
                            if self.eof {
                                self.buffer_len = buffer_len;
                                return self.set_reader_error(
                                    "incomplete UTF-16 character",
                                    self.offset,
                                    -1,
                                );
                            }
                            break 'inner;
                        }
                        let p = self.raw_buffer_pos;
                        let mut v = self.raw_buffer[p + low] as u32
                            + ((self.raw_buffer[p + high] as u32) << 8);
                        if v & 0xFC00 == 0xDC00 {
                            self.buffer_len = buffer_len;
                            return self.set_reader_error(
                                "unexpected low surrogate area",
                                self.offset,
                                v as i64,
                            );
                        }
                        if v & 0xFC00 == 0xD800 {
                            width = 4;
                            if raw_unread < 4 {
                                if self.eof {
                                    self.buffer_len = buffer_len;
                                    return self.set_reader_error(
                                        "incomplete UTF-16 surrogate pair",
                                        self.offset,
                                        -1,
                                    );
                                }
                                break 'inner;
                            }
                            let v2 = self.raw_buffer[p + low + 2] as u32
                                + ((self.raw_buffer[p + high + 2] as u32) << 8);
                            if v2 & 0xFC00 != 0xDC00 {
                                self.buffer_len = buffer_len;
                                return self.set_reader_error(
                                    "expected low surrogate area",
                                    self.offset + 2,
                                    v2 as i64,
                                );
                            }
                            v = 0x10000 + ((v & 0x3FF) << 10) + (v2 & 0x3FF);
                        } else {
                            width = 2;
                        }
                        value = v;
                    }
                }
                let ok = value == 0x09
                    || value == 0x0A
                    || value == 0x0D
                    || (0x20..=0x7E).contains(&value)
                    || value == 0x85
                    || (0xA0..=0xD7FF).contains(&value)
                    || (0xE000..=0xFFFD).contains(&value)
                    || (0x10000..=0x10FFFF).contains(&value);
                if !ok {
                    self.buffer_len = buffer_len;
                    return self.set_reader_error(
                        "control characters are not allowed",
                        self.offset,
                        value as i64,
                    );
                }
                self.raw_buffer_pos += width;
                self.offset += width;
                let b = &mut self.buffer;
                if value <= 0x7F {
                    b[buffer_len] = value as u8;
                    buffer_len += 1;
                } else if value <= 0x7FF {
                    b[buffer_len] = (0xC0 + (value >> 6)) as u8;
                    b[buffer_len + 1] = (0x80 + (value & 0x3F)) as u8;
                    buffer_len += 2;
                } else if value <= 0xFFFF {
                    b[buffer_len] = (0xE0 + (value >> 12)) as u8;
                    b[buffer_len + 1] = (0x80 + ((value >> 6) & 0x3F)) as u8;
                    b[buffer_len + 2] = (0x80 + (value & 0x3F)) as u8;
                    buffer_len += 3;
                } else {
                    b[buffer_len] = (0xF0 + (value >> 18)) as u8;
                    b[buffer_len + 1] = (0x80 + ((value >> 12) & 0x3F)) as u8;
                    b[buffer_len + 2] = (0x80 + ((value >> 6) & 0x3F)) as u8;
                    b[buffer_len + 3] = (0x80 + (value & 0x3F)) as u8;
                    buffer_len += 4;
                }
                self.unread += 1;
            }
            if self.eof {
                self.buffer[buffer_len] = 0;
                buffer_len += 1;
                self.unread += 1;
                break;
            }
        }
        while buffer_len < length {
            self.buffer[buffer_len] = 0;
            buffer_len += 1;
        }
        self.buffer_len = buffer_len;
        // Go's slice ends here: bytes past it read as NUL, never as stale
        // characters.
        let end = (buffer_len + 8).min(self.buffer.len());
        self.buffer[buffer_len..end].fill(0);
        true
    }
}
