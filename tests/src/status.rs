//! Reading what `ksweep status` and a coordinator print.

/// One sweep's status, as `ksweep status` prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    pub id: String,
    pub state: String,
    pub tasks_done: u64,
    pub tasks_total: u64,
    pub successes: u64,
    pub shards_failed: u64,
}

fn field<'a>(block: &'a str, key: &str) -> &'a str {
    block
        .lines()
        .find_map(|l| l.strip_prefix(key).filter(|rest| rest.starts_with(' ')).map(str::trim))
        .unwrap_or_else(|| panic!("no {key:?} line in status output:\n{block}"))
}

fn number(text: &str, what: &str) -> u64 {
    text.trim().parse().unwrap_or_else(|_| panic!("{what}: {text:?} is not a number"))
}

/// Parses `ksweep status` output: one block per sweep, blank-line separated;
/// "no sweeps" is none.
pub fn parse_statuses(text: &str) -> Vec<Status> {
    if text.trim() == "no sweeps" {
        return Vec::new();
    }
    text.split("\n\n")
        .filter(|b| !b.trim().is_empty())
        .map(|block| {
            let sweep = field(block, "sweep");
            let tasks = field(block, "tasks");
            let (done, rest) = tasks.split_once(" / ").unwrap_or_else(|| panic!("bad tasks line {tasks:?}"));
            let total = rest.split_whitespace().next().unwrap_or("");
            Status {
                id: sweep.split_whitespace().next().unwrap_or("").to_string(),
                state: field(block, "state").to_string(),
                tasks_done: number(done, "tasks done"),
                tasks_total: number(total, "tasks total"),
                successes: number(field(block, "successes"), "successes"),
                shards_failed: number(field(block, "shards failed"), "shards failed"),
            }
        })
        .collect()
}

/// The port in a coordinator's `listening on 127.0.0.1:PORT` line, once
/// it has printed it.
pub fn listening_port(stdout: &str) -> Option<u16> {
    let line = stdout.lines().find_map(|l| l.strip_prefix("listening on "))?;
    let addr: std::net::SocketAddr =
        line.trim().parse().unwrap_or_else(|e| panic!("listening on {line:?}: not an address ({e})"));
    Some(addr.port())
}
