# expect: PASS
# why: a two-layer MLP gives the same output eager and compiled, so the script's own allclose holds in both runs

import torch
import torch.nn as nn

torch.manual_seed(0)


class TinyMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 12)
        self.fc2 = nn.Linear(12, 3)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        return self.fc2(h).tanh()


model = TinyMLP().eval()
inp = torch.randn(4, 6)

with torch.no_grad():
    expected = model(inp)
    compiled_model = torch.compile(model, backend="eager")
    got = compiled_model(inp)

assert torch.allclose(expected, got, atol=1e-6), (expected - got).abs().max()
print("max diff", float((expected - got).abs().max()))
print("ok")
