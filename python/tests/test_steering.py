"""A sweep steered from Python over gRPC: submitted, cancelled, resumed,
watched to its end; two sweeps compared."""

from __future__ import annotations

import knight_sweep as ks

#: Long enough on the fixture's one worker thread to be cancelled midway.
LONG = """
name = "py-long"
seed = 11
starts = 150
methods = ["w"]

[[grid]]
rule = [2, 1]
dims = [2]
n_range = { from = 100, to = 1000, step = 20 }
"""


def test_cancel_resume_and_watch(coordinator):
    handle = ks.connect(coordinator.url, token=coordinator.token)
    sweep = handle.submit(LONG)
    assert handle.status(sweep)["state"] == "running"
    cancelled = handle.cancel(sweep)
    assert cancelled["state"] == "cancelled", cancelled
    assert cancelled["tasks_done"] < cancelled["tasks_total"]
    resumed = handle.resume(sweep)
    assert resumed["state"] == "running", resumed
    last = handle.watch(sweep, progress=False, interval=0.2)
    assert last["state"] == "done" and last["tasks_done"] == last["tasks_total"], last
    listed = handle.sweeps()
    assert sweep in set(listed["sweep"])


def test_two_sweeps_compared(coordinator, tiny_db):
    handle = ks.connect(coordinator.url, token=coordinator.token)
    spec = {"name": "py-diff-a", "seed": 1, "starts": 5, "methods": ["w"],
            "grid": [{"rule": [2, 1], "dims": [2], "n_range": {"from": 6, "to": 7}}]}
    a = handle.run(spec, progress=False)
    b = handle.run({**spec, "name": "py-diff-b", "seed": 2}, progress=False)
    diff = handle.diff(a, b)
    assert len(diff) == 2, diff
    assert {"method"} <= set(diff.columns), diff.columns
