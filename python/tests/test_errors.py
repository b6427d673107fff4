"""Bad input raises clear exceptions of the right kinds; nothing crashes."""

from __future__ import annotations

import sqlite3

import pytest

import knight_sweep as ks


def test_a_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError) as e:
        ks.open(tmp_path / "nope.db")
    assert isinstance(e.value, ks.NotFoundError)
    assert str(e.value) == f"--db: {tmp_path / 'nope.db'} does not exist"


def test_a_newer_schema_is_refused(tiny_db, tmp_path):
    newer = tmp_path / "newer.db"
    newer.write_bytes(tiny_db.read_bytes())
    with sqlite3.connect(newer) as db:
        db.execute("PRAGMA user_version = 999")
    with pytest.raises(ks.KsweepError, match="newer than this ksweep"):
        ks.open(newer).sweeps()


def test_an_unreachable_coordinator_is_a_connection_error():
    with pytest.raises(ConnectionError) as e:
        ks.connect("http://127.0.0.1:1")
    assert isinstance(e.value, ks.UnreachableError)
    assert "cannot connect to http://127.0.0.1:1" in str(e.value)


def test_a_wrong_token_is_a_permission_error(coordinator):
    with pytest.raises(PermissionError) as e:
        ks.connect(coordinator.url, token="not-the-token")
    assert isinstance(e.value, ks.TokenError)
    assert "--token" in str(e.value)


def test_an_unknown_sweep_is_not_found(tiny_db):
    with pytest.raises(ks.NotFoundError, match="no-such-sweep"):
        ks.open(tiny_db).results("no-such-sweep")


def test_bad_engine_arguments_name_the_field():
    with pytest.raises(ValueError, match="--method"):
        ks.tour(rule=(2, 1), shape=(8, 8), start=(0, 0), method="not-a-method")
    with pytest.raises(ks.KsweepError, match="row 1"):
        ks.eval([[0, 0], [9, 9]], rule=(2, 1), shape=(8, 8))
    with pytest.raises(ks.InvalidInputError, match="row 0.*negative"):
        ks.eval([[-1, 0]], rule=(2, 1), shape=(8, 8))
    with pytest.raises(ks.InvalidInputError, match="rows of 2 coordinates"):
        ks.eval([[0, 0, 0]], rule=(2, 1), shape=(8, 8))


def test_a_bad_spec_dict_names_the_field(tmp_path):
    handle = ks.open(tmp_path / "x.db", create=True)
    with pytest.raises(ks.InvalidInputError, match="starts"):
        handle.submit({"name": "bad", "starts": -3, "methods": ["w"], "grid": []})
    assert not (tmp_path / "x.db").exists(), "a refused spec creates no database"
