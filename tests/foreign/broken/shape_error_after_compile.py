# expect: INVALID
# why: the compiled call itself is fine, but the script then multiplies a (3, 4) result by a (5, 2) matrix in plain Python, a RuntimeError in both runs

import torch


def project(x):
    return x.relu() + 1


x = torch.arange(12.0).view(3, 4) - 6
y = torch.compile(project, backend="eager")(x)
weights = torch.ones(5, 2)
z = y @ weights
print(z.shape)
