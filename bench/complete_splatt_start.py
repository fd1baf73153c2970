#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes the random start SPLATT's `complete` draws for a training file, as
a tenfold factor set (STEM.mode<N>.mat), so that `tenfold complete --init
STEM` starts where `splatt complete --seed SEED` does: srand(SEED), then for
every mode in order its dims x rank factor, row-major, each entry
rand()/RAND_MAX negated when a second rand() is even (SPLATT's fill_rand).
The C library's rand() is called through ctypes (glibc's stream, as the
SPLATT binary's). Usage: complete_splatt_start.py TRAIN.tns RANK SEED STEM"""
import ctypes
import sys


def main():
    train, rank, seed, stem = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    dims = None
    with open(train) as f:
        for line in f:
            parts = line.split()
            if not parts or parts[0].startswith("#"):
                continue
            idx = [int(p) for p in parts[:-1]]
            dims = idx if dims is None else [max(a, b) for a, b in zip(dims, idx)]
    libc = ctypes.CDLL("libc.so.6")
    RAND_MAX = 2147483647
    libc.srand(ctypes.c_uint(seed))
    for m, d in enumerate(dims):
        with open(f"{stem}.mode{m + 1}.mat", "w") as out:
            for _ in range(d):
                row = []
                for _ in range(rank):
                    v = libc.rand() / RAND_MAX
                    if libc.rand() % 2 == 0:
                        v = -v
                    row.append(repr(v))
                out.write(" ".join(row) + "\n")


if __name__ == "__main__":
    main()
