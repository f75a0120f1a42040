"""The LLM client against a scripted server, through the real openai SDK and real HTTP.

Retry tests ask for tiny server-directed waits (retry-after-ms) so that the SDK's own
backoff is exercised without slowing the suite down.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path

import openai
import pytest

from mutator.llm import LLM, Answer, Failure, LLMConfig, extract_code
from mutator.llm.client import cache_key
from mutator.llm.config import NO_KEY
from tests.support.llm_server import (FAST_RETRY, MODEL, ScriptedServer, huge, malformed, raw_json, slow, status,
                                      text)

KEY = "sk-scripted-test-key-4f9c2a71"
CODE_ANSWER = "Here is the program:\n\n```python\nimport torch\nx = torch.ones(3)\n```\n"
ASK = [{"role": "system", "content": "You write Python."}, {"role": "user", "content": "A program, please."}]


def llm_for(server: ScriptedServer, cache_dir: Path | None = None, **limits: object) -> LLM:
    config = LLMConfig(base_url=server.base_url, model=MODEL, api_key=KEY, **limits)  # type: ignore[arg-type]
    return LLM(config, cache_dir)


def ask(n: int) -> list[dict[str, str]]:
    """A question different from every other n's, so neither cache nor script order mixes them."""
    return [{"role": "user", "content": f"question {n}"}]


# --- answers -----------------------------------------------------------------------------


def test_answer_has_the_text_and_the_servers_token_counts():
    with ScriptedServer([text(CODE_ANSWER, prompt_tokens=12, completion_tokens=34)]) as server:
        with llm_for(server) as llm:
            result = llm.complete(ASK, purpose="generate", temperature=0.7)
    assert result == Answer(CODE_ANSWER, 12, 34, cached=False)
    assert extract_code(result.text) == "import torch\nx = torch.ones(3)\n"
    [(headers, body)] = server.chat_requests
    assert headers["authorization"] == f"Bearer {KEY}"
    assert body["model"] == MODEL and body["messages"] == ASK and body["temperature"] == 0.7
    stats = llm.stats
    assert (stats.calls, stats.requests, stats.retries, stats.cache_hits) == (1, 1, 0, 0)
    assert (stats.prompt_tokens, stats.completion_tokens, stats.failures) == (12, 34, {})


def test_prose_is_an_answer_without_code():
    with ScriptedServer([text("I cannot write that program, sorry.")]) as server, llm_for(server) as llm:
        result = llm.complete(ASK, purpose="generate")
    assert isinstance(result, Answer)
    assert extract_code(result.text) is None


def test_tokens_are_estimated_when_the_server_gives_no_usage():
    answer = "y" * 400
    with ScriptedServer([text(answer, usage=False)]) as server, llm_for(server) as llm:
        result = llm.complete([{"role": "user", "content": "z" * 80}], purpose="generate")
    assert result == Answer(answer, 20, 100, cached=False)
    assert llm.stats.completion_tokens == 100


@pytest.mark.parametrize("reply", [
    malformed(),  # claims to be JSON, is not
    malformed("<html>502 Bad Gateway</html>", content_type="text/html"),  # the SDK hands back a str
    raw_json({"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": MODEL, "choices": []}),
    raw_json({"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": MODEL,
              "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": None}}]}),
    raw_json({"unexpected": "shape"}),
    raw_json([1, 2, 3]),
], ids=["not-json", "html", "no-choices", "no-content", "wrong-shape", "a-list"])
def test_a_response_that_is_no_chat_completion_is_a_bad_response(reply):
    with ScriptedServer([reply]) as server, llm_for(server, max_retries=0) as llm:
        result = llm.complete(ASK, purpose="repair")
    assert isinstance(result, Failure) and result.reason == "bad_response", result
    assert llm.stats.failures == {"bad_response": 1}


