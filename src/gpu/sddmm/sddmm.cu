/* SPDX-License-Identifier: BSD-3-Clause */
/* GPU SDDMM plan parts (part.cuh): the schemes' set-up (row arrays; SM-L2 /
 * SM-SM tiles with Tj from the L2-capacity model and the device's L2 size,
 * Ti from half an SM's shared memory; cuSPARSE for comparison), the choice
 * by measurement at build (a few configurations of each allowed scheme,
 * timed on S, the fastest kept), and a part's runs: each operand placed by
 * where it is (GPU arrays read and written in place when their layout is
 * the kernels', else copied on the device into padded buffers; another
 * GPU's arrays by a peer copy; host arrays through the context's pinned
 * staging), one launch, P downloaded when it is on the host. plan.cu holds
 * the parts of a plan and runs them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <memory>
#include <new>

#include "gpu/sddmm/common.cuh"
#include "gpu/sddmm/part.cuh"
#include "gpu/runtime/dense.cuh"
#include "gpu/runtime/timing.cuh"
#include "gpu/sddmm/tile_kernel.cuh"
#include "gpu/sddmm/row_kernel.cuh"
#include "seams/cuda_module.h"
extern "C" {
#include "fmt/sddmm_tiles.h"
}

namespace {

/* Device properties this driver needs beyond the context. */
struct sddmm_device {
    uint64_t l2_bytes = 0;
    size_t smem_budget = 0;    /* dynamic shared memory per block: half an SM's */
    uint64_t resident = 0;     /* threads resident on the whole device at once  */
};

tf_status query_device(const tf_gpu_dev &ctx, sddmm_device *d)
{
    int smem_sm = 0, threads_sm = 0;
    TF_CU(cudaDeviceGetAttribute(&smem_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, ctx.device));
    TF_CU(cudaDeviceGetAttribute(&threads_sm, cudaDevAttrMaxThreadsPerMultiProcessor, ctx.device));
    d->l2_bytes = ctx.l2_bytes ? ctx.l2_bytes : 4u << 20;
    d->resident = (uint64_t)std::max(ctx.sm_count, 1) * (uint64_t)std::max(threads_sm, 1024);
    /* Half an SM (two resident blocks of 512 threads), less 1 KB the runtime reserves per block. */
    size_t half = smem_sm > 0 ? (size_t)smem_sm / 2 - 1024 : 48 * 1024;
    d->smem_budget = std::min(half, std::max(ctx.smem_optin, ctx.smem_block));
    return TF_OK;
}

/* One tiling uploaded to the device, with its launch parameters. */
template <typename T>
struct dev_tiles {
    tf_dev_array<uint32_t> group_nnz, group_rows, group_col0, rows, col, pos;
    tf_dev_array<uint16_t> rloc;
    tf_dev_array<T> sval;
    uint64_t ngroups = 0;
    uint32_t tile_j = 0, Tk = 0, V = 0, Ti = 0;
    bool stage_b = false;
    size_t smem = 0;
};

/* The host tiling, freed on scope exit. */
struct host_tiles {
    tf_sddmm_tiles t = {};
    host_tiles() = default;
    host_tiles(const host_tiles &) = delete;
    host_tiles &operator=(const host_tiles &) = delete;
    ~host_tiles() { tf_sddmm_tiles_free(&t); }
};

uint32_t pow2_ceil(uint32_t x)
{
    uint32_t p = 1;
    while (p < x) p <<= 1;
    return p;
}

/* Tiles for slice width Tk under `scheme`; fails with TF_ERR_RANGE when the
 * slice is too wide for the shared-memory budget. The per-entry arrays go
 * up through ctx's pinned staging (values converted there for fp32). */
