# expect: MISMATCH check
# why: the function returns a different count when torch.compiler.is_compiling() is True, so the test's assertEqual fails only compiled

import unittest
import torch


def count_positive(x):
    n = (x > 0).sum()
    if torch.compiler.is_compiling():
        n = n + 1
    return n


class CountTest(unittest.TestCase):
    def test_count(self):
        x = torch.tensor([-1.0, 0.5, 2.0, -3.0, 4.0])
        opt = torch.compile(count_positive, backend="eager")
        self.assertEqual(opt(x).item(), count_positive(x).item())
        self.assertEqual(opt(x).item(), 3)


if __name__ == "__main__":
    unittest.main()
