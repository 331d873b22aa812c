"""Per-kernel GPU time of one profiled run: reads `ncu --csv --metrics
gpu__time_duration.sum` output (mixed with the program's own lines) and
prints the kernels that take the most time, grouped by name.

  ncu_table.py NCU.csv [TOP]

ncu_kernels() is the one reader of that CSV (cost_vs_ncu.py uses it too)."""
import collections
import csv
import re
import sys

UNITS_US = {"nsecond": 1e-3, "usecond": 1.0, "msecond": 1e3, "second": 1e6}


def ncu_kernels(path):
    """[(kernel name, microseconds)] in launch order."""
    header, out = None, []
    for row in csv.reader(open(path, errors="replace")):
        if row[:2] == ["ID", "Process ID"]:
            header = row
            continue
        if not header or len(row) != len(header):
            continue
        r = dict(zip(header, row))
        if r.get("Metric Name") != "gpu__time_duration.sum":
            continue
        us = float(r["Metric Value"].replace(",", "")) * UNITS_US.get(r["Metric Unit"], 1e-3)
        out.append((r["Kernel Name"], us))
    return out


# What a training binary launches before its first step: the half copies
# of the initial weights (and any initialiser kernels).
INIT = re.compile(r"castToHalf|initUniform|initNormal")


def main():
    total = collections.Counter()
    count = collections.Counter()
    kernels = ncu_kernels(sys.argv[1])
    init = 0
    while init < len(kernels) and INIT.search(kernels[init][0]):
        init += 1
    for kernel, us in kernels[init:]:
        # Anonymous namespaces as older and newer ncu print them.
        name = kernel.replace("(anonymous namespace)::", "").replace("<unnamed>::", "")
        name = name.removeprefix("void ").split("(")[0].split("<")[0].strip()[:60]
        total[name] += us / 1e3
        count[name] += 1
    all_ms = sum(total.values())
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    print("\nGPU time by kernel (ncu, one step: %d kernels, %.2f ms in all; %d kernels"
          " of initialisation before it left out, %.2f ms)" % (
              sum(count.values()), all_ms, init, sum(us for _, us in kernels[:init]) / 1e3))
    for name, ms in total.most_common(top):
        print("  %-60s %5d x %9.3f ms  %5.1f%%" % (name, count[name], ms, 100 * ms / max(all_ms, 1e-9)))


if __name__ == "__main__":
    main()
