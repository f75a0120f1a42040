# expect: PASS
# why: all work happens in main() under if __name__ == "__main__"; a small conv block compiled with backend="eager" matches eager

import torch
import torch.nn as nn


def fn(model, x):
    return model(x).flatten(1).mean(1)


def inputs():
    torch.manual_seed(8)
    model = nn.Sequential(nn.Conv2d(1, 2, 3, padding=1), nn.ReLU()).eval()
    return model, torch.randn(2, 1, 5, 5)


def main():
    model, x = inputs()
    with torch.no_grad():
        got = torch.compile(fn, backend="eager")(model, x)
        want = fn(model, x)
    torch.testing.assert_close(got, want)
    print("per-sample means:", [round(v, 4) for v in got.tolist()])


if __name__ == "__main__":
    main()
