#!/usr/bin/env python3
"""Checks the stderr of a CPU training binary run with OPENBLAS_VERBOSE=2
and no OPENBLAS_CORETYPE (test/e2e/blas-core.test). OpenBLAS prints
"Core: NAME" as it loads. When it chose kernels that need neither AVX2 nor
FMA on a CPU with both (its fallback for a CPU its table lacks), the binary
must start again on the SkylakeX (AVX-512) or Haswell kernels, and the
second run must say so in one note; otherwise it keeps OpenBLAS's choice
and says nothing.

  blas_core.py STDERR_FILE [--assume CORE] [--quiet]

--assume CORE: the run had AMPC_TEST_OPENBLAS_CORE=CORE, which stands for
OpenBLAS's first choice. --quiet: the run was not rank 0 (no note).
An OpenBLAS that is no DYNAMIC_ARCH build prints no "Core:" line and has
nothing to choose: then no note may appear.
"""
import sys

PRE_AVX2 = {"Katmai", "Coppermine", "Northwood", "Prescott", "Banias", "Atom",
            "Core2", "Penryn", "Dunnington", "Nehalem", "Athlon", "Opteron",
            "Opteron_SSE3", "Barcelona", "Nano", "Sandybridge", "Bobcat",
            "Bulldozer", "Piledriver", "Steamroller"}

def cpu_flags():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    return set()

def main(argv):
    path, args = argv[0], argv[1:]
    assume = args[args.index("--assume") + 1] if "--assume" in args else None
    quiet = "--quiet" in args
    lines = open(path).read().splitlines()
    cores = [l.split(":", 1)[1].strip() for l in lines if l.startswith("Core:")]
    notes = [l for l in lines if "OPENBLAS_CORETYPE" in l]
    flags = cpu_flags()
    avx512 = {"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"} <= flags
    want = ("SkylakeX" if avx512 else "Haswell") if {"avx2", "fma"} <= flags else None
    if not cores:
        if notes:
            sys.exit("no 'Core:' line (no DYNAMIC_ARCH), yet notes %s" % notes)
        print("OpenBLAS reports no kernels (no DYNAMIC_ARCH build)")
        return
    first = assume or cores[0]
    if first in PRE_AVX2 and want:
        if cores[1:] != [want]:
            sys.exit("%s on a CPU that runs %s: cores %s" % (first, want, cores))
        expect = [] if quiet else [
            "chose its %s kernels; running on its %s kernels "
            "(OPENBLAS_CORETYPE=%s;" % (first, want, want)]
        if len(notes) != len(expect) or any(e not in n for e, n in zip(expect, notes)):
            sys.exit("notes %s, expected %s" % (notes, expect))
        print("started again on the %s kernels%s" % (want, " (no note)" if quiet else ""))
    else:
        if len(cores) != 1 or notes:
            sys.exit("OpenBLAS chose %s, yet cores %s, notes %s" % (first, cores, notes))
        print("kept OpenBLAS's %s kernels" % first)

if __name__ == "__main__":
    main(sys.argv[1:])
