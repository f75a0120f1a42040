"""`mutate reduce` on files and finding directories: reduce, explain, write a reproducer, ablate.

A finding directory gets `reduced.py` and, when it is verified to fail with plain
python, `repro.py` beside `smallest.py`; its `finding.json` and README say what the
reduction did. A finding hit under a Dynamo configuration (`mutator.core.configurations`)
is reduced under it; the reduced program is then checked under Dynamo's defaults, and
where it fails there too the configuration is dropped (what matters says whether the bug
needs it). After the reduction, "what matters" probes the reduced program; the
variants it found that still fail and simplify are taken into it (`unneeded`), the
result confirmed in fresh runs, and what the bug needs is checked in the original
(`crosscheck`); the reproducer and the ablation are of the final program. The program
files are written before the record that names them, each atomically, so a kill leaves
the old record or the new one, never a record naming a file that is not there.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mutator.core import storage
from mutator.core.configurations import CONFIGURATIONS, DEFAULT, FORCED, NESTED
from mutator.judge.check import CheckResult, Runner
from mutator.findings.finding import Finding
from mutator.findings.signature import Signature
from mutator.findings.store import FindingStore
from mutator.core.observation import RunConfig
from mutator.core.program import Program, ProgramError, load_program
from mutator.reduce import ablation, crosscheck, explicit_breaks, matters, unneeded
from mutator.findings.canonical import canonical_digest
from mutator.reduce.reducer import NotReproduced, Reducer, Reduction, admissible, compiles
from mutator.reduce.repro import Verification, make_repros, missing, verify
from mutator.reduce.repro_facts import ReproFacts


@dataclass
class ReductionReport:
    """What reducing one target gave; `error` set when it could not be reduced."""

    target: str
    reduction: Reduction | None = None
    written: list[str] = field(default_factory=list)
    repro: Verification | None = None
    repro_note: str = ""
    rows: list[ablation.AblationRow] = field(default_factory=list)
    matters: matters.Matters | None = None
    error: str = ""
    found_under: str = DEFAULT  # the Dynamo configuration the program failed under when given
    needs_configuration: bool | None = None  # whether the reduced program fails only under it (None: not asked)
    explicit_breaks: bool = False  # the forced graph breaks are written in the reduced program (explicit_breaks)

    @property
    def configuration(self) -> str:
        """The configuration the reduced program (and its reproducer) fails under."""
        return self.reduction.check.configuration if self.reduction is not None else self.found_under

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = dict(target=self.target, error=self.error, written=self.written)
        if self.reduction is not None:
            r = self.reduction
            data.update(signature=r.signature.describe(), lines_before=r.lines[0], lines_after=r.lines[1],
                        chars_before=len(r.original.source), chars_after=len(r.reduced.source),
                        seconds=round(r.seconds, 1), checks=r.stats.checks, pass_errors=r.stats.pass_errors,
                        confirmed=r.confirmed, reason=r.check.reason[:500],
                        passes={name: dict(tried=p.tried, kept=p.kept, seconds=round(p.seconds, 1))
                                for name, p in r.stats.passes.items()})
        data.update(repro=self.repro.describe() if self.repro else self.repro_note,
                    repro_reproduces=bool(self.repro and self.repro.reproduces),
                    repro_output=self.repro.output[-3000:] if self.repro else "",
                    ablation=[row.as_json() for row in self.rows],
                    label=ablation.label(self.rows) if self.rows else "",
                    configurations_label=ablation.configurations_label(self.rows, self.configuration)
                    if self.rows else "")
        data.update(configuration=self.configuration, found_under=self.found_under)
        if self.needs_configuration is not None:
            data.update(needs_configuration=self.needs_configuration)
        if self.explicit_breaks:
            data.update(explicit_breaks=True)
        if self.matters is not None:
            data.update(matters=self.matters.as_json())
            if another := crosscheck.describe(self.matters.original):  # the reduction slid to another bug
                data.update(another_bug=another)
        return data


def is_finding_dir(path: Path) -> bool:
    return path.is_dir() and (path / "finding.json").is_file() and (path / "smallest.py").is_file()


class ReduceDriver:
    """What `mutate reduce` does to each target (a finding's directory or a program file):
    reduce it on the runner's workers, explain what matters, write reduced.py and a repro.py
    that `python` (the interpreter of the torch under test) verifies, and the ablation."""

    def __init__(self, runner: Runner, *, workers: int, config: RunConfig, torch_version: str,
                 time_limit: float | None = None, ablate: bool = True,
                 matters_budget: int = matters.DEFAULT_BUDGET, python: str = sys.executable) -> None:
        self._runner = runner
        self._python = python
        self._workers = workers
        self._config = config
        self._torch = torch_version
        self._time_limit = time_limit
        self._ablate = ablate
        self._reducers: dict[str, Reducer] = {}
        self._prober = matters.Prober(runner, budget=matters_budget) if matters_budget > 0 else None

    def reducer(self, configuration: str) -> Reducer:
        """The reducer whose runs take `configuration` (the driver's own run settings otherwise)."""
        if configuration not in self._reducers:
            config = dataclasses.replace(self._config, configuration=configuration)
            self._reducers[configuration] = Reducer(self._runner, workers=self._workers, config=config)
        return self._reducers[configuration]

    def reduce_path(self, path: Path, *, out: Path | None = None,
                    on_progress: Callable[[str, str], None] = lambda s, n: None) -> ReductionReport:
        if is_finding_dir(path):
            return self._finding(path, on_progress)
        return self._file(path, out, on_progress)

    def _file(self, path: Path, out: Path | None, on_progress: Callable[[str, str], None]) -> ReductionReport:
        outcome = ReductionReport(str(path), found_under=self._config.configuration)
        try:
            program = load_program(path)
        except ProgramError as exc:
            outcome.error = str(exc)
            return outcome
        if not self._reduce(outcome, program, None, on_progress):
            return outcome
        assert outcome.reduction is not None
        if not outcome.reduction.confirmed:
            return outcome
        target = out if out is not None else path.with_name(f"{path.stem}.reduced.py")
        if target.is_dir():
            target = target / f"{path.stem}.reduced.py"
        self._finish(outcome, target, target.with_name(target.name.replace(".reduced.py", "") + ".repro.py")
                     if target.name.endswith(".reduced.py") else target.with_suffix(".repro.py"))
        return outcome

    def _finding(self, directory: Path, on_progress: Callable[[str, str], None]) -> ReductionReport:
        root = directory.parent.parent
        store = FindingStore(root, torch_version=self._torch, backend=self._config.backend)
        finding = store.at(directory)
        if finding is None:
            return ReductionReport(str(directory), error="not a finding of this campaign (merged into another?)")
        outcome = self.reduce_finding(directory, finding, on_progress=on_progress)
        if not outcome.error:
            record_reduction(store, finding, outcome)
        return outcome

    def reduce_finding(self, directory: Path, finding: Finding, *, stop: Callable[[], bool] = lambda: False,
                       on_progress: Callable[[str, str], None] = lambda s, n: None,
                       charge: Callable[[float], None] = lambda seconds: None) -> ReductionReport:
        """Reduce a finding's smallest.py (under the configuration it failed under) and write
        reduced.py and repro.py beside it; its record is the caller's to update
        (`record_reduction`), from the thread that owns it."""
        outcome = ReductionReport(str(directory), found_under=finding.configuration)
        try:
            program = load_program(directory / "smallest.py")
        except ProgramError as exc:
            outcome.error = str(exc)
            return outcome
        if not self._reduce(outcome, program, finding.signature.as_run(), on_progress, stop):
            return outcome
        self._finish(outcome, directory / "reduced.py", directory / "repro.py", stop=stop, charge=charge)
        return outcome

    def _finish(self, outcome: ReductionReport, reduced_path: Path, repro_path: Path, *,
                stop: Callable[[], bool] = lambda: False,
                charge: Callable[[float], None] = lambda seconds: None) -> None:
        """A confirmed reduction's files: reduced.py at once (a kill during the analysis
        keeps it), then what matters, which may make it smaller, then the reproducer."""
        reduction = outcome.reduction
        if reduction is None or not reduction.confirmed:
            return
        storage.write_text(reduced_path, reduction.reduced.source)
        outcome.written.append(str(reduced_path))
        self._without_configuration(outcome, stop)
        if self._explicit_breaks(outcome, stop):
            self._without_configuration(outcome, stop)
        self._explain(outcome, stop)
        self._configuration_matters(outcome)
        if outcome.reduction is not reduction:  # what the analysis proved unneeded is out of it
            storage.write_text(reduced_path, outcome.reduction.reduced.source)
        self._write_results(outcome, repro_path, charge=charge)

    def _without_configuration(self, outcome: ReductionReport, stop: Callable[[], bool]) -> None:
        """Whether the reduced program fails only under the configuration it was found under:
        checked the full way under Dynamo's defaults; where the same bug shows there too, the
        reduction goes on without it (the reproducer, the ablation and the versions then
        need no setting)."""
        reduction = outcome.reduction
        if reduction is None or reduction.check.configuration == DEFAULT or stop():
            return
        target = reduction.target or self.reducer(reduction.check.configuration).target_of(reduction.check,
                                                                                         reduction.signature)
        check = self.reducer(DEFAULT).confirm(reduction.reduced, target)
        outcome.needs_configuration = check is None
        if check is not None:
            outcome.reduction = dataclasses.replace(reduction, check=check)

    def _explicit_breaks(self, outcome: ReductionReport, stop: Callable[[], bool]) -> bool:
        """A reduced program that fails only under forced graph breaks, a testing setting,
        written with the breaks in its code (`explicit_breaks`) when one of those variants fails
        the same way under nested graph breaks alone: the reproducer then needs no testing
        setting. Whether it was."""
        reduction = outcome.reduction
        if reduction is None or reduction.check.configuration != FORCED or not outcome.needs_configuration:
            return False
        target = reduction.target or self.reducer(FORCED).target_of(reduction.check, reduction.signature)
        for source in explicit_breaks.variants(reduction.reduced.source):
            if stop():
                return False
            program = Program.from_source(source, reduction.reduced.name)
            check = self.reducer(NESTED).confirm(program, target)
            if check is not None:
                outcome.reduction = dataclasses.replace(reduction, reduced=program, check=check)
                outcome.explicit_breaks = True
                return True
        return False

    def _configuration_matters(self, outcome: ReductionReport) -> None:
        """The configuration as a construct of what matters: needed, or not."""
        if outcome.needs_configuration is None or outcome.matters is None:
            return
        found = CONFIGURATIONS[outcome.found_under]
        if outcome.explicit_breaks:
            outcome.matters.rows.append(matters.Row(
                found.construct(),
                f"{explicit_breaks.BREAK} before the returns, under {CONFIGURATIONS[NESTED].describe()}",
                matters.STILL_FAILS, "the forced breaks written in the program"))
            found = CONFIGURATIONS[NESTED]
        outcome.matters.rows.append(matters.Row(
            found.construct(), "Dynamo's defaults instead",
            matters.PASSES if outcome.needs_configuration else matters.STILL_FAILS,
            "" if outcome.needs_configuration else "fails under the defaults too"))

    def _explain(self, outcome: ReductionReport, stop: Callable[[], bool] = lambda: False) -> None:
        """What matters in the confirmed reduced program (`matters`), within the budget; the
        variants that still fail and simplify it taken (a new `outcome.reduction` when the
        result holds in fresh runs); the constructs it needs checked in the original."""
        reduction = outcome.reduction
        if self._prober is None or reduction is None or not reduction.confirmed or stop():
            return
        started = time.monotonic()
        prober = self._prober
        reducer = self.reducer(reduction.check.configuration)
        target = reducer.target_of(reduction.check, reduction.signature)
        found = prober.explain(target, original=reduction.original.source, stop=stop)
        taken = unneeded.take_out(
            target.program.source, found, lambda sources: prober.outcomes(sources, target, found, stop),
            admissible=lambda source: admissible(source, target.program) and compiles(source, target.program.name),
            stop=stop)
        if taken.source != target.program.source and not stop():
            program = Program.from_source(taken.source, reduction.reduced.name)
            check = reducer.confirm(program, reduction.target or target)
            if check is not None:
                outcome.reduction = dataclasses.replace(reduction, reduced=program, check=check)
                found = taken.matters
        if reduction.target is not None and not stop():
            found.original = crosscheck.against_original(prober, reduction.target, found, stop=stop)
        found.seconds = time.monotonic() - started
        outcome.matters = found

    def _reduce(self, outcome: ReductionReport, program: Program, expect: Signature | None,
                on_progress: Callable[[str, str], None], stop: Callable[[], bool] = lambda: False) -> bool:
        try:
            outcome.reduction = self.reducer(outcome.found_under).reduce(
                program, expect=expect, time_limit=self._time_limit, on_progress=on_progress, stop=stop)
        except NotReproduced as exc:
            outcome.error = f"does not reproduce: {exc}"
            return False
        return True

    def _write_results(self, outcome: ReductionReport, repro_path: Path, *,
                       charge: Callable[[float], None] = lambda seconds: None) -> None:
        """repro.py, when one verifies (an older one is deleted when none does), and the ablation."""
        reduction = outcome.reduction
        assert reduction is not None and reduction.confirmed
        facts = ReproFacts.of(reduction.check)
        repros = make_repros(reduction.reduced, reduction.signature.verdict, observation=reduction.signature.observation,
                             result=eager_result(reduction.check), facts=facts)
        if not repros:
            outcome.repro_note = missing(reduction.signature.verdict, facts)
        for repro in repros:  # shortest first: the first that verifies is kept
            started = time.monotonic()
            outcome.repro = verify(repro, python=self._python)
            charge(time.monotonic() - started)  # a core's time outside the pool
            if outcome.repro.reproduces:
                storage.write_text(repro_path, repro)
                outcome.written.append(str(repro_path))
                break
        else:
            if repro_path.exists():
                repro_path.unlink()  # an older one that no longer holds
        if self._ablate:
            outcome.rows = ablation.ablate(self._runner, reduction.reduced, reduction.signature,
                                           base=dataclasses.replace(self._config,
                                                                    configuration=reduction.check.configuration),
                                           parallel=self._workers)


def eager_result(check: CheckResult) -> object:
    """What the eager run produced, as the reproducer compares it: drive()'s return, else
    the first call's result."""
    observation = check.eager.observation
    if observation.returned is not None:
        return observation.returned
    return observation.calls[0].result if observation.calls else None


def record_reduction(store: FindingStore, finding: Finding, outcome: ReductionReport) -> Finding:
    """Put a reduction into the finding's record and README, then merge it with a finding
    of the same verdict kind whose reduced program has the same canonical form (the later
    found into the earlier); the finding that stands."""
    assert outcome.reduction is not None
    reduced = outcome.reduction.reduced.source
    finding.reduction = dict(outcome.as_json(), source=reduced, canonical=canonical_digest(reduced))
    store.save(finding)
    if not outcome.reduction.confirmed:
        return finding
    twin = next((other for other in store.findings.values() if other is not finding
                 and other.signature.kind == finding.signature.kind  # a crash and a mismatch stay apart
                 and other.reduction.get("canonical") == finding.reduction["canonical"]
                 and other.reduction.get("confirmed")), None)
    if twin is None:
        return finding
    first, second = sorted((twin, finding), key=lambda f: (f.first_seen, f.directory))
    store.merge(second, into=first)
    return first
