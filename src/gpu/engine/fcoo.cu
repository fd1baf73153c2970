/* SPDX-License-Identifier: BSD-3-Clause */
/* F-COO MTTKRP engine (Liu et al., Cluster'17, section IV): one copy per
 * mode, sorted by the output index, resident on the device; the kernels
 * are in fcoo_kernels.cuh.
 *
 * Selection (per mode, at engine creation): tuning.fcoo_kernel forces
 * one; otherwise seg (measured faster everywhere, see choose_seg).
 * Partitions are sized per mode: the copy of a seg mode is cut into
 * partitions of FCOO_CUTS sizes around seg_partition_size (start flags,
 * partition segments and rows to clear per size; the rest is shared) and
 * the fastest for the rank in use is timed on first use, together with
 * the kernel's occupancy variant (seg_partitions, SEG_*,
 * fcoo_engine::tune_mode; the tuning policy's fcoo_seg_part: one size,
 * fcoo_variant: one variant, fcoo_tune = 0: the defaults). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <new>

#include "gpu/engine/fcoo_build.cuh"
#include "gpu/engine/fcoo_kernels.cuh"
#include "gpu/engine/fcoo_stream.cuh"
#include "gpu/runtime/timing.cuh"
extern "C" {
#include "core/alloc.h"
#include "fmt/auto_format.h"
#include "fmt/fcoo.h"
}

namespace {

/* One partitioning of a mode's copy (start flags, partition segments and
 * the rows to clear depend on the partition size; the rest does not). */
struct fcoo_cut {
    uint32_t part_nnz = 32; /* non-zeros per partition (one warp) */
    uint64_t nparts = 0;
    uint32_t *start = nullptr, *part_seg = nullptr;
    /* Rows to clear before the kernel (empty rows and rows with boundary
     * atomics), when they are at most a quarter of the mode; else the
     * whole output is cleared (clear_all). On wordnet30 (3 non-zeros per
     * row) this writes ~6 % of the 30 MB fp64 output instead of all of it. */
    uint32_t *zrows = nullptr;
    uint64_t nzero = 0;
    bool clear_all = true;
    uint64_t bytes = 0; /* of the arrays above, read by one MTTKRP */

    void release()
    {
        tf_gpu_free(start);
        tf_gpu_free(part_seg);
        tf_gpu_free(zrows);
        start = part_seg = zrows = nullptr;
    }
    /* f's current partitioning */
    tf_status upload(const tf_fcoo *f)
    {
        part_nnz = f->part_nnz;
        nparts = f->nparts;
        TF_TRY(tf_gpu_upload_new(&start, f->start, (f->nparts + 31) / 32, "F-COO start flags"));
        TF_TRY(tf_gpu_upload_new(&part_seg, f->part_seg, f->nparts, "F-COO partition segments"));
        uint32_t *rows = nullptr;
        TF_TRY(tf_fcoo_zero_rows(f, f->dims[f->mode] / 4, &rows, &nzero));
        clear_all = nzero > f->dims[f->mode] / 4;
        tf_status s = TF_OK;
        if (!clear_all && nzero) s = tf_gpu_upload_new(&zrows, rows, nzero, "F-COO rows to clear");
        tf_free(rows);
        bytes = ((nparts + 31) / 32 + nparts + (zrows ? nzero : 0)) * sizeof(uint32_t);
        return s;
    }
    /* a partitioning made on the device (fcoo_build.cu) */
    void adopt(const tf_fcoo_dcut_out &o, uint32_t part)
    {
        part_nnz = part;
        nparts = o.nparts;
        start = o.start;
        part_seg = o.part_seg;
        zrows = o.zrows;
        nzero = o.nzero;
        clear_all = o.clear_all;
        bytes = ((nparts + 31) / 32 + nparts + (zrows ? nzero : 0)) * sizeof(uint32_t);
    }
};

/* Non-zeros a long seg mode is tuned on (fcoo_engine::tune_mode): 2^18 per
 * SM, 34.6 M on an H200 / H100, i.e. a few ms per timed launch; longer
 * modes are timed on a prefix of that many. Not less: on an H200 a 17.3 M
 * prefix of the 20M-non-zero skewed tensor picked a 3 % slower pair for its
 * 200k-row mode in fp32 (1.132 vs 1.102 ms). tuning.fcoo_tune_nnz = N
 * (N >= 1) sets it, for tests of the prefix path. */
