"""`mutate generate` end to end: the real openai client against a scripted server, real workers.

Each of the seven requests gets a different scripted answer: a valid program, the same
program with one comment more (a duplicate by coverage), one that fails eagerly, prose,
one that already fails under torch.compile, a 500 and a body that is not JSON. Which
request gets which answer depends on arrival order, so the script maps each distinct
question to the next answer when it first arrives and gives it that answer ever after.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from mutator.core.program import load_program
from mutator.core.verdict import Verdict
from tests.support.llm_server import FAST_RETRY, MODEL, Reply, ScriptedServer, Text, malformed, status, text

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-test-secret-xyz"

VALID = '''\
"""E2: a KeyError raised by a dict lookup and caught inside the compiled function."""
import torch


def fn(x):
    table = {"a": 1.0}
    try:
        scale = table["b"]
    except KeyError:
        scale = 2.0
    return x * scale


def inputs():
    return (torch.arange(4.0),)
'''
DUPLICATE = VALID.replace("    try:\n", "    # the lookup misses on purpose\n    try:\n")
EAGER_FAILS = '''\
"""E2: shapes that do not broadcast, so eager raises."""
import torch


def fn(x):
    return x + torch.ones(5)


def inputs():
    return (torch.ones(4),)
'''
ALREADY_FAILING = '''\
"""E2: a branch only the compiled run takes."""
import torch


def fn(x):
    y = x * 2
    if torch.compiler.is_compiling():
        y = y + 1
    return y


def inputs():
    return (torch.ones(3),)
'''
ANSWERS: list[Reply] = [
    text(f"Here is a program:\n\n```python\n{VALID}```\n"),
    text(f"```python\n{DUPLICATE}```"),
    text(f"```python\n{EAGER_FAILS}```"),
    text("Exception handling in Dynamo is a broad topic; I would rather explain it in prose."),
    text(f"```python\n{ALREADY_FAILING}```"),
    status(500, headers=FAST_RETRY),
    malformed(),
]


class ByQuestion:
    """A server script that gives the k-th distinct question the k-th answer, every time it is asked."""

    def __init__(self, answers: list[Reply]) -> None:
        self.answers = answers
        self.assigned: dict[str, Reply] = {}
        self._lock = threading.Lock()

    def __call__(self, body: Any) -> Reply:
        question = json.dumps(body["messages"], sort_keys=True)
        with self._lock:
            if question not in self.assigned:
                self.assigned[question] = self.answers[len(self.assigned) % len(self.answers)]
            return self.assigned[question]


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), *args], capture_output=True, text=True,
                          timeout=900, cwd=ROOT, env=env)


def llm_env(base_url: str | None, key: str | None) -> dict[str, str]:
    """The test process's environment with OPENAI_* set (or removed) explicitly: the pool
    fixture puts a secret of its own in os.environ."""
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "MUTATOR_LLM_MODEL")}
    env["PYTHONPATH"] = str(ROOT)
    if base_url is not None:
        env["OPENAI_BASE_URL"] = base_url
    if key is not None:
        env["OPENAI_API_KEY"] = key
    return env


def questions(server: ScriptedServer) -> list[str]:
    return [json.dumps(body["messages"], sort_keys=True) for _, body in server.chat_requests]


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """Two identical `mutate generate` runs against one server: (out, first, second, server, script, asked)."""
    out = tmp_path_factory.mktemp("generated")
    script = ByQuestion(ANSWERS)
    with ScriptedServer(script) as server:
        env = llm_env(server.base_url, KEY)
        args = ("generate", "--family", "E2", "-n", "7", "--out", str(out), "--llm-model", MODEL, "--json",
                "-j", "2", "--timeout", "120")
        first = cli(*args, env=env)
        asked_first = questions(server)
        second = cli(*args, env=env)
        asked_second = questions(server)[len(asked_first):]
    return out, first, second, server, script, (asked_first, asked_second)


def test_every_answer_is_counted_where_it_belongs(generated):
    out, first, *_ = generated
    assert first.returncode == 0, first.stderr[-3000:]
    report = json.loads(first.stdout)
    assert (report["asked"], report["answered"], report["cached"]) == (7, 5, 0), report
    assert (report["valid"], report["duplicate"], report["no_code"], report["not_a_program"]) == (1, 1, 1, 0), report
    assert report["invalid"] == {"RuntimeError": 1} and report["unstable"] == 0, report
    assert report["llm_failures"] == {"server_error": 1, "bad_response": 1}, report
    assert report["tokens"] == 5 * 30  # the server's usage: 10 + 20 per answer
    assert report["family"] == "E2" and report["model"] == MODEL
    assert [Path(p).name for p in report["kept"]] == [p.name for p in out.glob("*.py")]


def test_the_kept_program_has_a_provenance_header_and_passes(generated, checker):
    out, first, *_ = generated
    [kept] = [Path(p) for p in json.loads(first.stdout)["kept"]]
    assert kept.name.startswith("E2_001_") and kept.parent == out
    lines = kept.read_text().splitlines()
    assert lines[0] == "# Generated by mutate generate: taxonomy class E2 (Exception handling)"
    assert lines[1].startswith(f"# model {MODEL}, 20") and "torch 2." in lines[1]
    assert "\n".join(lines[2:]) + "\n" in (VALID, DUPLICATE)
    sidecar = json.loads(kept.with_suffix(".json").read_text())
    assert sidecar["origin"] == "generate:E2" and sidecar["features"] and sidecar["model"] == MODEL
    assert checker.check(load_program(kept)).verdict is Verdict.PASS


def test_a_program_that_already_fails_is_filed_as_a_finding(generated):
    out, first, *_ = generated
    [failing] = json.loads(first.stdout)["already_failing"]
    assert failing["verdict"] == "MISMATCH", failing
    finding = Path(failing["finding"])
    assert finding.parent.parent == out and finding.parent.name == "findings"
    record = json.loads((finding / "finding.json").read_text())
    assert [hit["provenance"] for hit in record["history"]][0] == "generate:E2"
    assert "is_compiling" in (finding / "smallest.py").read_text()


def test_the_key_is_sent_to_the_server_and_written_nowhere(generated):
    out, first, second, server, *_ = generated
    assert all(headers["authorization"] == f"Bearer {KEY}" for headers, _ in server.chat_requests)
    files = [path for path in out.rglob("*") if path.is_file()]
    assert any(".llm-cache" in path.parts for path in files)  # the cache was written, and is checked too
    leaking = [str(path) for path in files if KEY.encode() in path.read_bytes()]
    assert leaking == []
    assert KEY not in first.stdout + first.stderr + second.stdout + second.stderr


def test_a_second_identical_run_asks_only_what_failed_before(generated):
    out, first, second, server, script, (asked_first, asked_second) = generated
    assert second.returncode == 0, second.stderr[-3000:]
    failed_before = {question for question, reply in script.assigned.items() if not isinstance(reply, Text)}
    assert len(set(asked_first)) == 7 and len(failed_before) == 2
    assert set(asked_second) == failed_before  # every answer came from the cache; only failures are asked again
    report = json.loads(second.stdout)
    assert (report["answered"], report["cached"], report["tokens"]) == (5, 5, 0), report
    assert report["valid"] == 0 and report["duplicate"] == 2  # both copies of the valid program are known now
    assert len(list(out.glob("*.py"))) == 1


MUL = '''\
"""A3: a user class whose __mul__ the compiled function calls."""
import torch


class Scale:
    def __init__(self, k):
        self.k = k

    def __mul__(self, x):
        return x * self.k


def fn(x):
    return Scale(3.0) * x


def inputs():
    return (torch.arange(3.0),)
'''


def test_from_findings_asks_for_siblings_of_the_campaigns_findings(generated, tmp_path):
    campaign, first, *_ = generated
    [failing] = json.loads(first.stdout)["already_failing"]
    out = tmp_path / "a3"
    with ScriptedServer([text(f"```python\n{MUL}```")]) as server:
        proc = cli("generate", "--family", "A3", "-n", "1", "--out", str(out), "--from-findings", str(campaign),
                   "--llm-model", MODEL, "-j", "2", env=llm_env(server.base_url, KEY))
        [(_, body)] = server.chat_requests
    assert proc.returncode == 0, proc.stderr[-3000:]
    prompt = body["messages"][1]["content"]
    assert "SIBLING" in prompt and "torch.compiler.is_compiling()" in prompt  # the finding's program is shown
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(f"mutate generate A3: 1 asked of {MODEL} at http://127.0.0.1:")
    assert lines[1] == f"  siblings of 1 findings of any class (none of {campaign} is attributed to A3)"
    assert lines[2] == "valid 1, invalid 0, duplicate 0, already failing 0, LLM failures 0, tokens 30"
    [kept] = out.glob("A3_001_*.py")
    assert kept.read_text().splitlines()[2] == f"# asked for siblings of the findings {failing['finding']}"
    assert json.loads(kept.with_suffix(".json").read_text())["siblings_of"] == [failing["finding"]]


def test_without_an_endpoint_it_exits_2_with_one_line(tmp_path):
    proc = cli("generate", "--family", "E2", "--out", str(tmp_path / "out"), env=llm_env(None, None))
    assert proc.returncode == 2, proc.stderr
    [line] = proc.stderr.strip().splitlines()
    assert "OPENAI_BASE_URL" in line and "OPENAI_API_KEY" in line
    assert not (tmp_path / "out").exists()


def test_an_unknown_family_exits_2_naming_the_valid_ones(tmp_path):
    proc = cli("generate", "--family", "Z9", "--out", str(tmp_path / "out"),
               env=llm_env("http://127.0.0.1:9/v1", KEY))
    assert proc.returncode == 2, proc.stderr
    [line] = proc.stderr.strip().splitlines()
    assert "Z9" in line and "A1" in line and "E2" in line and "G3" in line
