/* SPDX-License-Identifier: BSD-3-Clause */
/* GCP's fused pass (cpu/gcp_kernel.h): blocks of TF_GCP_BLOCK entries over
 * the threads (static, so every thread's share is the same for a thread
 * count). A mode's gradient rows take one of two routes, chosen from the
 * team, the mode's length and the sample size:
 * - private: thread 0 adds into G, the others into copies of their own,
 *   added into G in thread order after the pass (few rows next to the
 *   entries: uber-apr14's 24 hours);
 * - by entry: when the copies would outgrow the sample (T - 1 copies of a
 *   mode of millions of rows against a sample of thousands of entries:
 *   zeroing and adding gigabytes for a few thousand rows touched), each
 *   entry writes its row contribution at its own place, and after the pass
 *   the entries, stably sorted by row, are summed row by row in entry
 *   order (the same bits on any team). */
#include "cpu/gcp_kernel.h"

#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"
#include "core/radix.h"
#include "cpu/gcp_loss.h"
#include "cpu/rowops.h"

/* Entries ahead whose rows are prefetched. */
#define PREFETCH 6
/* Pieces of a by-entry mode's sorted entries summed in parallel (each
 * piece moved to whole rows: where it starts and ends depends on the
 * entries only). */
#define GCP_PIECES 256

static int by_sample_forced; /* tests: every mode by entry */
void tf_cpu_gcp_pass_force_by_sample(int on) { by_sample_forced = on; }

/* Where a block's gradient rows go: G[n] (a part's rows, or G itself), or
 * with C[n] the entry's own row C[n] + k R and its row index at at[n][k]. */
typedef struct gdest {
    double *G[TF_MAX_ORDER];
    double *C[TF_MAX_ORDER];
    uint32_t *at[TF_MAX_ORDER];
} gdest;

/* One block [k0, k1): its loss sum; gradient rows to D (NULL: none).
 * pre: (N + 1) x R doubles of scratch. R a constant in the specialisations
 * below (the rows' loops unrolled into whole vectors). */
TF_ALWAYS_INLINE double block(const tf_gcp_pass_in *in, uint64_t k0, uint64_t k1, const gdest *D, double *pre,
                              uint32_t *const *bind, double *bvals, const uint64_t R)
{
    const int want_f = in->want_f || !D;
    double *const *G = D ? D->G : NULL;
    const uint64_t k_end = k1; /* entries a draw leaves out: [k1, k_end) after it */
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
                    if (G && !D->C[n]) __builtin_prefetch(G[n] + i + r, 1);
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
            const double *pn = pre + (uint64_t)n * R;
            if (D->C[n]) { /* by sample: the entry's own row */
                double *c = D->C[n] + k * R;
                D->at[n][k] = (uint32_t)i;
                if (n == 0) {
                    TF_SIMD
                    for (uint64_t r = 0; r < R; ++r) c[r] = suf[r];
                } else {
                    TF_SIMD
                    for (uint64_t r = 0; r < R; ++r) c[r] = suf[r] * pn[r];
                }
            } else {
                double *g = G[n] + i * R;
                if (n == 0) {
                    TF_SIMD
                    for (uint64_t r = 0; r < R; ++r) g[r] += suf[r];
                } else {
                    TF_SIMD
                    for (uint64_t r = 0; r < R; ++r) g[r] += suf[r] * pn[r];
                }
            }
            if (n > 0) {
                const double *an = in->A[n] + i * R;
                TF_SIMD
                for (uint64_t r = 0; r < R; ++r) suf[r] *= an[r];
            }
        }
    }
    if (D) /* entries the draw left out (another rank's): no row */
        for (uint32_t n = 0; n < N; ++n)
            for (uint64_t k = k1; D->C[n] && k < k_end; ++k) D->at[n][k] = UINT32_MAX;
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
                                                                uint64_t k1, const gdest *D, double *pre,        \
                                                                uint32_t *const *bind, double *bvals)            \
    {                                                                                                           \
        return block(in, k0, k1, D, pre, bind, bvals, (RANK));                                                  \
    }
TF_GCP_BLOCK_FN(r8, 8)
TF_GCP_BLOCK_FN(r16, 16)
TF_GCP_BLOCK_FN(r32, 32)
TF_GCP_BLOCK_FN(any, in->rank)

static double block_of(const tf_gcp_pass_in *in, uint64_t k0, uint64_t k1, const gdest *D, double *pre,
                       uint32_t *const *bind, double *bvals)
{
    switch (in->rank) {
    case 8: return block_r8(in, k0, k1, D, pre, bind, bvals);
    case 16: return block_r16(in, k0, k1, D, pre, bind, bvals);
    case 32: return block_r32(in, k0, k1, D, pre, bind, bvals);
    default: return block_any(in, k0, k1, D, pre, bind, bvals);
    }
}

