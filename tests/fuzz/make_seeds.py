#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes the seed corpora of the fuzz targets fuzz_bin, fuzz_mat,
fuzz_compressed and the header seeds of fuzz_tns (tests/fuzz/corpus/).
Deterministic; run from the repository root: python3 tests/fuzz/make_seeds.py
The .bin seeds follow src/io/bin_format.h, with the checksum of
src/io/checksum.c computed by the fuzz target itself (flag bit 0), so they
do not depend on this script reproducing the hash."""
import gzip, lzma, os, struct

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")

def put(target, name, data):
    d = os.path.join(ROOT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())

TNS = "1 1 1 1.5\n2 3 1 -2.25\n1 2 2 4\n2 1 2 0.5\n"

# ---- fuzz_bin: flag byte (bit 0 fix checksum, bit 1 nnz from length), then the file
def binfile(dims, ind, vals, order=None, version=1, iw=4, vw=8, nnz=None):
    order = len(dims) if order is None else order
    nnz = len(vals) if nnz is None else nnz
    h = b"TENFOLD\0" + struct.pack("<IIIIQ", version, order, iw, vw, nnz)
    h += b"".join(struct.pack("<Q", d) for d in dims) + b"\0" * 8  # checksum: fixed by flag 1
    body = b"".join(struct.pack("<%dI" % len(col), *col) for col in ind)
    body += struct.pack("<%dd" % len(vals), *vals)
    return h + body

ind = [[0, 1, 0, 1], [0, 2, 1, 0], [0, 0, 1, 1]]
vals = [1.5, -2.25, 4.0, 0.5]
good = binfile([2, 3, 2], ind, vals)
put("bin", "valid", b"\x01" + good)
put("bin", "valid_order2", b"\x01" + binfile([5, 4], [[0, 4, 2], [3, 0, 1]], [1.0, 2.0, 3.0]))
put("bin", "wrong_checksum", b"\x00" + good)                 # checksum left as zero
put("bin", "truncated_fixed_header", b"\x00" + good[:20])
put("bin", "truncated_dims", b"\x00" + good[:40])
put("bin", "truncated_payload", b"\x01" + good[:-5])
put("bin", "extra_bytes", b"\x01" + good + b"\0\0\0")
put("bin", "nan_value", b"\x01" + binfile([2, 3, 2], ind, [1.5, float("nan"), 4.0, 0.5]))
put("bin", "inf_value", b"\x01" + binfile([2, 3, 2], ind, [1.5, float("inf"), 4.0, 0.5]))
put("bin", "index_out_of_range", b"\x01" + binfile([2, 3, 2], [[0, 1, 0, 2], [0, 2, 1, 0], [0, 0, 1, 1]], vals))
put("bin", "huge_dims", b"\x01" + binfile([2, 1 << 40, 2], ind, vals))
put("bin", "zero_dim", b"\x01" + binfile([2, 0, 2], ind, vals))
put("bin", "huge_nnz", b"\x01" + binfile([2, 3, 2], ind, vals, nnz=1 << 61))
put("bin", "nnz_mismatch", b"\x01" + binfile([2, 3, 2], ind, vals, nnz=5))
put("bin", "nnz_from_length", b"\x03" + binfile([2, 3, 2], ind, vals, nnz=0))
put("bin", "order_17", b"\x01" + binfile([2] * 17, [[0]] * 17, [1.0]))
put("bin", "order_1", b"\x01" + binfile([2], [[0]], [1.0]))
put("bin", "version_2", b"\x01" + binfile([2, 3, 2], ind, vals, version=2))
put("bin", "widths_8_4", b"\x01" + binfile([2, 3, 2], ind, vals, iw=8, vw=4))
put("bin", "duplicates_zeros", b"\x01" + binfile([2, 2], [[0, 0, 1], [1, 1, 0]], [1.0, 2.0, 0.0]))
put("bin", "all_zero", b"\x01" + binfile([2, 2], [[0], [1]], [0.0]))
put("bin", "no_magic", b"\x03" + good[12:])

# ---- fuzz_mat: dense .mat text
put("mat", "splatt", "+1.0000000000000000e+00 -2.5000000000000000e-01 \n+3.0e+00 +4.0e+00 \n")
put("mat", "comments_blank", "# a factor\n1 2 3\n\n# more\n4 5 6\n")
put("mat", "one_column", "1\n2\n3\n")
put("mat", "ragged_short", "1 2 3\n4 5\n")
put("mat", "ragged_long", "1 2\n3 4 5\n")
put("mat", "nan", "1 2\nnan 4\n")
put("mat", "inf", "1 inf\n3 4\n")
put("mat", "overflow", "1 1e999\n")
put("mat", "underflow", "1e-400 4.9e-324\n")
put("mat", "garbage", "1 2x\n")
put("mat", "empty", "")
put("mat", "only_comments", "# nothing\n#\n")
put("mat", "crlf_tabs", "1\t2\r\n3\t4\r\n")
put("mat", "no_final_newline", "1 2\n3 4")
put("mat", "long_digits", "0.12345678901234567890123456789 1e-5\n")

# ---- fuzz_compressed: flag byte (bit 0 gzip, else xz), then the stream
xz = lzma.compress(TNS.encode(), format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64, preset=0)
gz = gzip.compress(TNS.encode(), mtime=0)
put("compressed", "xz_tns", b"\x00" + xz)
put("compressed", "gz_tns", b"\x01" + gz)
put("compressed", "xz_crc32", b"\x00" + lzma.compress(TNS.encode(), format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC32, preset=0))
put("compressed", "xz_bin", b"\x00" + lzma.compress(good, format=lzma.FORMAT_XZ, preset=0))
put("compressed", "gz_mtx", b"\x01" + gzip.compress(b"%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n3 2 2\n", mtime=0))
put("compressed", "gz_sptensor", b"\x01" + gzip.compress(b"sptensor\n3\n2 2 2\n1\n1 1 1 1.0\n", mtime=0))
put("compressed", "xz_truncated", b"\x00" + xz[: len(xz) // 2])
put("compressed", "gz_truncated", b"\x01" + gz[: len(gz) // 2])
put("compressed", "xz_header_only", b"\x00" + xz[:12])
put("compressed", "gz_header_only", b"\x01" + gz[:10])
bad = bytearray(gz); bad[-8] ^= 0xFF   # CRC32 of the gzip trailer
put("compressed", "gz_bad_crc", b"\x01" + bytes(bad))
bad = bytearray(xz); bad[len(xz) // 2] ^= 0x55
put("compressed", "xz_corrupt", b"\x00" + bytes(bad))
put("compressed", "gz_concatenated", b"\x01" + gz + gz)
put("compressed", "xz_concatenated", b"\x00" + xz + xz)
put("compressed", "gz_trailing_garbage", b"\x01" + gz + b"junk")
put("compressed", "xz_empty_payload", b"\x00" + lzma.compress(b"", format=lzma.FORMAT_XZ))
put("compressed", "gz_nested_xz", b"\x01" + gzip.compress(xz, mtime=0))

# ---- fuzz_tns: ParTI and sptensor header variants and bad headers
put("tns", "parti_declared_larger", "3\n9 9 9\n1 1 1 1\n2 2 2 2\n")
put("tns", "parti_index_beyond_dims", "3\n2 2 2\n1 1 3 1\n")
put("tns", "parti_huge_dims", "3\n4294967296 4294967297 1\n1 1 1 1\n")
put("tns", "parti_order_mismatch", "4\n2 2 2\n1 1 1 1\n")
put("tns", "parti_truncated", "3\n2 2\n")
put("tns", "parti_comment_first", "# ParTI\n3\n2 2 2\n1 1 1 1\n")
put("tns", "sptensor_nnz_more", "sptensor\n3\n2 2 2\n5\n1 1 1 1.0\n2 2 2 2.0\n")
put("tns", "sptensor_nnz_fewer", "sptensor\n3\n2 2 2\n1\n1 1 1 1.0\n2 2 2 2.0\n")
put("tns", "sptensor_truncated", "sptensor\n3\n2 2")
put("tns", "sptensor_huge_nnz", "sptensor\n2\n3 3\n18446744073709551615\n1 1 1\n")
put("tns", "sptensor_nan", "sptensor\n2\n3 3\n2\n1 1 1\n2 2 nan\n")
put("tns", "frostt_nan_inf", "1 1 1 nan\n2 2 2 inf\n")
put("tns", "frostt_huge_index", "1 1 4294967297 1\n")
put("tns", "frostt_crlf", "1 1 1 1\r\n2 2 2 2\r\n")

# ---- issue 41: sums of duplicates that overflow (a fuzz_tns finding: the
# reader returned an infinite value), the start of a text (UTF-8 BOM,
# CR-only line ends, compressed data the readers do not take)
LZMA_ALONE = lzma.compress(TNS.encode(), format=lzma.FORMAT_ALONE, preset=0)
put("tns", "dup_overflow", "1 1 1 1e308\n1 1 1 1e308\n2 2 2 1\n")
put("tns", "dup_overflow_comments", "# c\n\n1 1 1 -1e308\n2 2 2 1\n# x\n1 1 1 -1e308\n")
put("tns", "dup_large_finite", "1 1 1 1e308\n1 1 1 -1e308\n2 2 2 1e308\n1 1 1 5\n")
put("tns", "parti_dup_overflow", "3\n2 2 2\n1 1 1 1.7e308\n2 2 2 1\n1 1 1 1.7e308\n")
put("tns", "bom_sptensor", b"\xef\xbb\xbfsptensor\n3\n2 2 2\n2\n1 1 1 1\n2 2 2 2\n")
put("tns", "bom_frostt", b"\xef\xbb\xbf1 1 1 1\n2 2 2 2\n")
put("tns", "cr_only", "1 1 1 1\r2 2 2 2\r")
put("tns", "cr_only_comment", "# c\r1 1 1 1\r2 2 2 2\r")
put("tns", "lzma_alone", LZMA_ALONE)
put("tns", "zstd_magic", b"\x28\xb5\x2f\xfd\x20\x10\x81\x00\x00")
put("mtx", "dup_overflow.mtx", "%%MatrixMarket matrix coordinate real general\n% c\n3 3 3\n1 2 1e308\n2 2 1\n1 2 1e308\n")
put("mtx", "symmetric_mirror_overflow.mtx",
    "%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n2 1 1e308\n1 2 1e308\n")
put("mtx", "bom.mtx", b"\xef\xbb\xbf%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 3\n")
put("mtx", "cr_only.mtx", "%%MatrixMarket matrix coordinate real general\r2 2 1\r1 2 3\r")
put("bin", "duplicates_overflow", b"\x01" + binfile([3, 3], [[2, 0, 2], [1, 0, 1]], [1e308, 1.0, 1e308]))
put("compressed", "xz_nested_gz", b"\x00" + lzma.compress(gz, format=lzma.FORMAT_XZ, preset=0))
put("compressed", "gz_nested_lzma", b"\x01" + gzip.compress(LZMA_ALONE, mtime=0))
put("compressed", "gz_bom_dup_overflow", b"\x01" + gzip.compress(b"\xef\xbb\xbf1 1 1 1e308\n1 1 1 1e308\n", mtime=0))
put("compressed", "gz_cr_only", b"\x01" + gzip.compress(b"1 1 1 1\r2 2 2 2\r", mtime=0))
put("mat", "bom", b"\xef\xbb\xbf1 2\n3 4\n")
put("mat", "cr_only", "1 2\r3 4\r")
put("mat", "lzma_alone", lzma.compress(b"1 2\n3 4\n", format=lzma.FORMAT_ALONE, preset=0))
