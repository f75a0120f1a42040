"""The executors: where programs run. The local warm pool (`pool`) and Ray actors (`ray`)
have one interface (`submit` a run, `submit_check` a check task, `health`, `wait_ready`,
`close`), their workers one body (`worker`), one protocol and wire format, one sandbox."""

from __future__ import annotations


class ExecutorError(RuntimeError):
    """An executor cannot work at all (its workers fail to start, its cluster is out of
    reach); never about a program. The message says what to do."""
