#!/usr/bin/env python3
"""Writes the data files of test/e2e/hostile-data.test into DIR: headers
whose dims overflow 64-bit sizes (their products wrap to the size of the
data that follows, so only a checked product tells), a dim beyond int64,
a FIFO, and a .gz name that is a link to /dev/zero.

  hostile_data.py DIR
"""
import os
import struct
import sys

def npy(path, header, data):
    h = header.encode()
    h += b" " * ((64 - (10 + len(h) + 1) % 64) % 64) + b"\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h + data)

def main(d):
    n = 2**62 + 64  # n * 3 * 4 wraps to 768, n * 8 to 512
    npy(os.path.join(d, "wrap.npy"),
        "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, 3), }" % n, bytes(768))
    npy(os.path.join(d, "wrap_label.npy"),
        "{'descr': '<i8', 'fortran_order': False, 'shape': (%d,), }" % n, bytes(512))
    npy(os.path.join(d, "dim_2_63.npy"),
        "{'descr': '<f4', 'fortran_order': False, 'shape': (9223372036854775808, 3), }",
        bytes(12))
    # IDX u8 dims whose product is 512 x 784 modulo 2^64: 512 samples of
    # what looks like 784 bytes each.
    dims = [512, 48, 467, 11001563, 598407739]
    with open(os.path.join(d, "wrap.idx"), "wb") as f:
        f.write(bytes([0, 0, 8, len(dims)]) + struct.pack(">%dI" % len(dims), *dims) +
                bytes(512 * 784))
    os.mkfifo(os.path.join(d, "fifo.npy"))
    os.symlink("/dev/zero", os.path.join(d, "zero.idx.gz"))

if __name__ == "__main__":
    main(sys.argv[1])
