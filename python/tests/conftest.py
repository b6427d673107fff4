"""Fixtures: the ksweep binary (the CLI the package must agree with), a
small finished sweep in a database file, and a coordinator with a worker
on loopback."""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: A sweep of a few seconds: (2,1) on N = 5..9, two methods, 6 starts each.
SPEC = """
name = "py-tiny"
seed = 7
starts = 6
methods = ["w", "aw+"]

[[grid]]
rule = [2, 1]
dims = [2]
n_range = { from = 5, to = 9 }
"""


@pytest.fixture(scope="session")
def ksweep() -> str:
    """The ksweep binary built from this tree (KSWEEP_BIN overrides)."""
    path = os.environ.get("KSWEEP_BIN") or str(ROOT / "target" / "release" / "ksweep")
    if not os.path.exists(path):
        pytest.fail(f"no ksweep binary at {path}: build it (cargo build --release -p ksweep) or set KSWEEP_BIN")
    return path


def run(ksweep: str, *args: str, cwd: Path, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run([ksweep, *args], cwd=cwd, capture_output=True, text=True, check=check, timeout=600)


@pytest.fixture(scope="session")
def tiny_db(ksweep: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database holding one finished sweep, run by the CLI."""
    d = tmp_path_factory.mktemp("tiny")
    (d / "tiny.toml").write_text(SPEC)
    run(ksweep, "run", "tiny.toml", "--db", "tiny.db", "--threads", "2", cwd=d)
    return d / "tiny.db"


class Coordinator:
    """`ksweep coordinator` and one `ksweep worker` on loopback."""

    def __init__(self, ksweep: str, directory: Path, token: str) -> None:
        self.token = token
        self.dir = directory
        log = open(directory / "coordinator.log", "w")
        self.proc = subprocess.Popen(
            [ksweep, "coordinator", "--listen", "127.0.0.1:0", "--db", str(directory / "c.db"), "--token", token],
            cwd=directory,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
        )
        line = self.proc.stdout.readline()
        match = re.search(r"listening on (\S+)", line)
        if not match:
            self.proc.kill()
            raise RuntimeError(f"the coordinator said {line!r}")
        self.url = f"http://{match.group(1)}"
        self.worker = subprocess.Popen(
            [ksweep, "worker", "--threads", "1", "--coordinator", self.url, "--token", token],
            cwd=directory,
            stdout=subprocess.DEVNULL,
            stderr=open(directory / "worker.log", "w"),
        )
        for _ in range(100):
            if run(ksweep, "health", "--coordinator", self.url, "--token", token, cwd=directory, check=False).returncode == 0:
                return
            time.sleep(0.1)
        raise RuntimeError("the coordinator never answered")

    def stop(self) -> None:
        for proc in (self.worker, self.proc):
            proc.kill()
            proc.wait()


@pytest.fixture(scope="session")
def coordinator(ksweep: str, tmp_path_factory: pytest.TempPathFactory):
    c = Coordinator(ksweep, tmp_path_factory.mktemp("coordinator"), "py-test-token")
    yield c
    c.stop()
