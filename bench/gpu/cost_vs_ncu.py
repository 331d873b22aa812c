"""Estimate against measurement, kernel by kernel: joins the rows of an
`ampc cost --format=json` report (or `ampc compile --cost-report=F.json`)
with the kernels of an `ncu --csv --metrics gpu__time_duration.sum` run of
the same model, and prints the roofline estimate next to the measured time.

  cost_vs_ncu.py COST.json NCU.csv [--top N] [--device NAME]

--device re-prices the rows on another row of the report's device table
(the report's own device by default), e.g. the GPU the profile ran on.

The join is by launch order: the report's kernel rows (copies are not
kernels and are left out) are aligned with ncu's kernel list, gaps allowed
on both sides (ncu also sees initialisation kernels; a rule that misses a
launch shows up as an "unpredicted" kernel). A GEMM row matches any library
GEMM kernel name (cuDNN's only for attention and convolution rows); every
other row matches ncu kernels of its own name. One row may take a run of
kernels where the library launches several for one call: a GEMM's split-K
reduction or cuBLASLt's bias-gradient kernel (BGRADB epilogue), cuDNN's
flash-attention backward (dO.O, the kernel, dQ), the fused norms' column
finish; its measured time is their sum. Only the first run of the step in
the profile is joined: the best-scoring alignment that takes the rows in
order."""
import argparse
import functools
import json
import re
import sys

from ncu_table import ncu_kernels  # the one reader of ncu's CSV

GEMM = re.compile(r"gemm|nvjet|xmma|cutlass|cublas|s16816|h16816|sm\d\d_|cudnn|conv|implicit|wgrad|dgrad", re.I)


def short(name):
    name = name.replace("(anonymous namespace)::", "").replace("<unnamed>::", "")
    name = name.removeprefix("void ")
    return name.split("(")[0].strip()


def matches(row, kernel):
    return _matches(row["kind"], row["name"], row["op"], kernel)


@functools.lru_cache(maxsize=None)
def _matches(kind, name, op, kernel):
    k = short(kernel)
    if kind == "gemm":
        if re.search(r"cudnn", k, re.I):
            return bool(re.search(r"attention|conv", op))
        return bool(GEMM.search(k))
    want = name.split(" ")[0].split("::")[-1]
    return re.search(r"(^|[\s:])" + re.escape(want) + r"($|[<(\s])", k) is not None


# Kernels a library (or the runtime) launches after the first one for the
# same row: they extend that row's match instead of standing alone.
COMPANION = re.compile(r"splitK|reduce_kernel|Bgrad|cudnn|columnFinish", re.I)


def continues(row, kernel):
    return _continues(row["kind"], row["op"], kernel)


@functools.lru_cache(maxsize=None)
def _continues(kind, op, kernel):
    k = short(kernel)
    if not COMPANION.search(k):
        return False
    if "columnFinish" in k:
        return "norm" in op
    if re.search(r"cudnn", k, re.I):
        return kind == "gemm" and bool(re.search(r"attention|conv", op))
    return kind == "gemm"


def align(rows, kernels):
    """Semi-global alignment: every row is matched or skipped; ncu kernels
    before the first and after the last match are free. Returns
    [(row index or None, kernel index or None)] in order."""
    n, m = len(rows), len(kernels)
    MATCH, EXTEND, GAP = 2, 1, -1
    NEG = -10**9
    # score[i][j]: rows[:i] aligned, ending at kernels[:j].
    prev = [0] * (m + 1)  # i = 0: free start anywhere
    # 0 diag, 1 skip row, 2 skip kernel, 3 kernel extends row i's match
    back = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(1, n + 1):
        cur = [NEG] * (m + 1)
        cur[0] = prev[0] + GAP
        back[i][0] = 1
        row = rows[i - 1]
        for j in range(1, m + 1):
            best, how = prev[j] + GAP, 1
            if matches(row, kernels[j - 1][0]) and prev[j - 1] + MATCH > best:
                best, how = prev[j - 1] + MATCH, 0
            if cur[j - 1] + GAP > best:
                best, how = cur[j - 1] + GAP, 2
            if (back[i][j - 1] in (0, 3) and cur[j - 1] + EXTEND > best
                    and continues(row, kernels[j - 1][0])):
                best, how = cur[j - 1] + EXTEND, 3
            cur[j], back[i][j] = best, how
        prev = cur
    j = max(range(m + 1), key=lambda k: (prev[k], -k))  # free end: earliest best
    i, pairs = n, []
    while i > 0:
        how = back[i][j]
        if how == 0:
            pairs.append((i - 1, j - 1))
            i, j = i - 1, j - 1
        elif how == 3:
            pairs.append((i - 1, j - 1))
            j -= 1
        elif how == 1:
            pairs.append((i - 1, None))
            i -= 1
        else:
            pairs.append((None, j - 1))
            j -= 1
    return pairs[::-1]


