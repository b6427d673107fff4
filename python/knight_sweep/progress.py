"""A progress bar that works in a terminal and in Jupyter, fed by a
sweep's status (its share of the estimated work, as ``ksweep watch``
shows it, not its share of tasks)."""

from __future__ import annotations

import sys
from typing import Any, Optional


def _in_notebook() -> bool:
    try:
        from IPython import get_ipython  # type: ignore[import-not-found]
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and shell.__class__.__name__ == "ZMQInteractiveShell"


def format_eta(seconds: Optional[float]) -> str:
    """``ETA 42 s``, ``ETA 3 min``, ``ETA 1.5 h``; empty before one is known."""
    if seconds is None:
        return ""
    if seconds < 60:
        return f"ETA {seconds:.0f} s"
    if seconds < 3600:
        return f"ETA {seconds / 60:.0f} min"
    return f"ETA {seconds / 3600:.1f} h"


def line(status: dict, width: int = 30) -> str:
    """One line: a bar, the state, how far, and the ETA."""
    share = min(max(status.get("percent_of_work", 0.0) / 100.0, 0.0), 1.0)
    filled = int(round(share * width))
    bar = "#" * filled + "-" * (width - filled)
    unfinished = status.get("state") == "running" and status.get("tasks_done", 0) < status.get("tasks_total", 0)
    eta = format_eta(status.get("eta_seconds")) if unfinished else ""
    parts = [f"[{bar}]", status.get("name", ""), status.get("state", ""), status.get("progress", ""), eta]
    return " ".join(p for p in parts if p)


class Bar:
    """Shows one sweep's progress; ``update`` with each new status. The bar
    never goes back (a status read late cannot undo one read before)."""

    def __init__(self, stream: Any = None, notebook: Optional[bool] = None) -> None:
        self._stream = stream if stream is not None else sys.stderr
        self._notebook = _in_notebook() if notebook is None else notebook
        self._display: Any = None
        self._best = 0.0
        self._last = ""

    def update(self, status: dict) -> None:
        status = dict(status)
        self._best = max(self._best, status.get("percent_of_work", 0.0))
        status["percent_of_work"] = self._best
        text = line(status)
        if text == self._last:
            return
        self._last = text
        if self._notebook:
            from IPython.display import display, HTML  # type: ignore[import-not-found]

            html = HTML(_html(status, text))
            if self._display is None:
                self._display = display(html, display_id=True)
            else:
                self._display.update(html)
        else:
            self._stream.write("\r" + text + "\x1b[K")
            self._stream.flush()

    def close(self) -> None:
        if not self._notebook and self._last:
            self._stream.write("\n")
            self._stream.flush()


def _html(status: dict, text: str) -> str:
    import html

    share = min(max(status.get("percent_of_work", 0.0), 0.0), 100.0)
    return (
        f'<div><progress value="{share:.1f}" max="100" style="width:20em"></progress> '
        f"<code>{html.escape(text.split('] ', 1)[-1])}</code></div>"
    )