template <typename T>
tf_status make_tiles(tf_gpu_dev &ctx, const tf_csr *S, const tf_sddmm_opts *o, const sddmm_device &dev, uint32_t Kp,
                     uint32_t Tk, bool stage_b, dev_tiles<T> *t, tf_phase_clock &clock)
{
    const size_t row_bytes = (size_t)Tk * sizeof(T);
    t->Tk = Tk;
    t->V = std::min<uint32_t>(32, pow2_ceil(Tk / (16 / sizeof(T))));
    t->stage_b = stage_b;
    const uint32_t max_nnz = (TF_SDDMM_THREADS / t->V) * TF_SDDMM_NPER;
    const uint64_t slots = dev.smem_budget / row_bytes; /* rows of A (+ B) that fit */
    uint32_t Tj, Ti;
    if (stage_b) {
        Tj = o->tile_j ? o->tile_j : (uint32_t)std::min<uint64_t>(slots / 2, S->cols);
        if (Tj < 1 || slots <= Tj)
            return tf_fail(TF_ERR_RANGE, "SDDMM SM-SM: slice Tk %u with panel width %u does not fit %zu bytes of shared memory",
                           Tk, Tj, dev.smem_budget);
        Ti = (uint32_t)std::min<uint64_t>(slots - Tj, 65535);
    } else {
        Tj = o->tile_j ? o->tile_j : tf_sddmm_model_tile_j(S, Kp, sizeof(T), dev.l2_bytes);
        Ti = (uint32_t)std::min<uint64_t>(slots, 65535);
    }
    Ti = std::min(Ti, max_nnz);
    if (Ti < 1)
        return tf_fail(TF_ERR_RANGE, "SDDMM: slice Tk %u does not fit %zu bytes of shared memory", Tk, dev.smem_budget);
    t->Ti = Ti;
    t->smem = ((size_t)Ti + (stage_b ? Tj : 0)) * row_bytes;
    host_tiles ht;
    TF_TRY(tf_sddmm_tiles_build(S, Tj, Ti, max_nnz, &ht.t));
    clock.mark("tiles_host");
    const tf_sddmm_tiles &h = ht.t;
    if (h.ngroups > (uint64_t)INT32_MAX)
        return tf_fail(TF_ERR_RANGE, "SDDMM: %llu thread blocks exceed the grid limit", (unsigned long long)h.ngroups);
    t->ngroups = h.ngroups;
    t->tile_j = h.tile_j;
    TF_TRY(t->group_nnz.upload(h.group_nnz, h.ngroups + 1, "SDDMM group offsets"));
    TF_TRY(t->group_rows.upload(h.group_rows, h.ngroups + 1, "SDDMM group rows"));
    TF_TRY(t->group_col0.upload(h.group_col0, h.ngroups, "SDDMM group columns"));
    TF_TRY(t->rows.upload(h.rows, h.nrows, "SDDMM active rows"));
    TF_TRY(tf_gpu_upload_staged(&ctx, &t->col.p, h.col, h.nnz, "SDDMM columns", ctx.stream));
    TF_TRY(tf_gpu_upload_staged(&ctx, &t->rloc.p, h.rloc, h.nnz, "SDDMM local rows", ctx.stream));
    TF_TRY(tf_gpu_upload_staged(&ctx, &t->pos.p, h.pos, h.nnz, "SDDMM CSR positions", ctx.stream));
    TF_TRY(t->sval.alloc(h.nnz, "SDDMM values"));
    TF_TRY(tf_gpu_h2d_values(&ctx, t->sval.p, h.vals, h.nnz, ctx.stream)); /* in tile order already */
    TF_CU(cudaStreamSynchronize(ctx.stream)); /* before the host tiles are freed */
    clock.mark("tiles_upload");
    auto kernel = stage_b ? tf_sddmm_kernel<T, true> : tf_sddmm_kernel<T, false>;
    /* Raise the limit to the whole budget, never to this tiling's size: the
     * Tk auto-tune builds several tilings and must not lower the limit an
     * earlier, larger one launches with. */
    if (t->smem > 48 * 1024)
        TF_CU(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)dev.smem_budget));
    return TF_OK;
}

/* One launch of a tiled scheme on stream st: out (nnz, CSR order) from A and B. */
template <typename T>
tf_status launch_tiles(const dev_tiles<T> &t, const T *A, const T *B, T *out, uint32_t Kp, uint32_t ncols,
                       const tf_sddmm_opts *o, cudaStream_t st)
{
    if (t.ngroups == 0) return TF_OK;
    tf_sddmm_args<T> a;
    a.group_nnz = t.group_nnz.p;
    a.group_rows = t.group_rows.p;
    a.group_col0 = t.group_col0.p;
    a.rows = t.rows.p;
    a.col = t.col.p;
    a.pos = t.pos.p;
    a.rloc = t.rloc.p;
    a.sval = t.sval.p;
    a.A = A;
    a.B = B;
    a.out = out;
    a.Kp = Kp;
    a.Tk = t.Tk;
    a.V = t.V;
    a.tile_j = t.tile_j;
    a.ncols = ncols;
    a.scale = o->op == TF_SDDMM_SCALE;
    a.alpha = (T)o->alpha;
    a.beta = (T)o->beta;
    const dim3 grid((unsigned)t.ngroups);
    if (t.stage_b) tf_sddmm_kernel<T, true><<<grid, TF_SDDMM_THREADS, t.smem, st>>>(a);
    else tf_sddmm_kernel<T, false><<<grid, TF_SDDMM_THREADS, t.smem, st>>>(a);
    TF_CU_LAUNCH("tf_sddmm_kernel");
    return TF_OK;
}

/* Slice widths to try: all of Kp, and 32-multiples below it down to 64
 * (at most `max` <= 4), each no wider than the shared memory allows. */
template <typename T>
int tk_candidates(const tf_sddmm_opts *o, uint32_t Kp, const sddmm_device &dev, bool stage_b, int max, uint32_t *out)
{
    const uint32_t w = 16 / sizeof(T);
    const uint64_t max_tk = dev.smem_budget / ((stage_b ? 64 : 16) * sizeof(T)) / w * w; /* >= 16 rows */
    if (o->tile_k) {
        uint32_t tk = (std::min<uint32_t>(o->tile_k, Kp) + w - 1) / w * w;
        out[0] = (uint32_t)std::min<uint64_t>(tk, std::max<uint64_t>(max_tk, w));
        return 1;
    }
    int n = 0;
    uint32_t tk = (uint32_t)std::min<uint64_t>(Kp, std::max<uint64_t>(max_tk, w));
    out[n++] = tk;
    for (uint32_t c = tk / 2 / 32 * 32; c >= 64 && n < max; c = c / 2 / 32 * 32) out[n++] = c;
    return n;
}

