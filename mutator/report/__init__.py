"""What `mutate report` writes (docs/design.md, "report"): `issue` (report.md after
PyTorch's pt2 bug template and the summary row), `matters` (its "what matters" section),
`campaigns` (each signature once across campaign directories), `versions` (on which torch
a finding fails: the record and its status), `version_judge` (judging a finding on several
torches) and `releases` (release dates and the nightly bisect). Imports findings and reduce,
never the campaign."""
