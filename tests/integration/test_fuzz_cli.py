"""`mutate fuzz` as a user runs it: fill a campaign, resume it (over spoilt files), stop it.
(Surviving SIGKILL, again and again: tests/integration/test_soak.py.)"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
SEEDS = ROOT / "seeds"
SMALL_CORPUS = [
    "E2_exceptions/attribute_access_try.py",
    "C_iterators/map_filter_zip_enumerate.py",
    "F1_attribute_updates/step_counter_module.py",
    "G1_value_guards/changing_scalar_args.py",
    "E3_closures/nonlocal_shared_cells.py",
    "others/format_and_mappingproxy.py",  # a known finding: set aside, filed at once
]


@pytest.fixture()
def small_corpus(tmp_path: Path) -> Path:
    corpus = tmp_path / "seeds"
    for rel in SMALL_CORPUS:
        (corpus / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(SEEDS / rel, corpus / rel)
    return corpus


def fuzz(*args: str, **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), "fuzz", "--no-ui", "-j", "2", *args],
                          capture_output=True, text=True, timeout=900, cwd=ROOT, **kwargs)


def counters(out: Path) -> dict:
    return json.loads((out / "stats.json").read_text())["counters"]


def finding_hits(out: Path) -> dict[str, int]:
    return {p.parent.name: json.loads(p.read_text())["hits"] for p in out.glob("*/*/finding.json")}


def queue_ids(out: Path) -> set[str]:
    return {p.stem for p in (out / "queue").glob("*.json")}


@pytest.mark.soak  # two campaigns, the second resuming the first: 50 s
def test_fills_the_campaign_and_resumes_where_it_stopped(small_corpus: Path, tmp_path: Path):
    out = tmp_path / "campaign"
    # reduction has tests of its own (tests/integration/test_reduce.py); here it would only
    # take a quarter of the workers
    # the package index (a file standing in for PyPI's JSON API) lists a newer torch: said, once a day
    index = tmp_path / "torch.json"
    index.write_text(json.dumps({"releases": {"2.99.0": [{"python_version": f"cp{sys.version_info[0]}"
                                                                            f"{sys.version_info[1]}",
                                                          "upload_time": "2026-12-01T09:00:00"}]}}))
    offline = {**os.environ, "MUTATOR_TORCH_INDEX": index.as_uri(), "MUTATOR_CACHE": str(tmp_path / "cache")}
    first = fuzz("--corpus", str(small_corpus), "--out", str(out), "--max-execs", "24", "--no-reduce",
                 "--max-stack", "2", env=offline)
    assert first.returncode == 0, first.stderr
    [newer] = [line for line in first.stderr.splitlines() if line.startswith("note: torch 2.99.0 is out")]
    assert "MUTATE_TORCH=2.99.0 ./mutate fuzz" in newer
    assert counters(out)["execs"] == 24
    # where the CPU went, by stage, as the workers and the loop measured it (bench/profile.py reads it)
    cpu = json.loads((out / "stats.json").read_text())["cpu"]
    for line in ("check: eager run", "check: compiled run: Dynamo compiling (with coverage tracing)",
                 "check: isolation (fork, sandbox, report)", "workers: warm-up (import torch, warm Dynamo)",
                 "check: runs' report and exit (a forked child's copy of the worker torn down)",
                 "driver: process replies (merge, file, keep, learn)"):
        assert cpu.get(line, 0) > 0, (line, cpu)
    config = json.loads((out / "campaign.json").read_text())
    assert config["corpus"] == [str(small_corpus)] and config["backend"] == "eager" and config["max_stack"] == 2
    # no --seed: one from the clock, said and kept
    assert f"seed: {config['seed']} (from the clock; --seed {config['seed']} starts" in first.stderr
    queue = queue_ids(out)
    assert any(",orig:" in q for q in queue) and all((out / "queue" / f"{q}.py").exists() for q in queue)
    sidecar = json.loads(next((out / "queue").glob("id:000000*.json")).read_text())
    assert sidecar["features"] and sidecar["provenance"]
    # the set-aside seed is filed at once; mutants may file further findings beside it
    known_source = (small_corpus / SMALL_CORPUS[-1]).read_text()
    [known] = [d for d in (out / "findings").iterdir() if (d / "first.py").read_text() == known_source]
    assert "mismatch" in known.name
    assert {p.name for p in known.iterdir()} >= {"first.py", "smallest.py", "finding.json", "README.md"}
    assert json.loads((out / "set_aside.json").read_text())[0]["verdict"] == "MISMATCH"
    assert len((out / "plot_data.csv").read_text().splitlines()) >= 2
    hits = finding_hits(out)

    refused = fuzz("--corpus", str(small_corpus), "--out", str(out), "--max-execs", "5")
    assert refused.returncode == 2 and "--resume" in refused.stderr

    changed = fuzz("--out", str(out), "--resume", "--backend", "aot_eager", "--max-execs", "5")
    assert changed.returncode == 2 and "keeps the settings" in changed.stderr
    deeper = fuzz("--out", str(out), "--resume", "--max-stack", "4", "--max-execs", "5")
    assert deeper.returncode == 2 and "--max-stack" in deeper.stderr

    second = fuzz("--corpus", str(small_corpus), "--out", str(out), "--max-execs", "12", "--resume", "--no-reduce",
                  env=offline)
    assert second.returncode == 0, second.stderr
    assert "is out" not in second.stderr  # said today already
    after = counters(out)
    assert after["execs"] == 36 and after["sessions"] == 2
    assert json.loads((out / "campaign.json").read_text())["seed"] == config["seed"]
    assert queue_ids(out) >= queue
    assert all(finding_hits(out)[name] >= n for name, n in hits.items())
    assert after["kept"] == len(queue_ids(out))

    # a disk fault (or a hand) spoils files of each kind: --resume sets aside what it cannot
    # read, says so, never touches a finding's directory, and no counter goes backwards
    sidecar = sorted((out / "queue").glob("id:*.json"))[-1]
    sidecar.write_text(sidecar.read_text()[:40])
    spoilt = known / "finding.json"
    spoilt.write_text("{\"signature\": ")
    (out / "stats.json").write_text((out / "stats.json").read_text()[:100])
    (out / "coverage.bin").write_bytes((out / "coverage.bin").read_bytes()[:-3])
    third = fuzz("--out", str(out), "--resume", "--max-execs", "4", "--no-reduce")
    assert third.returncode == 0, third.stderr
    warnings = [line for line in third.stderr.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 4, warnings
    for name in (sidecar.with_suffix(".py").name, str(spoilt), "stats.json", "coverage.bin"):
        assert any(name in w for w in warnings), (name, warnings)
    assert sorted(p.name for p in (out / "corrupt").iterdir()) == sorted(
        [sidecar.name, sidecar.with_suffix(".py").name, "stats.json", "coverage.bin"])
    assert spoilt.read_text() == "{\"signature\": " and (known / "first.py").read_text() == known_source
    final = counters(out)
    assert final["execs"] >= after["execs"] + 4 and final["kept"] == len(queue_ids(out))
    json.loads((out / "stats.json").read_text())


def wait_until(proc: subprocess.Popen, ready, log: Path | None = None, timeout: float = 600) -> None:
    """Poll the campaign until `ready()`; fail at once, with the fuzzer's stderr, if it exits first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        time.sleep(1)
        if proc.poll() is not None:
            stderr = log.read_text() if log else proc.stderr.read()
            pytest.fail(f"mutate fuzz exited early with status {proc.returncode}:\n{stderr[-3000:]}")
        try:
            if ready():
                return
        except (FileNotFoundError, json.JSONDecodeError, KeyError):
            continue
    pytest.fail(f"the campaign did not get there within {timeout:.0f} s")


