"""Where a campaign's CPU goes: stage names, and a ledger that adds them up.

Every part measures its own CPU (`time.process_time` in a forked run's child and in a
worker, `time.thread_time` in the fuzz loop's thread) and says it by stage; the fuzz loop
adds what each check's reply carries to its ledger (stats.json's `cpu`), so a user sees per
check what a campaign spends on building mutants, running them, tracing coverage, judging,
confirming, reducing and its own bookkeeping (AFL++'s `fuzzer_stats`; `bench/profile.py`
puts it beside the physical limit of a check).

A run's stages: SETUP (the forked child's isolation before the program, from the fork: the
fork's epilogue in the child, the sandbox, limits, streams), PROGRAM (the program itself, its
compilations and, compiled, coverage tracing while it runs), COVERAGE (collecting the features
afterwards), ISOLATION (the worker's own work around the run: fork, collecting and unpickling
the report), EXIT (what the child used beyond its stages, from the kernel when it is reaped:
sending its report and exiting, the tearing down of its copy of the worker; charged to the run
answered when it is reaped). A check's first pass adds BUILD (the mutant), JUDGE (comparing
the runs), REPAIR (the rules, for an invalid mutant) and REPORT (what of the features is new
to the driver); DEFAULTS is the compiled run again under Dynamo's defaults that a bug seen
under another configuration may need.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

SETUP = "setup"
PROGRAM = "program"
COVERAGE = "coverage"
ISOLATION = "isolation"
BUILD = "build"
JUDGE = "judge"
REPAIR = "repair"
REPORT = "report"
EXIT = "exit"  # a forked run's report and exit, which the child cannot time itself (charged when reaped)
IPC = "ipc"  # a worker's messages: receiving a job, sending the reply before (a worker's own CPU)

# the ledger's lines for a check's stages (`mutator.judge.check.CheckReply.cpu_lines`)
LINES = {
    BUILD: "check: build the mutant",
    JUDGE: "check: judge (compare the runs)",
    REPAIR: "check: repair rules",
    REPORT: "check: coverage report (what is new)",
    IPC: "workers: messages",
    SETUP: "check: isolation (fork, sandbox, report)",
    ISOLATION: "check: isolation (fork, sandbox, report)",
    COVERAGE: "check: collect coverage",
    EXIT: "check: runs' report and exit (a forked child's copy of the worker torn down)",
}
EAGER_RUN = "check: eager run"
COMPILE = "check: compiled run: Dynamo compiling (with coverage tracing)"
COMPILED_RUN = "check: compiled run: the rest"
CONFIRMATION = "confirmation runs"
# the compiled run again under Dynamo's defaults, for a bug seen under a configuration whose
# signature is another configuration's (`mutator.judge.check.Checker`): does it need its own?
DEFAULTS = "defaults"
LINES[DEFAULTS] = "check: compiled run again under Dynamo's defaults (does the bug need its configuration)"

Stages = tuple[tuple[str, float], ...]


class Ledger:
    """CPU seconds by line ("check: eager run", "driver: choose and plan"), added up."""

    def __init__(self, seconds: Mapping[str, float] | None = None) -> None:
        self.seconds: dict[str, float] = {k: float(v) for k, v in (seconds or {}).items()}

    def add(self, line: str, seconds: float) -> None:
        if seconds > 0:
            self.seconds[line] = self.seconds.get(line, 0.0) + seconds

    def add_all(self, stages: Iterable[tuple[str, float]], *, prefix: str = "") -> None:
        for stage, seconds in stages:
            self.add(prefix + stage, seconds)

    @property
    def total(self) -> float:
        return sum(self.seconds.values())

    def as_json(self) -> dict[str, float]:
        return {line: round(seconds, 3) for line, seconds in sorted(self.seconds.items())}
