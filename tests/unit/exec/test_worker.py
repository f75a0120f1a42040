"""What the runtime needs of Dynamo on the torch under test, gathered into the worker's Ready notes."""

from __future__ import annotations

from mutator.exec.worker import unsupported


def test_the_runtime_has_every_hook_it_needs_on_this_torch():
    assert unsupported() == ()