def test_ctrl_c_finishes_the_programs_in_flight_and_prints_a_summary(small_corpus: Path, tmp_path: Path):
    out = tmp_path / "campaign"
    proc = subprocess.Popen([sys.executable, str(ROOT / "cli.py"), "fuzz", "--no-ui", "-j", "2", "--corpus",
                             str(small_corpus), "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    wait_until(proc, lambda: counters(out)["execs"] >= 8)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    assert "stopping: finishing the programs in flight" in stderr
    assert "execs" in stdout and str(out / "findings") in stdout
    assert counters(out)["execs"] >= 8


def test_a_program_that_kills_its_worker_is_kept_in_lost(tmp_path: Path):
    corpus = tmp_path / "seeds"
    corpus.mkdir()
    (corpus / "killer.py").write_text(
        "import os, signal\nimport torch\ndef fn(x):\n    return x + 1\n"
        "def inputs():\n    os.kill(os.getppid(), signal.SIGKILL)\n    return (torch.ones(2),)\n")
    shutil.copy(SEEDS / SMALL_CORPUS[1], corpus / "ok.py")
    out = tmp_path / "campaign"
    result = fuzz("--corpus", str(corpus), "--out", str(out), "--max-execs", "4", "--no-sandbox")  # or no signal
    assert result.returncode == 0, result.stderr
    [lost] = (out / "lost").glob("*.py")
    assert "os.kill(os.getppid()" in lost.read_text()
    assert "worker died" in json.loads(lost.with_suffix(".json").read_text())["detail"]
    assert counters(out)["lost"] == 1
