"""Atomic writes and one-line read errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from mutator.core import storage


def test_atomic_writes_leave_no_temporaries(tmp_path: Path):
    storage.write_json(tmp_path / "a" / "b.json", {"x": 1})
    assert storage.read_json(tmp_path / "a" / "b.json") == {"x": 1}
    assert not list((tmp_path / "a").glob(".*.tmp"))
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(storage.StorageError, match="bad.json: cannot read"):
        storage.read_json(tmp_path / "bad.json")
