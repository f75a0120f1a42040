"""What MutationContext finds in a script: its compiled entries and the names bound to compiled callables."""

from __future__ import annotations

import textwrap

from mutator.mutation.context import MutationContext, NameAllocator
from mutator.core.program import Program

SCRIPT = textwrap.dedent("""
    import torch
    import torch._dynamo


    class Net(torch.nn.Module):
        def forward(self, x):
            return x + 1


    def helper(x):
        return x * 2


    @torch.compile(backend="eager")
    def decorated(x):
        return helper(x)


    net = Net()
    plain = torch.compile(helper)
    module = torch.compile(net)
    fresh = torch.compile(Net())
    old = torch._dynamo.optimize("eager")(helper)
    factory = torch.compile(backend="eager")
    elsewhere = torch.compile(len)
    print(decorated(torch.ones(2)), plain(torch.ones(2)), module(torch.ones(2)))
""")


def test_compiled_names_cover_every_spelling_and_know_what_they_run():
    ctx = MutationContext.of(Program.from_source(SCRIPT, "script.py"))
    functions = {fn.name.value: fn for fn in ctx.region}
    names = {name: entry.name.value if entry is not None else None for name, entry in ctx.compiled_names.items()}
    assert names == {"decorated": "decorated", "plain": "helper", "module": "forward", "fresh": "forward",
                     "old": "helper", "elsewhere": None}
    assert {"decorated", "helper", "forward"} <= set(functions)


def test_a_fresh_name_avoids_the_program_s_builtins_and_reserved_names():
    names = NameAllocator({"helper"})
    assert "helper" in names and "len" in names and "scale" not in names
    names.reserve(["scale", "scale_2"])  # a splice's donor names, kept as they are
    assert names.fresh("scale") == "scale_3" and names.fresh("helper") == "helper_2"
    assert names.fresh("other") == "other" and "other" in names
