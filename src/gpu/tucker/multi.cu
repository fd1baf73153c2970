/* SPDX-License-Identifier: BSD-3-Clause */
/* GPU backend of sparse Tucker over the several GPUs of one process (the
 * context's devices), double precision. Per mode every GPU owns a
 * contiguous range of the rows of Y_(n), cut by non-zeros, and holds the
 * non-zeros of those rows sorted by them (the TTMc's copy, ttmc.cu) and
 * every factor whole; the TTMc of a mode runs on all GPUs at once, each
 * into its rows of Y_(n). The rest meets on the host, in GPU order (the
 * same sums, the same bits, every run):
 * - Y^T Y (C x C): each GPU's syrk of its rows, summed; eigenvectors V on
 *   GPU 0; each GPU's rows of Y V, gathered on GPU 0 for their QR and the
 *   sign rule;
 * - Y Y^T (I <= 4096 rows): the rows of Y gathered on GPU 0, as one GPU;
 * - the new factor from GPU 0 to the others; the core's unfolding G_(n)^T =
 *   sum over GPUs of Y_g^T U_g (their rows), summed on the host.
 * Y V's rows and the new factor go GPU to GPU (cudaMemcpyPeerAsync: over
 * NVLink where the GPUs reach each other, else staged by the runtime); the
 * host copies are of C x C and r x C doubles per mode; the non-zeros never
 * move after the build. */
#include <stdio.h>
#include <string.h>

#include <algorithm>
#include <new>
#include <vector>

#include "fmt/row_counts.h"
#include "gpu/exec/exchange.cuh"
#include "gpu/tucker/common.cuh"
#include "gpu/tucker/multi.cuh"
#include "gpu/tucker/ttmc.cuh"
#include "gpu/tucker/vectors.cuh"
#include "seams/cuda_module.h"

namespace {

/* One GPU's share. */
struct part {
    tf_gpu_dev *dev = nullptr; /* borrowed from the context */
    tf_gpu_ttmc tt; /* per mode the non-zeros of its rows, sorted */
    double *U[TF_GPU_MAX_ORDER] = {nullptr}; /* every factor, whole */
    double *Y = nullptr;                     /* its rows of Y_(n)       */
    double *H = nullptr;                     /* its part of Y^T Y       */
    double *V = nullptr, *Q = nullptr;       /* V; its rows of Y V (column-major) */
    double *Gt = nullptr;                    /* its part of G_(n)^T     */
    double *pieces = nullptr;                /* its Gram's pieces (tf_gpu_gram_scratch) */
    ~part()
    {
        if (dev && dev->device >= 0) tf_gpu_dev_use(dev);
        for (uint32_t m = 0; m < TF_GPU_MAX_ORDER; ++m) tf_gpu_free(U[m]);
        double *bufs[] = {Y, H, V, Q, Gt, pieces};
        for (double *b : bufs) tf_gpu_free(b);
    }
};

struct multi_tucker {
    int n = 0;
    uint32_t N = 0, ymode = 0;
    bool started = false;
    uint64_t dims[TF_GPU_MAX_ORDER] = {0}, ranks[TF_GPU_MAX_ORDER] = {0};
    tf_tucker_svd method[TF_GPU_MAX_ORDER] = {};
    std::vector<uint64_t> lo[TF_GPU_MAX_ORDER]; /* per mode n + 1 row bounds */
    part *p[TF_MAX_GPUS] = {nullptr};
    tf_gpu_lead lead;      /* GPU 0: the whole problem's Gram, vectors, QR */
    double *Yall = nullptr; /* GPU 0: Y_(n) whole, for Y Y^T */
    std::vector<double> h, hsum, hG, core;
    uint64_t copy_bytes = 0;

