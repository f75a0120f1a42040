"""E2: custom exception classes raised, re-raised with raise ... from, and caught inside the compiled function."""
import torch


class ShapeError(Exception):
    pass


class RankError(ShapeError):
    def __init__(self, rank, msg="bad rank"):
        super().__init__(msg)
        self.rank = rank


class PipelineError(RuntimeError):
    pass


def check(x, want):
    if x.dim() != want:
        raise RankError(x.dim())
    return x


def stage(x, want):
    try:
        return check(x, want) * 2
    except ShapeError as e:
        raise PipelineError("stage failed") from e


def fn(x, y):
    acc = torch.zeros(())
    codes = []
    for t, want in ((x, 2), (y, 2), (x, 3)):
        try:
            acc = acc + stage(t, want).sum()
        except PipelineError as err:
            cause = err.__cause__
            if isinstance(cause, RankError):
                codes.append(cause.rank)
                acc = acc - cause.rank
            else:
                codes.append(-1)
    try:
        raise RankError(7, "direct")
    except (KeyError, ShapeError) as e:
        codes.append(e.rank + len(e.args))
    return acc, codes


def inputs():
    return (torch.randn(2, 3), torch.randn(4))
