# B1 of bench/gpu.sh: PyTorch's unscale_ + clip_grad_norm_ + AdamW over GPT-2 shapes.
import json, sys, torch
from cuda_timing import median_ms

def sizes(vocab, ctx, d, layers):
    s = [vocab * d, ctx * d]
    for _ in range(layers):
        s += [d, d, d * 3 * d, 3 * d, d * d, d, d, d, d * 4 * d, 4 * d, 4 * d * d, d]
    return s + [d, d]


preset = sys.argv[1]
shape = sizes(50257, 1024, 1600, 48) if preset == "1.5b" else sizes(50257, 1024, 768, 12)
params = [torch.zeros(n, device="cuda", requires_grad=True) for n in shape]
for p in params:  # FP32 grads (autocast keeps FP32 masters), scaled by 65536
    p.grad = torch.full_like(p, 1.0)
out = {"preset": preset, "params": sum(shape)}
for name, kw in (("foreach", dict(foreach=True)), ("fused", dict(fused=True))):
    opt = torch.optim.AdamW(params, lr=1e-3, weight_decay=0.01, **kw)
    scaler = torch.amp.GradScaler("cuda", init_scale=65536.0)
    # unscale_ needs the scale tensor that scale() creates (a training step
    # scales its loss first); once is enough, update() keeps it.
    scaler.scale(torch.ones((), device="cuda"))
    def step():
        scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(params, 1.0, foreach=True)
        scaler.step(opt)
        scaler.update()
        for p in params:  # unscale_ divided them in place
            p.grad.fill_(1.0)
    # Refill cost measured alone and subtracted.
    fill = median_ms(lambda: [p.grad.fill_(1.0) for p in params])
    out[name + "_ms"] = median_ms(step) - fill
    del opt
print(json.dumps(out))
