"""On which torch releases, and which Pythons, a finding fails (docs/design.md, "Versions"): the
record that `finding.json` keeps as `versions`, and the one status it gives the finding.

A finding is judged on each interpreter given, a (torch, Python) each: its reduced program, its
smallest unreduced one (a reduction can slide to another bug at the same crash site, which a
newer torch may fix while the original bug is still there) and its `repro.py` (a reproducer can
pass where the whole program still fails another way). From the newest torch given:

- `live_on_newest`: both programs fail there with the finding's signature;
- `fixed_since`: both programs PASS there and repro.py exits 0 (not to be filed);
- `regression`: it fails on the newest with its signature and passed on an older torch given;
- `changed`: another verdict or signature on some torch, or the two programs disagree on
  the newest.

Where some torch was judged with several Pythons, each Python the newest torch was judged
with is held against the older torches of the same Python, and the status says on which it
is live ("live on torch 2.15.0 with Python 3.11 and 3.13", "... only on Python 3.13", "...
only with Python 3.12+"): the one that needs attention first gives the status (changed, then
a regression, then live, then fixed), and the others' lines follow it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mutator.core.build import Build
from mutator.findings.finding import Finding
from mutator.findings.signature import Signature
from mutator.report.releases import bisect_lines

STATUSES = ("live_on_newest", "fixed_since", "regression", "changed")
LIVE = ("live_on_newest", "regression")  # failing with its signature on the newest torch
_URGENCY = {"changed": 0, "regression": 1, "live_on_newest": 2, "fixed_since": 3}
PROGRAMS = ("reduced", "smallest")  # reduced.py, smallest.py


@dataclass(frozen=True, slots=True)
class ProgramVerdict:
    """One program of a finding judged on one torch."""

    program: str  # "reduced" or "smallest"
    verdict: str  # a Verdict's name; "" when it could not be judged (`reason` says why)
    signature: Signature | None = None  # a bug verdict's
    same: bool = False  # the finding's signature (or one merged into it)
    reason: str = ""

    @property
    def passes(self) -> bool:
        return self.verdict == "PASS"

    def describe(self) -> str:
        """"MISMATCH (same signature)", "CRASH (another: ...)", "PASS"."""
        if not self.verdict:
            return f"not judged ({self.reason})"
        if self.signature is None:
            return self.verdict
        if self.same:
            return f"{self.verdict} (same signature)"
        return f"{self.verdict} (another: {self.signature.describe()})"

    def as_json(self) -> dict[str, Any]:
        return dict(program=self.program, verdict=self.verdict, reason=self.reason, same=self.same,
                    signature=self.signature.as_json() if self.signature else None)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ProgramVerdict:
        signature = data.get("signature")
        return cls(data["program"], data["verdict"], Signature(**signature) if signature else None,
                   bool(data.get("same")), data.get("reason", ""))


@dataclass(frozen=True, slots=True)
class OnTorch:
    """What a finding did on one torch: each program's verdict and the reproducer's exit."""

    build: Build
    programs: tuple[ProgramVerdict, ...]
    repro_exit: int | None = None  # None: no repro.py (`repro` empty), or it timed out or did not run
    repro: str = ""  # what running repro.py gave, in words; "" when the finding has none

    @property
    def torch(self) -> str:
        return self.build.torch or "unknown torch"

    @property
    def python(self) -> str:
        """"3.11": the Python it ran on ("" when the build did not say)."""
        return self.build.python_minor

    @property
    def passes(self) -> bool:
        """Fixed here: every program PASS, and the reproducer (where there is one) exits 0."""
        return all(p.passes for p in self.programs) and (not self.repro or self.repro_exit == 0)

    @property
    def fails_same(self) -> bool:
        """Every program fails with the finding's signature."""
        return bool(self.programs) and all(p.same for p in self.programs)

    @property
    def disagree(self) -> bool:
        """The reduced and the smallest program end differently here."""
        return len({(p.verdict, p.signature) for p in self.programs}) > 1

    def program(self, name: str) -> ProgramVerdict | None:
        return next((p for p in self.programs if p.program == name), None)

    def as_json(self) -> dict[str, Any]:
        return dict(build=self.build.as_json(), python=self.build.python, programs=[p.as_json() for p in self.programs],
                    repro_exit=self.repro_exit, repro=self.repro)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> OnTorch:
        return cls(Build.from_json(data.get("build")), tuple(ProgramVerdict.from_json(p) for p in data["programs"]),
                   data.get("repro_exit"), data.get("repro", ""))


