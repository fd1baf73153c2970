/* Parallel parser of the coordinate lines of a text file ("i j k value" or
 * "i j" for patterns), shared by the .tns variants and Matrix Market. */
#ifndef TF_IO_BODY_PARSE_H
#define TF_IO_BODY_PARSE_H

#include "tenfold.h"

typedef struct tf_body_opts {
    uint32_t nmodes;              /* index fields per line                       */
    int has_value;                /* 0: pattern lines, every value is 1           */
    char comment;                 /* lines starting with this are skipped         */
    uint64_t lo[TF_MAX_ORDER];    /* allowed raw index range per mode             */
    uint64_t hi[TF_MAX_ORDER];
    const char *range_why[TF_MAX_ORDER]; /* names each range in messages, "" or "(...)" */
    uint64_t ref_line;            /* first data line, quoted in field-count errors */
} tf_body_opts;

typedef struct tf_body_result {
    uint64_t entries;                 /* data lines parsed                   */
    uint64_t lines;                   /* text lines from start to the end    */
    uint64_t min_raw[TF_MAX_ORDER];   /* smallest / largest raw index per mode */
    uint64_t max_raw[TF_MAX_ORDER];
    int canonical;                    /* strictly sorted (by raw index), no zeros */
} tf_body_result;

/* Sets every mode's range to 0..2^32 and the other fields to defaults. */
void tf_body_opts_init(tf_body_opts *o, uint32_t nmodes, int has_value, char comment);

/* Parses text[start..len) with up to `threads` threads. t gets order
 * o->nmodes, nnz = entries, dims all 1 (the caller sets them), values, and
 * per mode the raw index minus one (wrapping: raw 0 is stored as
 * UINT32_MAX, so adding 1 turns the array 0-based). On error t is freed and
 * the message is "name:LINE: field F: expected ..., found '...'". */
tf_status tf_body_parse(const char *name, const char *text, size_t len, size_t start,
                        const tf_body_opts *o, int threads, tf_tensor *t, tf_body_result *r);

/* Error path: parses serially only to find and report the first line that
 * breaks o's ranges (or any other error); returns that status. Returns
 * TF_OK if every line is fine. */
tf_status tf_body_recheck(const char *name, const char *text, size_t len, size_t start,
                          const tf_body_opts *o);

#endif
