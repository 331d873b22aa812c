"""Median step_time_ms of a training binary's metrics, skipping the first 10
steps (warm-up, graph capture)."""
import json
import sys

t = sorted(json.loads(l)["step_time_ms"] for l in list(open(sys.argv[1]))[10:])
print("%.3f" % t[len(t) // 2])