@dataclass(frozen=True, slots=True)
class Versions:
    """A finding on every (torch, Python) given, oldest torch first (and, within one torch, oldest
    Python first), and the status the newest torch gives it."""

    torches: tuple[OnTorch, ...]
    status: str  # one of STATUSES
    since: str = ""  # the torch where it changed: fixed since, regression in, changed on
    line: str = ""  # the status in one line, for report.md and the tables
    pythons: tuple[str, ...] = ()  # the Pythons ("3.11") of the newest torch on which it is live

    @classmethod
    def of(cls, torches: list[OnTorch] | tuple[OnTorch, ...]) -> Versions:
        ordered = tuple(sorted(torches, key=lambda t: (t.build.release_key(), t.build.python_key())))  # stable
        status, since, line, pythons = _status(ordered)
        return cls(ordered, status, since, line, pythons)

    @property
    def newest(self) -> OnTorch:
        return self.torches[-1]

    def marker(self) -> str:
        """What the title of report.md starts with; live findings keep their title."""
        return {"fixed_since": f"[fixed since torch {self.since}] ", "regression": f"[regression in {self.since}] ",
                "changed": f"[changed on torch {self.since}] "}.get(self.status, "")

    def differing(self) -> tuple[OnTorch, OnTorch] | None:
        """The newest two neighbouring torches of which one passes and the other fails (where a
        bisect between them would find the change), older first; neighbours on the same Python
        where some torch was judged with several."""
        pairs = [(old, new) for line in _lines(self.torches) for old, new in zip(line, line[1:])
                 if old.passes != new.passes]
        return max(reversed(pairs), key=lambda pair: pair[1].build.release_key(), default=None)

    def as_json(self) -> dict[str, Any]:
        return dict(status=self.status, since=self.since, line=self.line, pythons=list(self.pythons),
                    torches=[t.as_json() for t in self.torches])

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Versions | None:
        """The record of `finding.json`; None where it has none."""
        if not data or data.get("status") not in STATUSES:
            return None
        return cls(tuple(OnTorch.from_json(t) for t in data.get("torches", ())), data["status"],
                   data.get("since", ""), data.get("line", ""), tuple(data.get("pythons", ())))


def recorded(finding: Finding) -> Versions | None:
    """What `mutate versions` recorded in the finding's record, if it has run."""
    return Versions.from_json(finding.versions)


def _status(torches: tuple[OnTorch, ...]) -> tuple[str, str, str, tuple[str, ...]]:
    """(status, since, line, the Pythons it is live on), from the newest torch: from the one row
    of torches, unless some torch was judged with several Pythons; then from the row of each
    Python the newest torch was judged with."""
    rows = _lines(torches)
    if len(rows) == 1:
        status, since, line = _one_row(torches)
        return status, since, line, (torches[-1].python,) if status in LIVE and torches[-1].python else ()
    newest_key = torches[-1].build.release_key()
    return _combined({row[-1].python: _one_row(row) for row in rows if row[-1].build.release_key() == newest_key})


def _combined(rows: dict[str, tuple[str, str, str]]) -> tuple[str, str, str, tuple[str, ...]]:
    """One status from each Python's (status, since, line) on the newest torch: the most urgent
    one's, its line naming the Pythons it holds for, the others' lines after it."""
    pythons = list(rows)
    status, since, line = lead = min(rows.values(), key=lambda row: _URGENCY[row[0]])
    same = [python for python in pythons if rows[python] == lead]
    live = [python for python in pythons if rows[python][0] in LIVE]
    if len(same) == len(pythons):
        qualifier = f"with Python {_and(same)}"
    elif status in LIVE and len(live) < len(pythons) and all(rows[p][0] == "fixed_since" for p in pythons
                                                             if p not in live):
        qualifier = _only(live, pythons)
    else:
        qualifier = f"with Python {_and(same)}"
    line = line.replace(since, f"{since} {qualifier}", 1)
    others = "".join(f"; with Python {python}: {rows[python][2]}" for python in pythons if python not in same)
    return status, since, line + others, tuple(live)


def _only(live: list[str], pythons: list[str]) -> str:
    """"only on Python 3.13", "only with Python 3.12+" (every Python given from 3.12 on),
    "only on Python 3.11 and 3.13"."""
    if len(live) == 1:
        return f"only on Python {live[0]}"
    if live == pythons[pythons.index(live[0]):]:
        return f"only with Python {live[0]}+"
    return f"only on Python {_and(live)}"


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _lines(torches: tuple[OnTorch, ...]) -> list[tuple[OnTorch, ...]]:
    """The torches as rows whose neighbours compare: one row, unless some torch was judged with
    several Pythons, then a row per Python."""
    keys = [t.build.release_key() for t in torches]
    pythons = sorted({t.python for t in torches}, key=lambda python: [int(n) for n in python.split(".") if n.isdigit()])
    if len(set(keys)) == len(keys) or len(pythons) < 2:
        return [torches]
    return [tuple(t for t in torches if t.python == python) for python in pythons]


