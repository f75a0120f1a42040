# expect: INVALID
# why: torch._dynamo.optimize takes no save_config keyword and raises TypeError in both runs: our stand-in for it must refuse what the real one refuses, not drop the keyword and compile

import torch
import torch._dynamo


@torch._dynamo.optimize("eager", save_config=False)
def double(x):
    return x * 2


print(double(torch.ones(2)))
