"""Root-cause groups: findings of different signatures that are one bug seen at two points.

A crash on `w.grad.clone()` and a mismatch of the same gradients are two findings (two
signatures, two reports) of one root cause: their reduced programs are the same but for
the statement where one fails and the other compares. Concretely, two findings are of
one root cause when both have a confirmed reduction and, comparing the canonical forms
of their reduced programs line by line (`mutator.findings.canonical`, with the names the
programs define all read as one name, so that one extra variable does not renumber the
rest):

- they differ in exactly one place, of at most `MAX_DIFFERING` lines on either side;
- that place is the end of a block (a function's body, the script's top level) that
  shares at least one statement before it: the point of failure, after what leads there;
- the differing lines are about the same values: the names and attributes of the shorter
  side are all in the longer one (`w.grad` and `w.grad.clone()`), or one side is empty
  (one program only adds a statement the other lacks);
- what they share is most of each program (at least `MIN_SHARED` lines and
  `MIN_SHARED_SHARE` of the longer one).

Groups are the connected pieces of that relation. They are shown together by
`mutate report`; the findings stay separate.
"""

from __future__ import annotations

import difflib
import keyword
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from mutator.findings.store import Finding
from mutator.findings.canonical import canonical_form

MAX_DIFFERING = 2  # lines on either side of the one differing place
MIN_SHARED = 3
MIN_SHARED_SHARE = 0.6
_DEFINED = re.compile(r"\bv\d+\b")  # canonical_form's names for what the program defines
_WORD = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")


@dataclass(frozen=True, slots=True)
class Member:
    """A finding as the grouping sees it: where it is and its reduced program's lines."""

    key: str  # unique among the findings grouped (a directory)
    finding: Finding
    lines: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Group:
    """Findings of one root cause, in the order given; `name` is R1, R2, ... by that order."""

    name: str
    members: tuple[Member, ...]

    def others(self, key: str) -> list[Member]:
        return [member for member in self.members if member.key != key]


def canonical_lines(source: str) -> tuple[str, ...] | None:
    """A reduced program's canonical lines, names it defines all read as `v`; None when it
    does not parse."""
    try:
        form = canonical_form(source)
    except (SyntaxError, ValueError):
        return None
    return tuple(_DEFINED.sub("v", line) for line in form.splitlines() if line.strip())


def member(key: str, finding: Finding) -> Member | None:
    """A finding that can be grouped: one with a confirmed reduction."""
    reduction = finding.reduction
    if not reduction.get("confirmed") or not reduction.get("source"):
        return None
    lines = canonical_lines(reduction["source"])
    return Member(key, finding, lines) if lines else None


def differ_at_one_point(a: Sequence[str], b: Sequence[str]) -> bool:
    """Whether two programs' canonical lines differ only where one fails and the other
    compares (see the module's docstring)."""
    if a == b:
        return False  # the same program: a merge's business (same kind) or one bug with two verdicts
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    changes = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    if len(changes) != 1:
        return False
    _, a0, a1, b0, b1 = changes[0]
    if max(a1 - a0, b1 - b0) > MAX_DIFFERING:
        return False
    shared = len(a) - (a1 - a0)
    if shared < MIN_SHARED or shared < MIN_SHARED_SHARE * max(len(a), len(b)):
        return False
    if not (_ends_block(a, a0, a1, b[b0:b1]) and _ends_block(b, b0, b1, a[a0:a1])):
        return False
    shorter, longer = sorted((_names(a[a0:a1]), _names(b[b0:b1])), key=len)
    return shorter <= longer


def _ends_block(lines: Sequence[str], start: int, end: int, other: Sequence[str]) -> bool:
    """Whether lines[start:end] (or, when empty, the other program's differing lines put
    there) are the last statements of a block with a statement of its own before them."""
    region = lines[start:end] or other
    indent = _indent(region[0])
    before = lines[start - 1] if start > 0 else ""
    after = lines[end] if end < len(lines) else None
    same_block = before and _indent(before) == indent and not before.rstrip().endswith(":")
    return bool(same_block) and (after is None or _indent(after) < indent)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _names(lines: Sequence[str]) -> frozenset[str]:
    return frozenset(word for line in lines for word in _WORD.findall(line) if not keyword.iskeyword(word))


def same_root_cause(a: Member, b: Member) -> bool:
    return a.finding.signature != b.finding.signature and differ_at_one_point(a.lines, b.lines)


def groups(findings: Iterable[tuple[str, Finding]]) -> list[Group]:
    """The root-cause groups of two findings or more among (key, finding) pairs."""
    members = [m for key, finding in findings if (m := member(key, finding)) is not None]
    parent = list(range(len(members)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, a in enumerate(members):
        for j in range(i + 1, len(members)):
            if same_root_cause(a, members[j]):
                parent[root(j)] = root(i)
    pieces: dict[int, list[Member]] = {}
    for i, m in enumerate(members):
        pieces.setdefault(root(i), []).append(m)
    together = [piece for piece in pieces.values() if len(piece) > 1]
    return [Group(f"R{n}", tuple(piece)) for n, piece in enumerate(together, start=1)]
