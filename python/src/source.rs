//! Where the handle's reads go: the source its flags name (`--db FILE`,
//! or `--coordinator URL` with its token flags), opened per call.

use ksweep::connect::SourceArgs;
use ksweep::source::Source;

/// Opens the source the flags name and runs `query` on it.
pub fn block_on<T>(flags: Vec<String>, query: impl AsyncFnOnce(&mut Source) -> anyhow::Result<T>) -> anyhow::Result<T> {
    let args: SourceArgs = ksweep::parse_flags(flags)?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async {
        let mut source = Source::open(&args).await?;
        query(&mut source).await
    })
}
