"""Features: what the fuzzer counts as "new", as 63-bit integers (docs/design.md, "Coverage").

Two kinds share one integer space. Arc features (top bit clear) are line transitions
inside the traced torch directories, recorded by the worker's tracer in the compiled
run. Semantic features (top bit set) are derived here, in the parent, from what the
compiled run reported: graph-break types, exception types, recompile reasons and
bucketed Dynamo counts; and, where the campaign asks for them (`DYNAMO_SIGNALS` among
its coverage sources), recorded in the worker beside the arcs: the `VariableTracker`
kinds, (instruction, operand kind) pairs and guard kinds of the trace
(`mutator.runtime.signals`).
"""

from __future__ import annotations

import re
import zlib
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from mutator.core.observation import ExecResult

SEMANTIC_BIT = 1 << 62
_MASK = SEMANTIC_BIT - 1
_NUMBERS = re.compile(r"\d+")
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")


# A coverage source that is no path: Dynamo's own signals (`mutator.runtime.signals`), not arcs.
DYNAMO_SIGNALS = "dynamo-signals"
# What a campaign's compiled runs record unless told otherwise: the arcs of `torch/_dynamo` and
# Dynamo's own signals (bench/yield.py, 3 trials of 15 CPU-minutes: 1.6x the distinct reduced
# root causes of unguided fuzzing, where arcs alone gave 1.4x)
CAMPAIGN_COVERAGE = ("torch/_dynamo", DYNAMO_SIGNALS)
# What records a worker's arcs (`mutator.runtime.tracing`, said in `Ready.tracer`)
MONITORING_TRACER = "sys.monitoring"  # Python 3.12+: each line and branch once per run, nearly free
COVERAGE_TRACER = "coverage.py C tracer"  # Python 3.10, 3.11: every line, every time


def encode_arc(filename: str, from_line: int, to_line: int) -> int:
    """A stable integer for one arc: crc32 of the file, then the two (bounded) line numbers."""
    return (zlib.crc32(filename.encode()) << 31 | (from_line & 0x7FFF) << 16 | (to_line & 0xFFFF)) & _MASK


def encode_arcs(filename: str, arcs: Iterable[tuple[int, int]]) -> Iterator[int]:
    """`encode_arc` of each arc of one file (its crc32 taken once)."""
    high = zlib.crc32(filename.encode()) << 31
    return ((high | (a & 0x7FFF) << 16 | (b & 0xFFFF)) & _MASK for a, b in arcs)


def is_arc(feature: int) -> bool:
    return not feature & SEMANTIC_BIT


def semantic(kind: str, value: str) -> int:
    return SEMANTIC_BIT | (zlib.crc32(f"{kind}\0{value}".encode()) << 20 | zlib.adler32(value.encode()) & 0xFFFFF)


def dynamo_signal(kind: str, value: str) -> int:
    """One of Dynamo's own signals (kind "vt", "op" or "guard") as a semantic feature."""
    return semantic(f"dynamo-{kind}", value)


def bucket(n: int) -> int:
    """AFL-style hit-count buckets: 0, 1, 2, 3, 4-7, 8-15, 16-31, 32-127, 128+."""
    for i, top in enumerate((0, 1, 2, 3, 7, 15, 31, 127)):
        if n <= top:
            return i
    return 8


def semantic_features(result: ExecResult) -> frozenset[int]:
    """Graph-break types, exception types, recompile reasons and bucketed counts of a compiled run."""
    found: set[int] = set()
    observation = result.observation
    stats = observation.compile
    if stats is not None:
        found.update(semantic("gb", gb) for gb in stats.graph_breaks)
        found.update(semantic("unimplemented", gb) for gb in stats.unimplemented)
        found.update(semantic("recompile", normalize_reason(r)) for r in stats.recompile_reasons)
        found.update(semantic("fail", t) for t in stats.fail_types)
        for name, count in (("graphs", stats.graphs), ("frames", stats.frames), ("compiles", stats.compiles),
                            ("breaks", len(stats.graph_breaks)), ("recompiles", len(stats.recompile_reasons))):
            found.add(semantic("count", f"{name}:{bucket(count)}"))
    exceptions = [c.exception for c in observation.calls if c.exception is not None]
    if observation.uncaught is not None:
        exceptions.append(observation.uncaught)
    for exc in exceptions:
        found.add(semantic("exception", exc.type_name))
        found.update(semantic("exception-chain", t) for t in exc.chain)
        if exc.dynamo_frame is not None:
            found.add(semantic("dynamo-frame", f"{exc.dynamo_frame.filename}:{exc.dynamo_frame.function}"))
    found.add(semantic("outcome", result.outcome.value))
    return frozenset(found)


def normalize_reason(reason: str) -> str:
    """A recompile reason without its constants: "L['n'] == 3" and "L['n'] == 4" are one feature."""
    return _NUMBERS.sub("N", _QUOTED.sub("S", reason))[:200]


def arc_count(features: Iterable[int]) -> int:
    return sum(1 for f in features if is_arc(f))


def pack(features: Iterable[int]) -> bytes:
    """Features as sorted int64s: what crosses a pipe or the network without a Python object each."""
    return array("q", sorted(features)).tobytes()


def unpack(data: bytes) -> frozenset[int]:
    values = array("q")
    values.frombytes(data)
    return frozenset(values)


@dataclass(frozen=True, slots=True)
class CoverageReport:
    """A worker's account of a passing check's features, for a driver that merges thousands a
    second. `new`: the features this worker had not reported before, all the driver can lack
    of them (it adds every feature a worker reports); `packed`: every feature of the check,
    sent only when it may be kept (`new` is not empty, or it is a seed); `counts`: now and
    then, the hits the worker counted meanwhile of features it had reported already, as
    (feature, hits) pairs. Each execution's hit of a feature is counted once, in `new` or
    in a later `counts`; the hits of the last few checks before a worker stops are lost."""

    new: frozenset[int]
    packed: bytes = b""
    counts: bytes = b""

    def features(self) -> frozenset[int]:
        return unpack(self.packed)

    def hit_counts(self) -> dict[int, int]:
        values = array("q")
        values.frombytes(self.counts)
        return dict(zip(values[0::2], values[1::2]))


class WorkerCoverage:
    """The worker's side of `CoverageReport`: what it has reported, and its uncounted hits."""

    def __init__(self, *, flush_every: int = 256) -> None:
        self._reported: set[int] = set()
        self._counts: Counter[int] = Counter()
        self._flush_every = flush_every
        self._reports = 0

    def report(self, features: frozenset[int], *, keepable: bool = False) -> CoverageReport:
        """`keepable`: send every feature whatever is new (a seed is kept when it passes)."""
        new = features.difference(self._reported)
        self._reported |= new
        self._counts.update(features.difference(new))
        self._reports += 1
        counts = b""
        if self._reports % self._flush_every == 0 and self._counts:
            counts = array("q", [x for pair in self._counts.items() for x in pair]).tobytes()
            self._counts.clear()
        return CoverageReport(new, pack(features) if new or keepable else b"", counts)
