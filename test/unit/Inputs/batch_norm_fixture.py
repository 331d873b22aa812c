"""Prints the expected values of test/unit/CpuBatchNormTest.cpp from PyTorch:
torch.nn.BatchNorm2d on a fixed [2, 3, 2, 2] input, one training call
(output, updated running statistics, gradients of sum(y * g)) and one
evaluation call on the updated statistics; torch.nn.GroupNorm(2, 4) on a
fixed [2, 4, 3] input (output and gradients).

    /work/torchenv/bin/python test/unit/Inputs/batch_norm_fixture.py
"""
import torch

torch.set_printoptions(precision=9)
x = (torch.arange(24, dtype=torch.float32).reshape(2, 3, 2, 2) * 0.37).sin() * 2 + 0.5
g = (torch.arange(24, dtype=torch.float32).reshape(2, 3, 2, 2) * 0.53).cos()
bn = torch.nn.BatchNorm2d(3, eps=1e-5, momentum=0.1)
with torch.no_grad():
    bn.weight.copy_(torch.tensor([1.5, -0.5, 2.0]))
    bn.bias.copy_(torch.tensor([0.25, 0.0, -1.0]))
    bn.running_mean.copy_(torch.tensor([0.1, -0.2, 0.3]))
    bn.running_var.copy_(torch.tensor([1.0, 2.0, 0.5]))
xr = x.clone().requires_grad_(True)
bn.train()
y = bn(xr)
(y * g).sum().backward()
bn.eval()
with torch.no_grad():
    ye = bn(x)


def literal(v):
    s = "%.9g" % v
    return s + ("f" if "." in s or "e" in s else ".0f")


def show(name, t):
    vals = ", ".join(literal(v) for v in t.detach().flatten().tolist())
    print("const float %s[] = {%s};" % (name, vals))


show("kX", x)
show("kG", g)
show("kTrainY", y)
show("kRunMean", bn.running_mean)
show("kRunVar", bn.running_var)
show("kEvalY", ye)
show("kDx", xr.grad)
show("kDw", bn.weight.grad)
show("kDb", bn.bias.grad)

# torch.nn.GroupNorm(2, 4) on a fixed [2, 4, 3] input: output and the
# gradients of sum(y * g).
xg = (torch.arange(24, dtype=torch.float32).reshape(2, 4, 3) * 0.71).cos() * 3 - 0.25
gg = (torch.arange(24, dtype=torch.float32).reshape(2, 4, 3) * 0.29).sin()
gn = torch.nn.GroupNorm(2, 4, eps=1e-5)
with torch.no_grad():
    gn.weight.copy_(torch.tensor([0.5, 1.25, -1.0, 2.0]))
    gn.bias.copy_(torch.tensor([0.0, 0.5, -0.25, 1.0]))
xgr = xg.clone().requires_grad_(True)
yg = gn(xgr)
(yg * gg).sum().backward()
show("kGnX", xg)
show("kGnG", gg)
show("kGnY", yg)
show("kGnDx", xgr.grad)
show("kGnDw", gn.weight.grad)
show("kGnDb", gn.bias.grad)