def test_an_enormous_answer_is_too_long_but_its_tokens_are_counted():
    with ScriptedServer([huge(1_001), huge(1_000)]) as server, llm_for(server, max_answer_chars=1_000) as llm:
        first = llm.complete(ask(1), purpose="generate")
        second = llm.complete(ask(2), purpose="generate")
    assert isinstance(first, Failure) and first.reason == "too_long"
    assert isinstance(second, Answer) and len(second.text) == 1_000
    assert llm.stats.tokens == 60  # the server charged for both


def test_the_default_limit_refuses_a_huge_answer():
    with ScriptedServer([huge(50_000)]) as server, llm_for(server) as llm:
        result = llm.complete(ASK, purpose="generate")
    assert isinstance(result, Failure) and result.reason == "too_long"


# --- retries, errors, timeouts -------------------------------------------------------------


def test_a_429_then_success_is_an_answer_after_one_retry():
    with ScriptedServer([status(429, headers=FAST_RETRY), text(CODE_ANSWER)]) as server, llm_for(server) as llm:
        result = llm.complete(ASK, purpose="generate")
    assert isinstance(result, Answer) and result.text == CODE_ANSWER
    requests = server.chat_requests
    assert len(requests) == 2
    assert [headers["x-stainless-retry-count"] for headers, _ in requests] == ["0", "1"]  # the SDK retried
    stats = llm.stats
    assert (stats.calls, stats.requests, stats.retries, stats.failures) == (1, 2, 1, {})


def test_always_500_is_a_server_error_after_max_retries_plus_one_attempts():
    with ScriptedServer([status(500, headers=FAST_RETRY)]) as server, llm_for(server, max_retries=3) as llm:
        result = llm.complete(ASK, purpose="generate")
    assert isinstance(result, Failure) and result.reason == "server_error"
    assert len(server.chat_requests) == 4
    stats = llm.stats
    assert (stats.calls, stats.requests, stats.retries, stats.failures) == (1, 4, 3, {"server_error": 1})


def test_rate_limited_when_every_retry_is_refused():
    with ScriptedServer([status(429, headers=FAST_RETRY)]) as server, llm_for(server, max_retries=1) as llm:
        result = llm.complete(ASK, purpose="generate")
    assert isinstance(result, Failure) and result.reason == "rate_limited"
    assert len(server.chat_requests) == 2


def test_the_sdk_waits_what_retry_after_asks():
    with ScriptedServer([status(429, headers={"retry-after": "0.6"}), text("ok")]) as server, llm_for(server) as llm:
        start = time.monotonic()
        result = llm.complete(ASK, purpose="generate")
        waited = time.monotonic() - start
    assert isinstance(result, Answer)
    assert waited >= 0.6  # a lower bound only: a loaded machine makes it longer, never shorter


def test_the_sdk_backs_off_without_retry_after():
    # openai: 0.5 s * 2**retry, minus up to 25 % jitter, when the server names no delay
    with ScriptedServer([status(503), text("ok")]) as server, llm_for(server, max_retries=1) as llm:
        start = time.monotonic()
        result = llm.complete(ASK, purpose="generate")
        waited = time.monotonic() - start
    assert isinstance(result, Answer)
    assert waited >= 0.37


def test_a_client_error_is_not_retried_and_its_detail_hides_the_key():
    body = json.dumps({"error": {"message": f"Incorrect API key provided: {KEY}", "type": "invalid_request_error",
                                 "code": "invalid_api_key"}})
    with ScriptedServer([status(401, body=body)]) as server, llm_for(server) as llm:
        result = llm.complete(ASK, purpose="generate")
    assert isinstance(result, Failure) and result.reason == "error"
    assert len(server.chat_requests) == 1
    assert KEY not in result.detail and "***" in result.detail


def test_slower_than_the_timeout_is_a_timeout_and_the_server_stops_at_once():
    start = time.monotonic()
    with ScriptedServer([slow(60.0)]) as server, llm_for(server, timeout=0.5, max_retries=0) as llm:
        result = llm.complete(ASK, purpose="generate")
    elapsed = time.monotonic() - start  # includes stopping the server while its handler sleeps
    assert isinstance(result, Failure) and result.reason == "timeout"
    assert elapsed < 30  # not the minute the answer would take
    assert llm.stats.failures == {"timeout": 1}


