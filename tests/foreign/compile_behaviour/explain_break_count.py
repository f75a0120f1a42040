# expect: PASS
# why: torch._dynamo.explain reports one graph break for a function with one explicit graph_break(); the asserts on the explanation hold

import torch
import torch._dynamo


def two_stage(x):
    a = x.exp()
    torch._dynamo.graph_break()
    b = a.log1p()
    return b * 2


x = torch.arange(6.0).reshape(2, 3)
explanation = torch._dynamo.explain(two_stage)(x)
assert explanation.graph_break_count == 1, explanation.graph_break_count
assert explanation.graph_count == 2, explanation.graph_count
print("graphs:", explanation.graph_count, "breaks:", explanation.graph_break_count)

out = torch.compile(two_stage, backend="eager")(x)
torch.testing.assert_close(out, x.exp().log1p() * 2)
