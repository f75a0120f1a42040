"""Turn test files and reproducer scripts into validated programs (docs/design.md, "Harvest").

For every file: a test file gives one candidate per test. Which tests it has is asked of
the module itself where an executor can import it (`harvest.collection`, in a sandboxed
worker, as pytest would: what it does at import time counts), and read from its text where
it cannot (a module that fails to import is listed with its error) or no executor
collects; either way each test's program is built from the folder's text
(`harvest.located`, `harvest.extract`; the mixins it imports from its own folder are read
from there). A test whose text names nothing that compiles is kept only if running it
compiles something; any other file that is a program (a reproducer script) is a candidate
as it is, unless files of its folder import it (a module of mixins: its tests come through
theirs). Every candidate is checked through the pool like any program: one that fails
eagerly is dropped and counted by reason, one skipped at run time is counted, one with a
bug verdict is filed in `DIR/findings/` (a test that already fails is worth knowing; one
whose own checks pass in both runs is listed apart, with the comparison that saw what they
missed), and a passing one is written to DIR with a provenance header (and a JSON sidecar
with its features, as a campaign's queue has) unless its coverage features or its text
repeat a program already there (`harvest.kept`). Harvest never aborts for one file or one
test: a file that cannot be read, parsed or taken apart goes to `errors`, a test that
cannot be extracted, made a program, checked or written to `failures`, each with its
reason, and the run goes on. The harvesting process never imports or runs the files it
reads: the workers do.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from mutator.core import parsing
from mutator.core.program import SCRIPT_DECLARATION, Program, ProgramError, discover, parse_source, read_source
from mutator.core.verdict import Verdict
from mutator.findings.store import FindingStore
from mutator.harvest.collection import Collected, Collection, CollectionFailed, ModuleSkipped
from mutator.harvest.extract import (Extraction, ExtractionError, ExtractionFailed, NotHarvested, extract,
                                     is_test_file, one_line)
from mutator.harvest.kept import HEADER, KnownPrograms, body_digest, invalid_kind
from mutator.harvest.located import extract_collected
from mutator.judge.missed import missed_by_own_checks
from mutator.harvest.modules import Siblings, folder_reader, sibling_imports
from mutator.judge.check import CheckResult

SKIP_TYPES = ("unittest.case.SkipTest", "_pytest.outcomes.Skipped")
_UNSAFE = re.compile(r"[^A-Za-z0-9_]+")


@dataclass(frozen=True, slots=True)
class Candidate:
    origin: str  # "path/test_x.py::Tests::test_add", or the script's path
    program: Program
    compiles_visibly: bool = True  # False: kept only if running it compiles something


@dataclass
class HarvestReport:
    """What harvesting found; field names are a stable interface (`--json`)."""

    files: int = 0
    test_files: int = 0
    scripts: int = 0
    tests_found: int = 0
    candidates: int = 0
    written: list[str] = field(default_factory=list)
    not_harvested: Counter[str] = field(default_factory=Counter)  # compiles nothing, expected to fail, ...
    skipped: int = 0  # skipped when run (skip decorators evaluated on this machine)
    invalid: Counter[str] = field(default_factory=Counter)  # eager failure, by exception type
    invalid_programs: list[dict[str, str]] = field(default_factory=list)  # origin and reason of each
    unstable: int = 0
    duplicates: int = 0
    already_failing: list[dict[str, str]] = field(default_factory=list)
    # filed tests whose own checks passed in both runs: origin, verdict, finding, and the
    # comparison that saw the divergence (comparison, where, detail)
    divergences_the_test_misses: list[dict[str, str]] = field(default_factory=list)
    imported: int = 0  # test files whose tests were collected by importing them
    collection_errors: list[dict[str, str]] = field(default_factory=list)  # file, error: read from the text instead
    skipped_modules: list[dict[str, str]] = field(default_factory=list)  # file, reason: a module that skips itself
    not_programs: list[str] = field(default_factory=list)  # files that are neither tests nor programs (helpers)
    errors: list[str] = field(default_factory=list)  # files that cannot be read, parsed or taken apart
    failed: Counter[str] = field(default_factory=Counter)  # tests not processed, by kind: "not a program", ...
    failures: list[dict[str, str]] = field(default_factory=list)  # origin and reason of each
    # one entry per test or script harvest considered, by origin, so each can be matched to
    # another tool's outcome for it: every checked candidate (origin, verdict, reason, outcome:
    # written / duplicate / filed / invalid / unstable / skipped / compiles nothing / failed),
    # and every test not checked at all (origin, reason: skipped, expected to fail, ...)
    checked: list[dict[str, str]] = field(default_factory=list)
    not_harvested_tests: list[dict[str, str]] = field(default_factory=list)

    def as_json(self) -> dict[str, object]:
        return dict(files=self.files, test_files=self.test_files, scripts=self.scripts, tests_found=self.tests_found,
                    candidates=self.candidates, written=len(self.written), programs=self.written,
                    not_harvested=dict(self.not_harvested), skipped=self.skipped, invalid=dict(self.invalid),
                    invalid_programs=self.invalid_programs, unstable=self.unstable, duplicates=self.duplicates,
                    already_failing=self.already_failing, divergences_the_test_misses=self.divergences_the_test_misses,
                    imported=self.imported, collection_errors=self.collection_errors,
                    skipped_modules=self.skipped_modules,
                    not_programs=self.not_programs, errors=self.errors, failed=dict(self.failed),
                    failures=self.failures, checked=self.checked, not_harvested_tests=self.not_harvested_tests)

    @property
    def ok(self) -> bool:
        """Whether every file and every test was processed (whatever came of it)."""
        return not self.errors and not self.failures

    def fail(self, origin: str, reason: str) -> None:
        """One test (or script) that could not be processed; `reason` starts with its kind."""
        self.failed[_reason_kind(reason)] += 1
        self.failures.append(dict(origin=origin, reason=reason))


class Harvester:
    def __init__(self, check: Callable[[Program], CheckResult], store: FindingStore, out: Path, *,
                 torch_version: str, workers: int = 2, clock: Callable[[], float] = time.time,
                 collect: Callable[[Path], Future[Collection]] | None = None) -> None:
        """`collect`: the collection of a test file by importing it (`Collector.collect`); without
        it, tests are read from the files' text."""
        self._check = check
        self._store = store
        self._out = out
        self._torch = torch_version
        self._workers = workers
        self._clock = clock
        self._collect = collect
        self._known = KnownPrograms(out)

    def candidates(self, paths: Iterable[str | Path], report: HarvestReport, *,
                   only: set[Path] | frozenset[Path] | None = None) -> list[Candidate]:
        """Every candidate program of every file (of those in `only`, when given: the others are
        only read for what they import), with its provenance header; what goes wrong with a
        file or a test is reported, never raised. Test files are collected side by side."""
        found: list[Candidate] = []
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self._clock()))
        files = discover(list(paths))
        imported = _ImportedBeside(files)
        read = [(path, _File.read(path)) for path in files if only is None or path in only]
        collections = {path: self._collect(path) for path, file in read
                       if isinstance(file, _File) and file.is_test and self._collect is not None}
        for path, file in read:
            report.files += 1
            if isinstance(file, ProgramError):
                report.errors.append(str(file))
            elif file.is_test:
                found.extend(self._test_candidates(file, stamp, report, collections.get(path)))
            elif imported.contains(path):
                report.not_programs.append(f"{path}: a module the files beside it import, harvested through them")
            else:
                found.extend(self._script_candidates(path, file.source, stamp, report))
        report.candidates = len(found)
        return found

    def _test_candidates(self, file: _File, stamp: str, report: HarvestReport,
                         collection: Future[Collection] | None) -> list[Candidate]:
        """A test file's candidates: one per harvested test (its mixins read from the files beside it)."""
        path = file.path
        report.test_files += 1
        try:
            extractions = self._extractions(file, collection, report)
        except ExtractionError as exc:
            report.errors.append(f"{path}: {exc}")
            return []
        found: list[Candidate] = []
        for extraction in extractions:
            report.tests_found += 1
            origin = f"{path}::{extraction.test_id}"
            if isinstance(extraction, NotHarvested):
                report.not_harvested[_reason_kind(extraction.reason)] += 1
                report.not_harvested_tests.append(dict(origin=origin, reason=extraction.reason))
            elif isinstance(extraction, ExtractionFailed):
                report.fail(origin, extraction.reason)
            elif candidate := self._candidate(
                    origin, _header(origin, stamp, self._torch, extraction.compiles_visibly) + extraction.source,
                    report, compiles_visibly=extraction.compiles_visibly):
                found.append(candidate)
        return found

    def _script_candidates(self, path: Path, source: str, stamp: str, report: HarvestReport) -> list[Candidate]:
        try:
            Program.from_source(source, str(path))
        except ProgramError as exc:
            report.not_programs.append(str(exc))
            return []
        report.scripts += 1
        candidate = self._candidate(str(path), _header(str(path), stamp, self._torch) + source, report)
        return [candidate] if candidate is not None else []

    def _extractions(self, file: _File, collection: Future[Collection] | None,
                     report: HarvestReport) -> list[Extraction]:
        """The file's tests as its import collected them, or as its text has them when it was
        not collected or could not be imported; none for a module that skips itself."""
        found = _collection(collection) if collection is not None else None
        if isinstance(found, ModuleSkipped):
            report.skipped_modules.append(dict(file=str(file.path), reason=found.reason))
            return []
        if isinstance(found, Collected):
            report.imported += 1
            return extract_collected(file.source, found, path=str(file.path), siblings=file.siblings)
        if isinstance(found, CollectionFailed):
            report.collection_errors.append(dict(file=str(file.path), error=found.error))
        return extract(file.source, siblings=file.siblings)

    def harvest(self, paths: Iterable[str | Path]) -> HarvestReport:
        report = HarvestReport()
        self.validate(self.candidates(paths, report), report)
        return report

    def validate(self, found: list[Candidate], report: HarvestReport, *,
                 progress: Callable[[int], None] = lambda n: None) -> None:
        """Check every candidate (two per worker in flight) and write, file or count it; a
        check that raises (no worker could run it) or a write that fails costs that candidate."""
        with ThreadPoolExecutor(max_workers=max(2, self._workers * 2)) as executor:
            futures = [executor.submit(self._check, c.program) for c in found]
            for candidate, future in zip(found, futures):
                try:
                    result = future.result()
                except Exception as exc:  # noqa: BLE001 - no worker could run it, or a bug of ours in
                    # checking it: either costs this candidate, never the harvest
                    report.fail(candidate.origin, f"check failed: {one_line(exc)}")
                    report.checked.append(dict(origin=candidate.origin, verdict="", reason=one_line(exc),
                                               outcome="failed"))
                else:
                    outcome = self._judge(candidate, result, report)
                    report.checked.append(dict(origin=candidate.origin, verdict=result.verdict.name,
                                               reason=result.reason[:300], outcome=outcome))
                progress(1)

    def _judge(self, candidate: Candidate, result: CheckResult, report: HarvestReport) -> str:
        """Write, file or count one checked candidate; returns what came of it (`checked`'s outcome)."""
        if not candidate.compiles_visibly and not _compiled_something(result):
            report.not_harvested["compiles nothing"] += 1  # decided by running it: Dynamo compiled no frame
            return "compiles nothing"
        eager_exc = result.eager.uncaught
        if eager_exc is not None and eager_exc.type_name in SKIP_TYPES:
            report.skipped += 1
            return "skipped"
        verdict = result.verdict
        if verdict is Verdict.INVALID:
            report.invalid[invalid_kind(result)] += 1
            report.invalid_programs.append(dict(origin=candidate.origin, reason=result.reason[:300]))
            return "invalid"
        if verdict is Verdict.UNSTABLE:
            report.unstable += 1
            return "unstable"
        if verdict.is_finding:
            try:
                finding, _ = self._store.record(result, provenance=f"seed:{candidate.origin}", parent=None,
                                                elapsed=0.0)
            except OSError as exc:
                report.fail(candidate.origin, f"not filed: {one_line(exc)}")
                return "failed"
            filed = dict(origin=candidate.origin, verdict=verdict.name, reason=result.reason,
                         finding=finding.directory)
            missed = missed_by_own_checks(result) if "::" in candidate.origin else None
            if missed is not None:  # a test whose own checks pass: not failing, a divergence it misses
                report.divergences_the_test_misses.append({**filed, **missed.as_json()})
            else:
                report.already_failing.append(filed)
            return "filed"
        digest = body_digest(candidate.program.source)
        if self._known.repeats(digest, result):
            report.duplicates += 1
            return "duplicate"
        path = self._unique_path(candidate.origin)
        try:
            self._known.keep(path, candidate.program.source, dict(origin=candidate.origin,
                                                                  seconds=round(result.seconds, 4)), digest, result)
        except OSError as exc:
            report.fail(candidate.origin, f"not written: {one_line(exc)}")
            return "failed"
        report.written.append(str(path))
        return "written"

    def _candidate(self, origin: str, source: str, report: HarvestReport, *,
                   compiles_visibly: bool = True) -> Candidate | None:
        """The candidate, or None when what was harvested is no program (reported)."""
        name = str(self._out / _file_name(origin))
        try:
            return Candidate(origin, Program.from_source(source, name), compiles_visibly)
        except ProgramError as exc:
            report.fail(origin, "not a program: " + str(exc).removeprefix(f"{name}: "))
            return None

    def _unique_path(self, origin: str) -> Path:
        path = self._out / _file_name(origin)
        n = 2
        while path.exists():
            path = path.with_name(f"{path.stem.rsplit('~', 1)[0]}~{n}.py")
            n += 1
        return path



