"""Prints bench/gpu.sh's table from the result files in RES (a missing or
failed measurement prints as FAIL, so one broken part keeps the rest)."""
import json
import os
import sys

res, gpu = sys.argv[1], sys.argv[2]


def load(name):
    try:
        with open(os.path.join(res, name)) as f:
            return json.loads(f.read()) if name.endswith(".json") else float(f.read())
    except (OSError, ValueError):
        return None


def ms(v):
    return "%9.3f ms" % v if isinstance(v, (int, float)) else "%12s" % "FAIL"


print("\nampc CUDA target vs PyTorch on %s (medians; ms lower is better)\n" % gpu)
tests = os.path.join(res, "tests.txt")
if os.path.exists(tests):
    rows = [l.split() for l in open(tests) if l.strip()]
    print("GPU tests: %d passed, %d failed%s\n" % (
        sum(r[1] == "PASS" for r in rows), sum(r[1] != "PASS" for r in rows),
        "".join("\n  FAIL " + r[0] for r in rows if r[1] != "PASS")))
print("%-46s %12s %12s %12s" % ("benchmark", "ampc", "torch", "torch alt"))
for p in ("124m", "1.5b"):
    a, t = load("b1_ampc_%s.json" % p) or {}, load("b1_torch_%s.json" % p) or {}
    print("%-46s %s %s %s" % ("B1 epilogue %s foreach | fused" % p, ms(a.get("ms")),
                             ms(t.get("foreach_ms")), ms(t.get("fused_ms"))))
    if a:
        print("%-46s %7.2f TB/s  (copy %.2f TB/s; floor %.3f ms; %.0fM params)" % (
            "   achieved at 30 B/param", a["tb_s"], a["copy_tb_s"], a["floor_ms"],
            a["params"] / 1e6))
t2 = load("b2_torch.json") or {}
for amp in ("off", "fp16", "bf16"):
    print("%-46s %s %s %s" % ("B2 MLP 3x4096 b512 AdamW %s eager | compile" % amp,
                             ms(load("b2_ampc_%s.txt" % amp)), ms(t2.get(amp + "_eager")),
                             ms(t2.get(amp + "_compile"))))
a3, t3 = load("b3_ampc.txt"), load("b3_torch.json") or {}
print("%-46s %s %s" % ("B3 GPT-2 small bf16 b8x1024 ms/step", ms(a3), ms(t3.get("ms"))))
if a3 and t3:
    print("%-46s %12.0f %12.0f" % ("B3 tokens/s", 8 * 1024 / (a3 * 1e-3), t3["tokens_s"]))
# B4 rows from ampc-allreduce-bench: size unit variant buckets time_us algbw busbw.
for f in sorted(x for x in os.listdir(res) if x.startswith("b4_") and x.endswith(".txt")):
    n = int(f[3:-4])
    print("%-46s %12s %12s %12s" % ("B4 all-reduce FP32 NCCL, %d GPU%s" % (n, "s" * (n > 1)),
                                    "time", "algbw", "busbw" if n > 1 else "(n=1: none)"))
    if n == 1:
        print("   (one GPU: nothing crosses a link; the times are the call and bucketing overhead)")
    for line in open(os.path.join(res, f)):
        c = line.split()
        if line.startswith("#") or len(c) != 7 or c[0] == "size":
            continue
        print("%-46s %9.3f ms %7.1f GB/s %12s" % (
            "   %s %s %s (%s bucket%s)" % (c[0], c[1], c[2], c[3], "s" * (c[3] != "1")),
            float(c[4]) / 1e3, float(c[5]), (c[6] + " GB/s") if n > 1 else "-"))
