//! parserc.go: tokens to events.

use super::{ErrorType, Event, EventType, Mark, Parser, ScalarStyle, State, Token, TokenType};

impl<'a> Parser<'a> {
    /// peek_token: false on a scanner error.
    #[inline]
    fn peek_token(&mut self) -> bool {
        self.token_available || self.fetch_more_tokens()
    }

    #[inline]
    fn tok(&self) -> &Token {
        &self.tokens[0]
    }

    fn skip_token(&mut self) -> Token {
        self.token_available = false;
        self.tokens_parsed += 1;
        let t = self.tokens.pop_front().expect("a token");
        self.stream_end_produced = t.typ == TokenType::StreamEnd;
        t
    }

    /// yaml_parser_parse: the next event, or false with the error set.
    pub fn parse(&mut self, event: &mut Event) -> bool {
        *event = Event::default();
        if self.stream_end_produced || self.error != ErrorType::None || self.state == State::End {
            return true;
        }
        self.state_machine(event)
    }

    fn set_parser_error(&mut self, problem: &str, problem_mark: Mark) -> bool {
        self.error = ErrorType::Parser;
        self.problem = problem.to_string();
        self.problem_mark = problem_mark;
        false
    }

    fn set_parser_error_context(
        &mut self,
        context: &'static str,
        context_mark: Mark,
        problem: &str,
        problem_mark: Mark,
    ) -> bool {
        self.error = ErrorType::Parser;
        self.context = context;
        self.context_mark = context_mark;
        self.problem = problem.to_string();
        self.problem_mark = problem_mark;
        false
    }

    fn pop_state(&mut self) {
        self.state = self.states.pop().expect("a parser state");
    }

    fn state_machine(&mut self, event: &mut Event) -> bool {
        match self.state {
            State::StreamStart => self.parse_stream_start(event),
            State::ImplicitDocumentStart => self.parse_document_start(event, true),
            State::DocumentStart => self.parse_document_start(event, false),
            State::DocumentContent => self.parse_document_content(event),
            State::DocumentEnd => self.parse_document_end(event),
            State::BlockNode => self.parse_node(event, true, false),
            State::BlockNodeOrIndentlessSequence => self.parse_node(event, true, true),
            State::FlowNode => self.parse_node(event, false, false),
            State::BlockSequenceFirstEntry => self.parse_block_sequence_entry(event, true),
            State::BlockSequenceEntry => self.parse_block_sequence_entry(event, false),
            State::IndentlessSequenceEntry => self.parse_indentless_sequence_entry(event),
            State::BlockMappingFirstKey => self.parse_block_mapping_key(event, true),
            State::BlockMappingKey => self.parse_block_mapping_key(event, false),
            State::BlockMappingValue => self.parse_block_mapping_value(event),
            State::FlowSequenceFirstEntry => self.parse_flow_sequence_entry(event, true),
            State::FlowSequenceEntry => self.parse_flow_sequence_entry(event, false),
            State::FlowSequenceEntryMappingKey => self.parse_flow_sequence_entry_mapping_key(event),
            State::FlowSequenceEntryMappingValue => {
                self.parse_flow_sequence_entry_mapping_value(event)
            }
            State::FlowSequenceEntryMappingEnd => self.parse_flow_sequence_entry_mapping_end(event),
            State::FlowMappingFirstKey => self.parse_flow_mapping_key(event, true),
            State::FlowMappingKey => self.parse_flow_mapping_key(event, false),
            State::FlowMappingValue => self.parse_flow_mapping_value(event, false),
            State::FlowMappingEmptyValue => self.parse_flow_mapping_value(event, true),
            State::End => panic!("invalid parser state"),
        }
    }

