"""B2: list/dict mutation inside comprehensions and a generator, update() from a generator, and setdefault."""
import torch


LOG = []


def tracked(name, t, sink):
    sink.append(name)
    return t * 2


class Collector(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.cache = {}

    def gen_pairs(self, feats):
        for i, f in enumerate(feats):
            self.cache[f"g{i}"] = f.sum()
            yield f"p{i}", f.mean()

    def forward(self, x):
        feats = [self.lin(x[i]) for i in range(x.shape[0])]
        seen = []
        doubled = [tracked(f"f{i}", f, seen) for i, f in enumerate(feats)]
        counts = {}
        _ = [counts.setdefault(len(n), []).append(n) for n in seen]
        table = {"base": x.sum()}
        table.update(self.gen_pairs(doubled))
        table.update((k + "_sq", v * v) for k, v in list(table.items()) if k.startswith("p"))
        bucket = self.cache.setdefault("bucket", torch.zeros(4))
        LOG.extend(sorted(table))
        total = sum(table.values()) + sum(self.cache[k] for k in sorted(self.cache) if k != "bucket")
        return total + bucket.sum(), seen, {k: len(v) for k, v in counts.items()}


fn = Collector()


def inputs():
    return (torch.randn(3, 4),)


def drive(f):
    outs = []
    for i in range(2):
        fn.cache.pop("bucket", None)
        outs.append(f(torch.randn(3, 4)))
    return outs


def state():
    return list(LOG), sorted(fn.cache)
