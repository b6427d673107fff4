"""The exceptions knight-sweep raises.

Every one is a :class:`KsweepError` carrying the command line's one-line
message, and also the built-in exception a Python user would catch for its
kind (``FileNotFoundError`` for a missing file, ``ConnectionError`` for a
coordinator that does not answer, and so on).
"""

from __future__ import annotations


class KsweepError(Exception):
    """An error of knight-sweep, with the message ``ksweep`` would print."""


class NotFoundError(KsweepError, FileNotFoundError, LookupError):
    """A database file, sweep or other named thing that is not there."""


class UnreachableError(KsweepError, ConnectionError):
    """No coordinator answered at the address."""


class TokenError(KsweepError, PermissionError):
    """The coordinator refused the token (or none was given)."""


class InvalidInputError(KsweepError, ValueError):
    """Arguments, a spec or a value outside its limits."""


__all__ = ["KsweepError", "NotFoundError", "UnreachableError", "TokenError", "InvalidInputError"]
