"""Median step_time_ms of a training binary's metrics, leaving out steps
1..10 (warm-up, graph capture). With --log-every N each record is the mean
of its N steps, so the host runs ahead as in real training.

  median_step.py METRICS.jsonl           the median, in ms
  median_step.py METRICS.jsonl --check   only the checks below

Either way it fails (exit 1, the reason on stderr) when a record's loss is
not finite or there is no record: a time of a run that diverged, or a
kernel that wrote garbage, is no benchmark."""
import json
import math
import sys

records = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
# The binary writes a non-finite loss as null.
bad = [r["step"] for r in records
       if not isinstance(r.get("loss"), (int, float)) or not math.isfinite(r["loss"])]
if not records or bad:
    sys.exit("%s: %s" % (sys.argv[1], "no records" if not records else
                         "loss not finite at step(s) %s" % bad[:5]))
if sys.argv[2:] == ["--check"]:
    sys.exit(0)
t = sorted(r["step_time_ms"] for r in records if r["step"] > 10)
if not t:
    sys.exit("%s: no record after step 10" % sys.argv[1])
print("%.3f" % t[len(t) // 2])