/* ------------------------------------------------------------ row scheme */

/* The row scheme's device arrays, shared by all its configurations. */
template <typename T>
struct dev_rows {
    tf_dev_array<uint32_t> row, col;
    tf_dev_array<T> sval;
};

struct row_cfg {
    uint32_t V, nper; /* lanes per non-zero, non-zeros per virtual warp (V = 0: none) */
    bool a_regs;      /* A's row slice kept in registers                            */
    uint32_t grid;    /* blocks (0: one virtual warp per chunk of nper non-zeros;
                         else a resident-sized grid whose virtual warps loop)       */
};

/* The row scheme's arrays up through ctx's pinned staging (values
 * converted there for fp32). */
template <typename T>
tf_status upload_rows(tf_gpu_dev &ctx, const tf_csr *S, dev_rows<T> *d)
{
    if (S->rows >= UINT32_MAX)
        return tf_fail(TF_ERR_RANGE, "SDDMM row scheme: %llu rows exceed its 32-bit row indices",
                       (unsigned long long)S->rows);
    uint32_t *r = nullptr;
    TF_TRY(TF_ALLOC(r, S->nnz, "SDDMM rows of the non-zeros"));
    for (uint64_t i = 0; i < S->rows; ++i)
        for (uint64_t e = S->rowptr[i]; e < S->rowptr[i + 1]; ++e) r[e] = (uint32_t)i;
    const tf_status s = [&]() -> tf_status {
        TF_TRY(tf_gpu_upload_staged(&ctx, &d->row.p, r, S->nnz, "SDDMM rows", ctx.stream));
        TF_TRY(tf_gpu_upload_staged(&ctx, &d->col.p, S->colind, S->nnz, "SDDMM columns", ctx.stream));
        TF_TRY(d->sval.alloc(S->nnz, "SDDMM values"));
        TF_TRY(tf_gpu_h2d_values(&ctx, d->sval.p, S->vals, S->nnz, ctx.stream));
        TF_CU(cudaStreamSynchronize(ctx.stream)); /* before r is freed */
        return TF_OK;
    }();
    tf_free(r);
    return s;
}

/* 16-byte vectors per lane and pass, for V lanes over a row of kpv: 1, 2 or 4. */
uint32_t row_vpl(uint32_t kpv, uint32_t V) { return std::min<uint32_t>(4, pow2_ceil((kpv + V - 1) / V)); }
/* Fewest lanes (a power of two <= 32) that cover kpv vectors with at most vpl each. */
uint32_t row_lanes(uint32_t kpv, uint32_t vpl) { return std::min<uint32_t>(32, pow2_ceil((kpv + vpl - 1) / vpl)); }

/* Non-zeros per virtual warp of V lanes that give about one full wave of
 * resident threads: a power of two in [4, 64] (small S: more, shorter
 * virtual warps, as latency dominates; large S: fewer index loads and more
 * reuse of A's row per virtual warp). */
uint32_t row_nper(uint64_t nnz, uint32_t V, uint64_t resident)
{
    uint32_t n = 4;
    while (n < 64 && (uint64_t)2 * n * resident <= nnz * V) n *= 2;
    return n;
}

/* Most row configurations timed on one S (run() sizes its array by it). */
constexpr int kRowCandidates = 32;

/* Whether c[lo .. hi - 1] holds p's (V, nper, a_regs) already. */
bool has_cfg(const row_cfg *c, int lo, int hi, const row_cfg &p)
{
    for (int i = lo; i < hi; ++i)
        if (c[i].V == p.V && c[i].nper == p.nper && c[i].a_regs == p.a_regs) return true;
    return false;
}

/* Configurations to time: lanes per non-zero V in {v4 / 2 and v4 / 4 (two
 * or four passes over K with 4 vectors per lane), v4 (the fewest lanes that
 * cover the row in one pass of 4 vectors), v2 (one pass of 2)}, each with
 * nper 4, 16 and row_nper's one-wave value, the one-wave one also with A's
 * row in registers where one pass covers K. (H200, fp32, document-term
 * matrices: the best lies anywhere in this grid, e.g. 20news K = 128 at V 8
 * nper 16 or V 4 nper 4, 1.16x the one-wave nper 64 that was the only one
 * timed before; K = 512 at V 8 nper 4, 1.08x V 32 nper 16; ap-dtm K = 512
 * V 8 nper 4-8 0.0744-0.0756 ms against V 16's best 0.0766.) Fields set in
 * o override all of them; duplicates are dropped. */
