#!/usr/bin/env bash
# End-to-end test of `ksweep slurm` on a real single-node Slurm cluster, with
# faults. Installs slurm-wlm and munge from Debian's packages where missing,
# starts munged, slurmctld and slurmd (as root, on this host, state in a
# temporary directory, ports picked free), then runs a sweep of about 2.5
# minutes with `ksweep slurm --workers 3 --time 1`: every worker job reaches its
# one-minute time limit and leaves before it, one worker array task is
# scancelled mid-sweep, and the coordinator's job is scancelled once so that
# its successor resumes the sweep. The sweep must end done with the table of
# `ksweep run` on the same spec (timings aside), every job gone; the daemons
# are stopped and their state removed at the end. Skipped, with the reason,
# where the cluster cannot be made (not root, no apt, no packages).
set -euo pipefail
cd "$(dirname "$0")/.."
NAME=slurm-e2e
. tests/e2e-lib.sh
skip() { say "SKIPPED: $*"; exit 0; }

[ "$(uname -s)" = Linux ] || skip "Slurm runs on Linux only"
[ "$(id -u)" = 0 ] || skip "the single-node cluster's daemons run as root; run as root (CI does)"
if ! command -v slurmctld >/dev/null 2>&1 || ! command -v munged >/dev/null 2>&1; then
    command -v apt-get >/dev/null 2>&1 || skip "no slurmctld/munged and no apt-get to install them"
    say "installing slurm-wlm and munge (Debian's packages)"
    export DEBIAN_FRONTEND=noninteractive
    # An install an interrupted run left half done would refuse this one.
    dpkg --configure -a >/dev/null 2>&1 || true
    apt-get install -y -q --no-install-recommends slurm-wlm munge >/dev/null 2>&1 ||
        { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q --no-install-recommends slurm-wlm munge >/dev/null 2>&1; } ||
        skip "could not install slurm-wlm and munge"
fi

work=$(mktemp -d)
chmod 755 "$work"
# About 2.5 minutes of 3 workers on 2 cores: longer than a worker job's
# one-minute limit.
spec=$work/slurm-e2e.toml
cat >"$spec" <<'SPEC'
name = "slurm-e2e"
seed = 5
starts = 300
methods = ["w", "w+", "aw", "aw+", "mw"]

[[grid]]
rule = [3, 2]
dims = [2]
n_range = { from = 100, to = 900, step = 20 }
SPEC
state=$work/slurm
mkdir -p "$state/ctld" "$state/d" "$state/munge"
host=$(hostname -s)
ctld_port=$(free_port)
d_port=$(free_port)
export SLURM_CONF=$state/slurm.conf
munge_socket=$state/munge/munge.socket.2
pids=()

cleanup() {
    local rc=$?
    if [ "$rc" -ne 0 ]; then
        say "FAILED (exit $rc)"
        for f in "$state/ctld.log" "$state/d.log" "$work"/sweep/coordinator-*.log; do
            [ -f "$f" ] && { echo "--- tail $f"; tail -n 25 "$f"; }
        done
        ls "$work"/sweep/worker-*.log >/dev/null 2>&1 && { echo "--- tail of a worker log"; tail -n 15 "$(ls "$work"/sweep/worker-*.log | head -1)"; }
    fi
    scancel --name "$job_name" >/dev/null 2>&1 || true
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid_file in "$state/ctld.pid" "$state/d.pid"; do
        [ -f "$pid_file" ] && kill "$(cat "$pid_file")" 2>/dev/null || true
    done
    sleep 1
    # Jobs' processes the daemons left (a worker past its daemon's end).
    pkill -f "ksweep (coordinator|worker) --dir $work/sweep" 2>/dev/null || true
    rm -rf "$work"
    exit "$rc"
}
job_name=ksweep-slurm-e2e
trap cleanup EXIT

say "munge: a key and a daemon of this test's own"
dd if=/dev/urandom of="$state/munge/munge.key" bs=1024 count=1 status=none
chown -R munge:munge "$state/munge" 2>/dev/null || true
chmod 700 "$state/munge"
chmod 400 "$state/munge/munge.key"
munge_user=root
id munge >/dev/null 2>&1 && munge_user=munge
runuser -u "$munge_user" -- munged --key-file "$state/munge/munge.key" --socket "$munge_socket" \
    --pid-file "$state/munge/munged.pid" --log-file "$state/munge/munged.log" --seed-file "$state/munge/seed" --force \
    || skip "munged did not start: $(tail -n 3 "$state/munge/munged.log" 2>/dev/null)"
pids+=("$(cat "$state/munge/munged.pid")")

cpus=8
cat >"$SLURM_CONF" <<EOF
# A single-node cluster for tests/slurm-e2e.sh (written by it).
ClusterName=ksweep-e2e
SlurmctldHost=$host
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$munge_socket
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=2
MpiDefault=none
ReturnToService=2
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/d
SlurmctldPidFile=$state/ctld.pid
SlurmdPidFile=$state/d.pid
SlurmctldLogFile=$state/ctld.log
SlurmdLogFile=$state/d.log
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
# A job past its limit gets SIGTERM, then SIGKILL 10 s later.
KillWait=10
OverTimeLimit=0
MinJobAge=60
InactiveLimit=0
# The node's CPUs and memory as written here, whatever the machine has:
# 3 workers and a coordinator on a 2-core machine.
SlurmdParameters=config_overrides
NodeName=$host CPUs=$cpus RealMemory=8000 State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF

