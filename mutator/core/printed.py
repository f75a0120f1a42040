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

AUTOGRAD_NODE = re.compile(r"\b(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*Backward\d*\b")
NODE_PLACEHOLDER = "AutogradNode"


def without_node_names(text: str) -> str:
    """`text` with every autograd node's name read as one placeholder."""
    return AUTOGRAD_NODE.sub(NODE_PLACEHOLDER, text) if "Backward" in text else text


def comparable(text: str) -> str:
    """`text` as two runs' printed text is compared: autograd nodes' names blanked, the
    elements of every printed set sorted."""
    return with_sets_sorted(without_node_names(text))


_OPEN = {"{": "}", "[": "]", "(": ")"}


def with_sets_sorted(text: str) -> str:
    """`text` with the elements of every set display in it (`{a, b}`: braces whose top level
    has commas and no colon, as `repr` prints a set, a frozenset or a set subclass) sorted
    as text. Quoted strings are read as Python prints them; text whose brackets do not
    balance is returned as it is."""
    if "{" not in text or "," not in text:
        return text
    # one frame per open bracket: [closing bracket, top-level parts, current part, saw a colon]
    stack: list[list] = [[None, [], [], False]]
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        frame = stack[-1]
        if ch in "'\"":
            end = _string_end(text, i)
            if end < 0:
                return text
            frame[2].append(text[i:end])
            i = end
            continue
        if ch in _OPEN:
            stack.append([_OPEN[ch], [], [ch], False])
        elif ch in ")]}":
            if frame[0] != ch or len(stack) == 1:
                return text
            stack.pop()
            frame[1].append("".join(frame[2]))
            parts = frame[1]
            if ch == "}" and not frame[3] and len(parts) > 1:
                opening, first = parts[0][0], parts[0][1:]
                elements = sorted(part.strip() for part in [first, *parts[1:]])
                closed = opening + ", ".join(elements) + ch
            else:
                closed = ",".join(parts) + ch
            stack[-1][2].append(closed)
        elif ch == "," and len(stack) > 1:
            frame[1].append("".join(frame[2]))
            frame[2] = []
        else:
            if ch == ":" and len(stack) > 1:
                frame[3] = True
            frame[2].append(ch)
        i += 1
    if len(stack) != 1:
        return text
    return "".join(stack[0][2])


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
