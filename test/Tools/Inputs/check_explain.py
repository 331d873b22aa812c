"""Checks `ampc explain --format=json` output of a transformer by meaning.

usage: check_explain.py REPORT.json N_LINEAR N_ATTENTION [HALF]
Every matmul/linear/attention must be HALF (default fp16), every
layer_norm/softmax/cross_entropy fp32, and the counts must match.
"""
import json
import sys

report = json.load(open(sys.argv[1]))
n_linear, n_attention = int(sys.argv[2]), int(sys.argv[3])
half = sys.argv[4] if len(sys.argv) > 4 else "fp16"
ops = report["ops"]
for o in ops:
    assert {"op", "loc", "precision", "rule"} <= set(o), o
gemms = [o for o in ops if o["op"] in ("matmul", "batch_matmul", "linear")]
attention = [o for o in ops if o["op"] == "scaled_dot_product_attention"]
fp32 = [o for o in ops if o["op"] in ("layer_norm", "softmax", "cross_entropy")]
assert len(gemms) == n_linear, (len(gemms), n_linear)
assert len(attention) == n_attention, (len(attention), n_attention)
bad = [o for o in gemms + attention if o["precision"] != half]
bad += [o for o in fp32 if o["precision"] != "fp32"]
assert not bad, bad
assert any(o["op"] == "cross_entropy" for o in fp32)
assert report["summary"]["flops_half"] > report["summary"]["flops_fp32"]
print("ok")
