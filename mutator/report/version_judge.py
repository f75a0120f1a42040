"""`VersionJudge`: a finding judged on each torch given, for `mutate versions`, `mutate report
--versions` and, per new finding, the fuzz loop (`--confirm-on`).

Each torch is an interpreter and an executor whose workers run under it; the caller starts
them (one pool per interpreter, reused across findings) and closes them. On each, the
finding's reduced program and its smallest one are checked as the fuzzer checks (eager and
compiled, confirmed, under the Dynamo configuration each fails under: `mutator.core.
configurations`; a torch that lacks it says so) and its `repro.py` is run with that
interpreter as `mutate reduce` verified it (plain python, with its control; it sets the
configuration itself). What comes of it is a
`mutator.report.versions.Versions`; writing it into `finding.json` is the caller's, from the
thread that owns the finding.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path

from mutator.core import storage
from mutator.core.build import Build
from mutator.core.configurations import CONFIGURATIONS, DEFAULT
from mutator.core.program import Program, ProgramError, load_program
from mutator.exec import ExecutorError
from mutator.findings.finding import Finding
from mutator.findings.signature import Signature
from mutator.judge.check import Checker, CheckReply, CheckTask, Runner
from mutator.reduce.repro import verify
from mutator.report.versions import PROGRAMS, OnTorch, ProgramVerdict, Versions

REPRO_TIMEOUT = 300.0  # seconds per run of repro.py, as `mutate reduce` verifies it


@dataclass(frozen=True, slots=True)
class Torch:
    """One torch under test: the interpreter that runs it (for repro.py), an executor whose
    workers run under it (ready: `build` is what they said), and that build."""

    python: str
    runner: Runner
    build: Build


class VersionJudge:
    """`judge(directory) -> Versions` on every torch given.

    It keeps no state between calls: several threads may call `judge` at once (the
    executors are thread-safe). Nothing a program does makes it raise: a program that cannot
    be read or judged, or a repro.py that cannot run, is recorded as such; only an executor
    that is closed raises (`mutator.exec.ExecutorError`), and a finding.json that cannot be
    read when the caller gives no finding (`mutator.core.storage.StorageError`)."""

    def __init__(self, torches: Sequence[Torch], *, repro_timeout: float = REPRO_TIMEOUT) -> None:
        if not torches:
            raise ValueError("VersionJudge needs at least one torch")
        self._torches = tuple(torches)
        self._checkers = tuple(Checker(torch.runner) for torch in self._torches)
        self._repro_timeout = repro_timeout

    def judge(self, directory: Path, finding: Finding | None = None) -> Versions:
        """The finding in `directory` (its record read from finding.json unless given) on each torch."""
        if finding is None:
            finding = Finding.from_json(storage.read_json(directory / "finding.json"))
        ours = {finding.signature.as_run(), *(Signature(**m["signature"]).as_run() for m in finding.merged)}
        programs = _programs(directory)
        configurations = {"reduced": finding.reduction.get("configuration", finding.configuration),
                          "smallest": finding.configuration}
        pending = [[(name, _submit(checker, torch, program, configurations.get(name, DEFAULT)))
                    for name, program in programs]
                   for torch, checker in zip(self._torches, self._checkers)]  # every check queued at once
        outcomes = []
        for torch, checks in zip(self._torches, pending):
            exit_code, said = self._run_repro(directory / "repro.py", torch.python)  # while the workers check
            verdicts = tuple(_verdict(name, check, ours) for name, check in checks)
            outcomes.append(OnTorch(torch.build, verdicts, exit_code, said))
        return Versions.of(outcomes)

    def _run_repro(self, path: Path, python: str) -> tuple[int | None, str]:
        if not path.is_file():
            return None, ""
        try:
            verification = verify(path.read_text(errors="replace"), python=python, timeout=self._repro_timeout)
        except OSError as exc:  # unreadable, the interpreter went away, the disk is full
            return None, f"could not run: {exc}"
        if verification.exit_code is None:
            return None, f"timed out after {self._repro_timeout:.0f} s"
        return verification.exit_code, verification.describe()


def _submit(checker: Checker, torch: Torch, program: Program | str, configuration: str) -> Future[CheckReply] | str:
    """The check of `program` under `configuration` on `torch`, or why there is none."""
    if not isinstance(program, Program):
        return program
    offered = getattr(torch.runner, "configurations", None)
    if offered is not None and configuration not in offered:
        missing = ", ".join(name for name, _ in CONFIGURATIONS[configuration].settings)
        return f"this torch has no {missing} (the configuration {configuration} it fails under)"
    return checker.submit(CheckTask(program, configuration=configuration))


def _programs(directory: Path) -> list[tuple[str, Program | str]]:
    """The finding's programs to judge, by name: each loaded, or why it cannot be (a reduced.py
    that is absent is no program of it: the finding is not reduced)."""
    programs: list[tuple[str, Program | str]] = []
    for name in PROGRAMS:
        path = directory / f"{name}.py"
        if name == "reduced" and not path.exists():
            continue
        try:
            programs.append((name, load_program(path)))
        except ProgramError as exc:
            programs.append((name, str(exc)))
    return programs


def _verdict(name: str, check: Future[CheckReply] | str, ours: set[Signature]) -> ProgramVerdict:
    if isinstance(check, str):
        return ProgramVerdict(name, "", reason=check)
    try:
        reply = check.result()
    except ExecutorError:
        raise
    except Exception as exc:  # the judge's own failure on this program: recorded, the others go on
        return ProgramVerdict(name, "", reason=f"could not be judged: {type(exc).__name__}: {exc}")
    result = reply.result
    if result is None:
        return ProgramVerdict(name, "", reason=reply.lost or "no result")
    if not result.verdict.is_finding:
        return ProgramVerdict(name, result.verdict.name, reason=result.reason)
    signature = Signature.of(result)
    return ProgramVerdict(name, result.verdict.name, signature, signature in ours, result.reason[:300])
