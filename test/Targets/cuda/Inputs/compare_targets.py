#!/usr/bin/env python3
"""Trains one model on the CPU and the CUDA target with the same data and
seed and compares the per-step metrics (GPU tests; needs no numpy).

  compare_targets.py AMPC MODEL.mlir WORKDIR --labels NAME=RANGE ...
      [--compile-flag=--amp=fp16 ...] [--run-flag=--growth_interval=2 ...]
      [--steps N] [--loss-rtol R] [--norm-rtol R] [--prepare-only]
  compare_targets.py --run-only WORKDIR

--prepare-only compiles and trains on the CPU (no GPU needed); --run-only
then trains on the GPU and compares, on a machine with no compiler
(bench/gpu.sh prepare / run). The GPU run also dumps its first step
(WORKDIR/step1.st, --dump-step) for ampc-stepcheck.

Asserted: loss_scale, skipped and skipped_total identical at every step
(the scaler trajectory is exact: it depends only on found_inf); loss and
grad_norm within the relative tolerances (different summation orders, FMA
and cuBLASLt vs OpenBLAS change the last bits, which compound over steps);
the evaluation after training (--eval on the training data: the eval
forward pass) within the loss tolerance, its accuracy within 2 points.
"""
import argparse
import json
import os
import random
import re
import struct
import subprocess
import sys

DTYPES = {"f32": ("<f4", "f", 4), "i64": ("<i8", "q", 8), "i32": ("<i4", "i", 4)}


def write_npy(path, descr, fmt, shape, values):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, "".join("%d, " % d for d in shape))
    pad = 64 - (10 + len(header) + 1) % 64
    header += " " * pad + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        f.write(header.encode("latin1"))
        f.write(struct.pack("<%d%s" % (len(values), fmt), *values))


def inputs_of(model):
    pat = re.compile(r'graph\.input "([^"]+)" : tensor<([0-9x]+)x(f32|i64|i32)>')
    return [(m.group(1), [int(d) for d in m.group(2).split("x")], m.group(3))
            for m in pat.finditer(open(model).read())]


def run(cmd, cwd=None):
    print("+ " + " ".join(cmd), flush=True)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, cwd=cwd)
    print(r.stdout[-4000:], flush=True)
    if r.returncode:
        sys.exit("command failed (exit %d): %s" % (r.returncode, cmd[0]))


def train(workdir, job, target):
    """Runs WORKDIR/train_TARGET on the job's data; returns its metrics."""
    metrics = target + ".jsonl"
    run(["./train_" + target, "--data", job["data"], "--steps", str(job["steps"]),
         "--seed", "7", "--log_every", "1", "--metrics", metrics,
         "--eval", job["data"]] + job["run_flags"], cwd=workdir)
    return [json.loads(l) for l in open(os.path.join(workdir, metrics)) if l.strip()]


def prepare(a):
    """Writes the data, compiles both targets and trains on the CPU. Needs
    the compiler and nvcc, not a GPU; the work directory then holds all the
    GPU run needs (job.json, the data, train_cuda, cpu.jsonl)."""
    os.makedirs(a.workdir, exist_ok=True)
    ranges = dict(kv.split("=") for kv in a.labels)
    rng = random.Random(1234)
    data = []
    for name, shape, dt in inputs_of(a.model):
        shape = [shape[0] * 4] + shape[1:]  # four batches
        n = 1
        for d in shape:
            n *= d
        descr, fmt, _ = DTYPES[dt]
        if dt == "f32":
            vals = [rng.gauss(0.0, 1.0) for _ in range(n)]
        else:
            hi = int(ranges.get(name, 2))
            vals = [rng.randrange(hi) for _ in range(n)]
        write_npy(os.path.join(a.workdir, name + ".npy"), descr, fmt, shape, vals)
        data.append("%s=%s.npy" % (name, name))  # relative: the folder may move
    amp = [f.split("=", 1)[1] for f in a.compile_flag if f.startswith("--amp=")]
    job = {"model": os.path.basename(a.model), "model_path": os.path.abspath(a.model),
           "amp": (amp or ["off"])[-1], "data": ",".join(data),
           "steps": a.steps, "run_flags": a.run_flag,
           "loss_rtol": a.loss_rtol, "norm_rtol": a.norm_rtol}
    for target in ("cpu", "cuda"):
        run([a.ampc, "compile", a.model, "--target=" + target, "-o",
             os.path.join(a.workdir, "train_" + target)] + a.compile_flag)
    train(a.workdir, job, "cpu")
    with open(os.path.join(a.workdir, "job.json"), "w") as f:
        json.dump(job, f)


