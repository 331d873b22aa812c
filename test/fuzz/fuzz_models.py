#!/usr/bin/env python3
"""Mutation fuzzer for ampc's model-file path (python3 stdlib only).

Each iteration takes a random seed file, applies 1-3 random mutations (byte
flips, line/token delete/duplicate/swap, extreme numbers, type swaps, deep
brackets, splices, truncation) and runs `ampc check` on it (and, for a
fraction of iterations, `ampc explain --amp=fp16` and `ampc compile
--emit=cpp -o /dev/null`) under a per-run timeout. A FINDING is:
  * a crash (killed by a signal, negative return code, "Stack dump",
    "LLVM ERROR", "PLEASE submit a bug report"),
  * a timeout (hang),
  * an exit status other than 0, 1 or 2,
  * a non-zero exit whose stderr has no diagnostic in the
    `file:line:col: error:` form nor a location-less `ampc: ...` line.
Findings are reduced by deleting lines while the same kind of finding
persists, and written to --out; the driver exits 1 and lists them.

  fuzz_models.py --ampc build/bin/ampc --seed 1 --iterations 500 SEEDS...
  fuzz_models.py --ampc build/bin/ampc --seed 7 --seconds 3600 SEEDS...
"""
import argparse
import collections
import concurrent.futures
import os
import random
import re
import subprocess
import sys
import tempfile
import time

EXTREMES = ["0", "-1", "2147483648", "9223372036854775808", "-9223372036854775809",
            "1e308", "-1e308", "nan", "inf", "-inf", "0x7fffffffffffffff",
            "99999999999999999999999", "1.0e-320"]
DIMS = ["0", "1", "3", "65536", "2147483647", "2147483648", "4294967297",
        "1099511627776", "4611686018427387904", "?"]
TYPES = ["f16", "bf16", "f32", "f64", "i1", "i8", "i32", "i64", "index", "none",
         "tensor<?x4xf32>", "tensor<f32>", "tensor<0xf32>", "tensor<*xf32>",
         "tensor<2147483648x2147483648xf32>", "tensor<1x1x1x1x1x1x1x1xf16>",
         "complex<f32>", "vector<4xf32>", "memref<4xf32>", "!graph.foo", "tuple<>"]
TYPE_RE = re.compile(rb"\b(f16|bf16|f32|f64|i1|i8|i32|i64|index)\b|tensor<[^<>]*>")
NUM_RE = re.compile(rb"-?\d+(\.\d+)?([eE][-+]?\d+)?")
TOKEN_RE = re.compile(rb"[%@#!]?[A-Za-z_][\w.$-]*|\d+|\S")
LOC_ERROR = re.compile(r"^.*:\d+:\d+: error: ", re.M)
TOOL_ERROR = re.compile(r"^ampc: \S", re.M)
CRASH_MARKS = ("Stack dump", "LLVM ERROR", "PLEASE submit a bug report",
               "Assertion", "terminate called", "Segmentation fault",
               "AddressSanitizer", "UndefinedBehaviorSanitizer")


