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
    /// Threads running tasks (default: the CPUs the process may use, by its
    /// affinity mask and cgroup CPU quota).
    #[arg(long, default_value_t = 0, value_parser = thread_count())]
    pub threads: usize,
    /// Name in the coordinator's logs (default: host name and process id).
    #[arg(long)]
    pub name: Option<String>,
    /// Memory the boards of running tasks may take, e.g. 4G, 512M or a byte
    /// count (default: the tightest of the process's cgroup limit, Slurm's
    /// allocation and the memory available at start, less a margin). Fewer
    /// tasks run at once where their boards need it; a board that cannot
    /// fit fails its shard with its need.
    #[arg(long, value_name = "SIZE", value_parser = parse_bytes)]
    pub memory: Option<u64>,
    /// A label this worker advertises, a name or key=value (e.g. bigmem,
    /// site=lab); repeatable, at most 32, each 1 to 64 characters of
    /// A-Z a-z 0-9 . _ = -.
    #[arg(long = "label", value_name = "LABEL", value_parser = parse_label)]
    pub labels: Vec<String>,
    /// How long this worker may run, e.g. 11h50m, 90m or 20s (default:
    /// until stopped, or the end of the Slurm job it runs in). It takes
    /// only shards estimated to end well within it, and leaves on its own
    /// shortly before: last results delivered, the rest handed back, exit 0.
    #[arg(long, value_name = "DURATION", value_parser = ksweep_worker::lifetime::parse_lifetime)]
    pub lifetime: Option<std::time::Duration>,
}

fn parse_label(text: &str) -> Result<String, String> {
    if ksweep_proto::label_ok(text) {
        Ok(text.to_string())
    } else {
        Err(ksweep_proto::LABEL_RULE.into())
    }
}

/// A `--threads` value: 0 (all cores) up to the most a worker may claim
/// (`ksweep_proto::MAX_WORKER_THREADS`), so a typo is refused with the flag
/// and the limit instead of starting 100,000 threads.
pub fn thread_count() -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::new().range(0..=u64::from(ksweep_proto::MAX_WORKER_THREADS))
}

/// A size in bytes: a number, optionally followed by K, M, G, T or P
/// (powers of 1024, with or without "iB"/"B"), from 1 byte to
/// [`ksweep_proto::MAX_WORKER_MEMORY`].
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
        "P" => 50,
        other => return Err(format!("unknown unit {other:?}: use K, M, G, T or P")),
    };
    let most = ksweep_proto::MAX_WORKER_MEMORY;
    match number.checked_mul(1 << shift) {
        Some(0) => Err("must be more than 0 bytes".into()),
        Some(bytes) if bytes <= most => Ok(bytes),
        _ => Err(format!("{text:?} is over the limit 1P ({most} bytes)")),
    }
}

impl WorkerArgs {
    pub fn options(&self) -> Result<WorkerOptions> {
        let host = std::fs::read_to_string("/etc/hostname").map(|h| h.trim().to_string()).unwrap_or_default();
        let name = self
            .name
            .clone()
            .unwrap_or_else(|| format!("{}-{}", if host.is_empty() { "worker" } else { &host }, std::process::id()));
        let connect = &self.connect;
        let left = ksweep_worker::lifetime::time_left(
            self.lifetime,
            |key| std::env::var(key).ok(),
            std::time::SystemTime::now(),
        );
        if let Some((left, source)) = left {
            tracing::info!(left_secs = left.as_secs(), ?source, "the worker's end");
        }
        Ok(WorkerOptions {
            cluster_dir: connect.cluster_dir(),
            threads: self.threads,
            name,
            token: connect.token()?,
            tls_ca: connect.tls_ca_pem()?,
            memory: self.memory,
            labels: ksweep_proto::labels(&self.labels)
                .map_err(|e| anyhow::anyhow!("--label: {e}"))?
                .into_iter()
                .collect(),
            // At most MAX_LIFETIME away (time_left): no clock overflows.
            end: left.and_then(|(left, _)| std::time::Instant::now().checked_add(left)),
            ..WorkerOptions::new(connect.coordinator.clone())
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
    use clap::Parser;

    use super::{parse_bytes, WorkerArgs};

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        worker: WorkerArgs,
    }

    fn with_labels(labels: &[String]) -> Result<Cli, clap::Error> {
        let flags = labels.iter().flat_map(|l| ["--label", l.as_str()]);
        Cli::try_parse_from(["ksweep-worker", "--coordinator", "http://127.0.0.1:1"].into_iter().chain(flags))
    }

    #[test]
    fn labels_are_named_bounded_and_folded() {
        let labels = |given: &[&str]| given.iter().map(|l| l.to_string()).collect::<Vec<_>>();
        let e = with_labels(&labels(&["bigmem", "two words"])).err().expect("refused").to_string();
        assert!(e.contains("--label") && e.contains("1 to 64 characters of A-Z"), "{e}");
        let many: Vec<String> = (0..33).map(|i| format!("l{i}")).collect();
        let e = with_labels(&many).expect("each is a label").worker.options().expect_err("too many").to_string();
        assert_eq!(e, "--label: at most 32 labels, got 33");
        let options = with_labels(&labels(&["site=lab", "bigmem", "bigmem"])).unwrap().worker.options().unwrap();
        assert_eq!(options.labels, ["bigmem", "site=lab"]);
    }

    #[test]
    fn sizes_parse_with_binary_units() {
        assert_eq!(parse_bytes("4G"), Ok(4 << 30));
        assert_eq!(parse_bytes("512MiB"), Ok(512 << 20));
        assert_eq!(parse_bytes("1048576"), Ok(1 << 20));
        assert_eq!(parse_bytes("3 kb"), Ok(3 << 10));
        assert!(parse_bytes("0").is_err());
        assert!(parse_bytes("4X").unwrap_err().contains("unknown unit"));
        assert!(parse_bytes("lots").is_err());
        assert_eq!(parse_bytes("1P"), Ok(1 << 50));
        for absurd in ["99999999999T", "16384P", "18446744073709551615", "1025T"] {
            assert!(
                parse_bytes(absurd).unwrap_err().contains("is over the limit 1P (1125899906842624 bytes)"),
                "{absurd}"
            );
        }
    }
}
