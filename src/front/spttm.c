/* SPDX-License-Identifier: BSD-3-Clause */
/* SpTTM front end: options, argument checks, backend choice and the
 * benchmark helper. */
#include <stdio.h>
#include <string.h>

#include "seams/spttm_backends.h"
#include "core/alloc.h"
#include "core/error.h"
#include "front/device_choice.h"

void tf_spttm_opts_default(tf_spttm_opts *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->backend = TF_BACKEND_AUTO;
    o->precision = TF_DOUBLE;
}

static tf_status check_args(const tf_tensor *X, uint32_t mode, const tf_matrix *U, const tf_spttm_opts *o,
                            const tf_semisparse *out)
{
    if (!X) return tf_fail(TF_ERR_ARG, "tf_spttm: X is NULL");
    if (!U) return tf_fail(TF_ERR_ARG, "tf_spttm: U is NULL");
    if (!o) return tf_fail(TF_ERR_ARG, "tf_spttm: o is NULL (the options; tf_spttm_opts_default)");
    if (!out) return tf_fail(TF_ERR_ARG, "tf_spttm: out is NULL");
    TF_TRY(tf_tensor_validate(X));
    if (mode >= X->order)
        return tf_fail(TF_ERR_ARG, "tf_spttm: mode %llu is outside 1..%u (1-based)", (unsigned long long)mode + 1, X->order);
    if (U->rows != X->dims[mode])
        return tf_fail(TF_ERR_ARG, "tf_spttm: U has %llu rows, expected %llu (the length of mode %u)",
                       (unsigned long long)U->rows, (unsigned long long)X->dims[mode], mode + 1);
    if (U->cols == 0 || U->cols > (1ULL << 32))
        return tf_fail(TF_ERR_ARG, "tf_spttm: U has %llu columns, expected 1..2^32 (the rank R)",
                       (unsigned long long)U->cols);
    if (!U->data) return tf_fail(TF_ERR_ARG, "tf_spttm: U has no data");
    if (o->precision != TF_DOUBLE && o->precision != TF_SINGLE)
        return tf_fail(TF_ERR_ARG, "tf_spttm: unknown precision %d", (int)o->precision);
    if (o->threads < 0) return tf_fail(TF_ERR_ARG, "tf_spttm: threads %d is negative (0: the default)", o->threads);
    return TF_OK;
}

static tf_status run(const tf_tensor *X, uint32_t mode, const tf_matrix *U, const tf_spttm_opts *o, int warmup,
                     int reps, double *times_ms, tf_semisparse *out)
{
    if (out) memset(out, 0, sizeof *out);
    TF_TRY(check_args(X, mode, U, o, out));
    tf_backend be = tf_choose_backend(o->context, o->backend, 1);
    if (o->info) memset(o->info, 0, sizeof *o->info);
    if (be != TF_BACKEND_CPU && be != TF_BACKEND_GPU)
        return tf_fail(TF_ERR_ARG, "tf_spttm: unknown backend %d", (int)o->backend);
    tf_fibres F;
    TF_TRY(tf_fibres_build(X, mode, &F));
    tf_status s = tf_fibres_output(X, &F, U->cols, out);
    char note[sizeof o->info->note] = "";
    if (s == TF_OK && X->nnz == 0) {
        for (int r = 0; r < reps; ++r) times_ms[r] = 0.0;
    } else if (s == TF_OK && be == TF_BACKEND_GPU) {
        /* borrows the options' context, or a private one for this call */
        tf_spttm_opts go = *o;
        tf_context *own = NULL;
        s = tf_context_for_call(o->context, TF_BACKEND_GPU, o->device, o->threads, &go.context, &own);
        if (s == TF_OK) s = tf_cuda_spttm(X, &F, U, &go, out->vals, warmup, reps, times_ms);
        tf_context_free(own);
        /* under auto, a problem the GPU cannot hold runs on the CPU, which says why */
        if (tf_gpu_fallback(s, o->backend, note, sizeof note)) {
            be = TF_BACKEND_CPU;
            s = TF_OK;
        }
    }
    if (s == TF_OK && X->nnz != 0 && be == TF_BACKEND_CPU) {
        const int total = warmup + (reps > 0 ? reps : 1);
        for (int r = 0; r < total && s == TF_OK; ++r) {
            const double t0 = tf_wtime();
            s = tf_cpu_spttm(X, &F, U, o, out->vals);
            if (r >= warmup && reps > 0) times_ms[r - warmup] = (tf_wtime() - t0) * 1e3;
        }
    }
    if (o->info) {
        o->info->backend = be;
        snprintf(o->info->note, sizeof o->info->note, "%s", note);
    }
    tf_fibres_free(&F);
    if (s != TF_OK) tf_semisparse_free(out);
    return s;
}

tf_status tf_spttm(const tf_tensor *X, uint32_t mode, const tf_matrix *U, const tf_spttm_opts *o,
                   tf_semisparse *out)
{
    return run(X, mode, U, o, 0, 0, NULL, out);
}

tf_status tf_spttm_time(const tf_tensor *X, uint32_t mode, const tf_matrix *U, const tf_spttm_opts *o, int warmup,
                        int reps, double *times_ms, tf_semisparse *out)
{
    if (warmup < 0 || reps < 1 || !times_ms)
        return tf_fail(TF_ERR_ARG, "tf_spttm_time: warmup must be >= 0, reps >= 1 and times_ms non-NULL");
    return run(X, mode, U, o, warmup, reps, times_ms, out);
}
