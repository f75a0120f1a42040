"""The taxonomy shipped in the package (no torch)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mutator.llm import taxonomy

from tests.unit.llm.helpers import CODES


SHARED = Path(__file__).resolve().parents[4] / "shared" / "TAXONOMY.md"


def test_all_17_leaf_classes_parse_in_order_with_text():
    found = taxonomy.classes()
    assert list(found) == CODES
    for code, cls in found.items():
        assert cls.code == code and cls.title and cls.category and len(cls.text) > 40, cls
        assert "\n" not in cls.text and "  " not in cls.text


def test_issue_numbers_are_stripped():
    for cls in taxonomy.classes().values():
        assert not re.search(r"#\d", cls.text), cls
        assert "(#" not in cls.text and "( " not in cls.text and not cls.text.endswith(" ."), cls


def test_categories_without_subcategories_are_classes_of_their_own():
    iterators = taxonomy.get("C")
    assert (iterators.title, iterators.category) == ("Iterator state", "Iterator state")
    assert iterators.text.startswith("Generators, `map`/`filter`/`zip`/`enumerate`")
    assert taxonomy.get("D").text.startswith("Implicit coercions")


def test_a_subcategory_has_its_title_category_and_whole_wrapped_text():
    cls = taxonomy.get("B2")
    assert (cls.title, cls.category) == ("Untracked container mutation", "Containers")
    assert cls.text.endswith("`remove` that raises, mutation while iterating.")
    assert "`dict`/`list`/`tuple`/`set`" in taxonomy.get("B1").text  # wrapped at a slash, joined without a space


def test_get_ignores_case_and_names_the_valid_codes_when_unknown():
    assert taxonomy.get(" e2 ").code == "E2"
    with pytest.raises(KeyError) as caught:
        taxonomy.get("H1")
    message = caught.value.args[0]
    assert "'H1'" in message and ", ".join(CODES) in message


def test_the_shipped_copy_is_the_shared_document():
    shipped = Path(taxonomy.__file__).with_name(taxonomy.DOCUMENT)
    if SHARED.exists():  # a checkout beside ../shared; an installed package has only its copy
        assert shipped.read_text() == SHARED.read_text()
    assert "## A. Python object modelling" in shipped.read_text()


def test_parse_reads_a_document_of_the_same_layout():
    document = (
        "# T\n\n## X. Things (10%)\nWhat things are.\n- **X1 First.** One, two\n  (#1, #2) and three.\n"
        "- **X2 Second.** Four.\n\n## Y. Lone (5%)\nA category that is a class (#3).\n\n## Others (1%)\nNot a class.\n"
    )
    assert [(c.code, c.title, c.category, c.text) for c in taxonomy.parse(document)] == [
        ("X1", "First", "Things", "One, two and three."),
        ("X2", "Second", "Things", "Four."),
        ("Y", "Lone", "Lone", "A category that is a class."),
    ]