uint64_t tune_nnz(const tf_tuning &t, int sm_count)
{
    return t.fcoo_tune_nnz >= 1 ? t.fcoo_tune_nnz : (uint64_t)std::max(sm_count, 1) << 18;
}

/* Partition sizes a seg mode is timed with on first use (fcoo_engine::
 * tune): d / 2, d, 3 d / 2, 2 d and 3 d for the default d (multiples of 32).
 * Measured on an H200 (R = 32, ms per mode): the best size depends on the
 * mode and the other modes' lengths, not on one rule: uber-apr14's 30- and
 * 24-row modes 0.0255 / 0.0253 at 192 vs 0.0309 / 0.0331 at the rule's 128
 * (fp32), wordnet30's 26-row mode best at 128 (0.0493 vs 0.0546 at 192,
 * fp64), long modes of both at 64 or 96. */
#define FCOO_CUTS 5

/* One mode's F-COO copy on the device. */
template <typename T>
struct fcoo_dev {
    uint32_t *pind[MAX_PMODES] = {nullptr};
    T *vals = nullptr;
    uint32_t *head = nullptr, *seg_row = nullptr;
    fcoo_cut cut[FCOO_CUTS];
    int ncut = 0, chosen = 0; /* cut[chosen] runs; cut[0] is the default */
    int variant = SEG_WIDE;    /* the seg kernel's variant (SEG_*) */
    int slice = 32;            /* rank pieces per grid row: 32, or 16 (half slices, seg only) */
    bool tune_variant = false; /* time every variant (else variant as set) */
    uint32_t tuned_R = 0;      /* rank the choice was timed at (0: not yet) */
    uint32_t pmodes[MAX_PMODES] = {0};
    bool seg = false; /* the "seg" kernel, else "scan" */
    uint64_t nseg = 0;
    uint64_t shared_bytes = 0; /* read by every MTTKRP whatever the cut */

    /* more than one (cut, variant) to time, not yet at rank R (only seg
     * modes get several cuts or tune_variant) */
    bool needs_tune(uint32_t R) const { return (ncut > 1 || tune_variant) && tuned_R != R; }

    /* device memory held (every cut) */
    uint64_t held() const
    {
        uint64_t b = shared_bytes;
        for (int k = 0; k < ncut; ++k) b += cut[k].bytes;
        return b;
    }

    void release()
    {
        for (int q = 0; q < MAX_PMODES; ++q) tf_gpu_free(pind[q]);
        tf_gpu_free(vals);
        tf_gpu_free(head);
        tf_gpu_free(seg_row);
        for (int k = 0; k < FCOO_CUTS; ++k) cut[k].release();
    }

    /* The copy, cut into partitions of each of parts[0..nparts) non-zeros
     * (f is re-cut in turn). */
    tf_status upload(tf_gpu_dev *ctx, tf_fcoo *f, const uint32_t *parts, int np)
    {
        const uint64_t n = f->nnz;
        for (uint32_t q = 0; q + 1 < f->order; ++q) {
            pmodes[q] = f->pmodes[q];
            TF_TRY(tf_gpu_upload_staged(ctx, &pind[q], f->pind[q], n, "F-COO indices", ctx->stream));
        }
        TF_TRY(tf_gpu_alloc(&vals, n, "F-COO values"));
        TF_TRY(tf_gpu_h2d_values(ctx, vals, f->vals, n, ctx->stream));
        TF_TRY(tf_gpu_upload_staged(ctx, &head, f->head, (n + 31) / 32, "F-COO head bits", ctx->stream));
        TF_TRY(tf_gpu_upload_new(&seg_row, f->seg_row, f->nseg, "F-COO segment rows"));
        nseg = f->nseg;
        shared_bytes = tf_fcoo_bytes(f, sizeof(T)) - ((f->nparts + 31) / 32 + f->nparts) * sizeof(uint32_t);
        for (int k = 0; k < np && k < FCOO_CUTS; ++k) {
            if (parts[k] != f->part_nnz) TF_TRY(tf_fcoo_repartition(f, parts[k]));
            TF_TRY(cut[k].upload(f));
            ncut = k + 1;
        }
        return TF_OK;
    }

