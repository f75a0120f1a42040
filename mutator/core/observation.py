"""What one run of a program observed, as frozen data (docs/design.md, "Programs", "Execution").

Everything here is torch-free and picklable: a forked child builds it, its worker sends
it to the parent, the oracle compares two of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from mutator.core.configurations import CONFIGURATIONS, DEFAULT
from mutator.core.values import ExceptionInfo, Value


class Mode(Enum):
    EAGER = "eager"
    COMPILED = "compiled"
    REFERENCE = "reference"  # eager in float64: the tie-breaker for numeric differences


class Outcome(Enum):
    """How a run ended, from the program's point of view."""

    COMPLETED = "completed"  # ran to the end (sys.exit(0) included)
    RAISED = "raised"  # an exception escaped the program (or drive)
    EXITED = "exited"  # sys.exit(n != 0) or os._exit(n)
    SIGNALLED = "signalled"  # killed by a signal: segfault, abort, ...
    TIMEOUT = "timeout"  # wall-clock or CPU limit
    MEMORY = "memory"  # hit the memory limit
    LOST = "lost"  # the runtime itself failed (worker died, broken report): not the program's doing

    @property
    def failed(self) -> bool:
        return self is not Outcome.COMPLETED


SANDBOX_CHOICES = ("on", "audit", "off")  # RunConfig.sandbox: the best layer there is, the hooks, none


@dataclass(frozen=True, slots=True)
class RunConfig:
    """How programs are run; the same for every run of a check (but a confirmation's
    perturbed eager run), and of a campaign but for the configuration each check takes."""

    backend: str = "eager"  # replaces any backend named by string (or none) in the program
    fullgraph: bool | None = None  # None: as the program wrote it
    dynamic: bool | None = None
    timeout: float = 60.0  # seconds of wall clock per run
    memory_mb: int = 4096  # address space the program may add to the warm worker's
    file_mb: int = 1024  # the largest file a run may write (its stdout and stderr are files too)
    stdout_limit: int = 64 * 1024  # characters of stdout kept as text (all of it is hashed)
    # confinement of each run (mutator.exec.sandbox): "on", the best layer the workers have;
    # "audit", audit hooks only; "off", none (environment scrubbing and limits stay)
    sandbox: str = "on"
    # an eager run only: Dynamo's counters and the compiler's other state read otherwise than
    # in any other run (mutator.runtime.perturb); a confirmation's second eager run sets it
    perturb_compiler_state: bool = False
    # an eager run only: the program's functools.lru_cache functions, called inside a compiled
    # call, run without their cache, as Dynamo traces them (runtime.lru_caches); a confirmation
    # sets it where the compiled run shows Dynamo traced through one
    lru_cache_calls_through: bool = False
    # the Dynamo configuration a compiled run takes (`mutator.core.configurations`); never the eager run's
    configuration: str = DEFAULT
    # a compiled run records arcs where its worker traces them (`mutator.runtime.tracing`); off, Dynamo's
    # signals alone (a campaign's `--arc-share` below 1 on coverage.py's tracer, which doubles a compile)
    arcs: bool = True

    def __post_init__(self) -> None:
        if self.backend not in {"eager", "aot_eager", "inductor"}:
            raise ValueError(f"backend must be eager, aot_eager or inductor, not {self.backend!r}")
        if self.sandbox not in SANDBOX_CHOICES:
            raise ValueError(f"sandbox must be one of {', '.join(SANDBOX_CHOICES)}, not {self.sandbox!r}")
        if self.configuration not in CONFIGURATIONS:
            raise ValueError(f"configuration must be one of {', '.join(CONFIGURATIONS)}, not {self.configuration!r}")
        if self.timeout <= 0 or self.memory_mb <= 0 or self.file_mb <= 0:
            raise ValueError("timeout, memory_mb and file_mb must be positive")


@dataclass(frozen=True, slots=True)
class CompiledCallable:
    """One callable the program compiled, with the options it was compiled with."""

    label: str
    backend: str  # the backend used ("eager", ...) or "callable:<name>" for a program's own
    fullgraph: bool
    dynamic: bool | None


