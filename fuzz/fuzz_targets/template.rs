//! Parse and execute arbitrary template text against a small value tree:
//! the engine must return Ok or Err, never panic or overflow.
#![no_main]
use libfuzzer_sys::fuzz_target;
use navique_ai_core_operator::gotmpl::value::{Map, Value};
use navique_ai_core_operator::gotmpl::{Exec, TemplateSet};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if text.len() > 4096 {
        return;
    }
    let mut set = TemplateSet::new();
    if set.parse("t", text).is_err() {
        return;
    }
    let mut vals = Map::new();
    vals.insert("a".into(), Value::Float(1.0));
    vals.insert("s".into(), Value::str("str"));
    vals.insert("l".into(), Value::list(vec![Value::Float(1.0), Value::str("x"), Value::Nil]));
    let mut top = Map::new();
    top.insert("Values".into(), Value::values_map(vals));
    let mut exec = Exec::new(&set);
    let _ = exec.execute("t", Value::values_map(top));
});
