"""LLM repair against the scripted server, through the real openai client: each kind of
answer gives its documented result, and none raises."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from mutator.llm import LLM, LLMConfig
from mutator.mutation.operator import Mutant, Step
from mutator.core.program import Program
from mutator.repair import NotRepaired, Repaired, RepairRequest
from mutator.repair.llm import LLMRepairer, repair_messages
from mutator.core.values import ExceptionInfo, FrameInfo

from tests.support.llm_server import FAST_RETRY, MODEL, ScriptedServer, huge, malformed, slow, status, text

KEY = "sk-repair-test-key-0123456789"
NAME = "mutant_of_000003.py"
PARENT = textwrap.dedent("""\
    import torch


    def fn(x):
        return x + 1


    def inputs():
        return (torch.ones(2),)
    """)
# the operator wrapped the addition in a try whose handler divides by zero eagerly
MUTANT = PARENT.replace("    return x + 1\n", "    try:\n        y = x + 1\n    except ValueError:\n        y = x\n"
                                               "    return y / 0 + torch.zeros(2)\n")
FIXED = MUTANT.replace("y / 0 + torch.zeros(2)", "y / 1 + torch.zeros(2)")


def request() -> RepairRequest:
    program = Program.from_source(MUTANT, NAME)
    error = ExceptionInfo("ZeroDivisionError", ("ZeroDivisionError", "ArithmeticError", "Exception"),
                          "division by zero", (FrameInfo(NAME, 10, "fn"),))
    return RepairRequest(program, Mutant(program, (Step("E2.wrap_in_try", "fn:5"),)),
                         Program.from_source(PARENT, "seed.py"), error, "raised")


def repair(tmp_path: Path, *script, **config) -> tuple[object, ScriptedServer]:
    with ScriptedServer(list(script)) as server:
        llm = LLM(LLMConfig(base_url=server.base_url, model=MODEL, api_key=KEY, **config), tmp_path / "cache")
        result = LLMRepairer(llm).repair(request())
    return result, server


def fenced(source: str) -> str:
    return f"Here is the fix:\n```python\n{source}```\n"


def test_a_correct_repair_is_a_repaired_program_carrying_its_provenance(tmp_path: Path):
    result, server = repair(tmp_path, text(fenced(FIXED)))
    assert isinstance(result, Repaired) and result.how == "llm" and result.program.source == FIXED
    assert str(result.step) == "repair:llm"
    [(headers, body)] = server.chat_requests
    prompt = body["messages"][1]["content"]
    assert "ZeroDivisionError: division by zero at line 10" in prompt and "E2.wrap_in_try" in prompt
    assert "   5:     try:" in prompt  # the lines the operator changed


def test_a_repair_that_removes_the_inserted_construct_is_refused(tmp_path: Path):
    result, _ = repair(tmp_path, text(fenced(PARENT)))
    assert isinstance(result, NotRepaired) and "removed what the operator inserted" in result.reason
    assert "ExceptHandler" in result.reason


@pytest.mark.parametrize("script, reason", [
    ((text("The problem is the division by zero; divide by one instead."),), "no code block"),
    ((malformed(),), "llm: bad_response"),
    ((status(500, headers=FAST_RETRY),), "llm: server_error"),
    ((huge(50_000),), "llm: too_long"),
    ((text(fenced("def broken(:\n    pass\n")),), "not a program"),
])
def test_bad_answers_are_not_repaired_with_a_reason(tmp_path: Path, script, reason):
    result, _ = repair(tmp_path, *script, max_retries=1)
    assert isinstance(result, NotRepaired) and reason in result.reason, result


def test_a_429_then_an_answer_is_repaired_and_a_slow_answer_times_out(tmp_path: Path):
    result, server = repair(tmp_path, status(429, headers=FAST_RETRY), text(fenced(FIXED)))
    assert isinstance(result, Repaired) and len(server.chat_requests) == 2
    result, _ = repair(tmp_path / "slow", slow(30.0, text(fenced(FIXED))), timeout=0.5, max_retries=0)
    assert isinstance(result, NotRepaired) and "llm: timeout" in result.reason


def test_the_prompt_carries_what_the_operator_meant():
    [system, user] = repair_messages(request())
    assert "keep every construct the" in system["content"] and "`fn`, `inputs`" in system["content"]
    assert "```python\n" + MUTANT in user["content"]