    fn parse_stream_start(&mut self, event: &mut Event) -> bool {
        if !self.peek_token() {
            return false;
        }
        let (typ, sm, em) = (self.tok().typ, self.tok().start_mark, self.tok().end_mark);
        if typ != TokenType::StreamStart {
            return self.set_parser_error("did not find expected <stream-start>", sm);
        }
        self.state = State::ImplicitDocumentStart;
        *event = Event::new(EventType::StreamStart, sm, em);
        self.skip_token();
        true
    }

    fn parse_document_start(&mut self, event: &mut Event, implicit: bool) -> bool {
        if !self.peek_token() {
            return false;
        }
        if !implicit {
            while self.tok().typ == TokenType::DocumentEnd {
                self.skip_token();
                if !self.peek_token() {
                    return false;
                }
            }
        }
        let typ = self.tok().typ;
        if implicit
            && typ != TokenType::VersionDirective
            && typ != TokenType::TagDirective
            && typ != TokenType::DocumentStart
            && typ != TokenType::StreamEnd
        {
            if !self.process_directives() {
                return false;
            }
            self.states.push(State::DocumentEnd);
            self.state = State::BlockNode;
            let (sm, em) = (self.tok().start_mark, self.tok().end_mark);
            *event = Event::new(EventType::DocumentStart, sm, em);
        } else if typ != TokenType::StreamEnd {
            let start_mark = self.tok().start_mark;
            if !self.process_directives() {
                return false;
            }
            if !self.peek_token() {
                return false;
            }
            if self.tok().typ != TokenType::DocumentStart {
                let m = self.tok().start_mark;
                self.set_parser_error("did not find expected <document start>", m);
                return false;
            }
            self.states.push(State::DocumentEnd);
            self.state = State::DocumentContent;
            let end_mark = self.tok().end_mark;
            *event = Event::new(EventType::DocumentStart, start_mark, end_mark);
            self.skip_token();
        } else {
            self.state = State::End;
            let (sm, em) = (self.tok().start_mark, self.tok().end_mark);
            *event = Event::new(EventType::StreamEnd, sm, em);
            self.skip_token();
        }
        true
    }

    fn parse_document_content(&mut self, event: &mut Event) -> bool {
        if !self.peek_token() {
            return false;
        }
        let (typ, m) = (self.tok().typ, self.tok().start_mark);
        if matches!(
            typ,
            TokenType::VersionDirective
                | TokenType::TagDirective
                | TokenType::DocumentStart
                | TokenType::DocumentEnd
                | TokenType::StreamEnd
        ) {
            self.pop_state();
            return self.process_empty_scalar(event, m);
        }
        self.parse_node(event, true, false)
    }

    fn parse_document_end(&mut self, event: &mut Event) -> bool {
        if !self.peek_token() {
            return false;
        }
        let start_mark = self.tok().start_mark;
        let mut end_mark = start_mark;
        let mut implicit = true;
        if self.tok().typ == TokenType::DocumentEnd {
            end_mark = self.tok().end_mark;
            self.skip_token();
            implicit = false;
        }
        self.tag_directives.clear();
        self.state = State::DocumentStart;
        *event = Event::new(EventType::DocumentEnd, start_mark, end_mark);
        event.implicit = implicit;
        true
    }

