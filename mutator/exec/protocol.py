"""The messages between an executor and its workers (sent with `mutator.exec.wire`, or as
a Ray actor's arguments and return values)."""

from __future__ import annotations

from dataclasses import dataclass

from mutator.core.build import Build
from mutator.judge.check import CheckReply, CheckTask
from mutator.core.observation import ExecResult, Mode, RunConfig
from mutator.core.program import Program


@dataclass(frozen=True, slots=True)
class Job:
    """One run of one program in one mode."""

    job_id: int
    program: Program
    mode: Mode
    config: RunConfig

    @property
    def deadline(self) -> float:
        """Seconds the worker may take to answer, beyond which it is presumed stuck (besides a margin)."""
        return self.config.timeout


@dataclass(frozen=True, slots=True)
class CheckJob:
    """One first pass (`mutator.judge.check.first_pass`): build, two runs, judge, repair rules."""

    job_id: int
    task: CheckTask
    config: RunConfig

    @property
    def deadline(self) -> float:
        return 2 * self.config.timeout + BUILD_SECONDS

    @property
    def program(self) -> Program:
        return self.task.program


BUILD_SECONDS = 60.0  # building a mutant and judging, beyond the two runs' timeouts


@dataclass(frozen=True, slots=True)
class Ready:
    """Sent once by a worker after warm-up."""

    pid: int
    build: Build  # the torch under test and the Python running it
    warmup_seconds: float
    sandbox: str = ""  # the best confinement this worker offers (mutator.exec.sandbox.available)
    notes: tuple[str, ...] = ()  # what the runtime cannot do on this torch, a line each
    # the Dynamo configurations this torch has every entry of (`mutator.runtime.configs.available`)
    configurations: tuple[str, ...] = ("default",)
    # what records the compiled runs' arcs (`mutator.runtime.tracing`: "sys.monitoring" on Python 3.12+,
    # "coverage.py C tracer" before); "" without arcs
    tracer: str = ""

    @property
    def torch_version(self) -> str:
        return self.build.torch


@dataclass(frozen=True, slots=True)
class Done:
    job_id: int
    result: ExecResult | CheckReply


@dataclass(frozen=True, slots=True)
class Stop:
    """Ask a worker to exit after its current job."""
