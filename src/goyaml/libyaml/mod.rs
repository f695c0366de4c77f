//! go-yaml v2's reader, scanner and parser (readerc.go, scannerc.go,
//! parserc.go: a Go port of libyaml), ported function by function so that
//! every text is accepted or refused as Helm refuses it, with the same
//! problem, the same mark, and the reader's 512-byte buffer deciding when a
//! bad byte is noticed.

mod parser;
mod reader;
mod scanner;

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

pub const INPUT_RAW_BUFFER_SIZE: usize = 512;
pub const INPUT_BUFFER_SIZE: usize = INPUT_RAW_BUFFER_SIZE * 3;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Mark {
    /// Characters read so far.
    pub index: usize,
    /// 0-based.
    pub line: usize,
    /// 0-based, in characters.
    pub column: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ScalarStyle {
    #[default]
    Any,
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
    Folded,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TokenType {
    #[default]
    None,
    StreamStart,
    StreamEnd,
    VersionDirective,
    TagDirective,
    DocumentStart,
    DocumentEnd,
    BlockSequenceStart,
    BlockMappingStart,
    BlockEnd,
    FlowSequenceStart,
    FlowSequenceEnd,
    FlowMappingStart,
    FlowMappingEnd,
    BlockEntry,
    FlowEntry,
    Key,
    Value,
    Alias,
    Anchor,
    Tag,
    Scalar,
}

#[derive(Debug, Clone, Default)]
pub struct Token {
    pub typ: TokenType,
    pub start_mark: Mark,
    pub end_mark: Mark,
    /// Alias, anchor, scalar value; a tag's handle; a %TAG's handle.
    pub value: Vec<u8>,
    /// A tag's suffix.
    pub suffix: Vec<u8>,
    /// A %TAG's prefix.
    pub prefix: Vec<u8>,
    pub style: ScalarStyle,
    pub major: i8,
    pub minor: i8,
}

impl Token {
    fn new(typ: TokenType, start_mark: Mark, end_mark: Mark) -> Token {
        Token {
            typ,
            start_mark,
            end_mark,
            ..Default::default()
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EventType {
    #[default]
    None,
    StreamStart,
    StreamEnd,
    DocumentStart,
    DocumentEnd,
    Alias,
    Scalar,
    SequenceStart,
    SequenceEnd,
    MappingStart,
    MappingEnd,
}

impl EventType {
    /// go-yaml's yaml_event_type_t.String().
    pub fn go_name(self) -> &'static str {
        match self {
            EventType::None => "none",
            EventType::StreamStart => "stream start",
            EventType::StreamEnd => "stream end",
            EventType::DocumentStart => "document start",
            EventType::DocumentEnd => "document end",
            EventType::Alias => "alias",
            EventType::Scalar => "scalar",
            EventType::SequenceStart => "sequence start",
            EventType::SequenceEnd => "sequence end",
            EventType::MappingStart => "mapping start",
            EventType::MappingEnd => "mapping end",
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct Event {
    pub typ: EventType,
    pub start_mark: Mark,
    pub end_mark: Mark,
    /// `None` when the node has no anchor.
    pub anchor: Option<Vec<u8>>,
    /// The full tag (directives applied); empty when there is none.
    pub tag: Vec<u8>,
    pub value: Vec<u8>,
    /// For scalars, libyaml's plain_implicit.
    pub implicit: bool,
    pub quoted_implicit: bool,
    pub style: ScalarStyle,
}

impl Event {
    fn new(typ: EventType, start_mark: Mark, end_mark: Mark) -> Event {
        Event {
            typ,
            start_mark,
            end_mark,
            ..Default::default()
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ErrorType {
    #[default]
    None,
    Reader,
    Scanner,
    Parser,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Encoding {
    Any,
    Utf8,
    Utf16Le,
    Utf16Be,
}

/// parserc.go's states (two of which its functions enter by calling
/// parse_node directly, as here).
#[allow(dead_code)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    StreamStart,
    ImplicitDocumentStart,
    DocumentStart,
    DocumentContent,
    DocumentEnd,
    BlockNode,
    BlockNodeOrIndentlessSequence,
    FlowNode,
    BlockSequenceFirstEntry,
    BlockSequenceEntry,
    IndentlessSequenceEntry,
    BlockMappingFirstKey,
    BlockMappingKey,
    BlockMappingValue,
    FlowSequenceFirstEntry,
    FlowSequenceEntry,
    FlowSequenceEntryMappingKey,
    FlowSequenceEntryMappingValue,
    FlowSequenceEntryMappingEnd,
    FlowMappingFirstKey,
    FlowMappingKey,
    FlowMappingValue,
    FlowMappingEmptyValue,
    End,
}

#[derive(Debug, Clone, Copy, Default)]
struct SimpleKey {
    possible: bool,
    required: bool,
    token_number: usize,
    mark: Mark,
}

/// Token numbers are small distinct integers: no need to hash them well.
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 << 8) | *b as u64;
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

type TokenMap = HashMap<usize, usize, BuildHasherDefault<IdHasher>>;

/// yaml_parser_t: the reader's buffers, the scanner's queue and the
/// parser's stack in one.
pub struct Parser<'a> {
    pub error: ErrorType,
    pub problem: String,
    pub problem_offset: usize,
    pub problem_value: i64,
    pub problem_mark: Mark,
    pub context: &'static str,
    pub context_mark: Mark,

    input: &'a [u8],
    input_pos: usize,
    eof: bool,

    /// The decoded characters (UTF-8); `buffer_len` is Go's len(buffer).
    buffer: Box<[u8]>,
    buffer_pos: usize,
    buffer_len: usize,
    unread: usize,

    raw_buffer: Box<[u8]>,
    raw_buffer_pos: usize,
    raw_buffer_len: usize,

    encoding: Encoding,
    offset: usize,
    mark: Mark,

    stream_start_produced: bool,
    stream_end_produced: bool,
    flow_level: usize,

    tokens: std::collections::VecDeque<Token>,
    tokens_parsed: usize,
    token_available: bool,

    indent: isize,
    indents: Vec<isize>,

    simple_key_allowed: bool,
    simple_keys: Vec<SimpleKey>,
    simple_keys_by_tok: TokenMap,

    state: State,
    states: Vec<State>,
    marks: Vec<Mark>,
    tag_directives: Vec<(Vec<u8>, Vec<u8>)>,
}

impl<'a> Parser<'a> {
    /// yaml_parser_initialize + yaml_parser_set_input_string.
    pub fn new(input: &'a [u8]) -> Parser<'a> {
        Parser {
            error: ErrorType::None,
            problem: String::new(),
            problem_offset: 0,
            problem_value: 0,
            problem_mark: Mark::default(),
            context: "",
            context_mark: Mark::default(),
            input,
            input_pos: 0,
            eof: false,
            // A little more than Go's capacity, zeroed: the scanner peeks a
            // few bytes past the last character only where Go would.
            buffer: vec![0u8; INPUT_BUFFER_SIZE + 16].into_boxed_slice(),
            buffer_pos: 0,
            buffer_len: 0,
            unread: 0,
            raw_buffer: vec![0u8; INPUT_RAW_BUFFER_SIZE].into_boxed_slice(),
            raw_buffer_pos: 0,
            raw_buffer_len: 0,
            encoding: Encoding::Any,
            offset: 0,
            mark: Mark::default(),
            stream_start_produced: false,
            stream_end_produced: false,
            flow_level: 0,
            tokens: std::collections::VecDeque::with_capacity(16),
            tokens_parsed: 0,
            token_available: false,
            indent: 0,
            indents: Vec::new(),
            simple_key_allowed: false,
            simple_keys: Vec::new(),
            simple_keys_by_tok: TokenMap::default(),
            state: State::StreamStart,
            states: Vec::new(),
            marks: Vec::new(),
            tag_directives: Vec::new(),
        }
    }
}
