/* SPDX-License-Identifier: BSD-3-Clause */
/* CP-APR's Phi kernel (cpu/apr_phi.h): one pass over the non-zeros of a
 * mode, in blocks; the KKT violation of each row as it is finished. */
#include "cpu/apr_phi.h"

#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"
#include "cpu/rowops.h"

/* How far ahead (in non-zeros) the last level's rows are prefetched: they
 * change with almost every non-zero, and their order is unpredictable. */
#define PREFETCH_AHEAD 16

#if defined(_OPENMP)
#define TF_PRAGMA_(x) _Pragma(#x)
#define TF_SIMD_SUM(x) TF_PRAGMA_(omp simd reduction(+ : x))
#else
#define TF_SIMD_SUM(x)
#endif

TF_ALWAYS_INLINE void prefetch_row(const double *row, uint64_t R)
{
#if defined(__GNUC__)
    for (uint64_t b = 0; b < R && b < 64; b += 8) __builtin_prefetch(row + b);
#else
    (void)row;
    (void)R;
#endif
}

/* NaN-sticky maximum (a NaN in Phi or B must not pass for converged). */
static inline double max_nan(double m, double x)
{
    return (x > m || x != x) && m == m ? x : m;
}

/* max_r |min(b_r, 1 - phi_r)| of one row (phi NULL: a row of zeros). */
static inline double row_kkt(const double *b, const double *phi, uint64_t R)
{
    double v = 0.0;
    for (uint64_t r = 0; r < R; ++r) {
        const double c = 1.0 - (phi ? phi[r] : 0.0);
        const double t = b[r] != b[r] ? b[r] : b[r] < c ? b[r] : c; /* numpy's minimum: NaN wins */
        v = max_nan(v, fabs(t));
    }
    return v;
}

/* Rows [lo, hi) of Phi get zeros (no non-zeros there); returns the kkt so
 * far with theirs. */
static double zero_rows(const tf_apr_phi_in *in, double *Phi, uint64_t lo, uint64_t hi, double kkt)
{
    const uint64_t R = in->R;
    for (uint64_t i = lo; i < hi; ++i) {
        memset(Phi + i * R, 0, R * sizeof *Phi);
        kkt = max_nan(kkt, row_kkt(in->A[in->mode] + i * R, NULL, R));
    }
    return kkt;
}

/* The rows of block b: [k0, k1) of the non-zeros, its first and last row,
 * and whether they continue from the block before / into the next. */
typedef struct block_rows {
    uint64_t k0, k1;
    uint32_t first, last;
    int from_prev, into_next;
} block_rows;

/* Non-zeros per block of the Phi pass at rank R: TF_APR_BLOCK, or 16 R for
 * R > 128, so the blocks' edge rows (2 R doubles a block) stay within a
 * byte per non-zero. A function of R alone: the cut never depends on the
 * threads. */
static uint64_t block_len(uint64_t R)
{
    return 16 * R > TF_APR_BLOCK ? 16 * R : TF_APR_BLOCK;
}

static block_rows block_of(const tf_apr_phi_in *in, uint64_t b)
{
    const tf_tensor *S = in->S;
    const uint32_t *row = S->ind[in->mode];
    const uint64_t len = block_len(in->R);
    block_rows br;
    br.k0 = b * len;
    br.k1 = br.k0 + len < S->nnz ? br.k0 + len : S->nnz;
    br.first = row[br.k0];
    br.last = row[br.k1 - 1];
    br.from_prev = br.k0 > 0 && row[br.k0 - 1] == br.first;
    br.into_next = br.k1 < S->nnz && row[br.k1] == br.last;
    return br;
}

/* Where a row summed in block `br` goes: a row crossing the block's start
 * into `head`, one crossing its end into `tail` (the partials added after
 * the pass), any other into Phi, then its kkt. */
static double finish_row(const tf_apr_phi_in *in, const block_rows *br, uint32_t i, const double *acc,
                         double *Phi, double *head, double *tail, double kkt)
{
    const uint64_t R = in->R;
    double *dst = i == br->first && br->from_prev ? head : i == br->last && br->into_next ? tail : NULL;
    if (dst) {
        memcpy(dst, acc, R * sizeof *acc);
        return kkt;
    }
    memcpy(Phi + (uint64_t)i * R, acc, R * sizeof *acc);
    return max_nan(kkt, row_kkt(in->A[in->mode] + (uint64_t)i * R, Phi + (uint64_t)i * R, R));
}

