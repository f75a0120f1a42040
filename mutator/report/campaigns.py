"""The findings of one or several campaign directories as `mutate report` shows them: each
signature once (the instances of a synced campaign share signatures), reported from the
directory with the best of it (reduced, then found first), new findings before known ones,
the members of a root-cause group together; one report.md each, one summary row each."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mutator.core import storage
from mutator.findings import known as known_bugs
from mutator.findings import root_cause
from mutator.findings.finding import Finding
from mutator.findings.signature import Signature
from mutator.findings.store import FindingStore
from mutator.report.issue import known_lines, report_markdown, root_cause_lines, summary_row
from mutator.report.versions import recorded


@dataclass(frozen=True, slots=True)
class Reported:
    """One distinct finding: where it is reported from, and the other directories that have it."""

    campaign: Path
    finding: Finding
    others: tuple[tuple[Path, Finding], ...] = ()

    @property
    def directory(self) -> Path:
        return self.campaign / self.finding.directory

    @property
    def hits(self) -> int:
        return self.finding.hits + sum(f.hits for _, f in self.others)


class Campaigns:
    """The finding stores of the campaign directories given, read once."""

    def __init__(self, campaign_dirs: tuple[Path, ...] | list[Path]) -> None:
        self.dirs = tuple(campaign_dirs)
        self.stores = {campaign_dir: FindingStore(campaign_dir) for campaign_dir in self.dirs}

    def python(self) -> str:
        """The interpreter whose torch the first campaign was fuzzed on, where it is still there
        (its campaign.json says), else this one."""
        for campaign_dir in self.dirs:
            try:
                torch = storage.read_json(campaign_dir / "campaign.json").get("torch") or {}
            except (storage.StorageError, OSError):
                continue
            executable = torch.get("executable", "")
            if executable and os.access(executable, os.X_OK):
                return executable
        return sys.executable

    @property
    def problems(self) -> list[str]:
        """Finding records that could not be read, one line each."""
        return [problem for store in self.stores.values() for problem in store.unreadable]

    def distinct(self) -> list[Reported]:
        """Each signature once: frontend bugs first, then those fixed since (not to be filed),
        then the low-severity ones; within each by verdict, most hits first."""
        groups = self._by_signature()
        reported = [Reported(group[0][0], group[0][1], tuple(group[1:])) for group in groups.values()]
        return sorted(reported, key=lambda r: (_band(r.finding), r.finding.signature.verdict, -r.hits,
                                               r.finding.directory))

    def save(self, reported: Reported) -> None:
        self.stores[reported.campaign].save(reported.finding)

    def _key(self, finding: Finding) -> Signature:
        """A signature as every store knows it: one merged into another after reduction in any
        directory is that other one everywhere."""
        signature = finding.signature
        for store in self.stores.values():
            signature = store.aliases.get(signature, signature)
        return signature

    def _by_signature(self) -> dict[Signature, list[tuple[Path, Finding]]]:
        """Every finding of every directory, by signature; in each group the best first: a
        confirmed reduction, then one the directory found itself (not known from a peer), then
        the earliest."""
        groups: dict[Signature, list[tuple[Path, Finding]]] = {}
        for directory, store in self.stores.items():
            for finding in store.findings.values():
                groups.setdefault(self._key(finding), []).append((directory, finding))
        for group in groups.values():
            group.sort(key=lambda item: (not item[1].reduction.get("confirmed"), bool(item[1].known_from),
                                         item[1].first_seen, str(item[0])))
        return groups


def _band(finding: Finding) -> int:
    judged = recorded(finding)
    if judged is not None and judged.status == "fixed_since":
        return 1
    return 0 if finding.signature.verdict.is_frontend_bug else 2


def write_reports(campaigns: Campaigns, *, known: known_bugs.KnownBugs, versions: dict[str, Any],
                  out: Path | None = None) -> list[dict[str, Any]]:
    """Write report.md into each distinct finding's directory (and a copy into `out`); the
    summary rows, in the order a reader takes them (`mutate report --json`)."""
    distinct = campaigns.distinct()
    keyed = {str(r.directory): r for r in distinct}
    group_of = {member.key: group for group in root_cause.groups((key, r.finding) for key, r in keyed.items())
                for member in group.members}
    rows = []
    for key in _ordered(list(keyed), keyed, group_of, known):
        reported = keyed[key]
        finding, directory = reported.finding, reported.directory
        match = known.match(finding, directory=directory) or (known_bugs.Match(**finding.known) if finding.known
                                                                 else None)
        repro = directory / "repro.py"
        text = report_markdown(finding, repro_source=repro.read_text() if repro.exists() else None,
                               versions=versions,
                               related=root_cause_lines(group_of.get(key), key) + known_lines(match))
        storage.write_text(directory / "report.md", text)
        if out is not None:
            storage.write_text(out / f"{Path(finding.directory).name}.md", text)
        row = dict(summary_row(finding), report=str(directory / "report.md"),
                   known=f"{match.where} (same {match.by})" if match else "",
                   root_cause=group_of[key].name if key in group_of else None,
                   same_root_cause_as=[m.key for m in group_of[key].others(key)] if key in group_of else [])
        if len(campaigns.dirs) > 1:
            row.update(campaign=str(reported.campaign), hits=reported.hits,
                       also_in=[str(d / f.directory) for d, f in reported.others])
        rows.append(row)
    return rows


def _ordered(keys: list[str], keyed: dict[str, Reported], group_of: dict[str, root_cause.Group],
             known: known_bugs.KnownBugs) -> list[str]:
    """New findings first, then known ones; the members of a root-cause group together, where
    the first of them stands."""
    def is_known(key: str) -> bool:
        reported = keyed[key]
        return bool(reported.finding.known) or known.match(reported.finding, directory=reported.directory) is not None

    ordered: list[str] = []
    placed: set[str] = set()
    for part in ([key for key in keys if not is_known(key)], [key for key in keys if is_known(key)]):
        in_part = set(part)
        for key in part:
            if key in placed:
                continue
            group = group_of.get(key)
            together = [other for other in part if group is not None and other in in_part
                        and any(m.key == other for m in group.members)] or [key]
            ordered += together
            placed.update(together)
    return ordered


def known_hit_lines(campaign_dirs: tuple[Path, ...]) -> list[str]:
    """What each campaign counted instead of filing (its known.json), a line each."""
    lines = []
    for campaign_dir in campaign_dirs:
        path = campaign_dir / known_bugs.KNOWN_FILE
        try:
            data = storage.read_json(path) if path.exists() else None
        except storage.StorageError as exc:
            lines.append(f"warning: {exc}")
            continue
        if data and data.get("signatures"):
            rows = data["signatures"]
            lines.append(f"{campaign_dir}: {sum(r.get('hits', 0) for r in rows)} hits of {len(rows)} signatures "
                         f"filed before were counted, not filed (see {path})")
    return lines
