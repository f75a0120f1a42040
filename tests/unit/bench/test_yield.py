"""bench/yield.py: a trial's distinct root causes from its finding directories."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from mutator.core import storage
from mutator.findings.finding import Finding
from mutator.findings.known import KnownBugs
from mutator.findings.signature import Signature

ROOT = Path(__file__).resolve().parents[3]
_spec = importlib.util.spec_from_file_location("yield_bench", ROOT / "bench" / "yield.py")
bench = importlib.util.module_from_spec(_spec)
sys.modules["yield_bench"] = bench  # its dataclasses look their module up
_spec.loader.exec_module(bench)

PROGRAM = "import torch\n\ndef fn(x):\n    return x + {n}\n\ndef inputs():\n    return (torch.ones(1),)\n"


def _finding(root: Path, name: str, signature: Signature, *, at: float, source: str | None = None,
             needed: list[str] | None = None, provenance: str = "E2.wrap_in_try@fn:3") -> None:
    reduction = {}
    if source is not None:
        reduction = dict(confirmed=True, source=source, matters=dict(needed=needed or []))
    finding = Finding(signature=signature, reason="r", directory=f"findings/{name}", hits=1, smallest_size=10,
                      first_seen=at, reduction=reduction, history=[dict(at=at, provenance=provenance)])
    storage.write_json(root / "findings" / name / "finding.json", finding.as_json())
    storage.write_text(root / "findings" / name / "smallest.py", PROGRAM.format(n=1))


def test_one_reduced_program_under_two_signatures_is_one_root_cause(tmp_path: Path) -> None:
    crash = Signature("CRASH", "InternalTorchDynamoError", "torch/_dynamo/variables/builder.py:_wrap")
    mismatch = Signature("MISMATCH", observation="result:value:Tensor")
    _finding(tmp_path, "a", crash, at=30.0, source=PROGRAM.format(n=1))
    _finding(tmp_path, "b", mismatch, at=90.0, source=PROGRAM.format(n=2))  # literals aside, the same form
    _finding(tmp_path, "c", Signature("FULLGRAPH_BREAK", "Unsupported", "x"), at=10.0)  # low severity: not counted
    trial = bench.Trial("guided", 1, tmp_path)
    bench.count_trial(trial, None)
    assert trial.frontend_signatures == 2
    assert len(trial.causes) == 1 and trial.causes[0]["at"] == 30.0


def test_what_matters_joins_forms_of_one_kind_and_unreduced_findings_stand_alone(tmp_path: Path) -> None:
    one = Signature("MISMATCH", observation="result:value:Tensor")
    two = Signature("MISMATCH", observation="globals:value:int")
    three = Signature("CRASH", "TypeError", "torch/_dynamo/symbolic_convert.py:step")
    _finding(tmp_path, "a", one, at=5.0, source="def fn(x):\n    return {**x}\n", needed=["a `dict` subclass"])
    _finding(tmp_path, "b", two, at=6.0, source="def fn(x, y):\n    return sorted(x)\n", needed=["a `dict` subclass"])
    _finding(tmp_path, "c", three, at=7.0)  # not reduced: its signature stands for it
    trial = bench.Trial("guided", 1, tmp_path)
    bench.count_trial(trial, None)
    assert len(trial.causes) == 2 and trial.unreduced == 1
    assert sorted(len(c["signatures"]) for c in trial.causes) == [1, 2]


def test_a_configuration_alone_needed_joins_only_forms_that_fail_alike(tmp_path: Path) -> None:
    from mutator.core.configurations import CONFIGURATIONS, FORCED

    forced = [CONFIGURATIONS[FORCED].construct()]
    resume = Signature("CRASH", "AssertionError", "torch/_dynamo/resume_execution.py:generate")
    _finding(tmp_path, "a", resume, at=5.0, source="def fn(x):\n    return -x\n", needed=forced)
    _finding(tmp_path, "b", Signature("CRASH", "KeyError", "torch/_dynamo/eval_frame.py:compile_wrapper"), at=6.0,
             source="def fn(x, y):\n    return sorted(x)\n", needed=forced)  # another bug of the same setting
    _finding(tmp_path, "c", Signature("CRASH", "AssertionError", "torch/_dynamo/resume_execution.py:other"),
             at=7.0, source="def fn(x):\n    return [x]\n", needed=forced)  # fails as "a" does: one cause
    dedup = [CONFIGURATIONS["graph-dedup"].construct()]  # wrong results: one cause whatever diverges
    _finding(tmp_path, "d", Signature("MISMATCH", observation="result:value:Tensor"), at=8.0,
             source="def fn(x):\n    return x * 2\n", needed=dedup)
    _finding(tmp_path, "e", Signature("MISMATCH", observation="globals:shape:Tensor"), at=9.0,
             source="def fn(x, y):\n    return x[:y]\n", needed=dedup)
    trial = bench.Trial("axis", 1, tmp_path)
    bench.count_trial(trial, None)
    assert sorted(len(c["signatures"]) for c in trial.causes) == [1, 2, 2]


def test_a_cause_known_before_is_not_new(tmp_path: Path) -> None:
    earlier, now = tmp_path / "earlier", tmp_path / "now"
    seen = Signature("CRASH", "KeyError", "torch/_dynamo/variables/dicts.py:getitem")
    _finding(earlier, "old", seen, at=1.0, source=PROGRAM.format(n=3))
    _finding(now, "old-again", seen, at=2.0, source="def fn(x):\n    return x\n")
    _finding(now, "fresh", Signature("CRASH", "TypeError", "torch/_dynamo/x.py:y"), at=3.0,
             source="def fn(x):\n    return -x\n")
    trial = bench.Trial("guided", 1, now)
    bench.count_trial(trial, KnownBugs.load([earlier]))
    assert len(trial.causes) == 2 and trial.new_causes == 1


def test_causes_a_seed_showed_are_told_from_the_mutants_and_by_their_operators_families(tmp_path: Path) -> None:
    _finding(tmp_path, "seeded", Signature("MISMATCH", observation="result:value:str"), at=4.0,
             source="def fn(x):\n    return format(x, 'b')\n", provenance="seed:seeds/D/format.py")
    _finding(tmp_path, "spliced", Signature("CRASH", "TypeError", "torch/_dynamo/x.py:y"), at=50.0,
             source="def fn(x):\n    return -x\n",
             provenance="S.splice_decorator@fn:18+E2.wrap_in_try@fn:20+S.splice_helper@fn:2")
    trial = bench.Trial("guided", 1, tmp_path)
    bench.count_trial(trial, None)
    assert len(trial.causes) == 2 and trial.mutant_causes == 1
    [mutant] = [c for c in trial.causes if not c["seed"]]
    assert mutant["families"] == ["E2", "S"]


def test_side_by_side_gives_each_configuration_s_rates_and_its_ratios_to_the_first(tmp_path: Path) -> None:
    def trial(config: str, seed: int, execs: int, causes: int):
        t = bench.Trial(config, seed, tmp_path / f"{config}-{seed}")
        t.execs, t.causes = execs, [{}] * causes
        return t

    trials = [trial("before", 1, 1000, 4), trial("before", 2, 1200, 6), trial("after", 1, 2300, 5),
              trial("after", 2, 2100, 5)]
    lines = bench.side_by_side(trials, ["before", "after"], hours=0.5)
    assert lines[0].startswith("  before: checks per CPU-hour 2200.0 ±") and "root causes per CPU-hour   10.0 ±  2.8 [8-12]" in lines[0]
    assert lines[1].startswith("  after: checks per CPU-hour 4400.0 ±")
    assert lines[2] == ("after/before: checks per CPU-hour = 2.00  (goal >= 2), "
                        "distinct root causes per CPU-hour = 1.00  (goal >= 1)")