t0=$(date +%s)
slurmctld -f "$SLURM_CONF" -i || skip "slurmctld did not start: $(tail -n 3 "$state/ctld.log" 2>/dev/null)"
slurmd -f "$SLURM_CONF" || skip "slurmd did not start: $(tail -n 3 "$state/d.log" 2>/dev/null)"
for _ in $(seq 60); do
    sinfo -h -o %T 2>/dev/null | grep -qx idle && break
    sleep 1
done
sinfo -h -o %T 2>/dev/null | grep -qx idle || skip "the node never became idle: $(sinfo 2>&1 | tail -n 2)"
cluster_secs=$(( $(date +%s) - t0 ))
say "cluster up in ${cluster_secs} s: $(sinfo -h -o '%P %D %c CPUs %m MB %T')"

ksweep_binary
start_deadline 900

say "reference: ksweep run on the host"
reference_table "$spec" "$work"

dir=$work/sweep
t0=$(date +%s)
"$k" slurm "$spec" --workers 3 --worker-jobs 30 --time 1 --coordinator-time 30 --mem 1G --dir "$dir" \
    --dry-run >"$work/dry-run.txt"
grep -q '^#SBATCH --array=0-29%3$' "$work/dry-run.txt" || { cat "$work/dry-run.txt"; say "--dry-run: no array line"; exit 1; }
"$k" slurm "$spec" --workers 3 --worker-jobs 30 --time 1 --coordinator-time 30 --mem 1G --dir "$dir" | tee "$work/submit.txt"
coordinator_job=$(sed -n 's/.*coordinator job \([0-9]*\),.*/\1/p' "$work/submit.txt")
array=$(cat "$dir/workers.jobid")
[ "$(stat -c %a "$dir/token")" = 600 ] || { say "the token is not mode 0600"; exit 1; }

progress() { # -> "done total", from the coordinator found through --dir
    "$k" status slurm-e2e --dir "$dir" 2>/dev/null | awk '/^tasks/ { print $2 " " $4 }'
}
wait_progress() { # percent
    while true; do
        check_deadline
        read -r d t < <(progress || true) || { d=0; t=0; }
        if [ "${t:-0}" -gt 0 ] && [ $(( d * 100 / t )) -ge "$1" ]; then say "progress $d/$t"; return; fi
        [ -e "$dir/finished" ] && { say "finished before the $1% fault"; return; }
        sleep 1
    done
}

wait_progress 10
sweep_began=$(date +%s)
running=$(squeue -h -j "$array" -t R -o %i | head -n 1)
say "fault 1: scancel worker array task $running"
scancel "$running"

wait_progress 30
say "fault 2: scancel the coordinator's job $coordinator_job (its successor resumes the sweep)"
old_url=$(cat "$dir/coordinator.url")
scancel "$coordinator_job"
while [ "$(cat "$dir/coordinator.url" 2>/dev/null)" = "$old_url" ]; do check_deadline; sleep 1; done
say "the successor announced itself at $(cat "$dir/coordinator.url")"

say "following with ksweep watch --dir"
"$k" watch --dir "$dir" >"$work/watch.txt" 2>"$work/watch.log" || { cat "$work/watch.txt" "$work/watch.log"; exit 1; }
while [ ! -e "$dir/finished" ]; do check_deadline; sleep 1; done
sweep_secs=$(( $(date +%s) - t0 ))
[ "$(cat "$dir/finished")" = done ] || { say "the sweep ended $(cat "$dir/finished")"; exit 1; }
say "sweep done in ${sweep_secs} s from submission"

"$k" table --dir "$dir" --format json | grep -v micros >"$work/cluster.json"
same_as_reference "$work" "$work/cluster.json"

# What the logs say happened: the time limits and the restart.
logs=$(ls "$dir"/coordinator-*.log | wc -l)
[ "$logs" -ge 2 ] || { say "one coordinator job only: the successor never ran"; exit 1; }
ended=$( (grep -l "the worker's end is near: leaving" "$dir"/worker-*.log || true) | wc -l)
[ "$ended" -ge 1 ] || { say "no worker left before its time limit"; exit 1; }
say "$logs coordinator jobs; $ended worker jobs left before their time limit; $(ls "$dir"/worker-*.log | wc -l) worker jobs ran"

# Every job of the sweep ends: the pending array tasks are cancelled.
t0=$(date +%s)
while [ -n "$(squeue -h --name "$job_name" -o %i)" ]; do
    check_deadline
    [ $(( $(date +%s) - t0 )) -lt 90 ] || { say "jobs left after the sweep: $(squeue -h --name "$job_name")"; exit 1; }
    sleep 1
done
say "no job left $(( $(date +%s) - t0 )) s after the sweep ended"

t0=$(date +%s)
for pid_file in "$state/ctld.pid" "$state/d.pid"; do kill "$(cat "$pid_file")"; done
kill "${pids[@]}"
pids=()
rm -f "$state/ctld.pid" "$state/d.pid"
say "teardown in $(( $(date +%s) - t0 )) s"
say "timings: cluster start ${cluster_secs} s, sweep (with both faults) ${sweep_secs} s"
say "PASSED in $(( $(date +%s) - started )) s"
echo "1 passed, 0 failed"
