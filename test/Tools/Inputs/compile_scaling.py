"""Fits how `ampc compile --emit=cpp` scales with the size of a model.

  compile_scaling.py [--max-slope=S] AMPC WORKDIR KIND N1 N2 ...

For each N, writes the KIND model of scaling_model.py, compiles it to C++
(not the host compile) twice (three times up to N = 2000), and keeps the
child's least CPU time (user + system, steadier than wall time on a loaded
machine) and its largest
resident set. From both it subtracts a tiny model's (N = 100: start-up, the
MLIR context, the runtime tables), then fits log(cost) = a + slope log(N) by
least squares and prints one line per N and the two slopes:

  time-slope 1.02
  memory-slope 0.97

With --max-slope, exits 1 when either slope reaches S.
"""
import math
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def compile_once(ampc, path):
    proc = subprocess.Popen([ampc, "compile", "--emit=cpp", path, "-o", os.devnull],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    err = proc.stderr.read().decode()
    proc.stderr.close()
    if status != 0:
        sys.exit(f"ampc compile {path} failed ({status}):\n{err}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024


def measure(ampc, workdir, kind, n):
    path = os.path.join(workdir, f"{kind}-{n}.mlir")
    with open(path, "w") as f:
        subprocess.run([sys.executable, os.path.join(HERE, "scaling_model.py"),
                        kind, str(n)], stdout=f, check=True)
    # The small sizes' times are near the N=100 base that is subtracted, so
    # noise there moves the slope most: they get a third run.
    runs = [compile_once(ampc, path) for _ in range(3 if n <= 2000 else 2)]
    return min(t for t, _ in runs), max(m for _, m in runs)


def slope(xs, ys):
    lx = [math.log(x) for x in xs]
    ly = [math.log(max(y, 1e-9)) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    return (sum((a - mx) * (b - my) for a, b in zip(lx, ly)) /
            sum((a - mx) ** 2 for a in lx))


def main():
    args = sys.argv[1:]
    max_slope = None
    if args and args[0].startswith("--max-slope="):
        max_slope = float(args.pop(0).split("=", 1)[1])
    ampc, workdir, kind = args[0], args[1], args[2]
    sizes = [int(n) for n in args[3:]]
    os.makedirs(workdir, exist_ok=True)
    base_t, base_m = measure(ampc, workdir, kind, 100)
    times, mems = [], []
    for n in sizes:
        t, m = measure(ampc, workdir, kind, n)
        times.append(t - base_t)
        mems.append(m - base_m)
        print(f"{kind} N={n}: {t:.3f} s, {m / 2**20:.1f} MiB "
              f"(above N=100: {t - base_t:.3f} s, {(m - base_m) / 2**20:.1f} MiB)")
    slopes = {"time": slope(sizes, times), "memory": slope(sizes, mems)}
    for what, value in slopes.items():
        print(f"{what}-slope {value:.2f}")
    if max_slope is not None:
        bad = [w for w, v in slopes.items() if v >= max_slope]
        if bad:
            print(f"error: {kind}: {' and '.join(bad)} slope not below "
                  f"{max_slope}", file=sys.stderr)
            sys.exit(1)


if __name__ == "__main__":
    main()
