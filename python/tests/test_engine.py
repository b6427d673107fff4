"""The engine in process agrees with `ksweep tour` and `ksweep eval`."""

from __future__ import annotations

import json

import numpy as np
import pytest

import knight_sweep as ks

from conftest import run


def test_a_tour_is_a_path_through_every_cell():
    t = ks.tour(rule=(3, 2), shape=(20, 20), start=(4, 7), method="aw+")
    assert t.success and t.outcome == "tour"
    assert t.path.shape == (400, 2)
    assert tuple(t.path[0]) == (4, 7)
    assert len({tuple(c) for c in t.path}) == 400
    steps = np.abs(np.diff(t.path, axis=0))
    assert all(sorted(s) == [2, 3] for s in steps.tolist())
    assert "<svg" in t._repr_svg_()


def test_eval_equals_ksweep_eval(ksweep, tmp_path):
    starts = np.array([[x, y] for x in range(8) for y in range(8)])
    frame = ks.eval(starts, rule=(2, 1), shape=(8, 8), methods="w,aw+")
    lines = "".join(f"{x},{y}\n" for x, y in starts)
    cli = subprocess_eval(ksweep, tmp_path, lines)
    assert len(frame) == len(cli) == 128
    for (_, row), line in zip(frame.iterrows(), cli):
        assert [row["x0"], row["x1"]] == line["start"]
        assert row["method"] == line["method"]
        assert bool(row["success"]) == line["success"]
        assert row["outcome"] == line["outcome"]
        assert row["visited"] == line["visited"]


def subprocess_eval(ksweep, tmp_path, lines):
    import subprocess

    out = subprocess.run(
        [ksweep, "eval", "--rule", "2,1", "--shape", "8x8", "--method", "w,aw+"],
        input=lines, capture_output=True, text=True, check=True,
    ).stdout
    return [json.loads(line) for line in out.splitlines()]


def test_eval_of_every_cell_by_default():
    frame = ks.eval(rule=(2, 1), shape=(5, 6), methods="w")
    assert len(frame) == 30
    assert set(zip(frame["x0"], frame["x1"])) == {(x, y) for x in range(5) for y in range(6)}


def test_exists_answers_with_proofs():
    e = ks.exists(rule=(2, 1), shape=(8, 8))
    assert e.open_tour is True, e.text
    e = ks.exists(rule=(2, 1), shape=(3, 3))
    assert e.open_tour is False, e.text


def test_solve_proves_no_tour_on_a_small_board():
    t = ks.solve(rule=(2, 1), shape=(4, 4), start=(0, 0))
    assert t.outcome == "no-tour" and not t.success


def test_eval_releases_the_gil():
    import threading

    starts = np.zeros((20_000, 2), dtype=np.int64)
    runner = threading.Thread(target=ks.eval, args=(starts,), kwargs=dict(rule=(2, 1), shape=(60, 60), threads=1))
    runner.start()
    spins = 0
    while runner.is_alive():
        spins += 1
    runner.join()
    # Held for the whole walk, this thread would not have run at all.
    assert spins > 10_000, spins


def test_any_command_runs_in_process(tmp_path):
    assert ks.cli("--version").startswith("ksweep ")
    spec = tmp_path / "s.toml"
    spec.write_text('name = "c"\nseed = 1\nstarts = 2\nmethods = ["w"]\n[[grid]]\nrule = [2, 1]\ndims = [2]\nn_range = { from = 5, to = 6 }\n')
    assert "tasks" in ks.cli("check", str(spec))
    with pytest.raises(ks.InvalidInputError, match="unrecognized subcommand|unexpected"):
        ks.cli("no-such-command")
