#!/usr/bin/env bash
# bench/gpu.sh - ampc's CUDA target on one GPU, side by side with PyTorch.
#
# Builds (CUDA archs of this GPU only), runs the GPU tests, then prints one
# table:
#   B1  the fused AMP epilogue alone (GPT-2 124M and 1.5B parameter shapes)
#       vs PyTorch GradScaler.unscale_ + clip_grad_norm_(foreach) + AdamW
#       (foreach) and AdamW(fused=True): ms and TB/s against 30 B/param;
#   B2  MLP 3 x Linear(4096) + ReLU, batch 512, AdamW: ms/step in
#       FP32 / FP16 / BF16 vs PyTorch eager (autocast + GradScaler);
#   B3  the GPT-2-small example: ms/step and tokens/s vs PyTorch;
#   B4  FP32 sum all-reduce (NCCL, device buffers) 1..256 MiB: the bucketed
#       gradient all-reduce (GradBucketer, 25 MiB buckets) and one raw
#       allreduceSum, median time (CUDA events), algbw and busbw
#       (nccl-tests: algbw*2(n-1)/n; 0 by definition at 1 GPU, so only algbw
#       there) at world size 1, and at all GPUs via mpirun when there are > 1.
# Medians of >= 30 timed iterations after warm-up. PyTorch is timed with
# CUDA events; ampc training binaries report per-step wall time with
# --log-every 1 (the host waits for each step's stats, so this is the full
# step latency). Needs: nvidia-smi, cmake, ninja, python3 with torch. No
# network. Budget: < 10 minutes on an H200.
#
#   bench/gpu.sh [BUILD_DIR]     (SKIP_TESTS=1 to skip the GPU tests)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${1:-$ROOT/build-gpu}
WORK=$BUILD/bench
mkdir -p "$WORK"
JOBS=$(nproc)
PY=${PYTHON:-python3}
START=$(date +%s)
stamp() { echo "[gpu.sh +$(( $(date +%s) - START ))s] $*"; }

command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 || {
  echo "gpu.sh: no GPU (nvidia-smi sees none)" >&2; exit 2; }
ARCH=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d ' .')
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
stamp "GPU: $GPU (sm_$ARCH)"

# --- build -------------------------------------------------------------------
stamp "configure + build"
cmake -G Ninja -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
  -DAMPC_WITH_CUDA=ON -DAMPC_CUDA_ARCHS="$ARCH" >"$WORK/cmake.log"
ninja -C "$BUILD" -j"$JOBS" ampc ampc-opt ampc-translate ampc-cuda-tests \
  ampc-epilogue-bench ampc-allreduce-bench >"$WORK/build.log"
AMPC=$BUILD/bin/ampc

# --- GPU tests ----------------------------------------------------------------
if [[ "${SKIP_TESTS:-0}" != 1 ]]; then
  stamp "GPU tests"
  "$BUILD/bin/ampc-cuda-tests" --gtest_brief=1 | tail -3
  LIT=$(command -v lit || echo /usr/lib/llvm-22/bin/lit)
  "$LIT" -sv "$BUILD/test" --filter 'cuda|gpu' | tail -5
fi

# --- B1: the epilogue alone -----------------------------------------------------
stamp "B1 ampc epilogue"
"$BUILD/bin/ampc-epilogue-bench" 124m >"$WORK/b1_ampc_124m.json"
"$BUILD/bin/ampc-epilogue-bench" 1.5b >"$WORK/b1_ampc_1.5b.json"

stamp "B1 PyTorch epilogue"
cat >"$WORK/b1_torch.py" <<'PY'
import json, sys, torch

def sizes(vocab, ctx, d, layers):
    s = [vocab * d, ctx * d]
    for _ in range(layers):
        s += [d, d, d * 3 * d, 3 * d, d * d, d, d, d, d * 4 * d, 4 * d, 4 * d * d, d]
    return s + [d, d]

