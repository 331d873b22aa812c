#!/usr/bin/env python3
"""Writes a GPT-2-style decoder-only transformer LM as an ampc model file.

    python3 gen_gpt.py --preset tiny  > gpt_tiny.mlir
    python3 gen_gpt.py --preset small > gpt2_small.mlir

The checked-in model files are this script's output; test/Examples checks
they stay in sync. Architecture (GPT-2): token + position embedding, N blocks
of layer_norm -> causal attention -> residual -> layer_norm -> MLP (gelu,
tanh approximation) -> residual, final layer_norm, LM head tied to the token
embedding, cross_entropy against the next-token targets.
"""
import argparse
import math
import sys

PRESETS = {
    # Byte-level LM small enough to train on a CPU.
    "tiny": dict(vocab=256, ctx=64, width=64, heads=4, layers=2, batch=16),
    # GPT-2 small: 124M parameters.
    "small": dict(vocab=50257, ctx=1024, width=768, heads=12, layers=12, batch=8),
}


class Writer:
    def __init__(self):
        self.lines = []
        self.n = 0

    def emit(self, text):
        self.lines.append("  " + text)

    def value(self, text):
        self.n += 1
        name = f"%v{self.n}"
        self.emit(f"{name} = {text}")
        return name


def t(shape, ty="f32"):
    return "tensor<" + "x".join(str(d) for d in shape) + ("x" if shape else "") + ty + ">"


