# B3 of bench/gpu.sh: PyTorch GPT-2 small, bf16 autocast, batch 8 x 1024, eager
# then torch.compile (TORCH_COMPILE=0 skips it); AdamW fused in both. Then
# the same with the vocabulary padded by hand to 50304 rows (nanoGPT's
# trick; ampc's graph-pad-classes does it for the compiled model): pad_ms,
# pad_compile_ms (PAD=0 skips them).
import json, math, os, torch, torch.nn as nn, torch.nn.functional as F
from cuda_timing import median_ms
torch.backends.cuda.matmul.allow_tf32 = False
V, T, D, H, L, B = 50257, 1024, 768, 12, 12, 8
class Block(nn.Module):
    def __init__(s):
        super().__init__()
        s.ln1, s.ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
        s.qkv, s.proj = nn.Linear(D, 3 * D), nn.Linear(D, D)
        s.fc, s.out = nn.Linear(D, 4 * D), nn.Linear(4 * D, D)
    def forward(s, x):
        q, k, v = s.qkv(s.ln1(x)).split(D, dim=-1)
        sh = lambda t: t.view(B, T, H, D // H).transpose(1, 2)
        a = F.scaled_dot_product_attention(sh(q), sh(k), sh(v), is_causal=True)
        x = x + s.proj(a.transpose(1, 2).reshape(B, T, D))
        return x + s.out(F.gelu(s.fc(s.ln2(x)), approximate="tanh"))
class GPT(nn.Module):
    def __init__(s, rows):
        super().__init__()
        s.wte, s.wpe = nn.Embedding(rows, D), nn.Embedding(T, D)
        s.blocks = nn.ModuleList(Block() for _ in range(L)); s.ln = nn.LayerNorm(D)
    def forward(s, idx):
        x = s.wte(idx) + s.wpe(torch.arange(T, device=idx.device))
        for b in s.blocks: x = b(x)
        return s.ln(x) @ s.wte.weight.t()
idx = torch.randint(0, V, (B, T), device="cuda"); tgt = torch.randint(0, V, (B, T), device="cuda")
def run(rows, prefix, out):
    m = GPT(rows).cuda(); opt = torch.optim.AdamW(m.parameters(), lr=3e-4, fused=True)
    def timed(fwd):
        def step():
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = F.cross_entropy(fwd(idx).view(-1, rows).float(), tgt.view(-1))
            opt.zero_grad(set_to_none=True); loss.backward()
            torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0, foreach=True); opt.step()
        return median_ms(step, iters=30, warmup=5)
    ms = timed(m)
    out[prefix + "ms"] = ms; out[prefix + "tokens_s"] = B * T / (ms * 1e-3)
    if os.environ.get("TORCH_COMPILE", "1") == "1":
        try:  # the warm-up steps include the compilation
            out[prefix + "compile_ms"] = timed(torch.compile(m))
            out[prefix + "compile_tokens_s"] = B * T / (out[prefix + "compile_ms"] * 1e-3)
        except Exception as e:  # torch.compile may be unavailable (no compiler)
            out[prefix + "compile_error"] = str(e)[:200]
    del m, opt
    torch.cuda.empty_cache()
out = {}
run(V, "", out)
print(json.dumps(out), flush=True)  # what fits before a deadline
if os.environ.get("PAD", "1") == "1":
    run(50304, "pad_", out)
    print(json.dumps(out))
