"""Checks an `ampc cost --format=json` report and prints its rows one per
line for FileCheck: the totals must equal the sum of the rows (each times
its count), the top list must be the rows with the most time, in order.
Each row's time must be its roofline (memory, arithmetic or interconnect);
with --world-size > 1 the buckets' times must follow from the rows.
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


for key in ("bytes_read", "bytes_written", "flops", "time_s", "link_bytes"):
    s = sum(k["count"] * k[key] for k in rows)
    if not close(s, t[key]):
        fail("totals.%s = %r, the rows sum to %r" % (key, t[key], s))
if t["launches"] != sum(k["count"] for k in rows):
    fail("totals.launches does not match the rows")
if t["copies"] != sum(k["count"] for k in rows if k["kind"] == "copy"):
    fail("totals.copies does not match the rows")
if not close(t["bytes"], t["bytes_read"] + t["bytes_written"]):
    fail("totals.bytes is not read + written")
for bound, key in (("memory", "memory_bound_time_s"), ("link", "link_bound_time_s")):
    s = sum(k["count"] * k["time_s"] for k in rows if k["bound"] == bound)
    if not close(s, t[key]):
        fail("%s-bound time does not match the rows" % bound)
dev = r["device"]
for k in rows:
    m = (k["bytes_read"] + k["bytes_written"]) / dev["bytes_per_second"]
    peak = dev["half_flops_per_second" if k["half_math"] else "fp32_flops_per_second"]
    link, protocol, latency = 0.0, "", 0.0
    if k["kind"] == "collective":
        # A ring all-reduce of W ranks: 2 (W-1) steps.
        if k["link_steps"] != 2 * (r["data_parallel"]["world_size"] - 1):
            fail("row %d: %d ring steps for %d ranks" % (
                k["index"], k["link_steps"], r["data_parallel"]["world_size"]))
        # The fastest protocol: latency + link bytes at its share of the link.
        link = float("inf")
        for p in dev["link_protocols"]:
            lat = p["base_latency_s"] + k["link_steps"] * p["step_latency_s"]
            lt = lat + k["link_bytes"] / p["bytes_per_second"]
            if lt < link:
                link, protocol, latency = lt, p["name"], lat
    if not close(k["time_s"], max(m, k["flops"] / peak, link)):
        fail("row %d: time is not the roofline" % k["index"])
    if k["link_protocol"] != protocol or not close(k["link_latency_s"], latency):
        fail("row %d: protocol %r (latency %r), the fastest is %r (%r)" % (
            k["index"], k["link_protocol"], k["link_latency_s"], protocol, latency))
times = [rows[i]["count"] * rows[i]["time_s"] for i in r["top"]]
if times != sorted(times, reverse=True) or len(r["top"]) != min(10, len(rows)):
    fail("top is not the 10 longest rows in order")
if times and max(k["count"] * k["time_s"] for k in rows) != times[0]:
    fail("top does not start with the longest row")
# One rank of a data-parallel step: the buckets' times on the
# communication stream, recomputed from the rows.
dp = r["data_parallel"]
if dp["world_size"] > 1 and dp["buckets"] > 0:
    if not close(dp["link_bytes"], t["link_bytes"]):
        fail("data_parallel.link_bytes is not the rows' link bytes")
    coll = [k for k in rows if k["kind"] == "collective"]
    if len(coll) != dp["buckets"] + 1:
        fail("expected one collective a bucket and one for the loss")
    buckets = dp["bucket_list"]
    first = buckets[0]["first_row"]
    backward = sum(k["count"] * k["time_s"] for k in rows[:first])
    if not close(backward, dp["backward_time_s"]):
        fail("backward_time_s is not the rows before the first bucket")

    # The last micro-batch runs each body row once and, with micro-batches,
    # the accumulating hand-overs (micro-batch 0 copies or widens).
    def in_last(k):
        return (k["op"] != "storeGrad" or r["accum_steps"] == 1
                or k["name"] in ("accumulate", "widenGrad (add)"))
    last = sum(k["time_s"] for k in rows[:first] if in_last(k))
    before = backward - last
    end, coll_time = 0.0, 0.0
    for i, b in enumerate(buckets):
        upto = rows[:b["ready_after_row"] + 1]
        ready = before + sum(k["time_s"] for k in upto if in_last(k))
        if not close(ready, b["ready_s"]):
            fail("bucket %d: ready_s is not the time through its ready row" % i)
        if not dp["overlap"] and b["ready_after_row"] != first - 1:
            fail("bucket %d: without the overlap it must wait for the backward" % i)
        if not close(b["start_s"], max(end, b["ready_s"])):
            fail("bucket %d: it starts neither when ready nor after the last" % i)
        span = rows[b["first_row"]:b["end_row"]]
        took = sum(k["count"] * k["time_s"] for k in span)
        if not close(b["end_s"], b["start_s"] + took):
            fail("bucket %d: end_s is not start_s plus its rows" % i)
        if sum(k["kind"] == "collective" for k in span) != 1 or span[-1]["kind"] != "collective":
            fail("bucket %d: its rows do not end with its one collective" % i)
        end, coll_time = b["end_s"], coll_time + took
        ready_row = rows[b["ready_after_row"]] if b["ready_after_row"] >= 0 else None
        unpack = ("rows %d-%d" % (b["unpack_row"], b["unpack_end_row"] - 1)
                  if b["unpack_end_row"] > b["unpack_row"] else "none")
        print("bucket %d: rows %d-%d, %d piece(s), %d elements, %d bytes, staged %s (unpack %s), ready after row %d (%s)" % (
            i, b["first_row"], b["end_row"] - 1,
            b["pieces"], b["elements"], b["bytes"], "yes" if b["staged"] else "no", unpack,
            b["ready_after_row"],
            "%s %s %s" % (ready_row["name"], ready_row["op"], ready_row["value"])
            if ready_row else "before the step"))
    # finish(): every staged bucket's unpacking, after the last collective.
    if buckets[0]["unpack_row"] != buckets[-1]["end_row"]:
        fail("the unpacking does not follow the last bucket's collective")
    for b in buckets:
        for k in rows[b["unpack_row"]:b["unpack_end_row"]]:
            if k["op"] != "allreduce (unpack)":
                fail("an unpack row is %s" % k["op"])
            end += k["count"] * k["time_s"]
            coll_time += k["count"] * k["time_s"]
    rest = rows[buckets[-1]["unpack_end_row"]:]
    after = sum(k["count"] * k["time_s"] for k in rest)
    coll_time += sum(k["count"] * k["time_s"] for k in rest if k["kind"] == "collective")
    if not close(coll_time, dp["collective_time_s"]):
        fail("collective_time_s is not the buckets' rows and the loss")
    if not close(dp["overlapped_time_s"], max(backward, end) + after):
        fail("overlapped_time_s is not max(backward, last bucket) + the rest")
    if not dp["overlap"] and not close(dp["overlapped_time_s"], t["time_s"]):
        fail("without the overlap the floor must be the rows' sum")
    print("data parallel ok: %d ranks, %d buckets, %d staged, %d link bytes, overlap %s, %s" % (
        dp["world_size"], dp["buckets"], dp["staged_buckets"], dp["link_bytes"],
        "on" if dp["overlap"] else "off",
        "some hidden" if dp["overlapped_time_s"] < t["time_s"] * (1 - 1e-9) else "none hidden"))

for k in rows:
    print("row %d %s %s %s count=%d read=%d written=%d flops=%d %s%s" % (
        k["index"], k["kind"], k["name"], k["op"], k["count"], k["bytes_read"],
        k["bytes_written"], k["flops"], "half" if k["half_math"] else "fp32",
        " link=%d %s" % (k["link_bytes"], k["link_protocol"]) if k["link_bytes"] else ""))
print("totals ok: %d launches, %d bytes, %d FLOPs" % (t["launches"], t["bytes"], t["flops"]))
