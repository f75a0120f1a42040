"""What a session writes besides queue entries and findings, and what a resumed one takes back
(docs/design.md, "campaign").

Queue entries and findings are written as they come. Every SAVE_EVERY seconds, and when a
session ends, the rest is written: stats.json (the counters, the live screen's snapshot,
each entry's choice counts, operator usefulness, family yields), coverage.bin and a line
of plot_data.csv. On resume, the queue and the findings win over a stats.json behind them
(a kill between the writes leaves it so).
"""

from __future__ import annotations

import time
from dataclasses import asdict
from typing import Any

from mutator.campaign.configurations import ConfigurationSchedule
from mutator.campaign.corpus import Corpus, CoverageMap
from mutator.campaign.directory import PLOT_COLUMNS, Campaign
from mutator.campaign.lanes.llm import LLM_FAMILY
from mutator.campaign.stats import FuzzStats
from mutator.core.cpu import Ledger
from mutator.findings.store import FindingStore
from mutator.mutation.mutator import Mutator, Usefulness

SAVE_EVERY = 5.0  # seconds between writes of stats.json, coverage.bin and plot_data.csv


class Checkpoint:
    def __init__(self, campaign: Campaign) -> None:
        self.campaign = campaign
        self._last: float | None = None

    def due(self) -> bool:
        return self._last is None or time.monotonic() - self._last >= SAVE_EVERY

    def save(self, *, stats: FuzzStats, snapshot: dict[str, Any], elapsed: float, corpus: Corpus,
             coverage: CoverageMap, mutator: Mutator, configurations: ConfigurationSchedule | None = None,
             cpu: Ledger | None = None) -> None:
        self._last = time.monotonic()
        self.campaign.save_coverage(coverage)
        self.campaign.save_stats(dict(
            counters={**asdict(stats), "elapsed": round(elapsed, 2)},
            snapshot=snapshot,
            queue_state={str(e.id): [e.times_chosen, e.finds, e.known_hits] for e in corpus.entries},
            operators={op: u.as_dict() for op, u in sorted(mutator.stats.items())},
            family_yield={f: round(y, 6) for f, y in sorted(mutator.family_yield.items())},
            **(dict(configurations=configurations.state()) if configurations is not None else {}),
            **(dict(cpu=cpu.as_json()) if cpu is not None else {}),  # where the CPU went, by stage
        ))
        self.campaign.append_plot({k: snapshot.get(k, "") for k in PLOT_COLUMNS})

    def restore(self, saved: dict[str, Any], *, corpus: Corpus, store: FindingStore, mutator: Mutator,
                configurations: ConfigurationSchedule | None = None) -> FuzzStats:
        """The counters of a previous session's stats.json (`saved`); its choice counts go back
        into the queue's entries, operator usefulness and family yields into `mutator`, what
        each configuration found and which entries were swept into `configurations`."""
        counters = saved.get("counters", {})
        stats = FuzzStats(**{k: v for k, v in counters.items() if k in FuzzStats.__dataclass_fields__})
        if "traced" not in counters:  # a campaign from before --arc-share: every check recorded arcs
            stats.traced = stats.execs
        stats.kept = len(corpus)
        stats.hits = max(stats.hits, sum(f.hits for f in store.findings.values()))
        stats.execs = max(stats.execs, stats.kept + stats.hits)
        state = saved.get("queue_state", {})
        for entry in corpus.entries:
            entry.times_chosen, entry.finds, entry.known_hits = (*state.get(str(entry.id), ()), 0, 0, 0)[:3]
        for op, values in saved.get("operators", {}).items():
            mutator.stats[op] = Usefulness(**values)
        for family, value in saved.get("family_yield", {}).items():
            if family in mutator.family_yield or family == LLM_FAMILY:  # L: whether or not on this session
                mutator.family_yield[family] = float(value)
        if configurations is not None:
            configurations.restore(saved.get("configurations", {}),
                                   [(entry.id, entry.configuration) for entry in corpus.entries])
        return stats
