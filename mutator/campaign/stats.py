"""The campaign's counters: the `counters` of stats.json, restored by a resumed session.

The loop counts what it checks; each lane counts its own work in its own fields here, so
that a session run without a lane (--no-reduce, no LLM) carries that lane's counts over
to the next one unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class FuzzStats:
    execs: int = 0  # programs checked, all sessions (seeds included)
    traced: int = 0  # of them, those whose compiled run was to record arcs (all but what --arc-share left out)
    kept: int = 0
    invalid: int = 0
    unstable: int = 0
    hits: int = 0  # bug verdicts, all signatures
    lost: int = 0
    elapsed: float = 0.0  # campaign seconds before this session
    sessions: int = 0
    last_new_path: float = 0.0
    last_finding: float = 0.0
    verdicts: dict[str, int] = field(default_factory=dict)
    reduced: int = 0  # findings reduced in the background
    merged: int = 0  # findings merged into another after reduction
    reduce_failed: int = 0  # reductions that ended without a result (the reason: last_reduce_error)
    last_reduce_error: str = ""
    repair_tried: int = 0  # invalid mutants a repair was tried for
    # what came of repaired, LLM-mutated and generated programs, by origin ("rule.define_name",
    # "llm" for repairs; "L" for LLM mutants; "generated" for seeds of mutate generate and their
    # descendants): asked (of the LLM), made, valid, kept, findings
    origins: dict[str, dict[str, int]] = field(default_factory=dict)
    last_llm_error: str = ""
    synced: int = 0  # queue entries imported from synced peers
    known: int = 0  # hits of signatures filed before (--known): counted in known.json, not filed
    stale: int = 0  # hits of signatures this campaign had filed many times (fuzzer.STALE_HITS) already
    rechecked: int = 0  # hits of known bugs left unconfirmed whose signature was filed here meanwhile

    def count(self, origin: str, **what: bool) -> None:
        """Tally what came of a program of `origin`: `count("llm", asked=True)`."""
        counts = self.origins.setdefault(origin, {})
        for key, yes in what.items():
            counts[key] = counts.get(key, 0) + int(yes)
