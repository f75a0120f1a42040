"""What the recording needs of Dynamo on the torch under test (a missing hook named, not skipped
silently), and what a compiled callable contributes to a call's state."""

from __future__ import annotations

import functools
import types

import torch._dynamo
from torch._dynamo import eval_frame

from mutator.runtime import session
from mutator.runtime.snapshot import signature_of


def test_a_recording_hook_this_torch_lacks_is_named(monkeypatch):
    monkeypatch.delattr(eval_frame, "_optimize_assert")
    entries = {k: v for k, v in torch._dynamo.config._config.items() if k != "recompile_limit"}
    monkeypatch.setattr(torch._dynamo, "config", types.SimpleNamespace(_config=entries))
    assert session.unavailable() == (
        "torch._dynamo.eval_frame._optimize_assert (optimize's arguments are not checked)",
        "torch._dynamo.config.recompile_limit (a lowered limit is not seen)")


def test_a_compiled_callable_object_or_partial_carries_its_own_state():
    """torch.compile wraps both in Dynamo's shared external_utils.inner, whose guards read them as `fn`."""
    class Affine:
        def __init__(self, slope):
            self.slope = slope

        def __call__(self, x):
            return x * self.slope

    def shifted(x, by):
        return x - by

    def state(target):
        return signature_of(session._target_state(target))

    line = Affine(2)
    before = state(line)
    line.slope = 4
    assert state(line) != before
    assert state(functools.partial(shifted, by=1)) != state(functools.partial(shifted, by=2))
    assert state(functools.partial(shifted, by=1)) == state(functools.partial(shifted, by=1))
    assert state(torch.sin) != state(torch.cos)
