# expect: PASS
# why: softmax/logsumexp reductions traced by Dynamo match eager, so assert_close passes in both runs

import torch

torch.manual_seed(1)


def attention_scores(q, k, temperature):
    logits = q @ k.transpose(-1, -2) / temperature
    probs = logits.softmax(dim=-1)
    lse = torch.logsumexp(logits, dim=-1)
    return probs.sum(dim=1), lse


q = torch.randn(2, 5, 4)
k = torch.randn(2, 5, 4)

ref = attention_scores(q, k, 2.0)
opt = torch.compile(attention_scores, backend="eager")
res = opt(q, k, 2.0)

for a, b in zip(ref, res):
    torch.testing.assert_close(a, b)
print("rows sum to one:", bool(torch.allclose(res[0].sum(-1), torch.full((2,), 5.0))))
