# expect: PASS
# why: the script sends its own log records to stdout and its compiled function graph-breaks; torch's own logging must not leak into what is compared

import logging
import sys

import torch

logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(name)s %(levelname)s %(message)s")
log = logging.getLogger("trainer")


class Counter(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.steps = 0

    def forward(self, x):
        self.steps += 1
        return x * 2


model = Counter()
opt = torch.compile(model, backend="eager")
for step in range(3):
    out = opt(torch.full((2,), float(step)))
    log.info("step %d sum %.1f", step, out.sum().item())
