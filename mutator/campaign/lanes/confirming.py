"""Every new frontend finding judged on other torches while the campaign runs (`mutate fuzz
--confirm-on PATH`), so that the end of the run says what is live on the newest torch.

A finding is judged once it is what it will be reported as: reduced (its reduced program
and its smallest one, and its repro.py), or as it is where no reduction is coming
(`--no-reduce`) or none came within `patience` campaign seconds (a reduction that failed,
or waits behind others), and at the stop whatever waits. The judging (`mutator.report.version_judge`) runs on a
thread of its own, on the campaign's own torch and on each torch `--confirm-on` names; what
it gives is written into the finding's record here, in the loop's thread, which owns the
findings. A finding merged into another meanwhile is dropped. At the stop, the judgement in
flight is awaited; findings not judged yet are judged next session (or by `mutate versions`).
"""

from __future__ import annotations

from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from mutator.campaign.lane import Lane, Loop
from mutator.core.build import Build
from mutator.findings.finding import Finding
from mutator.report.version_judge import VersionJudge
from mutator.report.versions import Versions

PATIENCE = 600.0  # campaign seconds a new finding waits for its reduction before it is judged as it is


class ConfirmLane(Lane):
    def __init__(self, judge: VersionJudge, builds: list[Build], *, reducing: bool, patience: float = PATIENCE) -> None:
        """`builds`: the torches `judge` judges on. `reducing`: new findings are reduced in the
        background, so each waits for its reduction, at most `patience` campaign seconds."""
        self.judge = judge
        self.newest = max(builds, key=lambda build: build.release_key())
        self.reducing = reducing
        self.patience = patience
        self._waiting: dict[str, tuple[Finding, float]] = {}  # directory -> finding, since when, until judged
        self._judging: dict[str, Future[Versions]] = {}
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mutator-confirm")
        self.judged = 0
        self.last_error = ""

    def start(self, loop: Loop) -> None:
        for finding in loop.filing.store.findings.values():  # what an earlier session left unjudged
            if _wanted(finding):
                self._waiting[finding.directory] = (finding, loop.now())

    def filed(self, loop: Loop, finding: Finding, *, new: bool) -> None:
        if new and _wanted(finding):
            self._waiting[finding.directory] = (finding, loop.now())

    def poll(self, loop: Loop) -> tuple[()]:
        self._submit(loop, everything=False)
        self._record(loop, wait=False)
        return ()

    def stop(self, loop: Loop) -> None:
        self._submit(loop, everything=True)
        self._record(loop, wait=True)
        self._thread.shutdown(wait=True, cancel_futures=True)

    def _submit(self, loop: Loop, *, everything: bool) -> None:
        """Judge, on the lane's thread, each waiting finding that is ready (all, at the stop)."""
        store = loop.filing.store
        for directory, (finding, since) in list(self._waiting.items()):
            if store.findings.get(finding.signature) is not finding:
                del self._waiting[directory]  # merged into another finding after its reduction
            elif everything or finding.reduction or not self.reducing or loop.now() - since > self.patience:
                del self._waiting[directory]
                self._judging[directory] = self._thread.submit(self.judge.judge, loop.campaign.root / directory,
                                                               finding)

    def _record(self, loop: Loop, *, wait: bool) -> None:
        store = loop.filing.store
        for directory, future in list(self._judging.items()):
            if not (wait or future.done()):
                continue
            del self._judging[directory]
            try:
                versions = future.result()
            except Exception as exc:  # an executor that went away: say so, keep the finding unjudged
                self.last_error = f"{directory}: {type(exc).__name__}: {exc}"[:300]
                continue
            finding = store.at(loop.campaign.root / directory)
            if finding is None:
                continue
            finding.versions = versions.as_json()
            store.save(finding)
            self.judged += 1

    def snapshot(self) -> dict[str, Any]:
        return dict(confirming=len(self._waiting) + len(self._judging), confirmed=self.judged)


def _wanted(finding: Finding) -> bool:
    return finding.signature.verdict.is_frontend_bug and not finding.versions and not finding.known_from


def status_counts(findings: list[Finding]) -> Counter[str]:
    """Frontend findings by `versions.status` ("not judged" for those without one)."""
    return Counter((f.versions or {}).get("status", "not judged") for f in findings
                   if f.signature.verdict.is_frontend_bug and not f.known_from)


def describe(root: Path, counts: Counter[str], newest: str) -> str:
    parts = [f"{counts[s]} {s.replace('_', ' ')}" for s in ("live_on_newest", "regression", "changed", "fixed_since",
                                                           "not judged") if counts[s]]
    return f"versions (newest: {newest}): " + ", ".join(parts) + f" (mutate versions {root}/findings/* for the rest)" \
        if counts["not judged"] else f"versions (newest: {newest}): " + ", ".join(parts)
