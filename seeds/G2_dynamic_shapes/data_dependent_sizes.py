"""G2: data-dependent sizes from nonzero, masked_select and int(t.sum()) used to build new tensors."""
import torch


class Selector(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.score = torch.nn.Linear(3, 1)

    def forward(self, x, mask):
        picked = torch.masked_select(x, mask.unsqueeze(-1).expand_as(x))
        rows = mask.nonzero().squeeze(-1)
        sub = x.index_select(0, rows)
        k = int(mask.sum())
        ranks = torch.arange(k, dtype=x.dtype)
        s = self.score(sub).squeeze(-1) + ranks
        return picked.view(-1, 3).mean(0), s, k


fn = Selector()


def inputs():
    return (torch.randn(6, 3), torch.tensor([True, False, True, True, False, False]))


def drive(f):
    outs = []
    masks = [
        [True, False, True, True, False, False],
        [False, True, False, False, False, True],
        [True, True, True, True, True, False],
        [False, False, False, True, False, False],
    ]
    for m in masks:
        outs.append(f(torch.randn(6, 3), torch.tensor(m)))
    return outs
