"""Results and tables from a file and from a coordinator equal what the CLI
prints for the same sweep."""

from __future__ import annotations

import io
import json

import pandas as pd
import pyarrow as pa
import pytest

import knight_sweep as ks

from conftest import SPEC, run


def cli_export(ksweep: str, db, *flags: str) -> pd.DataFrame:
    out = run(ksweep, "export", "--db", str(db), "--format", "csv", *flags, cwd=db.parent).stdout
    return pd.read_csv(io.StringIO(out), dtype=str, keep_default_na=False)


def as_csv_values(frame: pd.DataFrame) -> pd.DataFrame:
    """The DataFrame's values as the CSV writes them: lists as JSON text,
    booleans as true/false, a missing value as empty."""
    out = frame.copy()
    for column in ("shape", "start"):
        out[column] = [json.dumps([int(v) for v in cell], separators=(",", ":")) for cell in out[column]]
    out["success"] = out["success"].map({True: "true", False: "false"})
    out["moves"] = out["moves"].fillna("")
    out["n"] = out["n"].astype("Int64").astype(str).replace("<NA>", "")
    return out.astype(str)


def test_results_equal_the_csv_export(ksweep, tiny_db):
    frame = ks.open(tiny_db).results()
    csv = cli_export(ksweep, tiny_db)
    assert list(frame.columns) == list(csv.columns)
    assert len(frame) == len(csv) == 5 * 6 * 2
    pd.testing.assert_frame_equal(as_csv_values(frame), csv, check_dtype=False)


def test_arrow_is_typed_and_shares_the_batches(tiny_db):
    handle = ks.open(tiny_db)
    table = handle.arrow()
    assert isinstance(table, pa.Table)
    assert table.schema.field("success").type == pa.bool_()
    assert table.schema.field("micros").type == pa.uint64()
    assert table.schema.field("start").type == pa.list_(pa.uint32())
    assert table.num_rows == 60


def test_table_equals_the_cli_table(ksweep, tiny_db):
    frame = ks.open(tiny_db).table()
    out = run(ksweep, "table", "--db", str(tiny_db), "--format", "csv", "--intervals", cwd=tiny_db.parent).stdout
    pd.testing.assert_frame_equal(frame, pd.read_csv(io.StringIO(out)))
    assert len(frame) > 0


def test_sweeps_lists_the_sweep(tiny_db):
    sweeps = ks.open(tiny_db).sweeps()
    assert list(sweeps["name"]) == ["py-tiny"]
    row = sweeps.iloc[0]
    assert row["state"] == "done" and row["tasks_done"] == row["tasks_total"] == 60
    assert str(sweeps["created"].dtype).startswith("datetime64")


def test_a_sweep_submitted_over_grpc_gives_the_table_of_ksweep_run(ksweep, tiny_db, coordinator):
    handle = ks.connect(coordinator.url, token=coordinator.token)
    sweep = handle.submit(SPEC)
    last = handle.watch(sweep, progress=False)
    assert last["state"] == "done", last
    remote = handle.table(sweep)
    local = ks.open(tiny_db).table()
    pd.testing.assert_frame_equal(remote, local)
    # And the results streamed from the coordinator equal the file's.
    flags = ["sweep", "worker", "worker_version", "worker_host", "worker_cpu", "worker_features", "computed_by", "micros"]
    a = handle.results(sweep).drop(columns=flags)
    b = ks.open(tiny_db).results().drop(columns=flags)
    pd.testing.assert_frame_equal(a, b)


def test_a_file_handle_submits_watches_and_reads(tmp_path):
    with ks.open(tmp_path / "new.db", create=True, threads=1) as handle:
        spec = {"name": "from-a-dict", "seed": 3, "starts": 4, "methods": ["w"],
                "grid": [{"rule": [2, 1], "dims": [2], "n_range": {"from": 5, "to": 6}}]}
        sweep = handle.run(spec, progress=False)
        assert handle.status(sweep)["state"] == "done"
    # Served no more: the file alone answers.
    again = ks.open(tmp_path / "new.db")
    assert list(again.sweeps()["name"]) == ["from-a-dict"]
    assert len(again.results()) == 2 * 4


def test_a_figure_renders_as_svg(tiny_db):
    figure = ks.open(tiny_db).plot(kind="accuracy")
    assert figure._repr_svg_().lstrip().startswith("<svg") or "<svg" in figure.svg[:200]