enum { WS_SCRATCH, WS_PARTS, WS_BSUM, WS_C, WS_AT, WS_KEY, WS_ENT, WS_KBUF, WS_EBUF };

void tf_cpu_gcp_pass_ws_free(tf_gcp_pass_ws *ws)
{
    if (!ws) return;
    for (int i = 0; i < 9; ++i) tf_free(ws->buf[i]);
    memset(ws, 0, sizeof *ws);
}

/* ws's buffer i with room for n elements of size bytes each. */
static tf_status ws_get(tf_gcp_pass_ws *ws, int i, uint64_t n, uint64_t size, const char *what, void **out)
{
    const uint64_t need = (n ? n : 1) * size;
    if (ws->bytes[i] < need) {
        tf_free(ws->buf[i]);
        ws->buf[i] = NULL;
        ws->bytes[i] = 0;
        TF_TRY(tf_alloc(&ws->buf[i], n ? n : 1, size, what));
        ws->bytes[i] = need;
    }
    *out = ws->buf[i];
    return TF_OK;
}

/* G = the sum of the by-sample rows C (n entries, R each; at: each entry's
 * row, UINT32_MAX: none) per row, in entry order: a stable sort of the
 * entries by row, then pieces of whole rows in parallel. Rows no entry has
 * keep what G held (zeros). */
static tf_status sum_by_row(tf_gcp_pass_ws *ws, const double *C, const uint32_t *at, uint64_t n, uint64_t I,
                            uint64_t R, int nt, double *G)
{
    uint64_t *key = NULL, *ent = NULL, *kbuf = NULL, *ebuf = NULL;
    tf_status s = ws_get(ws, WS_KEY, n, sizeof *key, "GCP gradient rows", (void **)&key);
    if (s == TF_OK) s = ws_get(ws, WS_ENT, n, sizeof *ent, "GCP gradient entries", (void **)&ent);
    if (s == TF_OK) s = ws_get(ws, WS_KBUF, n, sizeof *kbuf, "GCP gradient rows", (void **)&kbuf);
    if (s == TF_OK) s = ws_get(ws, WS_EBUF, n, sizeof *ebuf, "GCP gradient entries", (void **)&ebuf);
    if (s != TF_OK) return s;
    int bits = 1;
    while (bits < 33 && (I >> bits)) ++bits; /* rows 0..I-1 and I for none */
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (int64_t k = 0; k < (int64_t)n; ++k) {
        key[k] = at[k] == UINT32_MAX ? I : at[k];
        ent[k] = (uint64_t)k;
    }
    s = tf_radix_sort_pairs(&key, &ent, &kbuf, &ebuf, n, bits);
    /* the sort swaps its buffers: the workspace keeps all four, wherever they went */
    ws->buf[WS_KEY] = key;
    ws->buf[WS_KBUF] = kbuf;
    ws->buf[WS_ENT] = ent;
    ws->buf[WS_EBUF] = ebuf;
    if (s != TF_OK) return s;
    const uint64_t P = n < GCP_PIECES ? (n ? n : 1) : GCP_PIECES;
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if (nt > 1)
    for (int64_t p = 0; p < (int64_t)P; ++p) {
        uint64_t a = n * (uint64_t)p / P, b = n * (uint64_t)(p + 1) / P;
        while (a > 0 && a < n && key[a] == key[a - 1]) ++a; /* whole rows: a row is the piece's where it starts */
        while (b > 0 && b < n && key[b] == key[b - 1]) ++b;
        for (uint64_t j = a; j < b && key[j] < I;) {
            double *g = G + key[j] * R;
            const double *c = C + ent[j] * R;
            TF_SIMD
            for (uint64_t r = 0; r < R; ++r) g[r] = c[r];
            for (++j; j < b && key[j] == key[j - 1]; ++j) {
                c = C + ent[j] * R;
                TF_SIMD
                for (uint64_t r = 0; r < R; ++r) g[r] += c[r];
            }
        }
    }
    return TF_OK;
}

