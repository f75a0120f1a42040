# expect: MISMATCH check
# why: builtin format(value, spec) inside the compiled function ignores the spec under Dynamo ('7' instead of '007'), so the label assert fails compiled

import torch


def tag_batch(x):
    label = "batch-" + format(7, "03d") + "-" + format(0.5, ".2f")
    return x * 2, label


x = torch.arange(4.0)
ref_t, ref_label = tag_batch(x)
out_t, out_label = torch.compile(tag_batch, backend="eager")(x)
print("reference label:", ref_label)
torch.testing.assert_close(out_t, ref_t)
assert out_label == ref_label, (out_label, ref_label)
print("labels match")
