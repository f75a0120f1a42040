"""Progress of long batch work (checking, validating, generating, measuring) on stderr.

On a terminal it is rich's bar, redrawn in place and gone when the work is done. In a log
or CI, where stderr is no terminal, rich draws nothing, so there it is a tqdm bar that
writes a plain line at most every `LOG_INTERVAL` seconds, and a last one at the end.
Disabled (`--json`) it writes nothing at all.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Protocol

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from tqdm import tqdm

LOG_INTERVAL = 5.0  # seconds: a line every few seconds in a log, not one per program


class Bar(Protocol):
    def advance(self, n: int = 1) -> None: ...


@contextmanager
def progress(total: int | None, description: str, *, enabled: bool = True,
             stream: IO[str] | None = None) -> Iterator[Bar]:
    """A bar for `total` steps (None: unknown) on `stream` (default: stderr)."""
    if not enabled:
        yield _Silent()
        return
    stream = sys.stderr if stream is None else stream
    console = Console(file=stream)
    if console.is_terminal:
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=console, transient=True) as bar:
            yield _RichBar(bar, bar.add_task(description, total=total))
    else:
        with tqdm(total=total, desc=description, file=_Lines(stream), ascii=True, mininterval=LOG_INTERVAL) as bar:
            yield _TqdmBar(bar)


class _Silent:
    def advance(self, n: int = 1) -> None:
        pass


class _RichBar:
    def __init__(self, progress: Progress, task: TaskID) -> None:
        self._progress, self._task = progress, task

    def advance(self, n: int = 1) -> None:
        self._progress.advance(self._task, n)


class _TqdmBar:
    def __init__(self, bar: tqdm) -> None:
        self._bar = bar

    def advance(self, n: int = 1) -> None:
        self._bar.update(n)


class _Lines:
    """tqdm's stream in a log: each redraw a line of its own. tqdm redraws in place with a
    carriage return, which a log file keeps as one ever longer line."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._line_open = False

    def write(self, text: str) -> int:
        if text.startswith("\r"):
            text = ("\n" if self._line_open else "") + text[1:].rstrip(" ")
        if text:
            self._stream.write(text)
            self._line_open = not text.endswith("\n")
        return len(text)

    def flush(self) -> None:
        self._stream.flush()
