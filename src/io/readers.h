/* SPDX-License-Identifier: BSD-3-Clause */
/* The format readers behind tf_read_tensor / tf_parse_tensor. Each fills
 * t (not yet canonical) and the format-specific parts of info; read.c
 * does detection, canonical form and the common parts of info. The text
 * readers also say whether t is already canonical (*canonical = 1), so
 * read.c can skip that pass. */
#ifndef TF_IO_READERS_H
#define TF_IO_READERS_H

#include <stddef.h>

#include "io/body_parse.h"
#include "io/stream.h"
#include "tenfold.h"

/* Where the non-zeros of a tensor just read came from (before it is made
 * canonical), so that a fault found later -- a sum of duplicates that
 * overflows -- can name the lines. */
typedef enum tf_origin_kind { TF_ORIGIN_NONE = 0, TF_ORIGIN_TEXT, TF_ORIGIN_BIN } tf_origin_kind;
typedef struct tf_origin {
    tf_origin_kind kind;
    tf_line_map lines;    /* text: entry k's line                              */
    uint32_t value_field; /* text: the value's field (order + 1), 0: none (pattern) */
    uint64_t mirrors;     /* entries from here on mirror the off-diagonal entries
                             before them, in order (symmetric .mtx); else UINT64_MAX */
} tf_origin;

/* The text readers take a source whose first window holds the header
 * (tf_src_need_lines) and parse the body window by window. */
/* .tns text: FROSTT, ParTI header, Tensor Toolbox "sptensor" header. */
tf_status tf_tns_parse(tf_text_src *src, const tf_read_opts *ro, tf_tensor *t, tf_read_info *info,
                       int *canonical, tf_origin *org);
/* The content lines of the header of a .tns text, told by its first
 * content line [b, e): 1 (FROSTT: the first entry line), 2 (ParTI: order,
 * lengths), 4 (sptensor: the word, order, lengths, nnz). */
uint32_t tf_tns_header_lines(const char *b, const char *e);
/* Matrix Market coordinate text (text starts with "%%MatrixMarket"). */
tf_status tf_mtx_parse(tf_text_src *src, int threads, tf_tensor *t, tf_read_info *info,
                       int *canonical, tf_origin *org);
/* tenfold binary from an open file of `size` bytes (progress, if not
 * NULL, after each section), or from memory. */
tf_status tf_bin_read_fd(const char *name, int fd, uint64_t size, int threads, tf_progress_fn progress,
                         void *progress_user, tf_tensor *t);
/* Part `part` of `parts` of a tenfold binary file, the non-zeros [k0, k1) =
 * [nnz part / parts, nnz (part + 1) / parts), read at their offsets by the
 * ranks (read_ranks.c): what the part read leaves for the checks of the
 * whole file the ranks make together. */
typedef struct tf_bin_part {
    tf_tensor shape;   /* the file's order, dims and nnz (no arrays)            */
    uint64_t size;     /* the file's bytes                                      */
    uint64_t sum;      /* the checksum its header holds                         */
    uint64_t head;     /* the hash of the header before it (the chain's start)  */
    uint64_t k0, k1;   /* this part's non-zeros                                 */
    /* The hash of every block of every section (tf_checksum_block; the index
     * arrays, then the values) whose first byte lies in this part, 0 for the
     * others': the parts' arrays XOR-ed together hold every block's. */
    uint64_t *blocks, nblocks;
} tf_bin_part;
/* Reads and checks the header and the file's length (as one process does). */
tf_status tf_bin_part_open(const char *name, int fd, uint64_t size, uint64_t part, uint64_t parts, tf_bin_part *p);
/* Reads the part's non-zeros into t (allocated) and its blocks' hashes. */
tf_status tf_bin_part_read(const char *name, int fd, int threads, tf_bin_part *p, tf_tensor *t);
/* The file's checksum from p->blocks once they hold every block's hash. */
uint64_t tf_bin_part_checksum(const tf_bin_part *p);
/* The coordinate of the file's non-zero k (0-based), read from the file. */
tf_status tf_bin_part_coord(const char *name, int fd, const tf_bin_part *p, uint64_t k, uint32_t *coord);
void tf_bin_part_free(tf_bin_part *p);
tf_status tf_bin_parse_mem(const char *name, const char *data, size_t len, int threads,
                           tf_tensor *t);

/* Adds 1 to every index of mode m (turns stored raw-1 into a 0-based index). */
void tf_shift_mode_up(tf_tensor *t, uint32_t m, int threads);
#endif
