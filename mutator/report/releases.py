"""When a torch was made, and the command that bisects PyTorch's nightlies between two of them.

Where two torches judged differ (one passes, one fails), the next question is which
nightly changed it. A nightly says its date in its version (`2.15.0.dev20261001`). A
release does not: no file of the wheel or its `dist-info` carries a release date, and the
installed files have the time they were installed. The package index does: a release's day
is the earliest upload time of its files there (`mutator.report.torch_index`, asked at most
once a day and cached). Offline, a table of the releases known when this was written stands
in, each entry with where it comes from; a release in neither (or a source build) has no
date, and the report says so instead of guessing. A release's code is older than its date (it
is its branch cut, weeks before, plus cherry-picks), so the script checks both ends first.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from mutator.core.build import Build
from mutator.report.torch_index import INDEX_URL, Answer, TorchIndex

BISECT_SCRIPT = "scripts/bisect-nightlies.sh"
_NIGHTLY = re.compile(r"^(\d+)\.(\d+)\.(\d+)\.dev(\d{8})")
_RELEASE = re.compile(r"^(\d+)\.(\d+)\.(\d+)(?:\+\w+)?$")


@dataclass(frozen=True, slots=True)
class Dated:
    day: str  # YYYYMMDD
    source: str  # how it is known


# The offline fallback: releases of the supported range whose date could be checked, and how.
# The index's answer comes first; what is in neither is "unknown" in every report.
RELEASE_DATES = {
    "2.6.0": Dated("20250130", "released 2025-01-30 (PyTorch's wiki, PyTorch Versions)"),
    "2.7.0": Dated("20250423", "released 2025-04-23 (PyTorch's wiki, PyTorch Versions)"),
    "2.13.0": Dated("20260703", "built 2026-07-03 (the file times inside its wheel), released within the week "
                                "after (dependency bumps to it from 2026-07-09)"),
    "2.14.0": Dated("20260902", "released 2026-09-02 (its GitHub release, and pytorch/test-infra#8712 made it "
                                "the stable version that day)"),
    "2.14.1": Dated("20260930", "built 2026-09-30 (the file times inside its wheel), in use by 2026-10-06"),
    "2.15.0": Dated("20261028", "uploaded to PyPI 2026-10-28 (the earliest upload time of its files, read from "
                                "pypi.org/pypi/torch/json on 2026-12-06)"),
}


def date_of(build: Build, answer: Answer | None = None) -> Dated | None:
    """The day a torch stands for: a nightly's own; a release's upload day from the index's
    `answer` (default: `TorchIndex.from_env()`'s), else from the table; None for a source build
    or a release in neither."""
    nightly = _NIGHTLY.match(build.torch)
    if nightly:
        return Dated(nightly.group(4), "the nightly's version")
    release = _RELEASE.match(build.torch)
    if release is None:
        return None
    version = ".".join(release.groups())
    answer = answer if answer is not None else _index_answer()
    listed = answer.release(version)
    if listed is not None:
        index = "PyPI" if answer.url == INDEX_URL else answer.url
        return Dated(listed.day, f"uploaded to {index} {listed.uploaded[:10]} (the earliest upload time of its files)")
    return RELEASE_DATES.get(version)


def _index_answer() -> Answer:
    index = TorchIndex.from_env()
    return index.answer() if index is not None else Answer("off", 0.0)


def nightly_versions(older: Build, newer: Build) -> list[str]:
    """The versions nightlies between two torches carry: after release X.Y the nightlies are
    X.(Y+1).0.devYYYYMMDD until the next branch cut, then X.(Y+2).0...; empty when the two
    are of different major versions or either is no release or nightly."""
    first, last = _minor(older), _minor(newer)
    if first is None or last is None or first[0] != last[0]:
        return []
    return [f"{first[0]}.{minor}.0" for minor in range(first[1], last[1] + 1)]


def _minor(build: Build) -> tuple[int, int] | None:
    """(major, the minor version of the nightlies just after it)."""
    nightly = _NIGHTLY.match(build.torch)
    if nightly:
        return int(nightly.group(1)), int(nightly.group(2))
    release = _RELEASE.match(build.torch)
    return (int(release.group(1)), int(release.group(2)) + 1) if release else None


def bisect_lines(good: Build, bad: Build, *, repro: str = "repro.py") -> list[str]:
    """report.md's lines on the bisect between a torch on which the reproducer passes (`good`)
    and one on which it fails (`bad`), either older: the command, or why there is none."""
    older, newer = sorted((good, bad), key=lambda b: b.release_key())
    change = "the fix" if older is bad else "the change that broke it"
    good_date, bad_date = date_of(good), date_of(bad)
    lines = [f"Torch {good.torch} passes and {bad.torch} fails: {change} landed between them."]
    if good_date is None or bad_date is None:
        unknown = [b.torch for b, dated in ((good, good_date), (bad, bad_date)) if dated is None]
        commits = f" (commits {older.git[:10]}..{newer.git[:10]})" if older.git and newer.git else ""
        return lines + [f"The date of torch {' and '.join(unknown)} is not known (a source build, or a release "
                        "the package index did not list here and mutator's table, `mutator/report/releases.py`, "
                        f"lacks), so there is no nightly range to give: bisect its commits{commits} instead.", ""]
    versions = nightly_versions(older, newer)
    command = [BISECT_SCRIPT, repro, "--good", good_date.day, "--bad", bad_date.day]
    if versions:
        command += ["--nightly-versions", ",".join(versions)]
    sources = f"{good.torch}: {good_date.source}; {bad.torch}: {bad_date.source}"
    return lines + ["To find the nightly (installs CPU nightlies into a scratch venv and binary-searches by date on "
                    "the reproducer's exit status; not run here):", "", "```bash", shlex.join(command), "```", "",
                    f"Dates: {sources}. A release's code is its branch cut, weeks before its date: the script "
                    "checks both ends first and says when the range must be widened.", ""]