def test_no_server_is_a_connection_failure():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = LLMConfig(base_url=f"http://127.0.0.1:{port}/v1", model=MODEL, api_key=KEY, max_retries=0)
    with LLM(config, None) as llm:
        result = llm.complete(ASK, purpose="generate")
    assert isinstance(result, Failure) and result.reason == "connection"


def test_complete_never_raises():
    with ScriptedServer([text("ok")]) as server, llm_for(server) as llm:
        result = llm.complete([{"role": "user", "content": object()}], purpose="generate")  # type: ignore[dict-item]
    assert isinstance(result, Failure) and result.reason == "error"
    assert server.chat_requests == []


# --- budget --------------------------------------------------------------------------------


def test_budget_by_calls():
    with ScriptedServer([text("ok")]) as server, llm_for(server, budget_calls=1) as llm:
        first = llm.complete(ask(1), purpose="generate")
        second = llm.complete(ask(2), purpose="generate")
    assert isinstance(first, Answer)
    assert isinstance(second, Failure) and second.reason == "budget"
    assert len(server.chat_requests) == 1


def test_a_spent_budget_sends_nothing():
    with ScriptedServer([text("ok")]) as server:
        with llm_for(server, budget_calls=0) as by_calls, llm_for(server, budget_tokens=0) as by_tokens:
            results = [by_calls.complete(ASK, purpose="generate"), by_tokens.complete(ASK, purpose="generate")]
    assert [r.reason for r in results if isinstance(r, Failure)] == ["budget", "budget"]
    assert server.requests == []


def test_budget_by_tokens():
    with ScriptedServer([text("ok", prompt_tokens=10, completion_tokens=20)]) as server, \
            llm_for(server, budget_tokens=25) as llm:
        first = llm.complete(ask(1), purpose="generate")
        second = llm.complete(ask(2), purpose="generate")
    assert isinstance(first, Answer)
    assert isinstance(second, Failure) and second.reason == "budget" and "30 of 25 tokens" in second.detail
    assert len(server.chat_requests) == 1


