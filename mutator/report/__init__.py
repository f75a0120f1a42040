"""What `mutate report` writes (docs/design.md, "report"): `issue` (report.md after
PyTorch's pt2 bug template and the summary row). Imports findings and reduce, never the
campaign."""
