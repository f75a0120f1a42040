"""Two instances of one campaign on one sync directory, AFL style, through the command line:
the second takes the first's entries that add features (named `sync:`), knows its findings
(not filed as new), and `mutate report` over both shows each signature once; two started
together, for less than --sync-every, still take each other's entries."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mutator.campaign.directory import chosen_seed

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
PASSING = """
    import torch
    def fn(x):
        y = x.sin() + 1
        return y * 2
    def inputs():
        return (torch.ones(3),)
"""
FAILING = """
    import torch
    def fn(x):
        if torch.compiler.is_compiling():  # a divergence on purpose: only the compiled run adds
            return x + 1
        return x * 1
    def inputs():
        return (torch.ones(3),)
"""


LOOPING = """
    import torch
    def fn(x, n):
        total = x
        for i in range(n):
            total = total + i
        return total.cos()
    def inputs():
        return (torch.ones(2), 3)
"""


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), *args], capture_output=True, text=True,
                          timeout=900, cwd=ROOT, env=env)


def start(*args: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    return subprocess.Popen([sys.executable, str(ROOT / "cli.py"), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env)


def seed_finding(campaign: Path) -> dict:
    """The finding the failing seed hit in the dry run (its mutants may find others)."""
    records = [json.loads(p.read_text()) for p in (campaign / "findings").glob("*/finding.json")]
    [record] = [r for r in records if r["history"][0]["provenance"].endswith("failing.py")]
    return record


@pytest.mark.soak  # two campaigns synced: 27 s
def test_two_synced_instances_share_entries_and_findings(tmp_path: Path):
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    (seeds / "passing.py").write_text(textwrap.dedent(PASSING).lstrip())
    (seeds / "failing.py").write_text(textwrap.dedent(FAILING).lstrip())
    sync = tmp_path / "sync"
    common = ("--sync-dir", str(sync), "--corpus", str(seeds), "--no-ui", "--no-reduce", "-j", "2")
    first = cli("fuzz", "--name", "a", "--max-execs", "14", *common)
    assert first.returncode == 0, first.stderr[-3000:]
    found = seed_finding(sync / "a")
    assert found["signature"]["kind"] == "MISMATCH" and not found["known_from"]
    a_entries = sorted((sync / "a" / "queue").glob("id:*.json"))
    assert len(a_entries) >= 2, "the first instance kept mutants"

    second = cli("fuzz", "--name", "b", "--max-execs", "4", "--sync-every", "1s", *common)
    assert second.returncode == 0, second.stderr[-3000:]
    b = sync / "b"
    synced = sorted((b / "queue").glob("id:*,sync:a,src:*.py"))
    assert synced, sorted(p.name for p in (b / "queue").iterdir())
    peer_id = int(synced[0].name.split("src:")[1][:6])
    original = next(p for p in (sync / "a" / "queue").glob(f"id:{peer_id:06d},*.py"))
    assert synced[0].read_text() == original.read_text()
    assert json.loads(synced[0].with_suffix(".json").read_text())["provenance"] == f"sync:a:{peer_id:06d}"
    again = seed_finding(b)
    assert again["signature"] == found["signature"] and again["known_from"] == "a"  # filed, but not as new
    stats = json.loads((b / "stats.json").read_text())
    known = [json.loads(p.read_text()) for p in (b / "findings").glob("*/finding.json")]
    assert stats["snapshot"]["known_from_peers"] == sum(1 for f in known if f["known_from"]) >= 1
    assert stats["snapshot"]["findings"] == sum(1 for f in known if not f["known_from"])
    assert stats["snapshot"]["sync"]["imported"] == len(synced)
    assert "sync:" in second.stdout and "entries taken from peers" in second.stdout

    report = cli("report", str(sync / "a"), str(b), "--json", "--no-ablation")
    assert report.returncode == 0, report.stderr[-3000:]
    rows = json.loads(report.stdout)
    assert len({row["signature"] for row in rows}) == len(rows)  # each signature once
    [row] = [row for row in rows if row["directory"] == found["directory"]]
    assert row["campaign"] == str(sync / "a") and row["also_in"] == [str(b / again["directory"])]
    assert row["hits"] == found["hits"] + again["hits"]


@pytest.mark.soak  # two whole campaigns side by side until each took the other's entries
def test_two_instances_started_together_take_each_others_entries(tmp_path: Path):
    """Both finish within --sync-every (the default, two minutes): each looks at the other
    after its dry run, when it is still at its seeds, and once more before it stops. Started
    without --seed, each takes its seed from its name, so they do not repeat each other: with
    one seed (--seed 0 for both) 35 of the 52 mutants each kept were the other's too, here
    none were."""
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    (seeds / "passing.py").write_text(textwrap.dedent(PASSING).lstrip())
    (seeds / "looping.py").write_text(textwrap.dedent(LOOPING).lstrip())
    sync = tmp_path / "sync"
    instances = [start("fuzz", "--name", name, "--max-execs", "80", "--sync-dir", str(sync),
                       "--corpus", str(seeds), "--no-ui", "--no-reduce", "-j", "1")
                 for name in ("a", "b")]
    for proc in instances:
        out, err = proc.communicate(timeout=900)
        assert proc.returncode == 0, err[-3000:]
    for name, peer in (("a", "b"), ("b", "a")):
        taken = sorted((sync / name / "queue").glob(f"id:*,sync:{peer},src:*.py"))
        assert taken, f"{name} took nothing from {peer}: {sorted(p.name for p in (sync / name / 'queue').iterdir())}"
        sync_stats = json.loads((sync / name / "stats.json").read_text())["snapshot"]["sync"]
        assert sync_stats["rounds"] >= 2 and sync_stats["imported"] == len(taken)
        assert json.loads((sync / name / "campaign.json").read_text())["seed"] == chosen_seed(name)
    own = [{p.read_text() for p in (sync / name / "queue").glob("id:*,src:*.py") if ",sync:" not in p.name}
           for name in ("a", "b")]
    assert len(own[0] & own[1]) < min(map(len, own)) // 4, "the two instances made the same mutants"
