"""Queue entries of the corpus, schedule and campaign directory tests."""

from __future__ import annotations

from mutator.campaign.corpus import CorpusEntry
from mutator.core.program import Program

from tests.unit.findings.helpers import PROGRAM


def entry(i: int, features, *, source: str = "", seconds: float = 0.1) -> CorpusEntry:
    program = Program.from_source(PROGRAM.source + source, f"e{i}.py")
    return CorpusEntry(id=i, program=program, features=frozenset(features), seconds=seconds, depth=0, parent=None,
                       provenance="seed")
