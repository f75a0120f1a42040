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


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise StorageError(f"{path}: cannot read ({exc}); move it aside or restore it") from None


def remove_stale_temporaries(root: Path) -> int:
    """Temp files left by a writer that was killed mid-write; returns how many were removed."""
    removed = 0
    for tmp in root.rglob(".*.tmp"):
        tmp.unlink(missing_ok=True)
        removed += 1
    return removed
