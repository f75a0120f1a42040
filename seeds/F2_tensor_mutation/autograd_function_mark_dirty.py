"""F2: custom autograd.Function mutating its input in place (mark_dirty) and saving mutated tensors."""
import torch


class ScaleInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, factor):
        x.mul_(factor)
        ctx.mark_dirty(x)
        ctx.factor = factor
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.factor, None


class ShiftSave(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, shift):
        y = x + shift
        ctx.save_for_backward(y)
        return y * y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return 2 * y * grad, None


def fn(w, x):
    h = w * x
    h = ScaleInPlace.apply(h, 3.0)
    buf = torch.ones_like(h)
    buf.add_(h.detach())
    out = ShiftSave.apply(h, 0.5)
    return out.sum() + buf.sum()


def inputs():
    return (torch.randn(4, requires_grad=True), torch.randn(4))


def drive(f):
    w = torch.randn(4, requires_grad=True)
    x = torch.randn(4)
    grads = []
    for i in range(2):
        loss = f(w, x + i)
        loss.backward()
        grads.append(w.grad.clone())
        w.grad = None
    return grads
