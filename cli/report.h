/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared pieces of the commands' human-readable output, and tensor loading. */
#ifndef TF_CLI_REPORT_H
#define TF_CLI_REPORT_H
#include <stdint.h>
#include <stdio.h>

#include "gen_spec.h"
#include "tenfold.h"

/* "12.3 MB" (powers of 1024; B, KB, MB, GB, TB). Returns buf. */
const char *cli_bytes(char *buf, size_t len, double bytes);
/* "183 x 24 x 1140". Returns buf. */
const char *cli_dims(char *buf, size_t len, uint32_t order, const uint64_t *dims);
/* "0-based (detected: an index is 0)", "1-based (from --base)", ... Returns buf. */
const char *cli_index_base(char *buf, size_t len, const tf_read_info *info);
/* "detected", "option", "format". */
const char *cli_base_source_name(tf_base_source s);
/* Name of a file format ("tns", "tns-header", "sptensor", "bin", "mtx"). */
const char *cli_file_format_name(tf_file_format f);
/* "", "xz", "gzip". */
const char *cli_compression_name(int compressed);
/* "" for 1, else "s": "%llu thread%s". */
static inline const char *cli_s(uint64_t n) { return n == 1 ? "" : "s"; }
/* nnz / product of dims (as double; 0 for an empty shape). */
double cli_density(const tf_tensor *t);

/* The --base option every command that reads a tensor lists: its help
 * line, and its value (NULL, "auto", "0", "1") as tf_read_opts.base
 * (usage error: message, returns 2). */
#define CLI_BASE_HELP                                                                       \
    "      --base auto|0|1  index base of .tns input (default auto: 0-based if any\n"        \
    "                       index of any mode is 0, else 1-based; .mtx is always\n"          \
    "                       1-based, .bin needs none)\n"
int cli_base(const char *cmd, const char *s, int *out);
/* The closing paragraph of the --help of every command that reads files. */
#define CLI_STDIN_HELP                                                                       \
    "\n"                                                                                      \
    "An input file named '-' is standard input (a pipe, or a redirected file);\n"            \
    "its format is told by content as for any file: tenfold binary by its magic,\n"         \
    "xz / gzip by theirs (then the same inside), Matrix Market by its\n"                    \
    "%%MatrixMarket banner, anything else is .tns text.\n"
/* How an input path is shown: "<stdin>" for "-". */
const char *cli_input_name(const char *path);
/* At most one of the n inputs (NULL entries skipped) may be "-"; else a
 * usage error naming the options (names[i] describes paths[i]), 2. */
int cli_one_stdin(const char *cmd, const char *const *paths, const char *const *names, int n);
/* Reads a tensor with --base `base` (may be NULL), or generates it when
 * path is this run's --gen SPEC (gen_spec.h); on failure prints
 * "tenfold: <error>" and returns 1 (2 for a bad --base value or SPEC). */
int cli_load_base(const char *cmd, const char *path, int threads, const char *base, tf_tensor *t,
                  tf_read_info *info);
/* cli_load_base keeping the entries of value 0 (tf_read_opts.keep_zeros;
 * info->zeros_kept counts them): completion's observed entries. */
int cli_load_observed(const char *cmd, const char *path, int threads, const char *base, tf_tensor *t,
                      tf_read_info *info);
/* The same for part `part` of `parts` of the non-zeros (parts > 1: the
 * MPI ranks, each calling it; tf_read_opts.part, .collective): a tenfold
 * binary file is read at its offsets (the ranks checking the whole file
 * together), other inputs whole then cut. info->total_nnz and
 * info->checksum: the whole's. */
int cli_load_part(const char *cmd, const char *path, int threads, const char *base, uint64_t part, uint64_t parts,
                  tf_tensor *t, tf_read_info *info);
/* cli_load_base for a computation in `precision`: with TF_SINGLE every
 * value, and every sum of duplicates, must fit a float (tf_read_opts). */
int cli_load_precision(const char *cmd, const char *path, int threads, const char *base, tf_precision precision,
                       tf_tensor *t, tf_read_info *info);
/* The same with automatic base detection. */
int cli_load(const char *path, int threads, tf_tensor *t, tf_read_info *info);
/* Two lines: the input file (format, compression, size, read time), or
 * the --gen SPEC (generation time and rate), and the tensor (order, dims,
 * nnz, density, COO memory). */
void cli_print_problem(FILE *f, const char *path, const tf_tensor *t, const tf_read_info *info);
/* One line listing duplicates summed, zeros dropped (or kept, with
 * tf_read_opts.keep_zeros) and the index base (none for a generated tensor). */
void cli_print_fixes(FILE *f, const tf_tensor *t, const tf_read_info *info);
/* The read statistics of -v: lines, entries before the fixes, where the
 * dims came from, Matrix Market symmetry / pattern. */
void cli_print_read(FILE *f, const tf_read_info *info);

/* Non-zeros of each non-empty slice of mode m, in index order (malloc'd,
 * *nonempty entries; free()); dims[m] - *nonempty slices are empty. Memory
 * O(min(dims[m], nnz)): a long mode is counted by sorting its indices.
 * Prints "tenfold: out of memory ..." and returns NULL on failure. */
uint64_t *cli_slice_counts(const tf_tensor *t, uint32_t m, uint64_t *nonempty);
/* The JSON report's "input" (the file or --gen SPEC, its format and the
 * read's counts) and "tensor" (order, dims, nnz, density, COO bytes) objects. */
struct cli_json;
void cli_json_input(struct cli_json *j, const char *path, const tf_tensor *t, const tf_read_info *in);
#endif
