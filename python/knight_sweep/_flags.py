"""Python values as the command line's flags: one translation, so a call
and its ``ksweep`` equivalent name the same board."""

from __future__ import annotations

from typing import Iterable, Optional, Sequence, Tuple, Union

Coords = Sequence[int]
Rule = Union[str, Sequence[int]]
Shape = Union[str, Sequence[int]]
Moves = Union[str, Iterable[Sequence[int]]]


def joined(values: Union[str, Iterable[int]], sep: str) -> str:
    """``(3, 2)`` as ``"3,2"`` (``sep`` between); text as given."""
    if isinstance(values, str):
        return values
    return sep.join(str(int(v)) for v in values)


def board(
    rule: Optional[Rule] = None,
    shape: Optional[Shape] = None,
    *,
    moves: Optional[Moves] = None,
    dims: Optional[int] = None,
    n: Optional[int] = None,
    seed: Optional[int] = None,
) -> list:
    """The board flags of ``ksweep tour`` and ``ksweep eval``."""
    flags: list = []
    if rule is not None:
        flags += ["--rule", joined(rule, ",")]
    if moves is not None:
        text = moves if isinstance(moves, str) else " ".join(joined(m, ",") for m in moves)
        flags += ["--moves", text]
    if shape is not None:
        flags += ["--shape", joined(shape, "x")]
    if dims is not None:
        flags += ["--dims", str(int(dims))]
    if n is not None:
        flags += ["--n", str(int(n))]
    if seed is not None:
        flags += ["--seed", str(int(seed))]
    return flags


def limits(budget: Optional[int] = None, iterations: Optional[int] = None, closed: bool = False) -> list:
    """The limits of the exact and neural methods (``--budget``, ...)."""
    flags: list = []
    if budget is not None:
        flags += ["--budget", str(int(budget))]
    if iterations is not None:
        flags += ["--iterations", str(int(iterations))]
    if closed:
        flags.append("--closed")
    return flags


def methods(value: Union[str, Sequence[str]]) -> Tuple[str, ...]:
    """``"w,aw+"`` or ``["w", "aw+"]`` as a tuple of names."""
    if isinstance(value, str):
        return tuple(m.strip() for m in value.split(",") if m.strip())
    return tuple(value)
