//! Marks optimised builds (`--release`, `--profile checked`) with
//! `cfg(optimized)`: the slow test tier runs in them whatever
//! `debug_assertions` says, so the checked profile runs it with the
//! engine's debug assertions and overflow checks on.
fn main() {
    println!("cargo::rustc-check-cfg=cfg(optimized)");
    if std::env::var("OPT_LEVEL").is_ok_and(|level| level != "0") {
        println!("cargo::rustc-cfg=optimized");
    }
}
