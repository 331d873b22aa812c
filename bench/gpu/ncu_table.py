"""Per-kernel GPU time of one profiled run: reads `ncu --csv --metrics
gpu__time_duration.sum` output (mixed with the program's own lines) and
prints the kernels that take the most time, grouped by name."""
import collections
import csv
import sys

total = collections.Counter()
count = collections.Counter()
header = None
for row in csv.reader(open(sys.argv[1], errors="replace")):
    if row[:2] == ["ID", "Process ID"]:
        header = row
        continue
    if not header or len(row) != len(header):
        continue
    r = dict(zip(header, row))
    if r.get("Metric Name") != "gpu__time_duration.sum":
        continue
    unit = {"nsecond": 1e-6, "usecond": 1e-3, "msecond": 1.0, "second": 1e3}
    ms = float(r["Metric Value"].replace(",", "")) * unit.get(r["Metric Unit"], 1e-6)
    name = r["Kernel Name"].replace("(anonymous namespace)::", "")
    name = name.removeprefix("void ").split("(")[0].split("<")[0].strip()[:60]
    total[name] += ms
    count[name] += 1
all_ms = sum(total.values())
top = int(sys.argv[2]) if len(sys.argv) > 2 else 15
print("\nGPU time by kernel (ncu, one step: %d kernels, %.2f ms in all)" % (
    sum(count.values()), all_ms))
for name, ms in total.most_common(top):
    print("  %-60s %5d x %9.3f ms  %5.1f%%" % (name, count[name], ms, 100 * ms / max(all_ms, 1e-9)))
