"""The side of mutator that runs inside worker processes: it imports torch.

Nothing outside `mutator.runtime` and `mutator.exec.worker` may import this package: the
parent process (CLI, oracle, scheduler) never pays for `import torch`.
"""
