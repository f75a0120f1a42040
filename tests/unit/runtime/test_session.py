"""What the recording needs of Dynamo on the torch under test: a missing hook named, not skipped silently."""

from __future__ import annotations

import types

import torch._dynamo
from torch._dynamo import eval_frame

from mutator.runtime import session


def test_a_recording_hook_this_torch_lacks_is_named(monkeypatch):
    monkeypatch.delattr(eval_frame, "_optimize_assert")
    entries = {k: v for k, v in torch._dynamo.config._config.items() if k != "recompile_limit"}
    monkeypatch.setattr(torch._dynamo, "config", types.SimpleNamespace(_config=entries))
    assert session.unavailable() == (
        "torch._dynamo.eval_frame._optimize_assert (optimize's arguments are not checked)",
        "torch._dynamo.config.recompile_limit (a lowered limit is not seen)")
