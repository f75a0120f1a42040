# expect: PASS
# why: the test checks CompileCounter frame counts (one frame for repeated same-shape calls, one more after a dtype change); true under real compilation

import unittest
import torch
import torch._dynamo
from torch._dynamo.testing import CompileCounter


def square_plus(x):
    return x * x + 1


class FrameCountTest(unittest.TestCase):
    def setUp(self):
        torch._dynamo.reset()

    def test_reuse_then_recompile(self):
        cc = CompileCounter()
        opt = torch.compile(square_plus, backend=cc)
        for _ in range(3):
            opt(torch.ones(4))
        self.assertEqual(cc.frame_count, 1)
        opt(torch.ones(4, dtype=torch.float64))
        self.assertEqual(cc.frame_count, 2)
        self.assertEqual(cc.op_count, 4)


if __name__ == "__main__":
    unittest.main()
