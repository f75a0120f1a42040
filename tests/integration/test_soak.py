"""Kill -9 at random moments, resume, again (bench/soak.py, here with 3 kills): nothing lost,
every JSON whole, no counter backwards, no process of the campaign left running."""

from __future__ import annotations

import importlib.util
import random
import shutil
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.soak]

ROOT = Path(__file__).resolve().parents[2]
SEEDS = [  # a quick mix: passing programs and one known finding (filed in the dry run)
    "E2_exceptions/attribute_access_try.py",
    "C_iterators/map_filter_zip_enumerate.py",
    "G1_value_guards/changing_scalar_args.py",
    "others/format_and_mappingproxy.py",
]


def _bench():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("soak", ROOT / "bench" / "soak.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules["soak"] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_three_random_kills_lose_nothing(tmp_path: Path):
    seeds = tmp_path / "seeds"
    for rel in SEEDS:
        (seeds / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / "seeds" / rel, seeds / rel)
    result = _bench().soak(seeds, tmp_path, kills=3, rng=random.Random(7))
    assert result.problems == [], "\n".join(result.kills + result.problems)
    assert len(result.kills) == 4 and result.findings >= 1 and result.execs > 6
