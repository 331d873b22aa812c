#!/usr/bin/env python3
"""Helpers of the end-to-end tests: write .npy files, read metrics and
checkpoints. Standard library only (no numpy).

  e2e.py npy OUT DTYPE SHAPE VALUES     write OUT.npy; DTYPE f4|f8|i8|i4|u1;
                                        SHAPE "4,2"; VALUES "1,2,3" repeated
                                        to fill (nan/inf allowed)
  e2e.py random OUT DTYPE SHAPE [HI]    write OUT.npy of seeded random values:
                                        N(0, 1) floats, or integers in [0, HI)
  e2e.py idx OUT DIMS VALUES N           write an IDX u8 file (gzipped if OUT
                                        ends in .gz) of shape DIMS holding
                                        the first N of VALUES repeated
  e2e.py truncate FILE BYTES            drop the last BYTES bytes of FILE
  e2e.py text OUT BYTES FILES...        first BYTES bytes of FILES, joined
  e2e.py metrics FILE FIELDS            one line per logged step: "step=1 a=x"
  e2e.py falls FILE K                   mean loss of the last K logged steps
                                        below that of the first K? exit 1 if not
  e2e.py eval FILE                      the eval accuracy line(s)
  e2e.py accuracy REF AMP MIN MAXDIFF  eval accuracy of the metrics file AMP
                                        >= MIN and within MAXDIFF of REF's?
  e2e.py median FILE FIELD [SKIP]       median of FIELD over the step lines
  e2e.py same-tensors A B               every tensor of A equals B's, bitwise
  e2e.py tensor FILE NAME               a tensor's values, %.9g
  e2e.py state CKPT_DIR KEY.KEY         a field of train_state.json
  e2e.py edit-json FILE KEY.KEY=JSON... set fields of a JSON file (order kept;
                                        a key may hold dots: model.safetensors);
                                        =DELETE removes the key
  e2e.py merge OUT A B                  one safetensors file (F32) with the
                                        tensors of A and B and A's metadata
                                        (a checkpoint from before the
                                        optimizer.safetensors split)
  e2e.py eval-mean ALL A NA C NC        the eval loss of metrics file ALL is
                                        the per-sample mean of A's (NA
                                        samples) and C's (NC)? exit 1 if not
  e2e.py flip FILE OFFSET               XOR one byte of FILE with 0x01
                                        (OFFSET < 0 counts from the end)
  e2e.py exit-status [--one-line] N CMD ARGS...
                                        run CMD, pass its stdout and stderr
                                        through; fail unless it exits with N
                                        (a crash is a negative status) and,
                                        with --one-line, prints exactly one
                                        line (to stderr)
"""
import gzip
import json
import math
import random
import struct
import sys


def write_npy(path, dtype, shape, values):
    fmt = {"f4": "f", "f8": "d", "i8": "q", "i4": "i", "u1": "B"}[dtype]
    n = 1
    for d in shape:
        n *= d
    vals = [values[k % len(values)] for k in range(n)]
    if fmt in "qiB":
        vals = [int(v) for v in vals]
    data = struct.pack("<%d%s" % (n, fmt), *vals)
    shape_s = "(" + "".join("%d," % d for d in shape) + ")"
    if len(shape) > 1:
        shape_s = shape_s[:-2] + ")"
    header = "{'descr': '%s%s', 'fortran_order': False, 'shape': %s, }" % (
        "|" if dtype == "u1" else "<", dtype, shape_s)
    pad = 64 - (10 + len(header) + 1) % 64
    header += " " * pad + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        f.write(header.encode("latin1"))
        f.write(data)


def parse_value(s):
    return float(s)  # float() takes nan, inf, -inf


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    meta = header.pop("__metadata__", {})
    body = raw[8 + n:]
    tensors = {}
    for name, info in header.items():
        b, e = info["data_offsets"]
        assert info["dtype"] in ("F32", "I64"), info  # I64: num_batches_tracked
        tensors[name] = (info["shape"], body[b:e])
    return meta, tensors


def write_safetensors(path, meta, tensors):
    header, body = {}, b""
    if meta:
        header["__metadata__"] = meta
    for name in sorted(tensors):
        shape, raw = tensors[name]
        header[name] = {"dtype": "F32", "shape": shape,
                        "data_offsets": [len(body), len(body) + len(raw)]}
        body += raw
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + body)


def digest(path, *more):
    """One SHA-256 over every tensor of a safetensors file (name, shape, raw
    bytes) in name order: equal digests mean bitwise-equal tensors. Tensors of
    |more| files (that exist) join in: a checkpoint's model.safetensors and
    optimizer.safetensors digest as the one file they were before the split."""
    import hashlib
    import os
    _, t = read_safetensors(path)
    for p in more:
        if os.path.exists(p):
            t.update(read_safetensors(p)[1])
    h = hashlib.sha256()
    for k in sorted(t):
        shape, raw = t[k]
        h.update(("%s%s" % (k, shape)).encode())
        h.update(raw)
    return "tensors=%d sha256=%s" % (len(t), h.hexdigest())


