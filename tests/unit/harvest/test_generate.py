"""Which findings' programs go into the prompts of `mutate generate` (no torch)."""

from __future__ import annotations

from pathlib import Path

from mutator.core import storage
from mutator.findings.finding import Finding
from mutator.findings.signature import Signature
from mutator.harvest.generate import Sibling, _siblings_for, finding_classes, siblings_from_findings


def finding(directory: str, *provenances: str) -> Finding:
    return Finding(Signature("CRASH", "KeyError", "", ""), "reason", directory,
                   history=[dict(provenance=p) for p in provenances],
                   variants={("seed x" if p.startswith("seed:") else p.split("@")[0]): {} for p in provenances})


def test_a_findings_classes_come_from_mutations_seeds_and_generation():
    assert finding_classes(finding("findings/a", "E2.wrap_in_try@fn:3+A3.swap_dunder@fn:9")) == {"E2", "A3"}
    assert finding_classes(finding("findings/b", "seed:seeds/B1_container_types/dict_sub.py")) == {"B1"}
    assert finding_classes(finding("findings/c", "generate:G2")) == {"G2"}
    assert finding_classes(finding("findings/d", "seed:elsewhere/repro.py", "X.insert_graph_break@fn:1")) == set()


def write_finding(campaign: Path, record: Finding, *, reduced: str | None, smallest: str | None) -> None:
    directory = campaign / record.directory
    storage.write_json(directory / "finding.json", record.as_json())
    for name, source in (("reduced.py", reduced), ("smallest.py", smallest)):
        if source is not None:
            storage.write_text(directory / name, source)


def test_siblings_are_the_classes_findings_reduced_programs_else_every_findings(tmp_path: Path):
    write_finding(tmp_path, finding("findings/e2-one", "E2.wrap_in_try@fn:1"), reduced="r1\n", smallest="s1\n")
    write_finding(tmp_path, finding("findings/e2-two", "generate:E2"), reduced=None, smallest="s2\n")
    write_finding(tmp_path, finding("findings/a3", "A3.swap_dunder@fn:1"), reduced="r3\n", smallest=None)
    write_finding(tmp_path, finding("findings/none", "E2.wrap_in_try@fn:1"), reduced=None, smallest=None)
    of_e2 = siblings_from_findings(tmp_path, "E2")
    assert [(Path(s.finding).name, Path(s.path).name, s.source, s.of_class) for s in of_e2] == [
        ("e2-one", "reduced.py", "r1\n", True), ("e2-two", "smallest.py", "s2\n", True)]
    of_g1 = siblings_from_findings(tmp_path, "G1")
    assert [(Path(s.finding).name, s.of_class) for s in of_g1] == [("a3", False), ("e2-one", False), ("e2-two", False)]
    assert siblings_from_findings(tmp_path / "empty", "E2") == []


def test_at_most_three_siblings_per_prompt_taken_in_turn():
    siblings = [Sibling(f"f{i}", f"f{i}/reduced.py", f"s{i}", True) for i in range(5)]
    assert _siblings_for(siblings[:2], 7) == tuple(siblings[:2])
    chosen = [[s.finding for s in _siblings_for(siblings, i)] for i in range(3)]
    assert chosen == [["f0", "f1", "f2"], ["f3", "f4", "f0"], ["f1", "f2", "f3"]]