tf_status tf_cpu_gcp_pass(const tf_gcp_pass_in *in, double *const *G, double *f)
{
    const tf_gcp_samples *s = in->s;
    const uint32_t N = s->order;
    const uint64_t R = in->rank, n = s->n;
    const uint64_t nb = (n + TF_GCP_BLOCK - 1) / TF_GCP_BLOCK;
    int nt = tf_team_for_work(in->threads, nb, n * N * R * 3);
    if (nt < 1) nt = 1;
    /* per thread: the products, and with a draw the block's entries */
    const uint64_t bufd = in->draw ? TF_GCP_BLOCK + (N * TF_GCP_BLOCK + 1) / 2 : 0;
    const uint64_t scr = (((uint64_t)(N + 1) * R + 7) & ~(uint64_t)7) + bufd;
    /* the modes' routes: private copies while the team's nt - 1 of them hold
     * no more rows than the sample has entries, else by entry */
    int by_sample[TF_MAX_ORDER];
    uint64_t psize = 0, csize = 0; /* a copy's entries; by-entry modes */
    for (uint32_t m = 0; m < N; ++m) {
        by_sample[m] = G && (by_sample_forced || (uint64_t)(nt - 1) * in->dims[m] > n);
        if (G && !by_sample[m]) psize += in->dims[m] * R;
        csize += by_sample[m];
    }
    double *scratch = NULL, *parts = NULL, *bsum = NULL, *C = NULL;
    uint32_t *at = NULL;
    tf_gcp_pass_ws own, *ws = in->ws;
    memset(&own, 0, sizeof own);
    if (!ws) ws = &own;
    tf_status st = ws_get(ws, WS_SCRATCH, (uint64_t)nt * scr, sizeof *scratch, "GCP pass scratch", (void **)&scratch);
    if (st == TF_OK) st = ws_get(ws, WS_BSUM, nb, sizeof *bsum, "GCP pass block sums", (void **)&bsum);
    if (st == TF_OK && psize && nt > 1)
        st = ws_get(ws, WS_PARTS, (uint64_t)(nt - 1) * psize, sizeof *parts, "GCP gradient parts", (void **)&parts);
    if (st == TF_OK && csize) st = ws_get(ws, WS_C, csize * n * R, sizeof *C, "GCP gradient rows by entry", (void **)&C);
    if (st == TF_OK && csize) st = ws_get(ws, WS_AT, csize * n, sizeof *at, "GCP gradient rows of the entries", (void **)&at);
    if (st != TF_OK) goto done;
    if (G)
        for (uint32_t m = 0; m < N; ++m) memset(G[m], 0, in->dims[m] * R * sizeof(double));
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        const int t = tf_thread_id();
        double *pre = scratch + (uint64_t)t * scr;
        double *bvals = pre + (scr - bufd);
        uint32_t *bind[TF_MAX_ORDER];
        for (uint32_t m = 0; m < N && bufd; ++m) bind[m] = (uint32_t *)(bvals + TF_GCP_BLOCK) + (uint64_t)m * TF_GCP_BLOCK;
        gdest D;
        double *base = G && t > 0 ? parts + (uint64_t)(t - 1) * psize : NULL;
        for (uint32_t m = 0, c = 0; G && m < N; ++m) {
            D.C[m] = NULL;
            D.at[m] = NULL;
            if (by_sample[m]) {
                D.C[m] = C + (uint64_t)c * n * R;
                D.at[m] = at + (uint64_t)c * n;
                D.G[m] = NULL;
                ++c;
            } else if (base) {
                D.G[m] = base;
                memset(base, 0, in->dims[m] * R * sizeof(double));
                base += in->dims[m] * R;
            } else {
                D.G[m] = G[m];
            }
        }
#pragma omp for schedule(static)
        for (int64_t b = 0; b < (int64_t)nb; ++b) {
            const uint64_t k0 = (uint64_t)b * TF_GCP_BLOCK;
            const uint64_t k1 = k0 + TF_GCP_BLOCK < n ? k0 + TF_GCP_BLOCK : n;
            bsum[b] = block_of(in, k0, k1, G ? &D : NULL, pre, bind, bvals);
        }
        if (G && psize && nt > 1) { /* the copies into G, every thread a range of entries, in thread order */
            uint64_t off = 0;
            for (uint32_t m = 0; m < N; ++m) {
                if (by_sample[m]) continue;
                const uint64_t len = in->dims[m] * R;
                double *gm = G[m];
                const double *pm = parts + off;
#pragma omp for schedule(static)
                for (int64_t e = 0; e < (int64_t)len; ++e) {
                    double v = gm[e];
                    for (int q = 0; q < nt - 1; ++q) v += pm[(uint64_t)q * psize + (uint64_t)e];
                    gm[e] = v;
                }
                off += len;
            }
        }
    }
    for (uint32_t m = 0, c = 0; st == TF_OK && m < N; ++m)
        if (by_sample[m]) {
            st = sum_by_row(ws, C + (uint64_t)c * n * R, at + (uint64_t)c * n, n, in->dims[m], R, nt, G[m]);
            ++c;
        }
    double sum = 0.0;
    for (uint64_t b = 0; b < nb; ++b) sum += bsum[b];
    *f = sum;
done:
    tf_cpu_gcp_pass_ws_free(&own);
    return st;
}
