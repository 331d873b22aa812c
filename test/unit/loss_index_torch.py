#!/usr/bin/env python3
"""PyTorch reference values for test/unit/CpuLossIndexTest.cpp.

Run with a PyTorch environment (e.g. /work/torchenv/bin/python); prints the
expected values the test asserts, computed in float32 by PyTorch itself
(torch.nn.functional), as C++ initializer lists (%.9g round-trips a float).
"""
import torch
import torch.nn.functional as F


def show(name, t):
    vals = t.detach().reshape(-1).tolist()
    if t.dtype.is_floating_point:
        body = ", ".join("%.9g" % v for v in vals)
    else:
        body = ", ".join(str(v) for v in vals)
    print("%s = {%s};" % (name, body))


# nll_loss on log-probabilities: rows 1 and 3 carry ignore_index (-100, 7).
lp = torch.tensor([[-0.25, -1.5, -2.0], [-3.0, -0.125, -4.5],
                   [-1.0, -0.75, -0.5], [-2.25, -5.0, -0.0625]])
y = torch.tensor([2, -100, 0, 1])
show("nllMean", F.nll_loss(lp, y))
show("nllSum", F.nll_loss(lp, y, reduction="sum"))
show("nllNone", F.nll_loss(lp, y, reduction="none"))
show("nllIgnore7", F.nll_loss(lp, torch.tensor([7, 7, 7, 7]), ignore_index=7))
lpg = lp.clone().requires_grad_(True)
F.nll_loss(lpg, y).backward()
show("nllGradMean", lpg.grad)

# binary_cross_entropy_with_logits, with and without pos_weight.
x = torch.tensor([[0.5, -2.0, 30.0], [-30.0, 0.0, 1.25]])
t = torch.tensor([[1.0, 0.0, 0.25], [1.0, 0.5, 0.0]])
pw = torch.tensor([2.0, 0.5, 3.0])
show("bceNone", F.binary_cross_entropy_with_logits(x, t, reduction="none"))
show("bceMean", F.binary_cross_entropy_with_logits(x, t))
show("bcePwNone", F.binary_cross_entropy_with_logits(
    x, t, pos_weight=pw, reduction="none"))
show("bcePwSum", F.binary_cross_entropy_with_logits(
    x, t, pos_weight=pw, reduction="sum"))

# cross_entropy with class-probability targets (and label smoothing).
z = torch.tensor([[1.0, 2.0, 0.5], [-1.0, 0.0, 3.0]])
p = torch.tensor([[0.25, 0.5, 0.25], [0.0, 0.125, 0.875]])
show("softCe", F.cross_entropy(z, p))
show("softCeSmooth", F.cross_entropy(z, p, label_smoothing=0.2))

# argmax (ties: the first index), gather, cumsum.
a = torch.tensor([[1.0, 3.0, 3.0, -1.0], [2.0, 2.0, 0.5, 2.0],
                  [-4.0, -3.0, -3.5, -3.0]])
show("argmaxAxis1", torch.argmax(a, dim=1))
show("argmaxAxis0", torch.argmax(a, dim=0))
gi = torch.tensor([[3, 0], [1, 1], [2, 0]])
show("gatherAxis1", torch.gather(a, 1, gi))
show("cumsumAxis1", torch.cumsum(a, dim=1))
show("cumsumAxis0", torch.cumsum(a, dim=0))
