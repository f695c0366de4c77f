//! Functions whose output cannot be compared with Helm byte for byte
//! (randomness, the clock) are checked by their properties; so are engine
//! guarantees such as never panicking and bounded recursion.

use navique_ai_core_operator::gotmpl::render_str;
use navique_ai_core_operator::gotmpl::value::{Map, Value};

fn render(t: &str) -> String {
    render_str("t", t, Value::map(Map::new()))
        .unwrap_or_else(|e| panic!("{t}: {}", e.helm_message()))
}

#[test]
fn random_strings_have_the_requested_length_and_alphabet() {
    for (f, ok) in [
        (
            "randAlphaNum",
            (|c: char| c.is_ascii_alphanumeric()) as fn(char) -> bool,
        ),
        ("randAlpha", |c: char| c.is_ascii_alphabetic()),
        ("randNumeric", |c: char| c.is_ascii_digit()),
        ("randAscii", |c: char| (' '..='~').contains(&c)),
    ] {
        for n in [0, 1, 16, 200] {
            let out = render(&format!("{{{{ {f} {n} }}}}"));
            assert_eq!(out.chars().count(), n, "{f} {n} gave {out:?}");
            assert!(out.chars().all(ok), "{f} gave {out:?}");
        }
    }
    // Two long random strings are not equal.
    assert_ne!(
        render("{{ randAlphaNum 32 }}"),
        render("{{ randAlphaNum 32 }}")
    );
}

#[test]
fn uuidv4_is_a_version_4_variant_1_uuid() {
    let re =
        regex::Regex::new("^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
            .unwrap();
    for _ in 0..50 {
        let u = render("{{ uuidv4 }}");
        assert!(re.is_match(&u), "{u}");
    }
}

#[test]
fn rand_bytes_is_base64_of_n_bytes() {
    use base64::Engine as _;
    for n in [0usize, 1, 5, 33] {
        let out = render(&format!("{{{{ randBytes {n} }}}}"));
        let raw = base64::engine::general_purpose::STANDARD
            .decode(out)
            .unwrap();
        assert_eq!(raw.len(), n);
    }
}

#[test]
fn rand_int_stays_in_range_and_shuffle_permutes() {
    for _ in 0..200 {
        let v: i64 = render("{{ randInt 3 7 }}").parse().unwrap();
        assert!((3..7).contains(&v));
    }
    let s = render("{{ shuffle \"hello world\" }}");
    let mut a: Vec<char> = s.chars().collect();
    let mut b: Vec<char> = "hello world".chars().collect();
    a.sort();
    b.sort();
    assert_eq!(a, b);
}

#[test]
fn now_is_a_time_that_formats_today() {
    assert_eq!(render("{{ typeOf now }}"), "time.Time");
    let year: i32 = render("{{ now | date \"2006\" }}").parse().unwrap();
    assert!(year >= 2024);
    assert!(render("{{ now }}").contains(" m=+"));
    assert_eq!(render("{{ ago now }}"), "0s");
}

#[test]
fn include_recursion_is_an_error_not_a_crash() {
    let t = "{{ define \"r\" }}{{ include \"r\" . }}{{ end }}{{ include \"r\" . }}";
    let err = std::thread::Builder::new()
        .stack_size(256 * 1024 * 1024)
        .spawn(move || render_str("t", t, Value::Nil).unwrap_err().helm_message())
        .unwrap()
        .join()
        .unwrap();
    assert!(
        err.contains("rendering template has a nested reference name: r"),
        "{err}"
    );
}

#[test]
fn odd_inputs_never_panic() {
    let inputs = [
        "{{",
        "}}",
        "{{-",
        "{{ .a.b.c",
        "{{ (((",
        "{{ ))) }}",
        "{{ $ := }}",
        "{{ range }}",
        "{{ end }}{{ end }}",
        "{{ 'x }}",
        "{{ \"\\",
        "{{ `",
        "{{ 0x }}",
        "{{ 1e }}",
        "{{ index }}",
        "{{ printf \"%*d\" }}",
        "{{ printf \"%.*f\" 1 }}",
        "{{ toYaml (list (dict) (list) nil) }}",
        "{{ fromYaml \"{[\" }}",
        "{{ substr 5 1 \"abc\" }}",
        "{{ chunk 0 (list 1) }}",
        "{{ b64dec \"====\" }}",
        "{{ regexFind \"[\" \"x\" }}",
        "{{ tpl \"{{ tpl \\\"{{\\\" . }}\" . }}",
        "{{ define \"x\" }}{{ end }}",
    ];
    for i in inputs {
        let _ = render_str("t", i, Value::Nil);
    }
}
