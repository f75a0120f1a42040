"""Operators, one module per taxonomy family (or part of one); `registry` collects them.

Modules named with a leading underscore hold what the family modules share, and define
no operator of their own:

- `_templates`: turning template text into code, module-level helpers, parenthesising.
- `_positions`: bases that track where the visit stands (scopes, stores, value sites).
- `_blocks`: bases for sites that are blocks and statements of region functions (E*).
- `_routing`: routers, which pass a region value through a construct built on the spot (A*).
- `_region`: `RegionMap`, where region nodes sit, and its operator base (X, O).
- `_facts`, `_tensor_facts`: static facts about a program's classes, inputs and tensors (F*, G*).
- `_driver`: the base of the operators that add calls in the driver (G*).

Generic queries over libcst trees live in `mutator.mutation.tree`.
"""