def compare(workdir):
    """Trains on the GPU and compares with the CPU run of prepare()."""
    job = json.load(open(os.path.join(workdir, "job.json")))
    cpu = [json.loads(l) for l in open(os.path.join(workdir, "cpu.jsonl")) if l.strip()]
    gpu = train(workdir, job, "cuda")
    # The last record is the evaluation after training (the forward pass of
    # evaluate(), on the training data).
    cpu_eval = [r for r in cpu if "eval_loss" in r]
    gpu_eval = [r for r in gpu if "eval_loss" in r]
    cpu = [r for r in cpu if "eval_loss" not in r]
    gpu = [r for r in gpu if "eval_loss" not in r]
    steps = job["steps"]
    if len(cpu) != steps or len(gpu) != steps:
        sys.exit("expected %d metric lines, got %d (cpu) and %d (cuda)" %
                 (steps, len(cpu), len(gpu)))
    bad = []
    for c, g in zip(cpu, gpu):
        for key in ("loss_scale", "skipped", "skipped_total"):
            if c[key] != g[key]:
                bad.append("step %d: %s cpu %r cuda %r" % (c["step"], key, c[key], g[key]))
        for key, tol in (("loss", job["loss_rtol"]), ("grad_norm", job["norm_rtol"])):
            if c["skipped"]:
                continue  # meaningless on an overflowing step
            x, y = float(c[key]), float(g[key])
            if abs(x - y) > tol * max(abs(x), 1e-6):
                bad.append("step %d: %s cpu %g cuda %g" % (c["step"], key, x, y))
        print("step %d: loss %s / %s  norm %s / %s  scale %s / %s  skipped %s / %s" % (
            c["step"], c["loss"], g["loss"], c["grad_norm"], g["grad_norm"],
            c["loss_scale"], g["loss_scale"], c["skipped"], g["skipped"]))
    if len(cpu_eval) != 1 or len(gpu_eval) != 1:
        bad.append("expected one eval record each, got %d (cpu) and %d (cuda)" %
                   (len(cpu_eval), len(gpu_eval)))
    else:
        c, g = cpu_eval[0], gpu_eval[0]
        x, y = c["eval_loss"], g["eval_loss"]
        if x is None or y is None or abs(x - y) > job["loss_rtol"] * max(abs(x), 1e-6):
            bad.append("eval loss: cpu %r cuda %r" % (x, y))
        # A near-tie between two logits may go either way: 2 points.
        if abs(c.get("eval_accuracy", 0) - g.get("eval_accuracy", 0)) > 0.02:
            bad.append("eval accuracy: cpu %r cuda %r" %
                       (c.get("eval_accuracy"), g.get("eval_accuracy")))
        print("eval: loss %s / %s  accuracy %s / %s" % (
            x, y, c.get("eval_accuracy"), g.get("eval_accuracy")))
    if bad:
        sys.exit("%s: cpu and cuda disagree:\n  %s" % (job["model"], "\n  ".join(bad)))
    print("OK: %s, %d steps agree" % (job["model"], steps))
    # The first step once more, dumped for ampc-stepcheck (the reference
    # interpreter; bench/gpu.sh check, gpu-vs-cpu.test).
    run(["./train_cuda", "--data", job["data"], "--steps", "1", "--seed", "7",
         "--dump-step", "step1.st"] + job["run_flags"], cwd=workdir)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--run-only":
        return compare(sys.argv[2])
    ap = argparse.ArgumentParser()
    ap.add_argument("ampc")
    ap.add_argument("model")
    ap.add_argument("workdir")
    ap.add_argument("--labels", action="append", default=[])
    ap.add_argument("--compile-flag", action="append", default=[])
    ap.add_argument("--run-flag", action="append", default=[])
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--loss-rtol", type=float, default=2e-2)
    ap.add_argument("--norm-rtol", type=float, default=5e-2)
    ap.add_argument("--prepare-only", action="store_true",
                    help="compile and train on the CPU only; finish on a GPU "
                    "machine with --run-only WORKDIR")
    a = ap.parse_args()
    prepare(a)
    if not a.prepare_only:
        compare(a.workdir)


if __name__ == "__main__":
    main()
