"""Prints bench/gpu.sh's table from the result files in RES (a missing or
failed measurement prints as FAIL, so one broken part keeps the rest), then
issue 12's goals, each reached, not reached or not measured.

  table.py RES GPU [--json SUMMARY.json] [--commit REV] [--date ISO]

--json also writes the results as one record (ampc, PyTorch eager and
torch.compile, ratios, goals, device, commit, date): what bench/gpu.sh
collect copies into bench/results/. Ratios are ampc time / PyTorch time, as
in bench/results/cpu-*.json: below 1 ampc is faster."""
import argparse
import datetime
import json
import os

ap = argparse.ArgumentParser()
ap.add_argument("res")
ap.add_argument("gpu")
ap.add_argument("--json")
ap.add_argument("--commit", default="unknown")
ap.add_argument("--date")
args = ap.parse_args()
res = args.res

B3_TOKENS = 8 * 1024  # batch 8 x 1024 tokens (bench/gpu/b3_torch.py, gpt2_small.mlir)


def load(name):
    try:
        with open(os.path.join(res, name)) as f:
            text = f.read()
            if not name.endswith(".json"):
                return float(text)
            # A script may print a record, then a fuller one: the last counts.
            lines = text.strip().splitlines()
            return json.loads(lines[-1]) if lines else None
    except (OSError, ValueError):
        return None


def ms(v):
    return "%9.3f ms" % v if isinstance(v, (int, float)) else "%12s" % "FAIL"


def ratio(a, b):
    return round(a / b, 3) if isinstance(a, (int, float)) and b else None


summary = {"bench": "gpu", "commit": args.commit, "device": args.gpu,
           "date": args.date or datetime.datetime.now(datetime.timezone.utc)
           .strftime("%Y-%m-%dT%H:%M:%SZ")}

print("\nampc CUDA target vs PyTorch on %s (medians; ms lower is better)\n" % args.gpu)
tests = os.path.join(res, "tests.txt")
if os.path.exists(tests):
    rows = [l.split() for l in open(tests) if l.strip()]
    failed = [r[0] for r in rows if r[1] not in ("PASS", "SKIP")]
    skipped = [r[0] for r in rows if r[1] == "SKIP"]
    passed = len(rows) - len(failed) - len(skipped)
    summary["tests"] = {"passed": passed, "failed": len(failed),
                        "failures": failed, "skipped": skipped}
    print("GPU tests: %d passed, %d failed%s%s\n" % (
        passed, len(failed), ", %d skipped" % len(skipped) if skipped else "",
        "".join("\n  FAIL " + n for n in failed) + "".join("\n  SKIP " + n for n in skipped)))
print("%-46s %12s %12s %12s" % ("benchmark", "ampc", "torch", "torch alt"))

summary["b1"] = []
for p in ("124m", "1.5b"):
    a, t = load("b1_ampc_%s.json" % p) or {}, load("b1_torch_%s.json" % p) or {}
    print("%-46s %s %s %s" % ("B1 epilogue %s foreach | fused" % p, ms(a.get("ms")),
                             ms(t.get("foreach_ms")), ms(t.get("fused_ms"))))
    if a:
        print("%-46s %7.2f TB/s  (copy %.2f TB/s; floor %.3f ms; %.0fM params)" % (
            "   achieved at 30 B/param", a["tb_s"], a["copy_tb_s"], a["floor_ms"],
            a["params"] / 1e6))
        for name, vms in sorted((a.get("variants_ms") or {}).items(), key=lambda kv: kv[1]):
            print("%-46s %s" % ("   loop shape %s (EpilogueOptions)" % name, ms(vms)))
    summary["b1"].append({
        "preset": p, "ampc_ms": a.get("ms"), "tb_s": a.get("tb_s"),
        "copy_tb_s": a.get("copy_tb_s"), "floor_ms": a.get("floor_ms"),
        "params": a.get("params"), "torch_foreach_ms": t.get("foreach_ms"),
        "torch_fused_ms": t.get("fused_ms"),
        "ratio_foreach": ratio(a.get("ms"), t.get("foreach_ms")),
        "ratio_fused": ratio(a.get("ms"), t.get("fused_ms")),
        "copy_fraction": ratio(a.get("tb_s"), a.get("copy_tb_s")),
        "variants_ms": a.get("variants_ms")})

t2 = load("b2_torch.json") or {}
summary["b2"] = []
for amp in ("off", "fp16", "bf16"):
    a = load("b2_ampc_%s.txt" % amp)
    e, c = t2.get(amp + "_eager"), t2.get(amp + "_compile")
    print("%-46s %s %s %s" % ("B2 MLP 3x4096 b512 AdamW %s eager | compile" % amp,
                             ms(a), ms(e), ms(c)))
    summary["b2"].append({"amp": amp, "ampc_ms": a, "torch_eager_ms": e,
                          "torch_compile_ms": c, "ratio_eager": ratio(a, e),
                          "ratio_compile": ratio(a, c)})

a3, t3 = load("b3_ampc.txt"), load("b3_torch.json") or {}
e3, c3 = t3.get("ms"), t3.get("compile_ms")
print("%-46s %s %s %s" % ("B3 GPT-2 small bf16 b8x1024 eager | compile", ms(a3), ms(e3), ms(c3)))


def tokens(v):
    return round(B3_TOKENS / (v * 1e-3)) if isinstance(v, (int, float)) and v else None


