"""Trains the runtime demo binary for a few steps and reads its checkpoint
with the `safetensors` package (what PyTorch users load it with)."""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
from safetensors import safe_open
from safetensors.numpy import load_file

demo = sys.argv[1]
with tempfile.TemporaryDirectory() as d:
    rng = np.random.default_rng(0)
    y = (np.arange(64) % 3).astype(np.int64)
    x = (rng.standard_normal((64, 4)) + np.eye(4)[y] * 2).astype(np.float32)
    np.save(os.path.join(d, "x.npy"), x)
    np.save(os.path.join(d, "y.npy"), y)
    ck = os.path.join(d, "ck")
    subprocess.run([demo, f"--data=x={d}/x.npy,label={d}/y.npy", "--steps=5",
                    f"--checkpoint-dir={ck}"], check=True, stdout=subprocess.DEVNULL)
    latest = open(os.path.join(ck, "latest")).read().strip()
    path = os.path.join(ck, latest, "model.safetensors")
    tensors = load_file(path)
    # The parameters in model.safetensors, the moments in optimizer.safetensors.
    assert all(not k.endswith(("exp_avg", "exp_avg_sq")) for k in tensors), sorted(tensors)
    moments = load_file(os.path.join(ck, latest, "optimizer.safetensors"))
    assert moments and all(k.endswith(("exp_avg", "exp_avg_sq")) for k in moments), sorted(moments)
    tensors.update(moments)
    state = json.load(open(os.path.join(ck, latest, "train_state.json")))
    assert set(tensors) == set(state["tensors"]), (set(tensors), state["tensors"])
    for name, shape in state["tensors"].items():
        assert tensors[name].dtype == np.float32, name
        assert list(tensors[name].shape) == shape, (name, tensors[name].shape)
        assert np.all(np.isfinite(tensors[name])), name
    with safe_open(path, framework="numpy") as f:
        meta = f.metadata()
    assert meta["step"] == "5" and meta["model"] == "softmax_test", meta
    assert state["optimizer_step"] == 5
    print("safetensors OK:", sorted(tensors))
