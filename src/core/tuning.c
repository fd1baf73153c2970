/* SPDX-License-Identifier: BSD-3-Clause */
/* The tuning policy's defaults, and a caller's tf_tuning read and written
 * as far as its size reaches (the struct is versioned by its size: see
 * tenfold/context.h). The environment's overrides are read in
 * src/core/environment.c (tf_tuning_from_env). */
#include "core/tuning.h"

#include <stddef.h>
#include <string.h>

#include "core/error.h"

/* Every knob is 8 bytes wide, so no padding is ever inside the struct and
 * an older caller's size ends exactly at a knob: listed here to check it. */
#define TF_TUNING_KNOBS(X)                                                                                    \
    X(auto_cost) X(fcoo_tune) X(fcoo_tune_nnz) X(fcoo_kernel) X(fcoo_variant) X(fcoo_part) X(fcoo_seg_part)  \
    X(fcoo_slice) X(fcoo_vec) X(fcoo_build) X(stream) X(stream_chunk) X(stream_resident) X(stream_pack)      \
    X(blco_resolution) X(blco_hot) X(cpd_cusolver) X(cpd_graph) X(cpd_apply) X(cpd_gram_syrk)                \
    X(cpd_apply_gram) X(cpd_gram_solve_rows) X(cpd_overlap) X(gpu_exchange) X(mpi_round_bytes)               \
    X(sddmm_row_grid) X(gpu_staging) X(gpu_poison) X(build_report) X(mpi_timeout) X(nccl_timeout) \
    X(partition) X(admm_fused) X(gcp_smem) X(gpu_shards)
#define TF_KNOB_8_(name) _Static_assert(sizeof(((tf_tuning *)0)->name) == 8, "tf_tuning." #name " is not 8 bytes");
TF_TUNING_KNOBS(TF_KNOB_8_)
#define TF_KNOB_COUNT_(name) +1
_Static_assert(sizeof(tf_tuning) == sizeof(size_t) + 8 * (0 TF_TUNING_KNOBS(TF_KNOB_COUNT_)),
               "tf_tuning: a knob missing from TF_TUNING_KNOBS, or padding");

static void defaults(tf_tuning *t)
{
    memset(t, 0, sizeof *t);
    t->size = sizeof *t;
    t->auto_cost = 1;
    t->fcoo_tune = 1;
    t->fcoo_vec = 1;
    t->blco_hot = 1;
    t->gpu_staging = 1;
    t->cpd_graph = 1;
    t->cpd_overlap = 1;
    t->cpd_apply_gram = -1;
    t->cpd_gram_solve_rows = -1;
    t->admm_fused = -1;
    t->stream_resident = -1;
    t->stream_pack = 1;
    t->gcp_smem = -1;
}

void tf_tuning_init(tf_tuning *t, size_t size)
{
    if (!t || size < sizeof t->size) return;
    tf_tuning d;
    defaults(&d);
    const size_t known = size < sizeof d ? size : sizeof d;
    memcpy(t, &d, known);
    if (size > known) memset((char *)t + known, 0, size - known); /* a newer header's knobs: unknown here */
    t->size = size;
}

tf_status tf_tuning_take(tf_tuning *dst, const tf_tuning *src, const char *who)
{
    defaults(dst);
    if (!src) return TF_OK;
    if (src->size < sizeof src->size)
        return tf_fail(TF_ERR_ARG, "%s: tuning->size is %zu: fill the tuning with tf_tuning_default first", who,
                       src->size);
    const size_t n = src->size < sizeof *dst ? src->size : sizeof *dst;
    memcpy((char *)dst + sizeof dst->size, (const char *)src + sizeof src->size, n - sizeof src->size);
    return TF_OK;
}

void tf_tuning_give(tf_tuning *dst, const tf_tuning *src)
{
    const size_t n = dst->size < sizeof *src ? dst->size : sizeof *src;
    if (n > sizeof dst->size)
        memcpy((char *)dst + sizeof dst->size, (const char *)src + sizeof src->size, n - sizeof src->size);
}