if any(v is not None for v in (a3, e3, c3)):
    print("%-46s %12s %12s %12s" % ("B3 tokens/s", *(
        "%.0f" % tokens(v) if tokens(v) else "FAIL" for v in (a3, e3, c3))))
# PyTorch with its vocabulary padded to 50304 by hand (b3_torch.py), what
# ampc's graph-pad-classes does on its own.
ep3, cp3 = t3.get("pad_ms"), t3.get("pad_compile_ms")
if ep3 is not None:
    print("%-46s %s %s %s" % ("B3 torch vocab padded by hand eager | compile",
                             ms(a3), ms(ep3), ms(cp3)))


def variant(name, label):
    """A B3 variant's row (ms and tokens/s), when it ran; its time or None."""
    v = load(name)
    if v is not None:
        print("%-46s %s %12s %12s" % (label, ms(v),
                                      "%.0f" % tokens(v) if tokens(v) else "FAIL", ""))
    return v


a3n = variant("b3_ampc_nopad.txt", "B3 ampc --pad-classes=false, tokens/s")
a3f = variant("b3_ampc_fastbwd.txt", "B3 ampc non-deterministic attention bwd, tok/s")
a3g = variant("b3_ampc_gelu.txt", "B3 ampc --fuse-gemm-gelu (opt-in), tokens/s")
a3i = variant("b3_ampc_inline_sums.txt", "B3 ampc norm column sums inline, tokens/s")
a3w = variant("b3_ampc_widen.txt", "B3 ampc half gradients widened, tokens/s")
# B3 failed as built (bench/gpu.sh b3_paths): its time on the previous
# paths, and which newer path failed alone.
a3s = variant("b3_ampc_safe.txt", "B3 ampc on the previous CUDA paths, tokens/s")
paths = {}
if os.path.exists(os.path.join(res, "b3_paths.txt")):
    paths = dict(l.split() for l in open(os.path.join(res, "b3_paths.txt")) if l.strip())
    failing = [v for v, r in paths.items() if r != "PASS"]
    print("   newer paths alone on the previous ones: %d passed, failing: %s" % (
        len(paths) - len(failing), ", ".join(failing) or "none"))
summary["b3"] = {"ampc_ms": a3, "ampc_tokens_s": tokens(a3), "ampc_nopad_ms": a3n,
                 "ampc_fast_attention_backward_ms": a3f,
                 "ampc_gelu_ms": a3g, "ampc_half_grads_widened_ms": a3w,
                 "ampc_norm_sums_inline_ms": a3i,
                 "ampc_safe_ms": a3s, "paths": paths or None,
                 "ampc_gelu_tokens_s": tokens(a3g), "torch_eager_ms": e3,
                 "torch_eager_tokens_s": tokens(e3), "torch_compile_ms": c3,
                 "torch_compile_tokens_s": tokens(c3),
                 "torch_padded_eager_ms": ep3, "torch_padded_compile_ms": cp3,
                 "ratio_padded_eager": ratio(a3, ep3),
                 "ratio_padded_compile": ratio(a3, cp3), "ratio_eager": ratio(a3, e3),
                 "ratio_compile": ratio(a3, c3)}

# B4 rows from ampc-allreduce-bench: size unit variant buckets time_us algbw busbw.
summary["b4"] = []
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
        summary["b4"].append({"gpus": n, "size": c[0] + c[1], "variant": c[2],
                              "buckets": int(c[3]), "us": float(c[4]),
                              "algbw_gb_s": float(c[5]),
                              "busbw_gb_s": float(c[6]) if n > 1 else None})

# Issue 12's goals: (name, measured, target, reached when measured >= target).
goals = [("B3 tokens/s at least PyTorch eager's", tokens(a3), tokens(e3)),
         ("B3 tokens/s at torch.compile's (the aim)", tokens(a3), tokens(c3))]
for r in summary["b2"][1:]:
    goals.append(("B2 %s at least as fast as PyTorch eager (eager ms / ampc ms)" % r["amp"],
                  ratio(r["torch_eager_ms"], r["ampc_ms"]), 1.0))
for r in summary["b1"]:
    goals.append(("B1 %s at least 85%% of copy bandwidth" % r["preset"],
                  r["copy_fraction"], 0.85))
    goals.append(("B1 %s at least 2x PyTorch's foreach path (foreach ms / ampc ms)" % r["preset"],
                  ratio(r["torch_foreach_ms"], r["ampc_ms"]), 2.0))
summary["goals"] = [{"goal": g, "measured": m, "target": t,
                     "reached": None if m is None or t is None else m >= t}
                    for g, m, t in goals]
print("\ngoals (issue 12):")
for g in summary["goals"]:
    verdict = {None: "not measured", True: "REACHED", False: "not reached"}[g["reached"]]
    value = "" if g["reached"] is None else " (%g against %g)" % (g["measured"], g["target"])
    print("  %-14s %s%s" % (verdict, g["goal"], value))

skipped = os.path.join(res, "skipped.txt")
if os.path.exists(skipped):
    summary["skipped"] = [l.strip() for l in open(skipped) if l.strip()]
    print("\nskipped:\n  " + "\n  ".join(summary["skipped"]))

if args.json:
    with open(args.json, "w") as f:
        json.dump(summary, f, indent=1)
        f.write("\n")