    uint64_t rows(int g, uint32_t m) const { return lo[m][g + 1] - lo[m][g]; }
    tf_gpu_dev *const *dev_list()
    {
        for (int g = 0; g < n; ++g) devs[g] = p[g]->dev;
        return devs;
    }
    tf_gpu_dev *devs[TF_MAX_GPUS] = {nullptr};
    ~multi_tucker()
    {
        for (int g = n - 1; g >= 0; --g) delete p[g];
        if (lead.dev) tf_gpu_dev_use(lead.dev); /* GPU 0's: Yall, then the member lead */
        tf_gpu_free(Yall);
    }
};

tf_status check(const multi_tucker *c, uint32_t mode, bool ymode)
{
    if (mode >= c->N) return tf_fail(TF_ERR_ARG, "GPU Tucker backend: mode %u is outside 1..%u", mode + 1, c->N);
    if (!c->started) return tf_fail(TF_ERR_ARG, "GPU Tucker backend: init was not called");
    if (ymode && c->ymode != mode)
        return tf_fail(TF_ERR_ARG, "GPU Tucker backend: mode %u's vectors or core before its TTMc", mode + 1);
    return TF_OK;
}

/* Every GPU's work stream done. */
tf_status sync_all(multi_tucker *c)
{
    for (int g = 0; g < c->n; ++g) {
        TF_TRY(tf_gpu_dev_use(c->p[g]->dev));
        TF_CU(cudaStreamSynchronize(c->p[g]->dev->stream));
    }
    return TF_OK;
}

/* Factor `mode` from GPU 0 to the others, GPU to GPU (every GPU idle
 * first: none still reads its old copy). */
tf_status share_factor(multi_tucker *c, uint32_t mode)
{
    const uint64_t len = c->dims[mode] * c->ranks[mode];
    TF_TRY(sync_all(c));
    part *p0 = c->p[0];
    TF_TRY(tf_gpu_dev_use(p0->dev));
    for (int g = 1; g < c->n; ++g)
        TF_CU(cudaMemcpyPeerAsync(c->p[g]->U[mode], c->p[g]->dev->device, p0->U[mode], p0->dev->device,
                                  len * sizeof(double), p0->dev->stream));
    return sync_all(c);
}

tf_status op_init(void *ctx, const tf_matrix *factors, uint32_t skip)
{
    multi_tucker *c = (multi_tucker *)ctx;
    for (uint32_t m = 0; m < c->N; ++m)
        if (m != skip && (factors[m].rows != c->dims[m] || factors[m].cols != c->ranks[m] || !factors[m].data))
            return tf_fail(TF_ERR_ARG, "GPU Tucker backend: start factor %u is %llu x %llu, expected %llu x %llu",
                           m + 1, (unsigned long long)factors[m].rows, (unsigned long long)factors[m].cols,
                           (unsigned long long)c->dims[m], (unsigned long long)c->ranks[m]);
    for (int g = 0; g < c->n; ++g) {
        part *q = c->p[g];
        TF_TRY(tf_gpu_dev_use(q->dev));
        for (uint32_t m = 0; m < c->N; ++m) {
            const uint64_t len = c->dims[m] * c->ranks[m];
            if (m == skip) TF_CU(cudaMemsetAsync(q->U[m], 0, len * sizeof(double), q->dev->stream));
            else TF_TRY(tf_gpu_put_values<double>(q->U[m], factors[m].data, len, q->dev->stream));
        }
    }
    TF_TRY(sync_all(c));
    c->started = true;
    c->ymode = c->N;
    return TF_OK;
}

tf_status op_ttmc(void *ctx, uint32_t mode)
{
    multi_tucker *c = (multi_tucker *)ctx;
    TF_TRY(check(c, mode, false));
    for (int g = 0; g < c->n; ++g) { /* queued on every GPU, then waited for */
        part *q = c->p[g];
        TF_TRY(tf_gpu_dev_use(q->dev));
        TF_TRY(tf_gpu_ttmc_run(&q->tt, mode, q->U, q->Y, c->lo[mode][g], c->rows(g, mode)));
    }
    TF_TRY(sync_all(c));
    c->ymode = mode;
    return TF_OK;
}

/* Y Y^T: the rows of Y gathered on GPU 0, then as one GPU. */
tf_status lead_rows(multi_tucker *c, uint32_t mode, uint64_t I, uint64_t C, uint64_t r)
{
    for (int g = 0; g < c->n; ++g) {
        part *q = c->p[g];
        const uint64_t k = c->rows(g, mode);
        if (!k) continue;
        TF_TRY(tf_gpu_dev_use(q->dev));
        TF_TRY(tf_gpu_get_values<double>(c->h.data() + c->lo[mode][g] * C, q->Y, k * C, q->dev->stream));
    }
    part *p0 = c->p[0];
    TF_TRY(tf_gpu_dev_use(p0->dev));
    TF_TRY(tf_gpu_put_values<double>(c->Yall, c->h.data(), I * C, p0->dev->stream));
    return tf_gpu_lead_run(&c->lead, c->Yall, I, C, r, TF_TUCKER_SVD_ROW_GRAM, p0->U[mode]);
}

/* Y^T Y: the GPUs' parts summed in order, V on GPU 0, each GPU's rows of
 * Y V, their QR on GPU 0. */
tf_status lead_cols(multi_tucker *c, uint32_t mode, uint64_t I, uint64_t C, uint64_t r)
{
    for (int g = 0; g < c->n; ++g) {
        part *q = c->p[g];
        if (!c->rows(g, mode)) continue;
        TF_TRY(tf_gpu_dev_use(q->dev));
        TF_TRY(tf_gpu_gram(q->dev, q->Y, c->rows(g, mode), C, TF_TUCKER_SVD_COL_GRAM, q->H, q->pieces));
    }
    std::fill(c->hsum.begin(), c->hsum.begin() + C * C, 0.0);
    for (int g = 0; g < c->n; ++g) {
        part *q = c->p[g];
        if (!c->rows(g, mode)) continue;
        TF_TRY(tf_gpu_dev_use(q->dev));
        TF_TRY(tf_gpu_get_values<double>(c->h.data(), q->H, C * C, q->dev->stream));
        for (uint64_t e = 0; e < C * C; ++e) c->hsum[e] += c->h[e];
    }
    part *p0 = c->p[0];
    TF_TRY(tf_gpu_dev_use(p0->dev));
    TF_TRY(tf_gpu_put_values<double>(c->lead.G, c->hsum.data(), C * C, p0->dev->stream));
    TF_TRY(tf_gpu_lead_eig(&c->lead, C, r, TF_TUCKER_SVD_COL_GRAM, nullptr));
    TF_TRY(tf_gpu_get_values<double>(c->hsum.data(), c->lead.V, C * r, p0->dev->stream)); /* V, C x r */
    for (int g = 0; g < c->n; ++g) {
        part *q = c->p[g];
        const uint64_t k = c->rows(g, mode);
        if (!k) continue;
        TF_TRY(tf_gpu_dev_use(q->dev));
        TF_TRY(tf_gpu_put_values<double>(q->V, c->hsum.data(), C * r, q->dev->stream));
        TF_TRY(tf_gpu_times_v(q->dev, q->Y, k, C, q->V, r, q->Q));
    }
    for (int g = 0; g < c->n; ++g) { /* Y V whole on GPU 0, column-major I x r: column by column */
        part *q = c->p[g];
        const uint64_t k = c->rows(g, mode), at = c->lo[mode][g];
        if (!k) continue;
        TF_TRY(tf_gpu_dev_use(q->dev));
        for (uint64_t j = 0; j < r; ++j)
            TF_CU(cudaMemcpyPeerAsync(c->lead.Q + j * I + at, p0->dev->device, q->Q + j * k, q->dev->device,
                                      k * sizeof(double), q->dev->stream));
    }
    TF_TRY(sync_all(c));
    TF_TRY(tf_gpu_dev_use(p0->dev));
    return tf_gpu_lead_qr(&c->lead, I, r, p0->U[mode]);
}

tf_status op_leading(void *ctx, uint32_t mode, tf_tucker_svd *method)
{
    multi_tucker *c = (multi_tucker *)ctx;
    TF_TRY(check(c, mode, true));
    const uint64_t I = c->dims[mode], C = tf_tucker_cols(c->N, c->ranks, mode), r = c->ranks[mode];
    *method = c->method[mode];
    if (c->method[mode] == TF_TUCKER_SVD_ROW_GRAM) TF_TRY(lead_rows(c, mode, I, C, r));
    else TF_TRY(lead_cols(c, mode, I, C, r));
    return share_factor(c, mode);
}

tf_status op_core(void *ctx, uint32_t mode, double *norm2)
{
    multi_tucker *c = (multi_tucker *)ctx;
    TF_TRY(check(c, mode, true));
    const uint64_t C = tf_tucker_cols(c->N, c->ranks, mode), r = c->ranks[mode];
    const double one = 1.0, zero = 0.0;
    for (int g = 0; g < c->n; ++g) { /* G_(n)^T part = Y_g^T U_g (C x r column-major) */
        part *q = c->p[g];
        const uint64_t k = c->rows(g, mode);
        if (!k) continue;
        TF_TRY(tf_gpu_dev_use(q->dev));
        TF_CUBLAS(cublasDgemm(q->dev->blas, CUBLAS_OP_N, CUBLAS_OP_T, (int)C, (int)r, (int)k, &one, q->Y, (int)C,
                              q->U[mode] + c->lo[mode][g] * r, (int)r, &zero, q->Gt, (int)C));
    }
    std::fill(c->hsum.begin(), c->hsum.begin() + r * C, 0.0);
    for (int g = 0; g < c->n; ++g) {
        part *q = c->p[g];
        if (!c->rows(g, mode)) continue;
        TF_TRY(tf_gpu_dev_use(q->dev));
        TF_TRY(tf_gpu_get_values<double>(c->hG.data(), q->Gt, r * C, q->dev->stream));
        for (uint64_t e = 0; e < r * C; ++e) c->hsum[e] += c->hG[e];
    }
    *norm2 = tf_tucker_core_place(c->N, c->ranks, mode, c->hsum.data(), c->core.data());
    return TF_OK;
}

tf_status op_result(void *ctx, tf_ttensor *out)
{
    multi_tucker *c = (multi_tucker *)ctx;
    TF_TRY(check(c, 0, false));
    TF_TRY(tf_gpu_dev_use(c->p[0]->dev));
    for (uint32_t m = 0; m < c->N; ++m) {
        if (out->factors[m].rows != c->dims[m] || out->factors[m].cols != c->ranks[m])
            return tf_fail(TF_ERR_ARG, "GPU Tucker backend: result factor %u has the wrong shape", m + 1);
        TF_TRY(tf_gpu_get_values<double>(out->factors[m].data, c->p[0]->U[m], c->dims[m] * c->ranks[m],
                                         c->p[0]->dev->stream));
    }
    memcpy(out->core, c->core.data(), c->core.size() * sizeof(double));
    return TF_OK;
}

void op_destroy(void *ctx)
{
    delete (multi_tucker *)ctx;
}

const tf_tucker_backend_ops multi_ops = {op_init, op_ttmc, op_leading, op_core, op_result, op_destroy};

/* Mode m's rows cut into n contiguous ranges of about equal non-zeros
 * (lo: n + 1 bounds), and where each range's non-zeros lie in the order
 * stably sorted by the mode: first[g] (the non-zeros of the rows before)
 * and count[g]. */
void cut_rows(const tf_tensor *X, uint32_t m, int n, std::vector<uint64_t> &lo, uint64_t *first, uint64_t *count)
{
    const uint64_t I = X->dims[m];
    std::vector<uint64_t> per(I, 0);
    tf_count_rows(X, m, 0, per.data());
    lo.assign((size_t)n + 1, I);
    lo[0] = 0;
    uint64_t seen = 0, row = 0;
    first[0] = 0;
    for (int g = 1; g < n; ++g) {
        const uint64_t want = X->nnz * (uint64_t)g / (uint64_t)n;
        while (row < I && seen + per[row] <= want) seen += per[row++];
        lo[g] = std::max(row, lo[g - 1]);
        first[g] = seen;
        count[g - 1] = first[g] - first[g - 1];
    }
    count[n - 1] = X->nnz - first[n - 1];
}

tf_status build(multi_tucker *c, const tf_tensor *X, const tf_tucker_opts *o, char *desc, size_t desc_len)
{
    const uint32_t N = X->order;
    const int n = c->n;
    c->N = N;
    c->ymode = N;
    uint64_t I[TF_GPU_MAX_ORDER], C[TF_GPU_MAX_ORDER], core = 1, hmax = 1, yall = 1;
    uint64_t ymax[TF_MAX_GPUS] = {0}, qmax[TF_MAX_GPUS] = {0}, pmax[TF_MAX_GPUS] = {0}, gram = 1, vmax = 1, gmax = 1;
    uint64_t first[TF_MAX_GPUS][TF_GPU_MAX_ORDER], count[TF_MAX_GPUS][TF_GPU_MAX_ORDER]; /* GPU g's part of each mode's order */
    for (uint32_t m = 0; m < N; ++m) {
        c->dims[m] = I[m] = X->dims[m];
        c->ranks[m] = o->ranks[m];
        C[m] = tf_tucker_cols(N, o->ranks, m);
        c->method[m] = tf_tucker_svd_choose(I[m], C[m], o->svd);
        if (c->method[m] != TF_TUCKER_SVD_ROW_GRAM && c->method[m] != TF_TUCKER_SVD_COL_GRAM)
            return tf_fail(TF_ERR_UNAVAILABLE, "tucker: the leading vectors of Y_(%u) (%llu x %llu) by the subspace "
                           "method are not on the GPU yet (the CPU runs it: --device cpu)", m + 1,
                           (unsigned long long)I[m], (unsigned long long)C[m]);
        core *= o->ranks[m];
        uint64_t f[TF_MAX_GPUS], k[TF_MAX_GPUS];
        cut_rows(X, m, n, c->lo[m], f, k);
        for (int g = 0; g < n; ++g) {
            first[g][m] = f[g];
            count[g][m] = k[g];
        }
        for (int g = 0; g < n; ++g) {
            ymax[g] = std::max(ymax[g], c->rows(g, m) * C[m]);
            qmax[g] = std::max(qmax[g], c->rows(g, m) * o->ranks[m]);
            pmax[g] = std::max(pmax[g], tf_gpu_gram_scratch(c->p[g]->dev, c->rows(g, m), C[m], c->method[m]));
        }
        gmax = std::max(gmax, o->ranks[m] * C[m]);
        vmax = std::max(vmax, C[m] * o->ranks[m]);
        /* host: the Grams' parts (C x C), Y whole where it is gathered (I x C,
         * I <= 4096) */
        if (c->method[m] == TF_TUCKER_SVD_COL_GRAM) {
            gram = std::max(gram, C[m] * C[m]);
            hmax = std::max(hmax, C[m] * C[m]);
        } else {
            yall = std::max(yall, I[m] * C[m]);
            hmax = std::max(hmax, I[m] * C[m]);
        }
    }
    uint64_t dense[TF_MAX_GPUS] = {0}; /* bytes of each GPU's dense arrays */
    for (int g = 0; g < n; ++g) {
        uint64_t factors = 0;
        for (uint32_t m = 0; m < N; ++m) factors += I[m] * o->ranks[m];
        dense[g] = (factors + std::max<uint64_t>(ymax[g], 1) + gram + vmax + std::max<uint64_t>(qmax[g], 1) + gmax +
                    pmax[g] + (g == 0 ? yall : 0)) * sizeof(double);
    }
    /* per GPU, per mode the non-zeros of its rows sorted: X uploaded once
     * per GPU, sorted by each mode there, the GPU's range of that order
     * kept (its rows are one range of it) -- before the dense arrays, so
     * the sort finds its scratch room (as on one GPU) */
    for (int g = 0; g < n; ++g) {
        TF_TRY(tf_gpu_dev_use(c->p[g]->dev));
        TF_TRY(tf_gpu_ttmc_build(c->p[g]->dev, X, o->ranks, NULL, dense[g], first[g], count[g], &c->p[g]->tt));
        c->copy_bytes += c->p[g]->tt.copy_bytes;
    }
    for (int g = 0; g < n; ++g) {
        part *q = c->p[g];
        TF_TRY(tf_gpu_dev_use(q->dev));
        TF_TRY(tf_gpu_dev_blas(q->dev));
        uint64_t budget = 0;
        TF_TRY(tf_gpu_budget(q->dev, &budget));
        if (dense[g] > budget)
            return tf_fail(TF_ERR_NOMEM, "GPU Tucker on GPU %d: the factors, its rows of Y_(n) and the Grams (%llu "
                           "bytes) do not fit the %llu bytes the GPU has for them", q->dev->device,
                           (unsigned long long)dense[g], (unsigned long long)budget);
        for (uint32_t m = 0; m < N; ++m) TF_TRY(tf_gpu_alloc(&q->U[m], I[m] * o->ranks[m], "Tucker factor"));
        TF_TRY(tf_gpu_alloc(&q->Y, std::max<uint64_t>(ymax[g], 1), "Tucker rows of Y_(n)"));
        TF_TRY(tf_gpu_alloc(&q->H, gram, "Tucker Gram part"));
        TF_CU(cudaMemsetAsync(q->H, 0, gram * sizeof(double), q->dev->stream)); /* syrk writes the upper triangle */
        TF_TRY(tf_gpu_alloc(&q->V, vmax, "Tucker right vectors"));
        TF_TRY(tf_gpu_alloc(&q->Q, std::max<uint64_t>(qmax[g], 1), "Tucker rows of Y V"));
        TF_TRY(tf_gpu_alloc(&q->Gt, gmax, "Tucker core part"));
        if (pmax[g]) TF_TRY(tf_gpu_alloc(&q->pieces, pmax[g], "Tucker Gram pieces"));
    }
    TF_TRY(tf_peer_enable_reachable(c->dev_list(), n)); /* Y V and the factors GPU to GPU */
    TF_TRY(tf_gpu_dev_use(c->p[0]->dev));
    TF_TRY(tf_gpu_lead_alloc(&c->lead, c->p[0]->dev, N, I, C, o->ranks, c->method));
    TF_TRY(tf_gpu_alloc(&c->Yall, yall, "Tucker Y_(n) gathered"));
    try {
        c->h.assign(hmax, 0.0);
        c->hsum.assign(std::max(gram, gmax), 0.0);
        c->hG.assign(gmax, 0.0);
        c->core.assign(core, 0.0);
    } catch (const std::bad_alloc &) {
        return tf_fail(TF_ERR_NOMEM, "out of host memory for the several-GPU Tucker backend's buffers");
    }
    TF_TRY(sync_all(c));
    snprintf(desc, desc_len, "%d GPUs, fp64, each the non-zeros of its rows per mode (%.1f MB of copies)", n,
             (double)c->copy_bytes / 1e6);
    return TF_OK;
}

} // namespace

