"""The numbers `ampc audit` reports for audit_numbers.mlir, computed here
directly (Python's stdlib only: struct's 'e' and 'f' formats round to IEEE
binary16 and binary32 to nearest even, as the reference interpreter does).

  audit_numbers.py make DIR     writes DIR/x.npy, DIR/w.safetensors and a
                                checkpoint directory DIR/ckpt holding them
  audit_numbers.py check JSON   checks the exp row of `ampc audit --format=json`
"""
import json
import math
import os
import statistics
import struct
import sys

W = 1.25
# 32 inputs: exp(1.25 x) overflows fp16 for x > 8.87, is subnormal below
# 1.25 x < -9.70 and flushes to zero below -17.3.
X = [12.0, 9.5, 8.9, 8.8, -8.0, -9.0, -10.0, -14.0, -16.0, -25.0] + [
    round(-3.0 + 0.37 * k, 4) for k in range(22)]


def f16(v):
    try:
        return struct.unpack("<e", struct.pack("<e", v))[0]
    except OverflowError:
        return math.copysign(math.inf, v)


def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


def write_npy(path, values, shape):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }" % shape
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * pad + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%df" % len(values), *values))


def write_safetensors(path, name, values):
    head = json.dumps({name: {"dtype": "F32", "shape": [len(values)],
                              "data_offsets": [0, 4 * len(values)]}}).encode()
    head += b" " * (-len(head) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(head)) + head)
        f.write(struct.pack("<%df" % len(values), *values))


def stats(amp, ref):
    """What ampc audit's ValueStats computes for one fp16 result."""
    min_normal = 2.0 ** -14
    nonzero = [(a, r) for a, r in zip(amp, ref) if r != 0]
    rel = [abs(a - r) / abs(r) for a, r in zip(amp, ref)
           if math.isfinite(a) and abs(r) >= min_normal]
    return {
        "overflow_fraction": sum(not math.isfinite(a) for a in amp) / len(amp),
        "underflow_fraction": sum(math.isfinite(a) and abs(a) < min_normal
                                  for a, _ in nonzero) / len(nonzero),
        "max_abs": max(abs(r) for r in ref),
        "rel_err_median": statistics.median(rel),
        "rel_err_max": max(rel),
    }


def check(path):
    doc = json.load(open(path))
    for key in ["model", "mode", "policy", "data", "weights", "batches", "loss",
                "ops", "loss_scale", "at_risk"]:
        assert key in doc, "no %r in the JSON" % key
    for key in ["scale", "values", "overflow", "underflow_fraction", "range",
                "range_log2", "scale_in_range", "underflow_tolerance"]:
        assert key in doc["loss_scale"], "no loss_scale.%r" % key
    rows = [r for r in doc["ops"] if r["op"] == "exp"]
    assert len(rows) == 1, rows
    row = rows[0]
    for key in ["loc", "op", "name", "type", "precision", "pass", "limit",
                "max_abs_over_limit", "accumulated", "local", "risk", "why", "fix"]:
        assert key in row, "no %r in an op" % key
    assert row["type"] == "f16" and row["precision"] == "fp16", row
    assert row["loc"].endswith("audit_numbers.mlir:7:8"), row["loc"]
    assert row["risk"] == "overflow", row["risk"]

    xs = [f32(x) for x in X]  # as the .npy holds them
    ref = [math.exp(W * x) for x in xs]  # FP64
    # The AMP step: mul in f32, cast to f16, exp in f16.
    amp = [f16(math.exp(f16(f32(W * x)))) for x in xs]
    # The op alone: its FP64 input rounded to its operand type (f16).
    local = [f16(math.exp(f16(W * x))) for x in xs]
    want = stats(amp, ref)
    want_local = stats(local, ref)
    got, got_local = row["accumulated"], row["local"]
    assert got["count"] == 32, got
    for key, value in want.items():
        assert math.isclose(got[key], value, rel_tol=1e-6), (key, got[key], value)
    for key in ["rel_err_median", "rel_err_max"]:
        assert math.isclose(got_local[key], want_local[key], rel_tol=1e-6), (
            key, got_local[key], want_local[key])
    print("exp: overflow %.4f underflow %.4f median %.3e max %.3e: as computed" % (
        want["overflow_fraction"], want["underflow_fraction"],
        want["rel_err_median"], want["rel_err_max"]))


def make(d):
    os.makedirs(os.path.join(d, "ckpt", "step-00000007"), exist_ok=True)
    write_npy(os.path.join(d, "x.npy"), X, (4, 8))
    write_safetensors(os.path.join(d, "w.safetensors"), "w", [W] * 8)
    step = os.path.join(d, "ckpt", "step-00000007")
    write_safetensors(os.path.join(step, "model.safetensors"), "w", [W] * 8)
    # ampc audit reads only the scaler's scale from it.
    open(os.path.join(step, "train_state.json"), "w").write(
        '{"scaler": {"scale": 1024.0}}\n')
    open(os.path.join(d, "ckpt", "latest"), "w").write("step-00000007\n")


if __name__ == "__main__":
    {"make": make, "check": check}[sys.argv[1]](sys.argv[2])
