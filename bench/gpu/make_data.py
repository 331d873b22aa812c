"""Random inputs for B2 (x, label) and B3 (tokens, targets) as .npy files in
the folder given (no numpy needed; numpy only makes it faster)."""
import os
import random
import struct
import sys


def npy(path, descr, fmt, shape, vals):
    h = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, "".join("%d, " % d for d in shape))
    h += " " * (64 - (10 + len(h) + 1) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode())
        if hasattr(vals, "tobytes"):
            f.write(vals.tobytes())
        else:
            f.write(struct.pack("<%d%s" % (len(vals), fmt), *vals))


def main(w):
    try:
        import numpy as np
        g = np.random.default_rng(0)
        x = g.standard_normal((1024, 4096), dtype=np.float32)
        label = g.integers(0, 4096, 1024, dtype=np.int64)
        tok = g.integers(0, 50257, (16, 1024), dtype=np.int64)
        tgt = g.integers(0, 50257, (16, 1024), dtype=np.int64)
    except ImportError:
        r = random.Random(0)
        x = [r.gauss(0, 1) for _ in range(1024 * 4096)]
        label = [r.randrange(4096) for _ in range(1024)]
        tok = [r.randrange(50257) for _ in range(16 * 1024)]
        tgt = [r.randrange(50257) for _ in range(16 * 1024)]
    npy(os.path.join(w, "x.npy"), "<f4", "f", (1024, 4096), x)
    npy(os.path.join(w, "label.npy"), "<i8", "q", (1024,), label)
    npy(os.path.join(w, "tokens.npy"), "<i8", "q", (16, 1024), tok)
    npy(os.path.join(w, "targets.npy"), "<i8", "q", (16, 1024), tgt)


if __name__ == "__main__":
    main(sys.argv[1])
