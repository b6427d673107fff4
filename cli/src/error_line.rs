//! How an error reaches the user: one line, the error and its causes.

/// `error: cause: cause ...`, each cause said once
/// ([`ksweep_proto::join_causes`]): hyper and tonic wrap an error in one
/// that prints the same words ("tcp connect error: tcp connect error"), and
/// an error may name its source in its own message.
pub fn cause_chain(e: &anyhow::Error) -> String {
    ksweep_proto::join_causes(e.chain().map(ToString::to_string))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Leaf;
    impl std::fmt::Display for Leaf {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("tcp connect error")
        }
    }
    impl std::error::Error for Leaf {}

    #[test]
    fn consecutive_repeats_are_printed_once() {
        let e =
            anyhow::Error::new(Leaf).context("tcp connect error").context("transport error").context("--coordinator");
        assert_eq!(cause_chain(&e), "--coordinator: transport error: tcp connect error");
        let e = anyhow::anyhow!("a").context("b").context("a");
        assert_eq!(cause_chain(&e), "a: b: a", "only consecutive repeats go");
        let e = anyhow::Error::new(Leaf).context("--coordinator: tcp connect error");
        assert_eq!(cause_chain(&e), "--coordinator: tcp connect error", "a message that names its source");
    }
}
