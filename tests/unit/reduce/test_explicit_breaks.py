"""Forced graph breaks written as the program's own graph_break() calls. No torch."""

from __future__ import annotations

import textwrap

from mutator.reduce.explicit_breaks import BREAK, MAX_VARIANTS, variants

PROGRAM = textwrap.dedent('''
    import torch


    class Mode:
        def scale(self, x):
            if x.sum() > 0:
                return x * 2
            return x

        def note(self, x):
            self.seen = x


    def gen(x):
        yield x


    def fn(x):
        y = Mode().scale(x)
        f = lambda v: v + 1
        return f(y)


    def inputs():
        return (torch.ones(2),)
''').lstrip()


def test_every_function_s_returns_first_then_one_function_at_a_time():
    found = variants(PROGRAM)
    every = found[0]
    assert every.count(BREAK) == 4  # scale's two returns, note's end, fn's return; not the generator's end
    assert "        if x.sum() > 0:\n            torch._dynamo.graph_break()\n            return x * 2" in every
    assert "        self.seen = x\n        torch._dynamo.graph_break()\n" in every
    assert "    yield x\n\n" in every and "lambda v: v + 1" in every
    assert "def inputs():\n    return (torch.ones(2),)" in every  # the harness's own: run eagerly
    scale, note, fn = found[1:]
    assert scale.count(BREAK) == 2 and note.count(BREAK) == 1 and fn.count(BREAK) == 1
    assert "    torch._dynamo.graph_break()\n    return f(y)" in fn
    compile(every, "p.py", "exec")


def test_no_variant_without_torch_or_a_parse_and_at_most_the_cap():
    assert variants("def f():\n    return 1\n") == []
    assert variants("import torch\ndef f(:\n") == []
    many = "import torch\n" + "".join(f"def f{n}():\n    return {n}\n" for n in range(20))
    assert len(variants(many)) == MAX_VARIANTS
