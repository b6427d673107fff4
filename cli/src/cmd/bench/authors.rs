//! The report authors' own programs, run beside the engine when `ksweep
//! bench --authors DIR` says where a user built them (from their public
//! repository, outside this one: knight-sweep neither ships nor builds
//! their code). Each program takes the board's side and a start on its
//! command line, walks once per attempt, and appends a line with the flag
//! and the time it measured to `Dimension=D_N=N.txt` in its working
//! directory; that time is the figure compared.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context, Result};

/// One of the authors' programs: the file name `--authors` expects and
/// the source in their repository it is built from.
#[derive(Debug, Clone, Copy)]
pub struct Program {
    pub file: &'static str,
    pub source: &'static str,
}

/// aw+ (3,2) 2D: W+ with their rotations on failure.
pub const W_PLUS_2D: Program = Program { file: "w+++-2d", source: "data/(3,2)/W+++/2D.cpp" };
/// Rule W, (2,1) 3D, static arrays.
pub const ACCU_MORE_3D: Program = Program { file: "accu-more-3d", source: "data/accu-more/just_degree/3D.cpp" };
/// Rule W, (1,2,2) 3D, heap arrays.
pub const MOVES_221_3D: Program = Program { file: "221-500-3d", source: "data/(2,2,1)-500/just_degree/3D.cpp" };

/// W+ (degree, then the greater distance from the centre), (2,1) 3D,
/// static arrays.
pub const W_PLUS_3D: Program = Program { file: "dd-3d", source: "data/(2,1) accu-200/degree+distance/3D.cpp" };

/// Every program the bench runs.
pub const ALL: [Program; 4] = [W_PLUS_2D, ACCU_MORE_3D, MOVES_221_3D, W_PLUS_3D];

/// Where the programs are, checked before any run.
pub struct Programs {
    dir: PathBuf,
}

impl Programs {
    /// The directory `--authors` names; every program the bench runs must
    /// be there, executable.
    pub fn at(dir: &Path, needed: &[Program]) -> Result<Programs> {
        for p in needed {
            let path = dir.join(p.file);
            if !path.is_file() {
                bail!(
                    "--authors: {} is missing: build it from {} of the authors' repository \
                     (docs/engine.md says how) and name it {}",
                    path.display(),
                    p.source,
                    p.file
                );
            }
        }
        Ok(Programs { dir: dir.to_path_buf() })
    }

    /// Runs `program` from `start` on a board of side `n` in a directory of
    /// its own; returns the flag and the time it reported.
    pub fn run(&self, program: Program, n: u32, start: &[u32]) -> Result<(bool, Duration)> {
        let work = std::env::temp_dir().join(format!("ksweep-bench-authors-{}", std::process::id()));
        // A directory a crashed run left behind would add its lines to this one's.
        let _ = std::fs::remove_dir_all(&work);
        std::fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;
        let path = self.dir.join(program.file);
        let ran = Command::new(&path)
            .arg(n.to_string())
            .args(start.iter().map(u32::to_string))
            .current_dir(&work)
            .output()
            .with_context(|| format!("running {}", path.display()));
        let report = work.join(format!("Dimension={}_N={n}.txt", start.len()));
        let text = ran.and_then(|out| {
            // They exit 1 on a tour, 0 without one: only a missing report is an error.
            std::fs::read_to_string(&report).with_context(|| {
                format!(
                    "{} wrote no {} (exit {}, stderr {:?})",
                    path.display(),
                    report.display(),
                    out.status,
                    String::from_utf8_lossy(&out.stderr)
                )
            })
        });
        let _ = std::fs::remove_dir_all(&work);
        parse_report(&text?).with_context(|| format!("{}'s report", path.display()))
    }
}

/// The flag and time of a report's last start, from a line such as
/// `Start position: 1 2 - Success Execution time: 8 ms (8215 μs)`.
fn parse_report(text: &str) -> Result<(bool, Duration)> {
    let Some(line) = text.lines().rev().find(|l| l.starts_with("Start position:")) else {
        bail!("no `Start position:` line");
    };
    let Some((_, after)) = line.split_once(" - ") else { bail!("no flag in {line:?}") };
    let success = match after.split_whitespace().next() {
        Some("Success") => true,
        Some("Fail") => false,
        _ => bail!("no Success or Fail in {line:?}"),
    };
    let micros = line
        .rsplit_once('(')
        .and_then(|(_, m)| m.split_whitespace().next())
        .and_then(|m| m.parse::<u64>().ok())
        .with_context(|| format!("no microseconds in {line:?}"))?;
    Ok((success, Duration::from_micros(micros)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_last_start_of_a_report() {
        let text = "Success: 1 Fail: 1\n\
                    Start position: 0 0 - Success Execution time: 8 ms (8215 μs)\n\
                    Start position: 3 9 - Fail Execution time: 70 ms (70123 μs)\n";
        assert_eq!(parse_report(text).unwrap(), (false, Duration::from_micros(70123)));
        let one = "Success: 1 Fail: 0\nStart position: 0 0 0 - Success Execution time: 4 ms (4001 μs)\n";
        assert_eq!(parse_report(one).unwrap(), (true, Duration::from_micros(4001)));
    }

    #[test]
    fn a_report_without_a_start_line_is_an_error() {
        let err = parse_report("Success: 0 Fail: 0\n").unwrap_err();
        assert!(err.to_string().contains("Start position"), "{err}");
        let err = parse_report("Start position: 0 0 - Maybe Execution time: 1 ms (1 μs)\n").unwrap_err();
        assert!(err.to_string().contains("Success or Fail"), "{err}");
    }
}
