"""The messages between the parent's pool and its workers (sent with `mutator.exec.wire`)."""

from __future__ import annotations

from dataclasses import dataclass

from mutator.observation import ExecResult, Mode, RunConfig
from mutator.program import Program


@dataclass(frozen=True, slots=True)
class Job:
    job_id: int
    program: Program
    mode: Mode
    config: RunConfig


@dataclass(frozen=True, slots=True)
class Ready:
    """Sent once by a worker after warm-up."""

    pid: int
    torch_version: str
    warmup_seconds: float


@dataclass(frozen=True, slots=True)
class Done:
    job_id: int
    result: ExecResult


@dataclass(frozen=True, slots=True)
class Stop:
    """Ask a worker to exit after its current job."""
