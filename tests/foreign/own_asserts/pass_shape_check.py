# expect: PASS
# why: view/permute/flatten bookkeeping is the same under Dynamo, so the shape asserts and equality hold in both runs

import torch


def to_patches(img, patch):
    c, h, w = img.shape
    x = img.view(c, h // patch, patch, w // patch, patch)
    x = x.permute(1, 3, 0, 2, 4)
    return x.flatten(2), x.flatten(0, 1).shape[0]


img = torch.arange(3 * 8 * 8, dtype=torch.float32).view(3, 8, 8)
compiled = torch.compile(to_patches, backend="eager")

out, count = compiled(img, 4)
ref, ref_count = to_patches(img, 4)
assert out.shape == (2, 2, 48), out.shape
assert count == ref_count == 4
assert torch.equal(out, ref)
print(out.shape, count)
