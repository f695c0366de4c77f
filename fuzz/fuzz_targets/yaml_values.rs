//! values.yaml parsing and toYaml of whatever parsed.
#![no_main]
use libfuzzer_sys::fuzz_target;
use navique_ai_core_operator::gotmpl::value::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(m) = navique_ai_core_operator::goyaml::parse_values(text) {
        let _ = navique_ai_core_operator::goyaml::to_yaml(&Value::map(m));
    }
});
