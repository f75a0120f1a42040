"""Which Dynamo configuration each check takes (`mutate fuzz --configs`), and what each found.

Programs that pass under Dynamo's defaults crash under settings users run (nested graph
breaks, dynamic shapes, captured scalar outputs: `mutator.core.configurations`), so the
campaign spends its checks across them, two ways:

- the **sweep**: every queue entry is checked once as it is under each configuration it was
  not checked under (AFL's deterministic stage, for configurations), the newest entries
  first: kept mutants are odder programs than seeds, and more of them fail under another
  configuration (on 626 passing seeds and harvested tests, torch 2.15: 2 crashes in all
  three configurations). The sweep pays early (a corpus's configuration-only crashes) and
  then little, so it goes where it pays: the configuration swept next is the one whose sweeps
  filed the most new frontend bugs per check, and the sweep's share of the checks (at most
  SWEEP_SHARE while entries wait) falls as its new bugs per check fall below the mutants'
  (both counted from an optimistic start, PRIOR checks with one bug);
- each **mutant** takes a configuration: its parent's (the one its features were reached
  under) half the time, otherwise one drawn by recent yield, a moving average of "a check
  under it was kept or filed a new frontend bug" (an INVALID check pays nothing), optimistic
  at first and floored so that none is abandoned, as operator families are drawn (MOpt);
- an entry that a sweep found INVALID under a configuration (its own checks of the compiler
  do not hold there: frame counts under forced graph breaks) is **barred** from it: its
  mutants, and the entries kept from them, do not take it, nor are they swept under it.

Per configuration the campaign counts checks, new frontend bugs and hits of known bugs (the
live screen and stats.json show them).
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import asdict, dataclass
from typing import Any

from mutator.core.configurations import DEFAULT

SWEEP_SHARE = 1 / 2  # of the checks at most, while entries wait to be swept
PRIOR = 20  # checks with one new bug: where the sweep's and the mutants' rates start
MIN_SWEEP = 0.1  # of SWEEP_SHARE: the sweep's share never falls below this part of it
PARENT_AFFINITY = 0.5  # a mutant takes its parent's configuration this often
MEMORY = 0.95  # weight of the past in a configuration's recent yield, per check under it
FLOOR = 0.05  # added to every configuration's yield: none is ever abandoned


@dataclass
class ConfigurationStats:
    checks: int = 0
    new_bugs: int = 0  # frontend bugs this campaign had not filed
    known: int = 0  # hits of bugs filed before (--known) or filed here long ago
    kept: int = 0  # mutants kept for new coverage
    swept: int = 0  # queue entries checked as they are
    swept_new_bugs: int = 0  # new frontend bugs those sweeps filed
    invalid: int = 0  # checks judged INVALID (or UNSTABLE) under it


class ConfigurationSchedule:
    """The campaign's configurations (`names`, the first the one seeds are checked under) and
    how checks are spread over them."""

    def __init__(self, names: tuple[str, ...] = (DEFAULT,), *, feedback: bool = True,
                 sweep_share: float = SWEEP_SHARE) -> None:
        if not names:
            raise ValueError("a campaign checks under one configuration at least")
        if not 0.0 <= sweep_share <= 1.0:
            raise ValueError(f"the sweep's share of the checks is between 0 and 1, not {sweep_share}")
        self.names = tuple(names)
        self.feedback = feedback  # off: drawn uniformly (the unguided baseline)
        self.sweep_share = sweep_share  # of the checks, while entries wait to be swept (0: no sweep)
        self.stats = {name: ConfigurationStats() for name in self.names}
        self.recent = {name: 1.0 for name in self.names}
        self._pending: dict[str, deque[int]] = {name: deque() for name in self.names}  # entry ids to sweep, newest last
        self._swept: dict[int, set[str]] = {}  # entry id -> configurations it was checked under
        self._barred: dict[int, set[str]] = {}  # entry id -> configurations it is INVALID under
        self._sweeps = 0
        self._others = 0

    @property
    def first(self) -> str:
        return self.names[0]

    @property
    def axis(self) -> bool:
        """Whether there is more than one configuration to spread checks over."""
        return len(self.names) > 1

    # -- the sweep ------------------------------------------------------------------------------
    def entered(self, entry_id: int, checked_under: str, *, swept: bool = False, parent: int | None = None) -> None:
        """A queue entry (checked under `checked_under`): sweep it under the others, unless
        it came from a sweep itself (its program is in the queue already, and swept there),
        or its `parent` is barred from them (its checks of the compiler are likely its parent's)."""
        barred = self._barred.get(parent, set()) - {checked_under} if parent is not None else set()
        if barred:
            self._barred[entry_id] = set(barred)
        done = self._swept.setdefault(entry_id, set())
        done.update(self.names if swept else (checked_under,))
        done.update(barred)
        for name in self.names:
            if name not in done:
                self._pending[name].append(entry_id)

    def _rate(self, new_bugs: int, checks: int) -> float:
        return (new_bugs + 1) / (checks + PRIOR)

    def sweep_rate(self, name: str) -> float:
        """New frontend bugs per sweep under `name`, from an optimistic start."""
        stats = self.stats[name]
        return self._rate(stats.swept_new_bugs, stats.swept)

    @property
    def share(self) -> float:
        """The share of the checks the sweep takes while entries wait: SWEEP_SHARE while its
        sweeps file new bugs at the mutants' rate or better, less as they fall behind."""
        stats = self.stats.values()
        sweep = self._rate(sum(s.swept_new_bugs for s in stats), sum(s.swept for s in stats))
        mutants = self._rate(sum(s.new_bugs - s.swept_new_bugs for s in stats), sum(s.checks - s.swept for s in stats))
        return self.sweep_share * max(MIN_SWEEP, min(1.0, 2 * sweep / (sweep + mutants)))

    def sweep_due(self) -> bool:
        """Whether the next check should be a sweep: some wait, and sweeps are under their share."""
        if not self.waiting or self.sweep_share <= 0.0:
            return False
        total = self._sweeps + self._others
        return total == 0 or self._sweeps < self.share * (total + 1)

    def next_sweep(self, alive: set[int]) -> tuple[int, str] | None:
        """The next (entry id, configuration) to sweep, of entries still in the queue: under
        the configuration whose sweeps paid best (the first named on a tie), the newest entry."""
        while True:
            waiting = [name for name in self.names if self._pending[name]]
            if not waiting:
                return None
            name = max(waiting, key=lambda n: (self.sweep_rate(n), -self.names.index(n)))
            entry_id = self._pending[name].pop()
            done = self._swept.setdefault(entry_id, set())
            if entry_id in alive and name not in done:
                done.add(name)
                self._sweeps += 1
                return entry_id, name

    @property
    def waiting(self) -> int:
        return sum(len(pending) for pending in self._pending.values())

    # -- mutants ---------------------------------------------------------------------------------
    def choose(self, rng: random.Random, parent: str | None, entry_id: int | None = None) -> str:
        """The configuration of a mutant of queue entry `entry_id`, which was kept under
        `parent`: never one the entry is barred from."""
        self._others += 1
        if not self.axis:
            return self.first
        names = [n for n in self.names if n not in self._barred.get(entry_id, ())] if entry_id is not None \
            else list(self.names)
        names = names or [self.first]
        if self.feedback and parent in names and rng.random() < PARENT_AFFINITY:
            return parent
        if not self.feedback:
            return rng.choice(names)
        return rng.choices(names, weights=[FLOOR + self.recent[name] for name in names])[0]

    def record(self, name: str, *, kept: bool, new_bug: bool, known: bool, swept: bool = False,
               valid: bool = True, entry_id: int | None = None) -> None:
        """What a check under `name` came to (a sweep's of queue entry `entry_id`)."""
        stats = self.stats.get(name)
        if stats is None:  # a configuration of an earlier session's set: counted apart
            stats = self.stats[name] = ConfigurationStats()
        stats.checks += 1
        stats.new_bugs += new_bug
        stats.known += known
        stats.kept += kept
        stats.swept += swept
        stats.swept_new_bugs += swept and new_bug
        stats.invalid += not valid
        if swept and not valid and entry_id is not None:
            self._barred.setdefault(entry_id, set()).add(name)
        if name in self.recent and self.feedback:
            paid = float(valid and (kept or new_bug))
            self.recent[name] = MEMORY * self.recent[name] + (1 - MEMORY) * paid

    # -- state ------------------------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        """Per configuration: checks, new bugs, known hits, kept, swept, recent yield; and the
        sweep's backlog."""
        return dict(configurations={name: dict(asdict(stats), recent=round(self.recent.get(name, 0.0), 4))
                                    for name, stats in self.stats.items()},
                    sweep_waiting=self.waiting, sweep_share=round(self.share, 4))

    def state(self) -> dict[str, Any]:
        """What a resumed session takes back (stats.json's `configurations`)."""
        return dict(stats={name: asdict(stats) for name, stats in self.stats.items()},
                    recent=dict(self.recent), swept={str(k): sorted(v) for k, v in self._swept.items()},
                    barred={str(k): sorted(v) for k, v in self._barred.items()},
                    sweeps=self._sweeps, others=self._others)

    def restore(self, state: dict[str, Any], entries: list[tuple[int, str]]) -> None:
        """A previous session's `state()`, and the queue's entries (id, configuration it was
        checked under): what was not swept yet is swept now."""
        for name, values in state.get("stats", {}).items():
            self.stats[name] = ConfigurationStats(**{k: v for k, v in values.items()
                                                     if k in ConfigurationStats.__dataclass_fields__})
        for name, value in state.get("recent", {}).items():
            if name in self.recent:
                self.recent[name] = float(value)
        self._swept = {int(k): set(v) for k, v in state.get("swept", {}).items()}
        self._barred = {int(k): set(v) for k, v in state.get("barred", {}).items()}
        self._sweeps, self._others = int(state.get("sweeps", 0)), int(state.get("others", 0))
        for pending in self._pending.values():
            pending.clear()
        for entry_id, checked_under in entries:
            self.entered(entry_id, checked_under)
