"""The named Dynamo configurations: parsing names, what a reproducer writes, and finding the
one a script sets. No torch."""

from __future__ import annotations

import pytest

from mutator.core.configurations import (CAMPAIGN_CONFIGURATIONS, CONFIGURATIONS, ConfigurationError, configuration,
                                         parse_names, set_in)
from mutator.core.observation import RunConfig


def test_names_parse_in_order_once_and_all_is_every_one():
    assert parse_names("dynamic, default,dynamic") == ("dynamic", "default")
    assert parse_names("all") == tuple(CONFIGURATIONS)
    assert set(CAMPAIGN_CONFIGURATIONS) <= set(CONFIGURATIONS) and CAMPAIGN_CONFIGURATIONS[0] == "default"


@pytest.mark.parametrize("text", ["nested", "", " , "])
def test_a_bad_name_is_one_line_naming_the_known_ones(text: str):
    with pytest.raises(ConfigurationError) as raised:
        parse_names(text)
    message = str(raised.value)
    assert "\n" not in message and all(name in message for name in CONFIGURATIONS)


def test_a_run_config_refuses_an_unknown_configuration():
    assert RunConfig(configuration="dynamic").configuration == "dynamic"
    with pytest.raises(ValueError, match="nested-graph-breaks"):
        RunConfig(configuration="nested")


def test_a_configuration_writes_its_settings_with_why_and_a_script_that_sets_them_is_recognised():
    nested = configuration("nested-graph-breaks")
    lines = nested.lines()
    assert lines[0].startswith("# the configuration 'nested-graph-breaks': ") and "off by default" in lines[0]
    assert "torch._dynamo.config.nested_graph_breaks = True" in lines
    assert configuration("default").lines() == [] and configuration("default").is_default
    assert set_in("import torch\n" + "\n".join(lines) + "\n") == "nested-graph-breaks"
    dynamic = "\n".join(configuration("dynamic").lines())
    assert set_in(dynamic) == "dynamic"
    assert set_in("torch._dynamo.config.assume_static_by_default = False\n") == "default"  # half of it


def test_forced_graph_breaks_include_nested_ones_and_a_script_setting_both_is_recognised_as_forced():
    forced = configuration("forced-graph-breaks")
    assert ("torch._dynamo.config.nested_graph_breaks", "True") in forced.settings
    assert "testing setting" in forced.lines()[0]
    assert set_in("\n".join(forced.lines())) == "forced-graph-breaks"  # not the nested one it contains


def test_graph_deduplication_writes_its_one_setting_and_a_script_setting_it_is_recognised():
    dedup = configuration("graph-dedup")
    assert dedup.settings == (("torch._dynamo.config.use_graph_deduplication", "True"),)
    assert "invoke_subgraph" in dedup.lines()[0] and "graph-dedup" in CAMPAIGN_CONFIGURATIONS
    assert set_in("import torch\n" + "\n".join(dedup.lines()) + "\n") == "graph-dedup"
    assert "graph deduplication" in dedup.needs
