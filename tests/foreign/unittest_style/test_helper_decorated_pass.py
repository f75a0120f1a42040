# expect: PASS
# why: tests decorated with torch's make_dynamo_test compile their own body (eagerly once, then with optimize_assert under a CompileCounter backend, no graph break allowed); nothing in the file says torch.compile, and every check holds compiled

import torch._dynamo
from torch._dynamo.test_case import TestCase, run_tests
from torch.testing._internal.common_utils import make_dynamo_test


class SetsAndDicts(TestCase):
    def setUp(self):
        super().setUp()
        self._traced_before = torch._dynamo.config.enable_trace_unittest
        torch._dynamo.config.enable_trace_unittest = True  # the assertions are traced too

    def tearDown(self):
        torch._dynamo.config.enable_trace_unittest = self._traced_before
        super().tearDown()

    @make_dynamo_test
    def test_union_of_sets(self):
        left, right = {1, 2, 5}, {2, 3}
        self.assertEqual(left | right, {1, 2, 3, 5})
        self.assertEqual(len(left & right), 1)

    @make_dynamo_test
    def test_sorted_items(self):
        weights = dict(beta=2, alpha=1)
        weights["gamma"] = 3
        self.assertEqual(sorted(weights.items()), [("alpha", 1), ("beta", 2), ("gamma", 3)])


if __name__ == "__main__":
    run_tests()
