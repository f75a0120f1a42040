# expect: PASS
# why: the script asserts that fullgraph=True rejects a print() graph break with Unsupported; under real compilation the except branch runs and the check passes

import torch
import torch._dynamo


def chatty(x):
    y = x.abs()
    print("norm is being computed")
    return y.sum()


strict = torch.compile(chatty, backend="eager", fullgraph=True)
x = torch.tensor([1.0, 2.0, -0.5])
try:
    strict(x)
except torch._dynamo.exc.Unsupported as err:
    print("rejected as expected:", type(err).__name__)
else:
    raise AssertionError("fullgraph=True should have refused the graph break")

lenient = torch.compile(chatty, backend="eager")
torch.testing.assert_close(lenient(x), torch.tensor(3.5))
print("lenient compile ok")
