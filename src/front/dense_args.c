/* SPDX-License-Identifier: BSD-3-Clause */
/* The tf_dense operands of plan runs: checks and host views (dense_args.h). */
#include "front/dense_args.h"

#include "seams/sddmm_backends.h"
#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"

tf_status tf_dense_check(const tf_dense *X, const char *name, uint64_t rows, const char *rows_are, uint64_t cols,
                         const char *cols_are, const char *who)
{
    if (!X) return tf_fail(TF_ERR_ARG, "%s: %s is NULL", who, name);
    if (X->precision != TF_DOUBLE && X->precision != TF_SINGLE)
        return tf_fail(TF_ERR_ARG, "%s: %s has unknown precision %d", who, name, (int)X->precision);
    if ((int)X->memory < TF_MEMORY_AUTO || X->memory > TF_MEMORY_DEVICE)
        return tf_fail(TF_ERR_ARG, "%s: %s has unknown memory %d", who, name, (int)X->memory);
    if (X->rows != rows)
        return tf_fail(TF_ERR_ARG, "%s: %s has %llu rows, expected %llu (%s)", who, name,
                       (unsigned long long)X->rows, (unsigned long long)rows, rows_are);
    if (X->cols != cols)
        return tf_fail(TF_ERR_ARG, "%s: %s has %llu columns, expected %llu (%s)", who, name,
                       (unsigned long long)X->cols, (unsigned long long)cols, cols_are);
    const uint64_t ld = X->ld ? X->ld : X->cols;
    if (ld < X->cols)
        return tf_fail(TF_ERR_ARG, "%s: %s has ld %llu < its %llu columns", who, name, (unsigned long long)ld,
                       (unsigned long long)X->cols);
    if (rows > 1 && ld > (UINT64_MAX - cols) / (rows - 1))
        return tf_fail(TF_ERR_RANGE, "%s: %s: ld %llu x %llu rows overflows", who, name, (unsigned long long)ld,
                       (unsigned long long)rows);
    if (!X->data && rows && cols) return tf_fail(TF_ERR_ARG, "%s: %s has no data (NULL)", who, name);
    return TF_OK;
}

/* What CUDA says X's pointer is (TF_CUDA_PTR_*), asked only when the CUDA backend is loaded. */
static int pointer_kind(const tf_dense *X, int *dev)
{
    *dev = -1;
    if (!X->data || tf_cuda_module(0, NULL, 0) != TF_CUDA_MODULE_LOADED) return TF_CUDA_PTR_HOST;
    return tf_cuda_memory_of(X->data, dev);
}

tf_status tf_dense_check_host(const tf_dense *X, const char *name, const char *who, const char *fix)
{
    if (X->memory == TF_MEMORY_DEVICE) return tf_fail(TF_ERR_ARG, "%s: %s is GPU memory; %s", who, name, fix);
    int dev;
    if (pointer_kind(X, &dev) == TF_CUDA_PTR_DEVICE)
        return tf_fail(TF_ERR_ARG, "%s: %s points to memory of GPU %d; %s", who, name, dev, fix);
    return TF_OK;
}

tf_status tf_dense_locate(const tf_dense *X, const char *name, const char *who, int *gpu)
{
    int dev;
    const int kind = pointer_kind(X, &dev);
    if (X->memory == TF_MEMORY_HOST && kind != TF_CUDA_PTR_HOST)
        return tf_fail(TF_ERR_ARG, "%s: %s is GPU memory, but its memory says TF_MEMORY_HOST", who, name);
    if (X->memory == TF_MEMORY_DEVICE && kind == TF_CUDA_PTR_HOST && X->data &&
        tf_cuda_module(0, NULL, 0) == TF_CUDA_MODULE_LOADED)
        return tf_fail(TF_ERR_ARG,
                       "%s: %s is not GPU memory (CUDA does not know the pointer), but its memory says "
                       "TF_MEMORY_DEVICE", who, name);
    *gpu = X->memory == TF_MEMORY_DEVICE || kind != TF_CUDA_PTR_HOST;
    return TF_OK;
}

tf_status tf_dense_host_matrix(const tf_dense *X, int fill, tf_matrix *m, double **tmp)
{
    const uint64_t ld = X->ld ? X->ld : X->cols;
    m->rows = X->rows;
    m->cols = X->cols;
    m->data = (double *)X->data;
    *tmp = NULL;
    if (X->precision == TF_DOUBLE && ld == X->cols) return TF_OK;
    const uint64_t n = X->rows * X->cols;
    TF_TRY(TF_ALLOC(*tmp, n ? n : 1, "a dense operand as doubles"));
    m->data = *tmp;
    if (!fill) return TF_OK;
    if (ld == X->cols) { /* floats, one run (on the default threads) */
        tf_floats_to_doubles((const float *)X->data, m->data, X->rows * X->cols);
        return TF_OK;
    }
    for (uint64_t i = 0; i < X->rows; ++i)
        for (uint64_t j = 0; j < X->cols; ++j)
            m->data[i * X->cols + j] = X->precision == TF_SINGLE ? (double)((const float *)X->data)[i * ld + j]
                                                                 : ((const double *)X->data)[i * ld + j];
    return TF_OK;
}

void tf_dense_host_store(const tf_dense *X, const tf_matrix *m)
{
    const uint64_t ld = X->ld ? X->ld : X->cols;
    if (m->data == X->data) return;
    if (ld == X->cols && X->precision == TF_SINGLE) {
        tf_doubles_to_floats(m->data, (float *)X->data, X->rows * X->cols);
        return;
    }
    for (uint64_t i = 0; i < X->rows; ++i)
        for (uint64_t j = 0; j < X->cols; ++j) {
            const double v = m->data[i * X->cols + j];
            if (X->precision == TF_SINGLE) ((float *)X->data)[i * ld + j] = (float)v;
            else ((double *)X->data)[i * ld + j] = v;
        }
}
