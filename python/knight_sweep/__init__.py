"""knight-sweep from Python: sweeps' results as DataFrames, sweeps steered
from a notebook, and the engine in this process, all on the Rust code the
``ksweep`` command line runs.

>>> import knight_sweep as ks                      # doctest: +SKIP
>>> db = ks.open("ksweep.db")                      # doctest: +SKIP
>>> db.table()                                     # doctest: +SKIP
>>> ks.tour(rule=(3, 2), shape=(100, 100), start=(46, 39), method="aw+")  # doctest: +SKIP
"""

from ._native import __version__
from .engine import Evaluator, Existence, Tour, eval, exists, solve, tour
from .errors import InvalidInputError, KsweepError, NotFoundError, TokenError, UnreachableError
from .figure import Figure, Html
from .handle import Handle, connect, open


def cli(*args: str, stdin: bytes = b"") -> str:
    """Runs ``ksweep ARGS`` in this process and returns what it prints:
    ``ks.cli("check", "specs/quick.toml")``."""
    from . import _native

    return _native.invoke(list(args), stdin).decode("utf-8")


__all__ = [
    "__version__",
    "open",
    "connect",
    "Handle",
    "tour",
    "solve",
    "eval",
    "exists",
    "Evaluator",
    "Tour",
    "Existence",
    "Figure",
    "Html",
    "cli",
    "KsweepError",
    "NotFoundError",
    "UnreachableError",
    "TokenError",
    "InvalidInputError",
]
