"""Repair and family L inside the fuzz loop, with real workers, the real openai client and a
scripted OpenAI-compatible server on loopback: repaired and LLM-made programs join the
queue, are counted by origin, and the loop never waits; the key reaches no file."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mutator.campaign.directory import Campaign, CampaignConfig
from mutator.judge.check import Checker
from mutator.campaign.corpus import Corpus, CoverageMap
from mutator.findings.store import FindingStore
from mutator.campaign.filing import Filing
from mutator.campaign.fuzzer import Budget, Fuzzer
from mutator.campaign.lanes.llm import LLM_FAMILY, LLMAnswers, LLMMutationLane
from mutator.campaign.lanes.repair import RepairLane
from mutator.llm import LLM, LLMConfig, extract_code
from mutator.llm.lane import LLMLane
from mutator.llm.rewrite import LLMMutation
from mutator.mutation.mutator import Mutator
from mutator.mutation.operator import Mutant, Step
from mutator.mutation.registry import all_operators
from mutator.core.program import Program
from mutator.repair.llm import LLMRepairer
from mutator.campaign.schedule import UniformSchedule

from tests.support.llm_server import MODEL, ScriptedServer, malformed, status, text

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-loop-test-key-9876543210"
SEED = textwrap.dedent("""\
    import torch


    def fn(x):
        return x + 1


    def inputs():
        return (torch.ones(2),)
    """)


class Breaking(Mutator):
    """Stands in for the operators: every mutant fails eagerly, in turn in a way a rule
    repairs (a module used without its import) and in one only the LLM can (an integer
    division by zero the operator inserted)."""

    remote = False  # its mutants are made here: the workers know only the registered operators

    def __init__(self) -> None:
        super().__init__(all_operators())
        self._turn = 0

    def mutate(self, program: Program, rng: random.Random, *, donor: Program | None = None) -> Mutant | None:
        self._turn += 1
        if "x + 1" not in program.source:
            return None
        # three different divisions, then the same again: their repairs come from the cache
        edit = "x + math.pi" if self._turn % 2 else f"x + (1 // 0) * {self._turn % 3}"
        mutant = Program.from_source(program.source.replace("x + 1", edit, 1), program.name)
        return Mutant(mutant, (Step("E2.fake_break", "fn:5"),))


def answer(body: dict) -> object:
    """Repairs divide by one; rewrites (family L) scale the input; the second repair asked
    gets a 500 and the third malformed JSON, so the loop meets failures too."""
    system, user = (m["content"] for m in body["messages"])
    if system.startswith("You repair"):
        answer.count += 1
        if answer.count in (2, 3):
            return status(500) if answer.count == 2 else malformed()
        return text("```python\n" + extract_code(user).replace("1 // 0", "1 // 1") + "```")
    return text("```python\n" + SEED.replace("x + 1", "x * 2 + 1") + "```")


answer.count = 0


def test_repaired_and_llm_made_programs_join_the_queue_and_are_counted(tmp_path: Path, pool):
    campaign = Campaign.create(tmp_path / "campaign", CampaignConfig(corpus=("test",)))
    with ScriptedServer(answer) as server:
        llm = LLM(LLMConfig(base_url=server.base_url, model=MODEL, api_key=KEY, max_retries=0),
                  campaign.root / "llm-cache")
        mutator = Breaking()
        mutator.add_family(LLM_FAMILY)
        answers = LLMAnswers(LLMLane(llm))
        fuzzer = Fuzzer(corpus=Corpus(), coverage=CoverageMap(), mutator=mutator, schedule=UniformSchedule(),
                        checker=Checker(pool), filing=Filing(FindingStore(campaign.root)), campaign=campaign,
                        lanes=[RepairLane(llm=answers, repairer=LLMRepairer(llm)),
                               LLMMutationLane(answers, LLMMutation(llm))],
                        rng=random.Random(3), inflight=2)
        fuzzer.seed([Program.from_source(SEED, "seed.py")])
        fuzzer.run(Budget(max_execs=40))
        fuzzer.stop()
    campaign.close()
    origins = fuzzer.stats.origins
    assert fuzzer.stats.execs == 41  # the loop kept its pace: the seed and 40 checks
    assert origins["rule.define_name"]["made"] >= 3 and origins["rule.define_name"]["valid"] >= 3, origins
    assert origins["llm"]["asked"] >= 3 and origins["llm"]["valid"] >= 1, origins
    assert origins[LLM_FAMILY]["asked"] >= 1 and origins[LLM_FAMILY]["valid"] >= 1, origins
    assert fuzzer.stats.repair_tried >= 10
    stats = json.loads((campaign.root / "stats.json").read_text())
    llm_stats = stats["snapshot"]["llm"]
    assert stats["counters"]["origins"] == origins
    assert llm_stats["cache_hits"] >= 1  # the same invalid mutant again: its repair is not paid twice
    assert llm_stats["calls"] + llm_stats["cache_hits"] >= 4 and llm_stats["failures"]
    assert stats["operators"]["L.rewrite"]["valid"] >= 1  # family L is measured like any family
    assert LLM_FAMILY in stats["family_yield"]
    invalid = campaign.load_invalid()
    assert {row["type"] for row in invalid} == {"NameError", "ZeroDivisionError"}
    assert all(KEY not in p.read_text(errors="replace") for p in campaign.root.rglob("*") if p.is_file())


def cli_fuzz(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), "fuzz", "--no-ui", "-j", "2", "--no-reduce", *args],
                          capture_output=True, text=True, timeout=900, cwd=ROOT, env={**clean, **env})


@pytest.mark.soak  # two campaigns: 24 s
def test_mutate_fuzz_with_and_without_an_endpoint(tmp_path: Path):
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    (seeds / "seed.py").write_text(SEED)
    plain = cli_fuzz("--corpus", str(seeds), "--out", str(tmp_path / "plain"), "--max-execs", "6", env={})
    assert plain.returncode == 0, plain.stderr[-2000:]
    assert plain.stderr.count("LLM repair and family L are off") == 1
    assert "llm" not in json.loads((tmp_path / "plain" / "stats.json").read_text())["snapshot"] or \
        json.loads((tmp_path / "plain" / "stats.json").read_text())["snapshot"]["llm"] is None

    rewrite = text("```python\n" + SEED.replace("x + 1", "x * 3 + 1") + "```")
    with ScriptedServer([rewrite]) as server:
        out = tmp_path / "with-llm"
        proc = cli_fuzz("--corpus", str(seeds), "--out", str(out), "--max-execs", "30", "--llm-model", "local-coder",
                        env={"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": KEY})
        asked = len(server.chat_requests)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert re.search(r"LLM: local-coder at http://127\.0\.0\.1:\d+/v1", proc.stderr)
    config = json.loads((out / "campaign.json").read_text())
    assert config["llm"]["model"] == "local-coder" and "api_key" not in json.dumps(config)
    stats = json.loads((out / "stats.json").read_text())
    # the endpoint is tried at once; a request the session sent after its last save, or
    # counted and not sent when it ended, makes the two counts differ by what was in flight
    assert asked >= 1 and stats["snapshot"]["llm"]["calls"] >= 1
    assert stats["counters"]["origins"]["L"]["asked"] >= 1
    assert "LLM mutants (family L)" in proc.stdout
    assert all(KEY not in p.read_text(errors="replace") for p in out.rglob("*") if p.is_file())
    assert KEY not in proc.stdout + proc.stderr


def test_a_campaign_goes_on_when_its_llm_endpoint_is_down(tmp_path: Path):
    """An endpoint nobody listens on: every check is still made, the failures are counted by
    kind, nothing else changes (slow answers and garbage inside the loop: the test above)."""
    import socket

    seeds = tmp_path / "seeds"
    seeds.mkdir()
    (seeds / "seed.py").write_text(SEED)
    out = tmp_path / "campaign"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: connections are refused
    proc = cli_fuzz("--corpus", str(seeds), "--out", str(out), "--time", "6s", "--llm-model", "local-coder",
                    env={"OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1", "OPENAI_API_KEY": KEY})
    assert proc.returncode == 0, proc.stderr[-2000:]
    stats = json.loads((out / "stats.json").read_text())
    failures = stats["snapshot"]["llm"]["failures"]
    assert stats["counters"]["execs"] >= 6 and stats["counters"]["origins"]["L"]["asked"] >= 1
    assert set(failures) == {"connection"}, failures
    assert "Traceback" not in proc.stderr
