"""PyTorch eager counterparts of the CPU examples, for bench/cpu.sh: the
median training step time (ms) of examples/{mlp,cnn,gpt_tiny} as the
nn.Modules PyTorch users would write, with the same shapes, AdamW and, for
AMP, CPU autocast (plus GradScaler for fp16, as ampc's dynamic scaling).

Usage: torch_step.py MODEL AMP THREADS [STEPS] [WARMUP]
  MODEL mlp|cnn|gpt_tiny, AMP off|fp16|bf16. Prints {"ms": median,
  "cpu_ms": the process's CPU time (user + sys, all threads) per timed step}."""
import json
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

model, amp, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
steps = int(sys.argv[4]) if len(sys.argv) > 4 else 100
warmup = int(sys.argv[5]) if len(sys.argv) > 5 else 10
torch.set_num_threads(threads)
torch.manual_seed(0)


class Mlp(nn.Module):  # examples/mlp/mlp.mlir
    def __init__(s):
        super().__init__()
        s.fc1, s.fc2, s.fc3 = nn.Linear(784, 256), nn.Linear(256, 128), nn.Linear(128, 10)

    def forward(s, x):
        return s.fc3(F.relu(s.fc2(F.relu(s.fc1(x)))))


class Cnn(nn.Module):  # examples/cnn/cnn.mlir
    def __init__(s):
        super().__init__()
        s.conv1, s.conv2 = nn.Conv2d(1, 16, 3, padding=1), nn.Conv2d(16, 32, 3, padding=1)
        s.fc1, s.fc2 = nn.Linear(1568, 128), nn.Linear(128, 10)

    def forward(s, x):
        x = F.max_pool2d(F.relu(s.conv1(x)), 2)
        x = F.max_pool2d(F.relu(s.conv2(x)), 2)
        return s.fc2(F.relu(s.fc1(x.flatten(1))))


V, T, D, H, L = 256, 64, 64, 4, 2  # examples/gpt/gpt_tiny.mlir


class Block(nn.Module):
    def __init__(s):
        super().__init__()
        s.ln_1, s.ln_2 = nn.LayerNorm(D), nn.LayerNorm(D)
        s.c_attn, s.c_proj = nn.Linear(D, 3 * D), nn.Linear(D, D)
        s.c_fc, s.mlp_proj = nn.Linear(D, 4 * D), nn.Linear(4 * D, D)

    def forward(s, x):
        B = x.shape[0]
        q, k, v = s.c_attn(s.ln_1(x)).split(D, dim=-1)
        sh = lambda t: t.view(B, T, H, D // H).transpose(1, 2)
        a = F.scaled_dot_product_attention(sh(q), sh(k), sh(v), is_causal=True)
        x = x + s.c_proj(a.transpose(1, 2).reshape(B, T, D))
        return x + s.mlp_proj(F.gelu(s.c_fc(s.ln_2(x)), approximate="tanh"))


class Gpt(nn.Module):
    def __init__(s):
        super().__init__()
        s.wte, s.wpe = nn.Embedding(V, D), nn.Embedding(T, D)
        s.h = nn.ModuleList(Block() for _ in range(L))
        s.ln_f = nn.LayerNorm(D)

    def forward(s, idx):
        x = s.wte(idx) + s.wpe(torch.arange(T))
        for b in s.h:
            x = b(x)
        return s.ln_f(x) @ s.wte.weight.t()


if model == "mlp":
    m, x, y = Mlp(), torch.randn(128, 784), torch.randint(0, 10, (128,))
elif model == "cnn":
    m, x, y = Cnn(), torch.randn(64, 1, 28, 28), torch.randint(0, 10, (64,))
elif model == "gpt_tiny":
    m, x, y = Gpt(), torch.randint(0, V, (16, T)), torch.randint(0, V, (16, T))
else:
    sys.exit(f"unknown model {model}")

opt = torch.optim.AdamW(m.parameters(), lr=1e-3, weight_decay=0.0)
dtype = {"off": None, "fp16": torch.float16, "bf16": torch.bfloat16}[amp]
scaler = torch.amp.GradScaler("cpu", enabled=amp == "fp16")


def step():
    with torch.autocast("cpu", dtype=dtype or torch.bfloat16, enabled=dtype is not None):
        logits = m(x)
        loss = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), y.reshape(-1))
    opt.zero_grad(set_to_none=True)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()


times = []
for i in range(warmup + steps):
    if i == warmup:
        c0 = time.process_time()  # CPU time of this process, all threads
    t0 = time.perf_counter()
    step()
    if i >= warmup:
        times.append((time.perf_counter() - t0) * 1e3)
cpu_ms = (time.process_time() - c0) * 1e3 / steps
times.sort()
print(json.dumps({"ms": times[len(times) // 2], "cpu_ms": cpu_ms}))
