//! The Navique fast paths (comment lines, indentation, plain-scalar runs
//! taken straight from a `str::Chars`) must produce exactly the events,
//! positions and errors of the character-by-character scanner.

use yaml_rust2::parser::Parser;
use yaml_rust2::scanner::LineSkip;

/// A reader without the fast paths.
struct Slow<'a>(std::str::Chars<'a>);

impl Iterator for Slow<'_> {
    type Item = char;
    fn next(&mut self) -> Option<char> {
        self.0.next()
    }
}

impl LineSkip for Slow<'_> {}

fn trace<T: LineSkip>(mut p: Parser<T>) -> Vec<String> {
    let mut out = Vec::new();
    for _ in 0..10_000 {
        match p.next_token() {
            Ok((ev, m)) => {
                let end = ev == yaml_rust2::Event::StreamEnd;
                out.push(format!("{ev:?} @{}:{}:{}", m.index(), m.line(), m.col()));
                if end {
                    break;
                }
            }
            Err(e) => {
                out.push(format!("error {e}"));
                break;
            }
        }
    }
    out
}

fn same(text: &str) {
    let fast = trace(Parser::new_from_str(text));
    let slow = trace(Parser::new(Slow(text.chars())));
    assert_eq!(fast, slow, "input: {text:?}");
}

#[test]
fn fast_paths_match_the_scanner_on_samples() {
    for text in [
        "a: 1\n",
        "# comment\n  # indented comment\nkey: value # trailing\n",
        "list:\n  - one\n  - two words here\n  - 'quoted'\n",
        "url: http://example.com:8080/path\nratio: a:b\n",
        "flow: {a: [1, 2, x:y], b: c}\n",
        "multi: this is\n  a folded plain\n  scalar\n",
        "ünïcödé: välüe with ümlauts # cömment\n",
        "tab:\tvalue\n",
        "bad: [1, 2\n",
        "k: v\n---\nother: doc\n",
        "deep:\n    very:\n        nested: yes\n",
        "a: b: c\n",
        "   \n\n  # only comments\n",
        "crlf: a\r\nb: c\r\n",
        "key:    spaced value   \n",
        "- a\n- b:c\n- d: e\n",
        "x: 'a' # c\n#end",
        "nul: a\0b\n",
    ] {
        same(text);
    }
}

#[test]
fn fast_paths_match_the_scanner_on_generated_input() {
    // A deterministic generator over the characters the fast paths treat
    // specially, so boundaries land everywhere.
    let alphabet = [
        " ", "  ", "\t", "\n", "\r\n", "#", ":", ": ", "- ", "a", "bc", "ü", "[", "]", "{", "}",
        ",", "'", "\"", "key: ", "|\n", "> ", "---\n", "\0",
    ];
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..3000 {
        let mut text = String::new();
        let len = 1 + (state % 40) as usize;
        for _ in 0..len {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            text.push_str(alphabet[(state % alphabet.len() as u64) as usize]);
        }
        same(&text);
    }
}
