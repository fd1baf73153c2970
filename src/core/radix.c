/* SPDX-License-Identifier: BSD-3-Clause */
/* Parallel stable LSD radix sort producing a permutation. Each pass is a
 * counting sort on one digit of one mode's index, carried with the
 * permutation; per-thread histograms keep it stable and parallel. */
#include "core/radix.h"

#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"

#define MAX_DIGIT_BITS 16

static int bits_for(uint64_t n) /* bits to represent 0..n-1 */
{
    int b = 0;
    while (b < 64 && (n - 1) >> b) ++b;
    return b;
}

/* One stable counting-sort pass of (key, perm) by digit (key >> shift) & mask. */
static tf_status pass_u64(const uint64_t *kin, const uint64_t *pin, uint64_t *kout, uint64_t *pout,
                          uint64_t n, int shift, int bits)
{
    const uint64_t nb = 1ULL << bits, mask = nb - 1;
    int T = tf_default_threads();
    if (n < 65536) T = 1;
    uint64_t *hist = NULL;
    TF_TRY(TF_CALLOC(hist, (uint64_t)T * nb, "radix histogram"));
#pragma omp parallel num_threads(T)
    {
        int t = tf_thread_id(), nt = tf_thread_count();
        uint64_t lo = n * (uint64_t)t / (uint64_t)nt, hi = n * (uint64_t)(t + 1) / (uint64_t)nt;
        uint64_t *h = hist + (uint64_t)t * nb;
        for (uint64_t k = lo; k < hi; ++k) h[(kin[k] >> shift) & mask]++;
#pragma omp barrier
#pragma omp single
        {
            uint64_t run = 0;
            for (uint64_t b = 0; b < nb; ++b)
                for (int u = 0; u < nt; ++u) {
                    uint64_t c = hist[(uint64_t)u * nb + b];
                    hist[(uint64_t)u * nb + b] = run;
                    run += c;
                }
        }
        for (uint64_t k = lo; k < hi; ++k) {
            uint64_t d = (kin[k] >> shift) & mask;
            uint64_t at = h[d]++;
            kout[at] = kin[k];
            pout[at] = pin ? pin[k] : k;
        }
    }
    tf_free(hist);
    return TF_OK;
}

/* Sorts (keys, perm) in place through scratch buffers over key_bits bits. */
static tf_status sort_pairs(uint64_t **keys, uint64_t **perm, uint64_t **kbuf, uint64_t **pbuf,
                            uint64_t n, int key_bits, int first_has_perm)
{
    int passes = (key_bits + MAX_DIGIT_BITS - 1) / MAX_DIGIT_BITS;
    if (passes == 0) return TF_OK;
    int dbits = (key_bits + passes - 1) / passes;
    for (int p = 0; p < passes; ++p) {
        int shift = p * dbits;
        int bits = key_bits - shift < dbits ? key_bits - shift : dbits;
        TF_TRY(pass_u64(*keys, (p == 0 && !first_has_perm) ? NULL : *perm, *kbuf, *pbuf, n, shift,
                        bits));
        uint64_t *t = *keys; *keys = *kbuf; *kbuf = t;
        t = *perm; *perm = *pbuf; *pbuf = t;
    }
    return TF_OK;
}

tf_status tf_radix_order_u64(const uint64_t *keys_in, uint64_t n, int key_bits, uint64_t **perm_out)
{
    uint64_t *keys = NULL, *perm = NULL, *kbuf = NULL, *pbuf = NULL;
    tf_status s = TF_ALLOC(keys, n, "sort keys");
    if (s == TF_OK) s = TF_ALLOC(perm, n, "sort permutation");
    if (s == TF_OK) s = TF_ALLOC(kbuf, n, "sort keys");
    if (s == TF_OK) s = TF_ALLOC(pbuf, n, "sort permutation");
    if (s == TF_OK) {
        memcpy(keys, keys_in, n * sizeof *keys);
        for (uint64_t k = 0; k < n; ++k) perm[k] = k;
        s = sort_pairs(&keys, &perm, &kbuf, &pbuf, n, key_bits, 1);
    }
    tf_free(keys); tf_free(kbuf); tf_free(pbuf);
    if (s != TF_OK) { tf_free(perm); perm = NULL; }
    *perm_out = perm;
    return s;
}

tf_status tf_radix_order(const tf_tensor *t, const uint32_t *mo, uint32_t nmodes, uint64_t **perm_out)
{
    const uint64_t n = t->nnz;
    uint64_t *keys = NULL, *perm = NULL, *kbuf = NULL, *pbuf = NULL;
    *perm_out = NULL;
    tf_status s = TF_ALLOC(keys, n, "sort keys");
    if (s == TF_OK) s = TF_ALLOC(perm, n, "sort permutation");
    if (s == TF_OK) s = TF_ALLOC(kbuf, n, "sort keys");
    if (s == TF_OK) s = TF_ALLOC(pbuf, n, "sort permutation");
    if (s != TF_OK) goto done;
    for (uint64_t k = 0; k < n; ++k) perm[k] = k;
    /* Group consecutive least-significant modes into one 64-bit key when
     * their bits fit, to save passes. */
    for (int l = (int)nmodes - 1; l >= 0;) {
        int used = 0, first = l;
        while (l >= 0 && used + bits_for(t->dims[mo[l]]) <= 64) {
            used += bits_for(t->dims[mo[l]]);
            --l;
        }
        if (used == 0) continue; /* all remaining modes have length 1 */
        /* key = concat(mode mo[l+1] ... mo[first]), mo[first] least significant */
        const uint32_t *src[TF_MAX_ORDER];
        int width[TF_MAX_ORDER], nk = 0;
        for (int j = l + 1; j <= first; ++j) {
            width[nk] = bits_for(t->dims[mo[j]]);
            src[nk++] = t->ind[mo[j]];
        }
        const int64_t nn = (int64_t)n;
#pragma omp parallel for schedule(static)
        for (int64_t k = 0; k < nn; ++k) {
            uint64_t key = 0, p = perm[k];
            for (int j = 0; j < nk; ++j)
                key = (width[j] ? key << width[j] : key) | src[j][p];
            keys[k] = key;
        }
        s = sort_pairs(&keys, &perm, &kbuf, &pbuf, n, used, 1);
        if (s != TF_OK) goto done;
    }
done:
    tf_free(keys); tf_free(kbuf); tf_free(pbuf);
    if (s != TF_OK) { tf_free(perm); perm = NULL; }
    *perm_out = perm;
    return s;
}

tf_status tf_apply_permutation(tf_tensor *t, const uint64_t *perm)
{
    const int64_t n = (int64_t)t->nnz;
    uint32_t *ibuf = NULL;
    double *vbuf = NULL;
    TF_TRY(TF_ALLOC(ibuf, t->nnz, "permuted indices"));
    tf_status s = TF_ALLOC(vbuf, t->nnz, "permuted values");
    if (s != TF_OK) { tf_free(ibuf); return s; }
    for (uint32_t m = 0; m < t->order; ++m) {
        const uint32_t *src = t->ind[m];
#pragma omp parallel for schedule(static)
        for (int64_t k = 0; k < n; ++k) ibuf[k] = src[perm[k]];
        uint32_t *old = t->ind[m];
        t->ind[m] = ibuf;
        ibuf = old;
    }
    const double *vs = t->vals;
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < n; ++k) vbuf[k] = vs[perm[k]];
    tf_free(t->vals);
    t->vals = vbuf;
    tf_free(ibuf);
    return TF_OK;
}
