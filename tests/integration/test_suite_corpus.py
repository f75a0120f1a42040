"""`mutate fuzz --corpus TEST_FOLDER`: a folder of test files harvested on the fly, its
passing programs queued with their features (no second check), its failing tests filed, and
the harvest cached per file for the next campaign."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "tests" / "fixtures" / "harvest"


def fuzz(out: Path, cache: Path, *corpus: Path) -> subprocess.CompletedProcess[str]:
    args = [arg for path in corpus for arg in ("--corpus", str(path))]
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), "fuzz", "--no-ui", "-j", "2", "--no-reduce",
                           "--max-execs", "4", "--out", str(out), *args], capture_output=True, text=True,
                          timeout=900, cwd=ROOT, env={**os.environ, "MUTATOR_CACHE": str(cache)})


def harvested(stderr: str) -> tuple[int, int]:
    """(files, from the cache) of the 'harvested ...' line."""
    match = re.search(r"harvested .*: (\d+) files \((\d+) from the cache\)", stderr)
    assert match, stderr[-2000:]
    return int(match.group(1)), int(match.group(2))


@pytest.mark.soak  # a campaign harvesting a folder, twice: 40 s
def test_a_test_folder_is_harvested_into_the_queue_and_cached_per_file(tmp_path: Path):
    suite = tmp_path / "suite"
    shutil.copytree(SUITE, suite)
    cache = tmp_path / "cache"
    first = fuzz(tmp_path / "a", cache, suite)
    assert first.returncode in (0, 1), first.stderr[-3000:]
    files, cached = harvested(first.stderr)
    assert files >= 3 and cached == 0
    queue = tmp_path / "a" / "queue"
    seeds = [json.loads(p.read_text()) for p in queue.glob("id:*,orig:*.json")]
    assert any("test_pytest_style" in s["provenance"] for s in seeds), [s["provenance"] for s in seeds]
    assert all(s["features"] for s in seeds)  # queued with the features the harvest's check gave
    checks = json.loads((tmp_path / "a" / "stats.json").read_text())["counters"]["execs"]
    assert checks <= 4, "the harvested seeds were checked again (--max-execs 4 bounds the session, dry run included)"

    second = fuzz(tmp_path / "b", cache, suite)  # a second campaign on the same folder
    assert harvested(second.stderr) == (files, files)
    test_file = suite / "test_pytest_style.py"
    test_file.write_text(test_file.read_text() + "\n\n# changed\n")
    third = fuzz(tmp_path / "c", cache, suite)
    assert harvested(third.stderr) == (files, files - 1)  # only the changed file again
