#!/usr/bin/env python3
"""Writes a LLaMA-style decoder-only transformer LM as an ampc model file.

    python3 gen_llama.py --preset tiny > llama_tiny.mlir

The checked-in model file is this script's output; test/Examples checks it
stays in sync. Architecture (LLaMA, parameter names as Hugging Face's
LlamaForCausalLM state_dict): token embedding, N blocks of rms_norm ->
grouped-query causal attention with rotary position embeddings -> residual
-> rms_norm -> SwiGLU MLP (down(silu(gate(x)) * up(x))) -> residual, final
rms_norm, LM head (untied by default; --tie shares the embedding), no biases,
cross_entropy against the next-token targets.

Rotary embeddings use the rotate-half convention (Hugging Face's
apply_rotary_pos_emb): q' = q * cos + rotate_half(q) * sin, with cos and sin
computed in the model by graph.cos / graph.sin from the constant angles
t * theta^(-2i/d) (t the position, i < d/2), each repeated over both halves.
"""
import argparse
import os
import sys

# The model-file writer and type spelling of the GPT generator.
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gpt"))
from gen_gpt import Writer, t  # noqa: E402

PRESETS = {
    # Byte-level LM small enough to train on a CPU: 4 query heads sharing 2
    # key/value heads.
    "tiny": dict(vocab=256, ctx=64, width=64, heads=4, kv_heads=2, layers=2, batch=16, hidden=192),
}


def f(v):
    """A float literal MLIR parses (it needs the digits around the point)."""
    return f"{v:.9e}"


