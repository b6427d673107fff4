//! The Slurm scripts' tests: what they hold, and the words and paths an
//! #SBATCH line or a shell can carry.

use std::path::PathBuf;

use super::{file_safe, sbatch_path, sbatch_word, shell_word, Plan};

fn plan() -> Plan {
    Plan {
        name: "quick".into(),
        dir: PathBuf::from("/shared/ksweep-quick"),
        ksweep: PathBuf::from("/opt/ksweep/bin/ksweep"),
        workers: 3,
        worker_jobs: 12,
        cpus_per_worker: 4,
        mem: Some("8G".into()),
        time: Some("11:50:00".into()),
        coordinator_time: Some("2-00:00:00".into()),
        partition: Some("long".into()),
        account: None,
        restarts: 10,
    }
}

#[test]
fn the_scripts_say_what_slurm_is_asked_for() {
    let p = plan();
    let workers = p.workers_script();
    for line in [
        "#SBATCH --job-name=ksweep-quick\n",
        "#SBATCH --array=0-11%3\n",
        "#SBATCH --cpus-per-task=4\n",
        "#SBATCH --mem=8G\n",
        "#SBATCH --time=11:50:00\n",
        "#SBATCH --partition=long\n",
        "exec /opt/ksweep/bin/ksweep worker --dir /shared/ksweep-quick",
    ] {
        assert!(workers.contains(line), "{line:?} missing from\n{workers}");
    }
    assert!(!workers.contains("--account"), "no account asked for");
    let coordinator = p.coordinator_script();
    for line in [
        "#SBATCH --requeue\n",
        "--dependency=afterany:\"$SLURM_JOB_ID\"",
        "if [ \"$restart\" -lt 10 ]",
        "/opt/ksweep/bin/ksweep coordinator --dir \"$dir\" --listen 0.0.0.0:0",
        "--submit \"$dir/spec.toml\" --until-done",
    ] {
        assert!(coordinator.contains(line), "{line:?} missing from\n{coordinator}");
    }
    assert!(!coordinator.contains("--mem=8G"), "the coordinator's memory is its own");
    assert!(coordinator.contains("#SBATCH --time=2-00:00:00\n"), "and its time limit");
}

#[test]
fn names_paths_and_values_are_made_safe() {
    assert_eq!(file_safe("report 3/2"), "report_3_2");
    assert_eq!(file_safe(""), "sweep");
    assert_eq!(shell_word("/a b/it's"), r"'/a b/it'\''s'");
    assert_eq!(shell_word("/plain/path"), "/plain/path");
    assert_eq!(shell_word("a\nb"), r"'a'$'\x0a''b'");
    assert_eq!(shell_word(""), "''");
    assert!(sbatch_word("11:50:00") && sbatch_word("4G") && sbatch_word("gpu,long"));
    assert!(!sbatch_word("4G\n#SBATCH --x") && !sbatch_word("") && !sbatch_word("a b"));
    assert!(sbatch_path(&PathBuf::from("/shared/ksweep-quick_1.2")));
    for bad in ["/a b", "/a\nb", "/a%j", "/a'b", "/a$(x)"] {
        assert!(!sbatch_path(&PathBuf::from(bad)), "{bad:?}");
    }
}

/// Hostile names and paths (a newline, quotes, `$(..)`, backticks)
/// neither add a line to the scripts nor run anything: the scripts have
/// the lines a plain plan's have, bash parses them, and their comment
/// block run as bash (the attack that found this) does nothing.
#[test]
fn hostile_names_and_paths_add_no_line_and_run_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let pwned = tmp.path().join("pwned");
    let attack = format!("x\ntouch {0}\n$(touch {0}) `touch {0}` ' \" ; touch {0} #", pwned.display());
    let hostile = Plan { name: attack.clone(), ksweep: PathBuf::from(format!("/opt/{attack}/ksweep")), ..plan() };
    for (plain, script) in [
        (plan().coordinator_script(), hostile.coordinator_script()),
        (plan().workers_script(), hostile.workers_script()),
    ] {
        assert_eq!(script.lines().count(), plain.lines().count(), "{script}");
        let parsed = std::process::Command::new("bash").args(["-n", "-c", &script]).status();
        match parsed {
            Ok(status) => assert!(status.success(), "bash cannot parse\n{script}"),
            Err(e) => eprintln!("skipped bash -n: {e}"),
        }
        let comments: String = script.lines().take_while(|l| l.starts_with('#')).map(|l| format!("{l}\n")).collect();
        if std::process::Command::new("bash").args(["-c", &comments]).status().is_ok() {
            assert!(!pwned.exists(), "the comment block ran a command:\n{comments}");
        }
    }
}