    /* The same, sorted on the device from the COO in s (fcoo_build.cu). */
    tf_status build(tf_gpu_dev *ctx, tf_fcoo_dsrc *s, uint32_t mode, tf_phase_clock *clock)
    {
        return tf_fcoo_dbuild_mode<T>(ctx, s, mode, pmodes, pind, &vals, &head, &seg_row, &nseg, clock);
    }
    tf_status cut_on_device(tf_gpu_dev *ctx, tf_fcoo_dsrc *s, uint32_t mode, const uint32_t *parts, int np)
    {
        const uint64_t n = s->nnz;
        shared_bytes = n * ((uint64_t)(s->order - 1) * sizeof(uint32_t) + sizeof(T)) + (n + 31) / 32 * 4 + nseg * 4;
        for (int k = 0; k < np && k < FCOO_CUTS; ++k) {
            tf_fcoo_dcut_out o;
            TF_TRY(tf_fcoo_dcut(ctx, s, mode, head, seg_row, nseg, parts[k], &o));
            cut[k].adopt(o, parts[k]);
            ncut = k + 1;
        }
        return TF_OK;
    }
};

template <typename T>
struct fcoo_engine : tf_gpu_engine {
    uint32_t order = 0;
    uint32_t modes = ~0u; /* the modes whose copies were built */
    bool no_vec = false; /* tuning.fcoo_vec = 0: one column per lane (for measurements) */
    int slice_env = 0;    /* tuning.fcoo_slice = 16|32: every seg mode's slice (tests, measurements) */
    uint64_t tune_prefix = 0; /* non-zeros a mode is tuned on (tune_nnz) */
    uint64_t nnz = 0;
    uint64_t dims[TF_MAX_ORDER] = {0};
    fcoo_dev<T> copy[TF_GPU_MAX_ORDER];
    bool built_on_device = false; /* the copies were sorted on the GPU */

    ~fcoo_engine() override
    {
        for (int m = 0; m < TF_GPU_MAX_ORDER; ++m) copy[m].release();
    }

    tf_status mttkrp(uint32_t mode, const void *const *fac, void *out, uint32_t R) override
    {
        if (!tf_mode_in(modes, mode))
            return tf_fail(TF_ERR_ARG, "F-COO engine: mode %u was not built", mode + 1);
        fcoo_dev<T> &c = copy[mode];
        if (c.needs_tune(R)) {
            cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
            TF_CU(cudaStreamIsCapturing(ctx->stream, &cs));
            if (cs == cudaStreamCaptureStatusNone) TF_TRY(tune_mode(mode, fac, out, R));
        }
        return launch(mode, c.cut[c.chosen], c.variant, c.slice, fac, out, R);
    }

    tf_status tune(const void *const *fac, void *out, uint32_t R) override
    {
        for (uint32_t m = 0; m < order; ++m)
            if (copy[m].needs_tune(R)) TF_TRY(tune_mode(m, fac, out, R));
        return TF_OK;
    }

    /* Half slices are worth timing for mode: a seg mode with 16-byte
     * pieces, rows longer than 256 bytes, and product factors the L2 does
     * not hold (where it does, slices only add passes over the copy). */
    bool slices_apply(uint32_t mode, uint32_t R) const
    {
        constexpr uint32_t VEC = 16 / sizeof(T);
        const fcoo_dev<T> &c = copy[mode];
        if (!c.seg || no_vec || R % VEC != 0 || R / VEC <= 16) return false;
        uint64_t gathered = 0;
        for (uint32_t q = 0; q + 1 < order; ++q) gathered += dims[c.pmodes[q]] * R * sizeof(T);
        return gathered > ctx->l2_bytes;
    }

