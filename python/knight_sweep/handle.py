"""One kind of handle on knight-sweep's results and sweeps: a database file
(:func:`open`) or a coordinator (:func:`connect`). Reads go through the
same code as ``ksweep status``, ``table`` and ``export``; a file handle
submits by serving the file in this process, as ``ksweep run`` does."""

from __future__ import annotations

import io
import json
import os
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional, Union

import pandas as pd
import pyarrow as pa

from . import _native
from .errors import InvalidInputError, KsweepError
from .figure import Figure, Html
from .progress import Bar

PathLike = Union[str, "os.PathLike[str]"]
Spec = Union[PathLike, Dict[str, Any]]

#: Sweep states after which nothing more happens without a resume.
TERMINAL = ("done", "failed", "cancelled", "stopped")


class Handle:
    """A database file or a coordinator. Methods take ``sweep``: an id, a
    unique prefix of one, or a name; ``None`` means the only sweep there is.

    >>> h = ks.open("ksweep.db")          # doctest: +SKIP
    >>> h.sweeps()[["sweep", "name", "state"]]  # doctest: +SKIP
    """

    def __init__(self, flags: List[str], *, db: Optional[str] = None, threads: int = 0) -> None:
        self._flags = flags
        self._db = db
        self._threads = threads
        self._embedded: Optional[_native.Embedded] = None

    # -- where calls go -------------------------------------------------

    def _source(self) -> List[str]:
        """Flags of the reads: the coordinator while this handle serves its
        file (its live ETA), else the handle's own."""
        if self._embedded is not None:
            return ["--coordinator", self._embedded.url, "--token", self._embedded.token]
        return self._flags

    def _coordinator(self) -> List[str]:
        """Flags of the calls only a coordinator answers; a file handle
        starts serving its file for them."""
        if self._db is not None and self._embedded is None:
            self._embedded = _native.Embedded(self._db, self._threads)
        return self._source()

    def _invoke(self, *args: str) -> str:
        return _native.invoke(list(args)).decode("utf-8")

    # -- reading --------------------------------------------------------

    def sweeps(self) -> pd.DataFrame:
        """Every sweep, one row each, as ``ksweep status`` lists them."""
        rows = _native.sweeps(self._source())
        frame = pd.DataFrame(rows, columns=_SWEEP_COLUMNS)
        for column in ("created", "started", "finished"):
            frame[column] = pd.to_datetime(frame.pop(f"{column}_unix_ms"), unit="ms", utc=True)
        return frame

    def status(self, sweep: Optional[str] = None) -> Dict[str, Any]:
        """One sweep's status: state, tasks, share of the work, ETA."""
        return _native.status(self._source(), sweep)

    def arrow(self, sweep: Optional[str] = None) -> pa.Table:
        """Every task result as an Arrow table: the columns of ``ksweep
        export`` (docs/export.md), handed over without a copy per value."""
        return pa.table(_native.results(self._source(), sweep))

    def results(self, sweep: Optional[str] = None) -> pd.DataFrame:
        """Every task result as a DataFrame, sorted by (configuration, start,
        method), with the columns of ``ksweep export``."""
        return self.arrow(sweep).to_pandas()

    def table(
        self,
        sweep: Optional[str] = None,
        by: str = "methods",
        metric: str = "accuracy",
        rule: Optional[str] = None,
    ) -> pd.DataFrame:
        """The accuracy (or time) table of ``ksweep table --format csv
        --intervals``: one row per cell, with its Wilson interval."""
        args = ["table", *_opt(sweep), *self._source(), "--format", "csv", "--intervals"]
        args += ["--by", by, "--metric", metric, *(["--rule", rule] if rule else [])]
        return pd.read_csv(io.StringIO(self._invoke(*args)))

    def diff(self, a: str, b: str) -> pd.DataFrame:
        """Two sweeps compared per configuration and method (``ksweep diff
        --format csv``)."""
        return pd.read_csv(io.StringIO(self._invoke("diff", a, b, *self._source(), "--format", "csv")))

    def plot(self, sweep: Optional[str] = None, kind: str = "accuracy", **options: Any) -> Figure:
        """A figure of ``ksweep plot`` as SVG (shown inline in Jupyter).
        Options are its flags: ``plot(kind="time", rule="3,2")``."""
        args = ["plot", *_opt(sweep), *self._source(), "--kind", kind, "--format", "svg"]
        for key, value in options.items():
            flag = "--" + key.replace("_", "-")
            args += [flag] if value is True else [flag, str(value)]
        return Figure(self._invoke(*args))

    def report(self, sweep: Optional[str] = None) -> Html:
        """The sweep's report (``ksweep report``) as one HTML document."""
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "report.html")
            self._invoke("report", *_opt(sweep), *self._source(), "-o", path)
            with io.open(path, encoding="utf-8") as f:
                return Html(f.read())

    # -- steering -------------------------------------------------------

    def submit(self, spec: Spec, *, reuse: bool = True, quiet: bool = False) -> str:
        """Submits a sweep spec (a file's path, TOML text, or a dict) and
        returns its id at once; :meth:`watch` follows it. Says on stderr
        what it submitted and what is left to run, unless ``quiet``. A file
        handle serves its file in this process until :meth:`close`."""
        text = spec_text(spec)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "spec.toml")
            with io.open(path, "w", encoding="utf-8") as f:
                f.write(text)
            out = self._invoke("submit", path, *self._coordinator(), *([] if reuse else ["--no-reuse"]))
        *described, sweep = out.strip().splitlines()  # `ksweep submit` prints the id last
        if not quiet and described:
            print("\n".join(described), file=sys.stderr)
        return sweep.strip()

    def watch(self, sweep: Optional[str] = None, *, progress: bool = True, interval: float = 0.5) -> Dict[str, Any]:
        """Follows a sweep until it ends, with a progress bar (terminal or
        Jupyter); returns its last status. Ctrl-C stops watching, not the
        sweep."""
        bar = Bar() if progress else None
        try:
            while True:
                status = self.status(sweep)
                if bar is not None:
                    bar.update(status)
                if status["state"] in TERMINAL:
                    return status
                time.sleep(interval)
        finally:
            if bar is not None:
                bar.close()

    def run(self, spec: Spec, *, reuse: bool = True, progress: bool = True) -> str:
        """Submits a spec and watches it to its end; returns its id. A
        failed sweep raises :class:`KsweepError` with its reason. Run again,
        a spec goes on from the results its database holds (as ``ksweep
        run`` resumes)."""
        sweep = self.submit(spec, reuse=reuse, quiet=not progress)
        last = self.watch(sweep, progress=progress)
        if last["state"] == "failed":
            raise KsweepError(f"sweep {sweep} failed: {last.get('error') or 'see its status'}")
        return sweep

    def cancel(self, sweep: Optional[str] = None) -> Dict[str, Any]:
        """Cancels a running sweep; returns its status."""
        self._invoke("cancel", *_opt(sweep), *self._coordinator())
        return self.status(sweep)

    def resume(self, sweep: Optional[str] = None) -> Dict[str, Any]:
        """Runs a cancelled, stopped or failed sweep again from where it
        stopped; returns its status."""
        self._invoke("resume", *_opt(sweep), *self._coordinator())
        return self.status(sweep)

    def close(self) -> None:
        """Stops serving the file (a file handle that submitted); the
        results stay in it. A coordinator handle has nothing to close."""
        if self._embedded is not None:
            embedded, self._embedded = self._embedded, None
            embedded.stop()

    def __enter__(self) -> "Handle":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self) -> str:
        if self._db is not None:
            serving = f", serving at {self._embedded.url}" if self._embedded is not None else ""
            return f"<knight_sweep.Handle file {self._db!r}{serving}>"
        return f"<knight_sweep.Handle coordinator {self._flags[1]!r}>"


