/* SPDX-License-Identifier: BSD-3-Clause */
/* GCP's stratified samples (cpu/gcp_sample.h). */
#include "cpu/gcp_sample.h"

#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"
#include "core/rng.h"

static uint64_t hash_coord(const uint32_t *idx, uint32_t order)
{
    uint64_t h = 0x9E3779B97F4A7C15ULL;
    for (uint32_t n = 0; n < order; ++n) {
        h ^= idx[n] + 0x632BE59BD9B4E019ULL + (h << 6) + (h >> 2);
        h *= 0xBF58476D1CE4E5B9ULL;
    }
    return h ^ (h >> 31);
}

static int same_coord(const tf_tensor *X, uint64_t k, const uint32_t *idx)
{
    for (uint32_t n = 0; n < X->order; ++n)
        if (X->ind[n][k] != idx[n]) return 0;
    return 1;
}

tf_status tf_gcp_nzset_build(const tf_tensor *X, tf_gcp_nzset *h)
{
    memset(h, 0, sizeof *h);
    uint64_t slots = 16;
    while (slots < 2 * X->nnz) slots <<= 1;
    TF_TRY(TF_ALLOC(h->slot, slots, "GCP hash set of the non-zeros"));
    memset(h->slot, 0, slots * sizeof *h->slot);
    h->X = X;
    h->mask = slots - 1;
    uint32_t idx[TF_MAX_ORDER];
    for (uint64_t k = 0; k < X->nnz; ++k) {
        for (uint32_t n = 0; n < X->order; ++n) idx[n] = X->ind[n][k];
        uint64_t p = hash_coord(idx, X->order) & h->mask;
        while (h->slot[p] && !same_coord(X, h->slot[p] - 1, idx)) p = (p + 1) & h->mask;
        if (!h->slot[p]) h->slot[p] = k + 1; /* a repeated coordinate: the first one stands for it */
    }
    return TF_OK;
}

void tf_gcp_nzset_free(tf_gcp_nzset *h)
{
    tf_free(h->slot);
    memset(h, 0, sizeof *h);
}

int tf_gcp_nzset_has(const tf_gcp_nzset *h, const uint32_t *idx)
{
    uint64_t p = hash_coord(idx, h->X->order) & h->mask;
    for (;;) {
        const uint64_t s = h->slot[p];
        if (!s) return 0;
        if (same_coord(h->X, s - 1, idx)) return 1;
        p = (p + 1) & h->mask;
    }
}

tf_status tf_gcp_samples_alloc(tf_gcp_samples *s, uint32_t order, uint64_t cap)
{
    memset(s, 0, sizeof *s);
    s->order = order;
    s->cap = cap;
    const uint64_t c = cap ? cap : 1;
    tf_status st = TF_ALLOC(s->vals, c, "GCP sample values");
    for (uint32_t n = 0; n < order && st == TF_OK; ++n) st = TF_ALLOC(s->ind[n], c, "GCP sample indices");
    if (st != TF_OK) tf_gcp_samples_free(s);
    return st;
}

void tf_gcp_samples_free(tf_gcp_samples *s)
{
    for (uint32_t n = 0; n < TF_MAX_ORDER; ++n) tf_free(s->ind[n]);
    tf_free(s->vals);
    memset(s, 0, sizeof *s);
}

void tf_gcp_draw(const tf_gcp_nzset *h, uint64_t seed, uint64_t stream, uint64_t gnz, uint64_t gz, int threads,
                 tf_gcp_samples *s)
{
    const tf_tensor *X = h->X;
    const uint32_t N = X->order;
    const uint64_t nnz = X->nnz;
    double numel = 1.0;
    for (uint32_t n = 0; n < N; ++n) numel *= (double)X->dims[n];
    if (numel <= (double)nnz) gz = 0; /* no zeros to draw */
    const uint64_t total = gnz + gz;
    s->n = total;
    s->nnz_part = gnz;
    s->w_nz = gnz ? (double)nnz / (double)gnz : 0.0;
    s->w_z = gz ? (numel - (double)nnz) / (double)gz : 0.0;
    const int nt = tf_team_for_work(threads, (total + 1023) / 1024, total * (4 + N));
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (int64_t jj = 0; jj < (int64_t)total; ++jj) {
        const uint64_t j = (uint64_t)jj;
        tf_rng r;
        if (j < gnz) {
            tf_rng_seed(&r, tf_rng_key(seed, 2 * stream, j));
            const uint64_t k = tf_rng_below(&r, nnz);
            for (uint32_t n = 0; n < N; ++n) s->ind[n][j] = X->ind[n][k];
            s->vals[j] = X->vals[k];
        } else {
            tf_rng_seed(&r, tf_rng_key(seed, 2 * stream + 1, j - gnz));
            uint32_t idx[TF_MAX_ORDER];
            do {
                for (uint32_t n = 0; n < N; ++n) idx[n] = (uint32_t)tf_rng_below(&r, X->dims[n]);
            } while (nnz && tf_gcp_nzset_has(h, idx));
            for (uint32_t n = 0; n < N; ++n) s->ind[n][j] = idx[n];
            s->vals[j] = 0.0;
        }
    }
}

tf_status tf_gcp_samples_dense(const tf_tensor *X, tf_gcp_samples *s)
{
    const uint32_t N = X->order;
    uint64_t numel = 1;
    for (uint32_t n = 0; n < N; ++n) numel *= X->dims[n]; /* checked small by the caller */
    TF_TRY(tf_gcp_samples_alloc(s, N, numel));
    memset(s->vals, 0, numel * sizeof *s->vals);
    for (uint64_t e = 0; e < numel; ++e) {
        uint64_t rest = e;
        for (uint32_t n = 0; n < N; ++n) {
            s->ind[n][e] = (uint32_t)(rest % X->dims[n]);
            rest /= X->dims[n];
        }
    }
    for (uint64_t k = 0; k < X->nnz; ++k) { /* repeated coordinates add up */
        uint64_t e = 0, stride = 1;
        for (uint32_t n = 0; n < N; ++n) {
            e += X->ind[n][k] * stride;
            stride *= X->dims[n];
        }
        s->vals[e] += X->vals[k];
    }
    s->n = numel;
    s->nnz_part = numel;
    s->w_nz = s->w_z = 1.0;
    return TF_OK;
}
