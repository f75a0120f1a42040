"""What the reduced program needs, checked in the original: did the reduction stay on its bug?

The predicate keeps the signature and the failure's shape (`mutator.reduce.shape`), but a
reduction can still make what causes the failure: a finding's reducer removed `kwargs`
from a `__torch_function__`, which made a new graph break, and the divergence came from
there, in the same observation. So every construct the reduced program's analysis found
needed is changed the way that made the bug go away there, in the original program, and
judged against the original's target:

- it passes there too: the original needs the construct as well, the same bug;
- it still fails there: the original does not need what the reduced program needs, so
  the reduced program shows another bug (`Matters.drifted`, said in the record);
- the original has no such construct, or the change breaks it or fails otherwise: no
  evidence either way.

Where the original has the construct more than once, the change is made to all of its
occurrences at once (a bug that two copies of one construct cause each alone would still
fail with one changed).
"""

from __future__ import annotations

from collections.abc import Callable

from mutator.reduce.constructs import probes
from mutator.reduce.matters import PASSES, STILL_FAILS, Agreement, Matters, Prober
from mutator.reduce.reducer import Target, admissible
from mutator.reduce.unneeded import merged

ABSENT = "not in the original"


def against_original(prober: Prober, original: Target, matters: Matters, *,
                     stop: Callable[[], bool] = lambda: False) -> list[Agreement]:
    """One `Agreement` per construct `matters` found needed (its runs counted in `matters`)."""
    variants = [p for p in probes(original.program.source) if admissible(p.source, original.program)]
    asked: list[tuple[str, str, str]] = []  # (construct, change, variant of the original)
    agreements: list[Agreement] = []
    for construct in matters.needed:
        changes = [row.change for row in matters.rows if row.construct == construct and row.outcome == PASSES]
        same = [p for p in variants if p.construct == construct]
        change = next((c for c in changes if any(p.change == c for p in same)), None)
        if change is None:
            agreements.append(Agreement(construct, changes[0] if changes else "", ABSENT))
            continue
        sources = [p.source for p in same if p.change == change]
        everywhere = merged(original.program.source, sources) if len(sources) > 1 else sources[0]
        asked.append((construct, change, everywhere or sources[0]))
    if asked and not stop():
        outcomes = prober.outcomes([source for _, _, source in asked], original, matters, stop)
        agreements += [Agreement(construct, change, outcome, detail)
                       for (construct, change, _), (outcome, detail) in zip(asked, outcomes)]
    order = {construct: i for i, construct in enumerate(matters.needed)}
    return sorted(agreements, key=lambda agreement: order[agreement.construct])


def describe(agreements: list[Agreement]) -> str:
    """One sentence for the record when the reduction slid to another bug; "" when not."""
    drifted = [a for a in agreements if a.outcome == STILL_FAILS]
    if not drifted:
        return ""
    return ("the reduced program may show another bug than the original: it needs "
            + ", ".join(f"{a.construct} (the original still fails {a.change})" for a in drifted)
            + ", which the original does not")
