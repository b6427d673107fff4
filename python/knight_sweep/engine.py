"""The engine in this process: one tour, many starts at once, what is
proven about a board. The same code and flags as ``ksweep tour``, ``ksweep
eval`` and ``ksweep exists``."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence, Tuple, Union

import numpy as np
import pandas as pd

from . import _flags, _native
from ._flags import Moves, Rule, Shape
from .figure import Figure

ArrayLike = Any


@dataclass(frozen=True)
class Tour:
    """One method's walk from one start (``ksweep tour --format json``)."""

    moves: str
    shape: Tuple[int, ...]
    method: str
    start: Tuple[int, ...]
    seed: int
    closed: bool
    success: bool
    outcome: str
    attempts: int
    visited: int
    micros: int
    #: The cells in order, one row of coordinates each (empty without a path).
    path: np.ndarray = field(repr=False)
    _args: Tuple[str, ...] = field(repr=False, compare=False, default=())

    def svg(self) -> Figure:
        """The picture of ``ksweep tour --format svg``."""
        return Figure(_native.invoke(["tour", *self._args, "--format", "svg"]).decode("utf-8"))

    def _repr_svg_(self) -> str:
        return self.svg().svg


def tour(
    rule: Optional[Rule] = None,
    shape: Optional[Shape] = None,
    start: Sequence[int] = (0, 0),
    method: str = "w",
    *,
    moves: Optional[Moves] = None,
    seed: int = 0,
    budget: Optional[int] = None,
    iterations: Optional[int] = None,
    closed: bool = False,
) -> Tour:
    """Runs ``method`` from ``start`` and returns the walk.

    >>> t = ks.tour(rule=(3, 2), shape=(100, 100), start=(46, 39), method="aw+")  # doctest: +SKIP
    >>> t.success, t.path.shape  # doctest: +SKIP
    (True, (10000, 2))
    """
    args = _flags.board(rule, shape, moves=moves, seed=seed)
    args += ["--start", _flags.joined(start, ","), "--method", method]
    args += _flags.limits(budget, iterations, closed)
    got = json.loads(_native.invoke(["tour", *args, "--format", "json"]))
    path = np.asarray(got["path"], dtype=np.int64).reshape(-1, len(got["shape"]))
    return Tour(
        moves=got["moves"],
        shape=tuple(got["shape"]),
        method=got["method"],
        start=tuple(got["start"]),
        seed=got["seed"],
        closed=got["closed"],
        success=got["success"],
        outcome=got["outcome"],
        attempts=got["attempts"],
        visited=got["visited"],
        micros=got["micros"],
        path=path,
        _args=tuple(args),
    )


def solve(
    rule: Optional[Rule] = None,
    shape: Optional[Shape] = None,
    start: Sequence[int] = (0, 0),
    *,
    moves: Optional[Moves] = None,
    closed: bool = False,
    budget: Optional[int] = None,
) -> Tour:
    """The exact solver from ``start``: a tour, a proof there is none
    (``outcome == "no-tour"``), or ``gave-up`` past ``budget``."""
    return tour(rule, shape, start, "solve", moves=moves, closed=closed, budget=budget)


