#!/usr/bin/env python3
"""The llama example's first step against PyTorch: reads a training binary's
--dump-step file (FP32, --amp=off), rebuilds the same model as a plain
PyTorch LLaMA (Hugging Face's conventions: rotate-half rotary embeddings,
RMSNorm, SwiGLU, grouped-query attention by repeating key/value heads), loads
the dumped weights and batch, and compares the loss and every gradient:
loss within 1e-5 relative, each gradient within 1e-5 of its largest
magnitude plus 1e-7.

  llama_torch.py DUMP --heads H --kv-heads K [--theta T] [--eps E]
"""
import argparse
import json
import struct
import sys

import numpy as np
import torch
import torch.nn.functional as F


def read(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    meta = header.pop("__metadata__", {})
    out = {}
    for name, h in header.items():
        assert h["dtype"] == "F32", (name, h["dtype"])
        a, b = h["data_offsets"]
        out[name] = torch.from_numpy(np.frombuffer(data[a:b], dtype="<f4").copy()).reshape(h["shape"])
    return out, meta


def rms_norm(x, w, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dump")
    ap.add_argument("--heads", type=int, required=True)
    ap.add_argument("--kv-heads", type=int, required=True)
    ap.add_argument("--theta", type=float, default=10000.0)
    ap.add_argument("--eps", type=float, default=1e-5)
    a = ap.parse_args()
    t, meta = read(a.dump)
    P = {k[len("before."):]: v.double().requires_grad_() for k, v in t.items()
         if k.startswith("before.") and not k.endswith((".exp_avg", ".exp_avg_sq"))}
    tokens = t["input.tokens"].long()
    targets = t["input.targets"].long()
    B, T = tokens.shape
    C = P["model.embed_tokens.weight"].shape[1]
    H, K = a.heads, a.kv_heads
    D = C // H
    inv = a.theta ** (-torch.arange(0, D, 2, dtype=torch.float64) / D)
    ang = torch.arange(T, dtype=torch.float64)[:, None] * inv[None, :]
    cos = torch.cat((ang.cos(), ang.cos()), -1)
    sin = torch.cat((ang.sin(), ang.sin()), -1)
    layers = 1 + max(int(k.split(".")[2]) for k in P if k.startswith("model.layers."))

    x = P["model.embed_tokens.weight"][tokens]
    for i in range(layers):
        p = lambda n: P[f"model.layers.{i}.{n}"]
        h = rms_norm(x, p("input_layernorm.weight"), a.eps)
        q = (h @ p("self_attn.q_proj.weight").T).view(B, T, H, D).transpose(1, 2)
        k = (h @ p("self_attn.k_proj.weight").T).view(B, T, K, D).transpose(1, 2)
        v = (h @ p("self_attn.v_proj.weight").T).view(B, T, K, D).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = k.repeat_interleave(H // K, dim=1)  # Hugging Face's repeat_kv
        v = v.repeat_interleave(H // K, dim=1)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + o.transpose(1, 2).reshape(B, T, C) @ p("self_attn.o_proj.weight").T
        h = rms_norm(x, p("post_attention_layernorm.weight"), a.eps)
        m = F.silu(h @ p("mlp.gate_proj.weight").T) * (h @ p("mlp.up_proj.weight").T)
        x = x + m @ p("mlp.down_proj.weight").T
    x = rms_norm(x, P["model.norm.weight"], a.eps)
    head = P.get("lm_head.weight", P["model.embed_tokens.weight"])
    loss = F.cross_entropy((x @ head.T).reshape(B * T, -1), targets.reshape(-1))
    loss.backward()

    bad = 0
    got = float(meta["loss"])
    rel = abs(got - loss.item()) / abs(loss.item())
    print("loss %.9g torch %.9g rel %.2e" % (got, loss.item(), rel))
    bad += not rel <= 1e-5
    scale = float(meta.get("scale_used", "1"))
    worst = 0.0
    for name, w in sorted(P.items()):
        g = t["grad." + name].double() / scale
        err = (g - w.grad).abs().max().item() / (1e-5 * w.grad.abs().max().item() + 1e-7)
        worst = max(worst, err)
        if err > 1:
            print("MISMATCH %s: max |diff| %.3g, max |grad| %.3g" % (name, (g - w.grad).abs().max(), w.grad.abs().max()))
            bad += 1
    print("gradients: %d tensors, worst %.3f of the tolerance" % (len(P), worst))
    print("FAIL" if bad else "PASS")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
