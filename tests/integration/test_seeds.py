"""The shipped seed corpus: every seed is valid and stable; known findings stay known."""

from __future__ import annotations

import json
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from mutator.core.program import ProgramForm, load_programs
from mutator.core.verdict import Verdict

pytestmark = pytest.mark.integration

SEEDS = Path(__file__).resolve().parents[2] / "seeds"
LEAF_CLASSES = ["A1", "A2", "A3", "A4", "B1", "B2", "C", "D", "E1", "E2", "E3", "E4", "F1", "F2", "G1", "G2", "G3"]


@pytest.fixture(scope="module")
def seed_results(checker):
    programs, errors = load_programs([SEEDS])
    assert errors == []
    with ThreadPoolExecutor(max_workers=4) as executor:
        results = list(executor.map(checker.check, programs))
    return {Path(r.program.name).relative_to(SEEDS).as_posix(): r for r in results}


def test_every_leaf_class_has_at_least_three_harness_seeds():
    programs, _ = load_programs([SEEDS])
    harness = Counter(Path(p.name).parent.name.split("_")[0] for p in programs if p.form is ProgramForm.HARNESS)
    assert all(harness[leaf] >= 3 for leaf in LEAF_CLASSES), harness
    assert sum(harness[leaf] for leaf in LEAF_CLASSES) >= 51
    assert harness["others"] >= 1


def test_every_seed_is_valid_and_stable(seed_results):
    bad = {name: f"{r.verdict.name}: {r.reason}" for name, r in seed_results.items()
           if r.verdict in (Verdict.INVALID, Verdict.UNSTABLE)}
    assert bad == {}


def test_findings_are_exactly_the_known_ones(seed_results, pool):
    """Per torch release: Dynamo fixes bugs (2.14 passes a crash of 2.13) and changes how others show."""
    release = ".".join(pool.build.torch.split(".")[:2])
    known = json.loads((SEEDS / "known_findings.json").read_text())
    assert release in known, (f"seeds/known_findings.json lists no findings for torch {release}: judge the seeds "
                              "on it (mutate run seeds/) and add what they find")
    found = {name: r.verdict.name for name, r in seed_results.items() if r.verdict is not Verdict.PASS}
    assert found == known[release]


def test_every_seed_starts_with_its_class_docstring():
    programs, _ = load_programs([SEEDS])
    for p in programs:
        leaf = Path(p.name).parent.name.split("_")[0]
        expected = "Others" if leaf == "others" else leaf
        assert p.source.startswith(f'"""{expected}:'), p.name
