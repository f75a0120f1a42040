"""Every new finding reduced while the fuzzer goes on (`mutator.reduce.background`).

At the start, the findings an earlier session left unreduced are queued (a peer's are the
peer's to reduce); then each new one as it is filed. The reductions run on their own
thread through the campaign's pool, within their share of it; each loop turn the finished
ones are recorded here, in the loop's thread, which owns the findings: findings that
reduce to one program merge. At the stop, the reduction in flight ends and what finished
is recorded; the rest is reduced next session.
"""

from __future__ import annotations

from typing import Any

from mutator.campaign.lane import Lane, Loop
from mutator.findings.finding import Finding
from mutator.reduce.background import BackgroundReduction


class ReductionLane(Lane):
    def __init__(self, reductions: BackgroundReduction) -> None:
        self.reductions = reductions

    def start(self, loop: Loop) -> None:
        for finding in sorted(loop.filing.store.findings.values(), key=lambda f: f.first_seen):
            if not finding.known_from:
                self.reductions.submit(finding)

    def filed(self, loop: Loop, finding: Finding, *, new: bool) -> None:
        if new:
            self.reductions.submit(finding)

    def poll(self, loop: Loop) -> tuple[()]:
        store, stats = loop.filing.store, loop.stats
        loop.cpu.add_all(self.reductions.take_cpu().seconds.items())
        for directory, outcome in self.reductions.completed():
            finding = store.at(loop.campaign.root / directory)
            if outcome.error or outcome.reduction is None:
                stats.reduce_failed += 1
                stats.last_reduce_error = f"{directory}: {outcome.error}"[:500]
                continue
            if finding is None:
                continue
            before = len(store.findings)
            loop.filing.reduced(finding, outcome)
            stats.reduced += 1
            stats.merged += before - len(store.findings)
        return ()

    def stop(self, loop: Loop) -> None:
        self.reductions.close()
        self.poll(loop)

    def snapshot(self) -> dict[str, Any]:
        return dict(reducing=self.reductions.pending)
