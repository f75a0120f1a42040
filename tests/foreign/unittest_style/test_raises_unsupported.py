# expect: PASS
# why: the test expects fullgraph=True to raise torch._dynamo.exc.Unsupported on a call to a torch._dynamo.disable'd function; true under real compilation

import unittest
import torch
import torch._dynamo


@torch._dynamo.disable
def opaque(x):
    return x + 1


def uses_opaque(x):
    return opaque(x * 2) - 1


class FullgraphTest(unittest.TestCase):
    def setUp(self):
        torch._dynamo.reset()

    def test_fullgraph_rejects_disabled_call(self):
        strict = torch.compile(uses_opaque, backend="eager", fullgraph=True)
        with self.assertRaises(torch._dynamo.exc.Unsupported):
            strict(torch.ones(2))

    def test_default_mode_still_works(self):
        opt = torch.compile(uses_opaque, backend="eager")
        self.assertTrue(torch.equal(opt(torch.ones(2)), torch.full((2,), 2.0)))


if __name__ == "__main__":
    unittest.main()
