"""Pictures and pages the command line draws (``ksweep plot``, ``ksweep
tour --format svg``, ``ksweep report``), shown inline in Jupyter."""

from __future__ import annotations

import os
from typing import Union


class _Document:
    """Text of one kind that Jupyter shows and :meth:`save` writes."""

    kind = "text"

    def __init__(self, text: str) -> None:
        self.text = text

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Writes the text to ``path``."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.text)

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"<knight_sweep.{type(self).__name__}: {self.kind}, {len(self.text)} bytes>"


class Figure(_Document):
    """An SVG picture (``.svg`` is its text)."""

    kind = "SVG"

    @property
    def svg(self) -> str:
        return self.text

    def _repr_svg_(self) -> str:
        return self.text


class Html(_Document):
    """An HTML document or fragment (``.html`` is its text)."""

    kind = "HTML"

    @property
    def html(self) -> str:
        return self.text

    def _repr_html_(self) -> str:
        return self.text
