# expect: PASS
# why: mask.tolist() then an explicit graph_break() and Python use of the list; different masks over 5 calls cause a few legitimate recompiles and identical results

import torch
import torch._dynamo


def select_rows(x, mask):
    keep = mask.tolist()
    torch._dynamo.graph_break()
    rows = [x[i] for i, k in enumerate(keep) if k]
    return torch.stack(rows).sum(0) if rows else x.new_zeros(x.shape[1])


opt = torch.compile(select_rows, backend="eager")
x = torch.arange(12.0).view(4, 3)
masks = [[1, 0, 0, 1], [0, 1, 1, 0], [1, 1, 1, 1], [0, 0, 0, 1], [1, 0, 1, 0]]
sums = []
for m in masks:
    mask = torch.tensor(m, dtype=torch.bool)
    got = opt(x, mask)
    torch.testing.assert_close(got, select_rows(x, mask))
    sums.append(got.sum().item())
print(sums)
