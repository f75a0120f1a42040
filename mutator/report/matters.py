"""The "What matters" section of report.md, and the words for a title, from a finding's
`Matters.as_json()` record (`mutator.reduce.matters`)."""

from __future__ import annotations

from typing import Any

from mutator.reduce.matters import BREAKS_PROGRAM, FAILS_OTHERWISE, PASSES, STILL_FAILS


def headline(data: dict[str, Any], *, said: str = "") -> str:
    """The constructs that matter, for a title: "a `set` subclass and a graph break" (not
    those the title says already: `said`="fullgraph" for a graph break under fullgraph)."""
    # what the bug needs; failing that, what cannot go and whose kind does not matter (a
    # `try` the program breaks without)
    needed = data.get("needed", []) or data.get("any_neighbour", [])
    needed = [c for c in needed if not (said and said in c)]
    if not needed:
        return ""
    if len(needed) == 1:
        return needed[0]
    return ", ".join(needed[:-1]) + " and " + needed[-1]


def markdown(data: dict[str, Any]) -> list[str]:
    """The report's "What matters" section from `Matters.as_json()`."""
    rows = data.get("rows", [])
    if not rows and not data.get("removed"):
        return []
    lines = ["### What matters", ""]
    by_construct: dict[str, dict[str, list[str]]] = {}
    for row in rows:
        by_construct.setdefault(row["construct"], {}).setdefault(row["outcome"], []).append(row["change"])
    needed, not_needed = data.get("needed", []), data.get("not_needed", [])
    if needed:
        lines.append("**Needed** (the bug goes away with the change):")
        for construct in needed:
            outcomes = by_construct.get(construct, {})
            parts = [f"passes {'; '.join(outcomes.get(PASSES, []))}"]
            if outcomes.get(STILL_FAILS):
                parts.append(f"still fails {'; '.join(outcomes[STILL_FAILS])}")
            lines.append(f"- {construct}: {'. '.join(parts)}")
        lines.append("")
    if not_needed or data.get("removed"):
        lines.append("**Not needed** (the bug stays without it):")
        for construct in not_needed:
            lines.append(f"- {construct}: still fails {'; '.join(by_construct[construct][STILL_FAILS])}")
        for construct in data.get("removed", []):
            if construct not in not_needed:
                lines.append(f"- {construct}: the reduction took it out and the bug stayed")
        lines.append("")
    if data.get("any_neighbour"):
        lines.append("**Any of its kind** (the bug stays with its neighbours; without it the program no longer runs):")
        for construct in data["any_neighbour"]:
            lines.append(f"- {construct}: still fails {'; '.join(by_construct[construct][STILL_FAILS])}")
        lines.append("")
    other = [row for row in rows if row["outcome"] == FAILS_OTHERWISE]
    if other:
        lines.append("Changes that give another finding (not this bug): " + "; ".join(
            f"{row['change']} ({row['detail']})" for row in other))
        lines.append("")
    broke = sum(1 for row in rows if row["outcome"] == BREAKS_PROGRAM)
    skipped = data.get("skipped", 0)
    lines.append(f"Checked {len(rows)} variants of the reduced program ({data.get('checks', 0)} runs, "
                 f"{data.get('seconds', 0)} s)" + (f", {broke} of which broke the program eagerly" if broke else "")
                 + (f"; {skipped} more were over the budget" if skipped else "") + ".")
    lines.append("")
    return lines
