/* SPDX-License-Identifier: BSD-3-Clause */
/* GCP's stratified samples (cpu/gcp_sample.h). */
#include "cpu/gcp_sample.h"

#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"
#include "cpu/gcp_draw.h"

static uint64_t hash_coord(const uint32_t *idx, uint32_t order)
{
    uint64_t h = 0x9E3779B97F4A7C15ULL;
    for (uint32_t n = 0; n < order; ++n) {
        h ^= idx[n] + 0x632BE59BD9B4E019ULL + (h << 6) + (h >> 2);
        h *= 0xBF58476D1CE4E5B9ULL;
    }
    return h ^ (h >> 31);
}

static uint64_t linear_of(const tf_gcp_nzset *h, const uint32_t *idx)
{
    uint64_t e = 0;
    for (uint32_t n = 0; n < h->X->order; ++n) e += idx[n] * h->place[n];
    return e;
}

/* The slot value of a coordinate and where its probe starts. */
static uint64_t probe_start(const tf_gcp_nzset *h, const uint32_t *idx, uint64_t *key)
{
    if (h->linear) {
        *key = linear_of(h, idx) + 1;
        return tf_gcp_slot_start(*key, h->mask);
    }
    return hash_coord(idx, h->X->order) & h->mask;
}

static int same_coord(const tf_gcp_nzset *h, uint64_t k, const uint32_t *idx)
{
    const uint32_t *c = h->coord + k * h->stride;
    for (uint32_t n = 0; n < h->X->order; ++n)
        if (c[n] != idx[n]) return 0;
    return 1;
}

tf_status tf_gcp_nzset_build(const tf_tensor *X, tf_gcp_nzset *h)
{
    return tf_gcp_nzset_build_part(X, 0, 1, X->nnz, 0, NULL, h);
}

tf_status tf_gcp_nzset_build_part(const tf_tensor *X, uint32_t part, uint32_t parts, uint64_t nnz_all,
                                  uint64_t held, const uint64_t *keys, tf_gcp_nzset *h)
{
    memset(h, 0, sizeof *h);
    if (parts < 1 || part >= parts || (!keys && nnz_all != X->nnz) || (keys && held + X->nnz > nnz_all))
        return tf_fail(TF_ERR_ARG, "GCP hash set: part %u of %u, %llu of %llu non-zeros from %llu", part, parts,
                       (unsigned long long)X->nnz, (unsigned long long)nnz_all, (unsigned long long)held);
    uint64_t slots = 16;
    while (slots < 2 * nnz_all) slots <<= 1;
    double numel = 1.0;
    for (uint32_t n = 0; n < X->order; ++n) {
        h->place[n] = n ? h->place[n - 1] * X->dims[n - 1] : 1;
        numel *= (double)X->dims[n];
    }
    h->linear = numel < 9.2e18;
    if (keys && !h->linear)
        return tf_fail(TF_ERR_UNAVAILABLE, "gcp: on MPI ranks the tensor's entries (%.6g) must be fewer than 2^63",
                       numel);
    TF_TRY(TF_ALLOC(h->slot, slots, "GCP hash set of the non-zeros"));
    memset(h->slot, 0, slots * sizeof *h->slot);
    h->X = X;
    h->mask = slots - 1;
    h->stride = X->order + 2;
    h->nnz = nnz_all;
    h->part = part;
    h->parts = parts;
    h->held = keys ? held : 0;
    h->own_lo = keys ? held : (uint64_t)((unsigned __int128)nnz_all * part / parts);
    h->own_hi = keys ? held + X->nnz : (uint64_t)((unsigned __int128)nnz_all * (part + 1) / parts);
    const tf_status s = TF_ALLOC(h->coord, (X->nnz ? X->nnz : 1) * h->stride, "GCP packed non-zeros");
    if (s != TF_OK) {
        tf_gcp_nzset_free(h);
        return s;
    }
    for (uint64_t k = 0; k < X->nnz; ++k) {
        uint32_t *c = h->coord + k * h->stride;
        for (uint32_t n = 0; n < X->order; ++n) c[n] = X->ind[n][k];
        memcpy(c + X->order, &X->vals[k], sizeof(double));
    }
    if (keys) { /* the whole tensor's linear indices */
        for (uint64_t k = 0; k < nnz_all; ++k) {
            const uint64_t key = keys[k] + 1;
            uint64_t p = tf_gcp_slot_start(key, h->mask);
            while (h->slot[p] && h->slot[p] != key) p = (p + 1) & h->mask;
            h->slot[p] = key;
        }
        return TF_OK;
    }
    for (uint64_t k = 0; k < X->nnz; ++k) {
        const uint32_t *idx = h->coord + k * h->stride;
        uint64_t key = 0, p = probe_start(h, idx, &key);
        if (h->linear) {
            while (h->slot[p] && h->slot[p] != key) p = (p + 1) & h->mask;
            h->slot[p] = key;
            continue;
        }
        while (h->slot[p] && !same_coord(h, h->slot[p] - 1, idx)) p = (p + 1) & h->mask;
        if (!h->slot[p]) h->slot[p] = k + 1; /* a repeated coordinate: the first one stands for it */
    }
    return TF_OK;
}

