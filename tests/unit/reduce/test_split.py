"""One finding per bug: variants of a finding that reduce to another program are split off
into findings of their own, whole or not at all. A scripted reducer, no runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mutator.judge.check import CheckResult
from mutator.findings.signature import Signature
from mutator.findings.store import FindingStore
from mutator.judge.oracle import Judgement
from mutator.core.program import Program
from mutator.findings.canonical import canonical_digest
from mutator.reduce.problem import ReductionStats
from mutator.reduce.reducer import NotReproduced, Reduction
from mutator.findings.needs import needed_constructs
from mutator.reduce.split import Reduced, same_bug, split_variants
from mutator.core.verdict import Verdict

from tests.helpers import compiled_run, exc, run

HEADER = "import torch\n\n\ndef inputs():\n    return (torch.randn(1),)\n\n\n"
BUG_A = HEADER + "def fn(x):\n    y = x + 1\n    return format(1, '03d'),\n"
BUG_A_RENAMED = BUG_A.replace("y = x", "h = x").replace("'03d'", "'05d'")
BUG_B = HEADER + "def fn(x):\n    z = x.tolist()\n    return len(z),\n"


def crash(source: str, name: str) -> CheckResult:
    judgement = Judgement(Verdict.CRASH, "the compiled run raised TypeError", exception=exc("TypeError", dynamo=True))
    return CheckResult(Program.from_source(source, name), judgement, (run(), compiled_run()))


class ScriptedReducer:
    """Reduces each program to what `to` says for a line of it; NotReproduced for `gone`."""

    def __init__(self, to: dict[str, str], gone: str = "", slow: str = "") -> None:
        self.to = to
        self.gone = gone
        self.slow = slow  # its reduction runs out of time
        self.expected: list[Signature] = []

    def reduce(self, program, *, expect=None, time_limit=None, on_progress=None):  # type: ignore[no-untyped-def]
        self.expected.append(expect)
        if self.gone and self.gone in program.source:
            raise NotReproduced(f"{program.name}: PASS, not a finding")
        reduced = next(source for marker, source in self.to.items() if marker in program.source)
        stats = ReductionStats(timed_out=bool(self.slow) and self.slow in program.source)
        return Reduction(program, Program.from_source(reduced, program.name), expect, crash(reduced, program.name),
                         True, stats, 1.0)


def campaign(root: Path):
    """A finding with smallest.py and four variants (triggers A1, B1, C1, D1), reduced to BUG_A."""
    store = FindingStore(root)
    for n, op in enumerate(("A1", "B1", "C1", "D1", "E1")):
        source = BUG_A + f"# variant {op}\n" + "#" * (10 * n) + "\n"
        finding, _ = store.record(crash(source, f"{op}.py"), provenance=f"{op}.some_op@fn:1", parent=n,
                                  elapsed=float(n))
    finding.reduction = dict(confirmed=True, source=BUG_A, canonical=canonical_digest(BUG_A), lines_before=9,
                             lines_after=7, chars_before=200, chars_after=len(BUG_A), seconds=3.0, checks=12,
                             matters=dict(needed=["`format`"]))
    store.save(finding)
    return store, finding


def explain(reduction: Reduction) -> dict:
    """What matters in a scripted reduction: BUG_B needs `tolist`, BUG_A `format`."""
    return dict(needed=["`tolist`"] if "tolist" in reduction.reduced.source else ["`format`"])


def test_variants_of_another_bug_are_split_off_together_and_the_rest_stay(tmp_path: Path):
    store, finding = campaign(tmp_path)
    reducer = ScriptedReducer({"variant B1": BUG_A_RENAMED, "variant C1": BUG_B, "variant D1": BUG_B + "\n# again\n",
                               "variant E1": BUG_A}, gone="variant E1")
    outcomes = split_variants(reducer, store, finding, limit=4,  # A1 is smallest.py itself: not reduced again
                              explain=explain)
    assert {o.key: o.verdict for o in outcomes} == {"B1": "same bug", "C1": "split", "D1": "split",
                                                   "E1": "does not reproduce"}
    assert all(expect == finding.signature for expect in reducer.expected)
    directory = f"{finding.directory}-split1"
    assert {o.into for o in outcomes if o.verdict == "split"} == {directory}
    record = json.loads((tmp_path / directory / "finding.json").read_text())
    assert record["signature"]["part"] == "split1" and record["split_from"] == finding.directory
    assert set(record["variants"]) == {"C1", "D1"} and record["hits"] == 2 and len(record["history"]) == 2
    assert record["reduction"]["confirmed"] and record["reduction"]["canonical"] == canonical_digest(BUG_B)
    assert (tmp_path / directory / "reduced.py").read_text() == BUG_B
    assert {p.name for p in (tmp_path / directory).iterdir()} >= {"first.py", "smallest.py", "variants", "README.md"}
    assert len(list((tmp_path / directory / "variants").iterdir())) == 2
    original = json.loads((tmp_path / finding.directory / "finding.json").read_text())
    assert set(original["variants"]) == {"A1", "B1", "E1"} and original["hits"] == 3
    assert original["split_into"] == [directory] and "signature" in original and "part" not in original["signature"]
    assert len(list((tmp_path / finding.directory / "variants").iterdir())) == 3
    reloaded = FindingStore(tmp_path)
    assert len(reloaded.findings) == 2 and not (tmp_path / ".split-tmp").exists()
    split = reloaded.at(tmp_path / directory)
    assert split is not None and split.signature.base() == finding.signature
    assert "(split1)" in split.signature.describe() and "split from" in (tmp_path / directory / "README.md").read_text()


def test_a_split_a_kill_cuts_short_leaves_no_finding_half_written(tmp_path: Path, monkeypatch):
    store, finding = campaign(tmp_path)
    before = (tmp_path / finding.directory / "finding.json").read_text()
    monkeypatch.setattr(Path, "rename", lambda self, target: (_ for _ in ()).throw(KeyboardInterrupt()))
    with pytest.raises(KeyboardInterrupt):
        split_variants(ScriptedReducer({"variant": BUG_B}), store, finding, limit=1, explain=explain)
    monkeypatch.undo()
    assert (tmp_path / finding.directory / "finding.json").read_text() == before
    assert len(FindingStore(tmp_path).findings) == 1  # the staged copy is not a finding
    store, finding = FindingStore(tmp_path), next(iter(FindingStore(tmp_path).findings.values()))
    [outcome] = split_variants(ScriptedReducer({"variant": BUG_B}), store, finding, limit=1, explain=explain)
    assert outcome.verdict == "split" and len(FindingStore(tmp_path).findings) == 2


def test_an_unreduced_finding_or_no_limit_splits_nothing(tmp_path: Path):
    store, finding = campaign(tmp_path)
    assert split_variants(ScriptedReducer({"variant": BUG_B}), store, finding, limit=0) == []
    finding.reduction = {}
    assert split_variants(ScriptedReducer({"variant": BUG_B}), store, finding, limit=3) == []


def test_same_bug_by_form_by_containment_and_by_what_matters():
    a, b = Reduced.of(BUG_A), Reduced.of(BUG_B)
    assert same_bug(a, Reduced.of(BUG_A_RENAMED))
    assert same_bug(a, b)  # other programs alone are no evidence of another bug: variants of one reduce apart
    larger = Reduced.of(BUG_A + "\n\ndef helper():\n    return 1\n")
    assert same_bug(a, larger) and same_bug(larger, a)  # the reducer stopped at a larger program of it
    needs = frozenset({"a `dict` subclass"})
    assert same_bug(Reduced.of(BUG_A, needs), Reduced.of(BUG_B, needs))  # the analysis says the same thing matters
    assert not same_bug(Reduced.of(BUG_A, needs), Reduced.of(BUG_B, frozenset({"`fullgraph=True`"})))
    assert same_bug(Reduced.of(BUG_A, needs), Reduced.of(BUG_B, needs | {"`fullgraph=True`"}))  # a need shared
    assert same_bug(Reduced.of(BUG_A, needs), b)  # only one analysed: nothing tells them apart


def test_what_matters_is_read_defensively():
    assert needed_constructs({}) is None and needed_constructs({"matters": "garbled"}) is None
    assert needed_constructs({"matters": {"needed": ["x", "y"], "rows": []}}) == {"x", "y"}
    rows = [dict(construct="x", verdict="needed"), dict(construct="y", verdict="not needed"), dict(verdict="needed")]
    assert needed_constructs({"matters": rows}) == {"x"}
    assert needed_constructs({"matters": {"needed": []}}) is None  # nothing found needed tells nothing apart


def test_a_variant_whose_reduction_ran_out_of_time_is_never_split(tmp_path: Path):
    store, finding = campaign(tmp_path)
    outcomes = split_variants(ScriptedReducer({"variant": BUG_B}, slow="variant C1"), store, finding, limit=2,
                              explain=explain)
    assert {o.key: o.verdict for o in outcomes} == {"B1": "split", "C1": "not reduced to the end"}
    assert "C1" in json.loads((tmp_path / finding.directory / "finding.json").read_text())["variants"]


def test_what_matters_is_compared_without_the_program_s_own_names():
    # seen on a real finding: one malformed namedtuple __len__ in classes named Point and _Pair
    one = needed_constructs({"matters": {"needed": ["`Point.__len__`"]}})
    other = needed_constructs({"matters": {"needed": ["a `RecordingMode` block", "`_Pair.__len__`"]}})
    assert same_bug(Reduced.of(BUG_A, one), Reduced.of(BUG_B, other))
    assert needed_constructs({"matters": {"needed": ["a `torch.no_grad` block", "`torch.func.vmap`"]}}) == {
        "a `torch.no_grad` block", "`torch.func.vmap`"}
