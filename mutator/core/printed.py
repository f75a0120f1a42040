"""What of a value's printed text the compiler chooses, so that comparisons leave it out.

A tensor that needs grad prints its `grad_fn`: the autograd node that made it. Which node
that is belongs to the backend, not to the program: AOTAutograd wraps a whole graph in one
`CompiledFunctionBackward` where eager made an `AddBackward0`, and regenerates views its
own way. So the name of an autograd node (`AddBackward0`, `CompiledFunctionBackward`,
`torch.autograd.function.CompiledFunctionBackward`) reads as one placeholder wherever text
is compared; whether a node is there at all, and the rest of the text, still count.
"""

from __future__ import annotations

import re

AUTOGRAD_NODE = re.compile(r"\b(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*Backward\d*\b")
NODE_PLACEHOLDER = "AutogradNode"


def without_node_names(text: str) -> str:
    """`text` with every autograd node's name read as one placeholder."""
    return AUTOGRAD_NODE.sub(NODE_PLACEHOLDER, text) if "Backward" in text else text
