"""How to reach a chat-completions endpoint, read once from the environment.

The LLM is optional: with neither OPENAI_BASE_URL nor OPENAI_API_KEY set the fuzzer runs
without it, so `LLMConfig.from_env` answers None rather than a config that cannot work.
The key is a secret that must never reach campaign.json, logs or the cache: it is hidden
from `repr`, left out of `public()` and of `describe()`.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

DEFAULT_MODEL = "gpt-4o-mini"
OFFICIAL_BASE_URL = "https://api.openai.com/v1"  # what the openai client uses when base_url is None
# A local server (vLLM, llama.cpp, Ollama) needs no key, but the openai client refuses to be
# built without one: this placeholder fills the field and is known not to be a secret.
NO_KEY = "unused"


@dataclass(frozen=True)
class LLMConfig:
    """One endpoint, one model and the limits the fuzzer keeps to when it calls them.

    `max_retries` is the openai client's own retry count (429, 5xx, timeouts, connection
    errors), so one call makes at most max_retries + 1 HTTP requests. `budget_calls` and
    `budget_tokens` cap what a campaign spends (None: no cap); `max_answer_chars` refuses
    answers too long to be a program, which are usually a model stuck in a loop.
    """

    base_url: str | None
    model: str
    api_key: str = field(repr=False)
    timeout: float = 60.0
    max_retries: int = 3
    max_inflight: int = 2
    budget_calls: int | None = None
    budget_tokens: int | None = None
    max_answer_chars: int = 40_000

    def __post_init__(self) -> None:
        # Bad limits are a programming or command-line error: fail when the config is made,
        # not hours later inside a worker thread.
        if not self.model:
            raise ValueError("LLMConfig.model must not be empty")
        if not self.timeout > 0:
            raise ValueError(f"LLMConfig.timeout must be > 0, not {self.timeout!r}")
        if self.max_retries < 0:
            raise ValueError(f"LLMConfig.max_retries must be >= 0, not {self.max_retries!r}")
        if self.max_inflight < 1:
            raise ValueError(f"LLMConfig.max_inflight must be >= 1, not {self.max_inflight!r}")
        for name in ("budget_calls", "budget_tokens"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise ValueError(f"LLMConfig.{name} must be >= 0 or None, not {value!r}")
        if self.max_answer_chars < 1:
            raise ValueError(f"LLMConfig.max_answer_chars must be >= 1, not {self.max_answer_chars!r}")

    @classmethod
    def from_env(cls, model: str | None = None, **overrides: Any) -> LLMConfig | None:
        """The config the environment describes, or None when the LLM is off.

        The LLM is on when OPENAI_BASE_URL or OPENAI_API_KEY is set (empty counts as unset).
        The model is `model`, else MUTATOR_LLM_MODEL, else gpt-4o-mini; `overrides` set the
        other fields (timeout, budgets, ...).
        """
        base_url = os.environ.get("OPENAI_BASE_URL") or None
        api_key = os.environ.get("OPENAI_API_KEY") or None
        if base_url is None and api_key is None:
            return None
        chosen = model or os.environ.get("MUTATOR_LLM_MODEL") or DEFAULT_MODEL
        return cls(base_url=base_url, model=chosen, api_key=api_key or NO_KEY, **overrides)

    def public(self) -> dict[str, Any]:
        """Every field but the key, for campaign.json (credentials in the URL are masked too)."""
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "api_key"}
        fields["base_url"] = None if self.base_url is None else _without_credentials(self.base_url)
        return fields

    def describe(self) -> str:
        """One line for the console: "gpt-4o-mini at http://127.0.0.1:8000/v1"."""
        return f"{self.model} at {_without_credentials(self.base_url or OFFICIAL_BASE_URL)}"


def _without_credentials(url: str) -> str:
    """`url` with any user:password@ part masked: some proxies take their secret that way."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=f"***@{host}"))
