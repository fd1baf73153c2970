/* SPDX-License-Identifier: BSD-3-Clause */
/* Factor sets (tf_ktensor_write, tf_ktensor_out_*, tf_ktensor_read): the
 * lock, the manifest that is the set's switch, recovery of an interrupted
 * switch, and the reader. The formatting of the files is matrix_io.c's. */
#ifndef TF_IO_FACTOR_SET_H
#define TF_IO_FACTOR_SET_H

#include "io/output.h"
#include "tenfold.h"

/* matrix_io.c: k is a valid Kruskal tensor (names `what` in messages). */
tf_status tf_ktensor_check(const char *what, const tf_ktensor *k);
/* matrix_io.c: writes the files of k that flags ask for into set (to
 * temporaries, not yet renamed), in this order: <stem>.mode1.mat ..
 * .mode<order>.mat and <stem>.lambda.mat (TF_KTENSOR_SPLATT), then
 * <stem>.ktensor (TF_KTENSOR_TTB). require_file as tf_writer_open_for. */
tf_status tf_ktensor_put_files(tf_out_set *set, const char *stem, const tf_ktensor *k, unsigned flags,
                               int require_file);
/* matrix_io.c: t is a valid Tucker tensor with finite values. */
tf_status tf_ttensor_check(const char *what, const tf_ttensor *t);
/* matrix_io.c: <stem>.mode1.mat .. .mode<order>.mat, then <stem>.core.tensor,
 * into set (temporaries, not yet renamed). */
tf_status tf_ttensor_put_files(tf_out_set *set, const char *stem, const tf_ttensor *t, int require_file);
/* A set with one file switched with it, read from the same generation:
 * tf_ktensor_read (k non-NULL; lambda all 1 when the set has none) or
 * tf_factor_files_read (k NULL: factors, *order) and <stem>.<extra> (the
 * temporary the manifest names while it exists, as the factor files) whole
 * into *text (NUL-terminated, malloc'ed; NULL when there is none). */
tf_status tf_factor_set_read_with(const char *stem, const char *extra, tf_ktensor *k, tf_matrix *factors,
                                  uint32_t *order, char **text);
#endif
