"""E1: CPU bfloat16 autocast chosen via nullcontext, entered through an ExitStack."""
import contextlib

import torch


class Block(torch.nn.Module):
    def __init__(self, use_amp):
        super().__init__()
        self.fc1 = torch.nn.Linear(6, 8)
        self.fc2 = torch.nn.Linear(8, 4)
        self.use_amp = use_amp

    def forward(self, x):
        ctx = (torch.autocast("cpu", dtype=torch.bfloat16)
               if self.use_amp else contextlib.nullcontext())
        with ctx:
            h = self.fc1(x)
            h = torch.relu(h)
        with torch.autocast("cpu", enabled=False):
            h32 = h.float()
            out = self.fc2(h32)
        return out, h.dtype, out.dtype


class Stack(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = Block(True)
        self.b = Block(False)

    def forward(self, x):
        with contextlib.ExitStack() as stack:
            stack.enter_context(torch.no_grad())
            ya, dta, _ = self.a(x)
            yb, dtb, _ = self.b(x)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            mixed = torch.mm(x, x.t())
            nested_dtype = mixed.dtype
            with torch.autocast("cpu", enabled=False):
                full = torch.mm(x, x.t())
        return ya + yb, mixed.float(), full, str(dta), str(dtb), str(nested_dtype), ya.requires_grad


fn = Stack()


def inputs():
    return (torch.randn(3, 6).round(decimals=1),)
