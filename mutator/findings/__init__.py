"""A bug's identity and its directory (docs/design.md, "findings"): `store` (a `Signature`,
a `Finding` and `findings/<signature>/` on disk), `canonical` (the form two reduced
programs of one bug share), `known` (bugs filed before, `--known`), `root_cause` (findings
of two signatures that are one bug). Imports core, mutation and judge."""
