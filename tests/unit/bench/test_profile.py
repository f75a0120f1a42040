"""bench/profile.py's arms: which checkout and flags each campaign of a side-by-side profile takes."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
_path = list(sys.path)
_spec = importlib.util.spec_from_file_location("profile_bench", ROOT / "bench" / "profile.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)
sys.path[:] = _path  # the bench puts its checkout first on the path (its name would shadow the stdlib's profile)


def test_without_arms_one_campaign_of_this_checkout():
    assert bench.arms([]) == [("campaign", ROOT, [])]


def test_an_arm_names_a_checkout_and_flags_of_its_own(tmp_path: Path):
    (tmp_path / "cli.py").write_text("")
    found = bench.arms([f"before={tmp_path}", "after=", 'sampled=::--arc-share 0.25 --no-reduce'])
    assert found == [("before", tmp_path.resolve(), []), ("after", ROOT, []),
                     ("sampled", ROOT, ["--arc-share", "0.25", "--no-reduce"])]


def test_an_arm_without_a_checkout_is_refused(tmp_path: Path):
    with pytest.raises(SystemExit, match="NAME=\\[ROOT\\]"):
        bench.arms([f"x={tmp_path}"])
