# expect: PASS
# why: a test file in PyTorch's own style: torch._dynamo.test_case.TestCase with a CompileCounter, run through run_tests(); its checks of frame counts fail only in the eager run

import torch
import torch._dynamo.test_case
import torch._dynamo.testing


class AddTests(torch._dynamo.test_case.TestCase):
    def test_add_one_frame(self):
        cnt = torch._dynamo.testing.CompileCounter()

        def f(a, b):
            return a + b * 2

        opt = torch.compile(f, backend=cnt)
        a, b = torch.ones(3), torch.arange(3.0)
        self.assertEqual(opt(a, b), f(a, b))
        self.assertEqual(cnt.frame_count, 1)


if __name__ == "__main__":
    from torch._dynamo.test_case import run_tests

    run_tests()