def test_the_call_budget_holds_under_threads():
    with ScriptedServer([slow(0.1, then=text("ok"))]) as server, llm_for(server, budget_calls=3,
                                                                          max_inflight=4) as llm:
        results: list[Answer | Failure] = []
        threads = [threading.Thread(target=lambda n=n: results.append(llm.complete(ask(n), purpose="g")))
                   for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert sum(isinstance(r, Answer) for r in results) == 3
    assert len(server.chat_requests) == 3
    assert llm.stats.failures == {"budget": 5}


# --- cache ---------------------------------------------------------------------------------


def test_a_second_identical_call_is_a_cache_hit(tmp_path):
    with ScriptedServer([text(CODE_ANSWER, 12, 34)]) as server, llm_for(server, tmp_path) as llm:
        first = llm.complete(ASK, purpose="generate")
        second = llm.complete(ASK, purpose="generate")
    assert first == Answer(CODE_ANSWER, 12, 34, cached=False)
    assert second == Answer(CODE_ANSWER, 12, 34, cached=True)
    assert len(server.chat_requests) == 1
    stats = llm.stats
    assert (stats.calls, stats.cache_hits, stats.tokens) == (1, 1, 46)


def test_the_cache_survives_a_new_client_and_costs_no_budget(tmp_path):
    with ScriptedServer([text(CODE_ANSWER)]) as server:
        with llm_for(server, tmp_path) as llm:
            llm.complete(ASK, purpose="generate")
        with llm_for(server, tmp_path, budget_calls=0) as again:
            result = again.complete(ASK, purpose="generate")
            other = again.complete(ASK, purpose="generate", temperature=0.9)  # another question
    assert isinstance(result, Answer) and result.cached and result.text == CODE_ANSWER
    assert isinstance(other, Failure) and other.reason == "budget"
    assert len(server.chat_requests) == 1


def test_cache_entry_layout(tmp_path):
    with ScriptedServer([text(CODE_ANSWER, 12, 34)]) as server, llm_for(server, tmp_path) as llm:
        llm.complete(ASK, purpose="repair", temperature=0.2)
    key = cache_key(MODEL, ASK, 0.2)
    assert [p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()] == \
        [f"{key[:2]}/{key}.json"]  # and no temporary file left behind
    entry = json.loads((tmp_path / key[:2] / f"{key}.json").read_text())
    assert entry == {"text": CODE_ANSWER, "prompt_tokens": 12, "completion_tokens": 34, "purpose": "repair"}


def test_failures_are_not_cached(tmp_path):
    with ScriptedServer([status(500), text("ok")]) as server, llm_for(server, tmp_path, max_retries=0) as llm:
        first = llm.complete(ASK, purpose="generate")
        second = llm.complete(ASK, purpose="generate")
    assert isinstance(first, Failure) and first.reason == "server_error"
    assert isinstance(second, Answer) and not second.cached
    assert len(server.chat_requests) == 2


def test_a_corrupt_cache_entry_is_a_miss(tmp_path):
    key = cache_key(MODEL, ASK, 0.2)
    (tmp_path / key[:2]).mkdir()
    (tmp_path / key[:2] / f"{key}.json").write_text('{"text": ')
    with ScriptedServer([text("fresh")]) as server, llm_for(server, tmp_path) as llm:
        result = llm.complete(ASK, purpose="generate")
        again = llm.complete(ASK, purpose="generate")
    assert result == Answer("fresh", 10, 20, cached=False)
    assert again.cached  # the broken entry was replaced


# --- concurrency ---------------------------------------------------------------------------


@pytest.mark.parametrize("max_inflight", [1, 2])
def test_requests_in_flight_are_bounded(max_inflight):
    with ScriptedServer([slow(0.3, then=text("ok"))]) as server, llm_for(server, max_inflight=max_inflight) as llm:
        results: list[Answer | Failure] = []
        threads = [threading.Thread(target=lambda n=n: results.append(llm.complete(ask(n), purpose="g")))
                   for n in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert all(isinstance(r, Answer) for r in results) and len(results) == 2
    assert server.max_concurrent == max_inflight  # 2: the bound, not the server, kept them apart
    assert llm.stats.calls == 2


# --- the key -------------------------------------------------------------------------------


def test_the_key_is_sent_but_never_stored(tmp_path):
    script = [text(CODE_ANSWER), status(401, body=f'{{"error": {{"message": "bad key {KEY}"}}}}'), text("prose")]
    with ScriptedServer(script) as server, llm_for(server, tmp_path, max_retries=0) as llm:
        results = [llm.complete(ask(n), purpose="generate") for n in range(3)]
        leaked = llm.complete([{"role": "user", "content": "say the key"}], purpose="generate")  # answers "prose"
    assert server.chat_requests[0][0]["authorization"] == f"Bearer {KEY}"
    assert isinstance(results[1], Failure) and KEY not in results[1].detail
    assert isinstance(leaked, Answer)
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(files) == 3
    assert all(KEY.encode() not in p.read_bytes() for p in files)
    assert KEY not in repr(llm.config) + json.dumps(llm.config.public()) + llm.config.describe()
    assert KEY not in json.dumps(llm.stats.as_dict())


def test_an_answer_repeating_the_key_is_not_cached(tmp_path):
    with ScriptedServer([text(f"the key is {KEY}")]) as server, llm_for(server, tmp_path) as llm:
        result = llm.complete(ASK, purpose="generate")
    assert isinstance(result, Answer)
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


# --- config --------------------------------------------------------------------------------


@pytest.fixture
def no_llm_env(monkeypatch):
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "MUTATOR_LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_from_env_is_none_without_an_endpoint(no_llm_env):
    assert LLMConfig.from_env() is None
    no_llm_env.setenv("OPENAI_API_KEY", "")
    no_llm_env.setenv("MUTATOR_LLM_MODEL", "some-model")
    assert LLMConfig.from_env() is None


def test_from_env_with_a_local_server_needs_no_key(no_llm_env):
    no_llm_env.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1")
    config = LLMConfig.from_env()
    assert config == LLMConfig(base_url="http://127.0.0.1:8000/v1", model="gpt-4o-mini", api_key=NO_KEY)
    assert config.describe() == "gpt-4o-mini at http://127.0.0.1:8000/v1"


def test_from_env_with_a_key_model_and_overrides(no_llm_env):
    no_llm_env.setenv("OPENAI_API_KEY", KEY)
    no_llm_env.setenv("MUTATOR_LLM_MODEL", "env-model")
    assert LLMConfig.from_env().model == "env-model"
    config = LLMConfig.from_env("chosen-model", budget_calls=5, timeout=10.0)
    assert (config.base_url, config.model, config.api_key, config.budget_calls, config.timeout) == \
        (None, "chosen-model", KEY, 5, 10.0)
    assert config.describe() == "chosen-model at https://api.openai.com/v1"


def test_public_is_everything_but_the_key():
    config = LLMConfig(base_url="http://proxy-user:proxy-pass@127.0.0.1:8000/v1", model="m", api_key=KEY,
                       budget_tokens=1000)
    assert config.public() == {"base_url": "http://***@127.0.0.1:8000/v1", "model": "m", "timeout": 60.0,
                               "max_retries": 3, "max_inflight": 2, "budget_calls": None, "budget_tokens": 1000,
                               "max_answer_chars": 40_000}
    assert "proxy-pass" not in config.describe() and KEY not in repr(config)


def test_bad_limits_fail_when_the_config_is_made():
    with pytest.raises(ValueError, match="max_inflight"):
        LLMConfig(base_url=None, model="m", api_key=KEY, max_inflight=0)
    with pytest.raises(ValueError, match="budget_calls"):
        LLMConfig(base_url=None, model="m", api_key=KEY, budget_calls=-1)


def test_the_server_lists_its_model():
    with ScriptedServer([text("ok")]) as server, openai.OpenAI(base_url=server.base_url, api_key=KEY) as client:
        models = client.models.list()
    assert [model.id for model in models] == [MODEL]


# --- extract_code --------------------------------------------------------------------------


@pytest.mark.parametrize(("answer", "code"), [
    ("```python\nx = 1\n```", "x = 1\n"),
    ("Sure!\n```py\nx = 1\ny = 2\n```\nDone.", "x = 1\ny = 2\n"),
    ("```Python3 main.py\nx = 1\n```", "x = 1\n"),
    # the python block wins over an earlier untagged or other-language one
    ("```\npip install torch\n```\n```python\nx = 1\n```", "x = 1\n"),
    ("```bash\nls\n```\n```python\nx = 1\n```", "x = 1\n"),
    # the first python block, not the longest
    ("```python\nx = 1\n```\nUsage:\n```python\nimport prog\nprog.run()\nprog.run()\n```", "x = 1\n"),
    # no python block: the first fenced block
    ("```\nx = 1\n```\n```text\noutput\n```", "x = 1\n"),
    ("```text\noutput\n```", "output\n"),
    ("~~~python\nx = 1\n~~~", "x = 1\n"),
    ("````python\ns = '''\n```\n'''\n````", "s = '''\n```\n'''\n"),  # a longer fence holds a shorter one
    ("1. The program:\n   ```python\n   def f():\n       return 1\n   ```", "def f():\n    return 1\n"),
    ("```python\n\n```\n```python\nx = 1\n```", "x = 1\n"),  # an empty block is no code
], ids=["python", "py", "python3-info", "over-untagged", "over-bash", "first-python", "first-untagged", "text",
        "tilde", "long-fence", "indented", "empty-skipped"])
def test_extract_code(answer, code):
    assert extract_code(answer) == code


@pytest.mark.parametrize("answer", [
    "",
    "I cannot help with that.",
    "Use `torch.compile` on the function.",
    "```python\nx = 1\ny = ",  # cut off: the block never closes
], ids=["empty", "prose", "inline-code", "unclosed"])
def test_extract_code_finds_none(answer):
    assert extract_code(answer) is None
