"""Run one program in this process, in one mode, and observe it.

`run_program` is what a forked child executes (see `mutator.exec.worker`); warm-up and the
in-process benchmark call it directly. It never raises for anything the program does.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import linecache
import mmap
import os
import random
import re
import sys
import types
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch._dynamo import utils as dynamo_utils

from mutator.core.configurations import CONFIGURATIONS
from mutator.core.observation import CompileStats, Mode, Observation, RunConfig, Stdout
from mutator.core.printed import without_node_names
from mutator.core.program import Program, ProgramForm
from mutator.runtime import configs
from mutator.runtime.own_checks import CompilerPrints, ProgramSource
from mutator.runtime.errors import exception_info
from mutator.runtime.ownership import library_bound_names
from mutator.runtime.perturb import perturbed_compiler_state
from mutator.runtime.session import Session, recompile_reason
from mutator.runtime.snapshot import snapshot

HARNESS_MODULE = "__mutator__"
RECOMPILE_LIMIT_GB = "Dynamo recompile limit exceeded"
_ADDRESS = re.compile(r"0x[0-9a-fA-F]{4,}")


class BoundedStdout(io.TextIOBase):
    """sys.stdout for the program: keeps the first `limit` characters, hashes everything.

    What `withhold()` says is the program printing compiler state is counted, not kept.
    """

    def __init__(self, limit: int, withhold: Callable[[], bool] | None = None) -> None:
        self._limit = limit
        self._withhold = withhold
        self._withheld = 0
        self._head: list[str] = []
        self._kept = 0
        self._length = 0
        self._digest = hashlib.sha1()
        self._normalized = hashlib.sha1()

    def writable(self) -> bool:
        return True

    @property
    def position(self) -> int:
        """Characters written so far (withheld ones not counted)."""
        return self._length

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"

    # Never a frame Dynamo converts. A real sys.stdout's write is C: a print that runs while
    # Dynamo's frame callback is on (at a graph break, in a resume function) calls it unseen.
    # Ours is Python, so Dynamo would convert this frame, and CompilerPrints' frame walk with it,
    # as the program's code: a crash there (RecursionError in lazy.py:realize_all, on 2.15 under
    # nested graph breaks) was filed as the program's bug, and plain python passes.
    @torch.compiler.disable
    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        if self._withhold is not None and self._withhold():
            self._withheld += len(text)
            return len(text)
        self._length += len(text)
        encoded = text.encode("utf-8", "surrogatepass")
        self._digest.update(encoded)
        self._normalized.update(without_node_names(_ADDRESS.sub("0x?", text)).encode("utf-8", "surrogatepass"))
        if self._kept < self._limit:
            piece = text[: self._limit - self._kept]
            self._head.append(piece)
            self._kept += len(piece)
        return len(text)

    def result(self) -> Stdout:
        return Stdout(
            head="".join(self._head),
            length=self._length,
            digest=self._digest.hexdigest()[:16],
            normalized_digest=self._normalized.hexdigest()[:16],
            withheld=self._withheld,
        )


def seed_everything(seed: int = 0) -> None:
    torch.manual_seed(seed)
    random.seed(seed)
    np.random.seed(seed)


def deterministic_memory() -> None:
    """`torch.empty` and friends fill new memory (NaN, or the largest integer) instead of
    leaving whatever the allocator had: uninitialised values differ between processes."""
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.utils.deterministic.fill_uninitialized_memory = True  # type: ignore[attr-defined]


def shift_addresses() -> list[Any]:
    """Allocate a random amount in every small-object size class and one mapping.

    Forked children of one warm worker would otherwise allocate at the same addresses, so
    `id()`s, thread idents and addresses would agree between two runs on one worker and
    differ only across workers: run-specific values must differ in every run to be seen
    as such. Uses os.urandom, never the program's seeded generators.
    """
    noise = os.urandom(64)
    kept: list[Any] = [bytes(16 * size_class + (noise[size_class] % 16)) for size_class in range(32)
                       for _ in range(noise[32 + size_class] % 48)]
    kept.append(bytearray(4096 * (1 + noise[0] % 64)))
    kept.append(mmap.mmap(-1, 4096 * (1 + noise[1] % 255)))
    return kept


def run_program(program: Program, mode: Mode, config: RunConfig, emit: Callable[[object], None]) -> Observation:
    """Execute `program` once; CallRecords go to `emit` as they happen, the rest is returned.
    A compiled run first takes the run's configuration (before the session watches what the
    program changes of Dynamo's: those settings are not the program's)."""
    if mode is Mode.COMPILED:
        configs.apply(CONFIGURATIONS[config.configuration])
    source = ProgramSource(program.name, program.source)
    session = Session(mode, config, emit, source, library_bound_names(program.source))
    stdout = BoundedStdout(config.stdout_limit, CompilerPrints(source))
    session.stdout_position = lambda: stdout.position
    name = HARNESS_MODULE if program.form is ProgramForm.HARNESS else "__main__"
    module = types.ModuleType(name)
    module.__file__ = program.name
    session.program_globals = module.__dict__
    previous_module, previous_argv = sys.modules.get(name), sys.argv
    sys.modules[name] = module
    sys.argv = [program.name]  # unittest.main() and argparse read it
    linecache.cache[program.name] = (len(program.source), None, program.source.splitlines(True), program.name)
    shifted = shift_addresses()
    seed_everything()
    returned: Any = None
    state: Any = None
    state_error = uncaught = None
    uncaught_call: int | None = None
    exit_code: int | None = None
    # a confirmation's perturbed eager run: what the program derives from compiler state reads otherwise
    perturbing = config.perturb_compiler_state and mode is Mode.EAGER
    with perturbed_compiler_state() if perturbing else contextlib.nullcontext(), session.patched(), \
            contextlib.redirect_stdout(stdout):
        try:
            exec(compile(program.source, program.name, "exec"), module.__dict__)
            if program.form is ProgramForm.HARNESS:
                returned = _drive(module)
                if callable(module.__dict__.get("state")):
                    try:
                        state = snapshot(module.state())
                    except Exception as exc:
                        state_error = exception_info(exc, source)
        except SystemExit as exc:
            exit_code = _exit_code(exc)
        except BaseException as exc:  # everything the program raises becomes an observation
            uncaught = exception_info(exc, source)
            uncaught_call = session.escaped_from(exc)
    sys.argv = previous_argv
    if previous_module is not None:
        sys.modules[name] = previous_module
    else:
        sys.modules.pop(name, None)
    del shifted
    return Observation(
        compiled=tuple(session.compiled),
        returned=snapshot(returned) if returned is not None else None,
        state=state,
        state_error=state_error,
        stdout=stdout.result(),
        uncaught=uncaught,
        uncaught_call=uncaught_call,
        exit_code=exit_code,
        compile=compile_stats() if mode is Mode.COMPILED else None,
        tests=tuple(session.tests),
    )


def _drive(module: types.ModuleType) -> Any:
    ns = module.__dict__
    compile_kwargs = ns.get("COMPILE_KWARGS") or {}
    if not isinstance(compile_kwargs, dict):
        raise TypeError("COMPILE_KWARGS must be a dict of torch.compile keyword arguments")
    compiled = torch.compile(ns["fn"], **compile_kwargs)
    drive = ns.get("drive")
    if callable(drive):
        return drive(compiled)
    args = ns["inputs"]()
    if not isinstance(args, (tuple, list)):
        args = (args,)
    return compiled(*args)


def _exit_code(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    return 1  # sys.exit("message") exits with status 1


def compile_stats() -> CompileStats:
    """Dynamo's counters and compilation metrics for the run so far."""
    counters = dynamo_utils.counters
    metrics = [m for m in dynamo_utils.get_compilation_metrics() if not m.is_runtime]
    unimplemented = sorted({gb_type(msg) for msg in counters.get("unimplemented", {})})
    return CompileStats(
        frames=counters["frames"].get("total", 0),
        frames_ok=counters["frames"].get("ok", 0),
        graphs=counters["stats"].get("unique_graphs", 0),
        compiles=len(metrics),
        graph_breaks=tuple(sorted({gb_type(msg) for msg in counters.get("graph_break", {})})),
        unimplemented=tuple(unimplemented),
        recompile_reasons=tuple(recompile_reason(m.recompile_reason) for m in metrics if m.recompile_reason),
        recompile_limit_hit=RECOMPILE_LIMIT_GB in unimplemented,
        fail_types=tuple(sorted({m.fail_type for m in metrics if m.fail_type})),
        compile_seconds=round(sum(m.entire_frame_compile_time_s or 0.0 for m in metrics), 4),
    )


def gb_type(message: str) -> str:
    """A graph-break counter key is the formatted message; its first line is the gb_type."""
    return message.strip().split("\n", 1)[0].strip()[:200]
