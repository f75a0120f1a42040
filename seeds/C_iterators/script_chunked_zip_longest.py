"""C: script form: a compiled module feeding zip_longest/islice/enumerate-chunked iterators, printing rounded results."""
import itertools
import torch

torch.manual_seed(0)


def chunks(seq, size):
    it = iter(seq)
    while True:
        block = list(itertools.islice(it, size))
        if not block:
            return
        yield block


class Pooler(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 2)

    def forward(self, rows, extras):
        pooled = []
        for idx, block in enumerate(chunks(rows, 2)):
            pooled.append(self.lin(torch.stack(block)).mean(0) * (idx + 1))
        out = torch.zeros(2)
        for p, e in itertools.zip_longest(pooled, extras, fillvalue=None):
            if p is None:
                out = out + e
            elif e is None:
                out = out + p
            else:
                out = out + p * e
        return out


model = Pooler()
compiled = torch.compile(model)

rows = [torch.randn(4) for _ in range(5)]
res = compiled(rows, [2.0, -1.0])
print("out", [round(v, 4) for v in res.tolist()])
res2 = compiled(rows[:3], [0.5, 0.5, 1.0, 3.0])
print("out2", [round(v, 4) for v in res2.tolist()])
ref = model(rows[:3], [0.5, 0.5, 1.0, 3.0])
print("match", torch.allclose(res2, ref))
