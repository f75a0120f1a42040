"""The fuzzer finds a bug class from a seed within a small budget, and files it once."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from mutator.campaign.directory import Campaign, CampaignConfig
from mutator.judge.check import Checker
from mutator.campaign.corpus import Corpus, CoverageMap
from mutator.findings.store import FindingStore
from mutator.campaign.filing import Filing
from mutator.campaign.fuzzer import Budget, Fuzzer
from mutator.campaign.lanes.repair import RepairLane
from mutator.mutation.mutator import Mutator
from mutator.mutation.operators.structure import InsertGraphBreak
from mutator.core.observation import RunConfig
from mutator.exec.pool import WorkerPool
from mutator.core.program import Program
from mutator.campaign.schedule import FastSchedule
from mutator.core.verdict import Verdict

pytestmark = pytest.mark.quality

# A backend of the test's own that miscompiles every graph after the first one: the seed
# compiles to a single graph and passes; one inserted graph break splits it and the
# second graph's outputs come back wrong. The count lives on the function (not a
# global), so the seed itself shows no divergence.
SEED = '''
import torch


def splitting_sensitive_backend(gm, example_inputs):
    splitting_sensitive_backend.graphs = getattr(splitting_sensitive_backend, "graphs", 0) + 1
    if splitting_sensitive_backend.graphs == 1:
        return gm.forward

    def wrong(*args):
        return [out + 1 if isinstance(out, torch.Tensor) else out for out in gm.forward(*args)]

    return wrong


COMPILE_KWARGS = {"backend": splitting_sensitive_backend}


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        h = self.lin(x)
        h = torch.relu(h)
        h = h * 2.0
        h = h - x
        return h.sum(dim=0)


fn = Block()


def inputs():
    return (torch.randn(3, 4),)
'''


def test_one_mutation_away_from_a_divergence_gives_one_finding_with_many_hits(tmp_path: Path):
    seed = Program.from_source(SEED.lstrip(), "splitting.py")
    campaign = Campaign.create(tmp_path / "campaign", CampaignConfig(corpus=("test",)))
    with WorkerPool(workers=2, config=RunConfig(timeout=60), coverage=("torch/_dynamo",)) as pool:
        fuzzer = Fuzzer(corpus=Corpus(), coverage=CoverageMap(), mutator=Mutator([InsertGraphBreak]),
                        schedule=FastSchedule(), checker=Checker(pool), filing=Filing(FindingStore(campaign.root)),
                        campaign=campaign, lanes=[RepairLane()], rng=random.Random(1), inflight=4)
        fuzzer.seed([seed])
        assert len(fuzzer.corpus) == 1, fuzzer.set_aside  # the seed itself passes
        fuzzer.run(Budget(max_execs=16))
    campaign.close()
    assert len(fuzzer.store.findings) == 1
    [finding] = fuzzer.store.findings.values()
    assert finding.signature.kind == Verdict.MISMATCH.name and finding.signature.observation.startswith("result")
    assert finding.hits >= 5
    directory = campaign.root / finding.directory
    assert "torch._dynamo.graph_break()" in (directory / "smallest.py").read_text()
    assert len(list((campaign.root / "findings").iterdir())) == 1
