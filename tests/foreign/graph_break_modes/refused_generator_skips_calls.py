# expect: PASS
# why: the script expects Dynamo to refuse (fullgraph=True) advancing a generator made outside the compiled function; the refusal jumps out of the try block, so the compiled run makes one call where eager makes two and then fails the script's check: the call the handler skipped has no counterpart
import torch
from torch._dynamo.exc import Unsupported


def ticks():
    yield 10
    yield 20
    yield 30


@torch.compile(fullgraph=True, backend="eager")
def advance(source, scale):
    return next(source) * scale


stream = ticks()
next(stream)
try:
    advance(stream, 2)
    advance(stream, 3)
except Unsupported:
    print("refused, as expected")
else:
    raise AssertionError("expected Dynamo to refuse a generator made outside the compiled function")
