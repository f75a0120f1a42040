# expect: MISMATCH check
# why: a make_dynamo_test test whose body formats with an explicit spec: under Dynamo format(7, "03d") ignores the spec ('7', not '007'), so the test's own assertTrue fails only in the helper's compiled call

import torch._dynamo
from torch._dynamo.test_case import TestCase, run_tests
from torch.testing._internal.common_utils import make_dynamo_test


class Labels(TestCase):
    def setUp(self):
        super().setUp()
        self._traced_before = torch._dynamo.config.enable_trace_unittest
        torch._dynamo.config.enable_trace_unittest = True  # the assertions are traced too

    def tearDown(self):
        torch._dynamo.config.enable_trace_unittest = self._traced_before
        super().tearDown()

    @make_dynamo_test
    def test_padded_label(self):
        label = "step-" + format(7, "03d")
        self.assertTrue(label == "step-007", label)


if __name__ == "__main__":
    run_tests()
