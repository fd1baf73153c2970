/* GPU SDDMM driver: scheme choice (SM-SM above 5 % density, else SM-L2),
 * tile sizes (Tj from the L2-capacity model with the device's L2 size, Tk
 * by a quick auto-tune over a few slice widths, Ti from half an SM's shared
 * memory), tile upload, timed launches, and the result download. */
#include <math.h>
#include <string.h>

#include <algorithm>
#include <memory>
#include <new>

#include "cuda/sddmm_common.cuh"
#include "cuda/sddmm_kernel.cuh"
extern "C" {
#include "cpu/sddmm_tiles.h"
}

namespace {

/* Device properties this driver needs beyond the context. */
struct sddmm_device {
    uint64_t l2_bytes = 0;
    size_t smem_budget = 0; /* dynamic shared memory per block: half an SM's */
};

tf_status query_device(const tf_cuda_ctx &ctx, sddmm_device *d)
{
    int l2 = 0, smem_sm = 0;
    TF_CU(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, ctx.device));
    TF_CU(cudaDeviceGetAttribute(&smem_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, ctx.device));
    d->l2_bytes = (uint64_t)(l2 > 0 ? l2 : 4 << 20);
    /* Half an SM (two resident blocks of 512 threads), less 1 KB the runtime reserves per block. */
    size_t half = smem_sm > 0 ? (size_t)smem_sm / 2 - 1024 : 48 * 1024;
    d->smem_budget = std::min(half, std::max(ctx.smem_optin, ctx.smem_block));
    return TF_OK;
}

/* One tiling uploaded to the device, with its launch parameters. */
template <typename T>
struct dev_tiles {
    tf_sddmm_tiles host = {};
    tf_dev_array<uint32_t> group_nnz, group_rows, group_col0, rows, col;
    tf_dev_array<uint16_t> rloc;
    tf_dev_array<T> sval, out;
    uint32_t Tk = 0, V = 0, Ti = 0;
    bool stage_b = false;
    size_t smem = 0;
    dev_tiles() = default;
    dev_tiles(const dev_tiles &) = delete;
    ~dev_tiles() { tf_sddmm_tiles_free(&host); }
};

uint32_t pow2_ceil(uint32_t x)
{
    uint32_t p = 1;
    while (p < x) p <<= 1;
    return p;
}

/* Tiles for slice width Tk under `scheme`; fails with TF_ERR_RANGE when the
 * slice is too wide for the shared-memory budget. */
template <typename T>
tf_status make_tiles(const tf_csr *S, const tf_sddmm_opts *o, const sddmm_device &dev, uint32_t Kp, uint32_t Tk,
                     bool stage_b, dev_tiles<T> *t)
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
    TF_TRY(tf_sddmm_tiles_build(S, Tj, Ti, max_nnz, &t->host));
    const tf_sddmm_tiles &h = t->host;
    if (h.ngroups > (uint64_t)INT32_MAX)
        return tf_fail(TF_ERR_RANGE, "SDDMM: %llu thread blocks exceed the grid limit", (unsigned long long)h.ngroups);
    TF_TRY(t->group_nnz.upload(h.group_nnz, h.ngroups + 1, "SDDMM group offsets"));
    TF_TRY(t->group_rows.upload(h.group_rows, h.ngroups + 1, "SDDMM group rows"));
    TF_TRY(t->group_col0.upload(h.group_col0, h.ngroups, "SDDMM group columns"));
    TF_TRY(t->rows.upload(h.rows, h.nrows, "SDDMM active rows"));
    TF_TRY(t->col.upload(h.col, h.nnz, "SDDMM columns"));
    TF_TRY(t->rloc.upload(h.rloc, h.nnz, "SDDMM local rows"));
    T *sv = nullptr;
    TF_TRY(TF_ALLOC(sv, h.nnz, "SDDMM values in tile order"));
    for (uint64_t e = 0; e < h.nnz; ++e) sv[e] = (T)S->vals[h.pos[e]];
    tf_status s = t->sval.upload(sv, h.nnz, "SDDMM values");
    tf_free(sv);
    TF_TRY(s);
    TF_TRY(t->out.alloc(h.nnz, "SDDMM output"));
    auto kernel = stage_b ? tf_sddmm_kernel<T, true> : tf_sddmm_kernel<T, false>;
    /* Raise the limit to the whole budget, never to this tiling's size: the
     * Tk auto-tune builds several tilings and must not lower the limit an
     * earlier, larger one launches with. */
    if (t->smem > 48 * 1024)
        TF_CU(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)dev.smem_budget));
    return TF_OK;
}

template <typename T>
tf_status launch(const tf_cuda_ctx &ctx, const dev_tiles<T> &t, const T *A, const T *B, uint32_t Kp, uint32_t ncols,
                 const tf_sddmm_opts *o)
{
    if (t.host.ngroups == 0) return TF_OK;
    tf_sddmm_args<T> a;
    a.group_nnz = t.group_nnz.p;
    a.group_rows = t.group_rows.p;
    a.group_col0 = t.group_col0.p;
    a.rows = t.rows.p;
    a.col = t.col.p;
    a.rloc = t.rloc.p;
    a.sval = t.sval.p;
    a.A = A;
    a.B = B;
    a.out = t.out.p;
    a.Kp = Kp;
    a.Tk = t.Tk;
    a.V = t.V;
    a.tile_j = t.host.tile_j;
    a.ncols = ncols;
    a.scale = o->op == TF_SDDMM_SCALE;
    a.alpha = (T)o->alpha;
    a.beta = (T)o->beta;
    const dim3 grid((unsigned)t.host.ngroups);
    if (t.stage_b) tf_sddmm_kernel<T, true><<<grid, TF_SDDMM_THREADS, t.smem, ctx.stream>>>(a);
    else tf_sddmm_kernel<T, false><<<grid, TF_SDDMM_THREADS, t.smem, ctx.stream>>>(a);
    TF_CU_LAUNCH("tf_sddmm_kernel");
    return TF_OK;
}

