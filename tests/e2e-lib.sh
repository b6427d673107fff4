# What the end-to-end scripts (docker-e2e.sh, swarm-e2e.sh, slurm-e2e.sh)
# share. Sourced after `cd` to the repository root, with NAME set to the
# script's name for its log prefix:
#   NAME=docker-e2e; . tests/e2e-lib.sh
started=$(date +%s)

# A line of the test's log, with the seconds since it started.
say() { printf '[%s %3ds] %s\n' "$NAME" "$(( $(date +%s) - started ))" "$*"; }

# Skips the test (exit 0, saying why) where no Docker engine answers.
require_docker() {
    if ! command -v docker >/dev/null 2>&1 || ! docker info >/dev/null 2>&1; then
        say "SKIPPED: no Docker engine answers here"
        exit 0
    fi
}

# A TCP port free on loopback now.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# Sets k to the ksweep binary: the one .ci/run's tests built (KSWEEP_BIN),
# or one built here.
ksweep_binary() {
    if [ -n "${KSWEEP_BIN:-}" ]; then
        k=$KSWEEP_BIN
    else
        cargo build --release -q -p ksweep
        k=${CARGO_TARGET_DIR:-$PWD/target}/release/ksweep
    fi
}

# Past the builds a test is bounded: start_deadline once they are done,
# check_deadline in every wait (it fails the test past the bound). The
# builds are left to CI's own limit: on a slow 2-core machine a build of
# the binary's dependencies takes 15 minutes or more.
start_deadline() { deadline=$(( $(date +%s) + ${KSWEEP_E2E_TIMEOUT:-$1} )); }
check_deadline() { [ "$(date +%s)" -lt "$deadline" ] || { say "timed out"; exit 1; }; }

# The reference: SPEC run in one process (`ksweep run`), its table as JSON
# without timings in DIR/ref.json.
reference_table() { # spec dir
    "$k" run "$1" --db "$2/ref.db" --threads 2 >/dev/null 2>"$2/ref.log"
    "$k" table --db "$2/ref.db" --format json | grep -v micros >"$2/ref.json"
}

# Compares a cluster's table (JSON, timings removed by the caller or here)
# with the reference; prints the difference and fails on one.
same_as_reference() { # dir cluster.json
    if ! diff -u "$1/ref.json" "$2" >"$1/diff"; then
        say "tables differ from ksweep run:"
        head -40 "$1/diff"
        exit 1
    fi
    say "table identical to ksweep run (timings aside)"
}
