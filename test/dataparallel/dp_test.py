#!/usr/bin/env python3
"""Data-parallel training tests (CPU target, MPI backend).

usage: dp_test.py AMPC MPIEXEC WORKDIR TEST
TEST: setup | equivalence | overflow | resume | fault-kill | fault-stall |
      fault-data | disagree | overlap

`overlap` runs the two-rank binaries with the all-reduce overlapped with the
backward (the default), with --overlap-allreduce=false and with
AMPC_OVERLAP_ALLREDUCE=off, 13 buckets a step and 2 accumulation
micro-batches: losses, norms, scales, weights and optimizer state must be
bitwise equal, and the run report must count the buckets that started
before the backward's last gradient.

`disagree` starts two ranks that differ in one thing each (--lr, --seed,
--init-scale, a data file, an fp16 binary beside an FP32 one, a model with a
wider hidden layer): the start-up agreement check must end the job with one
line naming the field, status 2, quickly, and without an MPI error or a
backtrace.

`setup` compiles Inputs/dp_mlp.mlir four times: global batch 8 for one
rank (b8, f8) and per-rank batch 4 for two ranks (b4, f4); b* with
--amp=fp16 and a dynamic loss scale, f* in FP32; all with SGD + momentum,
clip-norm, 2 accumulation steps and dropout. It writes the data; the other
tests reuse WORKDIR.

Tolerances. One rank at batch 8 and two ranks at batch 4 compute the same
formulas on the same samples with the same dropout masks (the 1/B scaling of
the loss gradient is a power of two, exact).
- FP32 (f8 vs f4): only the order of FP32 sums differs (the weight-gradient
  GEMM sums 8 products where each rank sums 4 and the all-reduce adds the two
  partial sums; the loss mean likewise): a few ulps per gradient element per
  step, carried through 6 SGD steps at lr 0.05. Bound per element of weights
  and momentum buffers: |a - b| <= 1e-6 + 1e-5 |b| (observed max 6e-8);
  loss and grad_norm within 1e-5 relative. A wrong divisor, shard or mask
  moves them by >= 1e-3.
- FP16 AMP (b8 vs b4): additionally each rank's weight gradient leaves the
  half-precision GEMM rounded to FP16 before the FP32 all-reduce, so the two
  half-rounded partial sums differ from the one half-rounded full sum by up
  to 2^-11 relative per micro-batch (PyTorch DDP under autocast has the same
  effect). Through 6-8 steps (lr 0.05, momentum 0.9, |g| <= 1 by the clip)
  that is <= 8 * 0.05 * 10 * 2^-11 ~ 2e-3 on a weight in the worst case.
  Bound: |a - b| <= 5e-4 + 5e-3 |b| (observed max 1e-4); loss and grad_norm
  within 2e-3 relative; skip flags and loss scales exactly equal.
"""
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FP32_TOL = (1e-6, 1e-5, 1e-5)  # atol, rtol on tensors; rtol on loss/norm
AMP_TOL = (5e-4, 5e-3, 2e-3)
N = 64          # samples
FEATURES = 16
CLASSES = 4

ampc, mpiexec, work, test = sys.argv[1:5]
os.makedirs(work, exist_ok=True)
ENV = dict(os.environ, AMPC_COMM_TIMEOUT="60", OPENBLAS_NUM_THREADS="1")


def path(*p):
    return os.path.join(work, *p)


def fail(msg):
    sys.exit("FAIL: " + msg)


# ---- data (.npy without numpy) ----