/* Slice widths to try: all of Kp, and 32-multiples below it down to 64
 * (at most four), each no wider than the shared memory allows. */
template <typename T>
int tk_candidates(const tf_sddmm_opts *o, uint32_t Kp, const sddmm_device &dev, bool stage_b, uint32_t *out)
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
    for (uint32_t c = tk / 2 / 32 * 32; c >= 64 && n < 4; c = c / 2 / 32 * 32) out[n++] = c;
    return n;
}

template <typename T>
tf_status run(tf_cuda_ctx &ctx, const tf_csr *S, const tf_matrix *A, const tf_matrix *B, const tf_sddmm_opts *o,
              double *P, int warmup, int reps, double *times_ms, tf_sddmm_info *info)
{
    sddmm_device dev;
    TF_TRY(query_device(ctx, &dev));
    const uint32_t Kp = tf_sddmm_padded_k<T>(A->cols);
    const double density = (double)S->nnz / ((double)S->rows * (double)S->cols);
    const bool stage_b = o->algo == TF_SDDMM_ALGO_SM_SM || (o->algo == TF_SDDMM_ALGO_AUTO && density > 0.05);
    tf_dev_array<T> dA, dB;
    TF_TRY(tf_sddmm_upload_padded(dA, A, Kp, "SDDMM A"));
    TF_TRY(tf_sddmm_upload_padded(dB, B, Kp, "SDDMM B"));

    uint32_t cand[4];
    const int nc = tk_candidates<T>(o, Kp, dev, stage_b, cand);
    std::unique_ptr<dev_tiles<T>> best, trial;
    double best_ms = INFINITY;
    tf_status last = TF_OK;
    for (int i = 0; i < nc; ++i) {
        trial.reset(new (std::nothrow) dev_tiles<T>());
        if (!trial) return tf_fail(TF_ERR_NOMEM, "out of memory for SDDMM tiles");
        last = make_tiles<T>(S, o, dev, Kp, cand[i], stage_b, trial.get());
        if (last == TF_ERR_RANGE) continue; /* too wide for shared memory: the next is narrower */
        TF_TRY(last);
        double ms[2] = {0, 0};
        if (nc > 1) {
            const dev_tiles<T> &t = *trial;
            TF_TRY(tf_cuda_time_runs(ctx.stream, 1, 2, ms,
                                      [&] { return launch<T>(ctx, t, dA.p, dB.p, Kp, (uint32_t)S->cols, o); }));
        }
        const double m = std::min(ms[0], ms[1]);
        if (!best || m < best_ms) {
            best_ms = m;
            best = std::move(trial);
        }
    }
    if (!best) return last;
    const dev_tiles<T> &t = *best;
    TF_TRY(tf_cuda_time_runs(ctx.stream, warmup, reps, times_ms,
                              [&] { return launch<T>(ctx, t, dA.p, dB.p, Kp, (uint32_t)S->cols, o); }));
    double *h = nullptr;
    TF_TRY(TF_ALLOC(h, S->nnz, "SDDMM result in tile order"));
    tf_status s = tf_cuda_get_values<T>(h, t.out.p, S->nnz, ctx.stream);
    if (s == TF_OK)
        for (uint64_t e = 0; e < S->nnz; ++e) P[t.host.pos[e]] = h[e];
    tf_free(h);
    if (s == TF_OK && info) {
        memset(info, 0, sizeof *info);
        info->backend = TF_BACKEND_GPU;
        info->algo = t.stage_b ? TF_SDDMM_ALGO_SM_SM : TF_SDDMM_ALGO_SM_L2;
        info->tile_i = t.Ti;
        info->tile_j = t.host.tile_j;
        info->tile_k = t.Tk;
        info->vwarp = t.V;
        info->blocks = t.host.ngroups;
    }
    return s;
}

} // namespace

extern "C" tf_status tf_cuda_sddmm(const tf_csr *S, const tf_matrix *A, const tf_matrix *B, const tf_sddmm_opts *o,
                                   double *P, int warmup, int reps, double *times_ms, tf_sddmm_info *info)
{
    tf_cuda_ctx_guard g;
    TF_TRY(tf_cuda_ctx_init(&g.c, o->device));
    if (o->algo == TF_SDDMM_ALGO_CUSPARSE) {
        if (info) {
            memset(info, 0, sizeof *info);
            info->backend = TF_BACKEND_GPU;
            info->algo = TF_SDDMM_ALGO_CUSPARSE;
        }
        return tf_cuda_sddmm_cusparse(&g.c, S, A, B, o, P, warmup, reps, times_ms);
    }
    if (o->precision == TF_SINGLE) return run<float>(g.c, S, A, B, o, P, warmup, reps, times_ms, info);
    return run<double>(g.c, S, A, B, o, P, warmup, reps, times_ms, info);
}