def _one_row(torches: tuple[OnTorch, ...]) -> tuple[str, str, str]:
    """(status, since, line) of one row of torches, oldest first, from its newest."""
    newest = torches[-1]
    older = torches[:-1]
    if newest.passes:
        first = newest
        for torch in reversed(older):
            if not torch.passes:
                break
            first = torch
        failing = [t.torch for t in older if not t.passes]
        where = f"; fails on {', '.join(failing)}" if failing else "; passes on every torch given"
        repro = " and repro.py exits 0" if newest.repro else " (it has no repro.py)"
        return "fixed_since", first.torch, (f"fixed since torch {first.torch}: on {newest.torch} "
                                            f"{_programs(newest, 'pass')}{repro}{where}")
    if newest.disagree:
        return "changed", newest.torch, f"changed on torch {newest.torch}: {_disagreement(newest)}"
    if not newest.fails_same:
        return "changed", newest.torch, (f"changed on torch {newest.torch}: {_programs(newest, 'end')} "
                                         f"{newest.programs[0].describe()}, not with the finding's signature")
    passing = [i for i, t in enumerate(older) if t.passes]
    if passing:
        last = passing[-1]
        culprit = torches[last + 1]
        return "regression", culprit.torch, (f"regression in {culprit.torch}: passes on {older[last].torch}, "
                                             f"{_programs(culprit, 'fail')} with its signature on {culprit.torch}"
                                             + (f" and {newest.torch}" if culprit is not newest else ""))
    other = next((t for t in reversed(older) if t.disagree or not t.fails_same), None)
    if other is not None:
        return "changed", other.torch, (f"changed on torch {other.torch}: {_disagreement(other)}; fails with its "
                                        f"signature on {newest.torch}")
    note = "" if not newest.repro or newest.repro_exit != 0 else \
        " (but repro.py exits 0 there: make a reproducer on it)"
    return "live_on_newest", newest.torch, (f"live on torch {newest.torch}, the newest given: "
                                            f"{_programs(newest, 'fail')} with its signature{note}")


def _disagreement(torch: OnTorch) -> str:
    reduced, smallest = torch.program("reduced"), torch.program("smallest")
    if reduced is None or smallest is None or not torch.disagree:
        return ", ".join(f"{p.program}.py {p.describe()}" for p in torch.programs)
    if smallest.same:
        return (f"the reduced program ends {reduced.describe()} while the smallest still fails with its signature "
                "(the reduction had slid to another bug: reduce again on this torch)")
    if reduced.same:
        return (f"the smallest program ends {smallest.describe()} while the reduced one still fails with its "
                "signature")
    return f"reduced.py {reduced.describe()}, smallest.py {smallest.describe()}"


def _programs(torch: OnTorch, verb: str) -> str:
    """"both programs fail", "smallest.py fails"."""
    if len(torch.programs) > 1:
        return f"both programs {verb}"
    singular = verb + ("es" if verb.endswith("s") else "s")
    return f"{torch.programs[0].program}.py {singular}" if torch.programs else f"no program {singular}"



def markdown(versions: Versions) -> list[str]:
    """report.md's table of the torches judged, its status line and, where two neighbouring
    torches differ, the bisect between them."""
    names = [name for name in PROGRAMS if any(t.program(name) for t in versions.torches)]
    lines = [f"On the torches judged (`mutate versions`): **{versions.line}**.", "",
             "| torch | Python | " + " | ".join(f"{name}.py" for name in names) + " | repro.py |",
             "| --- | --- | " + " | ".join("---" for _ in names) + " | --- |"]
    for torch in versions.torches:
        cells = [(p.describe() if p is not None else "-") for p in map(torch.program, names)]
        repro = "-" if not torch.repro else f"exit {torch.repro_exit}" if torch.repro_exit is not None else torch.repro
        lines.append(f"| {torch.build.describe_torch()} | {torch.build.python or '-'} | " + " | ".join(cells)
                     + f" | {repro} |")
    lines.append("")
    pair = versions.differing()
    if pair is not None:
        old, new = pair
        good, bad = (old, new) if old.passes else (new, old)
        if not bad.repro:
            lines += [f"Torch {good.torch} passes and {bad.torch} fails; there is no repro.py to bisect the nightlies "
                      "between them with (run `mutate reduce` on the finding).", ""]
        elif bad.repro_exit in (0, None):
            lines += [f"Torch {good.torch} passes and {bad.torch} fails, but repro.py does not fail on {bad.torch} "
                      f"({bad.repro}): a bisect by its exit status needs a reproducer that tells them apart.", ""]
        else:
            lines += bisect_lines(good.build, bad.build)
    return lines
