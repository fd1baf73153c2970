/* SPDX-License-Identifier: BSD-3-Clause */
/* One mode's streamed F-COO chunks (fcoo_chunks.h) made piece by piece,
 * so that the host never holds the mode's whole sorted copy beside the
 * chunks (the 2B-non-zero streamed build held 16 B/nnz of it: 38 B/nnz
 * above the input at its peak).
 *
 * The mode's rows are cut into pieces of about piece_nnz non-zeros (from
 * counts by blocks of rows); each piece's non-zeros are gathered from X in
 * X's order and sorted as tf_fcoo_build sorts (its rows are disjoint from
 * the others', so its first non-zero starts a segment and its segments
 * follow the pieces before it). The chunks are uniform over the whole mode
 * (partition p at non-zero p * part_nnz), so a piece's non-zeros past its
 * last whole chunk are carried into the next piece. Each whole chunk is
 * either packed straight into the caller's host bytes (streamed) or handed
 * to `resident` as plain arrays (the engine uploads them into its device
 * block). The result is the chunks tf_fcoo_chunks_pack gives from
 * tf_fcoo_build's copy, byte for byte (tests/test_fcoo_pieces.c). */
#ifndef TF_FMT_FCOO_PIECES_H
#define TF_FMT_FCOO_PIECES_H
#include <stdint.h>

#include "fmt/fcoo_chunks.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Non-zeros [n0, n0 + nnz) and partitions [p0, p0 + parts) of a mode's
 * copy (n0 and p0 chunk starts: multiples of 32), as arrays that begin
 * there: pind[j] and vals nnz each, head ceil(nnz/32) words, start
 * ceil(parts/32) words, part_seg parts. */
typedef struct tf_fcoo_range {
    uint64_t n0, nnz, p0, parts;
    const uint32_t *pind[TF_MAX_ORDER];
    const double *vals;
    const uint32_t *head, *start, *part_seg;
} tf_fcoo_range;

typedef tf_status (*tf_fcoo_resident_fn)(void *user, const tf_fcoo_range *r);

/* Chunks of X's copy for output `mode`, as planned in k (tf_fcoo_chunks_plan
 * with X's shape and values): chunks [0, k->first) go to resident (in
 * order, several at a time; NULL: none may), chunks [k->first, nchunks) are
 * packed into k->data (allocated here when NULL, once the first piece is
 * sorted, so that a whole mode's sort does not run beside it). piece_nnz: the non-zeros a piece aims at (a row
 * longer than that is a piece of its own). meta gets the copy without its
 * per-non-zero arrays: order, mode, nnz, dims, pmodes, part_nnz, nparts,
 * start, part_seg, nseg, seg_row (for tf_fcoo_zero_rows; tf_fcoo_free it). */
tf_status tf_fcoo_chunks_build(const tf_tensor *X, uint32_t mode, tf_fcoo_chunks *k, uint64_t piece_nnz,
                               tf_fcoo_resident_fn resident, void *user, tf_fcoo *meta);

#ifdef __cplusplus
}
#endif
#endif
