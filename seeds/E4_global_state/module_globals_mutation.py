"""E4: module globals mutated inside the compiled forward and by drive between calls, with a dynamo reset mid-run."""
import torch

SCALE = 1.0
STEP = 0
HISTORY = []
MODE = "sum"


class Logger(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)

    def forward(self, x):
        global STEP, SCALE
        STEP += 1
        h = self.lin(x) * SCALE
        if MODE == "sum":
            r = h.sum(dim=0)
        else:
            r = h.amax(dim=0)
        HISTORY.append(STEP)
        if STEP % 2 == 0:
            SCALE = SCALE * 0.5
        return r + STEP


fn = Logger()


def inputs():
    return (torch.randn(2, 3),)


def drive(f):
    global MODE, SCALE
    outs = []
    x = torch.randn(2, 3)
    for i in range(4):
        outs.append(f(x))
        if i == 1:
            MODE = "max"
        if i == 2:
            SCALE = 3.0
            torch._dynamo.reset()
    return outs


def state():
    return STEP, SCALE, MODE, list(HISTORY)
