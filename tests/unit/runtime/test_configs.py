"""The compiler configuration a program changes (ConfigWatch), and a config module that cannot be read."""

from __future__ import annotations

import ast
import sys
import types

import pytest

from mutator.runtime import configs
from mutator.runtime.configs import ConfigWatch


def test_a_config_module_that_cannot_be_read_is_named(monkeypatch):
    import torch._dynamo.config  # noqa: F401  (imported for real first: importing torch reads Inductor's config)

    monkeypatch.setitem(sys.modules, "torch._inductor.config", types.ModuleType("torch._inductor.config"))
    assert configs.unavailable() == ("torch._inductor.config._get_dict",)


class _FakeConfig(types.ModuleType):
    """Stands in for a torch config module: `_get_dict` and `_config` are all ConfigWatch reads."""

    def __init__(self, name: str, **values: object) -> None:
        super().__init__(name)
        self.values = dict(values)
        self._config = {k: types.SimpleNamespace(default=v) for k, v in values.items()}

    def _get_dict(self, readonly_values: bool = False) -> dict[str, object]:
        return dict(self.values)


def test_config_watch_reports_what_changed_since_the_run_began_as_literals(monkeypatch: pytest.MonkeyPatch):
    dynamo = _FakeConfig("torch._dynamo.config", flag=False, limit=8, hook=None)
    monkeypatch.setitem(sys.modules, "torch._dynamo.config", dynamo)
    monkeypatch.delitem(sys.modules, "torch._inductor.config", raising=False)
    watch = ConfigWatch()
    assert watch.changes() == ()
    dynamo.values.update(flag=True, limit=2, hook=object())  # a callable's repr does not read back
    inductor = _FakeConfig("torch._inductor.config", threads=1)
    inductor.values["threads"] = 4  # imported after the run began: compared with its defaults
    monkeypatch.setitem(sys.modules, "torch._inductor.config", inductor)
    assert watch.changes() == (("torch._dynamo.config.flag", "True"), ("torch._dynamo.config.limit", "2"),
                               ("torch._inductor.config.threads", "4"))
    assert all(ast.literal_eval(value) is not None for _, value in watch.changes())


def test_a_configuration_is_applied_here_and_this_torch_has_every_named_one():
    import torch._dynamo.config as dynamo_config

    from mutator.core.configurations import CONFIGURATIONS, Configuration

    # Restored by torch's own patch, not monkeypatch: pytest's undo deletes an entry it did not find
    # in the module's __dict__, and a deleted torch config entry is hidden for every later test.
    names = ("nested_graph_breaks", "assume_static_by_default", "automatic_dynamic_shapes")
    with dynamo_config.patch({name: getattr(dynamo_config, name) for name in names}):
        configs.apply(CONFIGURATIONS["nested-graph-breaks"])
        configs.apply(CONFIGURATIONS["dynamic"])
        assert dynamo_config.nested_graph_breaks is True
        assert dynamo_config.assume_static_by_default is False and dynamo_config.automatic_dynamic_shapes is False
    assert all(hasattr(dynamo_config, name) for name in names)
    assert configs.available() == tuple(CONFIGURATIONS)
    made_up = Configuration("made-up", (("torch._dynamo.config.no_such_setting", "True"),
                                        ("torch._dynamo.config.nested_graph_breaks", "True")))
    assert configs.missing(made_up) == ("torch._dynamo.config.no_such_setting",)
