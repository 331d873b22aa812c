"""The cases of graph-autocast-rank0.mlir under PyTorch's own autocast.

Prints one line per case, `NAME DTYPE`, the dtype the op's result has under
torch.autocast (CPU autocast: for these ops, which are on no autocast list,
the dtype comes from PyTorch's type promotion, the same on CPU and CUDA).
Usage: python torch_autocast_rank0.py fp16|bf16
"""
import sys

import torch

half = {"fp16": torch.float16, "bf16": torch.bfloat16}[sys.argv[1]]
x = torch.randn(4, 8)
w = torch.randn(8, 8)
c = torch.tensor([[1], [0], [1], [0]], dtype=torch.bool)
t = torch.nn.Parameter(torch.tensor(1.5))   # rank-0 FP32 parameter
b = torch.nn.Parameter(torch.zeros(8))
one = torch.nn.Parameter(torch.zeros(1))    # dimensioned, one element

with torch.autocast("cpu", dtype=half):
    # CPU autocast lowers matmul for bf16 and fp16 alike in PyTorch 2.x.
    h = x @ w
    cases = {
        "matmul": h,
        "mul_scalar_param": h * t,
        "div_constant": h / torch.tensor(2.0),
        "add_scalar_first": t + h,
        "maximum_scalar": torch.maximum(h, t),
        "where_scalar": torch.where(c, h, t),
        "add_vector": h + b,
        "sub_one_element": h - one,
        "mul_two_scalars": h.mean() * t,
    }
for name, v in cases.items():
    print(name, str(v.dtype).replace("torch.", ""))