int row_candidates(const tf_sddmm_opts *o, uint32_t kpv, uint64_t nnz, uint64_t resident, row_cfg *out)
{
    const uint32_t v4 = row_lanes(kpv, 4), v2 = row_lanes(kpv, 2);
    int n = 0;
    /* nper 0: the one-wave value for the candidate's (possibly forced) V */
    auto add = [&](uint32_t V, uint32_t nper, bool a_regs) {
        row_cfg c = {o->vwarp ? o->vwarp : V, 0, o->a_regs ? o->a_regs > 0 : a_regs, 0};
        c.nper = o->nper ? o->nper : nper ? nper : row_nper(nnz, c.V, resident);
        c.a_regs = c.a_regs && kpv <= 4 * c.V; /* the registers hold one pass over K */
        if (n < kRowCandidates && !has_cfg(out, 0, n, c)) out[n++] = c;
    };
    const uint32_t vs[4] = {v4, v4 > 1 ? v4 / 2 : v4, v4 > 4 ? v4 / 4 : v4, v2}; /* V 1: 2-4x slower */
    for (uint32_t v : vs) {
        add(v, 0, false);
        add(v, 0, true);
        add(v, 4, false);
        add(v, 16, false);
    }
    return n;
}

uint64_t row_blocks(uint64_t nnz, const row_cfg &c)
{
    const uint64_t all = ((nnz + c.nper - 1) / c.nper * c.V + TF_SDDMM_ROW_THREADS - 1) / TF_SDDMM_ROW_THREADS;
    return c.grid ? std::min<uint64_t>(c.grid, all) : all;
}

template <typename T, bool A_REGS, bool PERSIST>
void (*row_kernel_p(uint32_t vpl))(tf_sddmm_row_args<T>)
{
    return vpl == 1 ? tf_sddmm_row_kernel<T, 1, A_REGS, PERSIST>
                    : vpl == 2 ? tf_sddmm_row_kernel<T, 2, A_REGS, PERSIST> : tf_sddmm_row_kernel<T, 4, A_REGS, PERSIST>;
}

template <typename T>
void (*row_kernel(uint32_t vpl, bool a_regs, bool persist))(tf_sddmm_row_args<T>)
{
    if (persist) return a_regs ? row_kernel_p<T, true, true>(vpl) : row_kernel_p<T, false, true>(vpl);
    return a_regs ? row_kernel_p<T, true, false>(vpl) : row_kernel_p<T, false, false>(vpl);
}

/* One launch of the row scheme on stream st: out (nnz, CSR order) from A and B. */
template <typename T>
tf_status launch_row(const dev_rows<T> &d, const row_cfg &c, const T *A, const T *B, T *out, uint32_t Kp,
                     uint64_t nnz, const tf_sddmm_opts *o, cudaStream_t st)
{
    tf_sddmm_row_args<T> a;
    a.row = d.row.p;
    a.col = d.col.p;
    a.sval = d.sval.p;
    a.A = A;
    a.B = B;
    a.out = out;
    a.nnz = nnz;
    a.Kp = Kp;
    a.V = c.V;
    a.nper = c.nper;
    a.scale = o->op == TF_SDDMM_SCALE;
    a.alpha = (T)o->alpha;
    a.beta = (T)o->beta;
    const uint32_t vpl = row_vpl(Kp / (16 / sizeof(T)), c.V);
    auto kernel = row_kernel<T>(vpl, c.a_regs, c.grid != 0);
    kernel<<<(unsigned)row_blocks(nnz, c), TF_SDDMM_ROW_THREADS, 0, st>>>(a);
    TF_CU_LAUNCH("tf_sddmm_row_kernel");
    return TF_OK;
}

/* Adds resident-sized (persistent) versions of the candidates at the
 * one-wave nper (A in L1 or registers), with half that many non-zeros per
 * virtual warp and with 8 (their loop balances the work, and a grid of
 * exactly the resident blocks leaves no partial last wave; 20news K = 32:
 * V 4 nper 8 is the best of all). tuning.sddmm_row_grid = N instead gives
 * every candidate a grid of N blocks (tests: many chunks per virtual warp).
 * Returns the new count, or -1 if the kernel cannot be resident. */
template <typename T>
int with_persistent(const tf_gpu_dev &ctx, const tf_sddmm_opts *o, uint32_t kpv, uint64_t nnz, uint64_t resident,
                    row_cfg *c, int n)
{
    if (ctx.tune.sddmm_row_grid > 0) {
        for (int i = 0; i < n; ++i) c[i].grid = ctx.tune.sddmm_row_grid;
        return n;
    }
    if (o->nper) return n; /* a forced nper: time it as given */
    const int base = n;
    for (int i = 0; i < base; ++i) {
        if (c[i].nper != row_nper(nnz, c[i].V, resident)) continue;
        int per_sm = 0;
        auto kernel = row_kernel<T>(row_vpl(kpv, c[i].V), c[i].a_regs, true);
        if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, TF_SDDMM_ROW_THREADS, 0) != cudaSuccess ||
            per_sm < 1)
            return -1;
        const uint32_t npers[2] = {std::max<uint32_t>(4, c[i].nper / 2), 8};
        for (uint32_t np : npers) {
            row_cfg p = c[i];
            p.nper = np;
            p.grid = (uint32_t)per_sm * (uint32_t)std::max(ctx.sm_count, 1);
            if (n >= kRowCandidates || has_cfg(c, base, n, p)) continue;
            if (row_blocks(nnz, p) < p.grid) continue; /* S fits in one wave anyway */
            c[n++] = p;
        }
    }
    return n;
}