    fn parse_node(&mut self, event: &mut Event, block: bool, indentless_sequence: bool) -> bool {
        if !self.peek_token() {
            return false;
        }
        if self.tok().typ == TokenType::Alias {
            self.pop_state();
            let t = self.skip_token();
            *event = Event::new(EventType::Alias, t.start_mark, t.end_mark);
            event.anchor = Some(t.value);
            return true;
        }
        let mut start_mark = self.tok().start_mark;
        let mut end_mark = self.tok().start_mark;
        let mut tag_token = false;
        let mut tag_handle = Vec::new();
        let mut tag_suffix = Vec::new();
        let mut anchor: Option<Vec<u8>> = None;
        let mut tag_mark = Mark::default();
        if self.tok().typ == TokenType::Anchor {
            let t = self.skip_token();
            anchor = Some(t.value);
            start_mark = t.start_mark;
            end_mark = t.end_mark;
            if !self.peek_token() {
                return false;
            }
            if self.tok().typ == TokenType::Tag {
                let t = self.skip_token();
                tag_token = true;
                tag_handle = t.value;
                tag_suffix = t.suffix;
                tag_mark = t.start_mark;
                end_mark = t.end_mark;
                if !self.peek_token() {
                    return false;
                }
            }
        } else if self.tok().typ == TokenType::Tag {
            let t = self.skip_token();
            tag_token = true;
            tag_handle = t.value;
            tag_suffix = t.suffix;
            start_mark = t.start_mark;
            tag_mark = t.start_mark;
            end_mark = t.end_mark;
            if !self.peek_token() {
                return false;
            }
            if self.tok().typ == TokenType::Anchor {
                let t = self.skip_token();
                anchor = Some(t.value);
                end_mark = t.end_mark;
                if !self.peek_token() {
                    return false;
                }
            }
        }
        let mut tag: Vec<u8> = Vec::new();
        if tag_token {
            if tag_handle.is_empty() {
                tag = tag_suffix;
            } else {
                for (h, p) in &self.tag_directives {
                    if *h == tag_handle {
                        tag = p.clone();
                        tag.extend_from_slice(&tag_suffix);
                        break;
                    }
                }
                if tag.is_empty() {
                    self.set_parser_error_context(
                        "while parsing a node",
                        start_mark,
                        "found undefined tag handle",
                        tag_mark,
                    );
                    return false;
                }
            }
        }
        let implicit = tag.is_empty();
        let typ = self.tok().typ;
        if indentless_sequence && typ == TokenType::BlockEntry {
            end_mark = self.tok().end_mark;
            self.state = State::IndentlessSequenceEntry;
            *event = Event::new(EventType::SequenceStart, start_mark, end_mark);
            event.anchor = anchor;
            event.tag = tag;
            event.implicit = implicit;
            return true;
        }
        if typ == TokenType::Scalar {
            let (mut plain_implicit, mut quoted_implicit) = (false, false);
            let style = self.tok().style;
            if (tag.is_empty() && style == ScalarStyle::Plain) || (tag.len() == 1 && tag[0] == b'!')
            {
                plain_implicit = true;
            } else if tag.is_empty() {
                quoted_implicit = true;
            }
            self.pop_state();
            let t = self.skip_token();
            *event = Event::new(EventType::Scalar, start_mark, t.end_mark);
            event.anchor = anchor;
            event.tag = tag;
            event.value = t.value;
            event.implicit = plain_implicit;
            event.quoted_implicit = quoted_implicit;
            event.style = style;
            return true;
        }
        let (ev, st) = match typ {
            TokenType::FlowSequenceStart => {
                (EventType::SequenceStart, State::FlowSequenceFirstEntry)
            }
            TokenType::FlowMappingStart => (EventType::MappingStart, State::FlowMappingFirstKey),
            TokenType::BlockSequenceStart if block => {
                (EventType::SequenceStart, State::BlockSequenceFirstEntry)
            }
            TokenType::BlockMappingStart if block => {
                (EventType::MappingStart, State::BlockMappingFirstKey)
            }
            _ => (EventType::None, State::End),
        };
        if ev != EventType::None {
            end_mark = self.tok().end_mark;
            self.state = st;
            *event = Event::new(ev, start_mark, end_mark);
            event.anchor = anchor;
            event.tag = tag;
            event.implicit = implicit;
            return true;
        }
        if anchor.is_some() || !tag.is_empty() {
            self.pop_state();
            *event = Event::new(EventType::Scalar, start_mark, end_mark);
            event.anchor = anchor;
            event.tag = tag;
            event.implicit = implicit;
            event.style = ScalarStyle::Plain;
            return true;
        }
        let context = if block {
            "while parsing a block node"
        } else {
            "while parsing a flow node"
        };
        let m = self.tok().start_mark;
        self.set_parser_error_context(context, start_mark, "did not find expected node content", m)
    }