_SWEEP_COLUMNS = [
    "sweep",
    "name",
    "state",
    "tasks_done",
    "tasks_total",
    "successes",
    "configurations",
    "seed",
    "created_unix_ms",
    "started_unix_ms",
    "finished_unix_ms",
    "shards_failed",
    "error",
    "percent_of_work",
    "progress",
    "eta_seconds",
    "rate_per_sec",
]


def _opt(sweep: Optional[str]) -> List[str]:
    return [] if sweep is None else [sweep]


def spec_text(spec: Spec) -> str:
    """A spec as TOML text: a dict is converted (and checked), text with a
    newline or ``=`` is TOML already, anything else is a file's path."""
    if isinstance(spec, dict):
        return _native.spec_toml(json.dumps(spec))
    if isinstance(spec, str) and ("\n" in spec or "=" in spec):
        return spec
    path = os.fspath(spec)
    if not os.path.exists(path):
        raise InvalidInputError(f"spec: {path} is neither a file nor TOML text")
    with io.open(path, encoding="utf-8") as f:
        return f.read()


def open(path: PathLike, *, create: bool = False, threads: int = 0) -> Handle:  # noqa: A001
    """A handle on a database file (``ksweep run``'s ``ksweep.db``). A
    missing file is :class:`NotFoundError` unless ``create``; a file of a
    newer schema is refused. ``threads``: the worker's, when it submits."""
    path = os.fspath(path)
    handle = Handle(["--db", path], db=path, threads=threads)
    if not (create and not os.path.exists(path)):
        _native.sweeps(handle._flags)  # checks the file: there, readable, a schema we read
    return handle


def connect(
    url: str = "http://127.0.0.1:50051",
    token: Optional[str] = None,
    *,
    token_file: Optional[PathLike] = None,
    tls_ca: Optional[PathLike] = None,
) -> Handle:
    """A handle on a coordinator; checked at once (an address nobody
    answers is :class:`UnreachableError`, a refused token
    :class:`TokenError`). Without ``token``, ``KSWEEP_TOKEN`` as in the
    shell."""
    flags = ["--coordinator", url]
    if token is not None:
        flags += ["--token", token]
    if token_file is not None:
        flags += ["--token-file", os.fspath(token_file)]
    if tls_ca is not None:
        flags += ["--tls-ca", os.fspath(tls_ca)]
    handle = Handle(flags)
    _native.sweeps(flags)
    return handle
