"""Checks an `ampc cost --format=json` report and prints its rows one per
line for FileCheck: the totals must equal the sum of the rows (each times
its count), the top list must be the rows with the most time, in order.
Exits 1 with a message on the first mismatch."""
import json
import math
import sys

r = json.load(open(sys.argv[1]))
rows, t = r["kernels"], r["totals"]


def close(a, b):
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-18)


def fail(msg):
    print("cost_check: " + msg)
    sys.exit(1)


for key in ("bytes_read", "bytes_written", "flops", "time_s"):
    s = sum(k["count"] * k[key] for k in rows)
    if not close(s, t[key]):
        fail("totals.%s = %r, the rows sum to %r" % (key, t[key], s))
if t["launches"] != sum(k["count"] for k in rows):
    fail("totals.launches does not match the rows")
if t["copies"] != sum(k["count"] for k in rows if k["kind"] == "copy"):
    fail("totals.copies does not match the rows")
if not close(t["bytes"], t["bytes_read"] + t["bytes_written"]):
    fail("totals.bytes is not read + written")
mem = sum(k["count"] * k["time_s"] for k in rows if k["bound"] == "memory")
if not close(mem, t["memory_bound_time_s"]):
    fail("memory-bound time does not match the rows")
dev = r["device"]
for k in rows:
    m = (k["bytes_read"] + k["bytes_written"]) / dev["bytes_per_second"]
    peak = dev["half_flops_per_second" if k["half_math"] else "fp32_flops_per_second"]
    if not close(k["time_s"], max(m, k["flops"] / peak)):
        fail("row %d: time is not the roofline" % k["index"])
times = [rows[i]["count"] * rows[i]["time_s"] for i in r["top"]]
if times != sorted(times, reverse=True) or len(r["top"]) != min(10, len(rows)):
    fail("top is not the 10 longest rows in order")
if times and max(k["count"] * k["time_s"] for k in rows) != times[0]:
    fail("top does not start with the longest row")
for k in rows:
    print("row %d %s %s %s count=%d read=%d written=%d flops=%d %s" % (
        k["index"], k["kind"], k["name"], k["op"], k["count"], k["bytes_read"],
        k["bytes_written"], k["flops"], "half" if k["half_math"] else "fp32"))
print("totals ok: %d launches, %d bytes, %d FLOPs" % (t["launches"], t["bytes"], t["flops"]))
