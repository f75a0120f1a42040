"""Every operator we ship, by id and by family."""

from __future__ import annotations

from collections import defaultdict

from mutator.mutation.operator import Operator
# Importing a module registers its operators (they subclass Operator).
from mutator.mutation.operators import (  # noqa: F401
    attribute_access,
    attribute_updates,
    bound_methods,
    closures,
    container_mutation,
    container_types,
    contexts,
    conversion,
    descriptors,
    exceptions,
    global_state,
    inlining,
    iteration,
    magic_methods,
    missing_guards,
    object_init,
    others,
    shapes,
    splice,
    structure,
    tensor_mutation,
    value_guards,
)


def all_operators() -> tuple[type[Operator], ...]:
    found: list[type[Operator]] = []
    work = list(Operator.__subclasses__())
    while work:
        cls = work.pop(0)
        if "name" in cls.__dict__ and cls not in found:  # one with two operator bases is reached twice
            found.append(cls)
        work.extend(cls.__subclasses__())
    return tuple(sorted(found, key=lambda op: op.id))


def by_id() -> dict[str, type[Operator]]:
    return {op.id: op for op in all_operators()}


def by_family() -> dict[str, list[type[Operator]]]:
    families: dict[str, list[type[Operator]]] = defaultdict(list)
    for op in all_operators():
        families[op.family].append(op)
    return dict(families)
