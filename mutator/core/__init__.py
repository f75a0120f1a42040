"""What a program and one run of it are (docs/design.md, "core"): `program` (a source file
in harness or script form), `values` and `observation` (what a run saw, as torch-free
frozen data), `verdict`, `features` (what counts as new coverage), `storage` (atomic
writes) and `parsing` (`ast.parse` under one lock). Imports nothing else of mutator."""
