//! When a worker must be gone: `--lifetime`, or the end of the batch job it
//! runs in (Slurm's wall-clock limit), whichever comes first. The worker
//! tells the coordinator the time it has left with every poll, so it is
//! given only shards that end well before, and leaves on its own just
//! before the end: its last results delivered, the rest handed back, exit 0.

use std::process::Command;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long before its end a worker stops to leave: the last delivery and
/// goodbye (6 s at most), and a margin for a slow coordinator.
pub const LEAVE_BEFORE: Duration = Duration::from_secs(10);

/// The longest end a worker takes: a year and a day. Slurm gives a job
/// without a time limit an end a year away; anything later is no end at
/// all, and an end this far never overflows a clock.
pub const MAX_LIFETIME: Duration = Duration::from_secs(366 * 86_400);

/// Where the end came from, for the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndSource {
    /// `--lifetime`.
    Flag,
    /// `SLURM_JOB_END_TIME`, the job's projected end (Unix seconds).
    SlurmEndTime,
    /// `squeue -h -j $SLURM_JOB_ID -o %L`: the job's time left.
    Squeue,
}

/// The time left until the worker must be gone, and where that came from;
/// None when nothing bounds it. `env` looks a variable up (the process's
/// environment, or a test's).
pub fn time_left(
    lifetime: Option<Duration>,
    env: impl Fn(&str) -> Option<String>,
    now: SystemTime,
) -> Option<(Duration, EndSource)> {
    let flag = lifetime.map(|l| (l.min(MAX_LIFETIME), EndSource::Flag));
    let slurm = env("SLURM_JOB_END_TIME")
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|&secs| secs > 0)
        .map(|secs| {
            // Past the clock's range (u64::MAX seconds): as far as can be.
            let end = UNIX_EPOCH.checked_add(Duration::from_secs(secs));
            let left = end.map_or(Duration::MAX, |end| end.duration_since(now).unwrap_or_default());
            (left, EndSource::SlurmEndTime)
        })
        .or_else(|| {
            let job = env("SLURM_JOB_ID")?;
            squeue_time_left(&job).map(|left| (left, EndSource::Squeue))
        })
        .filter(|&(left, _)| left <= MAX_LIFETIME);
    [flag, slurm].into_iter().flatten().min_by_key(|&(left, _)| left)
}

/// The job's time left as `squeue` reports it, where `squeue` runs.
fn squeue_time_left(job: &str) -> Option<Duration> {
    if job.is_empty() || !job.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return None;
    }
    let out = Command::new("squeue").args(["-h", "-j", job, "-o", "%L"]).output().ok()?;
    out.status.success().then_some(())?;
    parse_slurm_time(String::from_utf8_lossy(&out.stdout).trim())
}

/// Slurm's time format, `[days-]hours:minutes:seconds`, `minutes:seconds`
/// or `seconds`; None for `UNLIMITED`, `INVALID` and anything else.
pub fn parse_slurm_time(text: &str) -> Option<Duration> {
    let (days, clock) = match text.split_once('-') {
        Some((d, rest)) => (d.parse::<u64>().ok()?, rest),
        None => (0, text),
    };
    let parts: Vec<u64> = clock.split(':').map(|p| p.parse::<u64>().ok()).collect::<Option<_>>()?;
    let secs = match parts[..] {
        [s] => Some(s),
        [m, s] => m.checked_mul(60)?.checked_add(s),
        [h, m, s] => h.checked_mul(3600)?.checked_add(m.checked_mul(60)?)?.checked_add(s),
        _ => return None,
    };
    Some(Duration::from_secs(days.checked_mul(86_400)?.checked_add(secs?)?))
}

/// A duration as `--lifetime` takes it: a number and a unit, repeated
/// (`11h50m`, `90m`, `20s`, `1d12h`), or plain seconds; longer than
/// [`LEAVE_BEFORE`] (a worker leaves that long before its end) and at most
/// [`MAX_LIFETIME`].
pub fn parse_lifetime(text: &str) -> Result<Duration, String> {
    let lifetime = parse_duration(text)?;
    let (least, most) = (LEAVE_BEFORE.as_secs() + 1, MAX_LIFETIME.as_secs());
    if lifetime.as_secs() < least {
        return Err(format!(
            "{:?} is below the minimum {least}s: a worker leaves {}s before its end",
            text.trim(),
            LEAVE_BEFORE.as_secs()
        ));
    }
    if lifetime.as_secs() > most {
        return Err(format!("{:?} is over the limit {}d", text.trim(), most / 86_400));
    }
    Ok(lifetime)
}

