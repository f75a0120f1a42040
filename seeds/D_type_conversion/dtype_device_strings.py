"""D: dtype/device strings, x.type() strings, None comparisons and string truthiness steering conversions in a Module."""
import torch

DTYPES = {"half": torch.float16, "double": torch.float64, "": None}


class Caster(torch.nn.Module):
    def __init__(self, precision="double", device="cpu"):
        super().__init__()
        self.precision = precision
        self.device_name = device
        self.tag = ""
        self.lin = torch.nn.Linear(3, 3)

    def forward(self, x, mask=None):
        h = self.lin(x)
        target = DTYPES.get(self.precision)
        if target is not None:
            h = h.to(target)
        h = h.to(self.device_name)
        kind = h.type()
        if kind == "torch.DoubleTensor":
            h = h * 2
        if mask is not None:
            h = h.masked_fill(mask, 0.0)
        if not self.tag:
            h = h + 1
        name = str(h.dtype).split(".")[-1]
        back = h.type(torch.float32)
        same_dev = h.device == torch.device("cpu") and str(h.device) == "cpu"
        as_str = x.to(dtype=getattr(torch, name))
        return back, h, kind, name, same_dev, as_str.dtype == h.dtype


fn = Caster()


def inputs():
    return (torch.randn(2, 3),)


def drive(f):
    outs = [f(torch.randn(2, 3))]
    outs.append(f(torch.randn(2, 3), torch.tensor([[True, False, True], [False, False, True]])))
    fn.precision = ""
    fn.tag = "x"
    outs.append(f(torch.randn(2, 3)))
    return outs