    /* Times the cuts of `mode` and the occupancy variants (one warm-up and
     * the best of three runs each, CUDA events; out is scratch: every cut
     * with the default variant, then the others at the best cut, or every
     * pair with tuning.fcoo_tune = 2) and keeps the fastest pair, the
     * default variant unless another is clearly faster; then, where slices_apply, the pair with half slices
     * (kept if clearly faster). Waits for the stream: first use only. A
     * mode of more than tune_prefix non-zeros is timed on the partitions
     * that cover its first tune_prefix (with the whole output clear, as in
     * use): 60 launches of the whole mode would cost ~17 s at a billion
     * non-zeros. */
    tf_status tune_mode(uint32_t mode, const void *const *fac, void *out, uint32_t R)
    {
        fcoo_dev<T> &c = copy[mode];
        const int base = slice_env ? slice_env : 32;
        auto time_of = [&](int k, int variant, int slice, float *t) -> tf_status {
            fcoo_cut part = c.cut[k]; /* shallow: the same device arrays */
            part.nparts = std::min<uint64_t>(part.nparts, (tune_prefix + part.part_nnz - 1) / part.part_nnz);
            double ms[3];
            TF_TRY(tf_gpu_time_runs(ctx->stream, 1, 3, ms,
                                     [&]() { return launch(mode, part, variant, slice, fac, out, R); }));
            *t = (float)std::min({ms[0], ms[1], ms[2]});
            return TF_OK;
        };
        /* the fastest cut of each variant; c.variant (the default) first.
         * Every cut with every variant where that is cheap (the default
         * pair's time x the pairs x 4 launches within 60 ms) or with
         * tuning.fcoo_tune = 2; else the cuts with the default variant,
         * then the other variants at its best cut only: 5 + 3 pairs
         * instead of 20 (on an H200 the 20M tensor's first MTTKRPs took
         * 0.62 s instead of 0.91 s, 0.6 % off the exhaustive pick; on
         * wordnet30 the short search picked a pair 9 % slower, so small
         * modes keep the full one) */
        int variants[SEG_VARIANTS] = {c.variant};
        int nv = 1;
        for (int va = 0; va < SEG_VARIANTS; ++va)
            if (c.tune_variant && va != c.variant && (va != SEG_PIPE || has_pipe(order))) variants[nv++] = va;
        bool exhaustive = ctx->tune.fcoo_tune == 2;
        float best[SEG_VARIANTS] = {0.f};
        int cut_of[SEG_VARIANTS] = {0};
        for (int v = 0; v < nv; ++v)
            for (int k = 0; k < c.ncut; ++k) {
                if (v > 0 && !exhaustive && k != cut_of[0]) continue;
                float t;
                TF_TRY(time_of(k, variants[v], base, &t));
                if (v == 0 && k == 0 && t * (float)(c.ncut * nv * 4) <= 60.f) exhaustive = true;
                if (v > 0 && !exhaustive) {
                    best[v] = t;
                    cut_of[v] = k;
                } else if (k == 0 || t < best[v]) {
                    best[v] = t;
                    cut_of[v] = k;
                }
            }
        /* another variant must beat the default by 3 %: on uber-apr14 the
         * 4-block one won the tuning runs by less and then ran 3-5 % slower */
        int v = 0;
        for (int w = 1; w < nv; ++w)
            if (best[w] < 0.97f * best[0] && best[w] < best[v]) v = w;
        c.chosen = cut_of[v];
        c.variant = variants[v];
        c.slice = base;
        if (!slice_env && slices_apply(mode, R)) { /* likewise 3 % */
            float t;
            TF_TRY(time_of(c.chosen, c.variant, 16, &t));
            if (t < 0.97f * best[v]) c.slice = 16;
        }
        c.tuned_R = R;
        describe(this);
        return TF_OK;
    }

