# B2 of bench/gpu.sh: PyTorch MLP 3 x Linear(4096) + ReLU, batch 512 (TORCH_COMPILE=0 skips torch.compile).
import json, os, torch, torch.nn as nn
from cuda_timing import median_ms
torch.backends.cuda.matmul.allow_tf32 = False  # ampc computes FP32 GEMMs in FP32
out = {}
x = torch.randn(512, 4096, device="cuda"); y = torch.randint(0, 4096, (512,), device="cuda")
for amp, dt in (("off", None), ("fp16", torch.float16), ("bf16", torch.bfloat16)):
    for compiled in (False, True) if os.environ.get("TORCH_COMPILE", "1") == "1" else (False,):
        model = nn.Sequential(*[m for _ in range(3) for m in (nn.Linear(4096, 4096), nn.ReLU())]).cuda()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
        scaler = torch.amp.GradScaler("cuda", enabled=(amp == "fp16"))
        fwd = torch.compile(model) if compiled else model
        def step():
            with torch.autocast("cuda", dtype=dt or torch.float32, enabled=dt is not None):
                loss = nn.functional.cross_entropy(fwd(x), y)
            opt.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(opt); scaler.update()
        try:
            out[amp + ("_compile" if compiled else "_eager")] = median_ms(step, iters=30)
        except Exception as e:  # torch.compile may be unavailable offline
            out[amp + "_compile"] = None
print(json.dumps(out))