    fn parse_block_sequence_entry(&mut self, event: &mut Event, first: bool) -> bool {
        if first {
            let m = self.tok().start_mark;
            self.marks.push(m);
            self.skip_token();
        }
        if !self.peek_token() {
            return false;
        }
        if self.tok().typ == TokenType::BlockEntry {
            let mark = self.tok().end_mark;
            self.skip_token();
            if !self.peek_token() {
                return false;
            }
            let typ = self.tok().typ;
            if typ != TokenType::BlockEntry && typ != TokenType::BlockEnd {
                self.states.push(State::BlockSequenceEntry);
                return self.parse_node(event, true, false);
            }
            self.state = State::BlockSequenceEntry;
            return self.process_empty_scalar(event, mark);
        }
        if self.tok().typ == TokenType::BlockEnd {
            self.pop_state();
            self.marks.pop();
            let t = self.skip_token();
            *event = Event::new(EventType::SequenceEnd, t.start_mark, t.end_mark);
            return true;
        }
        let context_mark = self.marks.pop().unwrap_or_default();
        let m = self.tok().start_mark;
        self.set_parser_error_context(
            "while parsing a block collection",
            context_mark,
            "did not find expected '-' indicator",
            m,
        )
    }

    fn parse_indentless_sequence_entry(&mut self, event: &mut Event) -> bool {
        if !self.peek_token() {
            return false;
        }
        if self.tok().typ == TokenType::BlockEntry {
            let mark = self.tok().end_mark;
            self.skip_token();
            if !self.peek_token() {
                return false;
            }
            let typ = self.tok().typ;
            if typ != TokenType::BlockEntry
                && typ != TokenType::Key
                && typ != TokenType::Value
                && typ != TokenType::BlockEnd
            {
                self.states.push(State::IndentlessSequenceEntry);
                return self.parse_node(event, true, false);
            }
            self.state = State::IndentlessSequenceEntry;
            return self.process_empty_scalar(event, mark);
        }
        self.pop_state();
        let m = self.tok().start_mark;
        *event = Event::new(EventType::SequenceEnd, m, m);
        true
    }

    fn parse_block_mapping_key(&mut self, event: &mut Event, first: bool) -> bool {
        if first {
            let m = self.tok().start_mark;
            self.marks.push(m);
            self.skip_token();
        }
        if !self.peek_token() {
            return false;
        }
        if self.tok().typ == TokenType::Key {
            let mark = self.tok().end_mark;
            self.skip_token();
            if !self.peek_token() {
                return false;
            }
            let typ = self.tok().typ;
            if typ != TokenType::Key && typ != TokenType::Value && typ != TokenType::BlockEnd {
                self.states.push(State::BlockMappingValue);
                return self.parse_node(event, true, true);
            }
            self.state = State::BlockMappingValue;
            return self.process_empty_scalar(event, mark);
        } else if self.tok().typ == TokenType::BlockEnd {
            self.pop_state();
            self.marks.pop();
            let t = self.skip_token();
            *event = Event::new(EventType::MappingEnd, t.start_mark, t.end_mark);
            return true;
        }
        let context_mark = self.marks.pop().unwrap_or_default();
        let m = self.tok().start_mark;
        self.set_parser_error_context(
            "while parsing a block mapping",
            context_mark,
            "did not find expected key",
            m,
        )
    }

    fn parse_block_mapping_value(&mut self, event: &mut Event) -> bool {
        if !self.peek_token() {
            return false;
        }
        if self.tok().typ == TokenType::Value {
            let mark = self.tok().end_mark;
            self.skip_token();
            if !self.peek_token() {
                return false;
            }
            let typ = self.tok().typ;
            if typ != TokenType::Key && typ != TokenType::Value && typ != TokenType::BlockEnd {
                self.states.push(State::BlockMappingKey);
                return self.parse_node(event, true, true);
            }
            self.state = State::BlockMappingKey;
            return self.process_empty_scalar(event, mark);
        }
        self.state = State::BlockMappingKey;
        let m = self.tok().start_mark;
        self.process_empty_scalar(event, m)
    }