    tf_status launch(uint32_t mode, const fcoo_cut &k, int variant, int slice, const void *const *fac, void *out,
                     uint32_t R)
    {
        const fcoo_dev<T> &c = copy[mode];
        if (!accumulate)
            TF_TRY(fcoo_clear((T *)out, dims[mode], k.clear_all || nnz == 0, k.zrows, k.nzero, R, ctx->stream));
        if (nnz == 0) return TF_OK;
        fcoo_args<T> a;
        a.accum = accumulate;
        for (int q = 0; q < MAX_PMODES; ++q) {
            const bool used = q + 1 < (int)order;
            a.pind[q] = used ? c.pind[q] : nullptr;
            a.fac.f[q] = used ? (const T *)fac[c.pmodes[q]] : nullptr;
        }
        a.fac.f[MAX_PMODES] = nullptr;
        a.vals = c.vals;
        a.head = c.head;
        a.start = k.start;
        a.part_seg = k.part_seg;
        a.seg_row = c.seg_row;
        a.out = (T *)out;
        a.nnz = nnz;
        a.nparts = k.nparts;
        a.nseg = c.nseg;
        a.part_nnz = k.part_nnz;
        a.np = order - 1;
        a.R = R;
        /* 16-byte factor loads (a lane takes VEC columns, a warp several
         * non-zeros per step) when R is a multiple of VEC = 16 / sizeof(T),
         * unless the mode is short for its partitions (more than 16 per
         * output row): boundary atomics then pile up on few rows, and
         * vector pieces serialise VEC of them per lane (measured on an
         * H200: 1.6-1.9x slower there, 1.1-1.4x faster elsewhere). The
         * seg kernel has the same boundary atomics (its groups are
         * combined first), but for it V columns per lane also mean V
         * times more groups per warp, i.e. V times shorter sequential
         * walks, so it takes 16-byte pieces whenever R allows
         * (measured that way only; tuning.fcoo_vec = 0 to compare). */
        constexpr uint32_t VEC = 16 / sizeof(T);
        const bool vec = R % VEC == 0 && !no_vec && (c.seg || k.nparts <= 16 * dims[mode]);
        return fcoo_launch(a, order, c.seg, variant, slice, vec, ctx->stream);
    }

    /* the shared arrays and the cut in use */
    uint64_t tensor_bytes(uint32_t mode) const override
    {
        const fcoo_dev<T> &c = copy[mode];
        return c.shared_bytes + c.cut[c.chosen].bytes;
    }
};

/* Non-zeros per partition (one warp): enough partitions for about eight
 * full waves of warps on the device (shorter warps balance better; measured
 * on an H200 for 20M non-zeros, R=32: 256 per warp 6% faster than 1024,
 * 4096 12-43% slower), between 32 and 1024. Kept per mode (fcoo_dev::
 * part_nnz): seg modes are re-cut to seg_partition_size. */
/* A partition size from the tuning policy: a multiple of 32 in 32..65536, else 0. */
uint32_t part_forced(uint32_t v) { return v >= 32 && v % 32 == 0 && v <= 65536 ? v : 0; }

uint32_t partition_size(const tf_tuning &t, uint64_t nnz, int sm_count)
{
    /* tuning.fcoo_part = N (a multiple of 32) overrides it for every mode, for measurements */
    if (part_forced(t.fcoo_part)) return t.fcoo_part;
    const uint64_t warps = (uint64_t)(sm_count > 0 ? sm_count : 1) * 64 * 8;
    uint64_t p = nnz / warps / 32 * 32;
    return (uint32_t)std::min<uint64_t>(std::max<uint64_t>(p, 32), 1024);
}

/* The kernel of one mode: tuning.fcoo_kernel (1 scan, 2 seg) forces one;
 * otherwise seg. Measured on an H200 (R=32, per mode, seg with
 * the partition sizes of seg_partition_size against scan): faster on every
 * mode of uber-apr14 (fp64 0.164 vs 0.201 ms all modes), wordnet30 (0.148
 * vs 0.194) and the 20M-non-zero skewed tensor (6.26 vs 6.94 ms; segments
 * of 10 non-zeros on average there), equal or better in fp32. */
enum { KERNEL_AUTO, KERNEL_SCAN, KERNEL_SEG };

int kernel_forced(const tf_tuning &t)
{
    return t.fcoo_kernel == 1 ? KERNEL_SCAN : t.fcoo_kernel == 2 ? KERNEL_SEG : KERNEL_AUTO;
}

bool choose_seg(int forced, uint64_t nseg)
{
    if (forced != KERNEL_AUTO) return forced == KERNEL_SEG;
    return nseg > 0;
}

