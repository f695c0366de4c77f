fn main() {
    // A position-dependent executable: the dynamic loader then has no
    // relative relocations to apply (68,000 in a PIE build of this size,
    // with 1.7 MB of relocated read-only data copied on write), which was
    // half the start-up and a third of the peak memory of a short
    // `navique-operator template` (BENCHMARKS.md). The image's static build
    // (crt-static) gets the same from `-C relocation-model=static` in the
    // Makefile instead: `-no-pie` beside a static PIE would not do it.
    let features = std::env::var("CARGO_CFG_TARGET_FEATURE").unwrap_or_default();
    let linux = std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux");
    if linux && !features.split(',').any(|f| f == "crt-static") {
        println!("cargo:rustc-link-arg-bin=navique-operator=-no-pie");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