def median_ms(fn, iters=50, warmup=10):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(iters):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); b.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    return times[len(times) // 2]

preset = sys.argv[1]
shape = sizes(50257, 1024, 1600, 48) if preset == "1.5b" else sizes(50257, 1024, 768, 12)
params = [torch.zeros(n, device="cuda", requires_grad=True) for n in shape]
for p in params:  # FP32 grads (autocast keeps FP32 masters), scaled by 65536
    p.grad = torch.full_like(p, 1.0)
out = {"preset": preset, "params": sum(shape)}
for name, kw in (("foreach", dict(foreach=True)), ("fused", dict(fused=True))):
    opt = torch.optim.AdamW(params, lr=1e-3, weight_decay=0.01, **kw)
    scaler = torch.amp.GradScaler("cuda", init_scale=65536.0)
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
PY
"$PY" "$WORK/b1_torch.py" 124m >"$WORK/b1_torch_124m.json"
"$PY" "$WORK/b1_torch.py" 1.5b >"$WORK/b1_torch_1.5b.json"

# --- B2: MLP 3 x Linear(4096) + ReLU, batch 512 --------------------------------------
stamp "B2 MLP"
cat >"$WORK/mlp4096.mlir" <<'MLIR'
// B2: 3 x Linear(4096) + ReLU, batch 512 (bench/gpu.sh).
graph.model @mlp4096 {
  %x = graph.input "x" : tensor<512x4096xf32>
  %label = graph.input "label" : tensor<512xi64>
  %w1 = graph.param "fc1.weight" init(#graph.normal<mean = 0.0, std = 0.02>) : tensor<4096x4096xf32>
  %b1 = graph.param "fc1.bias" init(#graph.zeros) : tensor<4096xf32>
  %w2 = graph.param "fc2.weight" init(#graph.normal<mean = 0.0, std = 0.02>) : tensor<4096x4096xf32>
  %b2 = graph.param "fc2.bias" init(#graph.zeros) : tensor<4096xf32>
  %w3 = graph.param "fc3.weight" init(#graph.normal<mean = 0.0, std = 0.02>) : tensor<4096x4096xf32>
  %b3 = graph.param "fc3.bias" init(#graph.zeros) : tensor<4096xf32>
  %h1 = graph.linear %x, %w1, %b1 : tensor<512x4096xf32>, tensor<4096x4096xf32>, tensor<4096xf32> -> tensor<512x4096xf32>
  %a1 = graph.relu %h1 : tensor<512x4096xf32>
  %h2 = graph.linear %a1, %w2, %b2 : tensor<512x4096xf32>, tensor<4096x4096xf32>, tensor<4096xf32> -> tensor<512x4096xf32>
  %a2 = graph.relu %h2 : tensor<512x4096xf32>
  %h3 = graph.linear %a2, %w3, %b3 : tensor<512x4096xf32>, tensor<4096x4096xf32>, tensor<4096xf32> -> tensor<512x4096xf32>
  %a3 = graph.relu %h3 : tensor<512x4096xf32>
  %loss = graph.cross_entropy %a3, %label : tensor<512x4096xf32>, tensor<512xi64> -> tensor<f32>
  graph.output "loss" = %loss : tensor<f32>
}
MLIR
# Random data (no numpy needed): 2 batches of x and labels.
"$PY" - "$WORK" <<'PY'
import os, random, struct, sys
def npy(path, descr, fmt, shape, vals):
    h = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, "".join("%d, " % d for d in shape))
    h += " " * (64 - (10 + len(h) + 1) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode())
        f.write(struct.pack("<%d%s" % (len(vals), fmt), *vals))
w, r = sys.argv[1], random.Random(0)
npy(os.path.join(w, "x.npy"), "<f4", "f", (1024, 4096), [r.gauss(0, 1) for _ in range(1024 * 4096)])
npy(os.path.join(w, "label.npy"), "<i8", "q", (1024,), [r.randrange(4096) for _ in range(1024)])
npy(os.path.join(w, "tokens.npy"), "<i8", "q", (16, 1024), [r.randrange(50257) for _ in range(16 * 1024)])
npy(os.path.join(w, "targets.npy"), "<i8", "q", (16, 1024), [r.randrange(50257) for _ in range(16 * 1024)])
PY
# Median step time of steps 11..N from a binary's metrics.
median_step() {
  "$PY" -c 'import json,sys; t=sorted(json.loads(l)["step_time_ms"] for l in list(open(sys.argv[1]))[10:]); print("%.3f" % t[len(t)//2])' "$1"
}
declare -A AMPC_B2
for amp in off fp16 bf16; do
  "$AMPC" compile "$WORK/mlp4096.mlir" --target=cuda --amp=$amp -o "$WORK/mlp_$amp" >/dev/null
  "$WORK/mlp_$amp" --data "x=$WORK/x.npy,label=$WORK/label.npy" --steps 50 \
    --log-every 1 --metrics "$WORK/mlp_$amp.jsonl" >/dev/null
  AMPC_B2[$amp]=$(median_step "$WORK/mlp_$amp.jsonl")
done

cat >"$WORK/b2_torch.py" <<'PY'
import json, torch, torch.nn as nn
torch.backends.cuda.matmul.allow_tf32 = False  # ampc computes FP32 GEMMs in FP32
def median_ms(fn, iters=50, warmup=10):
    for _ in range(warmup): fn()
    ts = []
    for _ in range(iters):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b))
    ts.sort(); return ts[len(ts) // 2]
out = {}
x = torch.randn(512, 4096, device="cuda"); y = torch.randint(0, 4096, (512,), device="cuda")
for amp, dt in (("off", None), ("fp16", torch.float16), ("bf16", torch.bfloat16)):
    for compiled in (False, True):
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
PY
"$PY" "$WORK/b2_torch.py" >"$WORK/b2_torch.json"

# --- B3: GPT-2 small --------------------------------------------------------------
stamp "B3 GPT-2 small"
"$AMPC" compile "$ROOT/examples/gpt/gpt2_small.mlir" --target=cuda --amp=bf16 \
  --clip-norm=1 -o "$WORK/gpt2" >/dev/null
"$WORK/gpt2" --data "tokens=$WORK/tokens.npy,targets=$WORK/targets.npy" \
  --steps 40 --log-every 1 --metrics "$WORK/gpt2.jsonl" >/dev/null
AMPC_B3=$(median_step "$WORK/gpt2.jsonl")

cat >"$WORK/b3_torch.py" <<'PY'
import json, math, torch, torch.nn as nn, torch.nn.functional as F
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
    def __init__(s):
        super().__init__()
        s.wte, s.wpe = nn.Embedding(V, D), nn.Embedding(T, D)
        s.blocks = nn.ModuleList(Block() for _ in range(L)); s.ln = nn.LayerNorm(D)
    def forward(s, idx):
        x = s.wte(idx) + s.wpe(torch.arange(T, device=idx.device))
        for b in s.blocks: x = b(x)
        return s.ln(x) @ s.wte.weight.t()
def median_ms(fn, iters=30, warmup=5):
    for _ in range(warmup): fn()
    ts = []
    for _ in range(iters):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b))
    ts.sort(); return ts[len(ts) // 2]
m = GPT().cuda(); opt = torch.optim.AdamW(m.parameters(), lr=3e-4, fused=True)
idx = torch.randint(0, V, (B, T), device="cuda"); tgt = torch.randint(0, V, (B, T), device="cuda")
def step():
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = F.cross_entropy(m(idx).view(-1, V).float(), tgt.view(-1))
    opt.zero_grad(set_to_none=True); loss.backward()
    torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0, foreach=True); opt.step()
ms = median_ms(step)
print(json.dumps({"ms": ms, "tokens_s": B * T / (ms * 1e-3)}))
PY
"$PY" "$WORK/b3_torch.py" >"$WORK/b3_torch.json"

# --- B4: all-reduce bandwidth (NCCL) -------------------------------------------------
stamp "B4 all-reduce"
NGPU=$(nvidia-smi -L | wc -l)
B4_SIZES=1M,4M,16M,64M,256M
"$BUILD/bin/ampc-allreduce-bench" --gpu --sizes=$B4_SIZES --iters=30 >"$WORK/b4_1.txt"
if (( NGPU > 1 )); then
  mpirun --allow-run-as-root -np "$NGPU" "$BUILD/bin/ampc-allreduce-bench" --gpu \
    --sizes=$B4_SIZES --iters=30 >"$WORK/b4_$NGPU.txt"
fi

# --- the table ----------------------------------------------------------------------
stamp "results"
"$PY" - "$WORK" "${AMPC_B2[off]}" "${AMPC_B2[fp16]}" "${AMPC_B2[bf16]}" "$AMPC_B3" "$GPU" <<'PY'
import json, os, sys
w, b2off, b2h, b2b, b3, gpu = sys.argv[1:7]
j = lambda n: json.load(open(os.path.join(w, n)))
print("\nampc CUDA target vs PyTorch on %s (medians; ms lower is better)\n" % gpu)
print("%-44s %12s %12s %12s" % ("benchmark", "ampc", "torch", "torch alt"))
for p in ("124m", "1.5b"):
    a, t = j("b1_ampc_%s.json" % p), j("b1_torch_%s.json" % p)
    print("%-44s %9.3f ms %9.3f ms %9.3f ms" % (
        "B1 epilogue %s (%.0fM params) foreach|fused" % (p, a["params"] / 1e6),
        a["ms"], t["foreach_ms"], t["fused_ms"]))
    print("%-44s %9.2f TB/s  (copy %.2f TB/s; 30 B/param floor %.3f ms; skipped %d)" % (
        "   achieved at 30 B/param", a["tb_s"], a["copy_tb_s"], a["floor_ms"], a["skipped"]))
t2 = j("b2_torch.json")
for amp, v in (("off", b2off), ("fp16", b2h), ("bf16", b2b)):
    c = t2.get(amp + "_compile")
    print("%-44s %9s ms %9.3f ms %12s" % ("B2 MLP 3x4096 b512 AdamW %s eager|compile" % amp,
          v, t2[amp + "_eager"], ("%.3f ms" % c) if c else "n/a"))
t3 = j("b3_torch.json")
tok = 8 * 1024 / (float(b3) * 1e-3)
print("%-44s %9s ms %9.3f ms" % ("B3 GPT-2 small bf16 ms/step", b3, t3["ms"]))
print("%-44s %12.0f %12.0f" % ("B3 GPT-2 small tokens/s", tok, t3["tokens_s"]))
# B4 rows from ampc-allreduce-bench's table: size unit variant buckets time_us algbw busbw.
for f in sorted(x for x in os.listdir(w) if x.startswith("b4_") and x.endswith(".txt")):
    n = int(f[3:-4])
    print("%-44s %12s %12s %12s" % ("B4 all-reduce FP32 NCCL, %d GPU%s" % (n, "s" if n > 1 else ""),
          "time", "algbw", "busbw" if n > 1 else "(n=1: none)"))
    for line in open(os.path.join(w, f)):
        c = line.split()
        if line.startswith("#") or len(c) != 7 or c[0] == "size":
            continue
        print("%-44s %9.3f ms %7.1f GB/s %12s" % ("   %s %s %s (%s bucket%s)" % (c[0], c[1], c[2], c[3], "s" if c[3] != "1" else ""), float(c[4]) / 1e3,
              float(c[5]), (c[6] + " GB/s") if n > 1 else "-"))
PY
stamp "done"
