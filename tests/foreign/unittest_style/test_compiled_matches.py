# expect: PASS
# why: TestCase methods compile small functions with backend="eager" and assert equality with eager results; all tests pass in both runs

import unittest
import torch


def masked_fill_mean(x, mask):
    return x.masked_fill(~mask, 0.0).sum() / mask.sum()


class CompiledMatchesEager(unittest.TestCase):
    def test_masked_mean(self):
        x = torch.arange(8.0)
        mask = x % 2 == 0
        opt = torch.compile(masked_fill_mean, backend="eager")
        self.assertEqual(opt(x, mask).item(), masked_fill_mean(x, mask).item())

    def test_module(self):
        torch.manual_seed(0)
        lin = torch.nn.Linear(3, 2)
        x = torch.randn(4, 3)
        opt = torch.compile(lin, backend="eager")
        self.assertTrue(torch.allclose(opt(x), lin(x)))
        self.assertEqual(opt(x).shape, torch.Size([4, 2]))


if __name__ == "__main__":
    unittest.main()