/* Where the copies are sorted: on the device (fcoo_build.cu; 20M non-zeros
 * in milliseconds instead of seconds on the host) when the COO, the sort's
 * scratch and the copies fit the budget together, else on the host
 * (tuning.fcoo_build: 1 host, 2 device where possible). On the device,
 * *src holds the uploaded COO (free it with tf_fcoo_dsrc_free either way). */
bool build_on_device(tf_gpu_dev *ctx, const tf_tensor *X, uint32_t value_bytes, uint32_t modes, tf_fcoo_dsrc *src)
{
    *src = tf_fcoo_dsrc();
    if (ctx->tune.fcoo_build == 1 || X->nnz == 0 || X->nnz >= (1ULL << 32)) return false;
    if (ctx->tune.fcoo_build != 2 && !tf_fcoo_dbuild_fits(ctx, X, value_bytes, modes)) return false;
    /* a failure here (memory) leaves the host build */
    return tf_fcoo_dsrc_create(ctx, X, value_bytes, src) == TF_OK;
}

} // namespace

bool tf_fcoo_dbuild_fits(tf_gpu_dev *ctx, const tf_tensor *X, uint32_t value_bytes, uint32_t modes)
{
    uint64_t budget = 0;
    if (tf_gpu_budget(ctx, &budget) != TF_OK) return false;
    const double need = (double)tf_fcoo_dsrc_bytes(X, value_bytes) +
                        1.1 * (double)tf_gpu_format_bytes(X, TF_FORMAT_FCOO, value_bytes) * tf_mode_count(modes) /
                            X->order +
                        64.0 * (1 << 20);
    return need <= (double)budget;
}