def mutate(rng, data, seeds):
    kind = rng.randrange(12)
    if kind == 11:  # one dimension size replaced everywhere, so shapes agree
        dims = sorted(set(re.findall(rb"(?<=[<x])\d+(?=x)", data)))
        if dims:
            d = rng.choice(dims)
            v = rng.choice(DIMS).encode()
            return re.sub(rb"(?<=[<x])" + d + rb"(?=x)", v, data)
        return data
    lines = data.split(b"\n")
    if kind == 0 and data:  # byte flips
        b = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(b))
            b[i] = rng.choice([b[i] ^ (1 << rng.randrange(8)), rng.randrange(256),
                               ord(rng.choice("{}[]()<>:,%@#!\"=x?-"))])
        return bytes(b)
    if kind == 1 and lines:  # delete a line
        del lines[rng.randrange(len(lines))]
    elif kind == 2 and lines:  # duplicate a line
        i = rng.randrange(len(lines))
        lines.insert(rng.randrange(len(lines) + 1), lines[i])
    elif kind == 3 and len(lines) > 1:  # swap two lines
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    elif kind in (4, 5):  # delete / duplicate / swap a token
        toks = list(TOKEN_RE.finditer(data))
        if not toks:
            return data
        t = rng.choice(toks)
        op = rng.randrange(3)
        if op == 0:
            return data[:t.start()] + data[t.end():]
        if op == 1:
            return data[:t.end()] + b" " + t.group() + data[t.end():]
        u = rng.choice(toks)
        a, b = sorted([t, u], key=lambda m: m.start())
        if a.end() > b.start():
            return data
        return (data[:a.start()] + b.group() + data[a.end():b.start()] +
                a.group() + data[b.end():])
    elif kind == 6:  # extreme number
        nums = list(NUM_RE.finditer(data))
        if nums:
            m = rng.choice(nums)
            return data[:m.start()] + rng.choice(EXTREMES).encode() + data[m.end():]
    elif kind == 7:  # replace a type
        ts = list(TYPE_RE.finditer(data))
        if ts:
            m = rng.choice(ts)
            return data[:m.start()] + rng.choice(TYPES).encode() + data[m.end():]
    elif kind == 8:  # deep brackets
        n = rng.choice([10, 100, 999, 1001, 5000, 50000])
        o, c = rng.choice([(b"(", b")"), (b"[", b"]"), (b"{", b"}"), (b"<", b">"),
                           (b"tensor<", b">"), (b"array<", b">")])
        i = rng.randrange(len(data) + 1)
        return data[:i] + o * n + (c * n if rng.random() < 0.5 else b"") + data[i:]
    elif kind == 9:  # splice two files
        other = rng.choice(seeds).split(b"\n")
        i, j = rng.randrange(len(lines) + 1), rng.randrange(len(other) + 1)
        return b"\n".join(lines[:i] + other[j:])
    else:  # truncate
        return data[:rng.randrange(len(data) + 1)]
    return b"\n".join(lines)


def run_one(ampc, path, cmd, timeout):
    """Returns (exit status or None on a hang, None or (kind, detail) for a
    finding)."""
    argv = [ampc, cmd, path]
    if cmd == "explain":
        argv += ["--amp=fp16"]
    elif cmd == "compile":
        argv += ["--emit=cpp", "-o", os.devnull]
    try:
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, ("hang", "%s: no exit within %gs" % (cmd, timeout))
    return p.returncode, finding(cmd, p.returncode,
                                 p.stderr.decode("utf-8", "replace"))


def finding(cmd, status, err):
    """None, or (kind, detail) for a run that exited with |status|."""
    if status < 0:
        return ("crash", "%s: killed by signal %d" % (cmd, -status))
    for mark in CRASH_MARKS:
        if mark in err:
            return ("crash", "%s: stderr has '%s'" % (cmd, mark))
    if status not in (0, 1, 2):
        return ("status", "%s: exit status %d" % (cmd, status))
    if status != 0 and not (LOC_ERROR.search(err) or TOOL_ERROR.search(err)):
        first = err.strip().splitlines()[:1]
        return ("diag", "%s: exit %d without file:line:col: error: %r" %
                (cmd, status, first[0][:200] if first else ""))
    return None


