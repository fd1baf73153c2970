/* SPDX-License-Identifier: BSD-3-Clause */
/* `tenfold cpd --init STEM`: the start of CP-ALS from factor files in the
 * layout cpd writes (-o): STEM.mode1.mat ... STEM.modeN.mat, one per mode
 * (dims[m] rows, rank columns), and STEM.lambda.mat if it is there (rank
 * values; folded into the first factor, tf_cpd_opts.init). */
#ifndef TF_CLI_CPD_INIT_H
#define TF_CLI_CPD_INIT_H
#include "tenfold.h"

typedef struct cpd_init {
    const char *stem;           /* NULL: no --init                          */
    uint32_t nfiles;            /* STEM.mode1.mat .. STEM.mode<nfiles>.mat  */
    int has_lambda;             /* STEM.lambda.mat was read (else ones)     */
    tf_ktensor k;               /* the start (tf_cpd_opts.init)             */
} cpd_init;

/* Reads the files with tf_ktensor_read, before the tensor is read: the
 * files STEM.set names (a set another run is replacing is read whole, old
 * or new), or without it STEM.mode<N>.mat from N = 1 for as long as they
 * exist and STEM.lambda.mat if present. Checks what needs no tensor: values
 * finite (the reader, naming file:line:field), the same column count in
 * every file, and that count against *rank (0: taken from the files). On
 * failure prints one line "tenfold: --init STEM: ..." and returns 1. */
int cpd_init_read(cpd_init *c, const char *stem, uint64_t *rank);
/* Checks the files against the tensor (one per mode, dims[m] rows) and
 * their scale (the Grams CP-ALS starts from must not under- or overflow:
 * the file at fault is named), and sets c->k; prints one line and returns
 * 1 on failure. */
int cpd_init_check(cpd_init *c, const tf_tensor *t);
void cpd_init_free(cpd_init *c);
#endif