def step_lines(path):
    with open(path) as f:
        return [j for j in map(json.loads, f) if "loss" in j]


def fmt(v):
    if isinstance(v, float):
        return "%.9g" % v
    return "null" if v is None else str(v)


def json_path(j, key):
    """The object holding dotted KEY of j, and the last key. A key may hold
    dots: at each level the longest run of parts that is a key there is
    taken ("files" then "model.safetensors"), or all the rest."""
    parts = key.split(".")
    while True:
        n = next((n for n in range(len(parts), 0, -1)
                  if isinstance(j, dict) and ".".join(parts[:n]) in j),
                 len(parts))
        if n == len(parts):
            return j, ".".join(parts)
        j, parts = j[".".join(parts[:n])], parts[n:]


def main(argv):
    cmd, args = argv[1], argv[2:]
    if cmd == "npy":
        out, dtype, shape, values = args
        write_npy(out, dtype, [int(d) for d in shape.split(",")],
                  [parse_value(v) for v in values.split(",")])
    elif cmd == "random":
        out, dtype, shape = args[:3]
        shape = [int(d) for d in shape.split(",")]
        rng, n = random.Random(1), math.prod(shape)
        if dtype.startswith("f"):
            vals = [rng.gauss(0.0, 1.0) for _ in range(n)]
        else:
            vals = [rng.randrange(int(args[3])) for _ in range(n)]
        write_npy(out, dtype, shape, vals)
    elif cmd == "idx":
        out, dims, values, n = args
        dims = [int(d) for d in dims.split(",")]
        values = [int(v) for v in values.split(",")]
        raw = struct.pack(">BBBB", 0, 0, 8, len(dims))
        raw += struct.pack(">%dI" % len(dims), *dims)
        raw += bytes(values[k % len(values)] for k in range(int(n)))
        with (gzip.open if out.endswith(".gz") else open)(out, "wb") as f:
            f.write(raw)
    elif cmd == "truncate":
        with open(args[0], "rb") as f:
            raw = f.read()
        with open(args[0], "wb") as f:
            f.write(raw[:len(raw) - int(args[1])])
    elif cmd == "text":
        out, n, files = args[0], int(args[1]), args[2:]
        data = b""
        for p in files:
            with open(p, "rb") as f:
                data += f.read()
        with open(out, "wb") as f:
            f.write(data[:n])
    elif cmd == "metrics":
        fields = args[1].split(",")
        for j in step_lines(args[0]):  # "-": not in that line
            print(" ".join("%s=%s" % (k, fmt(j[k]) if k in j else "-")
                           for k in ["step"] + fields))
    elif cmd == "falls":
        k = int(args[1])
        losses = [j["loss"] for j in step_lines(args[0])]
        first = sum(losses[:k]) / k
        last = sum(losses[-k:]) / k
        ok = len(losses) >= 2 * k and last < first
        print("loss %s: first %d mean %.4f, last %d mean %.4f" %
              ("falls" if ok else "DOES NOT FALL", k, first, k, last))
        return 0 if ok else 1
    elif cmd == "eval":
        with open(args[0]) as f:
            for j in map(json.loads, f):
                if "eval_accuracy" in j:
                    print("eval_accuracy=%.4f" % j["eval_accuracy"])
    elif cmd == "accuracy":
        def acc(path):
            with open(path) as f:
                return [j["eval_accuracy"] for j in map(json.loads, f)
                        if "eval_accuracy" in j][-1]
        ref, amp = acc(args[0]), acc(args[1])
        lo, maxdiff = float(args[2]), float(args[3])
        ok = amp >= lo and abs(amp - ref) <= maxdiff
        print("accuracy: reference %.4f, amp %.4f (>= %.4f), difference "
              "%.4f (<= %.4f): %s" % (ref, amp, lo, abs(amp - ref), maxdiff,
                                      "ok" if ok else "FAIL"))
        return 0 if ok else 1
    elif cmd == "close":
        # close A.jsonl B.jsonl FIELD RTOL: every logged step's FIELD agrees
        # to RTOL (relative), and both runs logged the same steps.
        a, b = step_lines(args[0]), step_lines(args[1])
        field, rtol = args[2], float(args[3])
        worst = max((abs(x[field] - y[field]) / max(abs(y[field]), 1e-30)
                     for x, y in zip(a, b)), default=0.0)
        ok = len(a) == len(b) > 0 and worst <= rtol
        print("%s over %d steps: largest relative difference %.2g (<= %g): %s"
              % (field, len(a), worst, rtol, "ok" if ok else "FAIL"))
        return 0 if ok else 1
    elif cmd == "median":
        skip = int(args[2]) if len(args) > 2 else 0
        v = sorted(j[args[1]] for j in step_lines(args[0])[skip:])
        print("%.4g" % (v[len(v) // 2] if len(v) % 2 else
                        (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2))
    elif cmd == "status":
        # status N CMD...: runs CMD, prints its exit status; fails unless N.
        import subprocess
        sys.stdout.flush()
        rc = subprocess.call(args[1:])
        print("exit status %d" % rc)
        return 0 if rc == int(args[0]) else 1
    elif cmd == "eval-mean":
        def ev(path):
            with open(path) as f:
                return [j for j in map(json.loads, f) if "eval_loss" in j][-1]
        al, a, c = ev(args[0]), ev(args[1]), ev(args[3])
        na, nc = int(args[2]), int(args[4])
        want = (a["eval_loss"] * na + c["eval_loss"] * nc) / (na + nc)
        ok = abs(al["eval_loss"] - want) <= 1e-6 * abs(want)
        print("eval over %d samples: loss %.9g, per-sample mean of the parts "
              "%.9g: %s" % (al["eval_samples"], al["eval_loss"], want,
                            "ok" if ok else "DIFFERENT"))
        return 0 if ok else 1
    elif cmd == "merge":
        meta, a = read_safetensors(args[1])
        a.update(read_safetensors(args[2])[1])
        write_safetensors(args[0], meta, a)
    elif cmd == "same-tensors":
        _, a = read_safetensors(args[0])
        _, b = read_safetensors(args[1])
        diff = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
        print("tensors: %d, differing: %s" % (len(a), " ".join(diff) or "none"))
        return 1 if diff else 0
    elif cmd == "golden":
        # The metrics of every logged step (timings left out) and the
        # checkpoint's digest, against a recorded file; AMPC_RECORD=1
        # (re)writes the file instead.
        import os
        golden, metrics, ckdir = args
        fields = ["loss", "loss_scale", "grad_norm", "clip_coef", "skipped",
                  "skipped_total", "lr"]
        lines = [" ".join("%s=%s" % (k, fmt(j[k])) for k in ["step"] + fields)
                 for j in step_lines(metrics)]
        with open(os.path.join(ckdir, "latest")) as f:
            latest = f.read().strip()
        lines.append("checkpoint " + digest(
            os.path.join(ckdir, latest, "model.safetensors"),
            os.path.join(ckdir, latest, "optimizer.safetensors")))
        if os.environ.get("AMPC_RECORD"):
            with open(golden, "w") as f:
                f.write("\n".join(lines) + "\n")
            print("recorded " + golden)
            return 0
        with open(golden) as f:
            want = f.read().splitlines()
        bad = [(i, w, g) for i, (w, g) in enumerate(zip(want, lines)) if w != g]
        if len(want) != len(lines):
            print("FAIL: %d lines recorded, %d now" % (len(want), len(lines)))
            return 1
        for i, w, g in bad[:5]:
            print("FAIL line %d:\n  recorded %s\n  now      %s" % (i + 1, w, g))
        if bad:
            return 1
        print("bitwise as recorded: %d steps and the checkpoint" % (len(lines) - 1))
    elif cmd == "digest":
        # One SHA-256 over every tensor (name, shape, raw bytes) in name
        # order: equal digests mean bitwise-equal checkpoints.
        print(digest(args[0]))
    elif cmd == "tensor":
        _, t = read_safetensors(args[0])
        shape, raw = t[args[1]]
        vals = struct.unpack("<%df" % (len(raw) // 4), raw)
        print(args[1], " ".join("%.9g" % v for v in vals))
    elif cmd == "state":
        with open(args[0] + "/train_state.json") as f:
            j = json.load(f)
        obj, last = json_path(j, args[1])
        j = obj[last]
        print("%s=%s" % (args[1], fmt(j)))
    elif cmd == "edit-json":
        with open(args[0]) as f:
            j = json.load(f)
        for edit in args[1:]:
            key, value = edit.split("=", 1)
            obj, last = json_path(j, key)
            if value == "DELETE":
                del obj[last]
            else:
                obj[last] = json.loads(value)
        with open(args[0], "w") as f:
            json.dump(j, f, indent=2)
            f.write("\n")
    elif cmd == "flip":
        with open(args[0], "r+b") as f:
            raw = bytearray(f.read())
            raw[int(args[1])] ^= 1
            f.seek(0)
            f.write(raw)
    elif cmd == "exit-status":
        import subprocess
        one_line = args[0] == "--one-line"
        if one_line:
            args = args[1:]
        want = int(args[0])
        r = subprocess.run(args[1:], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
        out = r.stdout.decode(errors="replace")
        err = r.stderr.decode(errors="replace")
        sys.stdout.write(out)
        sys.stdout.flush()
        sys.stderr.write(err)
        sys.stderr.flush()
        if r.returncode != want:
            print("exit status %d, expected %d" % (r.returncode, want),
                  file=sys.stderr)
            return 1
        if one_line and (out or err.count("\n") != 1 or
                         not err.endswith("\n")):
            print("expected one line on stderr and nothing on stdout",
                  file=sys.stderr)
            return 1
    else:
        print("unknown command " + cmd, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
