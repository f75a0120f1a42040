"""What matters: how the outcomes of the variants read, as needed, not needed or any of its kind."""

from __future__ import annotations

from mutator.reduce.matters import BREAKS_PROGRAM, PASSES, STILL_FAILS, Matters, Row
from mutator.report import matters as words


def test_what_is_needed_and_what_is_not():
    result = Matters(rows=[
        Row("a graph break", "without the graph break", PASSES),
        Row("a `set` subclass", "as a `frozenset` subclass", STILL_FAILS),
        Row("a `set` subclass", "as a plain `set` (`Tags = set`)", PASSES),
        Row("a generator expression", "with a list comprehension instead", STILL_FAILS),
        Row("the generator's filter", "without the `if` filter", STILL_FAILS, removal=True),
        Row("`@deco`", "without `@deco`", BREAKS_PROGRAM, "eager run raised: NameError", removal=True),
        Row("a `try`/`except RuntimeError`", "without the `try` (its body alone)", BREAKS_PROGRAM,
            "eager run raised: RuntimeError", removal=True),
        Row("a `try`/`except RuntimeError`", "catching `Exception` instead of `RuntimeError`", STILL_FAILS),
    ], removed=["`torch.func.vmap`"], checks=12, seconds=1.5)
    data = result.as_json()
    assert data["needed"] == ["a graph break", "a `set` subclass"]
    # a removal that still fails says "not needed"; a neighbour that fails says only that its
    # kind does not matter (the try cannot go: eager raises without it); `@deco`: nothing known
    assert data["not_needed"] == ["the generator's filter"]
    assert data["any_neighbour"] == ["a generator expression", "a `try`/`except RuntimeError`"]
    assert words.headline(data) == "a graph break and a `set` subclass"
    text = "\n".join(words.markdown(data))
    assert "- a `set` subclass: passes as a plain `set` (`Tags = set`). still fails as a `frozenset` subclass" in text
    assert "- `torch.func.vmap`: the reduction took it out and the bug stayed" in text
    assert "**Any of its kind**" in text and \
        "- a `try`/`except RuntimeError`: still fails catching `Exception` instead of `RuntimeError`" in text
    assert "Checked 8 variants of the reduced program (12 runs, 1.5 s), 2 of which broke the program eagerly." in text
