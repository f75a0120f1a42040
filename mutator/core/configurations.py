"""Dynamo's configurations as an axis of fuzzing: named settings a compiled run can take.

Users do not run Dynamo only as it ships: PyTorch's own Dynamo tests turn on nested graph
breaks (the upcoming default), `torch.compile(dynamic=True)` makes shapes symbolic, export
and data-dependent code capture scalar outputs. Programs that pass under the defaults crash
under these (Dynamo's code paths differ), so a campaign checks each program under one
configuration of a small named set, chosen per check, and a finding records the ones it
fails under. A configuration changes only the compiled run: the eager run is the reference.

Each setting is a `torch._dynamo.config` (or `torch._inductor.config`) entry and the
`repr` of its value, as a reproducer writes it (`mutator.runtime.configs.Changes`).
Torch-free: the runtime applies them (`mutator.runtime.configs.apply`).
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT = "default"
NESTED = "nested-graph-breaks"
FORCED = "forced-graph-breaks"
CONSTRUCT_PREFIX = "the configuration "  # `Configuration.construct`


@dataclass(frozen=True, slots=True)
class Configuration:
    """One named configuration: its settings, how a finding that needs it is described
    ("only with nested graph breaks: the upcoming default") and the line a reproducer
    prints above its settings."""

    name: str
    settings: tuple[tuple[str, str], ...] = ()  # (dotted name, repr of the value), as Changes
    needs: str = ""  # the what-matters phrase of a bug that shows only under it
    why: str = ""  # for the reproducer's comment and the report: whether users run it, and who

    @property
    def is_default(self) -> bool:
        return not self.settings

    def lines(self) -> list[str]:
        """The settings as a reproducer sets them, with a comment saying why."""
        if not self.settings:
            return []
        modules = sorted({name.rsplit(".", 1)[0] for name, _ in self.settings})
        return [f"# the configuration {self.name!r}: {self.why}",
                *(f"import {module}" for module in modules),
                *(f"{name} = {value}" for name, value in self.settings)]

    def construct(self) -> str:
        """The configuration as "what matters" names it among a reduced program's constructs."""
        return CONSTRUCT_PREFIX + self.describe()

    def describe(self) -> str:
        """`nested-graph-breaks (torch._dynamo.config.nested_graph_breaks = True)`."""
        if not self.settings:
            return f"{self.name} (Dynamo as it ships)"
        return f"{self.name} ({', '.join(f'{name.rsplit(chr(46), 1)[1]} = {value}' for name, value in self.settings)})"


_DYNAMO = "torch._dynamo.config."

CONFIGURATIONS: dict[str, Configuration] = {c.name: c for c in (
    Configuration(DEFAULT),
    Configuration(
        "nested-graph-breaks", ((_DYNAMO + "nested_graph_breaks", "True"),),
        needs="only with nested graph breaks (off by default; the upcoming default)",
        why="nested graph breaks, off by default in torch 2.15 and the upcoming default (pytorch/pytorch#186100); "
            "PyTorch's own Dynamo tests run with them (torch._dynamo.test_case.TestCase.setUp)"),
    Configuration(
        "dynamic", ((_DYNAMO + "assume_static_by_default", "False"),
                    (_DYNAMO + "automatic_dynamic_shapes", "False")),
        needs="only with dynamic shapes (torch.compile(dynamic=True), or assume_static_by_default = False)",
        why="dynamic shapes from the first compile, as torch.compile(dynamic=True) asks for"),
    Configuration(
        "scalar-outputs", ((_DYNAMO + "capture_scalar_outputs", "True"),
                           (_DYNAMO + "capture_dynamic_output_shape_ops", "True")),
        needs="only when Dynamo captures scalar outputs and data-dependent shapes (capture_scalar_outputs)",
        why="Dynamo captures .item() and data-dependent output shapes instead of breaking the graph, as "
            "export and TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS=1 users have it"),
    Configuration(
        "forced-graph-breaks", ((_DYNAMO + "nested_graph_breaks", "True"),
                                (_DYNAMO + "debug_force_graph_break_on_leaf_return", "True")),
        needs="only with forced graph breaks (a nested graph break at every return of a function that inlines no call)",
        why="a graph break at every return of a function that inlines no call, resumed nested: how PyTorch's "
            "strongly wrapped Dynamo tests exercise graph-break resumption (a testing setting; the break is one a "
            "torch._dynamo.graph_break() before that return would make)"),
    Configuration(
        "graph-dedup", ((_DYNAMO + "use_graph_deduplication", "True"),),
        needs="only with graph deduplication (use_graph_deduplication: identical regions of a graph become one "
              "invoke_subgraph)",
        why="Dynamo replaces identical regions of the graph it captured with calls of one subgraph "
            "(invoke_subgraph), as users of models with repeated blocks turn on to cut compile time"),
)}

# what `mutate fuzz --configs` takes unless told otherwise (chosen by bench/yield.py's returning runs)
CAMPAIGN_CONFIGURATIONS: tuple[str, ...] = tuple(CONFIGURATIONS)


class ConfigurationError(ValueError):
    """A configuration name that is not one of CONFIGURATIONS; the message names them."""


def configuration(name: str) -> Configuration:
    """The configuration named `name`; raises ConfigurationError naming the known ones."""
    found = CONFIGURATIONS.get(name)
    if found is None:
        raise ConfigurationError(f"unknown configuration {name!r}; the known ones: {', '.join(CONFIGURATIONS)}")
    return found


def parse_names(text: str) -> tuple[str, ...]:
    """`default,nested-graph-breaks` (or `all`) as names, in order, each once; raises
    ConfigurationError for an unknown one or none."""
    names: list[str] = []
    for name in (part.strip() for part in text.split(",")):
        if not name:
            continue
        for one in (CONFIGURATIONS if name == "all" else [configuration(name).name]):
            if one not in names:
                names.append(one)
    if not names:
        raise ConfigurationError(f"no configuration named; the known ones: {', '.join(CONFIGURATIONS)}")
    return tuple(names)


def set_in(source: str) -> str:
    """The configuration a script sets line by line (`torch._dynamo.config.x = True`, as a
    reproducer sets it), the one with the most settings; DEFAULT when none."""
    lines = {line.strip() for line in source.splitlines()}
    found = [c for c in CONFIGURATIONS.values()
             if c.settings and all(f"{name} = {value}" in lines for name, value in c.settings)]
    return max(found, key=lambda c: len(c.settings)).name if found else DEFAULT