    fn parse_flow_sequence_entry(&mut self, event: &mut Event, first: bool) -> bool {
        if first {
            let m = self.tok().start_mark;
            self.marks.push(m);
            self.skip_token();
        }
        if !self.peek_token() {
            return false;
        }
        if self.tok().typ != TokenType::FlowSequenceEnd {
            if !first {
                if self.tok().typ == TokenType::FlowEntry {
                    self.skip_token();
                    if !self.peek_token() {
                        return false;
                    }
                } else {
                    let context_mark = self.marks.pop().unwrap_or_default();
                    let m = self.tok().start_mark;
                    return self.set_parser_error_context(
                        "while parsing a flow sequence",
                        context_mark,
                        "did not find expected ',' or ']'",
                        m,
                    );
                }
            }
            if self.tok().typ == TokenType::Key {
                self.state = State::FlowSequenceEntryMappingKey;
                let t = self.skip_token();
                *event = Event::new(EventType::MappingStart, t.start_mark, t.end_mark);
                event.implicit = true;
                return true;
            } else if self.tok().typ != TokenType::FlowSequenceEnd {
                self.states.push(State::FlowSequenceEntry);
                return self.parse_node(event, false, false);
            }
        }
        self.pop_state();
        self.marks.pop();
        let t = self.skip_token();
        *event = Event::new(EventType::SequenceEnd, t.start_mark, t.end_mark);
        true
    }

    fn parse_flow_sequence_entry_mapping_key(&mut self, event: &mut Event) -> bool {
        if !self.peek_token() {
            return false;
        }
        let typ = self.tok().typ;
        if typ != TokenType::Value
            && typ != TokenType::FlowEntry
            && typ != TokenType::FlowSequenceEnd
        {
            self.states.push(State::FlowSequenceEntryMappingValue);
            return self.parse_node(event, false, false);
        }
        let mark = self.tok().end_mark;
        self.skip_token();
        self.state = State::FlowSequenceEntryMappingValue;
        self.process_empty_scalar(event, mark)
    }

    fn parse_flow_sequence_entry_mapping_value(&mut self, event: &mut Event) -> bool {
        if !self.peek_token() {
            return false;
        }
        if self.tok().typ == TokenType::Value {
            self.skip_token();
            if !self.peek_token() {
                return false;
            }
            let typ = self.tok().typ;
            if typ != TokenType::FlowEntry && typ != TokenType::FlowSequenceEnd {
                self.states.push(State::FlowSequenceEntryMappingEnd);
                return self.parse_node(event, false, false);
            }
        }
        self.state = State::FlowSequenceEntryMappingEnd;
        let m = self.tok().start_mark;
        self.process_empty_scalar(event, m)
    }

    fn parse_flow_sequence_entry_mapping_end(&mut self, event: &mut Event) -> bool {
        if !self.peek_token() {
            return false;
        }
        self.state = State::FlowSequenceEntry;
        let m = self.tok().start_mark;
        *event = Event::new(EventType::MappingEnd, m, m);
        true
    }