tf_status tf_gpu_tucker_multi_create(const tf_tensor *X, const tf_tucker_opts *o, tf_tucker_backend *out)
{
    memset(out, 0, sizeof *out);
    tf_context *ctx = o->context;
    const int n = ctx->opts.ndevices;
    if (n < 2 || n > TF_MAX_GPUS) return tf_fail(TF_ERR_ARG, "GPU Tucker backend: %d GPUs", n);
    multi_tucker *c = new (std::nothrow) multi_tucker();
    if (!c) return tf_fail(TF_ERR_NOMEM, "out of memory creating the GPU Tucker backend");
    tf_status s = TF_OK;
    for (int g = 0; g < n && s == TF_OK; ++g) {
        c->p[g] = new (std::nothrow) part();
        if (!c->p[g]) s = tf_fail(TF_ERR_NOMEM, "out of memory creating the GPU Tucker backend");
        else s = tf_gpu_dev_at(ctx, g, &c->p[g]->dev);
        c->n = g + 1;
    }
    if (s == TF_OK) s = build(c, X, o, out->desc, sizeof out->desc);
    if (s != TF_OK) {
        delete c;
        memset(out, 0, sizeof *out);
        return s;
    }
    out->ops = &multi_ops;
    out->ctx = c;
    return TF_OK;
}