void tf_gcp_nzset_free(tf_gcp_nzset *h)
{
    tf_free(h->slot);
    tf_free(h->coord);
    memset(h, 0, sizeof *h);
}

/* The probe from slot p (key: the linear index + 1 where linear). */
static int has_from(const tf_gcp_nzset *h, const uint32_t *idx, uint64_t p, uint64_t key)
{
    for (;;) {
        const uint64_t s = h->slot[p];
        if (!s) return 0;
        if (h->linear) {
            if (s == key) return 1;
            p = (p + 1) & h->mask;
            continue;
        }
        if (same_coord(h, s - 1, idx)) return 1;
        p = (p + 1) & h->mask;
    }
}

int tf_gcp_nzset_has(const tf_gcp_nzset *h, const uint32_t *idx)
{
    uint64_t key = 0;
    const uint64_t p = probe_start(h, idx, &key);
    return has_from(h, idx, p, key);
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

void tf_gcp_draw_setup(const tf_gcp_nzset *h, uint64_t gnz, uint64_t gz, tf_gcp_samples *s)
{
    const tf_tensor *X = h->X;
    const uint64_t nnz = h->nnz;
    double numel = 1.0;
    for (uint32_t n = 0; n < X->order; ++n) numel *= (double)X->dims[n];
    tf_gcp_draw_weights(numel, nnz, gnz, s->semi, &gz, &s->w_nz, &s->w_z);
    s->order = X->order;
    s->n = gnz + gz;
    s->nnz_part = gnz;
}

/* Entries are drawn in chunks: first every entry's random numbers, with
 * a prefetch of the packed non-zero or the hash slot it reads, then the
 * reads (the cache misses of a chunk overlap instead of following one
 * another; each entry's numbers are its own generator's, as one at a time). */
#define CHUNK 256

/* at[q] of a draw this part does not evaluate */
#define NOT_OWNED UINT64_MAX

uint64_t tf_gcp_draw_range(const tf_gcp_nzset *h, uint64_t seed, uint64_t stream, const tf_gcp_samples *s,
                           uint64_t j0, uint64_t j1, uint32_t *const *ind, double *vals, uint64_t *kept_nz)
{
    const tf_tensor *X = h->X;
    const uint32_t N = X->order;
    const uint64_t nnz = h->nnz, gnz = s->nnz_part;
    const uint32_t parts = h->parts, part = h->part;
    const int probe = nnz && !s->semi; /* semi-stratified: a zero draw is any entry, no rejection */
    uint64_t state[CHUNK], at[CHUNK], key[CHUNK];
    uint64_t w = 0, wnz = 0; /* the kept entries so far (packed at the front), the non-zeros among them */
    for (uint64_t c0 = j0; c0 < j1; c0 += CHUNK) {
        const uint64_t c1 = c0 + CHUNK < j1 ? c0 + CHUNK : j1;
        for (uint64_t j = c0; j < c1; ++j) { /* the numbers, the prefetches */
            const uint64_t q = j - c0, o = j - j0;
            if (j < gnz) {
                const uint64_t k = tf_gcp_draw_nz(seed, stream, j, nnz);
                if (k < h->own_lo || k >= h->own_hi) {
                    at[q] = NOT_OWNED;
                    continue;
                }
                at[q] = (k - h->held) * h->stride;
                __builtin_prefetch(h->coord + at[q]);
            } else {
                if (parts > 1 && (j - gnz) % parts != part) {
                    at[q] = NOT_OWNED;
                    continue;
                }
                uint64_t x = tf_gcp_draw_zero_state(seed, stream, j - gnz);
                uint32_t idx[TF_MAX_ORDER];
                tf_gcp_draw_coord(&x, N, X->dims, idx);
                for (uint32_t n = 0; n < N; ++n) ind[n][o] = idx[n];
                state[q] = x;
                at[q] = 0;
                if (probe) {
                    at[q] = probe_start(h, idx, &key[q]);
                    __builtin_prefetch(h->slot + at[q]);
                }
            }
        }
        /* the reads; a zero that hit a non-zero drawn again; the kept ones
         * written at w <= o (the first loop's zeros at o, read before) */
        for (uint64_t j = c0; j < c1; ++j) {
            const uint64_t q = j - c0, o = j - j0;
            if (at[q] == NOT_OWNED) continue;
            if (j < gnz) {
                const uint32_t *c = h->coord + at[q];
                for (uint32_t n = 0; n < N; ++n) ind[n][w] = c[n];
                memcpy(&vals[w], c + N, sizeof(double));
                ++w;
                ++wnz;
                continue;
            }
            if (!probe && w == o) { /* semi-stratified, nothing dropped before: the coordinates are in place */
                vals[w++] = 0.0;
                continue;
            }
            uint32_t idx[TF_MAX_ORDER];
            for (uint32_t n = 0; n < N; ++n) idx[n] = ind[n][o];
            if (probe && has_from(h, idx, at[q], key[q])) {
                uint64_t x = state[q];
                do {
                    tf_gcp_draw_coord(&x, N, X->dims, idx);
                } while (tf_gcp_nzset_has(h, idx));
            }
            for (uint32_t n = 0; n < N; ++n) ind[n][w] = idx[n];
            vals[w++] = 0.0;
        }
    }
    *kept_nz = wnz;
    return w;
}

tf_status tf_gcp_draw(const tf_gcp_nzset *h, uint64_t seed, uint64_t stream, uint64_t gnz, uint64_t gz, int threads,
                      tf_gcp_samples *s)
{
    tf_gcp_draw_setup(h, gnz, gz, s);
    const uint64_t total = s->n, nb = (total + 1023) / 1024;
    uint64_t *kept = NULL; /* a part's: every block's kept count and non-zeros */
    if (h->parts > 1) TF_TRY(TF_ALLOC(kept, 2 * nb + 1, "GCP sample block counts"));
    const int nt = tf_team_for_work(threads, nb, total * (4 + s->order));
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (int64_t b = 0; b < (int64_t)nb; ++b) {
        const uint64_t j0 = (uint64_t)b * 1024, j1 = j0 + 1024 < total ? j0 + 1024 : total;
        uint32_t *ind[TF_MAX_ORDER];
        for (uint32_t n = 0; n < s->order; ++n) ind[n] = s->ind[n] + j0;
        uint64_t knz = 0;
        const uint64_t k = tf_gcp_draw_range(h, seed, stream, s, j0, j1, ind, s->vals + j0, &knz);
        if (kept) kept[2 * b] = k, kept[2 * b + 1] = knz;
    }
    if (h->parts <= 1) return TF_OK;
    /* a part's kept entries packed, in draw order (non-zeros first: they come first in the draw) */
    uint64_t w = 0, wnz = 0;
    for (uint64_t b = 0; b < nb; ++b) {
        const uint64_t j0 = b * 1024;
        for (uint64_t e = 0; e < kept[2 * b]; ++e, ++w) {
            for (uint32_t n = 0; n < s->order; ++n) s->ind[n][w] = s->ind[n][j0 + e];
            s->vals[w] = s->vals[j0 + e];
        }
        wnz += kept[2 * b + 1];
    }
    s->n = w;
    s->nnz_part = wnz;
    tf_free(kept);
    return TF_OK;
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
