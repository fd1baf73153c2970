/* SPDX-License-Identifier: BSD-3-Clause */
/* GCP's fused pass (cpu/gcp_kernel.h): blocks of TF_GCP_BLOCK entries over
 * the threads (static, so every thread's share is the same for a thread
 * count); thread 0 adds into G, the others into parts of their own, added
 * into G in thread order after the pass. */
#include "cpu/gcp_kernel.h"

#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"
#include "cpu/gcp_loss.h"
#include "cpu/rowops.h"

/* Entries ahead whose rows are prefetched. */
#define PREFETCH 6

/* One block [k0, k1): its loss sum; gradient rows into G (NULL: none).
 * pre: (N + 1) x R doubles of scratch. R a constant in the specialisations
 * below (the rows' loops unrolled into whole vectors). */
TF_ALWAYS_INLINE double block(const tf_gcp_pass_in *in, uint64_t k0, uint64_t k1, double *const *G, double *pre,
                              uint32_t *const *bind, double *bvals, const uint64_t R)
{
    const int want_f = in->want_f || !G;
    const tf_gcp_samples *s = in->s;
    const uint32_t *const *ind = (const uint32_t *const *)s->ind;
    const double *vals = s->vals;
    uint64_t base = 0, nz_end = s->nnz_part; /* entries [k0, k1) at k - base; those below nz_end non-zeros */
    if (in->draw) { /* this block's entries drawn now, into the thread's buffer (a part's own ones, packed) */
        uint64_t knz = 0;
        const uint64_t kept = tf_gcp_draw_range(in->draw, in->seed, in->stream, s, k0, k1, bind, bvals, &knz);
        ind = (const uint32_t *const *)bind;
        vals = bvals;
        base = k0;
        k1 = k0 + kept;
        nz_end = k0 + knz;
    }
    const uint32_t N = s->order;
    const int loss = in->loss;
    double *suf = pre + (uint64_t)N * R;
    double sum = 0.0;
    for (uint64_t k = k0; k < k1; ++k) {
        if (k + PREFETCH < k1) /* the rows a later entry reads (and writes): their misses overlap this one's work */
            for (uint32_t n = 0; n < N; ++n) {
                const uint64_t i = (uint64_t)ind[n][k + PREFETCH - base] * R;
                for (uint64_t r = 0; r < R; r += 8) {
                    __builtin_prefetch(in->A[n] + i + r);
                    if (G) __builtin_prefetch(G[n] + i + r, 1);
                }
            }
        /* pre[n] = prod_{j < n} A_j(i_j, :) (pre[0] = 1), then the full product */
        const double *a0 = in->A[0] + (uint64_t)ind[0][k - base] * R;
        double *p1 = pre + R;
        TF_SIMD
        for (uint64_t r = 0; r < R; ++r) p1[r] = a0[r];
        for (uint32_t n = 1; n < N; ++n) {
            const double *an = in->A[n] + (uint64_t)ind[n][k - base] * R;
            const double *pp = pre + (uint64_t)n * R;
            double *pn = n + 1 < N ? pre + (uint64_t)(n + 1) * R : suf;
            TF_SIMD
            for (uint64_t r = 0; r < R; ++r) pn[r] = pp[r] * an[r];
        }
        double m = 0.0;
        for (uint64_t r = 0; r < R; ++r) m += suf[r];
        const int nz = k < nz_end, semi_nz = nz && s->semi; /* semi: f(x, m) - f(0, m) */
        const double w = nz ? s->w_nz : s->w_z, x = vals[k - base];
        if (want_f) sum += w * (tf_gcp_f(loss, x, m) - (semi_nz ? tf_gcp_f(loss, 0.0, m) : 0.0));
        if (!G) continue;
        const double y = w * (tf_gcp_df(loss, x, m) - (semi_nz ? tf_gcp_df(loss, 0.0, m) : 0.0));
        /* mode n's row gets y * pre[n] * (product of the modes after n) */
        TF_SIMD
        for (uint64_t r = 0; r < R; ++r) suf[r] = y;
        for (uint32_t n = N; n-- > 0;) {
            const uint64_t i = ind[n][k - base];
            double *g = G[n] + i * R;
            const double *pn = pre + (uint64_t)n * R;
            if (n == 0) {
                TF_SIMD
                for (uint64_t r = 0; r < R; ++r) g[r] += suf[r];
            } else {
                TF_SIMD
                for (uint64_t r = 0; r < R; ++r) g[r] += suf[r] * pn[r];
                const double *an = in->A[n] + i * R;
                TF_SIMD
                for (uint64_t r = 0; r < R; ++r) suf[r] *= an[r];
            }
        }
    }
    return sum;
}

/* block per constant rank and ISA level; products and sums not contracted
 * into fused multiply-adds, so every level gives the baseline's bits (the
 * results do not depend on the machine's vector width). */