def generate(vocab, ctx, width, heads, kv_heads, layers, batch, hidden, name, tie, theta, eps):
    B, T, C, H, K, V, F = batch, ctx, width, heads, kv_heads, vocab, hidden
    D = C // H
    assert C % H == 0 and H % K == 0 and D % 2 == 0
    w = Writer()
    std = 0.02

    def param(pname, shape, init):
        return w.value(f'graph.param "{pname}" init({init}) : {t(shape)}')

    normal = f"#graph.normal<std = {std!r}>"
    ones = "#graph.ones"

    def linear(x, xs, wt, ws):
        out = xs[:-1] + [ws[0]]
        return w.value(f"graph.linear {x}, {wt} : {t(xs)}, {t(ws)} -> {t(out)}"), out

    def rms_norm(x, xs, g):
        return w.value(f"graph.rms_norm {x}, {g} {{eps = {f(eps)}}} : {t(xs)}, {t([C])} -> {t(xs)}")

    tokens = w.value(f'graph.input "tokens" : {t([B, T], "i64")}')
    targets = w.value(f'graph.input "targets" : {t([B, T], "i64")}')
    embed = param("model.embed_tokens.weight", [V, C], normal)
    blocks = []
    for i in range(layers):
        p = f"model.layers.{i}."
        blocks.append(dict(
            ln1=param(p + "input_layernorm.weight", [C], ones),
            q=param(p + "self_attn.q_proj.weight", [H * D, C], normal),
            k=param(p + "self_attn.k_proj.weight", [K * D, C], normal),
            v=param(p + "self_attn.v_proj.weight", [K * D, C], normal),
            o=param(p + "self_attn.o_proj.weight", [C, H * D], normal),
            ln2=param(p + "post_attention_layernorm.weight", [C], ones),
            gate=param(p + "mlp.gate_proj.weight", [F, C], normal),
            up=param(p + "mlp.up_proj.weight", [F, C], normal),
            down=param(p + "mlp.down_proj.weight", [C, F], normal)))
    norm = param("model.norm.weight", [C], ones)
    head = embed if tie else param("lm_head.weight", [V, C], normal)

    # Rotary tables, [T, D]: the angles are constants of the model's shape.
    w.lines.append("  // rotary position embedding tables")
    half = D // 2
    angles = [[pos * theta ** (-2.0 * i / D) for i in range(half)] for pos in range(T)]
    dense = "[" + ", ".join("[" + ", ".join(f(a) for a in row) + "]" for row in angles) + "]"
    ang = w.value(f"graph.constant dense<{dense}> : {t([T, half])}")
    tables = []
    for fn in ("cos", "sin"):
        h_ = w.value(f"graph.{fn} {ang} : {t([T, half])}")
        tables.append(w.value(f"graph.concat {h_}, {h_} {{axis = 1}} : {t([T, half])}, {t([T, half])} -> {t([T, D])}"))
    cos, sin = tables

    def rope(x, n):
        s4 = [B, n, T, D]
        hs = [B, n, T, half]
        lo = w.value(f"graph.slice {x} {{limits = array<i64: {B}, {n}, {T}, {half}>, "
                     f"starts = array<i64: 0, 0, 0, 0>}} : {t(s4)} -> {t(hs)}")
        hi = w.value(f"graph.slice {x} {{limits = array<i64: {B}, {n}, {T}, {D}>, "
                     f"starts = array<i64: 0, 0, 0, {half}>}} : {t(s4)} -> {t(hs)}")
        nhi = w.value(f"graph.neg {hi} : {t(hs)}")
        rot = w.value(f"graph.concat {nhi}, {lo} {{axis = 3}} : {t(hs)}, {t(hs)} -> {t(s4)}")
        a = w.value(f"graph.mul {x}, {cos} : {t(s4)}, {t([T, D])} -> {t(s4)}")
        b = w.value(f"graph.mul {rot}, {sin} : {t(s4)}, {t([T, D])} -> {t(s4)}")
        return w.value(f"graph.add {a}, {b} : {t(s4)}, {t(s4)} -> {t(s4)}")

    def heads_of(x, n):
        r = w.value(f"graph.reshape {x} : {t([B, T, n * D])} -> {t([B, T, n, D])}")
        return w.value(f"graph.transpose {r} {{perm = array<i64: 0, 2, 1, 3>}} : "
                       f"{t([B, T, n, D])} -> {t([B, n, T, D])}")

    xs = [B, T, C]
    x = w.value(f"graph.embedding {tokens}, {embed} : {t([B, T], 'i64')}, {t([V, C])} -> {t(xs)}")
    for i, p in enumerate(blocks):
        w.lines.append(f"  // block {i}")
        h = rms_norm(x, xs, p["ln1"])
        q, _ = linear(h, xs, p["q"], [H * D, C])
        k, _ = linear(h, xs, p["k"], [K * D, C])
        v, _ = linear(h, xs, p["v"], [K * D, C])
        q = rope(heads_of(q, H), H)
        k = rope(heads_of(k, K), K)
        v = heads_of(v, K)
        qs, ks = [B, H, T, D], [B, K, T, D]
        a = w.value(f"graph.scaled_dot_product_attention {q}, {k}, {v} {{causal}} : "
                    f"{t(qs)}, {t(ks)}, {t(ks)} -> {t(qs)}")
        a = w.value(f"graph.transpose {a} {{perm = array<i64: 0, 2, 1, 3>}} : {t(qs)} -> {t([B, T, H, D])}")
        a = w.value(f"graph.reshape {a} : {t([B, T, H, D])} -> {t([B, T, H * D])}")
        a, _ = linear(a, [B, T, H * D], p["o"], [C, H * D])
        x = w.value(f"graph.add {x}, {a} : {t(xs)}, {t(xs)} -> {t(xs)}")
        h = rms_norm(x, xs, p["ln2"])
        g, fs = linear(h, xs, p["gate"], [F, C])
        u, _ = linear(h, xs, p["up"], [F, C])
        g = w.value(f"graph.silu {g} : {t(fs)}")
        m = w.value(f"graph.mul {g}, {u} : {t(fs)}, {t(fs)} -> {t(fs)}")
        m, _ = linear(m, fs, p["down"], [C, F])
        x = w.value(f"graph.add {x}, {m} : {t(xs)}, {t(xs)} -> {t(xs)}")
    w.lines.append("  // head" + (" (tied to the token embedding)" if tie else ""))
    x = rms_norm(x, xs, norm)
    logits, ls = linear(x, xs, head, [V, C])
    loss = w.value(f"graph.cross_entropy {logits}, {targets} : {t(ls)}, {t([B, T], 'i64')} -> {t([])}")
    w.emit(f"graph.output loss = {loss} : {t([])}, logits = {logits} : {t(ls)}")

    header = [
        f"// LLaMA-style LM: vocab {V}, context {T}, width {C}, {H} heads ({K} key/value heads), "
        f"{layers} layers, SwiGLU {F}, batch {B}.",
        f"// Generated by examples/llama/gen_llama.py --preset {name}; edit the script, not this file.",
        f"graph.model @llama_{name} {{",
    ]
    return "\n".join(header + w.lines + ["}"]) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", choices=sorted(PRESETS), default="tiny")
    ap.add_argument("--tie", action="store_true", help="share the LM head with the token embedding")
    ap.add_argument("--theta", type=float, default=10000.0, help="rotary base")
    ap.add_argument("--eps", type=float, default=1e-5, help="rms_norm epsilon")
    for k in ["vocab", "ctx", "width", "heads", "kv_heads", "layers", "batch", "hidden"]:
        ap.add_argument("--" + k.replace("_", "-"), dest=k, type=int)
    args = ap.parse_args()
    cfg = dict(PRESETS[args.preset])
    for k in cfg:
        if getattr(args, k) is not None:
            cfg[k] = getattr(args, k)
    sys.stdout.write(generate(name=args.preset, tie=args.tie, theta=args.theta, eps=args.eps, **cfg))


if __name__ == "__main__":
    main()
