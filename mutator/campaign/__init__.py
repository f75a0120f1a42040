"""The campaign (docs/design.md, "campaign"): `fuzzer` (the loop: seed, choose, mutate, run,
judge, keep), `lane` (the interface of the work beside it) and `lanes/` (repair, the LLM's
family L, sync with peers, background reduction), `filing` (bug verdicts into findings or
known.json), `checkpoint` and `stats` (stats.json, coverage.bin, plot_data.csv; resume),
`directory` (the campaign directory, the interface to disk), `corpus` (the queue and the
coverage map), `schedule` (power schedules), `sync` (AFL-style peers), `ui` (the live
screen), `plot`, `minimize` (afl-cmin). The top layer below the command line: it may import
every other package."""