/* ------------------------------------------------------------ the choice */

/* The timed choice's clock. A launch of microseconds varies by about as
 * much as the candidates differ: best of four runs after one warm-up (with
 * two, kernels of ~10 us were misranked often enough to pick a 20 % slower
 * configuration, H200), of two where the first took over 5 ms. A launch of
 * kLongMs or more varies by far less than that, and on a large S its
 * repeats were a large part of the build (200M non-zeros: ~30 candidates x
 * 3 launches of 20 ms at K 32 and 0.28 s at K 512, fp64): once a timed run
 * takes that long, every later candidate is launched once, with no
 * warm-up -- its kernel loaded beforehand, as lazy loading would load it
 * inside the timed launch. `launches` counts them (the build report). */
constexpr double kLongMs = 10.0;

struct choice_clock {
    const tf_gpu_dev &ctx;
    bool timed;
    bool long_runs = false;
    int launches = 0;

    template <typename Fn>
    tf_status time(const void *kernel, double *m, Fn &&fn)
    {
        double ms[4] = {0, 0, 0, 0};
        *m = 0;
        if (!timed) return TF_OK;
        if (long_runs) {
            cudaFuncAttributes fa;
            TF_CU(cudaFuncGetAttributes(&fa, kernel));
            TF_TRY(tf_gpu_time_runs(ctx.stream, 0, 1, ms, fn));
            ++launches;
            *m = ms[0];
            return TF_OK;
        }
        TF_TRY(tf_gpu_time_runs(ctx.stream, 1, 1, ms, fn));
        launches += 2;
        if (ms[0] >= kLongMs) {
            long_runs = true;
            *m = ms[0];
            return TF_OK;
        }
        const int n = ms[0] > 5.0 ? 2 : 4;
        TF_TRY(tf_gpu_time_runs(ctx.stream, 0, n - 1, ms + 1, fn));
        launches += n - 1;
        *m = *std::min_element(ms, ms + n);
        return TF_OK;
    }
};


/* ------------------------------------------------------------ operands */

/* dst (rows x Kp) = src (rows x K, rows ld apart), zero-padded. */
template <typename T>
__global__ void tf_sddmm_pad_kernel(const T *src, uint64_t ld, uint64_t rows, uint32_t K, T *dst, uint32_t Kp)
{
    const uint64_t n = rows * Kp, step = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t x = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; x < n; x += step) {
        const uint64_t i = x / Kp;
        const uint32_t k = (uint32_t)(x - i * Kp);
        dst[x] = k < K ? src[i * ld + k] : T(0);
    }
}

/* A device buffer kept between runs, grown to what a run asks. */
template <typename T>
struct dev_buf {
    tf_dev_array<T> a;
    uint64_t n = 0;
    tf_status ensure(uint64_t want, const char *what)
    {
        if (a.p && n >= want) return TF_OK;
        n = 0;
        TF_TRY(a.alloc(want ? want : 1, what));
        n = want;
        return TF_OK;
    }
    void release()
    {
        tf_gpu_free(a.p);
        a.p = nullptr;
        n = 0;
    }
};

/* ------------------------------------------------------------ a part */

enum scheme_kind { SCHEME_ROW, SCHEME_TILES, SCHEME_CUSPARSE };

template <typename T>
struct typed_part : sddmm_part {
    tf_sddmm_opts o = {};
    uint64_t M = 0, N = 0, K = 0;
    uint32_t Kp = 0;
    scheme_kind scheme = SCHEME_ROW;
    row_cfg rcfg = {0, 0, false, 0};
    std::unique_ptr<dev_rows<T>> rows;
    std::unique_ptr<dev_tiles<T>> tiles;
    tf_cusparse_sddmm *sp = nullptr;
    dev_buf<T> dA, dB, out, rawA, rawB; /* padded operands, P's buffer, rows before padding */
    const T *staged_a = nullptr, *staged_b = nullptr; /* stage(): what launch() reads */

    typed_part() = default;
    typed_part(const typed_part &) = delete;
    typed_part &operator=(const typed_part &) = delete;
    ~typed_part() override { tf_cusparse_sddmm_free(sp); }

    static constexpr tf_precision prec = sizeof(T) == sizeof(float) ? TF_SINGLE : TF_DOUBLE;

    tf_status launch_any(const T *A, const T *B, T *outp, cudaStream_t st)
    {
        if (scheme == SCHEME_ROW) return launch_row<T>(*rows, rcfg, A, B, outp, Kp, nnz, &o, st);
        if (scheme == SCHEME_TILES) return launch_tiles<T>(*tiles, A, B, outp, Kp, (uint32_t)N, &o, st);
        return tf_cusparse_sddmm_launch(sp, st, outp);
    }

