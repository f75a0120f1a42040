# expect: PASS
# why: a module-level logging.getLogger logger records progress around compiled calls; logging does not change the values, which match eager

import logging
import torch

logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
log = logging.getLogger("mytrainer")


def loss_fn(pred, target):
    return ((pred - target) ** 2).mean()


compiled_loss = torch.compile(loss_fn, backend="eager")

torch.manual_seed(4)
history = []
for step in range(3):
    pred, target = torch.randn(5), torch.randn(5)
    value = compiled_loss(pred, target)
    torch.testing.assert_close(value, loss_fn(pred, target))
    history.append(round(value.item(), 5))
    log.info("step %d loss %.4f", step, value.item())

print("losses:", history)
