"""AFL-style sync between two campaign directories of one sync directory, without torch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mutator.campaign.directory import Campaign, CampaignConfig
from mutator.judge.check import CheckResult
from mutator.campaign.corpus import Corpus, CorpusEntry, CoverageMap
from mutator.findings.signature import Signature
from mutator.findings.store import FindingStore
from mutator.judge.oracle import Judgement
from mutator.core.program import Program
from mutator.campaign.sync import Sync, SyncError, instance_directory
from mutator.core.verdict import Verdict

from tests.helpers import compiled_run, exc, run

SOURCE = "import torch\n\n\ndef fn(x):\n    return x + {n}\n\n\ndef inputs():\n    return (torch.ones(2),)\n"


def campaign(sync_dir: Path, name: str, coverage: tuple[str, ...] = ("torch/_dynamo",)) -> Campaign:
    return Campaign.create(instance_directory(sync_dir, name), CampaignConfig(corpus=("seeds",), coverage=coverage))


def keep(c: Campaign, corpus: Corpus, n: int, features: set[int]) -> None:
    entry = CorpusEntry(id=corpus.next_id(), program=Program.from_source(SOURCE.format(n=n), "p.py"),
                        features=frozenset(features), seconds=0.5, depth=0, parent=None, provenance="seed")
    name = c.entry_name(entry, seed_path=f"seed{n}.py")
    c.save_entry(entry, name, found_at=1.0)
    corpus.add(entry)


def crash() -> CheckResult:
    program = Program.from_source(SOURCE.format(n=9), "p.py")
    return CheckResult(program, Judgement(Verdict.CRASH, "boom", exception=exc("InternalTorchDynamoError", dynamo=True)),
                       (run(), compiled_run()))


def test_a_peer_entry_that_adds_features_is_imported_under_a_sync_name_and_only_once(tmp_path: Path):
    a, b = campaign(tmp_path, "a"), campaign(tmp_path, "b")
    a_corpus = Corpus()
    keep(a, a_corpus, 1, {1, 2})
    keep(a, a_corpus, 2, {2, 3})
    keep(a, a_corpus, 3, {1})  # adds nothing to b once the first is in
    corpus, coverage = Corpus(), CoverageMap()
    keep(b, corpus, 7, {3})
    coverage.add({3})
    sync = Sync(b, every=60.0, clock=lambda: 0.0)
    store = FindingStore(b.root)
    assert sync.pull(corpus, coverage, store, found_at=5.0) == 1
    [imported] = sorted((b.root / "queue").glob("*sync:a*.py"))
    assert imported.name == "id:000001,sync:a,src:000000.py"
    sidecar = json.loads(imported.with_suffix(".json").read_text())
    assert sidecar["provenance"] == "sync:a:000000" and sidecar["features"] == [1, 2]
    assert coverage.new({1, 2, 3}) == frozenset() and len(corpus) == 2
    assert (b.root / ".synced" / "a").read_text().strip() == "2"  # the last peer entry looked at
    assert sync.pull(corpus, coverage, store, found_at=6.0) == 0 and sync.stats.looked_at == 3
    keep(a, a_corpus, 4, {4})
    assert sync.pull(corpus, coverage, store, found_at=7.0) == 1  # only what came since
    assert not any("sync" in p.name for p in (a.root / "queue").iterdir())  # a peer's directory is only read
    a.close()
    b.close()


def test_a_signature_a_peer_filed_is_filed_here_but_not_as_new(tmp_path: Path):
    a, b = campaign(tmp_path, "a"), campaign(tmp_path, "b")
    peer_store = FindingStore(a.root)
    peer_finding, new_there = peer_store.record(crash(), provenance="seed:x.py", parent=None, elapsed=1.0)
    assert new_there
    store = FindingStore(b.root)
    Sync(b).pull(Corpus(), CoverageMap(), store, found_at=1.0)
    assert store.known == {peer_finding.signature: "a"}
    finding, is_new = store.record(crash(), provenance="seed:y.py", parent=None, elapsed=2.0)
    assert not is_new and finding.known_from == "a" and (b.root / finding.directory / "smallest.py").exists()
    assert "known from" in (b.root / finding.directory / "README.md").read_text()
    assert store.count_by_kind() == {}  # not this instance's finding
    reloaded = FindingStore(b.root).findings[finding.signature]
    assert reloaded.known_from == "a"
    a.close()
    b.close()


def test_peers_with_another_coverage_configuration_or_broken_files_are_skipped(tmp_path: Path):
    a = campaign(tmp_path, "a", coverage=("torch/fx",))
    c = campaign(tmp_path, "c")
    b = campaign(tmp_path, "b")
    keep(a, Corpus(), 1, {1})
    keep(c, Corpus(), 1, {5})
    (c.root / "queue" / "id:000001,orig:x.json").write_text("{ torn")
    (c.root / "queue" / "id:000001,orig:x.py").write_text(SOURCE.format(n=1))
    sync = Sync(b)
    corpus, coverage = Corpus(), CoverageMap()
    assert sync.pull(corpus, coverage, FindingStore(b.root), found_at=1.0) == 1  # c's first entry, then its torn one
    assert sync.stats.skipped_peers == ["a"] and "c:" in sync.stats.last_error
    for x in (a, b, c):
        x.close()


def test_instance_names_must_be_plain():
    with pytest.raises(SyncError, match="--name"):
        instance_directory(Path("sync"), "../escape")
    assert instance_directory(Path("sync"), "gpu-box.2") == Path("sync/gpu-box.2")


def test_a_signature_is_known_by_its_merged_aliases_too(tmp_path: Path):
    a, b = campaign(tmp_path, "a"), campaign(tmp_path, "b")
    alias = Signature("MISMATCH", observation="result:value")
    record = dict(signature={"kind": "CRASH", "exception": "X", "location": "", "observation": ""}, reason="r", directory="findings/crash-x", hits=1, smallest_size=1, first_seen=0.0,
                  merged=[{"signature": {"kind": "MISMATCH", "exception": "", "location": "",
                                         "observation": "result:value"}, "hits": 1, "reason": "r",
                           "directory": "findings/crash-x/merged/m", "moved_from": "findings/m"}])
    (a.root / "findings" / "crash-x").mkdir(parents=True)
    (a.root / "findings" / "crash-x" / "finding.json").write_text(json.dumps(record))
    store = FindingStore(b.root)
    Sync(b).pull(Corpus(), CoverageMap(), store, found_at=1.0)
    assert store.known[alias] == "a" and store.known[Signature("CRASH", "X")] == "a"
    a.close()
    b.close()


def test_an_instance_looks_at_its_peers_after_its_dry_run_every_sync_every_and_before_it_stops(tmp_path: Path):
    """Two instances that run for less than --sync-every still exchange what they kept: the
    last look comes at the stop."""
    import random

    from mutator.campaign.filing import Filing
    from mutator.campaign.fuzzer import Fuzzer
    from mutator.campaign.lanes.peers import SyncLane
    from mutator.campaign.schedule import UniformSchedule
    from mutator.mutation.mutator import Mutator
    from mutator.mutation.registry import all_operators

    a, b = campaign(tmp_path, "a"), campaign(tmp_path, "b")
    peer = Corpus()
    FindingStore(a.root).record(crash(), provenance="seed:x.py", parent=None, elapsed=1.0)
    keep(a, peer, 1, {1})
    now = [0.0]
    lane = SyncLane(Sync(b, every=60.0, clock=lambda: now[0]))
    fuzzer = Fuzzer(corpus=Corpus(), coverage=CoverageMap(), mutator=Mutator(all_operators()),
                    schedule=UniformSchedule(), checker=None, filing=Filing(FindingStore(b.root)),  # type: ignore[arg-type]
                    campaign=b, lanes=[lane], rng=random.Random(0))
    lane.start(fuzzer)  # before the dry run: the signatures only
    assert fuzzer.store.known == {Signature.of(crash()): "a"} and not lane.sync.stats.rounds
    taken = lambda: sorted(p.name for p in (b.root / "queue").glob("*sync:a*.py"))  # noqa: E731
    lane.poll(fuzzer)  # the loop's first turn
    assert taken() == ["id:000000,sync:a,src:000000.py"]
    keep(a, peer, 2, {2})
    now[0] = 30.0
    lane.poll(fuzzer)  # not yet --sync-every since
    assert len(taken()) == 1
    keep(a, peer, 3, {3})
    now[0] = 61.0
    lane.poll(fuzzer)
    assert len(taken()) == 3
    keep(a, peer, 4, {4})
    now[0] = 62.0
    lane.stop(fuzzer)
    assert len(taken()) == 4 and fuzzer.stats.synced == 4 and lane.sync.stats.rounds == 3
    assert lane.snapshot()["sync"]["imported"] == 4
    a.close()
    b.close()
