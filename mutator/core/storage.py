"""Deliberately simple storage: atomic whole-file writes (temp file, fsync, rename).

A reader never sees half a file, whatever kills the writer: the campaign directory is
always either the old state or the new one.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


class StorageError(ValueError):
    """A file in a campaign directory that cannot be read; the message names it."""


def write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def write_text(path: Path, text: str) -> None:
    write_bytes(path, text.encode("utf-8"))


def write_json(path: Path, value: Any) -> None:
    write_text(path, json.dumps(value, indent=2, sort_keys=False) + "\n")


def append_line(path: Path, line: str, *, header: str = "") -> None:
    """Append one line with one write (a kill leaves whole lines only); `header` starts a new file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        if header and os.fstat(fd).st_size == 0:
            line = header + line
        os.write(fd, line.encode("utf-8"))
    finally:
        os.close(fd)


def read_lines_json(path: Path) -> list[Any]:
    """The JSON lines of a file written by `append_line`; a torn or foreign line is skipped."""
    rows = []
    if path.exists():
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return rows


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise StorageError(f"{path}: cannot read ({exc}); move it aside or restore it") from None


def one_line(exc: BaseException) -> str:
    """An exception's message for a one-line error: its last line, at most 200 characters."""
    text = str(exc).strip().splitlines()
    return (text[-1] if text else type(exc).__name__)[:200]


def remove_stale_temporaries(root: Path) -> int:
    """Temp files left by a writer that was killed mid-write; returns how many were removed."""
    removed = 0
    for tmp in root.rglob(".*.tmp"):
        tmp.unlink(missing_ok=True)
        removed += 1
    return removed
