"""The campaign (docs/design.md, "campaign"): `fuzzer` (the loop), `directory` (the campaign
directory, the interface to disk), `corpus` (the queue and the coverage map), `schedule`
(power schedules), `sync` (AFL-style peers), `ui` (the live screen), `plot`, `minimize`
(afl-cmin). The top layer below the command line: it may import every other package."""
