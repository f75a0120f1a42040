"""Judging one program (docs/design.md, "judge"): `check` runs it eagerly and compiled
through an executor and confirms a bug verdict, `oracle` concludes a `Verdict` from two
runs, `compare` says where two observations differ, `breaks` and `storms` read what the
program asked of graph breaks and recompiles, `as_json` is a check as `mutate run --json`
prints it. Torch-free; imports core, mutation (building a mutant) and repair."""
