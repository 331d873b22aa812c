#!/usr/bin/env python3
"""Compares a training binary's first step (--dump-step FILE) with PyTorch's
(expected.safetensors from make_fixtures.py). Standard library only.

  check_step.py DUMP EXPECTED [--rtol R] [--atol A]

The loss must match within R relative (default 1e-5); each gradient tensor
within R of its largest magnitude plus A (default 1e-7):
max |got - want| <= R * max |want| + A. Elementwise relative error is
meaningless for entries near zero, and A covers gradients that are zero in
exact arithmetic (a convolution's bias before a train-mode BatchNorm: both
sides are float noise of 1e-8). The dump's gradients are of the loss times the loss scale
(scale_used), divided out here. Prints one line per tensor, worst first;
exits 1 on a mismatch, a missing gradient or an extra one.
"""
import json
import struct
import sys


def read(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    meta = header.pop("__metadata__", {})
    out = {}
    for name, h in header.items():
        if h["dtype"] != "F32":
            sys.exit("%s: %s is %s, want F32" % (path, name, h["dtype"]))
        a, b = h["data_offsets"]
        out[name] = struct.unpack("<%df" % ((b - a) // 4), data[a:b])
    return out, meta


def main():
    args = sys.argv[1:]
    tol = {"--rtol": 1e-5, "--atol": 1e-7}
    for flag in tol:
        if flag in args:
            i = args.index(flag)
            tol[flag] = float(args[i + 1])
            del args[i:i + 2]
    rtol, atol = tol["--rtol"], tol["--atol"]
    dump, dmeta = read(args[0])
    want, _ = read(args[1])
    scale = float(dmeta.get("scale_used", "1"))
    bad = []
    loss, wloss = float(dmeta["loss"]), want["loss"][0]
    lerr = abs(loss - wloss) / abs(wloss)
    print("loss %.9g want %.9g rel %.2e" % (loss, wloss, lerr))
    if not lerr <= rtol:
        bad.append("loss")
    grads = sorted(k for k in want if k.startswith("grad."))
    got_grads = set(k for k in dump if k.startswith("grad."))
    rows = []
    for k in grads:
        if k not in dump:
            bad.append(k + " missing")
            continue
        g, w = dump[k], want[k]
        if len(g) != len(w):
            bad.append(k + " size")
            continue
        top = max(abs(x) for x in w)
        diff = max(abs(a / scale - b) for a, b in zip(g, w))
        err = diff / top if top else float("inf") if diff > atol else 0.0
        rows.append((err, k))
        if not diff <= rtol * top + atol:
            bad.append(k)
    for k in sorted(got_grads - set(grads)):
        bad.append(k + " extra")
    for err, k in sorted(rows, reverse=True):
        print("%-28s rel %.2e" % (k, err))
    if bad:
        print("MISMATCH:", ", ".join(bad))
        sys.exit(1)
    print("ok: loss and %d gradients within rtol %g (atol %g)" % (
        len(rows), rtol, atol))


if __name__ == "__main__":
    main()