namespace {

/* Partition size of a mode that uses seg: tuning.fcoo_seg_part = N (a
 * multiple of 32) for measurements; else at least 64 non-zeros (a group's walk must
 * outlast the warp's setup), and at least 128 on a mode shorter than the
 * SM count, where partitions pile their boundary atomics on few rows.
 * Measured on an H200, R=32 (ms per mode, fp64): uber's 1086-row mode 0.039
 * at 64 vs 0.046 at 128 and 0.046 at 32; its 24-row mode 0.043 at 128 vs 0.047
 * at 64; wordnet's 26-row mode 0.047 at 128, 0.073 at 64, 0.060 at 256. */
uint32_t seg_partition_size(const tf_tuning &t, uint32_t part_nnz, uint64_t mode_len, int sm_count)
{
    if (part_forced(t.fcoo_seg_part)) return t.fcoo_seg_part;
    uint32_t p = std::max<uint32_t>(part_nnz, 64);
    if (mode_len < (uint64_t)(sm_count > 0 ? sm_count : 1)) p = std::max<uint32_t>(p, 128);
    return p;
}

/* tuning.fcoo_tune = 0 (for measurements): no timing on first use; seg
 * modes run the default partition size and occupancy variant. */
bool tune_off(const tf_tuning &t) { return !t.fcoo_tune; }

/* The seg kernel's variant: tuning.fcoo_variant = 2|3|4 (the unpipelined
 * variant of that many blocks per SM) or 5 (the pipelined one) fixes it,
 * else -1 (timed on first use). */
int variant_forced(const tf_tuning &t)
{
    if (t.fcoo_variant == 5) return SEG_PIPE;
    for (int va = 0; va < SEG_VARIANTS; ++va)
        if (!seg_pipelined[va] && seg_blocks[va] == t.fcoo_variant) return va;
    return -1;
}

/* tuning.fcoo_slice = 16|32: rank pieces per grid row of every seg mode
 * (tests and measurements), else 0 (timed where slices_apply). */
int slice_forced(const tf_tuning &t) { return t.fcoo_slice == 16 || t.fcoo_slice == 32 ? (int)t.fcoo_slice : 0; }

/* The partition sizes a seg mode is cut into: parts[0] the default
 * (seg_partition_size), then the other FCOO_CUTS candidates, timed on first
 * use; tuning.fcoo_seg_part or fcoo_tune = 0 (for measurements): only the
 * first. Returns how many. */
int seg_partitions(const tf_tuning &t, uint32_t part_nnz, uint64_t mode_len, int sm_count, uint32_t *parts)
{
    const uint32_t d = seg_partition_size(t, part_nnz, mode_len, sm_count);
    parts[0] = d;
    if (part_forced(t.fcoo_seg_part) || tune_off(t)) return 1;
    const uint32_t mult2[] = {1, 3, 4, 6}; /* d/2, 3d/2, 2d, 3d in halves of d */
    int n = 1;
    for (uint32_t q : mult2) {
        uint32_t p = (d * q / 2 + 16) / 32 * 32;
        p = std::max<uint32_t>(32, std::min<uint32_t>(p, 65536));
        if (n < FCOO_CUTS && std::find(parts, parts + n, p) == parts + n) parts[n++] = p;
    }
    return n;
}

/* "fcoo, 256 nnz per warp[, seg modes 1,3][, half slices 1]": the lists
 * only where they fit the description buffer. */
template <typename E>
void describe(E *e)
{
    auto part = [&](uint32_t m) { return e->copy[m].cut[e->copy[m].chosen].part_nnz; };
    uint32_t first = 0;
    while (first + 1 < e->order && !tf_mode_in(e->modes, first)) ++first;
    uint32_t lo = part(first), hi = lo;
    char segs[2 * TF_GPU_MAX_ORDER + 1] = "", halves[2 * TF_GPU_MAX_ORDER + 1] = "";
    size_t n = 0, nh = 0;
    for (uint32_t m = 0; m < e->order; ++m) {
        if (!tf_mode_in(e->modes, m)) continue;
        lo = std::min(lo, part(m));
        hi = std::max(hi, part(m));
        if (e->copy[m].seg) n += (size_t)snprintf(segs + n, sizeof segs - n, "%s%u", n ? "," : "", m + 1);
        if (e->copy[m].seg && e->copy[m].slice == 16)
            nh += (size_t)snprintf(halves + nh, sizeof halves - nh, "%s%u", nh ? "," : "", m + 1);
    }
    char parts[24];
    if (lo == hi) snprintf(parts, sizeof parts, "%u", lo);
    else snprintf(parts, sizeof parts, "%u-%u", lo, hi);
    int len = snprintf(e->desc, sizeof e->desc, "fcoo, %s nnz per warp, seg modes %s%s%s", parts, segs,
                       nh ? ", half slices " : "", halves);
    if (nh && (len < 0 || (size_t)len >= sizeof e->desc))
        len = snprintf(e->desc, sizeof e->desc, "fcoo, %s nnz per warp, seg modes %s", parts, segs);
    if (!n || len < 0 || (size_t)len >= sizeof e->desc)
        snprintf(e->desc, sizeof e->desc, "fcoo, %s nnz per warp", parts);
}

/* X's copies of `modes`; coo (not NULL): X's COO is on the device already,
 * and X gives only its shape. */
template <typename T>
tf_status create(tf_gpu_dev *ctx, const tf_tensor *X, const tf_fcoo_dcoo *coo, uint64_t R, uint32_t modes,
                 bool streamed, tf_gpu_engine **out)
{
    if (streamed) {
        const uint32_t part_nnz = partition_size(ctx->tune, X->nnz, ctx->sm_count);
        uint32_t parts[TF_MAX_ORDER];
        for (uint32_t m = 0; m < X->order; ++m)
            parts[m] = seg_partition_size(ctx->tune, part_nnz, X->dims[m], ctx->sm_count);
        return tf_gpu_fcoo_stream_create(ctx, X, sizeof(T) == 4 ? TF_SINGLE : TF_DOUBLE, R, parts, modes, out);
    }
    fcoo_engine<T> *e = new (std::nothrow) fcoo_engine<T>();
    if (!e) return tf_fail(TF_ERR_NOMEM, "out of memory creating the GPU F-COO engine");
    e->ctx = ctx;
    e->format = TF_FORMAT_FCOO;
    e->order = X->order;
    e->modes = modes;
    e->nnz = X->nnz;
    const tf_tuning &tune = ctx->tune;
    const uint32_t part_nnz = partition_size(tune, X->nnz, ctx->sm_count);
    const int forced = kernel_forced(tune);
    const int variant = variant_forced(tune);
    e->no_vec = !tune.fcoo_vec;
    e->tune_prefix = tune_nnz(tune, ctx->sm_count);
    e->slice_env = slice_forced(tune);
    for (uint32_t m = 0; m < X->order; ++m) e->dims[m] = X->dims[m];
    tf_phase_clock clock(tune.build_report, ctx->stream);
    if (clock.on) { /* the ring's first-use cost apart */
        tf_gpu_stage_ready(ctx);
        clock.mark("pin");
    }
    tf_fcoo_dsrc src;
    tf_status s = TF_OK;
    bool on_device = true;
    if (coo) s = tf_fcoo_dsrc_adopt(ctx, X, coo, &src); /* no host copy to fall back on */
    else on_device = build_on_device(ctx, X, sizeof(T), modes, &src);
    clock.mark("upload");
    tf_fcoo f = {}; /* the host build's copy: one mode at a time, its arrays reused */
    for (uint32_t m = 0; m < X->order && s == TF_OK; ++m) {
        if (!tf_mode_in(modes, m)) continue;
        uint32_t seg_parts[FCOO_CUTS];
        const int seg_np = seg_partitions(tune, part_nnz, X->dims[m], ctx->sm_count, seg_parts);
        const uint32_t scan_parts[1] = {part_nnz};
        fcoo_dev<T> &c = e->copy[m];
        const auto settle = [&](uint64_t nseg) { /* the kernel and its choices */
            c.seg = choose_seg(forced, nseg);
            c.variant = variant >= 0 && (variant != SEG_PIPE || has_pipe(e->order)) ? variant : SEG_WIDE;
            c.tune_variant = c.seg && variant < 0 && !tune_off(tune);
            if (e->slice_env) c.slice = e->slice_env;
        };
        if (on_device) {
            s = c.build(ctx, &src, m, &clock);
            if (s != TF_OK) break;
            settle(c.nseg);
            s = c.seg ? c.cut_on_device(ctx, &src, m, seg_parts, seg_np) : c.cut_on_device(ctx, &src, m, scan_parts, 1);
            clock.mark("cuts");
        } else {
            /* built at the first seg size unless scan is forced (a mode is seg
             * when it has segments, i.e. almost always), so upload's first cut
             * needs no second partition pass */
            s = tf_fcoo_rebuild(X, m, forced == KERNEL_SCAN ? part_nnz : seg_parts[0], &f);
            if (s != TF_OK) break;
            settle(f.nseg);
            s = c.seg ? c.upload(ctx, &f, seg_parts, seg_np) /* re-cuts f to each size */
                      : c.upload(ctx, &f, scan_parts, 1);
            clock.mark("host_modes");
        }
        e->bytes += c.held();
    }
    tf_fcoo_free(&f);
    tf_fcoo_dsrc_free(&src);
    clock.mark("free");
    clock.report(on_device ? "fcoo-device" : "fcoo-host");
    e->built_on_device = on_device;
    if (s != TF_OK) {
        delete e;
        return s;
    }
    describe(e);
    *out = e;
    return TF_OK;
}

} // namespace

tf_status tf_gpu_fcoo_create_modes(tf_gpu_dev *ctx, const tf_tensor *X, tf_precision prec, uint64_t R,
                                   uint32_t modes, bool streamed, tf_gpu_engine **out)
{
    *out = nullptr;
    return prec == TF_SINGLE ? create<float>(ctx, X, nullptr, R, modes, streamed, out)
                             : create<double>(ctx, X, nullptr, R, modes, streamed, out);
}

tf_status tf_gpu_fcoo_create_from_device(tf_gpu_dev *ctx, const tf_tensor *X, const tf_fcoo_dcoo *coo,
                                         tf_precision prec, uint64_t R, uint32_t modes, tf_gpu_engine **out)
{
    *out = nullptr;
    if (coo->value_bytes != (prec == TF_SINGLE ? 4u : 8u))
        return tf_fail(TF_ERR_ARG, "F-COO device build: a COO of %u-byte values for %s copies", coo->value_bytes,
                       prec == TF_SINGLE ? "fp32" : "fp64");
    return prec == TF_SINGLE ? create<float>(ctx, X, coo, R, modes, false, out)
                             : create<double>(ctx, X, coo, R, modes, false, out);
}
