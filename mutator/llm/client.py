"""One chat-completions call that never raises: an `Answer` or a `Failure`, nothing else.

The fuzzer asks the LLM from several worker threads for things it can do without (a
repaired or a new program), so a call that goes wrong must cost one candidate, never the
campaign: every exception, the SDK's or ours, ends as a `Failure` with a reason from a
closed set the statistics count by.

Retries are the openai client's own (`max_retries`): it retries 408, 409, 429, 5xx,
timeouts and connection errors with exponential backoff and jitter (0.5 s doubling to at
most 8 s, minus up to 25 %), and it waits what a server's `Retry-After`/`retry-after-ms`
asks for instead when that is in (0, 120] seconds. We do not retry on top of it; an httpx
request hook counts the HTTP requests each call makes, so `LLMStats.retries` says how
often the SDK retried.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import tempfile
import textwrap
import threading
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import openai
import pydantic

from mutator.llm.config import NO_KEY, LLMConfig

log = logging.getLogger(__name__)

FailureReason = Literal["budget", "timeout", "rate_limited", "server_error", "bad_response", "too_long",
                        "connection", "error"]
DETAIL_CHARS = 500  # a Failure's detail is for a log line, not for a whole error page


@dataclass(frozen=True)
class Answer:
    """The text of the first choice. `cached`: read from the disk cache, no request made."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    cached: bool

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class Failure:
    """Why there is no answer; `detail` is for humans and never holds the key."""

    reason: FailureReason
    detail: str