    fn parse_flow_mapping_key(&mut self, event: &mut Event, first: bool) -> bool {
        if first {
            let m = self.tok().start_mark;
            self.marks.push(m);
            self.skip_token();
        }
        if !self.peek_token() {
            return false;
        }
        if self.tok().typ != TokenType::FlowMappingEnd {
            if !first {
                if self.tok().typ == TokenType::FlowEntry {
                    self.skip_token();
                    if !self.peek_token() {
                        return false;
                    }
                } else {
                    let context_mark = self.marks.pop().unwrap_or_default();
                    let m = self.tok().start_mark;
                    return self.set_parser_error_context(
                        "while parsing a flow mapping",
                        context_mark,
                        "did not find expected ',' or '}'",
                        m,
                    );
                }
            }
            if self.tok().typ == TokenType::Key {
                self.skip_token();
                if !self.peek_token() {
                    return false;
                }
                let typ = self.tok().typ;
                if typ != TokenType::Value
                    && typ != TokenType::FlowEntry
                    && typ != TokenType::FlowMappingEnd
                {
                    self.states.push(State::FlowMappingValue);
                    return self.parse_node(event, false, false);
                }
                self.state = State::FlowMappingValue;
                let m = self.tok().start_mark;
                return self.process_empty_scalar(event, m);
            } else if self.tok().typ != TokenType::FlowMappingEnd {
                self.states.push(State::FlowMappingEmptyValue);
                return self.parse_node(event, false, false);
            }
        }
        self.pop_state();
        self.marks.pop();
        let t = self.skip_token();
        *event = Event::new(EventType::MappingEnd, t.start_mark, t.end_mark);
        true
    }

    fn parse_flow_mapping_value(&mut self, event: &mut Event, empty: bool) -> bool {
        if !self.peek_token() {
            return false;
        }
        if empty {
            self.state = State::FlowMappingKey;
            let m = self.tok().start_mark;
            return self.process_empty_scalar(event, m);
        }
        if self.tok().typ == TokenType::Value {
            self.skip_token();
            if !self.peek_token() {
                return false;
            }
            let typ = self.tok().typ;
            if typ != TokenType::FlowEntry && typ != TokenType::FlowMappingEnd {
                self.states.push(State::FlowMappingKey);
                return self.parse_node(event, false, false);
            }
        }
        self.state = State::FlowMappingKey;
        let m = self.tok().start_mark;
        self.process_empty_scalar(event, m)
    }

    fn process_empty_scalar(&mut self, event: &mut Event, mark: Mark) -> bool {
        *event = Event::new(EventType::Scalar, mark, mark);
        event.implicit = true;
        event.style = ScalarStyle::Plain;
        true
    }

    /// yaml_parser_process_directives (the version and tag directives
    /// themselves are not handed on: go-yaml's decoder ignores them).
    fn process_directives(&mut self) -> bool {
        let mut have_version = false;
        if !self.peek_token() {
            return false;
        }
        loop {
            let typ = self.tok().typ;
            if typ == TokenType::VersionDirective {
                let (m, major, minor) = {
                    let t = self.tok();
                    (t.start_mark, t.major, t.minor)
                };
                if have_version {
                    self.set_parser_error("found duplicate %YAML directive", m);
                    return false;
                }
                if major != 1 || minor != 1 {
                    self.set_parser_error("found incompatible YAML document", m);
                    return false;
                }
                have_version = true;
            } else if typ == TokenType::TagDirective {
                let (m, h, p) = {
                    let t = self.tok();
                    (t.start_mark, t.value.clone(), t.prefix.clone())
                };
                if !self.append_tag_directive(h, p, false, m) {
                    return false;
                }
            } else {
                break;
            }
            self.skip_token();
            if !self.peek_token() {
                return false;
            }
        }
        let m = self.tok().start_mark;
        for (h, p) in [
            (&b"!"[..], &b"!"[..]),
            (&b"!!"[..], &b"tag:yaml.org,2002:"[..]),
        ] {
            if !self.append_tag_directive(h.to_vec(), p.to_vec(), true, m) {
                return false;
            }
        }
        true
    }

    fn append_tag_directive(
        &mut self,
        handle: Vec<u8>,
        prefix: Vec<u8>,
        allow_duplicates: bool,
        mark: Mark,
    ) -> bool {
        if self.tag_directives.iter().any(|(h, _)| *h == handle) {
            if allow_duplicates {
                return true;
            }
            return self.set_parser_error("found duplicate %TAG directive", mark);
        }
        self.tag_directives.push((handle, prefix));
        true
    }
}
