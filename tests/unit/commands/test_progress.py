"""Batch progress where stderr is no terminal."""

from __future__ import annotations

import io
import sys

from mutator.commands.progress import progress


def test_progress_writes_tqdm_lines_to_a_stream_that_is_no_terminal():
    log = io.StringIO()
    with progress(3, "checking", stream=log) as bar:
        for _ in range(3):
            bar.advance()
    text = log.getvalue()
    assert "checking" in text and "3/3" in text
    assert "\r" not in text and text.endswith("\n")  # one line per redraw, as a log keeps them


def test_progress_goes_to_stderr_and_is_silent_when_disabled(monkeypatch):
    stderr = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stderr)
    with progress(2, "validating", enabled=False) as bar:
        bar.advance(2)
    assert stderr.getvalue() == ""
    with progress(2, "validating") as bar:
        bar.advance(2)
    assert "validating" in stderr.getvalue() and "2/2" in stderr.getvalue()