/* The Khatri-Rao rows of a pass, built level by level in the order of
 * in->levels (the modes other than `mode`, as S is sorted): part[l] = the
 * product of the rows of levels 0..l, and for each non-zero only the levels
 * from the first whose index changed since the previous one are multiplied
 * again (CSF's sharing of a fibre's upper rows, without the tree). */
typedef struct kr_levels {
    uint32_t L;                   /* levels: order - 1           */
    const uint32_t *id[TF_MAX_ORDER];
    const double *F[TF_MAX_ORDER];
} kr_levels;

static void levels_of(const tf_apr_phi_in *in, kr_levels *lv)
{
    uint32_t lev[TF_MAX_ORDER], L = 0;
    for (uint32_t k = 0; k < in->S->order; ++k)
        if (k != in->mode) lev[L++] = k;
    if (in->levels) memcpy(lev, in->levels, L * sizeof *lev);
    lv->L = L;
    for (uint32_t l = 0; l < L; ++l) {
        lv->id[l] = in->S->ind[lev[l]];
        lv->F[l] = in->A[lev[l]];
    }
}

/* Non-zero j's Khatri-Rao row, given kr, the previous one's (NULL at a
 * block's start k0, where every level is built); part holds levels 1..L-1
 * (R each, at part + l R). */
TF_ALWAYS_INLINE const double *kr_row(const kr_levels *lv, uint64_t j, uint64_t k0, const double *kr,
                                      double *part, const uint64_t R)
{
    const uint32_t L = lv->L;
    uint32_t l = 0; /* the first level to build again */
    if (kr && j > k0)
        while (l < L && lv->id[l][j] == lv->id[l][j - 1]) ++l;
    if (l == L) return kr; /* the same Khatri-Rao row as the non-zero before */
    if (L == 1) return lv->F[0] + (uint64_t)lv->id[0][j] * R;
    for (l = l > 0 ? l : 1; l < L; ++l) {
        double *restrict p = part + (uint64_t)l * R;
        const double *up = l == 1 ? lv->F[0] + (uint64_t)lv->id[0][j] * R : part + (uint64_t)(l - 1) * R;
        const double *a = lv->F[l] + (uint64_t)lv->id[l][j] * R;
        TF_SIMD
        for (uint64_t r = 0; r < R; ++r) p[r] = up[r] * a[r];
    }
    return part + (uint64_t)(L - 1) * R;
}

/* The levels' rows change with almost every non-zero (the last always, the
 * others on scattered tensors), in no order the CPU predicts: each is
 * fetched PREFETCH_AHEAD non-zeros early where its index changes there. */
TF_ALWAYS_INLINE void prefetch_ahead(const kr_levels *lv, uint64_t j, uint64_t end, const uint64_t R)
{
    const uint64_t a = j + PREFETCH_AHEAD;
    if (a >= end) return;
    for (uint32_t l = 0; l + 1 < lv->L; ++l)
        if (lv->id[l][a] != lv->id[l][a - 1]) prefetch_row(lv->F[l] + (uint64_t)lv->id[l][a] * R, R);
    prefetch_row(lv->F[lv->L - 1] + (uint64_t)lv->id[lv->L - 1][a] * R, R);
}

/* One block: its rows' sums, the empty rows before its first one (and,
 * for the last block, after its last one); returns their kkt. w holds acc
 * (R) and the levels' products (part, R each from w + R). */
TF_ALWAYS_INLINE double phi_block(const tf_apr_phi_in *in, const kr_levels *lv, uint64_t b, uint64_t nb,
                                  double *Phi, double *edges, double *w, const uint64_t R)
{
    const tf_tensor *S = in->S;
    const uint32_t *row = S->ind[in->mode];
    const double *B = in->A[in->mode];
    const block_rows br = block_of(in, b);
    double *head = edges + 2 * b * R, *tail = head + R;
    double *restrict acc = w, *part = w + R;
    const double *kr = NULL;
    double kkt = zero_rows(in, Phi, b == 0 ? in->row_lo : (uint64_t)row[br.k0 - 1] + 1, br.first, 0.0);
    uint32_t cur = br.first;
    tf_row_zero(acc, R);
    for (uint64_t j = br.k0; j < br.k1; ++j) {
        if (!in->pi) prefetch_ahead(lv, j, br.k1, R);
        const uint32_t i = row[j];
        if (i != cur) {
            kkt = finish_row(in, &br, cur, acc, Phi, head, tail, kkt);
            kkt = zero_rows(in, Phi, (uint64_t)cur + 1, i, kkt);
            tf_row_zero(acc, R);
            cur = i;
        }
        if (in->pi) {
            kr = in->pi + j * R; /* the rows a pass with pi_store kept: the same bits */
        } else {
            kr = kr_row(lv, j, br.k0, kr, part, R);
            if (in->pi_store) tf_row_stream(in->pi_store + j * R, kr, R);
        }
        const double *brow = B + (uint64_t)i * R;
        double m = 0.0;
        TF_SIMD_SUM(m)
        for (uint64_t r = 0; r < R; ++r) m += brow[r] * kr[r];
        tf_row_axpy(acc, S->vals[j] / (m > in->eps ? m : in->eps), kr, R);
    }
    kkt = finish_row(in, &br, cur, acc, Phi, head, tail, kkt);
    if (b == nb - 1) kkt = zero_rows(in, Phi, (uint64_t)br.last + 1, in->row_hi, kkt);
    if (in->pi_store) tf_stream_fence();
    return kkt;
}

