"""Checks that `ampc cost` hands each gradient over (its storeGrad rows)
after the same op, and in the same order, as the code `ampc compile
--emit=cpp` prints (storeGrad(i, ...); gradReady(i)). Both place them with
passes/GradReady.h; this guards the order within an op and around addLoss.

  grad_order_check.py EMITTED.cpp|.cu COST.json
Prints one line; exits 1 on the first difference."""
import json
import re
import sys

src, report = sys.argv[1], json.load(open(sys.argv[2]))

# The emitted step: op results (`// %a, %b = ...` comments) and hand-overs.
emitted = []
for line in open(src):
    m = re.search(r"storeGrad\(\d+, .*//\s*(\S+)", line)
    if m:
        emitted.append(("grad", m.group(1)))
    elif "addLoss(" in line:
        emitted.append(("op", "loss"))
    else:
        m = re.search(r"//\s*(%[\w.]+)(?:,\s*%[\w.]+)*\s*=", line)
        if m:
            emitted.append(("op", m.group(1)))

# The report's micro-batch rows (up to the first collective or the epilogue).
rows = []
for k in report["kernels"]:
    if k["kind"] in ("collective", "epilogue") or k["op"] == "train.fused_epilogue":
        break
    rows.append(k)
listed = []
for k in rows:
    item = ("grad", k["value"]) if k["op"] == "storeGrad" else ("op", k["value"])
    if not listed or listed[-1] != item:
        listed.append(item)
ops = {v for kind, v in listed if kind == "op"}
grads = {v for kind, v in listed if kind == "grad"}


def anchors(seq):
    """Each gradient's preceding op (of those the report lists), in order."""
    out, last = [], None
    for kind, v in seq:
        if kind == "op" and v in ops:
            last = v
        elif kind == "grad" and v in grads:
            out.append((v, last))
    return out


a, b = anchors(emitted), anchors(listed)
if not b:
    print("grad_order_check: the report hands no gradient over")
    sys.exit(1)
if a != b:
    for x, y in zip(a, b):
        if x != y:
            print("grad_order_check: emitted %s after %s, the report %s after %s" % (x + y))
            break
    else:
        print("grad_order_check: %d hand-overs emitted, %d in the report" % (len(a), len(b)))
    sys.exit(1)
print("grad order ok: %d gradients, each after the same op in the same order" % len(b))
