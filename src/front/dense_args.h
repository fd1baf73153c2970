/* SPDX-License-Identifier: BSD-3-Clause */
/* The tf_dense operands of plan runs (SDDMM, MTTKRP), front end: shape
 * checks, where an array is, and host arrays as plain double matrices. */
#ifndef TF_FRONT_DENSE_ARGS_H
#define TF_FRONT_DENSE_ARGS_H
#include "tenfold.h"

/* X (named `name` in messages that `who` starts) holds rows x cols values
 * (rows_are / cols_are say what fixes them) of a known precision and memory,
 * ld >= cols, and data unless it is empty. */
tf_status tf_dense_check(const tf_dense *X, const char *name, uint64_t rows, const char *rows_are, uint64_t cols,
                         const char *cols_are, const char *who);

/* For a plan that reads host memory only: a GPU array (memory
 * TF_MEMORY_DEVICE, or a pointer CUDA knows as device memory) is TF_ERR_ARG
 * ending with `fix`. Pointers are asked about when the CUDA backend is
 * loaded already (a process without it holds no tenfold GPU memory; loading
 * it for the question would cost a CPU run ~260 MB). */
tf_status tf_dense_check_host(const tf_dense *X, const char *name, const char *who, const char *fix);

/* Whether X is GPU memory (*gpu; device or managed), from its memory and,
 * when the CUDA backend is loaded, from the pointer; a memory the pointer
 * contradicts is TF_ERR_ARG. */
tf_status tf_dense_locate(const tf_dense *X, const char *name, const char *who, int *gpu);

/* A host X as a plain matrix of doubles (ld = cols): a view of X when it is
 * one, else a new one in *tmp (tf_free it; NULL for a view), filled from X
 * when `fill` (an input) and left unset otherwise (an output, for
 * tf_dense_host_store). */
tf_status tf_dense_host_matrix(const tf_dense *X, int fill, tf_matrix *m, double **tmp);
/* Writes m (X's shape) into the host array X, in X's precision and ld. */
void tf_dense_host_store(const tf_dense *X, const tf_matrix *m);
#endif
