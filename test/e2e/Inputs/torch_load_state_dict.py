"""Loads a checkpoint's model.safetensors into the nn.Module equivalent to
examples/mlp/mlp.mlir with load_state_dict(strict=True), checks the weights
arrived bitwise, runs the module, and reads optimizer.safetensors.

Usage: python torch_load_state_dict.py CHECKPOINT_STEP_DIR
"""
import os
import sys

import json
import struct

import torch

try:
    from safetensors.torch import load_file
except ImportError:
    # The same file format read with torch alone (F32 tensors, as ampc
    # writes them), where the safetensors package is not installed.
    def load_file(path):
        with open(path, "rb") as f:
            raw = f.read()
        (n,) = struct.unpack("<Q", raw[:8])
        header = json.loads(raw[8:8 + n])
        header.pop("__metadata__", None)
        body = bytearray(raw[8 + n:])
        out = {}
        for name, info in header.items():
            assert info["dtype"] == "F32", info
            b, e = info["data_offsets"]
            out[name] = torch.frombuffer(body[b:e], dtype=torch.float32) \
                .reshape(info["shape"]).clone()
        return out


class MLP(torch.nn.Module):
    # The parameter names of examples/mlp/mlp.mlir (graph.param "fc1.weight").
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(784, 256)
        self.fc2 = torch.nn.Linear(256, 128)
        self.fc3 = torch.nn.Linear(128, 10)

    def forward(self, x):
        x = torch.relu(self.fc1(x))
        x = torch.relu(self.fc2(x))
        return self.fc3(x)


ckpt = sys.argv[1]
state = load_file(os.path.join(ckpt, "model.safetensors"))
model = MLP()
result = model.load_state_dict(state, strict=True)
print("load_state_dict strict: missing=%d unexpected=%d" %
      (len(result.missing_keys), len(result.unexpected_keys)))
same = all(torch.equal(model.state_dict()[k], v) for k, v in state.items())
print("model.safetensors: %d tensors, loaded bitwise: %s" % (len(state), same))
logits = model(torch.zeros(2, 784))
print("forward: logits %s" % list(logits.shape))
opt = load_file(os.path.join(ckpt, "optimizer.safetensors"))
print("optimizer.safetensors: %s" % " ".join(sorted(opt)))
