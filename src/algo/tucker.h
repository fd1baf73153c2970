/* SPDX-License-Identifier: BSD-3-Clause */
/* Sparse Tucker by HOOI on a backend (seams/tucker.h) that holds the
 * tensor: the algorithm itself, apart from checking the options and
 * choosing and creating the backend (the front end, front/tucker.c). */
#ifndef TF_ALGO_TUCKER_H
#define TF_ALGO_TUCKER_H
#include "seams/tucker.h"
#include "tenfold.h"

/* Allocates out (ranks o->ranks), starts from `start` (the factors of every
 * mode but order[0]; NULL: uniform in [0,1) drawn from o->seed in mode, row,
 * column order, order[0] skipped), iterates in the mode order `order` until
 * |delta fit| < o->tol or o->max_iters (normx2 = ||X||^2 > 0), filling rep
 * (fits, iterations, times; rep->iterations allocated), and copies the
 * backend's result into out (freed on failure). ck (NULL: none): the
 * checkpoints to write; with ck->done > 0 `start` is the checkpoint's
 * factors and the run goes on after its iteration ck->done. */
struct tf_ckpt;
tf_status tf_hooi_run(const tf_tucker_backend *be, const tf_tensor *X, const tf_tucker_opts *o, const uint32_t *order,
                      double normx2, const tf_matrix *start, struct tf_ckpt *ck, tf_ttensor *out,
                      tf_tucker_report *rep);
#endif