/// `11h50m`, `90m`, `20s`, `1d12h`, or plain seconds.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    if let Ok(secs) = text.parse::<u64>() {
        return Ok(Duration::from_secs(secs));
    }
    let mut total = 0u64;
    let mut number = String::new();
    for c in text.chars() {
        if c.is_ascii_digit() {
            number.push(c);
            continue;
        }
        let unit = match c {
            'd' => 86_400,
            'h' => 3600,
            'm' => 60,
            's' => 1,
            _ => return Err(format!("{text:?}: unknown unit {c:?}; use d, h, m and s, e.g. 11h50m")),
        };
        let n: u64 = number.parse().map_err(|_| format!("{text:?}: a number must come before {c:?}"))?;
        total =
            n.checked_mul(unit).and_then(|s| total.checked_add(s)).ok_or_else(|| format!("{text:?} is too long"))?;
        number.clear();
    }
    if !number.is_empty() || total == 0 {
        return Err(format!("{text:?} is not a duration such as 11h50m, 90m or 20s"));
    }
    Ok(Duration::from_secs(total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lifetimes_and_slurm_times_parse() {
        assert_eq!(parse_lifetime("11h50m"), Ok(Duration::from_secs(11 * 3600 + 50 * 60)));
        assert_eq!(parse_lifetime("20s"), Ok(Duration::from_secs(20)));
        assert_eq!(parse_lifetime("1d12h"), Ok(Duration::from_secs(36 * 3600)));
        assert_eq!(parse_lifetime("300"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_lifetime("366d"), Ok(MAX_LIFETIME));
        assert_eq!(parse_lifetime("11s"), Ok(Duration::from_secs(11)));
        for bad in ["", "0s", "h", "10x", "5m3", "99999999999999999999d"] {
            assert!(parse_lifetime(bad).is_err(), "{bad:?}");
        }
        for (bad, why) in [
            ("0", "\"0\" is below the minimum 11s: a worker leaves 10s before its end"),
            ("10s", "below the minimum 11s"),
            ("18446744073709551615", "\"18446744073709551615\" is over the limit 366d"),
            ("367d", "is over the limit 366d"),
        ] {
            let err = parse_lifetime(bad).unwrap_err();
            assert!(err.contains(why), "{bad:?}: {err}");
        }
        assert_eq!(parse_slurm_time("213503982334601-07:00:16"), None, "past u64 seconds");
        assert_eq!(parse_slurm_time("1-02:03:04"), Some(Duration::from_secs(86_400 + 7384)));
        assert_eq!(parse_slurm_time("45:00"), Some(Duration::from_secs(2700)));
        assert_eq!(parse_slurm_time("59"), Some(Duration::from_secs(59)));
        for bad in ["UNLIMITED", "INVALID", "", "1:2:3:4", "-5"] {
            assert_eq!(parse_slurm_time(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn the_nearest_end_wins() {
        let now = UNIX_EPOCH + Duration::from_secs(1_000_000);
        let none = |_: &str| None;
        assert_eq!(time_left(None, none, now), None);
        let hour = Some(Duration::from_secs(3600));
        assert_eq!(time_left(hour, none, now), Some((Duration::from_secs(3600), EndSource::Flag)));
        let ends_in_ten_minutes = |k: &str| (k == "SLURM_JOB_END_TIME").then(|| "1000600".to_string());
        assert_eq!(
            time_left(hour, ends_in_ten_minutes, now),
            Some((Duration::from_secs(600), EndSource::SlurmEndTime))
        );
        let ended = |k: &str| (k == "SLURM_JOB_END_TIME").then(|| "999000".to_string());
        assert_eq!(time_left(None, ended, now), Some((Duration::ZERO, EndSource::SlurmEndTime)));
        // A job id squeue cannot be asked about safely is ignored.
        let odd = |k: &str| (k == "SLURM_JOB_ID").then(|| "1; rm -rf /".to_string());
        assert_eq!(time_left(None, odd, now), None);
        // An end past the clock's range, or more than a year away (Slurm's
        // for a job without a time limit), is no end.
        let never = |k: &str| (k == "SLURM_JOB_END_TIME").then(|| u64::MAX.to_string());
        assert_eq!(time_left(None, never, now), None);
        assert_eq!(time_left(hour, never, now), Some((Duration::from_secs(3600), EndSource::Flag)));
        let in_two_years = |k: &str| (k == "SLURM_JOB_END_TIME").then(|| (1_000_000 + 2 * 31_536_000).to_string());
        assert_eq!(time_left(None, in_two_years, now), None);
    }
}
