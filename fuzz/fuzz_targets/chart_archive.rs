//! Load arbitrary bytes as a chart archive: errors are fine, panics and
//! writes outside memory are not (the loader never touches the disk).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = navique_ai_core_operator::chart::load::load_archive(data);
});