    tf_status build(const tf_csr *S, tf_sddmm_info *info);
    tf_status place(const sddmm_operand &X, dev_buf<T> &pad, dev_buf<T> &raw, const char *what, cudaStream_t st,
                    const T **use);
    tf_status run(const sddmm_operand &A, const sddmm_operand &B, const sddmm_operand &P, cudaStream_t st,
                  bool wait) override;
    tf_status stage(const sddmm_operand &A, const sddmm_operand &B, cudaStream_t st) override;
    tf_status launch(cudaStream_t st) override;
};

/* Tiles, uploads and the timed choice, on zero-filled operands (the
 * kernels' speed does not depend on the values); the operand buffers are
 * released afterwards (cuSPARSE keeps them: its descriptors hold them). */
template <typename T>
tf_status typed_part<T>::build(const tf_csr *S, tf_sddmm_info *info)
{
    tf_gpu_dev &c = *ctx;
    sddmm_device dev;
    TF_TRY(query_device(c, &dev));
    M = S->rows;
    N = S->cols;
    nnz = S->nnz;
    Kp = tf_sddmm_padded_k<T>(K);
    TF_TRY(dA.ensure(M * Kp, "SDDMM A (padded)"));
    TF_TRY(dB.ensure(N * Kp, "SDDMM B (padded)"));
    tf_phase_clock phases(c.tune.build_report != 0, c.stream); /* TF_BUILD_REPORT=1 */
    TF_TRY(out.ensure(nnz, "SDDMM output"));
    TF_CU(cudaMemsetAsync(dA.a.p, 0, M * Kp * sizeof(T), c.stream));
    TF_CU(cudaMemsetAsync(dB.a.p, 0, N * Kp * sizeof(T), c.stream));
    phases.mark("setup");
    if (info) {
        memset(info, 0, sizeof *info);
        info->backend = TF_BACKEND_GPU;
    }
    if (o.algo == TF_SDDMM_ALGO_CUSPARSE) {
        TF_TRY(tf_cusparse_sddmm_create(ctx, S, K, Kp, prec == TF_SINGLE, dA.a.p, dB.a.p, &o, &sp));
        scheme = SCHEME_CUSPARSE;
        if (info) info->algo = TF_SDDMM_ALGO_CUSPARSE;
        return TF_OK;
    }

    /* Candidates: the row configurations, then SM-L2's slice widths and
     * SM-SM's (AUTO: only its widest, as it rarely wins on sparse S). QUICK
     * (a one-shot call): the first row configuration, timed against nothing;
     * SM-L2's first width only where the row scheme cannot take S. */
    const tf_sddmm_opts *op = &o;
    const bool quick = o.algo == TF_SDDMM_ALGO_QUICK;
    const bool any = o.algo == TF_SDDMM_ALGO_AUTO;
    const uint32_t kpv = Kp / (16 / sizeof(T));
    row_cfg rcand[kRowCandidates];
    uint32_t tk[2][4];
    int nrow = 0, ntk[2] = {0, 0};
    if (any || quick || o.algo == TF_SDDMM_ALGO_ROW)
        nrow = with_persistent<T>(c, op, kpv, nnz, dev.resident, rcand, row_candidates(op, kpv, nnz, dev.resident, rcand));
    if (nrow < 0) return tf_fail(TF_ERR_RANGE, "SDDMM row scheme: no resident blocks for its kernel");
    if (quick) nrow = std::min(nrow, 1);
    if (any || o.algo == TF_SDDMM_ALGO_SM_L2) ntk[0] = tk_candidates<T>(op, Kp, dev, false, 4, tk[0]);
    if (any || o.algo == TF_SDDMM_ALGO_SM_SM) ntk[1] = tk_candidates<T>(op, Kp, dev, true, any ? 1 : 4, tk[1]);
    choice_clock clock{c, nrow + ntk[0] + ntk[1] > 1};

    double best_ms = INFINITY;
    row_cfg best_row = {0, 0, false, 0}; /* V != 0: the row scheme won */
    std::unique_ptr<dev_tiles<T>> best, trial;
    tf_status last = TF_OK;
    if (nrow) {
        rows.reset(new (std::nothrow) dev_rows<T>());
        if (!rows) return tf_fail(TF_ERR_NOMEM, "out of memory for the SDDMM row arrays");
        last = upload_rows<T>(c, S, rows.get());
        if (last != TF_OK && !((any || quick) && last == TF_ERR_RANGE)) return last;
        if (last != TF_OK) rows.reset(); /* too many rows for the scheme: the tiles may do */
        if (last != TF_OK && quick) ntk[0] = tk_candidates<T>(op, Kp, dev, false, 1, tk[0]);
        phases.mark("rows_upload");
        for (int i = 0; i < nrow && last == TF_OK; ++i) {
            double m;
            const void *kernel = (const void *)row_kernel<T>(row_vpl(kpv, rcand[i].V), rcand[i].a_regs, rcand[i].grid != 0);
            TF_TRY(clock.time(kernel, &m, [&] {
                return launch_row<T>(*rows, rcand[i], dA.a.p, dB.a.p, out.a.p, Kp, nnz, op, c.stream);
            }));
            if (m < best_ms) {
                best_ms = m;
                best_row = rcand[i];
            }
        }
        phases.mark("rows_time");
    }
    for (int sb = 0; sb < 2; ++sb)
        for (int i = 0; i < ntk[sb]; ++i) {
            trial.reset(new (std::nothrow) dev_tiles<T>());
            if (!trial) return tf_fail(TF_ERR_NOMEM, "out of memory for SDDMM tiles");
            last = make_tiles<T>(c, S, op, dev, Kp, tk[sb][i], sb != 0, trial.get(), phases);
            if (last == TF_ERR_RANGE) continue; /* too wide for shared memory: the next is narrower */
            TF_TRY(last);
            double m;
            const dev_tiles<T> &t = *trial;
            const void *kernel = t.stage_b ? (const void *)tf_sddmm_kernel<T, true> : (const void *)tf_sddmm_kernel<T, false>;
            TF_TRY(clock.time(kernel, &m, [&] {
                return launch_tiles<T>(t, dA.a.p, dB.a.p, out.a.p, Kp, (uint32_t)N, op, c.stream);
            }));
            phases.mark("tiles_time");
            if (m < best_ms) {
                best_ms = m;
                best = std::move(trial);
                best_row.V = 0;
                rows.reset(); /* frees the row arrays */
            }
        }
    if (best_row.V == 0 && !best)
        return last != TF_OK ? last : tf_fail(TF_ERR_RANGE, "SDDMM: no scheme fits this problem");
    if (best_row.V != 0) {
        scheme = SCHEME_ROW;
        rcfg = best_row;
    } else {
        scheme = SCHEME_TILES;
        tiles = std::move(best);
    }
    if (info) {
        if (scheme == SCHEME_ROW) {
            info->algo = TF_SDDMM_ALGO_ROW;
            info->vwarp = rcfg.V;
            info->nper = rcfg.nper;
            info->a_regs = rcfg.a_regs;
            info->blocks = row_blocks(nnz, rcfg);
        } else {
            const dev_tiles<T> &t = *tiles;
            info->algo = t.stage_b ? TF_SDDMM_ALGO_SM_SM : TF_SDDMM_ALGO_SM_L2;
            info->tile_i = t.Ti;
            info->tile_j = t.tile_j;
            info->tile_k = t.Tk;
            info->vwarp = t.V;
            info->blocks = t.ngroups;
        }
    }
    dA.release();
    dB.release();
    out.release();
    if (phases.on) {
        phases.mark("release");
        char what[160];
        snprintf(what, sizeof what, "sddmm nnz=%llu K=%llu %s candidates=%d launches=%d long=%d chose=%s",
                 (unsigned long long)nnz, (unsigned long long)K, prec == TF_SINGLE ? "fp32" : "fp64",
                 nrow + ntk[0] + ntk[1], clock.launches, clock.long_runs ? 1 : 0,
                 scheme == SCHEME_ROW ? "row" : tiles->stage_b ? "sm-sm" : "sm-l2");
        phases.report(what);
    }
    return TF_OK;
}

