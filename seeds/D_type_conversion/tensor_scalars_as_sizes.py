"""D: 0-d tensor values and tensor.size() entries used as sizes/indices, new_tensor/new_zeros/new_full conversions."""
import torch


def fn(x, n):
    rows = int(n)
    base = x.new_zeros(rows, x.size(1))
    fill = x.new_full((rows,), float(n) / 2)
    idx = x.new_tensor([0, x.shape[0] - 1], dtype=torch.long)
    picked = x[idx]
    width = torch.tensor(x.shape[1])
    cols = torch.arange(int(width) // 2)
    part = x[:, cols]
    reps = (n % 3 + 1).item() if isinstance(n, torch.Tensor) else n % 3 + 1
    tiled = part.repeat(1, int(reps))
    sized = torch.ones(x.size()) * x.numel()
    lst = x.new_tensor([x.shape[0], float(width), n])
    return base + fill[:, None], picked.sum(), tiled, sized, lst


def inputs():
    return (torch.randn(3, 4), torch.tensor(4))


def drive(f):
    return [f(torch.randn(3, 4), torch.tensor(4)), f(torch.randn(3, 4), 5), f(torch.randn(3, 4), torch.tensor(4))]