@dataclass(frozen=True, slots=True)
class Recompile:
    """A recompilation Dynamo did during a call: which code object, and the guard that failed."""

    code: str  # "forward@model.py:12"
    reason: str  # the failing guard: "L['x'].size()[0] == 3"
    hint: str = ""  # Dynamo's own HINT for this guard, when it gives one
    limit: bool = False  # this compilation was refused: the code object hit the recompile limit
    lowered: bool = False  # ... a limit the program had set below Dynamo's default: reaching it was its aim


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One call through a compiled (or, in eager runs, a recorded) callable."""

    index: int  # order among all recorded calls of the run
    label: str
    args: Value  # the positional arguments after the call: in-place updates show
    kwargs: Value
    result: Value = None
    exception: ExceptionInfo | None = None
    program_state: Value = None  # the program's globals after the call
    # the state before the call, as guards see it: inputs' metadata and Python values (tensor
    # values are not guarded), the compiled module or closure, modes, RNG states, globals
    signature: str = ""
    exact_signature: str = ""  # the same with tensor values
    compiles: int = 0  # Dynamo compilations started during this call
    recompiles: tuple[Recompile, ...] = ()
    resets: int = 0  # torch._dynamo.reset() calls the program made before this call ended
    error_on_graph_break: bool = False  # torch._dynamo.error_on_graph_break's setting when the call began
    test: str = ""  # the unittest test running when the call was made ("Tests.test_add"), if any
    entry_code: str = ""  # the compiled callable's own code object, as Recompile.code names it
    stdout_at: int = 0  # characters the program had printed when the call began
    # compiled runs: the torch._dynamo.config / torch._inductor.config entries that differed,
    # when the call began, from the start of the run: (dotted name, repr), as a reproducer sets them
    config: tuple[tuple[str, str], ...] = ()
    # compiled runs: the program globals a backend of the program's own had written by the end of
    # this call (runtime.backends): the compiler's output, not compared
    compiler_made: tuple[str, ...] = ()
    # compiled runs: where Dynamo had traced through a functools.lru_cache wrapper by the end of this
    # call, ignoring its cache as it documents ("prog.py:14"; runtime.lru_caches)
    lru_cache_traced: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class TestOutcome:
    """One unittest test (or subtest) of a program that runs its own tests."""

    __test__ = False  # a data class, not a test for pytest to collect

    test: str  # "Tests.test_add"
    status: str  # pass, fail, error, skip, xfail, xpass
    exception: ExceptionInfo | None = None
    from_call: int | None = None  # the recorded call the test's exception escaped from, if it did


@dataclass(frozen=True, slots=True)
class Stdout:
    head: str  # the first RunConfig.stdout_limit characters
    length: int
    digest: str  # of the whole stream
    normalized_digest: str  # after blanking addresses (0x7f...) and autograd nodes' names (core.printed)
    withheld: int = 0  # characters left out: the program printing compiler state (frame counts, counters)

    @property
    def truncated(self) -> bool:
        return self.length > len(self.head)


@dataclass(frozen=True, slots=True)
class CompileStats:
    """What Dynamo did during a compiled run (counters and compilation metrics)."""

    frames: int = 0  # frames Dynamo was asked to convert
    frames_ok: int = 0
    graphs: int = 0
    compiles: int = 0  # compilation metrics entries (one per frame conversion)
    graph_breaks: tuple[str, ...] = ()  # gb_type of every graph break, sorted, unique
    unimplemented: tuple[str, ...] = ()  # gb_type of Unsupported that skipped a frame
    recompile_reasons: tuple[str, ...] = ()
    recompile_limit_hit: bool = False
    fail_types: tuple[str, ...] = ()  # exception types recorded by failed compilations
    compile_seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class Observation:
    calls: tuple[CallRecord, ...] = ()
    compiled: tuple[CompiledCallable, ...] = ()
    returned: Value = None  # what drive(f) returned
    state: Value = None  # what state() returned
    state_error: ExceptionInfo | None = None
    stdout: Stdout | None = None
    uncaught: ExceptionInfo | None = None  # the exception that escaped the program
    uncaught_call: int | None = None  # the recorded call it escaped from; None: raised outside any call
    exit_code: int | None = None  # sys.exit's code, when the program called it
    compile: CompileStats | None = None
    tests: tuple[TestOutcome, ...] = ()  # unittest results, for programs that run their own tests


@dataclass(frozen=True, slots=True)
class ExecResult:
    """One run of one program in one mode. The pool returns this for anything a program does."""

    program: str
    mode: Mode
    outcome: Outcome
    observation: Observation = field(default_factory=Observation)
    seconds: float = 0.0
    exit_code: int | None = None
    signal: int | None = None
    detail: str = ""  # a human sentence for TIMEOUT, MEMORY, SIGNALLED, LOST
    stderr_tail: str = ""  # the end of the child's stderr (faulthandler's dump on a crash)
    features: frozenset[int] = frozenset()
    worker: int | None = None  # pid of the warm worker that ran it
    # CPU seconds by stage (`mutator.core.cpu`): the forked child's set-up, program (with its
    # compilations and, compiled, the coverage tracing), coverage collection and report, the
    # worker's own isolation work around it (fork, collecting the report), and what reaped
    # children used beyond what they said (sending the report, exiting: `mutator.core.cpu.EXIT`)
    cpu: tuple[tuple[str, float], ...] = ()

    @property
    def uncaught(self) -> ExceptionInfo | None:
        return self.observation.uncaught
