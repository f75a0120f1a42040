"""Repair of invalid mutants (docs/design.md, "Repair"): rules first, then, where configured, an LLM.

A mutant whose eager run fails is no test of the compiler; often a small edit makes it
one again without undoing what the operator did (an import it needs, a tensor size made
consistent with the one the operator changed). A `Repairer` receives the failure as a
`RepairRequest` and returns a closed result, `Repaired(program, how)` or
`NotRepaired(reason)`; it never raises. Whether a repair worked is decided like anything
else: the repaired program is checked, and only a valid one counts.
"""

from __future__ import annotations

from mutator.repair.request import NotRepaired, Repaired, RepairRequest, RepairResult
from mutator.repair.rules import RULES, repair_by_rules

__all__ = ["NotRepaired", "RULES", "Repaired", "RepairRequest", "RepairResult", "repair_by_rules"]
