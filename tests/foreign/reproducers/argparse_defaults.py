# expect: PASS
# why: a reproducer with command-line options run with none: argparse reads sys.argv, which holds only the script's name

import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--size", type=int, default=6)
parser.add_argument("--scale", type=float, default=0.5)
args = parser.parse_args()


@torch.compile(backend="eager")
def scaled_norm(x):
    return (x * args.scale).norm()


value = scaled_norm(torch.arange(float(args.size)))
print(f"norm={value.item():.4f}")
