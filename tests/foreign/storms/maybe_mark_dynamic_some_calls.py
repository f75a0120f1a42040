# expect: PASS
# why: torch._dynamo.maybe_mark_dynamic on some inputs lets Dynamo use a dynamic batch dim; a few legitimate recompiles happen and every output matches eager

import torch
import torch._dynamo


def row_softmax_sum(x):
    return x.softmax(-1).sum(0)


opt = torch.compile(row_softmax_sum, backend="eager")
torch.manual_seed(6)
for i, rows in enumerate([2, 3, 5, 7, 4]):
    x = torch.randn(rows, 6)
    if i % 2 == 1:
        torch._dynamo.maybe_mark_dynamic(x, 0)
    got = opt(x)
    torch.testing.assert_close(got, row_softmax_sum(x))
    assert abs(got.sum().item() - rows) < 1e-4
print("all sizes ok")
