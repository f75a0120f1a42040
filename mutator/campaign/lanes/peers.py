"""When an instance of a synced campaign looks at its peers (`mutator.campaign.sync`).

Before the dry run it learns the peers' signatures only, so that a seed that hits a bug a
peer filed is not filed as new; their queue entries it takes after the dry run, as AFL's
instances do: at the loop's first turn, then every `--sync-every`, and once more when the
session stops, so that instances which run for less than `--sync-every` still exchange
what they found.
"""

from __future__ import annotations

from typing import Any

from mutator.campaign.lane import Lane, Loop
from mutator.campaign.sync import Sync


class SyncLane(Lane):
    def __init__(self, sync: Sync) -> None:
        self.sync = sync

    def start(self, loop: Loop) -> None:
        self.sync.learn(loop.filing.store)

    def poll(self, loop: Loop) -> tuple[()]:
        if self.sync.due():
            self._look(loop)
        return ()

    def stop(self, loop: Loop) -> None:
        self._look(loop)

    def _look(self, loop: Loop) -> None:
        loop.stats.synced += self.sync.pull(loop.corpus, loop.coverage, loop.filing.store, found_at=loop.now())

    def snapshot(self) -> dict[str, Any]:
        return dict(sync=self.sync.stats.as_dict())
