"""Loads a checkpoint of test/e2e/Inputs/cnn_bn.mlir (conv -> BatchNorm2d,
linear -> BatchNorm1d) into the equivalent nn.Module with
load_state_dict(strict=True): the running statistics and each BatchNorm's
num_batches_tracked (int64) are part of the state_dict. Prints the counters
and checks the module's eval-mode forward runs on the loaded statistics.

Usage: python torch_load_bn.py CHECKPOINT_STEP_DIR
"""
import json
import os
import struct
import sys

import torch

try:
    from safetensors.torch import load_file
except ImportError:
    # The same file format read with torch alone (F32 and I64 tensors, as
    # ampc writes them), where the safetensors package is not installed.
    def load_file(path):
        with open(path, "rb") as f:
            raw = f.read()
        (n,) = struct.unpack("<Q", raw[:8])
        header = json.loads(raw[8:8 + n])
        header.pop("__metadata__", None)
        body = bytearray(raw[8 + n:])
        dtypes = {"F32": torch.float32, "I64": torch.int64}
        out = {}
        for name, info in header.items():
            b, e = info["data_offsets"]
            out[name] = torch.frombuffer(body[b:e], dtype=dtypes[info["dtype"]]) \
                .reshape(info["shape"]).clone()
        return out


class CnnBn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(1, 4, 3, padding=1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(4)
        self.fc1 = torch.nn.Linear(256, 16, bias=False)
        self.bn2 = torch.nn.BatchNorm1d(16, momentum=0.2)
        self.fc2 = torch.nn.Linear(16, 10)

    def forward(self, x):
        x = torch.relu(self.bn1(self.conv(x))).flatten(1)
        return self.fc2(torch.relu(self.bn2(self.fc1(x))))


state = load_file(os.path.join(sys.argv[1], "model.safetensors"))
model = CnnBn()
result = model.load_state_dict(state, strict=True)
print("load_state_dict strict: missing=%d unexpected=%d" %
      (len(result.missing_keys), len(result.unexpected_keys)))
same = all(torch.equal(model.state_dict()[k], v) for k, v in state.items())
print("model.safetensors: %d tensors, loaded bitwise: %s" % (len(state), same))
for name in ("bn1", "bn2"):
    n = getattr(model, name).num_batches_tracked
    print("%s.num_batches_tracked %s %d" % (name, n.dtype, int(n)))
model.eval()
print("eval forward: logits %s" % list(model(torch.zeros(2, 1, 8, 8)).shape))
