"""The `mutate` commands, one module per command: `run`, `fuzz`, `harvest`, `generate`,
`minimize`, `reduce`, `report`, `plot`, and `ops` with the operator-facing two (`mutate ops`,
`mutate mutate`). What several commands share (the exit statuses, `run_options`,
`Duration`) is in `common`, the progress of their batch work in `progress`. Each module
defines its click command; `cli.py` registers them on the `mutate` group, and only the
commands wire the parts together."""
