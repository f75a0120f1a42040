"""The executors: where programs run. The local warm pool (`pool`) and Ray actors (`ray`)
have one interface (`submit` a run, `submit_check` a check task, `health`, `wait_ready`,
`close`), their workers one body (`worker`), one protocol and wire format, one sandbox."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mutator.core.build import Build

if TYPE_CHECKING:
    from mutator.core.observation import RunConfig
    from mutator.exec.protocol import Ready


class ExecutorError(RuntimeError):
    """An executor cannot work at all (its workers fail to start, its cluster is out of
    reach); never about a program. The message says what to do."""


class ReadyWorkers:
    """What the pool and the Ray executor say alike of the workers that warmed up: their
    confinement and the build of torch they run. Needs `config` and `ready` on the executor."""

    config: RunConfig
    ready: list[Ready]

    def sandbox(self) -> str:
        """The confinement of this executor's runs ("landlock ABI 7", "audit hooks", "off")."""
        from mutator.exec.sandbox import describe

        return describe(self.config.sandbox, [ready.sandbox for ready in self.ready])

    @property
    def configurations(self) -> tuple[str, ...]:
        """The Dynamo configurations every ready worker's torch has (`mutator.core.configurations`)."""
        if not self.ready:
            return ("default",)
        return tuple(name for name in self.ready[0].configurations
                     if all(name in ready.configurations for ready in self.ready))

    @property
    def tracer(self) -> str:
        """What records the compiled runs' arcs, as the first ready worker said ("" without arcs)."""
        return self.ready[0].tracer if self.ready else ""

    @property
    def build(self) -> Build:
        """The torch under test and the Python running it, as the first ready worker said."""
        return self.ready[0].build if self.ready else Build()