@dataclass
class LLMStats:
    """What the LLM cost and how it went, for the campaign's statistics.

    `calls`: completions asked of the server (cache hits and budget refusals are not calls);
    `requests`: the HTTP requests those calls made, `retries` the ones beyond the first;
    tokens are the server's counts (`usage`), or len/4 estimates when it gave none.
    """

    calls: int = 0
    cache_hits: int = 0
    failures: dict[str, int] = field(default_factory=dict)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    requests: int = 0
    retries: int = 0

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class LLM:
    """A thread-safe, budgeted, cached chat-completions client.

    At most `config.max_inflight` requests are in flight at once, whatever the number of
    threads calling `complete`: a local server serves few at a time and a hosted one
    rate-limits. With `cache_dir`, an answer is stored under the hash of what was asked,
    so a re-run campaign (or a test) asks the same question only once.
    """

    def __init__(self, config: LLMConfig, cache_dir: Path | None) -> None:
        self.config = config
        self.cache_dir = cache_dir
        # The placeholder of a keyless local server is no secret; masking it would only
        # mangle details that happen to contain the word.
        self._secret = config.api_key if config.api_key and config.api_key != NO_KEY else None
        self._inflight = threading.BoundedSemaphore(config.max_inflight)
        self._lock = threading.Lock()
        self._stats = LLMStats()
        # httpx calls request hooks in the thread that sends, so a thread-local counter
        # gives each complete() the number of HTTP requests its own call made.
        self._local = threading.local()
        http_client = openai.DefaultHttpxClient(event_hooks={"request": [self._count_request]})
        self._client = openai.OpenAI(base_url=config.base_url, api_key=config.api_key, timeout=config.timeout,
                                     max_retries=config.max_retries, http_client=http_client)

    @property
    def stats(self) -> LLMStats:
        """A consistent copy: the live counters change under other threads."""
        with self._lock:
            return replace(self._stats, failures=dict(self._stats.failures))

    def close(self) -> None:
        """Closes the connection pool (idempotent)."""
        self._client.close()

    def __enter__(self) -> LLM:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def complete(self, messages: list[dict[str, str]], *, purpose: str, temperature: float = 0.2) -> Answer | Failure:
        """The model's answer to `messages`, or why there is none. Never raises.

        `purpose` (e.g. "repair", "generate") is stored with a cached answer and logged, so
        a cache directory can be read back by what each answer was for.
        """
        try:
            result = self._complete(messages, purpose, temperature)
        except Exception as exc:  # a bug of ours or an SDK surprise: still only one lost answer
            result = Failure("error", self._detail(exc))
        if isinstance(result, Failure):
            with self._lock:
                self._stats.failures[result.reason] = self._stats.failures.get(result.reason, 0) + 1
            log.debug("llm %s: %s (%s)", purpose, result.reason, result.detail)
        else:
            log.debug("llm %s: %d+%d tokens%s", purpose, result.prompt_tokens, result.completion_tokens,
                      " (cached)" if result.cached else "")
        return result

    def _complete(self, messages: list[dict[str, str]], purpose: str, temperature: float) -> Answer | Failure:
        key = cache_key(self.config.model, messages, temperature)
        hit = self._cache_read(key)
        if hit is not None:
            with self._lock:
                self._stats.cache_hits += 1
            return hit
        refusal = self._reserve_call()
        if refusal is not None:
            return refusal
        with self._inflight:
            self._local.requests = 0
            try:
                response = self._client.chat.completions.create(model=self.config.model, messages=messages,
                                                                temperature=temperature)
            except Exception as exc:
                return self._failure_of(exc)
            finally:
                made = self._local.requests
                with self._lock:
                    self._stats.requests += made
                    self._stats.retries += max(made - 1, 0)
        result = self._read(response, messages)
        if isinstance(result, Answer):
            self._cache_write(key, result, purpose)
        return result

    def _reserve_call(self) -> Failure | None:
        """Counts a call against the budget, or refuses it when the budget is spent.

        Check and count happen under one lock, so threads cannot overshoot `budget_calls`;
        tokens are known only after an answer, so concurrent calls can overshoot
        `budget_tokens` by what the calls in flight spend.
        """
        config = self.config
        with self._lock:
            stats = self._stats
            if config.budget_calls is not None and stats.calls >= config.budget_calls:
                return Failure("budget", f"{stats.calls} of {config.budget_calls} calls made")
            if config.budget_tokens is not None and stats.tokens >= config.budget_tokens:
                return Failure("budget", f"{stats.tokens} of {config.budget_tokens} tokens spent")
            stats.calls += 1
        return None

    def _read(self, response: object, messages: list[dict[str, str]]) -> Answer | Failure:
        """The answer in a response the SDK built without validating it.

        The SDK does not validate responses: a body that is not JSON under a non-JSON
        content type comes back as a str, and a JSON body of the wrong shape as a model
        with fields missing, so every step is checked here.
        """
        choices = getattr(response, "choices", None)
        if not isinstance(choices, list):
            return Failure("bad_response", f"not a chat completion: {self._detail(repr(response))}")
        if not choices:
            return Failure("bad_response", "no choices")
        message = getattr(choices[0], "message", None)
        content = getattr(message, "content", None)
        if not isinstance(content, str) or not content.strip():
            finish = getattr(choices[0], "finish_reason", None)
            refusal = getattr(message, "refusal", None)
            return Failure("bad_response", self._detail(f"no content (finish_reason={finish!r}, refusal={refusal!r})"))
        prompt_tokens, completion_tokens = _usage(getattr(response, "usage", None), messages, content)
        with self._lock:
            self._stats.prompt_tokens += prompt_tokens
            self._stats.completion_tokens += completion_tokens
        if len(content) > self.config.max_answer_chars:
            return Failure("too_long", f"{len(content)} chars, more than {self.config.max_answer_chars}")
        return Answer(content, prompt_tokens, completion_tokens, cached=False)

    def _failure_of(self, exc: Exception) -> Failure:
        """The reason an exception from the SDK stands for (subclasses before their bases)."""
        if isinstance(exc, openai.APITimeoutError):
            reason: FailureReason = "timeout"
        elif isinstance(exc, openai.APIConnectionError):
            reason = "connection"
        elif isinstance(exc, openai.RateLimitError):
            reason = "rate_limited"
        elif isinstance(exc, openai.APIStatusError):
            reason = "server_error" if exc.status_code >= 500 else "error"
        elif isinstance(exc, (openai.APIResponseValidationError, json.JSONDecodeError, pydantic.ValidationError)):
            reason = "bad_response"
        else:
            reason = "error"
        return Failure(reason, self._detail(exc))

    def _detail(self, what: object) -> str:
        text = f"{type(what).__name__}: {what}" if isinstance(what, BaseException) else str(what)
        if self._secret:
            text = text.replace(self._secret, "***")
        return text if len(text) <= DETAIL_CHARS else text[:DETAIL_CHARS] + "..."

    def _count_request(self, request: object) -> None:
        self._local.requests = getattr(self._local, "requests", 0) + 1

    def _cache_path(self, key: str) -> Path | None:
        return None if self.cache_dir is None else self.cache_dir / key[:2] / f"{key}.json"

    def _cache_read(self, key: str) -> Answer | None:
        """The stored answer, or None; an unreadable entry is a miss (it will be rewritten)."""
        path = self._cache_path(key)
        if path is None:
            return None
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
            text, prompt_tokens, completion_tokens = entry["text"], entry["prompt_tokens"], entry["completion_tokens"]
        except (OSError, ValueError, TypeError, KeyError):
            return None
        if not (isinstance(text, str) and isinstance(prompt_tokens, int) and isinstance(completion_tokens, int)):
            return None
        return Answer(text, prompt_tokens, completion_tokens, cached=True)

    def _cache_write(self, answer_key: str, answer: Answer, purpose: str) -> None:
        """Stores an answer atomically: a reader sees the whole entry or none (tmp + os.replace).

        A failed write costs only the cache, never the answer.
        """
        path = self._cache_path(answer_key)
        if path is None:
            return
        payload = json.dumps({"text": answer.text, "prompt_tokens": answer.prompt_tokens,
                              "completion_tokens": answer.completion_tokens, "purpose": purpose})
        if self._secret and self._secret in payload:
            return  # a model made to repeat the key: such an answer is not kept on disk
        tmp: str | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(payload)
            os.replace(tmp, path)
            tmp = None
        except OSError as exc:
            log.warning("llm cache: cannot write %s: %s", path, exc)
        finally:
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass


def cache_key(model: str, messages: list[dict[str, str]], temperature: float) -> str:
    """The hash of what was asked: the same question to the same model is asked once."""
    asked = json.dumps({"model": model, "messages": messages, "temperature": temperature}, sort_keys=True)
    return hashlib.sha256(asked.encode("utf-8")).hexdigest()


def _usage(usage: object, messages: list[dict[str, str]], text: str) -> tuple[int, int]:
    """(prompt, completion) tokens: the server's, or len/4 estimates when it gave none.

    Local servers often leave `usage` out; an estimate still lets a token budget bind.
    """
    prompt = getattr(usage, "prompt_tokens", None)
    completion = getattr(usage, "completion_tokens", None)
    if isinstance(prompt, int) and isinstance(completion, int):
        return prompt, completion
    asked = sum(len(str(message.get("content", ""))) for message in messages)
    return asked // 4, len(text) // 4


_OPENING = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_PYTHON_TAGS = frozenset({"python", "py", "python3", "py3"})


def extract_code(text: str) -> str | None:
    """The Python code of an answer: the first block fenced as python/py, else the first block.

    The first python block, not the longest: the prompts ask for one program in one block,
    and a model that adds more usually adds usage examples or variants after it. Text
    without a (closed, non-empty) fenced block is prose and gives None, as does a block
    left unclosed: that answer was cut off. The code comes without its fences, dedented
    (a block inside a list item is indented) and ending in one newline.
    """
    blocks = _fenced_blocks(text)
    for tag, code in blocks:
        if tag in _PYTHON_TAGS:
            return code
    return blocks[0][1] if blocks else None


def _fenced_blocks(text: str) -> list[tuple[str, str]]:
    """(language tag, code) of every closed fenced block, in order (CommonMark-style fences)."""
    lines = text.splitlines()
    blocks: list[tuple[str, str]] = []
    start = 0
    while start < len(lines):
        opening = _OPENING.match(lines[start])
        if opening is None or (opening["fence"][0] == "`" and "`" in opening["info"]):
            start += 1
            continue
        fence = opening["fence"]
        tag_match = re.match(r"[\w+.-]*", opening["info"].strip())
        tag = tag_match.group().lower() if tag_match else ""
        end = next((i for i in range(start + 1, len(lines)) if _closes(lines[i], fence)), None)
        if end is None:
            break  # unclosed: the rest is a cut-off block, not code to run
        code = textwrap.dedent("\n".join(lines[start + 1:end])).strip("\n")
        if code.strip():
            blocks.append((tag, code + "\n"))
        start = end + 1
    return blocks


def _closes(line: str, fence: str) -> bool:
    stripped = line.strip()
    return len(stripped) >= len(fence) and set(stripped) == {fence[0]}
