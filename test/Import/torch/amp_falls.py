#!/usr/bin/env python3
"""Checks an AMP run's metrics (--metrics FILE --log-every 1): exactly N
steps logged, fp16 loss scaling on (a loss_scale above 1), every loss
finite, and the mean loss of the last 10 steps below a tenth of the first
step's. Standard library only.

  amp_falls.py METRICS N
"""
import json
import math
import sys

steps = [json.loads(l) for l in open(sys.argv[1])]
steps = [s for s in steps if "loss" in s and "step" in s]
n = int(sys.argv[2])
losses = [s["loss"] for s in steps]
last = sum(losses[-10:]) / max(len(losses[-10:]), 1)
scale = steps[0].get("loss_scale", 0) if steps else 0
skipped = steps[-1].get("skipped_total", 0) if steps else 0
print("steps %d, loss %.6g -> %.6g (last 10), loss scale %g, skipped %d"
      % (len(steps), losses[0] if losses else float("nan"), last, scale, skipped))
ok = (len(steps) == n and scale > 1 and all(map(math.isfinite, losses))
      and last < 0.1 * losses[0])
print(("ok: %d fp16 steps, loss falls" % n) if ok else "FAILED")
sys.exit(0 if ok else 1)
