#!/usr/bin/env python3
"""Checks the stderr of a CPU training binary run with OPENBLAS_VERBOSE=2
and no OPENBLAS_CORETYPE (test/e2e/blas-core.test): OpenBLAS prints
"Core: NAME" as it loads. When it fell back to Prescott on a CPU with
AVX2 and FMA (a CPU its table lacks), the binary must say so in a note
and start again on the SkylakeX (AVX-512) or Haswell kernels; otherwise
it keeps OpenBLAS's choice and says nothing.

  blas_core.py STDERR_FILE
"""
import sys

def cpu_flags():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    return set()

def main(path):
    lines = open(path).read().splitlines()
    cores = [l.split(":", 1)[1].strip() for l in lines if l.startswith("Core:")]
    notes = [l for l in lines if "OPENBLAS_CORETYPE=" in l]
    flags = cpu_flags()
    avx512 = {"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"} <= flags
    avx2 = {"avx2", "fma"} <= flags
    want = "SkylakeX" if avx512 else "Haswell" if avx2 else None
    if not cores:
        sys.exit("no 'Core:' line from OPENBLAS_VERBOSE=2")
    if cores[0] == "Prescott" and want:
        if cores != ["Prescott", want] or len(notes) != 1 or want not in notes[0]:
            sys.exit("fell back to Prescott on a CPU that runs %s: cores %s, "
                     "notes %s" % (want, cores, notes))
        print("started again on the %s kernels" % want)
    else:
        if len(cores) != 1 or notes:
            sys.exit("OpenBLAS chose %s, yet cores %s, notes %s" %
                     (cores[0], cores, notes))
        print("kept OpenBLAS's %s kernels" % cores[0])

if __name__ == "__main__":
    main(sys.argv[1])
