"""`mutate run` as a user runs it: a real subprocess, real workers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
GOOD = "import torch\ndef fn(x):\n    return x * 2\ndef inputs():\n    return (torch.ones(2),)\n"
BUGGY = ("import torch\ndef fn(x):\n    if torch.compiler.is_compiling():\n        return x + 1\n"
         "    return x * 1\ndef inputs():\n    return (torch.ones(2),)\n")


def mutate(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), *args], capture_output=True, text=True,
                          timeout=600, cwd=ROOT)


def test_run_json_exit_status_and_bad_files(tmp_path: Path):
    (tmp_path / "good.py").write_text(GOOD)
    (tmp_path / "buggy.py").write_text(BUGGY)
    (tmp_path / "notes.py").write_text("x = 1\n")
    (tmp_path / "binary.py").write_bytes(b"\xff\xfe\x00")
    result = mutate("run", str(tmp_path), "--json", "-j", "2")
    assert result.returncode == 1, result.stderr
    rows = {Path(r["path"]).name: r for r in json.loads(result.stdout)}
    assert set(rows) == {"good.py", "buggy.py"}
    assert rows["good.py"]["verdict"] == "PASS" and rows["buggy.py"]["verdict"] == "MISMATCH"
    assert {"path", "verdict", "reason", "seconds"} <= set(rows["good.py"])
    assert "notes.py: defines neither" in result.stderr
    assert "binary.py: not UTF-8 text" in result.stderr


def test_run_table_and_clean_exit(tmp_path: Path):
    (tmp_path / "good.py").write_text(GOOD)
    result = mutate("run", str(tmp_path / "good.py"), "-j", "1")
    assert result.returncode == 0, result.stderr
    assert "PASS" in result.stdout and "good.py" in result.stdout


def test_usage_errors_exit_2(tmp_path: Path):
    assert mutate("run", str(tmp_path / "missing.py")).returncode == 2
    (tmp_path / "notes.py").write_text("x = 1\n")
    assert mutate("run", str(tmp_path / "notes.py")).returncode == 2
