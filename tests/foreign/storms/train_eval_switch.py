# expect: PASS
# why: alternating model.train()/model.eval() makes Dynamo keep two specialisations (dropout on/off) and reuse them; outputs agree with eager and no recompile limit is reached

import torch
import torch.nn as nn

torch.manual_seed(0)
net = nn.Sequential(nn.Linear(4, 4), nn.Dropout(p=0.5), nn.Linear(4, 1))
opt = torch.compile(net, backend="eager")

x = torch.randn(3, 4)
shapes = []
for step in range(6):
    if step % 2 == 0:
        net.train()
        out = opt(x)
        assert out.shape == (3, 1)
    else:
        net.eval()
        with torch.no_grad():
            out = opt(x)
            torch.testing.assert_close(out, net(x))
    shapes.append(tuple(out.shape))
print(shapes)
