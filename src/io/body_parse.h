/* SPDX-License-Identifier: BSD-3-Clause */
/* Parallel parser of the coordinate lines of a text file ("i j k value" or
 * "i j" for patterns), shared by the .tns variants and Matrix Market. */
#ifndef TF_IO_BODY_PARSE_H
#define TF_IO_BODY_PARSE_H

#include "io/stream.h"
#include "tenfold.h"

/* Where the entries of a text came from: entry e (0-based, in the order
 * of the file's entry lines) is on line line[i] + (e - entry[i]), i the
 * last breakpoint with entry[i] <= e. A breakpoint is kept only where
 * comment or blank lines break the run, so a plain file needs one; past
 * TF_LINE_MAP_MAX of them the map is given up (lost) and lines are not
 * named. For messages about entries found bad after the parse (sums of
 * duplicates), when the text is gone. */
#define TF_LINE_MAP_MAX ((uint64_t)1 << 20)
typedef struct tf_line_map {
    uint64_t *entry, *line;
    uint64_t n, cap;
    int lost;
} tf_line_map;

/* The line of entry e, or 0 if the map cannot tell. */
uint64_t tf_line_map_line(const tf_line_map *m, uint64_t e);
void tf_line_map_free(tf_line_map *m);

typedef struct tf_body_opts {
    uint32_t nmodes;              /* index fields per line                       */
    int has_value;                /* 0: pattern lines, every value is 1           */
    char comment;                 /* lines starting with this are skipped         */
    uint64_t lo[TF_MAX_ORDER];    /* allowed raw index range per mode             */
    uint64_t hi[TF_MAX_ORDER];
    const char *range_why[TF_MAX_ORDER]; /* names each range in messages, "" or "(...)" */
    uint64_t ref_line;            /* first data line, quoted in field-count errors */
    int soft_edge;                /* an index hi[m] + 1 is not an error but noted
                                   * (edge_* in the result): valid 1-based, one too
                                   * large 0-based; the base is known at the end  */
    tf_line_map *map;             /* if not NULL: filled with the entries' lines  */
} tf_body_opts;

typedef struct tf_body_result {
    uint64_t entries;                 /* data lines parsed                   */
    uint64_t lines;                   /* text lines from start to the end    */
    uint64_t min_raw[TF_MAX_ORDER];   /* smallest / largest raw index per mode */
    uint64_t max_raw[TF_MAX_ORDER];
    int canonical;                    /* strictly sorted (by raw index), no zeros */
    uint64_t edge_line;               /* soft_edge: line of the first index hi + 1, 0 if none */
    uint32_t edge_field;              /* its field (mode + 1)                 */
    uint64_t edge_value;              /* the index                           */
} tf_body_result;

/* Called after each window with the window's text and the entries
 * t[first..first+count) it added (entry lines in order from start);
 * line_base is the number of lines before text. An error stops the parse. */
typedef tf_status (*tf_body_hook)(void *ctx, const char *text, size_t len, size_t start,
                                  uint64_t line_base, const tf_tensor *t, uint64_t first,
                                  uint64_t count);

/* Sets every mode's range to 0..2^32 and the other fields to defaults. */
void tf_body_opts_init(tf_body_opts *o, uint32_t nmodes, int has_value, char comment);

/* Parses the coordinate lines of src window by window (src->text from
 * start is the first window's body) with up to `threads` threads; entries
 * are appended to t, which grows. t gets order o->nmodes, nnz = entries,
 * dims all 1 (the caller sets them), values, and per mode the raw index
 * minus one (wrapping: raw 0 is stored as UINT32_MAX, so adding 1 turns
 * the array 0-based). On error t is freed and the message is
 * "name:LINE: field F: expected ..., found '...'". */
tf_status tf_body_parse_src(tf_text_src *src, size_t start, const tf_body_opts *o, int threads,
                            tf_body_hook hook, void *ctx, tf_tensor *t, tf_body_result *r);

#endif
