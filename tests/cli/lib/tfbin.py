# SPDX-License-Identifier: BSD-3-Clause
"""Writes tenfold .bin files as they are (src/io/bin_format.h), for tests
that need one tenfold itself would never write: non-zeros out of order or
repeated, an index past its dim, a wrong checksum. The checksum is
src/io/checksum.c's, here in Python (tests/cli/mpi_agree.sh checks it
against a file tenfold wrote)."""
import struct

M = (1 << 64) - 1
K1, K2 = 0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F
BLOCK = 1 << 20


def _fmix(x):
    x ^= x >> 33
    x = (x * 0xFF51AFD7ED558CCD) & M
    x ^= x >> 33
    x = (x * K2) & M
    return x ^ (x >> 33)


def _lane(h, w):
    h = ((h ^ w) * K1) & M
    return h ^ (h >> 29)


def _block(p, seed):
    n = len(p)
    h = [seed ^ K2, (seed + K1) & M, ~seed & M, (seed * K2 + 1) & M]
    words = struct.unpack_from("<%dQ" % (n // 8), p)
    i = 0
    while i + 4 <= len(words):
        for l in range(4):
            h[l] = _lane(h[l], words[i + l])
        i += 4
    for l in range(len(words) - i):
        h[l] = _lane(h[l], words[i + l])
    if n % 8:
        h[3] = _lane(h[3], struct.unpack("<Q", p[n - n % 8:] + bytes(8 - n % 8))[0])
    return _fmix(h[0] ^ _fmix((h[1] + K1) & M) ^ _fmix((h[2] + K2) & M) ^ _fmix(h[3] ^ n))


def checksum(data, seed):
    h = _fmix(seed ^ ((len(data) * K1) & M))
    for b in range((len(data) + BLOCK - 1) // BLOCK):
        h = (_fmix(h ^ _block(data[b * BLOCK:(b + 1) * BLOCK], b)) + K1) & M
    return h


def write(path, dims, coords, vals, bad_checksum=False):
    """coords: one (i1, ..., iN) 0-based tuple per non-zero, in file order."""
    order, nnz = len(dims), len(vals)
    head = b"TENFOLD\0" + struct.pack("<IIIIQ", 1, order, 4, 8, nnz) + struct.pack("<%dQ" % order, *dims)
    secs = [struct.pack("<%dI" % nnz, *(c[m] for c in coords)) for m in range(order)]
    secs.append(struct.pack("<%dd" % nnz, *vals))
    h = checksum(head, 0)
    for s in secs:
        h = checksum(s, h)
    with open(path, "wb") as f:
        f.write(head + struct.pack("<Q", h ^ (1 if bad_checksum else 0)) + b"".join(secs))


def read_tns(path):
    """The non-zeros of a 1-based .tns (tenfold's own output) as (dims, coords, vals)."""
    coords, vals = [], []
    for line in open(path):
        f = line.split()
        if not f or f[0].startswith("#"):
            continue
        coords.append(tuple(int(x) - 1 for x in f[:-1]))
        vals.append(float(f[-1]))
    dims = [max(c[m] for c in coords) + 1 for m in range(len(coords[0]))]
    return dims, coords, vals
