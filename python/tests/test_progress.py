"""The progress bar: the work's share, an ETA while tasks remain, never
going back."""

from __future__ import annotations

import io

from knight_sweep.progress import Bar, format_eta, line


def status(percent, done=10, total=100, state="running", eta=90.0):
    return {"name": "s", "state": state, "percent_of_work": percent, "progress": f"{percent} % of the work",
            "tasks_done": done, "tasks_total": total, "eta_seconds": eta}


def test_a_line_shows_the_work_and_the_eta():
    text = line(status(50.0))
    assert text.startswith("[###############---------------]") and text.endswith("ETA 2 min"), text
    assert "ETA" not in line(status(99.0, done=100)), "no ETA once every task is in"
    assert "ETA" not in line(status(100.0, done=100, state="done"))
    assert [format_eta(s) for s in (None, 42, 180, 5400)] == ["", "ETA 42 s", "ETA 3 min", "ETA 1.5 h"]


def test_the_bar_never_goes_back():
    out = io.StringIO()
    bar = Bar(stream=out, notebook=False)
    bar.update(status(40.0))
    bar.update(status(30.0))  # a status read late
    bar.close()
    last = out.getvalue().rsplit("\r", 1)[-1]
    assert last.startswith("[############------------------]"), last
