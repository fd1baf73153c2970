/* Shared pieces of the commands' human-readable output, and tensor loading. */
#ifndef TF_CLI_REPORT_H
#define TF_CLI_REPORT_H
#include <stdint.h>
#include <stdio.h>

#include "tenfold.h"

/* "12.3 MB" (powers of 1024; B, KB, MB, GB, TB). Returns buf. */
const char *cli_bytes(char *buf, size_t len, double bytes);
/* "183 x 24 x 1140". Returns buf. */
const char *cli_dims(char *buf, size_t len, uint32_t order, const uint64_t *dims);
/* "2, 3" (1-based) or "none". Returns buf. */
const char *cli_zero_based(char *buf, size_t len, const tf_read_info *info, uint32_t order);
/* Name of a file format ("tns", "tns-header", "sptensor", "bin", "mtx"). */
const char *cli_file_format_name(tf_file_format f);
/* "", "xz", "gzip". */
const char *cli_compression_name(int compressed);
/* nnz / product of dims (as double; 0 for an empty shape). */
double cli_density(const tf_tensor *t);

/* Reads a tensor; on failure prints "tenfold: <error>" and returns 1. */
int cli_load(const char *path, int threads, tf_tensor *t, tf_read_info *info);
/* Two lines: the input file (format, compression, size, read time) and the
 * tensor (order, dims, nnz, density, COO memory). */
void cli_print_problem(FILE *f, const char *path, const tf_tensor *t, const tf_read_info *info);
/* One line listing duplicates summed, zeros dropped and 0-based modes. */
void cli_print_fixes(FILE *f, const tf_tensor *t, const tf_read_info *info);

/* Non-zeros per index of mode m (calloc'd, dims[m] entries; free()).
 * Prints "tenfold: out of memory ..." and returns NULL on failure. */
uint64_t *cli_slice_counts(const tf_tensor *t, uint32_t m);
#endif