/* The array the kernels read for operand X (rows x K): X itself when it is
 * GPU memory they reach, laid out as they read it (ld = K = Kp, 16-byte
 * aligned; not for cuSPARSE, whose descriptors hold the padded buffers),
 * else `pad` (rows x Kp) filled from X on st -- on the device from GPU
 * memory, by a peer copy from another GPU's, through the context's pinned
 * staging from host memory (via `raw` when X's rows are not Kp apart
 * already). */
template <typename T>
tf_status typed_part<T>::place(const sddmm_operand &op, dev_buf<T> &pad, dev_buf<T> &raw, const char *what,
                               cudaStream_t st, const T **use)
{
    const tf_dense &X = *op.X;
    const uint64_t rows = X.rows, ld = X.ld ? X.ld : X.cols;
    const bool kernel_layout = K == Kp && ld == Kp;
    if (op.loc == SDDMM_HERE && kernel_layout && scheme != SCHEME_CUSPARSE && (uintptr_t)X.data % 16 == 0) {
        *use = (const T *)X.data;
        return TF_OK;
    }
    TF_TRY(pad.ensure(rows * Kp, what));
    *use = pad.a.p;
    const T *src = (const T *)X.data;
    if (op.loc != SDDMM_HERE) {
        const uint64_t n = (rows - 1) * ld + K; /* the values X spans (rows >= 1) */
        T *dst = pad.a.p;
        if (!kernel_layout) {
            TF_TRY(raw.ensure(n, what));
            dst = raw.a.p;
        }
        if (op.loc == SDDMM_PEER) {
            TF_CU(cudaMemcpyPeerAsync(dst, ctx->device, X.data, op.device, n * sizeof(T), st));
        } else if constexpr (sizeof(T) == sizeof(float)) {
            if (X.precision == TF_DOUBLE) TF_TRY(tf_gpu_h2d_staged_floats(ctx, dst, (const double *)X.data, n, st));
            else TF_TRY(tf_gpu_h2d_staged(ctx, dst, X.data, n * sizeof(T), st));
        } else {
            TF_TRY(tf_gpu_h2d_staged(ctx, dst, X.data, n * sizeof(T), st)); /* doubles only (front end) */
        }
        if (kernel_layout) return TF_OK;
        src = dst;
    }
    const uint64_t n = rows * Kp;
    const unsigned blocks = (unsigned)std::min<uint64_t>((n + 255) / 256, (uint64_t)std::max(ctx->sm_count, 1) * 16);
    tf_sddmm_pad_kernel<T><<<blocks, 256, 0, st>>>(src, ld, rows, (uint32_t)K, pad.a.p, Kp);
    TF_CU_LAUNCH("tf_sddmm_pad_kernel");
    return TF_OK;
}

