"""A2: module flags (training, custom booleans, per-submodule mode) read via attributes and getattr in forward, toggled between calls."""
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)
        self.drop = torch.nn.Dropout(p=0.0)
        self.use_skip = True
        self.temperature = 1.0

    def forward(self, x):
        h = self.drop(self.fc(x))
        if self.training:
            h = h * 2
        if getattr(self, "use_skip", False):
            h = h + x
        if not self.fc.training:
            h = h - 0.5
        h = h / self.temperature
        mode = getattr(self, "mode", "default")
        if mode == "half":
            h = h * 0.5
        return h, self.training, self.fc.training, mode


fn = Net()


def inputs():
    return (torch.randn(2, 4),)


def drive(f):
    results = [f(*inputs())]
    fn.eval()
    results.append(f(*inputs()))
    fn.train()
    fn.fc.train(False)  # only the submodule flips
    results.append(f(*inputs()))
    fn.use_skip = False
    fn.mode = "half"
    results.append(f(*inputs()))
    fn.temperature = 4.0
    del fn.mode
    results.append(f(*inputs()))
    return results