/* One block of the log-likelihood's sum: x log m over its non-zeros with
 * x != 0, m = sum_r B(i,r) wt_r kr_r. */
TF_ALWAYS_INLINE double logdot_block(const tf_apr_phi_in *in, const kr_levels *lv, const double *wt, uint64_t b,
                                     double *w, const uint64_t R)
{
    const tf_tensor *S = in->S;
    const uint32_t *row = S->ind[in->mode];
    const double *B = in->A[in->mode];
    const uint64_t k0 = b * TF_APR_BLOCK, k1 = k0 + TF_APR_BLOCK < S->nnz ? k0 + TF_APR_BLOCK : S->nnz;
    const double *kr = NULL;
    double sum = 0.0;
    for (uint64_t j = k0; j < k1; ++j) {
        prefetch_ahead(lv, j, k1, R);
        kr = kr_row(lv, j, k0, kr, w, R);
        const double *brow = B + (uint64_t)row[j] * R;
        double m = 0.0;
        TF_SIMD_SUM(m)
        for (uint64_t r = 0; r < R; ++r) m += brow[r] * wt[r] * kr[r];
        if (S->vals[j] != 0.0) sum += S->vals[j] * log(m);
    }
    return sum;
}

/* One instance of each per rank the compiler unrolls fully, one generic,
 * each built for the x86-64 levels (rowops.h). A block's sums do not
 * depend on which runs (the same order of operations), only on the vector
 * width. */
typedef double (*phi_block_fn)(const tf_apr_phi_in *, const kr_levels *, uint64_t, uint64_t, double *, double *,
                               double *);
typedef double (*logdot_block_fn)(const tf_apr_phi_in *, const kr_levels *, const double *, uint64_t, double *);
#define APR_INSTANCES(suffix, rank)                                                                         \
    TF_KERNEL_CLONES static double phi_block_##suffix(const tf_apr_phi_in *in, const kr_levels *lv,         \
                                                      uint64_t b, uint64_t nb, double *Phi, double *edges,  \
                                                      double *w)                                            \
    {                                                                                                       \
        return phi_block(in, lv, b, nb, Phi, edges, w, rank);                                               \
    }                                                                                                       \
    TF_KERNEL_CLONES static double logdot_block_##suffix(const tf_apr_phi_in *in, const kr_levels *lv,      \
                                                         const double *wt, uint64_t b, double *w)           \
    {                                                                                                       \
        return logdot_block(in, lv, wt, b, w, rank);                                                        \
    }
APR_INSTANCES(r8, 8)
APR_INSTANCES(r16, 16)
APR_INSTANCES(r32, 32)
APR_INSTANCES(r64, 64)
APR_INSTANCES(any, in->R)

