#!/usr/bin/env bash
# Cluster benchmarks: figures, not pass/fail (targets printed beside them).
#
#   bench/cluster.sh throughput   small 8x8 tasks persisted end to end (target >= 200,000/s),
#                                 with the coordinator's CPU time and peak RSS
#   bench/cluster.sh overhead     a CPU-bound spec through coordinator + 2 workers x 1 thread
#                                 vs `ksweep run --threads 2`, in one run (target <= 5 % slower)
#   bench/cluster.sh memory       coordinator RSS with a planned 10^8-task sweep (target < 200 MB)
#   bench/cluster.sh dashboards   the small-task run with 0 and with 5 dashboards open (each
#                                 following the event stream and fetching the sweep's page
#                                 data on every event, as the page does): time, coordinator
#                                 CPU, and the page-data latency
#   bench/cluster.sh polls        Poll and status latency of 100 simulated workers on a sweep
#                                 of 300,000 stored results: alone, with one dashboard page
#                                 open, and with 4 and 20 loops downloading its Parquet file
#                                 (coordinator/examples/poll_latency/)
#   bench/cluster.sh thousand     1,000 simulated workers (async clients in one process, real
#                                 gRPC on loopback, valid results) on 101 boards of tiny tasks
#                                 (about 4 ms each at the speed they report, so about 250,000
#                                 results/s offered): results stored per second (target >=
#                                 200,000), Poll p50/p99 (target p99 < 100 ms), status p50/p99
#                                 (target p99 < 50 ms), coordinator CPU and RSS; issue 40's load
#   bench/cluster.sh all
#
# Everything listens on 127.0.0.1 and is killed on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p ksweep
K="$PWD/target/release/ksweep"
WORK=$(mktemp -d)
PIDS=()
cleanup() {
    for p in "${PIDS[@]:-}"; do kill -9 "$p" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
cpu_secs() { awk -v t="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / t }' "/proc/$1/stat"; }
hwm_mb() { awk '/VmHWM/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
rss_mb() { awk '/VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
now() { date +%s.%N; }

small_spec() { # file
    # 2,000 move orders of the knight on 8x8 (a real question: how much does
    # W's accuracy depend on move order?), every start, methods w and w+.
    python3 - "$1" <<'PY'
import itertools, sys
moves = [(2,1),(2,-1),(-2,1),(-2,-1),(1,2),(1,-2),(-1,2),(-1,-2)]
with open(sys.argv[1], "w") as f:
    f.write('name = "bench-small"\nseed = 1\nstarts = 64\nmethods = ["w", "w+"]\n')
    for order in itertools.islice(itertools.permutations(moves), 2000):
        f.write("[[grid]]\nmoves = [%s]\nshapes = [[8, 8]]\n" % ", ".join("[%d, %d]" % m for m in order))
PY
}

start_coordinator() { # db port [args..] -> sets COORD
    local db=$1 port=$2; shift 2
    "$K" coordinator --listen "127.0.0.1:$port" --db "$db" "$@" 2>"$WORK/coordinator.log" &
    COORD=$!
    PIDS+=("$COORD")
    for _ in $(seq 100); do
        "$K" health --coordinator "http://127.0.0.1:$port" 2>/dev/null && return 0
        sleep 0.1
    done
    echo "coordinator did not come up" >&2
    cat "$WORK/coordinator.log" >&2
    exit 1
}

stop_all() { # kills what this run started and waits for it
    kill "${PIDS[@]}" 2>/dev/null || true
    PIDS=()
    wait 2>/dev/null || true
}

poll_harness() { # builds coordinator/examples/poll_latency/ -> sets HARNESS
    cargo build --release -q -p ksweep-coordinator --example poll_latency
    HARNESS="$PWD/target/release/examples/poll_latency"
}

start_worker() { # port threads
    "$K" worker --coordinator "http://127.0.0.1:$1" --threads "$2" 2>>"$WORK/worker.log" &
    PIDS+=("$!")
}

wait_done() { # port id
    # `watch` follows the progress stream to the end (one process, no
    # polling loop of client launches stealing CPU from the workers) and
    # exits non-zero unless the sweep ended done.
    "$K" watch "$2" --coordinator "http://127.0.0.1:$1" >/dev/null 2>"$WORK/watch.log" || {
        echo "the sweep did not end done:" >&2; cat "$WORK/watch.log" >&2; exit 1
    }
}

throughput() {
    small_spec "$WORK/small.toml"
    local port; port=$(free_port)
    start_coordinator "$WORK/small.db" "$port"
    start_worker "$port" 2
    local t0 id t1 tasks
    t0=$(now)
    id=$("$K" submit "$WORK/small.toml" --coordinator "http://127.0.0.1:$port" | tail -n 1)
    wait_done "$port" "$id"
    t1=$(now)
    tasks=$("$K" status "$id" --coordinator "http://127.0.0.1:$port" | awk '/^tasks/ { print $2 }')
    echo "## small-task throughput (8x8, w and w+; coordinator + 1 worker x 2 threads on this machine)"
    awk -v n="$tasks" -v a="$t0" -v b="$t1" 'BEGIN { printf "tasks %d in %.2f s: %.0f tasks/s persisted (target >= 200000)\n", n, b - a, n / (b - a) }'
    echo "coordinator CPU $(cpu_secs "$COORD") s, peak RSS $(hwm_mb "$COORD") MB"
    stop_all
}

overhead() {
    local spec=specs/bench-cpu.toml
    local t0 t1 t2 t3 port id
    t0=$(now)
    "$K" run "$spec" --db "$WORK/embedded.db" --threads 2 >/dev/null 2>&1
    t1=$(now)
    port=$(free_port)
    start_coordinator "$WORK/dist.db" "$port"
    start_worker "$port" 1
    start_worker "$port" 1
    t2=$(now)
    id=$("$K" submit "$spec" --coordinator "http://127.0.0.1:$port" | tail -n 1)
    wait_done "$port" "$id"
    t3=$(now)
    echo "## distributed overhead ($spec)"
    awk -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" 'BEGIN {
        e = b - a; x = d - c
        printf "ksweep run --threads 2: %.2f s; coordinator + 2 workers x 1 thread: %.2f s; ratio %.3f (target <= 1.05)\n", e, x, x / e }'
    "$K" table --db "$WORK/embedded.db" --format json | sed 's/"mean_micros":[^,]*,//; s/"median_micros":[^,]*,//' >"$WORK/a.json"
    "$K" table "$id" --coordinator "http://127.0.0.1:$port" --format json | sed 's/"mean_micros":[^,]*,//; s/"median_micros":[^,]*,//' >"$WORK/b.json"
    if cmp -s "$WORK/a.json" "$WORK/b.json"; then echo "tables identical (timings aside)"; else echo "TABLES DIFFER"; fi
    stop_all
}

memory() {
    local port id
    port=$(free_port)
    start_coordinator "$WORK/big.db" "$port"
    local before; before=$(rss_mb "$COORD")
    id=$("$K" submit specs/bench-1e8.toml --coordinator "http://127.0.0.1:$port" | tail -n 1)
    "$K" status "$id" --coordinator "http://127.0.0.1:$port" | sed -n '3p'
    start_worker "$port" 2
    sleep 5
    echo "## coordinator memory with a planned 10^8-task sweep (specs/bench-1e8.toml)"
    echo "RSS before submit $before MB; after submit and 5 s of work: $(rss_mb "$COORD") MB, peak $(hwm_mb "$COORD") MB (target < 200 MB)"
    "$K" status "$id" --coordinator "http://127.0.0.1:$port" | sed -n '3p'
    "$K" cancel "$id" --coordinator "http://127.0.0.1:$port" >/dev/null
    stop_all
}

dashboards() {
    small_spec "$WORK/small.toml"
    echo "## the small-task run with dashboards open (coordinator + 1 worker x 2 threads)"
    local open
    for open in 0 5; do
        local port http id t0 t1
        port=$(free_port)
        http=$(free_port)
        start_coordinator "$WORK/dash-$open.db" "$port" --http "127.0.0.1:$http"
        start_worker "$port" 2
        id=$("$K" submit "$WORK/small.toml" --coordinator "http://127.0.0.1:$port" | tail -n 1)
        # Pages: follow /events, fetch the sweep's data on each event.
        python3 - "$http" "$id" "$open" >"$WORK/pages.log" 2>&1 <<'PY' &
import sys, threading, time, urllib.request
http, sweep, pages = sys.argv[1], sys.argv[2], int(sys.argv[3])
latencies = []
def page():
    events = urllib.request.urlopen(f"http://127.0.0.1:{http}/events", timeout=600)
    for line in events:
        if line.startswith(b"event: change"):
            t = time.perf_counter()
            urllib.request.urlopen(f"http://127.0.0.1:{http}/api/sweeps/{sweep}", timeout=60).read()
            with lock:
                latencies.append(time.perf_counter() - t)
                l = sorted(latencies)
                print(f"{len(l)} page loads, mean {1000 * sum(l) / len(l):.1f} ms, p95 {1000 * l[int(0.95 * (len(l) - 1))]:.1f} ms", flush=True)
lock = threading.Lock()
for _ in range(pages):
    threading.Thread(target=page, daemon=True).start()
while True:
    time.sleep(1)
PY
        local pages=$!
        PIDS+=("$pages")
        t0=$(now)
        wait_done "$port" "$id"
        t1=$(now)
        awk -v o="$open" -v a="$t0" -v b="$t1" 'BEGIN { printf "%d dashboards: sweep %.2f s", o, b - a }'
        echo "; coordinator CPU $(cpu_secs "$COORD") s; pages: $(tail -n 1 "$WORK/pages.log" 2>/dev/null || echo none)"
        stop_all
    done
}

polls() {
    poll_harness
    echo "## Poll latency beside the dashboard (100 simulated workers, 300,000 results stored first)"
    local run
    for run in "0 0" "1 0" "0 4" "0 20"; do
        local pages=${run% *} downloads=${run#* } port http
        port=$(free_port)
        http=$(free_port)
        start_coordinator "$WORK/polls-$pages-$downloads.db" "$port" --http "127.0.0.1:$http"
        "$HARNESS" --coordinator "http://127.0.0.1:$port" --http "127.0.0.1:$http" --workers 100 \
            --pages "$pages" --downloads "$downloads" --fill 300000 --warmup-secs 12 --secs 30 2>/dev/null |
            grep -v '^results stored before'
        stop_all
    done
}

thousand() {
    poll_harness
    local port
    echo "## 1,000 workers on tiny tasks (targets: >= 200,000 results/s stored, Poll p99 < 100 ms, status p99 < 50 ms)"
    port=$(free_port)
    start_coordinator "$WORK/thousand.db" "$port"
    "$HARNESS" --coordinator "http://127.0.0.1:$port" --pid "$COORD" --workers 1000 \
        --n-from 1000 --n-to 1101 --starts 100000 --micros-per-cost 0.00045 --warmup-secs 10 --secs 20 2>/dev/null |
        grep -v '^results stored before'
    stop_all
}

case "${1:-all}" in
    throughput) throughput ;;
    overhead) overhead ;;
    memory) memory ;;
    dashboards) dashboards ;;
    polls) polls ;;
    thousand) thousand ;;
    all) throughput; overhead; memory; dashboards; polls; thousand ;;
    *) echo "usage: $0 [throughput|overhead|memory|dashboards|polls|thousand|all]" >&2; exit 2 ;;
esac
