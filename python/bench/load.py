"""Times the Python package beside what a pandas user would do otherwise
(issue 63), all in one run so the ratios compare like with like:

1. a sweep's results into a DataFrame: ``ks.open(db).results()`` and
   ``ks.connect(url).results()`` against ``pandas.read_parquet`` of the same
   sweep's ``ksweep export --format parquet``;
2. ``ks.eval`` against ``ksweep eval`` on the same starts and threads.

    python python/bench/load.py --db big.db [--ksweep target/release/ksweep]

Make ``big.db`` with ``ksweep run specs/bench-1m-results.toml --db big.db``
(a million results). Prints medians of ``--repeat`` runs, alternated.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time

import numpy as np
import pandas as pd

import knight_sweep as ks


def timed(f):
    began = time.perf_counter()
    value = f()
    return time.perf_counter() - began, value


def median_times(runs: dict, repeat: int) -> dict:
    """Each callable run `repeat` times, alternated; median seconds."""
    times = {name: [] for name in runs}
    for _ in range(repeat):
        for name, f in runs.items():
            times[name].append(timed(f)[0])
    return {name: statistics.median(t) for name, t in times.items()}


def serve(ksweep: str, db: str, token: str):
    proc = subprocess.Popen(
        [ksweep, "coordinator", "--listen", "127.0.0.1:0", "--db", db, "--token", token],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    address = re.search(r"listening on (\S+)", proc.stdout.readline()).group(1)
    return proc, f"http://{address}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", required=True)
    parser.add_argument("--ksweep", default="target/release/ksweep")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--eval-starts", type=int, default=200_000)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        parquet = os.path.join(tmp, "results.parquet")
        export_s, _ = timed(lambda: subprocess.run(
            [args.ksweep, "export", "--db", args.db, "--format", "parquet", "-o", parquet], check=True))
        served = os.path.join(tmp, "served.db")
        shutil.copy(args.db, served)
        proc, url = serve(args.ksweep, served, "bench-token")
        try:
            remote = ks.connect(url, token="bench-token")
            local = ks.open(args.db)
            rows = len(local.results())
            assert len(remote.results()) == rows == len(pd.read_parquet(parquet))
            load = median_times({
                "ks.open(db).results()": local.results,
                "ks.connect(url).results()": remote.results,
                "pandas.read_parquet(export)": lambda: pd.read_parquet(parquet),
            }, args.repeat)
        finally:
            proc.kill()
            proc.wait()

        print(f"## {rows:,} results into a DataFrame (median of {args.repeat}; export to Parquet took {export_s:.2f} s)")
        base = load["pandas.read_parquet(export)"]
        for name, s in load.items():
            print(f"{name:<30} {s:7.3f} s   {s / base:5.2f}x read_parquet")

        # eval: the same starts on a (2,1) 100x100 board, W, both on `threads`.
        rng = np.random.default_rng(1)
        starts = rng.integers(0, 100, size=(args.eval_starts, 2))
        path = os.path.join(tmp, "starts.txt")
        np.savetxt(path, starts, fmt="%d", delimiter=",")
        board = dict(rule=(2, 1), shape=(100, 100), methods="w", threads=args.threads)
        evaluator = ks.Evaluator(**board)

        def cli():
            with open(path) as f:
                subprocess.run([args.ksweep, "eval", "--rule", "2,1", "--shape", "100x100", "--method", "w",
                                "--threads", str(args.threads)], stdin=f, stdout=subprocess.DEVNULL, check=True)

        throughput = median_times({
            "ks.eval (one call)": lambda: ks.eval(starts, **board),
            "ks.Evaluator.run": lambda: evaluator.run(starts),
            "ksweep eval (stdin to /dev/null)": cli,
        }, args.repeat)
        print(f"\n## eval: {args.eval_starts:,} starts, (2,1) 100x100, W, {args.threads} threads (median of {args.repeat})")
        base = throughput["ksweep eval (stdin to /dev/null)"]
        for name, s in throughput.items():
            print(f"{name:<34} {s:7.3f} s  {args.eval_starts / s:12,.0f} starts/s   {base / s:5.2f}x the CLI's rate")


if __name__ == "__main__":
    main()
