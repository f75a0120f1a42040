"""Which tests a test module has, asked of the module itself: it is imported in a sandboxed
worker, as pytest would import it, and lists what its namespace holds then (`by_import`).

A collection is a program the executor runs like any other (`by_import`'s source with the
test file's path, named after the test file so that the sandbox lets it read the folder),
in an eager run; its answer is the last line it prints. So it needs nothing of the pool
but `submit`: the same sandbox, limits, timeout and replacement of a worker that dies as
any program, on the local pool or on Ray. It only decides which tests exist and where
their code lives; the programs are still built from the files' text (`harvest.located`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, replace
from pathlib import Path

from mutator.core.observation import ExecResult, Mode, Outcome, RunConfig
from mutator.core.program import SCRIPT_DECLARATION, Program
from mutator.harvest import by_import

STDOUT_LIMIT = 16 << 20  # characters of the answer kept: a module of thousands of tests fits
_SOURCE = Path(by_import.__file__).read_text(encoding="utf-8")


@dataclass(frozen=True, slots=True)
class Site:
    """Where a class or function is written: its file and qualified name (and first line)."""

    file: str
    qualname: str
    line: int = 0


@dataclass(frozen=True, slots=True)
class CollectedTest:
    """One test the module has once imported."""

    test_id: str  # pytest's: "ReproTests::test_add_n_1", "test_free_function"
    cls: str  # the name its class has in the module's namespace ("" for a test function)
    attribute: str  # the name the test has on its class (or in the module)
    classes: tuple[Site, ...]  # its class's MRO, of the classes written in the test's folder
    function: Site | None  # the function whose code it runs (None: not a Python function)
    params: tuple[tuple[str, str], ...] | None  # what its parametrisation binds, as source; None: not writable
    why: str = ""  # why `params` is None
    skip: str = ""  # the reason unittest's decorators or pytest's marks skip it
    xfail: bool = False
    device: str | None = None  # the device of a class instantiate_device_type_tests made
    marks_parametrize: bool = False  # pytest.mark.parametrize: its parameter sets are read from the text
    broken: str = ""  # what went wrong reading this entry of the namespace


@dataclass(frozen=True, slots=True)
class CollectedClass:
    """A class of the folder along a collected class's MRO, as it is after the import."""

    site: Site
    members: tuple[str, ...]
    copied: tuple[tuple[str, Site], ...]  # (member, the class of the folder its function comes from)


@dataclass(frozen=True, slots=True)
class Collected:
    module: str  # the name it was imported under
    tests: tuple[CollectedTest, ...]
    classes: tuple[CollectedClass, ...]

    def cls(self, site: Site) -> CollectedClass | None:
        return next((c for c in self.classes if c.site == site), None)


@dataclass(frozen=True, slots=True)
class CollectionFailed:
    """The module could not be imported (or the collection itself failed): its tests are read
    from its text instead."""

    error: str  # "ImportError: ... (test_x.py:3)"


@dataclass(frozen=True, slots=True)
class ModuleSkipped:
    """The module skips itself when imported (`unittest.SkipTest`, pytest's module-level skip)."""

    reason: str


Collection = Collected | CollectionFailed | ModuleSkipped


def collection_program(path: Path) -> Program:
    """The program that collects `path`."""
    header = f"{SCRIPT_DECLARATION} (collects the tests of {path.name} by importing it)\n"
    source = f'{header}{_SOURCE}\n\nif __name__ == "__main__":\n    main({str(path.resolve())!r})\n'
    return Program.from_source(source, str(path.resolve()))


def collection_of(result: ExecResult) -> Collection:
    """What the run of a collection program answered."""
    lines = result.observation.stdout.head.splitlines() if result.observation.stdout else []
    answer = next((line for line in reversed(lines) if line.startswith(by_import.MARKER)), None)
    if result.outcome is not Outcome.COMPLETED or answer is None:
        return CollectionFailed(f"the collection run {result.outcome.value}: {result.detail or 'no answer'}"[:300])
    try:
        return _parsed(json.loads(answer.removeprefix(by_import.MARKER)))
    except (ValueError, KeyError, TypeError) as exc:  # an answer of ours we cannot read: a bug here or there
        return CollectionFailed(f"the collection's answer cannot be read ({type(exc).__name__}: {exc})"[:300])


class Collector:
    """Collects test modules on an executor (anything with the pool's `submit`)."""

    def __init__(self, submit: Callable[..., Future[ExecResult]], config: RunConfig) -> None:
        self._submit = submit
        self._config = replace(config, stdout_limit=max(config.stdout_limit, STDOUT_LIMIT))

    def collect(self, path: Path) -> Future[Collection]:
        """The collection of `path`, when it comes; a run that cannot be made is a failed collection."""
        collected: Future[Collection] = Future()
        try:
            run = self._submit(collection_program(path), Mode.EAGER, self._config)
        except Exception as exc:  # noqa: BLE001 - a closed pool, a program we could not build: this file's
            collected.set_result(CollectionFailed(f"not collected: {type(exc).__name__}: {exc}"[:300]))
            return collected

        def done(future: Future[ExecResult]) -> None:
            try:
                collected.set_result(collection_of(future.result()))
            except Exception as exc:  # noqa: BLE001 - no worker could run it: the text decides instead
                collected.set_result(CollectionFailed(f"not collected: {type(exc).__name__}: {exc}"[:300]))
        run.add_done_callback(done)
        return collected


def _parsed(answer: dict) -> Collection:
    if "error" in answer:
        return CollectionFailed(str(answer["error"]))
    if "skipped" in answer:
        return ModuleSkipped(str(answer["skipped"]) or "skipped")
    tests = tuple(_test(t) for t in answer["tests"])
    classes = tuple(CollectedClass(_site(c), tuple(c["members"]),
                                   tuple((m["name"], _site(m)) for m in c["copied"])) for c in answer["classes"])
    return Collected(str(answer["module"]), tests, classes)


def _test(entry: dict) -> CollectedTest:
    if "broken" in entry:
        return CollectedTest(str(entry["id"]), "", "", (), None, (), broken=str(entry["broken"]))
    params = entry["params"]
    return CollectedTest(
        test_id=str(entry["id"]), cls=str(entry["class"]), attribute=str(entry["attribute"]),
        classes=tuple(_site(s) for s in entry["mro"]),
        function=_site(entry["function"]) if entry["function"] else None,
        params=None if params is None else tuple((str(k), str(v)) for k, v in params.items()),
        why=str(entry.get("why", "")), skip=str(entry.get("skip", "")), xfail=bool(entry.get("xfail")),
        device=entry.get("device"), marks_parametrize=bool(entry.get("marks_parametrize")))


def _site(entry: dict) -> Site:
    return Site(str(entry["file"]), str(entry["qualname"]), int(entry.get("line", 0)))
