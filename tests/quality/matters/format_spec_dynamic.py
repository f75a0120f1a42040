"""An integer format spec on a size under `dynamic=True`; `vmap` is padding (the crash
needs only the spec on a symbolic size)."""
import torch

COMPILE_KWARGS = {"dynamic": True}


def fn(x):
    def per_row(row):
        label = f"{row.shape[0]:d}"
        return row * len(label)

    return torch.func.vmap(per_row)(x)


def inputs():
    return torch.ones(3, 4)
