"""`mutate mutate` and `mutate ops` as a user runs them: a real subprocess, and real workers for --measure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mutator.mutation.operator import FAMILIES
from tests.integration.test_cli import GOOD, mutate

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "seeds" / "E2_exceptions" / "try_in_loop.py"
LOOP = ("import torch\n\n\ndef fn(x):\n    y = x + 1\n    for i in range(3):\n        y = y * 2\n    return y\n\n\n"
        "def inputs():\n    return (torch.ones(3),)\n")


def test_mutate_prints_diffs_named_by_provenance_and_the_same_seed_gives_the_same_mutants(tmp_path: Path):
    program = tmp_path / "loop.py"
    program.write_text(LOOP)
    first = mutate("mutate", str(program), "--op", "X.insert_graph_break", "--seed", "3", "-n", "2")
    assert first.returncode == 0, first.stderr
    assert first.stdout.count("# mutant ") == 2
    assert "# mutant 1: X.insert_graph_break@fn:" in first.stdout
    assert f"--- {program}" in first.stdout and "+    torch._dynamo.graph_break()" in first.stdout
    again = mutate("mutate", str(program), "--op", "X.insert_graph_break", "--seed", "3", "-n", "2")
    assert again.stdout == first.stdout


def test_mutate_by_family_uses_only_that_family(tmp_path: Path):
    program = tmp_path / "loop.py"
    program.write_text(LOOP)
    result = mutate("mutate", str(program), "--family", "C", "--seed", "1", "-n", "3")
    assert result.returncode == 0, result.stderr
    provenances = [line.split(": ", 1)[1] for line in result.stdout.splitlines() if line.startswith("# mutant ")]
    assert provenances and all(step.startswith("C.") for p in provenances for step in p.split("+"))


def test_mutate_usage_errors(tmp_path: Path):
    program = tmp_path / "loop.py"
    program.write_text(LOOP)
    unknown = mutate("mutate", str(program), "--op", "E2.no_such_operator")
    assert unknown.returncode == 2 and "unknown operator E2.no_such_operator" in unknown.stderr
    bad = tmp_path / "notes.py"
    bad.write_text("print('neither a harness nor a script that compiles')\n")
    neither = mutate("mutate", str(bad))
    assert neither.returncode == 2 and str(bad) in neither.stderr


def test_ops_lists_every_operator_with_at_least_three_per_leaf_class():
    result = mutate("ops", "--json")
    assert result.returncode == 0, result.stderr
    listed = json.loads(result.stdout)
    assert len({o["op"] for o in listed}) == len(listed)
    per_family = {f: sum(o["family"] == f for o in listed) for f in FAMILIES}
    assert all(n >= 3 for f, n in per_family.items() if f not in ("O", "X")), per_family
    assert all(o["description"] for o in listed)
    splices = {"S.splice_class", "S.splice_decorator", "S.splice_context_manager", "S.splice_container_subclass",
               "S.splice_helper"}
    assert splices <= {o["op"] for o in listed}
    table = mutate("ops", "--family", "E2")
    assert table.returncode == 0 and "E2." in table.stdout and "X." not in table.stdout


def test_ops_measure_runs_mutants_through_the_pool(tmp_path: Path):
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    (seeds / "loop.py").write_text(LOOP)
    (seeds / "flat.py").write_text(GOOD)
    result = mutate("ops", "--measure", str(seeds), "--op", "X.insert_graph_break", "--op", "C.through_generator",
                    "-j", "1", "--json")
    assert result.returncode == 0, result.stderr
    measured = {m["op"]: m for m in json.loads(result.stdout)}
    graph_break = measured["X.insert_graph_break"]
    assert graph_break["programs"] == 2 and graph_break["applicable"] >= 1
    assert 0 < graph_break["valid"] <= graph_break["mutants"]
