"""What of a value's printed text the compiler chooses, so that comparisons leave it out.

A tensor that needs grad prints its `grad_fn`: the autograd node that made it. Which node
that is belongs to the backend, not to the program: AOTAutograd wraps a whole graph in one
`CompiledFunctionBackward` where eager made an `AddBackward0`, and regenerates views its
own way. So the name of an autograd node (`AddBackward0`, `CompiledFunctionBackward`,
`torch.autograd.function.CompiledFunctionBackward`) reads as one placeholder wherever text
is compared; whether a node is there at all, and the rest of the text, still count.

A printed set lists its elements in the order of its hash table, which depends on how the
set was built (its size on the way, the order of colliding inserts), not only on what it
holds: Dynamo rebuilds the result of `s | u` its own way, and `{'one', 'three'}` prints as
`{'three', 'one'}`. Python promises no order for a set, so a set's elements are compared
as sorted; a dict's order (insertion, promised) still counts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

AUTOGRAD_NODE = re.compile(r"\b(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*Backward\d*\b")
NODE_PLACEHOLDER = "AutogradNode"


def without_node_names(text: str) -> str:
    """`text` with every autograd node's name read as one placeholder."""
    return AUTOGRAD_NODE.sub(NODE_PLACEHOLDER, text) if "Backward" in text else text


def comparable(text: str) -> str:
    """`text` as two runs' printed text is compared: autograd nodes' names blanked, the
    elements of every printed set sorted."""
    return with_sets_sorted(without_node_names(text))


_CLOSING = {"{": "}", "[": "]", "(": ")"}


@dataclass
class _Bracket:
    """An open bracket while reading printed text: its closing character, its top-level
    parts so far (split at commas) and whether a colon showed at its top level (a dict)."""

    closing: str
    parts: list[str] = field(default_factory=list)
    current: list[str] = field(default_factory=list)
    colon: bool = False

    def close(self) -> str:
        """The bracket's text, a set display's elements sorted."""
        parts = [*self.parts, "".join(self.current)]
        if self.closing == "}" and not self.colon and len(parts) > 1:
            opening, parts[0] = parts[0][0], parts[0][1:]
            return opening + ", ".join(sorted(part.strip() for part in parts)) + self.closing
        return ",".join(parts) + self.closing


def with_sets_sorted(text: str) -> str:
    """`text` with the elements of every set display in it (`{a, b}`: braces whose top level
    has commas and no colon, as `repr` prints a set, a frozenset or a set subclass) sorted
    as text. Quoted strings are read as Python prints them; text whose brackets or quotes do
    not balance is returned as it is."""
    if "{" not in text or "," not in text:
        return text
    outside = _Bracket("")
    stack = [outside]
    i = 0
    while i < len(text):
        ch, inner = text[i], stack[-1]
        if ch in "'\"":
            end = _string_end(text, i)
            if end < 0:
                return text
            inner.current.append(text[i:end])
            i = end
            continue
        if ch in _CLOSING:
            stack.append(_Bracket(_CLOSING[ch], current=[ch]))
        elif ch in ")]}":
            if inner is outside or ch != inner.closing:
                return text
            stack.pop()
            stack[-1].current.append(inner.close())
        elif ch == "," and inner is not outside:
            inner.parts.append("".join(inner.current))
            inner.current = []
        else:
            inner.colon = inner.colon or ch == ":"
            inner.current.append(ch)
        i += 1
    return "".join(outside.current) if len(stack) == 1 else text


def _string_end(text: str, start: int) -> int:
    """The index just past the quoted string that starts at `start`, or -1 if it never ends."""
    quote, i = text[start], start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
        elif text[i] == quote:
            return i + 1
        elif text[i] == "\n":
            return -1
        else:
            i += 1
    return -1
