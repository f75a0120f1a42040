"""Dynamo's configurations with real workers and torch.

The fixtures (ours, tests/fixtures/configurations) pass under Dynamo's defaults and crash
under one configuration each on torch 2.15: a method bound by a descriptor of the program's
own under nested graph breaks, an f-string's float spec of a size under dynamic shapes, a
module counting its calls in its own buffer under forced graph breaks; and one computes a
wrong result under graph deduplication (two steps that differ only in a scalar). They
are judged with `mutate run --config`; a campaign sweeps the one under nested graph breaks,
files it with its configuration and reduces it to a reproducer that fails with plain python
and passes with the setting taken out. A configuration the torch lacks (a patched
interpreter whose Dynamo has no `nested_graph_breaks`) is a one-line error when asked for by
name and left out with a note otherwise. And a known bug whose crash site a patched torch
moved is known, not new, because the known programs are judged again on the torch under
test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.test_versions import make_torch

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "configurations"
NESTED = FIXTURES / "bound_method_descriptor.py"
DYNAMIC = FIXTURES / "format_spec_of_size.py"
PASSING = FIXTURES / "passing.py"
FORCED = FIXTURES / "inplace_buffer_count.py"
DEDUP = FIXTURES / "scaled_steps.py"

# Dynamo without a nested_graph_breaks setting, as an older (or a later) torch might be: the
# entry is gone from its configuration, and what Dynamo reads of it is a constant
WITHOUT_NESTED = '''
import torch._dynamo.config as config

del config._config["nested_graph_breaks"]
config.__dict__["nested_graph_breaks"] = False
'''
# The same bug, raised from another place in Dynamo: the f-string of a symbolic size is
# formatted by a function of torch/_dynamo/utils.py instead of lazy.py's __repr__, as a newer
# release might have moved it; and the torch says it is another release
MOVED_SITE = '''
import torch
import torch._dynamo.utils as utils
import torch._dynamo.variables.lazy as lazy

_SOURCE = """
def _moved_format(self):
    return str.format(self.fmt_var.as_python_constant(), str(self.sym_node_var.evaluate_expr()))
