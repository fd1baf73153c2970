/* SPDX-License-Identifier: BSD-3-Clause */
/* The fibres of a CSF tree in order of length, within each parent node.
 *
 * A fibre (node of level flat-1) of uber-apr14 holds 4.3 non-zeros on
 * average, so the MTTKRP's loop over a fibre's non-zeros exits after a count
 * the branch predictor cannot guess, once per fibre: a mispredicted branch
 * per 4 non-zeros, a third of the kernel's time. A parent's fibres may be
 * summed in any order, so putting them in order of length makes the counts
 * repeat (runs of fibres of 1, 2, 3, ... non-zeros), which the predictor
 * learns, and puts fibres of equal length side by side for the kernel to
 * sum in pairs. Each parent's fibres and non-zeros stay in the parent's
 * range, so every parent is sorted on its own. */
#include "fmt/csf.h"

#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"

typedef struct fibre_key {
    uint64_t len, at; /* length and old position: ties keep their order */
} fibre_key;

static int by_length(const void *a, const void *b)
{
    const fibre_key *x = a, *y = b;
    if (x->len != y->len) return x->len < y->len ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

double tf_csf_mean_fibre(const tf_csf *c)
{
    if (c->flat < 1 || c->nodes[c->flat - 1] == 0) return 0.0;
    return (double)c->nnz / (double)c->nodes[c->flat - 1];
}

tf_status tf_csf_sort_fibres(tf_csf *c, int threads)
{
    if (c->flat < 2 || c->nnz == 0) return TF_OK;
    const uint32_t L = c->flat - 1, P = L - 1, N = c->order;
    const uint64_t nf = c->nodes[L], nnz = c->nnz, np = c->nodes[P];
    fibre_key *key = NULL;
    uint64_t *fptr = NULL;
    uint32_t *fids = NULL, *leaf[TF_MAX_ORDER] = {0};
    double *vals = NULL;
    tf_status s = TF_ALLOC(key, nf, "CSF fibre order");
    if (s == TF_OK) s = TF_ALLOC(fptr, nf + 1, "CSF fibre pointers");
    if (s == TF_OK) s = TF_ALLOC(fids, nf, "CSF fibre indices");
    if (s == TF_OK) s = TF_ALLOC(vals, nnz, "CSF values");
    for (uint32_t l = c->flat; s == TF_OK && l < N; ++l) s = TF_ALLOC(leaf[l], nnz, "CSF leaf indices");
    if (s != TF_OK) goto done;

    const int T = nnz < 4096 ? 1 : (threads > 0 ? threads : 1);
#pragma omp parallel for num_threads(T) schedule(dynamic, 64)
    for (int64_t p = 0; p < (int64_t)np; ++p) {
        const uint64_t fa = c->fptr[P][p], fb = c->fptr[P][p + 1];
        for (uint64_t f = fa; f < fb; ++f) key[f] = (fibre_key){c->fptr[L][f + 1] - c->fptr[L][f], f};
        qsort(key + fa, fb - fa, sizeof *key, by_length);
        uint64_t z = c->fptr[L][fa]; /* the parent's non-zeros start here, sorted or not */
        for (uint64_t f = fa; f < fb; ++f) {
            const uint64_t o = key[f].at, zo = c->fptr[L][o];
            fids[f] = c->fids[L][o];
            fptr[f] = z;
            memcpy(vals + z, c->vals + zo, key[f].len * sizeof *vals);
            for (uint32_t l = c->flat; l < N; ++l) memcpy(leaf[l] + z, c->fids[l] + zo, key[f].len * sizeof(uint32_t));
            z += key[f].len;
        }
    }
    fptr[nf] = nnz;
    tf_free(c->fptr[L]);
    tf_free(c->fids[L]);
    tf_free(c->vals);
    c->fptr[L] = fptr;
    c->fids[L] = fids;
    c->vals = vals;
    fptr = NULL;
    fids = NULL;
    vals = NULL;
    for (uint32_t l = c->flat; l < N; ++l) {
        tf_free(c->fids[l]);
        c->fids[l] = leaf[l];
        leaf[l] = NULL;
    }
done:
    tf_free(key);
    tf_free(fptr);
    tf_free(fids);
    tf_free(vals);
    for (uint32_t l = 0; l < N; ++l) tf_free(leaf[l]);
    return s;
}