#if defined(__GNUC__) && !defined(__clang__)
#define TF_GCP_NO_FMA __attribute__((optimize("fp-contract=off")))
#else
#define TF_GCP_NO_FMA
#endif
#define TF_GCP_BLOCK_FN(suffix, RANK)                                                                           \
    TF_KERNEL_CLONES TF_GCP_NO_FMA static double block_##suffix(const tf_gcp_pass_in *in, uint64_t k0,           \
                                                                uint64_t k1, double *const *G, double *pre,      \
                                                                uint32_t *const *bind, double *bvals)            \
    {                                                                                                           \
        return block(in, k0, k1, G, pre, bind, bvals, (RANK));                                                  \
    }
TF_GCP_BLOCK_FN(r8, 8)
TF_GCP_BLOCK_FN(r16, 16)
TF_GCP_BLOCK_FN(r32, 32)
TF_GCP_BLOCK_FN(any, in->rank)

static double block_of(const tf_gcp_pass_in *in, uint64_t k0, uint64_t k1, double *const *G, double *pre,
                       uint32_t *const *bind, double *bvals)
{
    switch (in->rank) {
    case 8: return block_r8(in, k0, k1, G, pre, bind, bvals);
    case 16: return block_r16(in, k0, k1, G, pre, bind, bvals);
    case 32: return block_r32(in, k0, k1, G, pre, bind, bvals);
    default: return block_any(in, k0, k1, G, pre, bind, bvals);
    }
}

tf_status tf_cpu_gcp_pass(const tf_gcp_pass_in *in, double *const *G, double *f)
{
    const tf_gcp_samples *s = in->s;
    const uint32_t N = s->order;
    const uint64_t R = in->rank, n = s->n;
    const uint64_t nb = (n + TF_GCP_BLOCK - 1) / TF_GCP_BLOCK;
    int nt = tf_team_for_work(in->threads, nb, n * N * R * 3);
    if (nt < 1) nt = 1;
    uint64_t gsize = 0; /* all modes' gradient entries */
    for (uint32_t m = 0; m < N; ++m) gsize += in->dims[m] * R;
    /* per thread: the products, and with a draw the block's entries */
    const uint64_t bufd = in->draw ? TF_GCP_BLOCK + (N * TF_GCP_BLOCK + 1) / 2 : 0;
    const uint64_t scr = (((uint64_t)(N + 1) * R + 7) & ~(uint64_t)7) + bufd;
    double *scratch = NULL, *parts = NULL, *bsum = NULL;
    TF_TRY(TF_ALLOC(scratch, (uint64_t)nt * scr, "GCP pass scratch"));
    tf_status st = TF_ALLOC(bsum, nb ? nb : 1, "GCP pass block sums");
    if (st == TF_OK && G && nt > 1) st = TF_ALLOC(parts, (uint64_t)(nt - 1) * gsize, "GCP gradient parts");
    if (st != TF_OK) {
        tf_free(scratch);
        tf_free(bsum);
        return st;
    }
    if (G)
        for (uint32_t m = 0; m < N; ++m) memset(G[m], 0, in->dims[m] * R * sizeof(double));
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        const int t = tf_thread_id();
        double *pre = scratch + (uint64_t)t * scr;
        double *bvals = pre + (scr - bufd);
        uint32_t *bind[TF_MAX_ORDER];
        for (uint32_t m = 0; m < N && bufd; ++m) bind[m] = (uint32_t *)(bvals + TF_GCP_BLOCK) + (uint64_t)m * TF_GCP_BLOCK;
        double *Gt[TF_MAX_ORDER];
        double *const *g = G;
        if (G && t > 0) {
            double *base = parts + (uint64_t)(t - 1) * gsize;
            memset(base, 0, gsize * sizeof(double));
            for (uint32_t m = 0; m < N; ++m) {
                Gt[m] = base;
                base += in->dims[m] * R;
            }
            g = Gt;
        }
#pragma omp for schedule(static)
        for (int64_t b = 0; b < (int64_t)nb; ++b) {
            const uint64_t k0 = (uint64_t)b * TF_GCP_BLOCK;
            const uint64_t k1 = k0 + TF_GCP_BLOCK < n ? k0 + TF_GCP_BLOCK : n;
            bsum[b] = block_of(in, k0, k1, g, pre, bind, bvals);
        }
        if (G && nt > 1) { /* the parts into G, every thread a range of entries, in thread order */
            uint64_t off = 0;
            for (uint32_t m = 0; m < N; ++m) {
                const uint64_t len = in->dims[m] * R;
                double *gm = G[m];
                const double *pm = parts + off;
#pragma omp for schedule(static)
                for (int64_t e = 0; e < (int64_t)len; ++e) {
                    double v = gm[e];
                    for (int p = 0; p < nt - 1; ++p) v += pm[(uint64_t)p * gsize + (uint64_t)e];
                    gm[e] = v;
                }
                off += len;
            }
        }
    }
    double sum = 0.0;
    for (uint64_t b = 0; b < nb; ++b) sum += bsum[b];
    *f = sum;
    tf_free(scratch);
    tf_free(parts);
    tf_free(bsum);
    return TF_OK;
}