class _ImportedBeside:
    """Which of the files found are imported by a file of their own folder (by reading the
    imports of that folder's files, once per folder and only when asked)."""

    def __init__(self, files: list[Path]) -> None:
        self._files = files
        self._folders: dict[Path, set[Path]] = {}

    def contains(self, path: Path) -> bool:
        if path.parent not in self._folders:
            found: set[Path] = set()
            for other in (f for f in self._files if f.parent == path.parent):
                try:
                    tree = parsing.parse(read_source(other))
                except (ProgramError, SyntaxError, RecursionError, ValueError):
                    continue  # reported when its turn comes
                found.update(other.parent / f"{name}.py" for name in sibling_imports(tree) if name != other.stem)
            self._folders[path.parent] = found
        return path in self._folders[path.parent]


@dataclass(frozen=True, slots=True)
class _File:
    """A file harvest read: its text, the reader of the modules beside it, whether it is a test file."""

    path: Path
    source: str
    siblings: Siblings
    is_test: bool

    @classmethod
    def read(cls, path: Path) -> _File | ProgramError:
        """The file, or a one-line ProgramError naming it: unreadable, not UTF-8, does not parse."""
        try:
            source = read_source(path)
            parse_source(source, str(path))
        except ProgramError as exc:
            return exc
        except RecursionError:  # ast's own limit on nesting, not a syntax error
            return ProgramError(f"{path}: nested too deeply to parse; split the expression")
        siblings = folder_reader(path)
        return cls(path, source, siblings, is_test_file(source, siblings=siblings))


def _collection(pending: Future[Collection]) -> Collection:
    try:
        return pending.result()
    except Exception as exc:  # noqa: BLE001 - a bug of ours collecting: the file's text decides instead
        return CollectionFailed(f"not collected: {one_line(exc)}")


def _header(origin: str, stamp: str, torch_version: str, compiles_visibly: bool = True) -> str:
    declared = "" if compiles_visibly else \
        f"{SCRIPT_DECLARATION} (it compiles through code its text does not name; running it showed it)\n"
    return f"{HEADER}{origin}\n# on {stamp} with {torch_version or 'torch unknown'}\n{declared}"


def _compiled_something(result: CheckResult) -> bool:
    """Whether Dynamo compiled at least one frame in the compiled run."""
    observation = result.compiled.observation
    return any(call.compiles for call in observation.calls) or bool(observation.compile and observation.compile.compiles)


def _file_name(origin: str) -> str:
    path, _, test = origin.partition("::")
    stem = Path(path).stem + (f"__{test}" if test else "")
    return _UNSAFE.sub("_", stem.replace("::", "__")).strip("_")[:120] + ".py"


def _reason_kind(reason: str) -> str:
    return reason.split(":", 1)[0]
