# expect: MISMATCH
# why: after object.__setattr__ puts a new Linear in the module's __dict__ (shadowing the old one in _modules), Python's attribute lookup uses the new one; the compiled module keeps calling the old one

import torch


class Head(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(3, 2)

    def forward(self, x):
        return self.proj(x).tanh()


torch.manual_seed(0)
head = Head()
compiled_head = torch.compile(head, backend="eager")
x = torch.randn(4, 3)
before = compiled_head(x)
object.__setattr__(head, "proj", torch.nn.Linear(3, 2))
after = compiled_head(x)
print("changed:", not torch.allclose(before, after))