def write_npy(file, descr, shape, values, fmt):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, "".join("%d, " % d for d in shape))
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(file, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%d%s" % (len(values), fmt), *values))


def make_data():
    # Deterministic pseudo-random features with a class signal.
    state = 12345
    xs, ys = [], []
    for i in range(N):
        y = (i * 7) % CLASSES
        for j in range(FEATURES):
            state = (state * 1103515245 + 12345) % 2**31
            v = state / 2**31 - 0.5
            xs.append(v + (1.5 if j % CLASSES == y else 0.0))
        ys.append(y)
    write_npy(path("x.npy"), "<f4", (N, FEATURES), xs, "f")
    write_npy(path("y.npy"), "<i8", (N,), ys, "q")
    bad = list(xs)
    bad[5 * FEATURES + 3] = 1e30  # sample 5 overflows fp16: one rank's shard
    write_npy(path("x_bad.npy"), "<f4", (N, FEATURES), bad, "f")


DATA = None


def data(x="x.npy"):
    return ["--data", "x=%s,label=%s" % (path(x), path("y.npy"))]


# ---- binaries ----

COMPILE = ["--optimizer=sgd", "--momentum=0.9", "--lr=0.05", "--clip-norm=1.0",
           "--accum-steps=2"]


def setup():
    make_data()
    text = open(os.path.join(HERE, "Inputs", "dp_mlp.mlir")).read()
    small = text.replace("tensor<8x", "tensor<4x")
    assert "tensor<8x" not in small and small != text
    for name, t, amp in (("b8", text, "fp16"), ("b4", small, "fp16"),
                         ("f8", text, "off"), ("f4", small, "off")):
        src = path(name + ".mlir")
        open(src, "w").write(t)
        r = subprocess.run([ampc, "compile", src, "-o", path(name), "--amp=" + amp] + COMPILE,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode:
            fail("ampc compile %s:\n%s" % (name, r.stdout))
    # A wider hidden layer (32 -> 48) at batch 4, fp16: another model shape.
    wide = small.replace("32x16", "48x16").replace("<32xf32>", "<48xf32>") \
                .replace("4x32xf32", "4x48xf32")
    assert "32x" not in wide and "<32x" not in wide
    src = path("w4.mlir")
    open(src, "w").write(wide)
    r = subprocess.run([ampc, "compile", src, "-o", path("w4"), "--amp=fp16"] + COMPILE,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode:
        fail("ampc compile w4:\n%s" % r.stdout)
    print("compiled b8, b4 (fp16), f8, f4 (fp32) and w4 (fp16, hidden 48)")


def run(cmd, ranks=1, expect_rc=0, timeout=120, env=None):
    if ranks > 1:
        cmd = [mpiexec, "--allow-run-as-root", "--oversubscribe", "-np", str(ranks)] + cmd
    r = subprocess.run(cmd, env=dict(ENV, **(env or {})), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=timeout)
    print("$ " + " ".join(cmd))
    print(r.stdout)
    if expect_rc is not None and r.returncode != expect_rc:
        fail("exit status %d, expected %d" % (r.returncode, expect_rc))
    return r.stdout


# ---- safetensors and metrics ----

def read_safetensors(file):
    with open(file, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        body = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        assert info["dtype"] == "F32", (name, info["dtype"])
        a, b = info["data_offsets"]
        out[name] = struct.unpack("<%df" % ((b - a) // 4), body[a:b])
    return out


def checkpoint(ckdir, step):
    return os.path.join(ckdir, "step-%08d" % step, "model.safetensors")


def compare_tensors(fa, fb, what, tol):
    ATOL, RTOL = tol[0], tol[1]
    a, b = read_safetensors(fa), read_safetensors(fb)
    if set(a) != set(b):
        fail("%s: different tensors %s vs %s" % (what, sorted(a), sorted(b)))
    worst = 0.0
    for name in sorted(a):
        for i, (x, y) in enumerate(zip(a[name], b[name])):
            err = abs(x - y)
            worst = max(worst, err)
            if not err <= ATOL + RTOL * abs(y):
                fail("%s: %s[%d] = %.9g vs %.9g (|diff| %.3g > %.3g + %.3g*|b|)"
                     % (what, name, i, x, y, err, ATOL, RTOL))
    print("%s: %d tensors within |a-b| <= %g + %g|b| (max |diff| %.3g)"
          % (what, len(a), ATOL, RTOL, worst))
    return worst


def metrics(file):
    return [json.loads(l) for l in open(file) if l.strip()]


def train_steps(m):
    return [r for r in m if "loss_scale" in r]


def compare_metrics(ma, mb, what, tol):
    rtol = tol[2]
    ta, tb = train_steps(ma), train_steps(mb)
    if [r["step"] for r in ta] != [r["step"] for r in tb]:
        fail("%s: logged steps differ" % what)
    for x, y in zip(ta, tb):
        for k in ("skipped", "loss_scale", "skipped_total"):
            if x[k] != y[k]:
                fail("%s: step %d: %s %r vs %r" % (what, x["step"], k, x[k], y[k]))
        for k in ("loss", "grad_norm"):
            if (x[k] is None) != (y[k] is None) or (
                    x[k] is not None and abs(x[k] - y[k]) > rtol * abs(y[k])):
                fail("%s: step %d: %s %r vs %r" % (what, x["step"], k, x[k], y[k]))
    print("%s: %d metric lines agree (skip, scale exactly; loss, grad_norm within %g relative)"
          % (what, len(ta), rtol))


def fresh(*names):
    """Removes what an earlier run of a test left (metrics files append on
    --resume)."""
    for n in names:
        for p in (path(n), path(n) + ".jsonl"):
            if os.path.isdir(p):
                shutil.rmtree(p)
            elif os.path.exists(p):
                os.remove(p)


def common(steps):
    return ["--steps", str(steps), "--log-every", "1", "--seed", "7"]


# ---- tests ----

def equivalence():
    K = 6
    ev = ["--eval", "x=%s,label=%s" % (path("x.npy"), path("y.npy"))]
    for prec, one_bin, two_bin, tol in (("fp32", "f8", "f4", FP32_TOL), ("fp16", "b8", "b4", AMP_TOL)):
        fresh("eq1-" + prec, "eq2-" + prec, "eqh")
        one, two = path("eq1-" + prec), path("eq2-" + prec)
        run([path(one_bin)] + data() + common(K) + ["--checkpoint-dir", one + "/ck",
            "--metrics", one + ".jsonl"] + ev)
        out = run([path(two_bin)] + data() + common(K) + ["--checkpoint-dir", two + "/ck",
                  "--metrics", two + ".jsonl", "--check-agreement", "--bucket-mb", "0.001"] + ev,
                  ranks=2)
        if not re.search(r"agreement: 2 ranks end with identical state", out):
            fail("no agreement line")
        if "data parallel: 2 ranks x batch 4 = global batch 8" not in out:
            fail("no data-parallel line")
        # Rank 0 alone prints: one summary line.
        if out.count("done: ") != 1:
            fail("expected one summary line (rank 0 only), got %d" % out.count("done: "))
        what = "%s 2x4 vs 1x8" % prec
        compare_tensors(checkpoint(two + "/ck", K), checkpoint(one + "/ck", K), what, tol)
        m1, m2 = metrics(one + ".jsonl"), metrics(two + ".jsonl")
        compare_metrics(m2, m1, what, tol)
        e1 = [r for r in m1 if "eval_loss" in r][0]
        e2 = [r for r in m2 if "eval_loss" in r][0]
        if e1["eval_samples"] != e2["eval_samples"] or \
                abs(e1["eval_loss"] - e2["eval_loss"]) > tol[2] * abs(e1["eval_loss"]) or \
                abs(e1["eval_accuracy"] - e2["eval_accuracy"]) > 1.0 / N + 1e-9:
            fail("eval differs: %r vs %r" % (e2, e1))
        print("%s eval: %r vs %r" % (prec, e2, e1))
    # Half-precision reduction with a pre-divide: same decisions, close weights.
    h = path("eqh")
    run([path("b4")] + data() + common(K) + ["--checkpoint-dir", h + "/ck",
        "--reduce-dtype", "fp16", "--predivide", "2", "--check-agreement"], ranks=2)
    a = read_safetensors(checkpoint(h + "/ck", K))
    b = read_safetensors(checkpoint(path("eq1-fp16") + "/ck", K))
    worst = max(abs(x - y) for n in a for x, y in zip(a[n], b[n]))
    if not worst < 1e-2:
        fail("fp16 reduction: max |diff| %.3g >= 1e-2" % worst)
    print("fp16 reduction, predivide 2: max |diff| %.3g < 1e-2" % worst)


def overflow():
    K = 8  # two epochs of 64 samples / (8 x 2 micro-batches): two bad steps
    fresh("of1", "of2")
    one, two = path("of1"), path("of2")
    run([path("b8")] + data("x_bad.npy") + common(K) + ["--checkpoint-dir", one + "/ck",
        "--metrics", one + ".jsonl"])
    run([path("b4")] + data("x_bad.npy") + common(K) + ["--checkpoint-dir", two + "/ck",
        "--metrics", two + ".jsonl", "--check-agreement"], ranks=2)
    m1, m2 = train_steps(metrics(one + ".jsonl")), train_steps(metrics(two + ".jsonl"))
    skipped = [r["step"] for r in m2 if r["skipped"]]
    if len(skipped) != 2:
        fail("expected 2 skipped steps (one per epoch), got %r" % skipped)
    for s in skipped:
        before = m2[s - 1]["loss_scale"]
        if s < K and m2[s]["loss_scale"] != before / 2:
            fail("step %d skipped but the next scale is %r, not %r"
                 % (s, m2[s]["loss_scale"], before / 2))
    # Overflow attribution: the bad sample sits on one rank, and rank 0's
    # names (flags taken after the all-reduce) are those of one process.
    for s in skipped:
        n1, n2 = m1[s - 1].get("nonfinite_params"), m2[s - 1].get("nonfinite_params")
        if not n2 or n1 != n2:
            fail("step %d: non-finite parameters %r on 2 ranks, %r on 1" % (s, n2, n1))
    print("overflow attribution: 2 ranks name %r, as 1 rank does" % m2[skipped[0] - 1]["nonfinite_params"])
    compare_metrics(m2, m1, "overflow 2x4 vs 1x8", AMP_TOL)
    compare_tensors(checkpoint(two + "/ck", K), checkpoint(one + "/ck", K), "overflow 2x4 vs 1x8",
                    AMP_TOL)


def resume():
    K, H = 6, 3
    fresh("rs2", "rs1", "rs12", "rs121", "rs22")
    two, one = path("rs2"), path("rs1")
    run([path("b4")] + data() + common(K) + ["--checkpoint-dir", two + "/ck",
        "--checkpoint-every", str(H), "--metrics", two + ".jsonl"], ranks=2)
    st = json.load(open(os.path.join(two, "ck", "step-%08d" % H, "train_state.json")))
    if st["data"]["batch_size"] != 8 or st["data"]["world_size"] != 2:
        fail("train_state data: %r" % st["data"])
    # 2 ranks -> 1 rank at the global batch.
    run([path("b8")] + data() + common(K) + ["--resume", os.path.join(two, "ck", "step-%08d" % H),
        "--checkpoint-dir", one + "/ck", "--metrics", one + ".jsonl"])
    compare_tensors(checkpoint(one + "/ck", K), checkpoint(two + "/ck", K), "resume 2->1", AMP_TOL)
    compare_metrics([r for r in metrics(one + ".jsonl") if r.get("step", 0) > H],
                    [r for r in metrics(two + ".jsonl") if r.get("step", 0) > H], "resume 2->1",
                    AMP_TOL)
    # 2 -> 2 continues bitwise (the checkpoint holds all the state).
    run([path("b4")] + data() + common(K) + ["--resume", os.path.join(two, "ck", "step-%08d" % H),
        "--checkpoint-dir", two + "2/ck"], ranks=2)
    compare_tensors(checkpoint(two + "2/ck", K), checkpoint(two + "/ck", K), "resume 2->2",
                    (0.0, 0.0, 0.0))
    # and back: 1 rank's checkpoint resumed on 2 ranks.
    back = path("rs12")
    run([path("b4")] + data() + common(K + 2) + ["--resume", one + "/ck",
        "--checkpoint-dir", back + "/ck"], ranks=2)
    run([path("b8")] + data() + common(K + 2) + ["--resume", one + "/ck",
        "--checkpoint-dir", back + "1/ck"])
    compare_tensors(checkpoint(back + "/ck", K + 2), checkpoint(back + "1/ck", K + 2), "resume 1->2", AMP_TOL)
    # A different global batch is refused with one line.
    out = run([path("b4")] + data() + common(K + 2) + ["--resume", one + "/ck"], expect_rc=2)
    if "in batches of 4" not in out:
        fail("no global-batch mismatch message")


# ---- the all-reduce overlapped with the backward ----

OVERLAP_LINE = re.compile(r"data parallel: (\d+) buckets a step; (\d+) of (\d+) started "
                          r"before the backward's last gradient \(overlap (on|off)\)")


def overlap():
    K = 6
    # 0.0002 MiB = 52 floats a bucket. Buffers in the backward's order:
    # fc2.bias (4), fc2.weight (128), fc1.bias (32), fc1.weight (512) make 13
    # buckets: 0-1 hold fc2's gradients only, 2 also 24 of fc1.bias, 3-12
    # fc1's. FP32: fc1's two gradients come from one op, fc1.bias marked
    # last, so buckets 0-1 start before the last gradient. fp16: the FP32
    # casts of the gradients finish fc2.bias, fc2.weight, fc1.bias, then
    # fc1.weight: buckets 0-2.
    BUCKETS = 13
    exact = (0.0, 0.0, 0.0)
    for prec, binary, EARLY in (("fp32", "f4", 2), ("fp16", "b4", 3)):
        runs = (("on", [], None), ("off", ["--overlap-allreduce=false"], None),
                ("env", [], {"AMPC_OVERLAP_ALLREDUCE": "off"}))
        for mode, flags, env in runs:
            name = "ov-%s-%s" % (prec, mode)
            fresh(name)
            out = run([path(binary)] + data() + common(K) + ["--checkpoint-dir", path(name, "ck"),
                      "--metrics", path(name) + ".jsonl", "--bucket-mb", "0.0002"] + flags,
                      ranks=2, env=env)
            m = OVERLAP_LINE.search(out)
            if not m:
                fail("%s: no overlap line" % name)
            buckets, early, started, state = int(m[1]), int(m[2]), int(m[3]), m[4]
            want = (BUCKETS, EARLY * K if mode == "on" else 0, BUCKETS * K,
                    "on" if mode == "on" else "off")
            if (buckets, early, started, state) != want:
                fail("%s: %r, expected %r" % (name, m[0], want))
            print("%s: %s" % (name, m[0]))
        on = path("ov-%s-on" % prec)
        for mode in ("off", "env"):
            other = path("ov-%s-%s" % (prec, mode))
            what = "%s overlap on vs %s" % (prec, mode)
            for f in ("model.safetensors", "optimizer.safetensors"):
                a = os.path.join(on, "ck", "step-%08d" % K, f)
                b = os.path.join(other, "ck", "step-%08d" % K, f)
                compare_tensors(a, b, what + " " + f, exact)
            compare_metrics(metrics(on + ".jsonl"), metrics(other + ".jsonl"), what, exact)


# ---- ranks that disagree ----

def disagree():
    base = common(3)
    cases = [
        # (what, rank 0's command, rank 1's command, expected line)
        ("lr", [path("b4")] + data() + base + ["--lr", "0.001"],
         [path("b4")] + data() + base + ["--lr", "0.002"],
         'error: ranks disagree on "hyper.lr": rank 0 has 0.001, rank 1 has 0.002'),
        ("seed", [path("b4")] + data() + base,
         [path("b4")] + data() + base + ["--seed", "8"],
         'error: ranks disagree on "seed": rank 0 has 7, rank 1 has 8'),
        ("init-scale", [path("b4")] + data() + base + ["--init-scale", "1024"],
         [path("b4")] + data() + base + ["--init-scale", "4096"],
         'error: ranks disagree on "hyper.init_scale": rank 0 has 1024, rank 1 has 4096'),
        ("data", [path("b4")] + data() + base,
         [path("b4")] + data("x_bad.npy") + base,
         r'error: ranks disagree on "data\.x\.file": rank 0 has size \d+, crc32 of the first '
         r'64 KiB [0-9a-f]{8}, rank 1 has size \d+, crc32 of the first 64 KiB [0-9a-f]{8}'),
        ("amp", [path("b4")] + data() + base, [path("f4")] + data() + base,
         'error: ranks disagree on "config.amp": rank 0 has fp16, rank 1 has off'),
        ("shape", [path("b4")] + data() + base, [path("w4")] + data() + base,
         r'error: ranks disagree on "param.fc1.weight.shape": rank 0 has \[32,16\], '
         r'rank 1 has \[48,16\]'),
    ]
    for what, a, b, want in cases:
        cmd = [mpiexec, "--allow-run-as-root", "--oversubscribe", "-np", "1"] + a + \
              [":", "-np", "1"] + b
        start = time.monotonic()
        try:
            r = subprocess.run(cmd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, timeout=60)
        except subprocess.TimeoutExpired:
            fail("%s: the job hung" % what)
        took = time.monotonic() - start
        print("$ " + " ".join(cmd))
        print(r.stdout)
        if r.returncode == 0:
            fail("%s: expected a non-zero exit" % what)
        lines = [l for l in r.stdout.splitlines() if "ranks disagree" in l]
        if len(lines) != 1:
            fail("%s: expected one 'ranks disagree' line, got %d" % (what, len(lines)))
        if not re.fullmatch(want, lines[0].strip()) and lines[0].strip() != want:
            fail("%s: %r does not match %r" % (what, lines[0], want))
        for bad in ("MPI_ERR", "MPI_ABORT", "backtrace", "Backtrace", "Signal:", "step 1",
                    "done:"):
            if bad in r.stdout:
                fail("%s: output contains %r" % (what, bad))
        print("PASS %s: rc=%d in %.1f s: %s" % (what, r.returncode, took, lines[0]))


# ---- faults ----

def children(pid):
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                stat = open("/proc/%s/stat" % d).read()
                ppid = int(stat.rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            if ppid == pid:
                out.append(int(d))
    return out


def rank_pid(mpirun_pid, rank, binary):
    pending, seen = [mpirun_pid], set()
    while pending:
        p = pending.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            env = open("/proc/%d/environ" % p, "rb").read().split(b"\0")
            cmd = open("/proc/%d/cmdline" % p, "rb").read()
        except OSError:
            continue
        if ("OMPI_COMM_WORLD_RANK=%d" % rank).encode() in env and binary.encode() in cmd:
            return p
        pending += children(p)
    return None


def fault(kind):
    timeout = 3
    m = path("fault-%s.jsonl" % kind)
    if os.path.exists(m):
        os.remove(m)
    cmd = [mpiexec, "--allow-run-as-root", "--oversubscribe", "-np", "2"]
    binary = path("b4")
    if kind == "data":
        # Rank 1 alone is given a missing file: it must end rank 0 too.
        cmd += ["sh", "-c", 'exec "$0" "$@" --data x=%s' % path("x${OMPI_COMM_WORLD_RANK}.npy")]
        open(path("x0.npy"), "wb").write(open(path("x.npy"), "rb").read())
        if os.path.exists(path("x1.npy")):
            os.remove(path("x1.npy"))
    cmd += [binary, "--data", "label=" + path("y.npy"), "--steps", "1000000", "--log-every", "1",
            "--metrics", m, "--comm-timeout", str(timeout)]
    if kind != "data":
        cmd += ["--data", "x=" + path("x.npy")]
    start = time.monotonic()
    proc = subprocess.Popen(cmd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    victim = None
    try:
        if kind != "data":
            while time.monotonic() - start < 60 and not (os.path.exists(m) and os.path.getsize(m) > 0):
                time.sleep(0.1)
            victim = rank_pid(proc.pid, 1, binary)
            if victim is None:
                fail("could not find rank 1")
            os.kill(victim, signal.SIGKILL if kind == "kill" else signal.SIGSTOP)
            hit = time.monotonic()
        else:
            hit = start
        out, _ = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        fail("%s: the job hung" % kind)
    finally:
        if victim and kind == "stall":
            try:
                os.kill(victim, signal.SIGKILL)
            except OSError:
                pass
    took = time.monotonic() - hit
    print(out)
    print("%s: rc=%d, ended %.1f s after the fault (comm timeout %d s)" % (kind, proc.returncode, took, timeout))
    if proc.returncode == 0:
        fail("expected a non-zero exit")
    if took > timeout + 15:
        fail("took %.1f s" % took)
    want = {
        # Whichever comes first under load: the failed collective (MPI
        # reports the dead peer), mpirun's SIGTERM, the timeout, or mpirun's
        # own notice when it had to SIGKILL rank 0 before it could print.
        "kill": r"ampc: error: rank 0 of 2: (terminated by signal \d+|.*timed out after 3 s|"
                r".* failed: .*a peer rank probably failed)"
                r"|mpirun noticed that process rank 1 .* exited on signal 9",
        "stall": r"ampc: error: rank 0 of 2: \S+ timed out after 3 s: a peer rank died or stalled",
        "data": r"ampc: error: rank 1 of 2: .*x1\.npy: ",
    }[kind]
    if not re.search(want, out):
        fail("output does not match %r" % want)
    lines = [l for l in out.splitlines() if l.startswith("ampc: error:")] or [re.search(want, out).group(0)]
    print("PASS: " + lines[0])


if test == "setup":
    setup()
elif test == "equivalence":
    equivalence()
elif test == "overflow":
    overflow()
elif test == "resume":
    resume()
elif test == "disagree":
    disagree()
elif test == "overlap":
    overlap()
elif test.startswith("fault-"):
    fault(test[len("fault-"):])
else:
    fail("unknown test " + test)
print("PASS")
