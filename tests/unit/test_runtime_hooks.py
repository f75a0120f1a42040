"""What the runtime needs of Dynamo on the torch under test (each module's `unavailable()`,
gathered into the worker's Ready notes): nothing missing on this torch, and a missing hook
named, not skipped silently."""

from __future__ import annotations

import sys
import types

import torch._dynamo
from torch._dynamo import eval_frame

from mutator.exec.worker import unsupported
from mutator.runtime import configs, session


def test_the_runtime_has_every_hook_it_needs_on_this_torch():
    assert unsupported() == ()


def test_a_recording_hook_this_torch_lacks_is_named(monkeypatch):
    monkeypatch.delattr(eval_frame, "_optimize_assert")
    entries = {k: v for k, v in torch._dynamo.config._config.items() if k != "recompile_limit"}
    monkeypatch.setattr(torch._dynamo, "config", types.SimpleNamespace(_config=entries))
    assert session.unavailable() == (
        "torch._dynamo.eval_frame._optimize_assert (optimize's arguments are not checked)",
        "torch._dynamo.config.recompile_limit (a lowered limit is not seen)")


def test_a_config_module_that_cannot_be_read_is_named(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch._inductor.config", types.ModuleType("torch._inductor.config"))
    assert configs.unavailable() == ("torch._inductor.config._get_dict",)