class Evaluator:
    """A board and its methods, set up once, to run many batches of starts
    (what :func:`eval` does per call)."""

    def __init__(
        self,
        rule: Optional[Rule] = None,
        shape: Optional[Shape] = None,
        methods: Union[str, Sequence[str]] = "w",
        *,
        moves: Optional[Moves] = None,
        seed: int = 0,
        budget: Optional[int] = None,
        iterations: Optional[int] = None,
        closed: bool = False,
        threads: Optional[int] = None,
    ) -> None:
        args = _flags.board(rule, shape, moves=moves, seed=seed)
        args += ["--method", ",".join(_flags.methods(methods)), *_flags.limits(budget, iterations, closed)]
        if threads is not None:
            args += ["--threads", str(int(threads))]
        self._native = _native.Evaluator(args)

    @property
    def shape(self) -> Tuple[int, ...]:
        return tuple(self._native.shape)

    @property
    def methods(self) -> Tuple[str, ...]:
        return tuple(self._native.methods)

    def run(self, starts: Optional[ArrayLike] = None) -> pd.DataFrame:
        """Every method from every start (rows of coordinates; ``None``:
        every cell of the board, the last axis fastest). One row per (start, method): the start's
        coordinates ``x0, x1, ...``, then method, success, outcome,
        attempts, visited and micros, in input order."""
        dims = len(self.shape)
        if starts is None:
            starts = np.indices(self.shape).reshape(dims, -1).T
        array = np.ascontiguousarray(np.asarray(starts, dtype=np.int64))
        if array.ndim == 1 and array.size == dims:
            array = array.reshape(1, dims)
        if array.ndim != 2 or array.shape[1] != dims:
            raise _invalid(f"starts: expected rows of {dims} coordinates, got an array of shape {array.shape}")
        got = self._native.run(array)
        per = len(self.methods)
        frame = pd.DataFrame({f"x{axis}": np.repeat(array[:, axis], per) for axis in range(dims)})
        frame["method"] = pd.Categorical.from_codes(np.tile(np.arange(per), len(array)), categories=list(self.methods))
        frame["success"] = got["success"]
        frame["outcome"] = pd.Categorical.from_codes(got["outcome"].astype(np.int8), categories=self._native.outcomes)
        for column in ("attempts", "visited", "micros"):
            frame[column] = got[column]
        return frame


def eval(  # noqa: A001 - the name of `ksweep eval`
    starts: Optional[ArrayLike] = None,
    rule: Optional[Rule] = None,
    shape: Optional[Shape] = None,
    methods: Union[str, Sequence[str]] = "w",
    **options: Any,
) -> pd.DataFrame:
    """Runs methods from many starts at once, in parallel, the GIL released
    (``ksweep eval``): see :meth:`Evaluator.run`.

    >>> ks.eval([[0, 0], [3, 4]], rule=(2, 1), shape=(8, 8), methods="w,aw+")  # doctest: +SKIP
    """
    return Evaluator(rule, shape, methods, **options).run(starts)


@dataclass(frozen=True)
class Existence:
    """What is proven about open and closed tours of a board (``ksweep
    exists``): each a verdict (``exists``, ``impossible`` or ``unknown``)
    with its reason: a citation, a tour found, or machine-checked proofs."""

    open: str
    open_reason: str
    closed: str
    closed_reason: str
    text: str = field(repr=False)

    @property
    def open_tour(self) -> Optional[bool]:
        """True, False, or None where it is unknown."""
        return _VERDICTS.get(self.open)

    @property
    def closed_tour(self) -> Optional[bool]:
        """True, False, or None where it is unknown."""
        return _VERDICTS.get(self.closed)

    def __str__(self) -> str:
        return self.text


_VERDICTS = {"exists": True, "impossible": False}


def exists(
    rule: Optional[Rule] = None,
    shape: Optional[Shape] = None,
    *,
    moves: Optional[Moves] = None,
    budget: str = "5s",
) -> Existence:
    """What is proven about tours of a board: from the shipped atlas, a
    theorem, or a search within ``budget``.

    >>> ks.exists(rule=(2, 1), shape=(4, 4)).open_tour  # doctest: +SKIP
    False
    """
    args = _flags.board(rule, shape, moves=moves) + ["--budget", budget]
    text = _native.invoke(["exists", *args]).decode("utf-8")
    found = {}
    for line in text.splitlines():
        key, _, rest = line.partition(" ")
        verdict, _, reason = rest.strip().partition(": ")
        found[key] = (verdict, reason)
    (o, o_reason), (c, c_reason) = found.get("open", ("", "")), found.get("closed", ("", ""))
    return Existence(open=o, open_reason=o_reason, closed=c, closed_reason=c_reason, text=text)


def _invalid(message: str) -> Exception:
    from .errors import InvalidInputError

    return InvalidInputError(message)
