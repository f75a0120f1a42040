"""report.md's words for what matters: the headline of a title."""

from __future__ import annotations

from mutator.report import matters as words


def test_the_headline_falls_back_to_what_cannot_go_and_skips_what_the_title_says():
    assert words.headline({"needed": [], "any_neighbour": ["a `try`/`except RuntimeError`"]}) == \
        "a `try`/`except RuntimeError`"
    data = {"needed": ["`fullgraph=True`", "a `set` subclass"]}
    assert words.headline(data) == "`fullgraph=True` and a `set` subclass"
    assert words.headline(data, said="fullgraph") == "a `set` subclass"
