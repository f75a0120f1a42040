"""The reduction problem: the current program and whether a candidate is still interesting.

Like shrinkray's: passes propose, the problem decides. A candidate is kept when it is
smaller in shortlex order (shorter, or as long and lexicographically smaller, so `3`
shrinks to `1` and every kept step makes progress) and interesting. Candidates are
checked in batches, in parallel, and the first interesting one of a batch in the
passes' order wins. Results are cached by the syntax tree's hash, so a candidate that
differs only in comments or blank lines is never checked twice.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import re
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

import libcst as cst

from mutator.core import parsing
from mutator.reduce.passes import PASSES, NamedPass

# sources in, one verdict each: checked together (the predicate spreads them over the workers);
# None for one it left unjudged because an earlier one is interesting
Predicate = Callable[[list[str]], list[bool | None]]
Admissible = Callable[[str], bool]


@dataclass
class PassStats:
    tried: int = 0  # candidates checked (cache hits not counted)
    kept: int = 0
    seconds: float = 0.0


@dataclass
class ReductionStats:
    passes: dict[str, PassStats] = field(default_factory=dict)
    checks: int = 0
    checking_seconds: float = 0.0  # waiting for the predicate; the rest of the passes' time is proposing
    cache_hits: int = 0
    rounds: int = 0
    timed_out: bool = False
    pass_errors: list[str] = field(default_factory=list)  # passes that failed on this program (bugs of ours)


def size_key(source: str) -> tuple[int, str]:
    return (len(source), source)


def tree_digest(source: str) -> str:
    """Equal for sources that differ only in comments, blank lines and formatting."""
    try:
        dumped = ast.dump(parse_quietly(source))
    except SyntaxError:
        dumped = source
    return hashlib.sha1(dumped.encode()).hexdigest()


@functools.lru_cache(maxsize=16)
def parse_quietly(source: str) -> ast.Module:
    """ast.parse with Python's SyntaxWarnings (`1if`, `x is 1`) turned into SyntaxErrors:
    a candidate that warns is not one a person would paste anywhere. Cached: a candidate
    is filtered and hashed from one parse, so the tree is shared; read it, never change it."""
    return parsing.parse(source, strict=True)


class ReductionProblem:
    def __init__(self, source: str, is_interesting: Predicate, *, admissible: Admissible = lambda s: True,
                 batch: int = 2, deadline: float | None = None, clock: Callable[[], float] = time.monotonic,
                 on_progress: Callable[[str, str], None] = lambda current, pass_name: None,
                 stop: Callable[[], bool] = lambda: False) -> None:
        self.current = source
        self._is_interesting = is_interesting
        self._admissible = admissible
        self._batch = max(1, batch)
        self._deadline = deadline
        self._clock = clock
        self._on_progress = on_progress
        self._stop = stop  # asked to stop early (the campaign is ending): like running out of time
        self._cache: dict[str, bool] = {}
        self.stats = ReductionStats()

    @property
    def out_of_time(self) -> bool:
        if self._stop() or self._deadline is not None and self._clock() >= self._deadline:
            self.stats.timed_out = True
        return self.stats.timed_out

    def run(self, passes: Iterable[NamedPass] = PASSES) -> str:
        """Run every pass until none makes progress (or time runs out); the reduced source.
        The first round runs the passes in the order given, later ones by their yield so far."""
        passes = list(passes)
        progress = True
        while progress and not self.out_of_time:
            self.stats.rounds += 1
            progress = False
            for named in self._by_yield(passes):
                progress |= self.run_pass(named)
                if self.out_of_time:
                    break
        tidied = tidy(self.current)
        if tree_digest(tidied) == tree_digest(self.current):  # not when a string literal held the blank lines
            self.current = tidied
        return self.current

    def _by_yield(self, passes: list[NamedPass]) -> list[NamedPass]:
        """Most kept per candidate checked first (a pass that checked nothing costs nothing:
        it goes first); ties keep the given order."""
        def key(named: NamedPass) -> float:
            stats = self.stats.passes.get(named.name)
            return -(stats.kept + 1) / (stats.tried + 1) if stats is not None else -1.0
        return sorted(passes, key=key)

    def run_pass(self, named: NamedPass) -> bool:
        """Apply one pass until it finds nothing more; whether it kept anything."""
        stats = self.stats.passes.setdefault(named.name, PassStats())
        started = self._clock()
        kept_any = False
        skip = 0  # after a success, go on about where it was, not from the start
        while not self.out_of_time:
            position = self._first_interesting(self._candidates(named, skip), stats)
            if position is None:
                break
            kept_any = True
            stats.kept += 1
            skip = position
            self._on_progress(self.current, named.name)
        stats.seconds += self._clock() - started
        return kept_any

    def _candidates(self, named: NamedPass, skip: int) -> Iterator[tuple[int, str]]:
        try:
            module = cst.parse_module(self.current)
        except cst.ParserSyntaxError:
            return
        current_key = size_key(self.current)
        proposals = named.proposals(module, skip)
        while True:
            try:
                position, candidate = next(proposals)
                source = candidate.code
            except StopIteration:
                return
            except Exception as exc:  # a pass that fails on some program ends, the reduction goes on
                self.stats.pass_errors.append(f"{named.name}: {type(exc).__name__}: {exc}"[:300])
                return
            if size_key(source) < current_key and self._admissible(source):
                yield position, source

    def _first_interesting(self, candidates: Iterator[tuple[int, str]], stats: PassStats) -> int | None:
        """Check candidates batch by batch; take the first interesting one, return its position."""
        while not self.out_of_time:
            batch: list[tuple[int, str, str]] = []
            for position, source in candidates:
                digest = tree_digest(source)
                if digest in self._cache:
                    self.stats.cache_hits += 1
                    if self._cache[digest]:  # interesting and smaller: take it without checking
                        self.current = source
                        return position
                    continue
                if any(d == digest for _, _, d in batch):
                    continue
                batch.append((position, source, digest))
                if len(batch) >= self._batch:
                    break
            if not batch:
                return None
            asked = self._clock()
            verdicts = self._is_interesting([source for _, source, _ in batch])
            self.stats.checking_seconds += self._clock() - asked
            judged = sum(1 for interesting in verdicts if interesting is not None)
            stats.tried += judged
            self.stats.checks += judged
            for (position, source, digest), interesting in zip(batch, verdicts):
                if interesting is not None:
                    self._cache[digest] = interesting
            for (position, source, _), interesting in zip(batch, verdicts):
                if interesting:
                    self.current = source
                    return position
        return None


_BLANK_RUNS = re.compile(r"\n{4,}")
_BLANK_AFTER_HEADER = re.compile(r":\n(?:[ \t]*\n)+")


def tidy(source: str) -> str:
    """At most two blank lines in a row, none right after a `class ...:` or `def ...:`
    line, none at the start, one final newline."""
    source = _BLANK_AFTER_HEADER.sub(":\n", _BLANK_RUNS.sub("\n\n\n", source))
    return source.lstrip("\n").rstrip() + "\n"