def reduce(ampc, data, cmd, kind, timeout, tmpdir, budget_s):
    """Deletes chunks of lines while the same kind of finding persists."""
    path = os.path.join(tmpdir, "reduce.mlir")
    deadline = time.time() + budget_s

    def still(d):
        with open(path, "wb") as f:
            f.write(d)
        r = run_one(ampc, path, cmd, timeout)[1]
        return r is not None and r[0] == kind

    lines = data.split(b"\n")
    chunk = max(1, len(lines) // 2)
    while chunk >= 1 and time.time() < deadline:
        i, changed = 0, False
        while i < len(lines) and time.time() < deadline:
            cand = lines[:i] + lines[i + chunk:]
            if cand and still(b"\n".join(cand)):
                lines, changed = cand, True
            else:
                i += chunk
        if not changed:
            chunk //= 2
    return b"\n".join(lines)


def run_iteration(ampc, data, extra, path, timeout):
    """check, then explain and compile on files check accepts (and on the
    |extra| fraction of the rest). Returns ([(cmd, status)], finding or None,
    cmd of the finding)."""
    with open(path, "wb") as f:
        f.write(data)
    runs = []
    for cmd in ["check", "explain", "compile"]:
        if cmd != "check" and not (extra or runs[0][1] == 0):
            break
        status, r = run_one(ampc, path, cmd, timeout)
        if status is not None:
            runs.append((cmd, status))
        if r is not None:
            return runs, r, cmd
    return runs, None, None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("seeds", nargs="+", help="seed .mlir files")
    ap.add_argument("--ampc", required=True, help="the ampc binary")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--iterations", type=int, default=0)
    ap.add_argument("--seconds", type=float, default=0)
    ap.add_argument("--timeout", type=float, default=10, help="per run, seconds")
    ap.add_argument("--extra-fraction", type=float, default=0.1,
                    help="fraction of the files check rejects that explain and "
                         "compile also run on (they always run on accepted ones)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                    help="iterations run at once (default: one per core; the "
                         "same files, runs and findings as --jobs 1)")
    ap.add_argument("--out", default="fuzz-findings", help="directory for reproducers")
    ap.add_argument("--no-reduce", action="store_true")
    ap.add_argument("--reduce-seconds", type=float, default=60)
    args = ap.parse_args()
    if not args.iterations and not args.seconds:
        ap.error("give --iterations N or --seconds S")
    if args.jobs < 1:
        ap.error("--jobs must be at least 1")
    seeds = []
    for s in args.seeds:
        with open(s, "rb") as f:
            seeds.append(f.read())
    rng = random.Random(args.seed)
    findings, tally = [], {}
    start = time.time()
    it = 0
    # The mutated files depend on the seed alone (not on results), so the
    # main thread draws them in order, workers run them, and results are
    # taken in iteration order: --jobs changes nothing but the time.
    with tempfile.TemporaryDirectory(prefix="ampc-fuzz-") as tmp, \
            concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        pending = collections.deque()

        def more():
            if args.iterations and it >= args.iterations:
                return False
            return not (args.seconds and time.time() - start >= args.seconds)

        while True:
            while len(pending) < 2 * args.jobs and more():
                it += 1
                data = rng.choice(seeds)
                for _ in range(rng.choice([1, 1, 2, 3])):
                    data = mutate(rng, data, seeds)
                extra = rng.random() < args.extra_fraction
                path = os.path.join(tmp, "input-%d.mlir" % it)
                pending.append((it, data, pool.submit(
                    run_iteration, args.ampc, data, extra, path, args.timeout)))
            if not pending:
                break
            n, data, future = pending.popleft()
            runs, r, cmd = future.result()
            os.remove(os.path.join(tmp, "input-%d.mlir" % n))
            for c, status in runs:
                key = "%s exit %d" % (c, status)
                tally[key] = tally.get(key, 0) + 1
            if r is None:
                continue
            kind, detail = r
            if not args.no_reduce:
                data = reduce(args.ampc, data, cmd, kind, args.timeout, tmp,
                              args.reduce_seconds)
            os.makedirs(args.out, exist_ok=True)
            name = os.path.join(args.out, "%s-seed%d-iter%d-%s.mlir" %
                                (kind, args.seed, n, cmd))
            with open(name, "wb") as f:
                f.write(data)
            findings.append((name, detail))
            print("FINDING %s: %s" % (name, detail), flush=True)
    el = time.time() - start
    print("fuzz_models: seed %d, %d iterations in %.1fs (%.1f/s), %d finding(s)" %
          (args.seed, it, el, it / el if el else 0, len(findings)))
    print("  runs: " + ", ".join("%s: %d" % kv for kv in sorted(tally.items())))
    for name, detail in findings:
        print("  %s  (%s)" % (name, detail))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
