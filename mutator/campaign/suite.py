"""The user's test suite as the corpus: `mutate fuzz --corpus PATH/TO/pytorch/test/dynamo`.

A corpus path is a folder of programs (our seeds, harvested programs, reproducers), or a
folder of test files: one that holds a test file (unittest test classes, pytest tests) is
harvested on the fly (`mutator.harvest`: every test that compiles something becomes a
program, collected by importing its file in a worker, checked eagerly and compiled). The
harvest is the dry run of what it keeps: a passing test's program enters the queue with the
features its check gave, unchecked again, and only the smallest set of them that covers all
their features does (`campaign.minimize.cover`), so the dry run's cost stays that of the
harvest, once. A test that already fails is checked again in the dry run and filed there.

What a test file gives is cached by content (`CACHE/harvest/<digest>/`, `CACHE` being
`$MUTATOR_CACHE` or `~/.cache/mutator`): the digest is of the file, the files of its folder
it imports, the torch under test and the coverage configuration, so a second campaign (and
the same campaign's next first session) harvests only what changed; `--resume` reads the
queue and harvests nothing.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mutator.campaign.minimize import Entry, cover
from mutator.core import parsing, storage
from mutator.core.build import Build
from mutator.core.program import Program, ProgramError, discover, load_program, read_source
from mutator.findings.store import FindingStore
from mutator.harvest.extract import is_test_file
from mutator.harvest.harvester import Harvester, HarvestReport
from mutator.harvest.kept import HEADER
from mutator.harvest.modules import folder_reader, sibling_imports

FORMAT = 1  # of a cache entry; a harvest that changes what it writes says so here


def cache_root() -> Path:
    return Path(os.environ.get("MUTATOR_CACHE") or Path.home() / ".cache" / "mutator") / "harvest"


def is_suite(path: str | Path) -> bool:
    """Whether a corpus path holds test files, to be harvested rather than run as programs
    (what `mutate harvest` wrote is a program, though it keeps the test's class)."""
    for file in discover([path]):
        try:
            source = read_source(file)
            if not source.startswith(HEADER) and is_test_file(source, siblings=folder_reader(file)):
                return True
        except ProgramError:
            continue
    return False


@dataclass
class SuiteSeeds:
    """What a campaign's test folders gave: seeds that are checked already (a minimal cover of
    the harvest's passing programs, with their features), programs to check in the dry run
    (tests that already fail), and what the harvest did."""

    checked: list[Entry] = field(default_factory=list)
    to_check: list[Program] = field(default_factory=list)
    files: int = 0
    cached: int = 0  # test files whose harvest came from the cache
    programs: int = 0  # passing programs harvested, before the cover
    seconds: float = 0.0
    report: HarvestReport = field(default_factory=HarvestReport)

    def describe(self) -> str:
        return (f"{self.files} files ({self.cached} from the cache): {self.programs} passing programs, "
                f"{len(self.checked)} after minimising by features, {len(self.to_check)} failing tests to check; "
                f"{self.seconds:.0f} s")


class SuiteHarvest:
    """Harvests test folders into seeds through the campaign's executor, cached per file."""

    def __init__(self, harvester_for: Callable[[Path], Harvester], *, build: Build, coverage: tuple[str, ...],
                 cache: Path | None = None, clock: Callable[[], float] | None = None) -> None:
        """`harvester_for(out)`: a Harvester writing into `out` (the executor's checks and
        collections behind it)."""
        import time

        self._harvester_for = harvester_for
        self._build = build
        self._coverage = coverage
        self._cache = cache or cache_root()
        self._clock = clock or time.monotonic

    def seeds(self, folders: list[str | Path], *,
              progress: Callable[[str, int, int], None] = lambda what, done, total: None) -> SuiteSeeds:
        started = self._clock()
        result = SuiteSeeds()
        files = [f for f in discover(list(folders))]
        keys = {file: self._key(file) for file in files}
        missing = {file for file in files if not (self._cache / keys[file] / "entry.json").is_file()}
        result.files = len(files)
        result.cached = len(files) - len(missing)
        if missing:
            self._harvest(folders, missing, keys, result.report, progress)
        for file in files:
            self._read_entry(self._cache / keys[file], result)
        result.programs = len(result.checked)
        result.checked = cover(result.checked)
        result.seconds = self._clock() - started
        return result

    def _key(self, file: Path) -> str:
        """The file, the files beside it that it imports, the torch and the coverage it was harvested with."""
        digest = hashlib.sha256(f"{FORMAT}\n{self._build.torch}\n{self._build.git}\n{self._coverage}\n".encode())
        try:
            source = read_source(file)
        except ProgramError:
            source = ""
        digest.update(source.encode())
        try:
            names = sorted(sibling_imports(parsing.parse(source)))
        except (SyntaxError, RecursionError, ValueError):
            names = []
        for name in names:
            sibling = file.parent / f"{name}.py"
            if sibling.is_file() and sibling != file:
                digest.update(f"\n{name}\n".encode() + sibling.read_bytes())
        return f"{file.stem[:40]}-{digest.hexdigest()[:16]}"

    def _harvest(self, folders: list[str | Path], missing: set[Path], keys: dict[Path, str], report: HarvestReport,
                 progress: Callable[[str, int, int], None]) -> None:
        """Harvest the files not cached (the folders read whole, for what their files import),
        then put each file's programs under its cache entry."""
        staging = self._cache / f".staging-{os.getpid()}"
        shutil.rmtree(staging, ignore_errors=True)
        harvester = self._harvester_for(staging)
        found = harvester.candidates(folders, report, only=missing)  # test files collected side by side
        progress("checking tests", 0, len(found))
        done = [0]

        def advance(n: int) -> None:
            done[0] += n
            progress("checking tests", done[0], len(found))

        harvester.validate(found, report, progress=advance)
        written: dict[Path, list[Path]] = {file: [] for file in missing}
        for path in map(Path, report.written):
            origin = storage.read_json(path.with_suffix(".json")).get("origin", "")
            file = Path(origin.partition("::")[0])
            written.setdefault(file, []).append(path)
        failing: dict[Path, list[str]] = {file: [] for file in missing}
        for filed in report.already_failing + report.divergences_the_test_misses:
            failing.setdefault(Path(filed["origin"].partition("::")[0]), []).append(
                str(staging / filed["finding"] / "smallest.py"))
        for file in missing:
            self._write_entry(self._cache / keys[file], file, written.get(file, []), failing.get(file, []))
        shutil.rmtree(staging, ignore_errors=True)

    def _write_entry(self, entry: Path, file: Path, programs: list[Path], failing: list[str]) -> None:
        """One file's harvest, whole or not at all: programs and sidecars, then entry.json."""
        tmp = entry.with_name(entry.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        names = []
        for path in programs:
            shutil.copy(path, tmp / path.name)
            shutil.copy(path.with_suffix(".json"), tmp / path.with_suffix(".json").name)
            names.append(path.name)
        kept_failing = []
        for n, source in enumerate(failing):
            if Path(source).is_file():
                shutil.copy(source, tmp / f"failing-{n}.py")
                kept_failing.append(f"failing-{n}.py")
        storage.write_json(tmp / "entry.json", dict(file=str(file), torch=self._build.torch, programs=names,
                                                    failing=kept_failing))
        shutil.rmtree(entry, ignore_errors=True)
        tmp.rename(entry)

    def _read_entry(self, entry: Path, result: SuiteSeeds) -> None:
        try:
            data: dict[str, Any] = storage.read_json(entry / "entry.json")
        except (storage.StorageError, OSError):
            return
        for name in data.get("programs", []):
            try:
                program = load_program(entry / name)
                sidecar = storage.read_json((entry / name).with_suffix(".json"))
            except (ProgramError, storage.StorageError, OSError):
                continue
            result.checked.append(Entry(entry / name, program, frozenset(sidecar.get("features", [])),
                                        float(sidecar.get("seconds", 0.0))))
        for name in data.get("failing", []):
            try:
                result.to_check.append(load_program(entry / name))
            except ProgramError:
                continue


def harvester_factory(checker: Any, collect: Any, *, torch_version: str, workers: int,
                      backend: str) -> Callable[[Path], Harvester]:
    """`SuiteHarvest`'s harvesters: checks through `checker`, collections through `collect`,
    tests that fail filed in the staging directory (the campaign files them in its dry run)."""
    def make(out: Path) -> Harvester:
        return Harvester(checker.check, FindingStore(out, torch_version=torch_version, backend=backend), out,
                         torch_version=torch_version, workers=workers, collect=collect)
    return make
