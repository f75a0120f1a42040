"""The LLM the fuzzer may ask for programs: an optional, budgeted chat-completions client.

`LLMConfig.from_env()` is None when no endpoint is configured, and `LLM.complete` answers
an `Answer` or a `Failure`, never an exception: the fuzzer works without the LLM and
survives every way a call to it can go wrong.
"""

from __future__ import annotations

from mutator.llm.client import LLM, Answer, Failure, FailureReason, LLMStats, extract_code
from mutator.llm.config import LLMConfig

__all__ = ["LLM", "Answer", "Failure", "FailureReason", "LLMConfig", "LLMStats", "extract_code"]
