#!/usr/bin/env python3
"""Compares freshly exported fixtures (make_fixtures.py FRESH) with the
committed ones. Standard library only.

  compare_fixtures.py FRESH COMMITTED

Per model: the batch (x.npy, label.npy) must be byte-identical; PyTorch's
loss and every gradient in expected.safetensors within 1e-5 relative (of
the tensor's largest magnitude, plus 1e-7); model.onnx and
model_dynamo.onnx are reported as identical or not (its bytes name the PyTorch version that wrote it, so a
different PyTorch may differ there and still import to the same numbers,
which the round-trip tests on the fresh export check). Exit 1 on a mismatch.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_step import read  # noqa: E402


def same_bytes(a, b):
    with open(a, "rb") as f, open(b, "rb") as g:
        return f.read() == g.read()


def main():
    fresh, committed = sys.argv[1], sys.argv[2]
    bad = []
    for model in sorted(os.listdir(committed)):
        a, b = os.path.join(fresh, model), os.path.join(committed, model)
        for f in ("x.npy", "label.npy"):
            if not same_bytes(os.path.join(a, f), os.path.join(b, f)):
                bad.append("%s/%s differs" % (model, f))
        got, meta = read(os.path.join(a, "expected.safetensors"))
        want, _ = read(os.path.join(b, "expected.safetensors"))
        if sorted(got) != sorted(want):
            bad.append("%s: tensors %s vs %s" % (model, sorted(got), sorted(want)))
            continue
        worst = 0.0
        for k in want:
            top = max(abs(x) for x in want[k])
            diff = max(abs(x - y) for x, y in zip(got[k], want[k]))
            if not diff <= 1e-5 * top + 1e-7:
                bad.append("%s: %s differs by %g" % (model, k, diff))
            worst = max(worst, diff / top if top else 0.0)
        same = {f: same_bytes(os.path.join(a, f), os.path.join(b, f))
                for f in ("model.onnx", "model_dynamo.onnx")}
        print("%s: batch same, loss and %d gradients within %.1e, %s "
              "(PyTorch %s)" % (model, len(want) - 1, worst,
                                ", ".join("%s %s" % (f, "identical" if v else "differs")
                                          for f, v in same.items()),
                                meta.get("torch", "?")))
    if bad:
        print("MISMATCH: " + "; ".join(bad))
        sys.exit(1)
    print("ok: the fixtures re-export to the committed numbers")


if __name__ == "__main__":
    main()