"""
_names = {}
exec(compile(_SOURCE, utils.__file__, "exec"), _names)
lazy.LazySymNodeFormatString.__repr__ = _names["_moved_format"]
torch.__version__ = torch.version.__version__ = "2.99.0"
'''


def mutate(*args: str, cache: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **({"MUTATOR_CACHE": str(cache)} if cache is not None else {})}
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), *args], capture_output=True, text=True,
                          timeout=1200, cwd=ROOT, env=env)


def verdicts(*args: str) -> dict[str, tuple[str, str]]:
    proc = mutate("run", "--json", "-j", "2", *args)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    return {Path(row["path"]).name: (row["verdict"], row["configuration"]) for row in json.loads(proc.stdout)}


@pytest.fixture(scope="module")
def torches(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("torches")
    return {"without": make_torch(root / "without", WITHOUT_NESTED), "moved": make_torch(root / "moved", MOVED_SITE)}


def test_each_fixture_passes_by_default_and_crashes_under_its_configuration():
    paths = (str(NESTED), str(DYNAMIC), str(FORCED))
    assert verdicts(*paths) == {NESTED.name: ("PASS", "default"), DYNAMIC.name: ("PASS", "default"),
                                FORCED.name: ("PASS", "default")}
    assert verdicts("--config", "nested-graph-breaks", *paths) == {
        NESTED.name: ("CRASH", "nested-graph-breaks"), DYNAMIC.name: ("PASS", "nested-graph-breaks"),
        FORCED.name: ("PASS", "nested-graph-breaks")}
    assert verdicts("--config", "dynamic", *paths) == {
        NESTED.name: ("PASS", "dynamic"), DYNAMIC.name: ("CRASH", "dynamic"), FORCED.name: ("PASS", "dynamic")}
    assert verdicts("--config", "forced-graph-breaks", str(FORCED)) == {FORCED.name: ("CRASH", "forced-graph-breaks")}
    assert verdicts(str(DEDUP), str(PASSING)) == {DEDUP.name: ("PASS", "default"), PASSING.name: ("PASS", "default")}
    assert verdicts("--config", "graph-dedup", str(DEDUP), str(PASSING)) == {
        DEDUP.name: ("MISMATCH", "graph-dedup"), PASSING.name: ("PASS", "graph-dedup")}


def test_a_bad_configuration_name_is_one_line_naming_the_known_ones(tmp_path: Path):
    for args in (("run", "--config", "nested", str(PASSING)),
                 ("fuzz", "--corpus", str(PASSING), "--out", str(tmp_path / "c"), "--configs", "default,nested")):
        proc = mutate(*args)
        assert proc.returncode == 2
        [line] = [line for line in proc.stderr.splitlines() if "nested" in line and "known ones" in line]
        assert all(name in line for name in ("default", "nested-graph-breaks", "dynamic", "scalar-outputs"))
    assert not (tmp_path / "c").exists()  # refused before anything is written


@pytest.mark.soak  # a patched interpreter's workers and a campaign: 25 s
def test_a_configuration_the_torch_lacks_is_an_error_by_name_and_left_out_otherwise(torches, tmp_path: Path):
    python = str(torches["without"])
    proc = mutate("run", "--python", python, "--config", "nested-graph-breaks", str(PASSING), "-j", "1")
    assert proc.returncode == 2
    [error] = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert "torch._dynamo.config.nested_graph_breaks" in error and "it has: default, dynamic, scalar-outputs" in error
    proc = mutate("fuzz", "--python", python, "--corpus", str(PASSING), "--out", str(tmp_path / "c"), "--no-ui",
                  "-j", "1", "--max-execs", "3", "--no-reduce")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "note: configuration nested-graph-breaks left out" in proc.stderr
    configurations = json.loads((tmp_path / "c" / "stats.json").read_text())["snapshot"]["configurations"]
    assert "nested-graph-breaks" not in configurations and "dynamic" in configurations


def test_a_wrong_result_under_graph_deduplication_reduces_to_a_repro_that_sets_it_and_needs_it(tmp_path: Path):
    program = tmp_path / DEDUP.name
    program.write_text(DEDUP.read_text())
    proc = mutate("reduce", "--config", "graph-dedup", str(program), "--out", str(tmp_path / "reduced.py"),
                  "--no-ablation", "--matters-budget", "1", "-j", "1", "--json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout)
    assert result["signature"].startswith("MISMATCH") and result["needs_configuration"] is True
    [repro] = [Path(path).read_text() for path in result["written"] if path.endswith("repro.py")]
    assert "torch._dynamo.config.use_graph_deduplication = True" in repro
    (tmp_path / "repro.py").write_text(repro)
    plain = subprocess.run([sys.executable, "repro.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert plain.returncode == 1 and "not close" in plain.stderr, plain.stdout + plain.stderr
    (tmp_path / "without.py").write_text(repro.replace("torch._dynamo.config.use_graph_deduplication = True\n", ""))
    without = subprocess.run([sys.executable, "without.py"], cwd=tmp_path, capture_output=True, text=True,
                             timeout=300)
    assert without.returncode == 0, without.stdout + without.stderr


@pytest.mark.soak  # a campaign, a reduction, its repro run twice: 45 s
def test_a_campaign_files_a_bug_of_one_configuration_with_it_and_its_reproducer_sets_it(tmp_path: Path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for path in (NESTED, PASSING):
        (corpus / path.name).write_text(path.read_text())
    out = tmp_path / "campaign"
    proc = mutate("fuzz", "--corpus", str(corpus), "--out", str(out), "--no-ui", "-j", "2", "--max-execs", "6",
                  "--no-reduce", "--configs", "default,nested-graph-breaks", "--seed", "1")
    assert proc.returncode == 0, proc.stderr[-2000:]
    [record] = [json.loads(p.read_text()) for p in out.glob("findings/crash-IndexError*/finding.json")]
    assert record["configuration"] == "nested-graph-breaks" and set(record["configurations"]) == {"nested-graph-breaks"}
    assert record["history"][0]["provenance"].startswith("sweep:nested-graph-breaks:")  # the seed, swept
    directory = out / record["directory"]
    proc = mutate("reduce", str(directory), "--no-ablation", "--matters-budget", "4", "-j", "2", "--json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    reduction = json.loads((directory / "finding.json").read_text())["reduction"]
    assert reduction["configuration"] == "nested-graph-breaks" and reduction["needs_configuration"] is True
    assert any("nested_graph_breaks = True" in construct for construct in reduction["matters"]["needed"])
    repro = (directory / "repro.py").read_text()
    assert "torch._dynamo.config.nested_graph_breaks = True" in repro and "off by default" in repro
    plain = subprocess.run([sys.executable, "repro.py"], cwd=directory, capture_output=True, text=True, timeout=300)
    assert plain.returncode == 1, plain.stdout + plain.stderr
    (tmp_path / "without.py").write_text(repro.replace("torch._dynamo.config.nested_graph_breaks = True\n", ""))
    without = subprocess.run([sys.executable, str(tmp_path / "without.py")], cwd=directory, capture_output=True,
                             text=True, timeout=300)
    assert without.returncode == 0, without.stdout + without.stderr
    report = (directory / "README.md").read_text()
    assert "smallest.py fails under `nested-graph-breaks`" in report


@pytest.mark.soak  # two campaigns on two interpreters: 40 s
def test_a_known_bug_whose_crash_site_moved_is_known_on_the_torch_it_moved_on(torches, tmp_path: Path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for path in (DYNAMIC, PASSING):
        (corpus / path.name).write_text(path.read_text())
    common = ("--corpus", str(corpus), "--no-ui", "-j", "1", "--max-execs", "2", "--no-reduce", "--configs", "dynamic")
    earlier = tmp_path / "earlier"
    assert mutate("fuzz", *common, "--out", str(earlier), cache=tmp_path / "cache").returncode == 0
    [filed] = [json.loads(p.read_text())["signature"] for p in earlier.glob("findings/*/finding.json")]
    assert filed["location"] == "torch/_dynamo/variables/lazy.py:__repr__"
    moved = ("--python", str(torches["moved"]), "--known", str(earlier))
    proc = mutate("fuzz", *common, *moved, "--out", str(tmp_path / "now"), cache=tmp_path / "cache")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "show 1 signatures they were not filed under" in proc.stderr
    assert not list((tmp_path / "now").glob("findings/*/finding.json"))  # known: counted, not filed
    [row] = json.loads((tmp_path / "now" / "known.json").read_text())["signatures"]
    assert row["signature"]["location"] == "torch/_dynamo/utils.py:_moved_format" and row["hits"] >= 1
    # without judging the known programs on this torch, the moved crash looks new
    proc = mutate("fuzz", *common, *moved, "--no-rejudge-known", "--out", str(tmp_path / "blind"),
                  cache=tmp_path / "cache")
    assert proc.returncode == 0, proc.stderr[-2000:]
    [record] = [json.loads(p.read_text()) for p in (tmp_path / "blind").glob("findings/*/finding.json")]
    assert record["signature"]["location"] == "torch/_dynamo/utils.py:_moved_format" and not record.get("known")