template <typename T>
tf_status typed_part<T>::stage(const sddmm_operand &A, const sddmm_operand &B, cudaStream_t st)
{
    TF_TRY(place(A, dA, rawA, "SDDMM A (padded)", st, &staged_a));
    return place(B, dB, rawB, "SDDMM B (padded)", st, &staged_b);
}

template <typename T>
tf_status typed_part<T>::launch(cudaStream_t st)
{
    TF_TRY(out.ensure(nnz, "SDDMM output"));
    T *outp = scheme == SCHEME_CUSPARSE ? nullptr : out.a.p; /* cuSPARSE: its call alone */
    return launch_any(staged_a, staged_b, outp, st);
}

template <typename T>
tf_status typed_part<T>::run(const sddmm_operand &A, const sddmm_operand &B, const sddmm_operand &P, cudaStream_t st,
                             bool wait)
{
    const tf_dense &Pd = *P.X;
    TF_TRY(stage(A, B, st));
    T *outp = (T *)Pd.data;
    if (P.loc != SDDMM_HERE) {
        TF_TRY(out.ensure(nnz, "SDDMM output"));
        outp = out.a.p;
    }
    TF_TRY(launch_any(staged_a, staged_b, outp, st));
    if (P.loc == SDDMM_PEER) TF_CU(cudaMemcpyPeerAsync(Pd.data, P.device, outp, ctx->device, nnz * sizeof(T), st));
    if (P.loc != SDDMM_HOST) {
        if (wait) TF_CU(cudaStreamSynchronize(st));
        return TF_OK;
    }
    if (sizeof(T) == sizeof(double) || Pd.precision == TF_SINGLE) { /* P holds T (front end) */
        TF_CU(cudaMemcpyAsync(Pd.data, outp, nnz * sizeof(T), cudaMemcpyDeviceToHost, st));
        TF_CU(cudaStreamSynchronize(st));
        return TF_OK;
    }
    return tf_gpu_get_values<T>((double *)Pd.data, outp, nnz, st);
}

template <typename T>
tf_status make_part(tf_gpu_dev *c, const tf_csr *S, uint64_t K, const tf_sddmm_opts *o, tf_sddmm_info *info,
                    std::unique_ptr<sddmm_part> *out)
{
    std::unique_ptr<typed_part<T>> p(new (std::nothrow) typed_part<T>());
    if (!p) return tf_fail(TF_ERR_NOMEM, "out of memory for a GPU SDDMM plan");
    p->ctx = c;
    p->o = *o;
    p->o.context = nullptr; /* the plan's, held by the front end */
    p->K = K;
    TF_TRY(p->build(S, info));
    *out = std::move(p);
    return TF_OK;
}

} // namespace

tf_status tf_sddmm_part_new(tf_gpu_dev *c, const tf_csr *S, uint64_t K, const tf_sddmm_opts *o, tf_sddmm_info *info,
                            std::unique_ptr<sddmm_part> *out)
{
    if (K > (uint64_t)INT32_MAX)
        return tf_fail(TF_ERR_RANGE, "GPU SDDMM: K = %llu is larger than 2^31 - 1", (unsigned long long)K);
    if (o->precision == TF_SINGLE) return make_part<float>(c, S, K, o, info, out);
    return make_part<double>(c, S, K, o, info, out);
}

tf_status tf_sddmm_locate(const tf_dense &X, const char *name, const char *who, int device, tf_precision prec,
                          sddmm_operand *out)
{
    int kind = TF_CUDA_PTR_HOST, dev = -1;
    out->X = &X;
    TF_TRY(tf_gpu_dense_where(X, name, who, prec, &kind, &dev));
    out->loc = kind == TF_CUDA_PTR_HOST ? SDDMM_HOST : kind == TF_CUDA_PTR_DEVICE && dev != device ? SDDMM_PEER : SDDMM_HERE;
    out->device = dev;
    if (out->loc != SDDMM_HOST && (uintptr_t)X.data % (prec == TF_SINGLE ? sizeof(float) : sizeof(double)))
        return tf_fail(TF_ERR_ARG, "%s: %s (GPU memory) is not aligned to its %zu-byte values", who, name,
                       prec == TF_SINGLE ? sizeof(float) : sizeof(double));
    return TF_OK;
}
