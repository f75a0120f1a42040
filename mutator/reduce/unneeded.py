"""The reduced program without what its own "what matters" analysis proved it does not need.

The reducer's passes delete and simplify what they know how to; "what matters"
(`mutator.reduce.matters`) then probes each construct left, and some of its variants are
reductions the passes never propose: a generator's `if` filter dropped, a decorator
removed, `getattr(x, "a")` spelled `x.a`. Every such variant that still fails, of a
construct no change of which makes the bug go away, is taken: all together where their
edits compose (they change different characters of the program), else one at a time,
greedily, each kept when the program with it and those kept before still fails. The
analysis is then adjusted to describe the result: rows of what was taken go (their
constructs are listed as removed), and a variant tried and refused carries what the try
gave. The caller confirms the result in fresh runs before it becomes `reduced.py`.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from mutator.reduce.constructs import constructs
from mutator.reduce.matters import BREAKS_PROGRAM, STILL_FAILS, Matters, Row

# variants judged, (outcome, detail) each, with the finding's predicate (`Prober.outcomes`)
Judge = Callable[[list[str]], list[tuple[str, str]]]


@dataclass(frozen=True, slots=True)
class Taken:
    """The program with the variants taken, and the analysis adjusted to it."""

    source: str
    matters: Matters


def merged(base: str, edits: Sequence[str]) -> str | None:
    """`base` with the changes of every one of `edits` (each a whole program made from
    `base`) applied together; None when two of them change the same characters."""
    spans: list[tuple[int, int, str]] = []  # (start, end, replacement) in `base`
    for edit in edits:
        matcher = difflib.SequenceMatcher(None, base, edit, autojunk=False)
        spans += [(i1, i2, edit[j1:j2]) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]
    spans.sort()
    for (start, end, _), (next_start, _, _) in zip(spans, spans[1:]):
        if next_start < end or next_start == start:  # overlapping, or two insertions at one place
            return None
    parts, at = [], 0
    for start, end, replacement in spans:
        parts += [base[at:start], replacement]
        at = end
    return "".join(parts) + base[at:]


def takeable(matters: Matters) -> list[Row]:
    """The rows to take: variants that still fail and simplify the program, of constructs
    no change of which passes."""
    needed = set(matters.needed)
    return [row for row in matters.rows
            if row.outcome == STILL_FAILS and row.simplifies and row.source and row.construct not in needed]


def take_out(source: str, matters: Matters, judge: Judge, *, admissible: Callable[[str], bool],
             stop: Callable[[], bool] = lambda: False) -> Taken:
    """`source` with every takeable variant that still fails in composition; `admissible`:
    whether a composed program is worth running (it parses, keeps its form). Stopped
    midway, nothing is taken."""
    rows = takeable(matters)
    taken: list[Row] = []
    refused: dict[int, tuple[str, str]] = {}  # id(row) -> what its try gave
    together = merged(source, [row.source for row in rows]) if len(rows) > 1 else None
    if together is not None and admissible(together) and judge([together])[0][0] == STILL_FAILS:
        taken = rows
    else:
        for row in rows:
            if stop():
                return Taken(source, matters)
            candidate = merged(source, [r.source for r in taken] + [row.source])
            if candidate is None or not admissible(candidate):
                refused[id(row)] = (BREAKS_PROGRAM, "does not compose with the variants taken before it")
            elif not taken:  # the variant itself: the analysis judged it already
                taken.append(row)
            elif (outcome := judge([candidate])[0])[0] == STILL_FAILS:
                taken.append(row)
            else:
                refused[id(row)] = (outcome[0], "with the variants taken before it: " + (outcome[1] or outcome[0]))
    if stop() or not taken:
        return Taken(source, matters)
    final = merged(source, [row.source for row in taken])
    assert final is not None  # each was merged with those before it
    return Taken(final, adjusted(matters, final, taken, refused))


def adjusted(matters: Matters, final: str, taken: list[Row], refused: dict[int, tuple[str, str]]) -> Matters:
    """The analysis as it stands for `final`: rows of constructs it no longer has go (they
    are removed, as the reduction's), rows refused carry what their try gave."""
    present = set(constructs(final))
    taken_ids = {id(row) for row in taken}
    rows = []
    for row in matters.rows:
        if id(row) in taken_ids or row.construct not in present:
            continue
        if id(row) in refused:
            outcome, detail = refused[id(row)]
            row = dataclasses.replace(row, outcome=outcome, detail=detail)
        rows.append(row)
    gone = [c for c in dict.fromkeys(row.construct for row in matters.rows) if c not in present]
    return dataclasses.replace(matters, rows=rows, removed=list(dict.fromkeys(matters.removed + gone)),
                               taken=[f"{row.construct}: {row.change}" for row in taken])
