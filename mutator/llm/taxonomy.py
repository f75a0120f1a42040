"""The 17 leaf classes of the bug taxonomy, read from the copy of TAXONOMY.md shipped in the package.

The prompts of `mutate generate` quote a class's definition and trigger shapes, so they
must work from an installed package: the document travels as package data
(`mutator/llm/taxonomy.md`) and is parsed here, not duplicated in code. The issue
numbers the document cites are stripped from the text: a prompt that names real issues
invites the model to recall their reproducers instead of writing new programs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib import resources

DOCUMENT = "taxonomy.md"
_CATEGORY = re.compile(r"^## (?P<letter>[A-Z])\. (?P<name>.+?)(?: \(\d+%\))?$")
_CLASS = re.compile(r"^- \*\*(?P<code>[A-Z]\d+) (?P<title>.+?)\.\*\*\s*(?P<text>.*)$")
_ISSUES = re.compile(r"\s*\(#\d+(?:,\s*#\d+)*\)")


@dataclass(frozen=True, slots=True)
class TaxonomyClass:
    """One leaf class: "E2", "Exception handling", "Execution context and scope", its definition.

    For C and D, categories without subcategories, the title is the category's name and
    the text its paragraph.
    """

    code: str
    title: str
    category: str
    text: str


@cache
def classes() -> dict[str, TaxonomyClass]:
    """Every leaf class by code, in the document's order (A1 ... G3)."""
    text = resources.files("mutator.llm").joinpath(DOCUMENT).read_text(encoding="utf-8")
    return {cls.code: cls for cls in parse(text)}


def get(code: str) -> TaxonomyClass:
    """The class named `code` (case and surrounding spaces ignored); KeyError names the valid codes."""
    known = classes()
    found = known.get(code.strip().upper())
    if found is None:
        raise KeyError(f"unknown taxonomy class {code!r}; valid classes: {', '.join(known)}")
    return found


def parse(document: str) -> list[TaxonomyClass]:
    """The leaf classes of a taxonomy document in TAXONOMY.md's layout.

    Lettered `## X. Name` sections are categories; their `- **X1 Title.** text` bullets
    (continued on indented lines) are subcategories; a category without bullets is a
    leaf class whose definition is its paragraph. Other sections (Others, Symptoms) end
    the categories.
    """
    found: list[TaxonomyClass] = []
    for letter, name, body in _categories(document):
        subclasses = _bullets(body)
        if subclasses:
            found += [TaxonomyClass(code, title, name, _clean(text)) for code, title, text in subclasses]
        else:
            paragraph = _join(line.strip() for line in body if line.strip())
            found.append(TaxonomyClass(letter, name, name, _clean(paragraph)))
    return found


def _categories(document: str) -> list[tuple[str, str, list[str]]]:
    """(letter, name, body lines) of each lettered `##` section."""
    sections: list[tuple[str, str, list[str]]] = []
    body: list[str] | None = None
    for line in document.splitlines():
        if line.startswith("## "):
            match = _CATEGORY.match(line)
            body = None
            if match:
                body = []
                sections.append((match["letter"], match["name"].strip(), body))
        elif body is not None:
            body.append(line)
    return sections


def _bullets(body: list[str]) -> list[tuple[str, str, str]]:
    """(code, title, text) of every class bullet, its indented continuation lines joined."""
    bullets: list[tuple[str, str, list[str]]] = []
    for line in body:
        match = _CLASS.match(line)
        if match:
            bullets.append((match["code"], match["title"].strip(), [match["text"]]))
        elif bullets and line.startswith("  ") and line.strip():
            bullets[-1][2].append(line.strip())
        elif bullets and line.strip():
            break  # the list ended: what follows is no longer a class's text
    return [(code, title, _join(parts)) for code, title, parts in bullets]


def _join(lines: Iterable[str]) -> str:
    """Wrapped lines as one: with a space, except after a `/` (the document wraps
    `dict`/`list`/ `set` alternatives at the slash)."""
    joined = ""
    for line in lines:
        joined += line if not joined or joined.endswith("/") else " " + line
    return joined


def _clean(text: str) -> str:
    """One line, issue references removed."""
    return re.sub(r"\s+", " ", _ISSUES.sub("", text)).strip()
