"""The taxonomy shipped in the package, and the prompts of `mutate generate` built from it (no torch)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mutator.core import storage
from mutator.harvest.generate import Sibling, _siblings_for, finding_classes, siblings_from_findings
from mutator.findings.finding import Finding
from mutator.findings.signature import Signature
from mutator.llm import taxonomy
from mutator.llm.prompts import SYSTEM, generate_messages

CODES = ["A1", "A2", "A3", "A4", "B1", "B2", "C", "D", "E1", "E2", "E3", "E4", "F1", "F2", "G1", "G2", "G3"]
SHARED = Path(__file__).resolve().parents[3] / "shared" / "TAXONOMY.md"


# --- taxonomy -------------------------------------------------------------------------------


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


# --- prompts --------------------------------------------------------------------------------


def test_the_system_message_defines_a_harness_program():
    [system, user] = generate_messages(taxonomy.get("E2"), index=0)
    assert system == {"role": "system", "content": SYSTEM}
    for must in ("`fn`", "`inputs()`", "drive(f)", "state()", "COMPILE_KWARGS", "Do not call torch.compile",
                 "CPU only", "no files, network", "seeds them", "```python"):
        assert must in SYSTEM, must
    example = re.search(r"```python\n(.*?)```", SYSTEM, re.S).group(1)
    compile(example, "example", "exec")  # the example is a complete module
    assert "def inputs():" in example and "torch.compile" not in example
    assert user["role"] == "user"


@pytest.mark.parametrize("code", CODES)
def test_the_request_carries_the_class_definition(code):
    cls = taxonomy.get(code)
    user = generate_messages(cls, index=3)[1]["content"]
    assert cls.text in user and f"{code}: {cls.title}" in user and cls.category in user
    assert "SIBLING" not in user and "already have" not in user
    assert "one ```python block" in user


def test_n_indexes_are_n_different_questions():
    cls = taxonomy.get("A3")
    asked = [generate_messages(cls, index=i)[1]["content"] for i in range(24)]
    assert len(set(asked)) == 24
    assert "request 4 of a series" in asked[3]
    assert generate_messages(cls, index=5) == generate_messages(cls, index=5)  # the same question is cacheable


def test_siblings_ask_for_the_next_construct_not_the_same_one():
    known = 'class V:\n    def __add__(self, other):\n        return 1\n'
    user = generate_messages(taxonomy.get("A3"), siblings_of=[known, "x = 2"], index=0)[1]["content"]
    assert f"```python\n{known}```" in user and "```python\nx = 2\n```" in user
    assert "SIBLING" in user and "Do not write their construct again" in user
    assert "`__add__` -> `__mul__`" in user and "next container type" in user and "next context manager" in user
    assert "third of the list" not in user  # the findings choose the trigger shape; the harness shape still varies
    assert "harness shape: a plain function" in user


def test_avoid_lists_what_we_already_have():
    user = generate_messages(taxonomy.get("E2"), avoid=["a try/finally in a loop", "raise from"], index=1)[1]["content"]
    assert "- a try/finally in a loop\n- raise from" in user and "different from the ones listed" in user


# --- which findings' programs go into the prompts --------------------------------------------------


def finding(directory: str, *provenances: str) -> Finding:
    return Finding(Signature("CRASH", "KeyError", "", ""), "reason", directory,
                   history=[dict(provenance=p) for p in provenances],
                   variants={("seed x" if p.startswith("seed:") else p.split("@")[0]): {} for p in provenances})


def test_a_findings_classes_come_from_mutations_seeds_and_generation():
    assert finding_classes(finding("findings/a", "E2.wrap_in_try@fn:3+A3.swap_dunder@fn:9")) == {"E2", "A3"}
    assert finding_classes(finding("findings/b", "seed:seeds/B1_container_types/dict_sub.py")) == {"B1"}
    assert finding_classes(finding("findings/c", "generate:G2")) == {"G2"}
    assert finding_classes(finding("findings/d", "seed:elsewhere/repro.py", "X.insert_graph_break@fn:1")) == set()


def write_finding(campaign: Path, record: Finding, *, reduced: str | None, smallest: str | None) -> None:
    directory = campaign / record.directory
    storage.write_json(directory / "finding.json", record.as_json())
    for name, source in (("reduced.py", reduced), ("smallest.py", smallest)):
        if source is not None:
            storage.write_text(directory / name, source)


def test_siblings_are_the_classes_findings_reduced_programs_else_every_findings(tmp_path: Path):
    write_finding(tmp_path, finding("findings/e2-one", "E2.wrap_in_try@fn:1"), reduced="r1\n", smallest="s1\n")
    write_finding(tmp_path, finding("findings/e2-two", "generate:E2"), reduced=None, smallest="s2\n")
    write_finding(tmp_path, finding("findings/a3", "A3.swap_dunder@fn:1"), reduced="r3\n", smallest=None)
    write_finding(tmp_path, finding("findings/none", "E2.wrap_in_try@fn:1"), reduced=None, smallest=None)
    of_e2 = siblings_from_findings(tmp_path, "E2")
    assert [(Path(s.finding).name, Path(s.path).name, s.source, s.of_class) for s in of_e2] == [
        ("e2-one", "reduced.py", "r1\n", True), ("e2-two", "smallest.py", "s2\n", True)]
    of_g1 = siblings_from_findings(tmp_path, "G1")
    assert [(Path(s.finding).name, s.of_class) for s in of_g1] == [("a3", False), ("e2-one", False), ("e2-two", False)]
    assert siblings_from_findings(tmp_path / "empty", "E2") == []


def test_at_most_three_siblings_per_prompt_taken_in_turn():
    siblings = [Sibling(f"f{i}", f"f{i}/reduced.py", f"s{i}", True) for i in range(5)]
    assert _siblings_for(siblings[:2], 7) == tuple(siblings[:2])
    chosen = [[s.finding for s in _siblings_for(siblings, i)] for i in range(3)]
    assert chosen == [["f0", "f1", "f2"], ["f3", "f4", "f0"], ["f1", "f2", "f3"]]
