//! Helm's --set syntax in all four flavours.
#![no_main]
use libfuzzer_sys::fuzz_target;
use navique_ai_core_operator::chart::strvals::{parse_into, Mode};
use navique_ai_core_operator::gotmpl::value::Map;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    for mode in [Mode::Typed, Mode::String, Mode::Json, Mode::Literal] {
        let mut m = Map::new();
        let _ = parse_into(text, &mut m, mode);
    }
});
