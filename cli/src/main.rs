//! The `ksweep` binary; the commands live in the library ([`ksweep::main`]).

fn main() -> std::process::ExitCode {
    ksweep::main()
}
