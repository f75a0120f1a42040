"""What a reduced bug needs, as a key two findings of one bug share across torch releases.

A crash site moves between releases (the frame, sometimes the message), so a finding filed
on one torch may show on another under another signature; its reduced program then often
differs too (the reduction slid elsewhere). What stays is what the bug needs (the
constructs "what matters" found needed: `mutator.reduce.matters`) and how it fails (a
crash's exception and message, names and numbers masked; a mismatch's diverging
observation). `failure_key` is that pair, with the verdict kind; `needed_constructs` the
first half, also what bench/yield.py and the variant split compare.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from mutator.core.configurations import CONSTRUCT_PREFIX, FORCED
from mutator.core.verdict import Verdict
from mutator.findings.finding import Finding

_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
_NUMBER = re.compile(r"\b\d+(\.\d+)?\b")
_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_WHERE = re.compile(r"\s*\(in torch/.*$")  # the reason's "(in torch/_dynamo/x.py:12 in f)": the site, which moves
_CALL = re.compile(r"^call \d+ \([^)]*\) ")


def needed_constructs(reduction: dict[str, Any]) -> frozenset[str] | None:
    """The constructs a reduction's "what matters" analysis found needed; None when it has
    none, found none (an empty set tells nothing apart) or is of a shape not known here."""
    matters = reduction.get("matters")
    needed: set[str] = set()
    if isinstance(matters, dict) and isinstance(matters.get("needed"), list):
        needed = {str(construct) for construct in matters["needed"]}
    else:
        rows = matters.get("rows") if isinstance(matters, dict) else matters
        if isinstance(rows, list):
            needed = {str(row["construct"]) for row in rows
                      if isinstance(row, dict) and "construct" in row and row.get("verdict") == "needed"}
    return frozenset(_unnamed(construct) for construct in needed) or None


def only_configurations(needed: frozenset[str] | None) -> bool:
    """Whether all that `needed` names is configurations: every bug that shows only under
    one configuration needs that much, so it tells no two of them apart."""
    return bool(needed) and all(construct.startswith(CONSTRUCT_PREFIX) for construct in needed)


@dataclass(frozen=True, slots=True)
class Present:
    """What a program (not reduced) has of the constructs a reduced bug needs: its constructs by
    name (`mutator.reduce.constructs.construct_names`), the configuration it ran under, and
    whether its compiled run broke the graph. A construct named by the program's own names (a
    decorator, a base or a method it defines) is had by any of its kind: another program calls
    it otherwise. A graph break is had where Dynamo broke the graph, whatever made it."""

    names: frozenset[str]
    configuration: str
    graph_broke: bool = False

    @classmethod
    def of(cls, names: Iterable[str], configuration: str, *, graph_broke: bool = False) -> Present:
        return cls(frozenset(_unnamed(name) for name in names), configuration, graph_broke)

    def has(self, construct: str) -> bool:
        if construct.startswith(CONSTRUCT_PREFIX):
            return construct.removeprefix(CONSTRUCT_PREFIX).split(" ", 1)[0] == self.configuration
        if construct == "a graph break":
            return self.graph_broke or self.configuration == FORCED or construct in self.names
        if construct == "`dynamic=True`" and self.configuration == "dynamic":
            return True
        if construct in self.names:
            return True
        kind = _own_kind(construct)
        return kind is not None and any(name.startswith(kind) for name in self.names)

    def lacks(self, needed: Iterable[str]) -> list[str]:
        """The constructs of `needed` the program does not have, in order."""
        return [construct for construct in needed if not self.has(construct)]


_OWN = re.compile(r"^(`@|base `|`<class>\.)([\w.]+)`$")
_BUILTIN_NAMES = frozenset(dir(builtins))


def _own_kind(construct: str) -> str | None:
    """The kind of a construct named by a program's own name ("`@counted`", "base `Mixin`",
    "`<class>.helper`"): its prefix; None for a construct named by Python or a library
    ("`@functools.wraps`", "base `torch.Tensor`", "`<class>.__len__`")."""
    match = _OWN.match(construct)
    if match is None:
        return None
    prefix, name = match.groups()
    if "." in name or name in _BUILTIN_NAMES or (name.startswith("__") and name.endswith("__")):
        return None
    return prefix


def _unnamed(construct: str) -> str:
    """A construct without the program's own names: "`Point.__len__`" and "`_Pair.__len__`"
    are one construct (a class's `__len__`), as are two mode classes' blocks."""
    construct = re.sub(r"`[A-Z_]\w*\.(\w+)`", r"`<class>.\1`", construct)  # a class of the program's
    return re.sub(r"a `\w+` block", "a `<user>` block", construct)


def message_key(reason: str) -> str:
    """A crash's reason without what moves between programs and releases: the call that
    raised, quoted names, numbers, addresses and the Dynamo frame it was raised in."""
    text = _WHERE.sub("", _CALL.sub("", reason.strip().splitlines()[0] if reason.strip() else ""))
    return _NUMBER.sub("N", _ADDRESS.sub("0x?", _QUOTED.sub("'?'", text)))


def failure_key(finding: Finding) -> tuple[str, frozenset[str], str] | None:
    """(verdict kind, constructs needed, how it fails) of a finding whose confirmed reduction
    found something needed; None otherwise (nothing to tell it by)."""
    reduction = finding.reduction
    if not reduction.get("confirmed"):
        return None
    needed = needed_constructs(reduction)
    if not needed:
        return None
    signature = finding.signature
    how = signature.observation if signature.verdict is Verdict.MISMATCH else \
        f"{signature.exception}: {message_key(reduction.get('reason') or finding.reason)}"
    return signature.kind, needed, how
