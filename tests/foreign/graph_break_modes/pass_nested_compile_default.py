# expect: PASS
# why: without fullgraph, a compiled function that compiles a helper itself and calls it: Dynamo inlines the helper (a nested torch.compile is a no-op while it traces); the value and the program's own check agree

import torch

history = []


def normalise(t):
    return (t - t.mean()) / (t.std() + 1e-6)


def score(x):
    norm = torch.compile(normalise, backend="eager")(x)
    history.append(norm.shape[0])
    return norm.abs().max()


compiled_score = torch.compile(score, backend="eager")
for n in (5, 5):
    value = compiled_score(torch.arange(float(n)) ** 2)
    print(n, round(value.item(), 4))
assert history == [5, 5]
