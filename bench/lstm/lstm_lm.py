#!/usr/bin/env python3
"""The LSTM language model of bench/lstm.sh: nn.Embedding(V, D), a two-layer
nn.LSTM(D, D) over T steps (time-major, batch B) and a Linear to V.

  lstm_lm.py export OUT_DIR     model.onnx (torch.onnx.export, dynamo=False,
                                train mode), x.npy and label.npy (10 batches
                                of token ids, time-major rows)
  lstm_lm.py time STEPS WARMUP  PyTorch eager's median training step in ms
                                (AdamW, clip_grad_norm_(1.0), cross-entropy;
                                torch.set_num_threads from OMP_NUM_THREADS)
"""
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

V, D, T, B = 1000, 200, 35, 20


class LM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, D)
        self.lstm = nn.LSTM(D, D, num_layers=2)
        self.head = nn.Linear(D, V)

    def forward(self, x):
        y, _ = self.lstm(self.emb(x))
        return self.head(y)


def main():
    torch.manual_seed(0)
    model = LM().train()
    g = torch.Generator().manual_seed(1)
    if sys.argv[1] == "export":
        out = sys.argv[2]
        x = torch.randint(0, V, (T, B), generator=g)
        torch.onnx.export(model, (x,), os.path.join(out, "model.onnx"),
                          input_names=["x"], output_names=["logits"],
                          dynamo=False, opset_version=17,
                          do_constant_folding=False,
                          training=torch.onnx.TrainingMode.TRAINING)
        # ampc's loader takes rows of the first dimension: 10 batches of T.
        data = torch.randint(0, V, (10 * T + 1, B), generator=g).numpy()
        np.save(os.path.join(out, "x.npy"), data[:-1].astype(np.int64))
        np.save(os.path.join(out, "label.npy"), data[1:].astype(np.int64))
        return
    steps, warmup = int(sys.argv[2]), int(sys.argv[3])
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randint(0, V, (T, B), generator=g)
    y = torch.randint(0, V, (T, B), generator=g)
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x).reshape(-1, V), y.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        times.append(1000 * (time.perf_counter() - t0))
    v = sorted(times[warmup:])
    print("%.3f" % v[len(v) // 2])


if __name__ == "__main__":
    main()