def reprice(report, name):
    """The roofline of every row on the device table's row |name|."""
    dev = {d["name"]: d for d in report["devices"]}.get(name)
    if not dev:
        sys.exit("cost_vs_ncu: unknown device %s (known: %s)" % (
            name, ", ".join(d["name"] for d in report["devices"])))
    report["device"] = dev
    for r in report["kernels"]:
        mem = (r["bytes_read"] + r["bytes_written"]) / dev["bytes_per_second"]
        peak = dev["half_flops_per_second" if r["half_math"] else "fp32_flops_per_second"]
        comp = r["flops"] / peak
        link = 0.0
        if r["kind"] == "collective":  # as CostReport.cpp: the fastest protocol
            link = min(p["base_latency_s"] + r["link_steps"] * p["step_latency_s"]
                       + r["link_bytes"] / p["bytes_per_second"]
                       for p in dev["link_protocols"])
        r["time_s"] = max(mem, comp, link)
        r["bound"] = ("link" if link > max(mem, comp)
                      else "memory" if mem >= comp else "compute")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("cost")
    ap.add_argument("ncu")
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--device")
    args = ap.parse_args()
    report = json.load(open(args.cost))
    if args.device:
        reprice(report, args.device)
    top = args.top
    kernels = ncu_kernels(args.ncu)
    rows = [r for r in report["kernels"] if r["kind"] != "copy"]
    if report.get("accum_steps", 1) != 1:
        print("note: %d micro-batches; the join takes the first run of each row"
              % report["accum_steps"])
    pairs = align(rows, kernels)
    dev = report["device"]["name"]
    print("%s on %s: %d kernel rows in the report, %d kernels in the profile"
          % (report["model"], dev, len(rows), len(kernels)))
    # A row's measured time: the sum over the kernels it took.
    took = {}
    for a, b in pairs:
        if a is not None and b is not None:
            took.setdefault(a, []).append(b)
    joined = [(rows[a], sum(kernels[b][1] for b in bs)) for a, bs in sorted(took.items())]
    missing = [rows[a] for a, b in pairs if b is None]
    extra = [kernels[b] for a, b in pairs if a is None]
    est = sum(r["time_s"] * 1e6 for r, _ in joined)
    meas = sum(us for _, us in joined)
    print("joined %d rows (%d taking several kernels); %d rows without a kernel; "
          "%d unpredicted kernels inside the step (%.1f us)"
          % (len(joined), sum(len(bs) > 1 for bs in took.values()), len(missing),
             len(extra), sum(us for _, us in extra)))
    print("estimate %.1f us, measured %.1f us for the joined rows: %.1f%% of the roofline reached"
          % (est, meas, 100 * est / meas if meas else 0))
    print("\nby kind:        estimate us   measured us   reached")
    for kind in ("gemm", "fused", "runtime", "epilogue", "collective"):
        e = sum(r["time_s"] * 1e6 for r, _ in joined if r["kind"] == kind)
        m = sum(us for r, us in joined if r["kind"] == kind)
        if m:
            print("  %-10s %14.1f %13.1f %8.1f%%" % (kind, e, m, 100 * e / m))
    print("\ntop %d rows by measured time:" % top)
    print("  %5s %-9s %-28s %-28s %12s %12s %8s" % ("#", "kind", "kernel", "op", "estimate us", "measured us", "reached"))
    for r, us in sorted(joined, key=lambda x: -x[1])[:top]:
        e = r["time_s"] * 1e6
        print("  %5d %-9s %-28s %-28s %12.3f %12.3f %7.1f%%" % (
            r["index"], r["kind"], r["name"][:28], r["op"][:28], e, us, 100 * e / us if us else 0))
    if missing:
        print("\nrows without a measured kernel (first 10):")
        for r in missing[:10]:
            print("  %5d %-9s %s (%s)" % (r["index"], r["kind"], r["name"], r["op"]))
    if extra:
        print("\nunpredicted kernels inside the step (first 10):")
        for name, us in extra[:10]:
            print("  %-60s %10.2f us" % (short(name)[:60], us))


if __name__ == "__main__":
    main()
