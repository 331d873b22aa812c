"""Median step_time_ms of a training binary's metrics, leaving out steps
1..10 (warm-up, graph capture). With --log-every N each record is the mean
of its N steps, so the host runs ahead as in real training."""
import json
import sys

t = sorted(r["step_time_ms"] for r in map(json.loads, open(sys.argv[1])) if r["step"] > 10)
print("%.3f" % t[len(t) // 2])