def generate(vocab, ctx, width, heads, layers, batch, name, dropout):
    B, T, C, H, V = batch, ctx, width, heads, vocab
    D = C // H
    assert C % H == 0
    w = Writer()
    std = 0.02
    proj_std = 0.02 / math.sqrt(2 * layers)  # GPT-2's scaled init of residual projections

    def param(pname, shape, init):
        return w.value(f'graph.param "{pname}" init({init}) : {t(shape)}')

    normal = lambda s: f"#graph.normal<std = {s!r}>"
    zeros, ones = "#graph.zeros", "#graph.ones"

    def linear(x, xs, wt, ws, b=None):
        out = xs[:-1] + [ws[0]]
        if b is None:
            return w.value(f"graph.linear {x}, {wt} : {t(xs)}, {t(ws)} -> {t(out)}"), out
        return w.value(f"graph.linear {x}, {wt}, {b} : {t(xs)}, {t(ws)}, {t([ws[0]])} -> {t(out)}"), out

    def layer_norm(x, xs, g, b):
        return w.value(f"graph.layer_norm {x}, {g}, {b} : {t(xs)}, {t([C])}, {t([C])} -> {t(xs)}")

    def drop(x, xs):
        if dropout <= 0:
            return x
        return w.value(f"graph.dropout {x} {{p = {dropout!r}}} : {t(xs)}")

    tokens = w.value(f'graph.input "tokens" : {t([B, T], "i64")}')
    targets = w.value(f'graph.input "targets" : {t([B, T], "i64")}')
    wte = param("wte.weight", [V, C], normal(std))
    wpe = param("wpe.weight", [T, C], normal(0.01))
    blocks = []
    for i in range(layers):
        p = f"h{i}."
        blocks.append(dict(
            ln1_g=param(p + "ln_1.weight", [C], ones), ln1_b=param(p + "ln_1.bias", [C], zeros),
            attn_w=param(p + "attn.c_attn.weight", [3 * C, C], normal(std)),
            attn_b=param(p + "attn.c_attn.bias", [3 * C], zeros),
            proj_w=param(p + "attn.c_proj.weight", [C, C], normal(proj_std)),
            proj_b=param(p + "attn.c_proj.bias", [C], zeros),
            ln2_g=param(p + "ln_2.weight", [C], ones), ln2_b=param(p + "ln_2.bias", [C], zeros),
            fc_w=param(p + "mlp.c_fc.weight", [4 * C, C], normal(std)),
            fc_b=param(p + "mlp.c_fc.bias", [4 * C], zeros),
            mproj_w=param(p + "mlp.c_proj.weight", [C, 4 * C], normal(proj_std)),
            mproj_b=param(p + "mlp.c_proj.bias", [C], zeros)))
    lnf_g = param("ln_f.weight", [C], ones)
    lnf_b = param("ln_f.bias", [C], zeros)

    xs = [B, T, C]
    tok = w.value(f"graph.embedding {tokens}, {wte} : {t([B, T], 'i64')}, {t([V, C])} -> {t(xs)}")
    x = w.value(f"graph.add {tok}, {wpe} : {t(xs)}, {t([T, C])} -> {t(xs)}")
    x = drop(x, xs)
    for i, p in enumerate(blocks):
        w.lines.append(f"  // block {i}")
        h = layer_norm(x, xs, p["ln1_g"], p["ln1_b"])
        qkv, qkvs = linear(h, xs, p["attn_w"], [3 * C, C], p["attn_b"])
        heads_ = []
        for j in range(3):
            s = w.value(f"graph.slice {qkv} {{limits = array<i64: {B}, {T}, {(j + 1) * C}>, "
                        f"starts = array<i64: 0, 0, {j * C}>}} : {t(qkvs)} -> {t(xs)}")
            r = w.value(f"graph.reshape {s} : {t(xs)} -> {t([B, T, H, D])}")
            heads_.append(w.value(f"graph.transpose {r} {{perm = array<i64: 0, 2, 1, 3>}} : "
                                  f"{t([B, T, H, D])} -> {t([B, H, T, D])}"))
        hs = [B, H, T, D]
        a = w.value(f"graph.scaled_dot_product_attention {heads_[0]}, {heads_[1]}, {heads_[2]} {{causal}} : "
                    f"{t(hs)}, {t(hs)}, {t(hs)} -> {t(hs)}")
        a = w.value(f"graph.transpose {a} {{perm = array<i64: 0, 2, 1, 3>}} : {t(hs)} -> {t([B, T, H, D])}")
        a = w.value(f"graph.reshape {a} : {t([B, T, H, D])} -> {t(xs)}")
        a, _ = linear(a, xs, p["proj_w"], [C, C], p["proj_b"])
        a = drop(a, xs)
        x = w.value(f"graph.add {x}, {a} : {t(xs)}, {t(xs)} -> {t(xs)}")
        h = layer_norm(x, xs, p["ln2_g"], p["ln2_b"])
        h, hs4 = linear(h, xs, p["fc_w"], [4 * C, C], p["fc_b"])
        h = w.value(f'graph.gelu {h} {{approximate = "tanh"}} : {t(hs4)}')
        h, _ = linear(h, hs4, p["mproj_w"], [C, 4 * C], p["mproj_b"])
        h = drop(h, xs)
        x = w.value(f"graph.add {x}, {h} : {t(xs)}, {t(xs)} -> {t(xs)}")
    w.lines.append("  // head (tied to the token embedding)")
    x = layer_norm(x, xs, lnf_g, lnf_b)
    logits, ls = linear(x, xs, wte, [V, C])
    loss = w.value(f"graph.cross_entropy {logits}, {targets} : {t(ls)}, {t([B, T], 'i64')} -> {t([])}")
    w.emit(f"graph.output loss = {loss} : {t([])}, logits = {logits} : {t(ls)}")

    header = [
        f"// GPT-2-style LM: vocab {V}, context {T}, width {C}, {H} heads, {layers} layers, batch {B}.",
        f"// Generated by examples/gpt/gen_gpt.py --preset {name}; edit the script, not this file.",
        f"graph.model @gpt_{name} {{",
    ]
    return "\n".join(header + w.lines + ["}"]) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", choices=sorted(PRESETS), default="tiny")
    ap.add_argument("--dropout", type=float, default=0.0)
    for k in ["vocab", "ctx", "width", "heads", "layers", "batch"]:
        ap.add_argument("--" + k, type=int)
    args = ap.parse_args()
    cfg = dict(PRESETS[args.preset])
    for k in cfg:
        if getattr(args, k) is not None:
            cfg[k] = getattr(args, k)
    sys.stdout.write(generate(name=args.preset, dropout=args.dropout, **cfg))


if __name__ == "__main__":
    main()