#define APR_PICK(kind, R)                                                                                 \
    ((R) == 8 ? kind##_block_r8 : (R) == 16 ? kind##_block_r16 : (R) == 32 ? kind##_block_r32          \
     : (R) == 64 ? kind##_block_r64 : kind##_block_any)

/* After the pass: the rows that cross block edges, their partials added in
 * block order (a row starts in the block whose tail it is without being its
 * head too), then their kkt. */
static double merge_edges(const tf_apr_phi_in *in, uint64_t nb, double *Phi, const double *edges, double kkt)
{
    const uint64_t R = in->R;
    for (uint64_t b = 0; b < nb; ++b) {
        const block_rows br = block_of(in, b);
        const double *head = edges + 2 * b * R, *tail = head + R;
        if (br.from_prev) {
            double *dst = Phi + (uint64_t)br.first * R;
            for (uint64_t r = 0; r < R; ++r) dst[r] += head[r];
        }
        if (br.into_next && !(br.from_prev && br.first == br.last))
            memcpy(Phi + (uint64_t)br.last * R, tail, R * sizeof *tail);
    }
    for (uint64_t b = 0; b < nb; ++b) { /* each crossing row once: where it starts */
        const block_rows br = block_of(in, b);
        if (br.into_next && !(br.from_prev && br.first == br.last))
            kkt = max_nan(kkt, row_kkt(in->A[in->mode] + (uint64_t)br.last * R, Phi + (uint64_t)br.last * R, R));
    }
    return kkt;
}

tf_status tf_cpu_apr_phi(const tf_apr_phi_in *in, double *Phi, double *kkt)
{
    const tf_tensor *S = in->S;
    const uint64_t R = in->R, nnz = S->nnz;
    if (nnz == 0) {
        *kkt = zero_rows(in, Phi, in->row_lo, in->row_hi, 0.0);
        return TF_OK;
    }
    const uint64_t nb = (nnz + block_len(R) - 1) / block_len(R);
    /* a non-zero costs its N - 1 row loads and products, the dot and the add */
    const int nt = tf_mttkrp_team(in->threads, nnz, R, S->order + 1);
    tf_team_note(nt); /* the row steps after it keep this team */
    /* a thread's vectors (acc, the levels' products) on cache lines of their own */
    const uint64_t per = (S->order * R + 7) & ~(uint64_t)7;
    kr_levels lv;
    levels_of(in, &lv);
    const phi_block_fn fn = APR_PICK(phi, R);
    double *edges = NULL, *scratch = NULL;
    TF_TRY(TF_ALLOC(edges, 2 * nb * R, "CP-APR block edge rows"));
    tf_status s = TF_ALLOC(scratch, (uint64_t)nt * per, "CP-APR row sums");
    if (s != TF_OK) {
        tf_free(edges);
        return s;
    }
    double worst = 0.0;
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        double *w = scratch + (uint64_t)tf_thread_id() * per, mine = 0.0;
#pragma omp for schedule(dynamic, 1)
        for (int64_t b = 0; b < (int64_t)nb; ++b) mine = max_nan(mine, fn(in, &lv, (uint64_t)b, nb, Phi, edges, w));
#pragma omp critical(tf_apr_phi_kkt)
        worst = max_nan(worst, mine);
    }
    *kkt = merge_edges(in, nb, Phi, edges, worst);
    tf_free(edges);
    tf_free(scratch);
    return TF_OK;
}

tf_status tf_cpu_apr_logdot(const tf_apr_phi_in *in, const double *w, double *sum)
{
    const tf_tensor *S = in->S;
    const uint64_t R = in->R, nnz = S->nnz, nb = (nnz + TF_APR_BLOCK - 1) / TF_APR_BLOCK;
    *sum = 0.0;
    if (nnz == 0) return TF_OK;
    const int nt = tf_mttkrp_team(in->threads, nnz, R, S->order + 1);
    const uint64_t per = (S->order * R + 7) & ~(uint64_t)7;
    kr_levels lv;
    levels_of(in, &lv);
    const logdot_block_fn fn = APR_PICK(logdot, R);
    double *part = NULL, *scratch = NULL, *ones = NULL;
    tf_status s = TF_ALLOC(part, nb, "log-likelihood block sums");
    if (s == TF_OK) s = TF_ALLOC(scratch, (uint64_t)nt * per, "log-likelihood rows");
    if (s == TF_OK && !w) s = TF_ALLOC(ones, R, "log-likelihood weights");
    if (s == TF_OK) {
        for (uint64_t r = 0; ones && r < R; ++r) ones[r] = 1.0;
        const double *wt = w ? w : ones;
#pragma omp parallel num_threads(nt) if (nt > 1)
        {
            double *wk = scratch + (uint64_t)tf_thread_id() * per;
#pragma omp for schedule(dynamic, 1)
            for (int64_t b = 0; b < (int64_t)nb; ++b) part[b] = fn(in, &lv, wt, (uint64_t)b, wk);
        }
        double total = 0.0;
        for (uint64_t b = 0; b < nb; ++b) total += part[b]; /* in block order: any team, the same bits */
        *sum = total;
    }
    tf_free(part);
    tf_free(scratch);
    tf_free(ones);
    return s;
}

int tf_cpu_apr_grouped(const tf_tensor *S, uint32_t mode, int threads)
{
    const uint32_t *row = S->ind[mode];
    int ok = 1;
    const int nt = tf_team_for_work(threads, S->nnz / 65536 + 1, S->nnz);
#pragma omp parallel for num_threads(nt) reduction(&& : ok) schedule(static) if (nt > 1)
    for (int64_t j = 1; j < (int64_t)S->nnz; ++j) ok = ok && row[j - 1] <= row[j];
    return ok;
}
