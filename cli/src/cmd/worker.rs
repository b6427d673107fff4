//! `ksweep worker`: run shards for a coordinator.

use anyhow::{Context, Result};
use clap::Args;
use ksweep_worker::WorkerOptions;

use crate::connect::ConnectArgs;
use crate::shutdown::Signals;

/// Start a worker.
#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// Coordinator URL, token and CA: the same as every client command's.
    #[command(flatten)]
    pub connect: ConnectArgs,
    /// Threads running tasks (default: all cores).
    #[arg(long, default_value_t = 0, value_parser = thread_count())]
    pub threads: usize,
    /// Name in the coordinator's logs (default: host name and process id).
    #[arg(long)]
    pub name: Option<String>,
    /// Memory the boards of running tasks may take, e.g. 4G, 512M or a byte
    /// count (default: what the machine has available at start). Fewer
    /// tasks run at once where their boards need it; a board that cannot
    /// fit fails its shard with its need.
    #[arg(long, value_name = "SIZE", value_parser = parse_bytes)]
    pub memory: Option<u64>,
}

/// A `--threads` value: 0 (all cores) up to the most a worker may claim
/// (`ksweep_proto::MAX_WORKER_THREADS`), so a typo is refused with the flag
/// and the limit instead of starting 100,000 threads.
pub fn thread_count() -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::new().range(0..=u64::from(ksweep_proto::MAX_WORKER_THREADS))
}

/// A size in bytes: a number, optionally followed by K, M, G or T (powers
/// of 1024, with or without "iB"/"B").
fn parse_bytes(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let digits = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    let number: u64 = number.parse().map_err(|_| format!("{text:?} is not a size such as 4G, 512M or 1048576"))?;
    let shift = match unit.trim().to_ascii_uppercase().trim_end_matches("IB").trim_end_matches('B') {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        other => return Err(format!("unknown unit {other:?}: use K, M, G or T")),
    };
    let bytes = number.checked_mul(1 << shift).ok_or_else(|| format!("{text:?} is more than 2^64 bytes"))?;
    if bytes == 0 {
        return Err("must be more than 0 bytes".into());
    }
    Ok(bytes)
}

impl WorkerArgs {
    pub fn options(&self) -> Result<WorkerOptions> {
        let host = std::fs::read_to_string("/etc/hostname").map(|h| h.trim().to_string()).unwrap_or_default();
        let name = self
            .name
            .clone()
            .unwrap_or_else(|| format!("{}-{}", if host.is_empty() { "worker" } else { &host }, std::process::id()));
        let connect = &self.connect;
        Ok(WorkerOptions {
            coordinator: connect.coordinator.clone(),
            threads: self.threads,
            name,
            token: connect.token.resolve()?,
            tls_ca: connect.tls_ca_pem()?,
            max_message_bytes: ksweep_proto::MAX_MESSAGE_BYTES,
            memory: self.memory,
        })
    }
}

pub async fn run(args: WorkerArgs) -> Result<()> {
    let options = args.options()?;
    let signals = Signals::install().context("cannot install signal handlers")?;
    ksweep_worker::run(options, signals.shutdown()).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::parse_bytes;

    #[test]
    fn sizes_parse_with_binary_units() {
        assert_eq!(parse_bytes("4G"), Ok(4 << 30));
        assert_eq!(parse_bytes("512MiB"), Ok(512 << 20));
        assert_eq!(parse_bytes("1048576"), Ok(1 << 20));
        assert_eq!(parse_bytes("3 kb"), Ok(3 << 10));
        assert!(parse_bytes("0").is_err());
        assert!(parse_bytes("4X").unwrap_err().contains("unknown unit"));
        assert!(parse_bytes("lots").is_err());
        assert!(parse_bytes("99999999999T").unwrap_err().contains("2^64"));
    }
}
