"""`--known` end to end: a second campaign over the first's directory files no finding the
first already had (it counts their hits in known.json), and `mutate report --known` marks
what was filed before. Real workers, two short campaigns (about a minute)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
SEEDS = ["others/format_and_mappingproxy.py",  # a MISMATCH as it is: filed by the dry run
         "E2_exceptions/attribute_access_try.py", "E3_closures/nonlocal_shared_cells.py"]


def mutate(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), *args], capture_output=True, text=True,
                          timeout=600, cwd=ROOT)


def signatures(campaign: Path) -> dict[str, dict]:
    return {p.parent.name: json.loads(p.read_text())["signature"] for p in campaign.glob("*/*/finding.json")}


@pytest.mark.soak  # two campaigns: 35 s
def test_a_second_campaign_files_nothing_the_first_had(tmp_path: Path):
    corpus = tmp_path / "seeds"
    for rel in SEEDS:
        (corpus / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / "seeds" / rel, corpus / rel)
    first, second = tmp_path / "first", tmp_path / "second"
    options = ("--no-ui", "-j", "2", "--no-reduce", "--no-llm", "--corpus", str(corpus), "--max-execs", "12")
    done = mutate("fuzz", *options, "--out", str(first))
    assert done.returncode == 0, done.stderr
    filed = signatures(first)
    assert any(s["kind"] == "MISMATCH" for s in filed.values()), filed

    done = mutate("fuzz", *options, "--out", str(second), "--known", str(first))
    assert done.returncode == 0, done.stderr
    assert f"from {first}" in done.stderr and "known:" in done.stdout
    again = signatures(second)
    assert not [s for s in again.values() if s in filed.values()], "a finding of the first campaign filed as new"
    known = json.loads((second / "known.json").read_text())
    assert known["sources"] == [str(first)] and sum(row["hits"] for row in known["signatures"]) >= 1
    assert all(row["signature"] in filed.values() for row in known["signatures"])
    counters = json.loads((second / "stats.json").read_text())
    assert counters["counters"]["known"] == sum(row["hits"] for row in known["signatures"])
    assert counters["snapshot"]["findings"] == len(again)

    # the report: the first's findings, against a copy of its findings folder (filed elsewhere), are
    # all known; what the second filed is new (no report needed: none of its signatures is known)
    shutil.copytree(first / "findings", tmp_path / "filed")
    report = mutate("report", "--no-ablation", "--json", str(first), "--known", str(tmp_path / "filed"))
    assert report.returncode == 0, report.stderr
    rows = json.loads(report.stdout)
    assert rows and all(row["known"].endswith("(same signature)") for row in rows)
    assert all("Known: filed before in" in Path(row["report"]).read_text() for row in rows)
