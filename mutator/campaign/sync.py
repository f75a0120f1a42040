"""AFL-style sync between instances of a campaign that share a directory (docs/design.md, "Scale").

Each instance owns `SYNC/NAME/`, a normal campaign directory, and now and then (`due`)
looks at its peers, the other campaign directories in `SYNC/`:

- their queue entries it has not looked at yet (`SYNC/NAME/.synced/PEER` holds the last
  entry id taken, as AFL's `.synced/` does) that add features to its own coverage map are
  copied into its queue as `id:000123,sync:PEER,src:000045` with their sidecar's features:
  a peer runs the same torch, so the features it recorded are the ones a run here gives;
- their findings' signatures become known (`FindingStore.known`), so that a bug one
  instance filed is not reported as new by another: a hit of it is still filed here, marked
  with the peer's name, and not reduced here.

Works over any shared filesystem, or directories copied back and forth (rsync): it reads
only whole files its peers wrote atomically, and writes only into its own directory.
Peers whose coverage configuration differs are skipped (their features mean other arcs).
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from mutator.core import storage
from mutator.campaign.directory import Campaign
from mutator.campaign.corpus import Corpus, CorpusEntry, CoverageMap
from mutator.findings.signature import Signature
from mutator.findings.store import FindingStore
from mutator.core.program import Program

SYNC_EVERY = 120.0  # seconds between looks at the peers (AFL's is of the same order)
_ID = re.compile(r"^id:(\d+)")
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class SyncError(ValueError):
    """A sync directory or instance name that cannot be used; the message says what to do."""


def instance_directory(sync_dir: Path, name: str) -> Path:
    """`SYNC/NAME`, after checking that NAME can be a directory name and a provenance tag."""
    if not NAME.match(name):
        raise SyncError(f"--name {name!r}: use letters, digits, '_', '.' or '-' (at most 64), starting with a "
                        "letter or digit")
    return sync_dir / name


@dataclass
class SyncStats:
    rounds: int = 0
    imported: int = 0  # queue entries taken from peers
    looked_at: int = 0  # peer entries read (imported or not)
    known_signatures: int = 0
    skipped_peers: list[str] = field(default_factory=list)  # peers with another coverage configuration
    last_error: str = ""

    def as_dict(self) -> dict[str, object]:
        return dict(rounds=self.rounds, imported=self.imported, looked_at=self.looked_at,
                    known_signatures=self.known_signatures, skipped_peers=list(self.skipped_peers),
                    last_error=self.last_error)


class Sync:
    def __init__(self, campaign: Campaign, *, every: float = SYNC_EVERY, clock=time.monotonic) -> None:  # type: ignore[no-untyped-def]
        self.campaign = campaign
        self.name = campaign.root.name
        self.root = campaign.root.parent
        self.every = every
        self._clock = clock
        self._last: float | None = None
        self.stats = SyncStats()
        self._state = campaign.root / ".synced"
        self._read: dict[Path, float] = {}  # peers' finding records read, by modification time

    def due(self) -> bool:
        return self._last is None or self._clock() - self._last >= self.every

    def learn(self, store: FindingStore) -> None:
        """The peers' signatures only (before a dry run, so that a seed that hits one of them
        is not filed as new; their queue entries come after it, as AFL's instances do)."""
        for peer in self.peers():
            try:
                self._learn_signatures(peer, store)
            except (OSError, ValueError, KeyError, TypeError) as exc:
                self.stats.last_error = f"{peer.name}: {type(exc).__name__}: {exc}"[:300]
        self.stats.known_signatures = len(store.known)

    def pull(self, corpus: Corpus, coverage: CoverageMap, store: FindingStore, *, found_at: float) -> int:
        """One round: import what the peers have that adds features, learn their signatures.
        Returns how many entries were imported; a peer that cannot be read is skipped (its
        files are its own: a torn or foreign file costs that peer's round, never ours)."""
        self._last = self._clock()
        self.stats.rounds += 1
        imported = 0
        for peer in self.peers():
            try:
                imported += self._pull_queue(peer, corpus, coverage, found_at)
                self._learn_signatures(peer, store)
            except (OSError, ValueError, KeyError, TypeError) as exc:  # a peer's broken file: skip it this round
                self.stats.last_error = f"{peer.name}: {type(exc).__name__}: {exc}"[:300]
        self.stats.imported += imported
        self.stats.known_signatures = len(store.known)
        return imported

    def peers(self) -> list[Path]:
        """The other campaign directories of the sync directory with our coverage configuration."""
        found = []
        for directory in sorted(self.root.iterdir()) if self.root.is_dir() else []:
            if directory.name == self.name or not (directory / "campaign.json").is_file():
                continue
            try:
                config = json.loads((directory / "campaign.json").read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if tuple(config.get("coverage", ())) != self.campaign.config.coverage:
                if directory.name not in self.stats.skipped_peers:
                    self.stats.skipped_peers.append(directory.name)
                continue
            found.append(directory)
        return found

    def _pull_queue(self, peer: Path, corpus: Corpus, coverage: CoverageMap, found_at: float) -> int:
        last = self._last_taken(peer.name)
        newer = sorted((int(m.group(1)), sidecar) for sidecar in (peer / "queue").glob("id:*.json")
                       if (m := _ID.match(sidecar.name)) and int(m.group(1)) > last)
        imported = 0
        for peer_id, sidecar in newer:
            program_path = sidecar.with_suffix(".py")
            if not program_path.exists():  # copied without its program yet (rsync): next round
                break
            last = peer_id
            self.stats.looked_at += 1
            try:
                data = json.loads(sidecar.read_text(encoding="utf-8"))
                features = frozenset(data["features"])
                if not coverage.new(features):
                    continue
                program = Program.from_source(program_path.read_text(encoding="utf-8"), str(program_path))
            except (OSError, ValueError, KeyError, TypeError) as exc:  # a peer's broken entry: skip it
                self.stats.last_error = f"{peer.name}: {sidecar.name}: {type(exc).__name__}: {exc}"[:300]
                continue
            self._take(peer.name, peer_id, program, data, features, corpus, coverage, found_at)
            imported += 1
        self._save_last_taken(peer.name, last)
        return imported

    def _take(self, peer: str, peer_id: int, program: Program, data: dict, features: frozenset[int],  # type: ignore[type-arg]
              corpus: Corpus, coverage: CoverageMap, found_at: float) -> None:
        entry = CorpusEntry(id=corpus.next_id(), program=program, features=features,
                            seconds=float(data.get("seconds", 1.0)), depth=0, parent=None,
                            provenance=f"sync:{peer}:{peer_id:06d}")
        name = f"id:{entry.id:06d},sync:{peer},src:{peer_id:06d}"
        entry.program = Program(program.source, program.form, str(self.campaign.program_path(name)))
        self.campaign.save_entry(entry, name, found_at=found_at)
        corpus.add(entry)
        coverage.add(features)

    def _learn_signatures(self, peer: Path, store: FindingStore) -> None:
        for record in [*peer.glob("findings/*/finding.json"), *peer.glob("hangs/*/finding.json")]:
            modified = record.stat().st_mtime
            if self._read.get(record) == modified:
                continue
            data = json.loads(record.read_text(encoding="utf-8"))
            self._read[record] = modified
            if data.get("known_from"):  # the peer had it from another: that one is its owner
                continue
            signature = Signature(**data["signature"])
            store.known.setdefault(signature, peer.name)
            for merged in data.get("merged", ()):
                store.known.setdefault(Signature(**merged["signature"]), peer.name)

    def _last_taken(self, peer: str) -> int:
        path = self._state / peer
        try:
            return int(path.read_text().strip() or -1)
        except (OSError, ValueError):
            return -1

    def _save_last_taken(self, peer: str, last: int) -> None:
        if last != self._last_taken(peer):
            storage.write_text(self._state / peer, f"{last}\n")
