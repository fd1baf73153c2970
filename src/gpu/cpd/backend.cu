/* SPDX-License-Identifier: BSD-3-Clause */
/* GPU backend of CP-ALS (the vtable of src/seams/cpd.h): factors,
 * MTTKRP output, Grams, lambda and all work on the device; the host sees
 * only scalars (Cholesky info and a condition estimate in solve, the two
 * fit terms, a non-finite flag).
 *
 * Same steps and order of operations as the CPU backend (src/cpu/cpd_cpu.c,
 * dense.c): M = MTTKRP through the plan's engine; V = Hadamard of the other
 * Grams; A = M V^-1 by Cholesky, falling back to the pseudo-inverse from
 * syevd with eigenvalues <= rcond * max|w| dropped; normalisation;
 * G = A^T A; fit terms as on the CPU. Positive definiteness: the CPU uses
 * LAPACK's condition estimate (dpocon); the GPU takes the Cholesky info
 * plus (min/max Cholesky diagonal)^2 > rcond, the same threshold on a lower
 * bound of the condition number.
 *
 * R <= TF_GPU_SMALL_RANK (the common case) avoids cuSOLVER/cuBLAS calls
 * beyond one gemm, and host round trips altogether:
 *   normalisation is deferred: a factor stays as the solve wrote it, with
 *     a column scale vector (see tf_gpu_small_solve), so no pass rescales
 *     it; the next solves fold the scales into their R x R matrix, the fit
 *     into its weights, and result() applies them once at the end;
 *   solve:     one block forms V and V^-1 (Gauss-Jordan in shared memory,
 *              double) or, when V is not positive definite enough, its
 *              pseudo-inverse (Jacobi) — decided on the device; then
 *              A_raw = M W by one gemm (no copy, no triangular solves);
 *   normalize: one read of A_raw gives the Gram's slab partials and the
 *              column maxima; lambda, the scales and G follow from them
 *              (in the sweep, for long factors at rank 32, the apply's own
 *              pass forms them: tf_gpu_apply_gram);
 *   gram:      nothing more when normalize ran for the mode.
 * Larger R: cuSOLVER potrf/potrs (the M -> A copy overlapped on the side
 * stream), normalisation in place, and the Gram by cuBLAS gemm
 * (tuning.cpd_gram_syrk: syrk, which is far slower for tall factors).
 * tuning.cpd_cusolver forces the large-R path.
 *
 * sweep() queues a whole iteration with one synchronisation at its end
 * (the fit scalars) and times its steps with CUDA events; the per-step
 * entry points synchronise after each step instead (the driver's wall
 * clock splits them). A non-finite value is
 * flagged on the device and reported at the next synchronisation.
 *
 * AO-ADMM (op_update's other kind; kernels in admm.cu): the class's admm_*
 * steps on this GPU's rows and tf_gpu_admm_update, the loop over one GPU or
 * several (multi.cu) that queues the inner iterations in batches behind a
 * device stop flag. */
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <new>

#include "gpu/cpd/admm.cuh"
#include "gpu/cpd/backend.cuh"
#include "gpu/cpd/dense.cuh"
#include "gpu/exec/placement.cuh"
#include "gpu/engine/engine.cuh"
#include "seams/cuda_module.h"
extern "C" {
#include "seams/cpd.h"
#include "core/alloc.h"
}

namespace {

/* ---- typed cuBLAS / cuSOLVER entry points */
template <typename T> struct blas;
template <> struct blas<double> {
    static constexpr cudaDataType type = CUDA_R_64F;
    static constexpr double eps = DBL_EPSILON;
    static cublasStatus_t syrk(cublasHandle_t h, int64_t n, int64_t k, const double *A, double *C)
    {
        const double one = 1.0, zero = 0.0;
        return cublasDsyrk_64(h, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, n, k, &one, A, n, &zero, C, n);
    }
    static cublasStatus_t gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m,
                               int64_t n, int64_t k, const double *A, const double *B, double *C)
    {
        const double one = 1.0, zero = 0.0;
        return cublasDgemm_64(h, ta, tb, m, n, k, &one, A, ta == CUBLAS_OP_N ? m : k, B,
                              tb == CUBLAS_OP_N ? k : n, &zero, C, m);
    }
};
template <> struct blas<float> {
    static constexpr cudaDataType type = CUDA_R_32F;
    static constexpr double eps = FLT_EPSILON;
    static cublasStatus_t syrk(cublasHandle_t h, int64_t n, int64_t k, const float *A, float *C)
    {
        const float one = 1.f, zero = 0.f;
        return cublasSsyrk_64(h, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, n, k, &one, A, n, &zero, C, n);
    }
    static cublasStatus_t gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m,
                               int64_t n, int64_t k, const float *A, const float *B, float *C)
    {
        const float one = 1.f, zero = 0.f;
        return cublasSgemm_64(h, ta, tb, m, n, k, &one, A, ta == CUBLAS_OP_N ? m : k, B,
                              tb == CUBLAS_OP_N ? k : n, &zero, C, m);
    }
};

template <typename T>
struct gpu_cpd : gpu_cpd_base {
    tf_gpu_dev *ctx = nullptr; /* the context's GPU (borrowed) */
    tf_gpu_engine *eng = nullptr;
    uint32_t order = 0;
    uint64_t R = 0, maxdim = 0;
    uint64_t dims[TF_MAX_ORDER] = {0};
    /* One GPU of several (setup_sharded): mode m's MTTKRP runs on the
     * shard engine part_eng[m] and gives this GPU's rows [lo[m], lo[m] +
     * rows[m]) of M (M holds those rows only); the solve writes them into
     * A[m]. One GPU: lo 0, rows = dims, eng for every mode. */
    bool sharded = false;
    bool has_shard[TF_MAX_ORDER] = {false};
    tf_gpu_engine *part_eng[TF_MAX_ORDER] = {nullptr}; /* NULL where the GPU has no rows */
    /* the shard's second part where it is split (multi.cu's overlap): the
     * non-zeros that need other GPUs' rows of the previous mode; it adds
     * into M after part_eng has written it */
    tf_gpu_engine *part_eng2[TF_MAX_ORDER] = {nullptr};
    uint64_t lo[TF_MAX_ORDER] = {0}, rows[TF_MAX_ORDER] = {0}, maxrows = 0;
    tf_gpu_engine *engine(uint32_t mode) const { return sharded ? part_eng[mode] : eng; }
    T *own(uint32_t mode) const { return A[mode] + lo[mode] * R; }
    T *A[TF_MAX_ORDER] = {nullptr};     /* factors (small path: unscaled, A_raw)  */
    T *scale[TF_MAX_ORDER] = {nullptr}; /* column scales: factor = A diag(scale) */
    T *G[TF_MAX_ORDER] = {nullptr};     /* Grams of the scaled factors            */
    T *M = nullptr, *V = nullptr, *L = nullptr, *Q = nullptr, *P = nullptr;
    T *w = nullptr, *lambda = nullptr, *inv = nullptr;
    double *partial = nullptr;
    tf_gpu_scalars *d_sc = nullptr, *h_sc = nullptr;
    cusolverDnParams_t params = nullptr;
    void *d_work = nullptr, *h_work = nullptr;
    size_t d_work_bytes = 0, h_work_bytes = 0;
    uint32_t m_mode = 0;  /* mode whose MTTKRP M holds (order: none) */
    bool gram_syrk = false; /* R > TF_GPU_SMALL_RANK: cuBLAS syrk instead of gemm */
    bool small = false;   /* R <= TF_GPU_SMALL_RANK: one-block solve, deferred normalisation */
    T *Winv = nullptr; /* diag(P) V^-1 (small path) */
    double *gpart = nullptr, *graw = nullptr, *jq = nullptr; /* Gram partials, sum, Jacobi scratch */
    unsigned *counter = nullptr; /* last-block counters: [0] Gram, [1] fit terms */
    uint32_t gram_pending = TF_MAX_ORDER; /* mode whose G normalize already formed */
    unsigned pinv_seen = 0; /* device pinv count already reported */
    cudaEvent_t copied = nullptr, m_done = nullptr; /* side-stream M -> A copy; M is complete */
    cudaEvent_t ev[2 * TF_MAX_ORDER + 2] = {nullptr}; /* sweep step boundaries */
    cudaEvent_t fork_ev[TF_MAX_ORDER] = {nullptr}, join_ev[TF_MAX_ORDER] = {nullptr}; /* small sweep */
    /* The small sweep records its step events on a stream of their own
     * (see mark): in a graph each event record is a node, and eight of
     * them on the work stream cost uber-apr14 ~20 us per iteration. */
    cudaStream_t tstream = nullptr;
    cudaEvent_t tick = nullptr; /* the edge between the two */
    /* The small-rank sweep captured as a CUDA graph, per max_norm (0/1):
     * one launch per iteration instead of ~6 per mode. tuning.cpd_graph = 0
     * turns it off; a failed capture falls back to direct launches. */
    cudaGraphExec_t graph[2] = {nullptr, nullptr};
    bool use_graph = false;
    /* small-rank apply A = M W by tf_gpu_small_apply (short factors) rather
     * than cuBLAS: in single precision (measured faster there);
     * tuning.cpd_apply forces one */
    bool custom_apply = false;

    /* AO-ADMM (admm.cuh): the run's update (setup; ALS when none); per mode
     * with a proximal operator the scaled dual U of this GPU's rows, kept
     * from one outer iteration to the next in the normalised factor's scale
     * (normalize divides it by lambda, as the CPU backend does) and made
     * before the mode's engine, so that placement sees its memory; warm[m]:
     * the mode has had its first update. B, Ht: the inner iterations'
     * scratch (this GPU's rows). The R x R work in double: aV = V (+ l2 I),
     * aL the Cholesky / eigenvector work, aX, aY inverses, aw eigenvalues,
     * ap the other modes' scales' product; Wls = diag(ap) V^-1 and Wrho =
     * (V + rho I)^-1 in T for the gemms; apart the prox step's block sums;
     * table: the residual rows of every GPU (admm_parts, this one's is
     * admm_row); d_as / h_as the state. */
    tf_cpd_update upd = tf_cpd_update();
    T *U[TF_MAX_ORDER] = {nullptr};
    bool warm[TF_MAX_ORDER] = {false};
    T *B = nullptr, *Ht = nullptr;
    uint64_t scratch_rows = 0;
    double *aV = nullptr, *aL = nullptr, *aX = nullptr, *aY = nullptr, *aw = nullptr, *ap = nullptr;
    T *Wls = nullptr, *Wrho = nullptr;
    double *apart = nullptr, *table = nullptr;
    unsigned *acount = nullptr; /* the fused inner iteration's last-block counter */
    uint32_t admm_parts = 1, admm_row = 0;
    int admm_nonneg = 0; /* the current update's projection */
    tf_gpu_admm_state *d_as = nullptr, *h_as = nullptr;
    void *a_dwork = nullptr, *a_hwork = nullptr;
    size_t a_dbytes = 0, a_hbytes = 0;

    ~gpu_cpd() override
    {
        if (ctx->device >= 0) cudaSetDevice(ctx->device);
        for (uint32_t m = 0; m < TF_MAX_ORDER; ++m) {
            tf_gpu_free(A[m]);
            tf_gpu_free(G[m]);
            tf_gpu_free(scale[m]);
        }
        T *bufs[] = {M, V, L, Q, P, w, lambda, inv};
        for (T *b : bufs) tf_gpu_free(b);
        tf_gpu_free(partial);
        tf_gpu_free(Winv);
        tf_gpu_free(gpart);
        tf_gpu_free(graw);
        tf_gpu_free(jq);
        tf_gpu_free(counter);
        tf_gpu_free(d_sc);
        tf_gpu_free(d_work);
        if (h_sc) cudaFreeHost(h_sc);
        tf_free(h_work);
        for (T *u : U) tf_gpu_free(u);
        T *abufs[] = {B, Ht, Wls, Wrho};
        for (T *b : abufs) tf_gpu_free(b);
        double *dbufs[] = {aV, aL, aX, aY, aw, ap, apart, table};
        for (double *b : dbufs) tf_gpu_free(b);
        tf_gpu_free(d_as);
        tf_gpu_free(acount);
        tf_gpu_free(a_dwork);
        if (h_as) cudaFreeHost(h_as);
        tf_free(a_hwork);
        if (params) cusolverDnDestroyParams(params);
        if (copied) cudaEventDestroy(copied);
        if (m_done) cudaEventDestroy(m_done);
        for (cudaGraphExec_t g : graph)
            if (g) cudaGraphExecDestroy(g);
        for (cudaEvent_t e : ev)
            if (e) cudaEventDestroy(e);
        for (uint32_t m = 0; m < TF_MAX_ORDER; ++m) {
            if (fork_ev[m]) cudaEventDestroy(fork_ev[m]);
            if (join_ev[m]) cudaEventDestroy(join_ev[m]);
        }
        if (tick) cudaEventDestroy(tick);
        if (tstream) cudaStreamDestroy(tstream);
        delete eng;
        for (tf_gpu_engine *e : part_eng) delete e;
        for (tf_gpu_engine *e : part_eng2) delete e;
    }

    tf_status setup(const tf_tensor *X, const tf_cpd_opts *o, char *desc, size_t len) override
    {
        TF_TRY(tf_gpu_dev_of(o->context, &ctx));
        shape(X, o);
        for (uint32_t m = 0; m < order; ++m) TF_TRY(admm_rows(m, dims[m])); /* before the engine's placement */
        char why[128];
        TF_TRY(tf_gpu_engine_create(ctx, X, o->format, o->precision, R, &eng, why, sizeof why));
        tf_gpu_describe_engine(desc, len, eng, sizeof(T) == 4 ? TF_SINGLE : TF_DOUBLE, why);
        return TF_OK;
    }

    tf_status setup_sharded(tf_gpu_dev *c, const tf_tensor *X, const tf_cpd_opts *o) override
    {
        ctx = c;
        sharded = true;
        shape(X, o);
        maxrows = 0;
        return tf_gpu_dev_use(ctx);
    }

    tf_status add_shard(uint32_t mode, const tf_gpu_shard *shard, const tf_gpu_shard *remote, uint64_t first,
                        uint64_t n, const tf_cpd_opts *o, char *desc, size_t len) override
    {
        const tf_tensor *part = shard->tensor();
        if (!sharded || mode >= order || first + n > dims[mode] || (n && (part->order != order || part->dims[mode] != n)))
            return tf_fail(TF_ERR_ARG, "GPU CP-ALS backend: shard of mode %u does not fit the tensor", mode + 1);
        TF_TRY(tf_gpu_dev_use(ctx));
        lo[mode] = first;
        rows[mode] = n;
        has_shard[mode] = true;
        if (n > maxrows) maxrows = n;
        if (len) desc[0] = 0;
        if (!n) return TF_OK; /* no rows here (a mode shorter than the GPUs): nothing to compute */
        TF_TRY(admm_rows(mode, n)); /* before the engine's placement */
        TF_TRY(tf_gpu_engine_create_shard(ctx, shard, mode, o->precision, R, &part_eng[mode]));
        tf_gpu_describe_engine(desc, len, part_eng[mode], sizeof(T) == 4 ? TF_SINGLE : TF_DOUBLE, "");
        if (remote && remote->nnz()) {
            TF_TRY(tf_gpu_engine_create_shard(ctx, remote, mode, o->precision, R, &part_eng2[mode]));
            part_eng2[mode]->accumulate = true;
        }
        return TF_OK;
    }

    /* order, rank, dims and the tuning choices read at setup */
    void shape(const tf_tensor *X, const tf_cpd_opts *o)
    {
        order = X->order;
        R = o->rank;
        for (uint32_t m = 0; m < order; ++m) {
            dims[m] = X->dims[m];
            rows[m] = dims[m];
            lo[m] = 0;
            if (dims[m] > maxdim) maxdim = dims[m];
        }
        maxrows = maxdim;
        m_mode = order;
        upd = tf_cpd_update();
        upd.kind = TF_CPD_UPDATE_ALS;
        if (o->update) upd = *o->update; /* the front end's resolved copy */
        const tf_tuning &tune = ctx->tune;
        small = R <= TF_GPU_SMALL_RANK && !tune.cpd_cusolver;
        gram_syrk = tune.cpd_gram_syrk != 0;
        apply_gram_env = tune.cpd_apply_gram < 0 ? -1 : tune.cpd_apply_gram != 0;
        if (tune.cpd_gram_solve_rows >= 0) {
            const int64_t n = tune.cpd_gram_solve_rows;
            gram_solve_rows = n > (int64_t)TF_GPU_GRAM_SOLVE_MAX_ROWS ? TF_GPU_GRAM_SOLVE_MAX_ROWS : (uint64_t)n;
        }
    }

    tf_status check_mode(uint32_t mode) const
    {
        if (mode >= order)
            return tf_fail(TF_ERR_ARG, "GPU CP-ALS backend: mode %u is outside 1..%u", mode + 1, order);
        if (!M) return tf_fail(TF_ERR_ARG, "GPU CP-ALS backend: init was not called");
        if (sharded && !has_shard[mode])
            return tf_fail(TF_ERR_ARG, "GPU CP-ALS backend: mode %u has no shard", mode + 1);
        return tf_gpu_dev_use(ctx);
    }

    /* Copies the scalars to the host and waits; a flagged non-finite value fails. */
    tf_status sync_scalars()
    {
        TF_CU(cudaMemcpyAsync(h_sc, d_sc, sizeof *h_sc, cudaMemcpyDeviceToHost, ctx->stream));
        TF_CU(cudaStreamSynchronize(ctx->stream));
        if (h_sc->nonfinite)
            return tf_fail(TF_ERR_NUMERIC, "GPU CP-ALS: a factor, Gram matrix or fit term is not "
                                           "finite; the factors diverged");
        return TF_OK;
    }

    /* Pseudo-inverse solves the device counted since the last call (after sync_scalars). */
    unsigned take_pinv()
    {
        const unsigned d = h_sc->pinv - pinv_seen;
        pinv_seen = h_sc->pinv;
        return d;
    }

    /* V positive definite enough for Cholesky (after sync_scalars). */
    bool spd_ok() const
    {
        const double ratio = h_sc->diag_max > 0 ? h_sc->diag_min / h_sc->diag_max : 0.0;
        return h_sc->info == 0 && ratio * ratio > singular_rcond();
    }

    double singular_rcond() const
    {
        const double e = (double)R * blas<T>::eps;
        return e > TF_DENSE_PINV_RCOND ? e : TF_DENSE_PINV_RCOND;
    }

    tf_status workspace()
    {
        TF_CUSOLVER(cusolverDnCreateParams(&params));
        size_t d1 = 0, h1 = 0, d2 = 0, h2 = 0;
        TF_CUSOLVER(cusolverDnXpotrf_bufferSize(ctx->solver, params, CUBLAS_FILL_MODE_UPPER, (int64_t)R,
                                                blas<T>::type, L, (int64_t)R, blas<T>::type, &d1, &h1));
        TF_CUSOLVER(cusolverDnXsyevd_bufferSize(ctx->solver, params, CUSOLVER_EIG_MODE_VECTOR,
                                                CUBLAS_FILL_MODE_UPPER, (int64_t)R, blas<T>::type, Q,
                                                (int64_t)R, blas<T>::type, w, blas<T>::type, &d2, &h2));
        d_work_bytes = d1 > d2 ? d1 : d2;
        h_work_bytes = h1 > h2 ? h1 : h2;
        TF_TRY(tf_gpu_alloc_bytes(&d_work, d_work_bytes, "cuSOLVER workspace"));
        if (h_work_bytes) TF_TRY(tf_alloc(&h_work, h_work_bytes, 1, "cuSOLVER host workspace"));
        return TF_OK;
    }

    tf_status init(const tf_ktensor *k) override
    {
        if (!k || k->order != order || k->rank != R)
            return tf_fail(TF_ERR_ARG, "GPU CP-ALS backend: initial ktensor does not match order %u rank %llu",
                           order, (unsigned long long)R);
        TF_TRY(tf_gpu_dev_use(ctx));
        TF_TRY(tf_gpu_dev_blas(ctx));
        TF_TRY(tf_gpu_dev_solver(ctx));
        for (uint32_t m = 0; m < order; ++m) {
            if (k->factors[m].rows != dims[m] || k->factors[m].cols != R)
                return tf_fail(TF_ERR_ARG,
                               "GPU CP-ALS backend: initial factor %u is %llu x %llu, expected %llu x %llu",
                               m + 1, (unsigned long long)k->factors[m].rows,
                               (unsigned long long)k->factors[m].cols, (unsigned long long)dims[m],
                               (unsigned long long)R);
            TF_TRY(tf_gpu_alloc(&A[m], dims[m] * R, "factor matrix"));
            TF_TRY(tf_gpu_put_values(A[m], k->factors[m].data, dims[m] * R, ctx->stream));
            TF_TRY(tf_gpu_alloc(&G[m], R * R, "Gram matrix"));
            TF_TRY(tf_gpu_alloc(&scale[m], R, "column scales"));
            TF_TRY(tf_gpu_fill(scale[m], R, T(1), ctx->stream));
        }
        if (sharded)
            for (uint32_t m = 0; m < order; ++m)
                if (!has_shard[m]) return tf_fail(TF_ERR_ARG, "GPU CP-ALS backend: mode %u has no shard", m + 1);
        TF_TRY(tf_gpu_alloc(&M, (maxrows ? maxrows : 1) * R, "MTTKRP output"));
        T **square[] = {&V, &L, &Q, &P};
        for (T **b : square) TF_TRY(tf_gpu_alloc(b, R * R, "R x R work matrix"));
        small = R <= TF_GPU_SMALL_RANK && !ctx->tune.cpd_cusolver;
        use_graph = small && ctx->tune.cpd_graph && !sharded && eng->capturable;
        custom_apply = ctx->tune.cpd_apply ? ctx->tune.cpd_apply == 1 : sizeof(T) == 4;
        if (small) {
            TF_TRY(tf_gpu_alloc(&Winv, R * R, "inverse normal matrix"));
            TF_TRY(tf_gpu_alloc(&gpart, tf_gpu_gram_partial_count(maxdim, (uint32_t)R), "Gram partial sums"));
            TF_TRY(tf_gpu_alloc(&graw, R * R, "Gram sums"));
            TF_TRY(tf_gpu_alloc(&jq, R * R, "eigenvectors"));
            TF_TRY(tf_gpu_alloc(&counter, 2, "completion counters"));
            TF_CU(cudaMemsetAsync(counter, 0, 2 * sizeof *counter, ctx->stream));
        }
        TF_TRY(tf_gpu_alloc(&w, R, "eigenvalues"));
        TF_TRY(tf_gpu_alloc(&lambda, R, "lambda"));
        TF_TRY(tf_gpu_alloc(&inv, R, "column scales"));
        TF_TRY(tf_gpu_alloc(&partial, (uint64_t)tf_gpu_slabs(maxdim) * R, "column partial sums"));
        TF_TRY(tf_gpu_alloc(&d_sc, 1, "CP-ALS scalars"));
        TF_CU(cudaMallocHost((void **)&h_sc, sizeof *h_sc));
        TF_CU(cudaMemsetAsync(d_sc, 0, sizeof *d_sc, ctx->stream));
        TF_TRY(tf_gpu_fill(lambda, R, T(1), ctx->stream));
        TF_TRY(workspace());
        if (upd.kind == TF_CPD_UPDATE_AO_ADMM) TF_TRY(admm_init());
        TF_CU(cudaEventCreateWithFlags(&copied, cudaEventDisableTiming));
        TF_CU(cudaEventCreateWithFlags(&m_done, cudaEventDisableTiming));
        for (uint32_t e = 0; e < 2 * order + 2; ++e) TF_CU(cudaEventCreate(&ev[e]));
        for (uint32_t m = 0; m < order; ++m) {
            TF_CU(cudaEventCreateWithFlags(&fork_ev[m], cudaEventDisableTiming));
            TF_CU(cudaEventCreateWithFlags(&join_ev[m], cudaEventDisableTiming));
        }
        TF_CU(cudaEventCreateWithFlags(&tick, cudaEventDisableTiming));
        TF_CU(cudaStreamCreateWithFlags(&tstream, cudaStreamNonBlocking));
        if (small) {
            /* Load cuBLAS's gemm kernels for the solve's shapes now, outside
             * the timed iterations (lazy loading made the first solve of
             * each shape cost milliseconds): M is scratch until the first
             * MTTKRP, which overwrites it. */
            TF_CU(cudaMemsetAsync(Winv, 0, R * R * sizeof(T), ctx->stream));
            for (uint32_t m = 0; m < order; ++m)
                TF_CUBLAS(blas<T>::gemm(ctx->blas, CUBLAS_OP_N, CUBLAS_OP_N, (int64_t)R, (int64_t)rows[m],
                                        (int64_t)R, Winv, own(m), M));
        }
        /* per-mode choices the engine times on first use, made now: the
         * sweep's MTTKRPs run inside a graph capture (M is scratch) */
        if (!sharded) TF_TRY(eng->tune((const void *const *)A, M, (uint32_t)R));
        for (uint32_t m = 0; sharded && m < order; ++m) {
            if (part_eng[m]) TF_TRY(part_eng[m]->tune((const void *const *)A, M, (uint32_t)R));
            if (part_eng2[m]) TF_TRY(part_eng2[m]->tune((const void *const *)A, M, (uint32_t)R));
        }
        m_mode = order;
        TF_TRY(sync_scalars());
        pinv_seen = h_sc->pinv;
        return TF_OK;
    }

    /* ---- the steps, queued without waiting (the large-R solve excepted) */

    tf_status mttkrp_async(uint32_t mode) override
    {
        TF_TRY(mttkrp_local_async(mode));
        return mttkrp_remote_async(mode);
    }
    /* The shard's first part (writes this GPU's rows of M), then its
     * second (adds into them); M holds the MTTKRP after both. */
    tf_status mttkrp_local_async(uint32_t mode) override
    {
        TF_TRY(check_mode(mode));
        m_mode = order;
        if (engine(mode)) TF_TRY(engine(mode)->mttkrp(mode, (const void *const *)A, M, (uint32_t)R));
        return TF_OK;
    }
    tf_status mttkrp_remote_async(uint32_t mode) override
    {
        TF_TRY(check_mode(mode));
        if (sharded && part_eng2[mode]) TF_TRY(part_eng2[mode]->mttkrp(mode, (const void *const *)A, M, (uint32_t)R));
        m_mode = mode;
        return TF_OK;
    }
    bool small_rank() const override { return small; }

    /* *host_pinv = 1 when the large-R path fell back to the pseudo-inverse
     * (the small path counts its fallbacks on the device). */
    tf_status solve_async(uint32_t mode, int *host_pinv) override
    {
        TF_TRY(check_mode(mode));
        *host_pinv = 0;
        gram_pending = TF_MAX_ORDER; /* A[mode] changes */
        if (m_mode != mode)
            return tf_fail(TF_ERR_ARG, "GPU CP-ALS backend: solve of mode %u without its MTTKRP", mode + 1);
        const int64_t n = (int64_t)R, I = (int64_t)rows[mode];
        cudaStream_t st = ctx->stream;
        if (small) {
            TF_TRY(small_inverse(mode, st));
            return small_apply(mode);
        }
        /* A <- M on the side stream, overlapped with the R x R work and the
         * sync below, once the MTTKRP that writes M is done. */
        TF_CU(cudaEventRecord(m_done, st));
        TF_CU(cudaStreamWaitEvent(ctx->side, m_done, 0));
        TF_CU(cudaMemcpyAsync(own(mode), M, (size_t)I * R * sizeof(T), cudaMemcpyDeviceToDevice, ctx->side));
        TF_CU(cudaEventRecord(copied, ctx->side));
        TF_TRY(tf_gpu_hadamard((const T *const *)G, order, mode, (uint32_t)R, V, d_sc, st));
        TF_CU(cudaMemcpyAsync(L, V, R * R * sizeof(T), cudaMemcpyDeviceToDevice, st));
        TF_CUSOLVER(cusolverDnXpotrf(ctx->solver, params, CUBLAS_FILL_MODE_UPPER, n, blas<T>::type, L, n,
                                     blas<T>::type, d_work, d_work_bytes, h_work, h_work_bytes, &d_sc->info));
        TF_TRY(tf_gpu_diag_range(L, (uint32_t)R, d_sc, st));
        TF_TRY(sync_scalars());
        TF_CU(cudaStreamWaitEvent(st, copied, 0)); /* both paths write A */
        if (spd_ok()) {
            /* column-major A^T (R x I): solve V X = A^T, i.e. A <- M V^-1 */
            TF_CUSOLVER(cusolverDnXpotrs(ctx->solver, params, CUBLAS_FILL_MODE_UPPER, n, I, blas<T>::type, L,
                                         n, blas<T>::type, own(mode), n, &d_sc->info));
            return TF_OK;
        }
        *host_pinv = 1;
        TF_CU(cudaMemcpyAsync(Q, V, R * R * sizeof(T), cudaMemcpyDeviceToDevice, st));
        TF_CUSOLVER(cusolverDnXsyevd(ctx->solver, params, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, n,
                                     blas<T>::type, Q, n, blas<T>::type, w, blas<T>::type, d_work,
                                     d_work_bytes, h_work, h_work_bytes, &d_sc->info));
        TF_TRY(sync_scalars());
        if (h_sc->info != 0)
            return tf_fail(TF_ERR_NUMERIC, "pseudo-inverse: the eigendecomposition of the %llu x %llu "
                                           "normal matrix failed (cuSOLVER syevd info %d)",
                           (unsigned long long)R, (unsigned long long)R, h_sc->info);
        /* P = Q diag(1/w) Q^T (dropped eigenvalues as zero); A = M P. */
        TF_TRY(tf_gpu_pinv_scale(Q, w, (uint32_t)R, singular_rcond(), P, st));
        TF_CUBLAS(blas<T>::gemm(ctx->blas, CUBLAS_OP_N, CUBLAS_OP_T, n, n, n, P, Q, L));
        TF_CUBLAS(blas<T>::gemm(ctx->blas, CUBLAS_OP_N, CUBLAS_OP_N, n, I, n, L, M, own(mode)));
        return TF_OK;
    }

    /* Small path, the two halves of a solve: W = diag(P) V^-1 (needs only
     * the other modes' Grams and scales, so it can run beside this mode's
     * MTTKRP) on stream st, then A_raw = M W on the work stream. */
    tf_status small_inverse(uint32_t mode, cudaStream_t st)
    {
        return tf_gpu_small_solve((const T *const *)G, (const T *const *)scale, order, mode, (uint32_t)R,
                                  singular_rcond(), V, Winv, jq, d_sc, st);
    }

    /* Sweep, side stream: the previous mode's Gram and this mode's inverse
     * in one launch (tf_gpu_gram_solve) for a factor of at most
     * gram_solve_rows rows (R <= 32); tuning.cpd_gram_solve_rows = 0 turns it
     * off, N sets the row limit (measurements); read at setup. */
    uint64_t gram_solve_rows = TF_GPU_GRAM_SOLVE_ROWS;
    bool gram_solve(uint32_t prev) const { return R <= 32 && dims[prev] <= gram_solve_rows; }

    tf_status small_apply(uint32_t mode)
    {
        if (custom_apply && rows[mode] <= TF_GPU_APPLY_ROWS)
            return tf_gpu_small_apply((const T *)M, rows[mode], (uint32_t)R, (const T *)Winv, own(mode), ctx->stream);
        const int64_t n = (int64_t)R, I = (int64_t)rows[mode];
        /* row-major A = M W is column-major A^T = W^T M^T; W (row-major)
         * is column-major W^T */
        TF_CUBLAS(blas<T>::gemm(ctx->blas, CUBLAS_OP_N, CUBLAS_OP_N, n, I, n, Winv, M, own(mode)));
        return TF_OK;
    }

    /* Sweep: mode n's apply also forms its Gram (tf_gpu_apply_gram) for a
     * long factor at rank 32: the separate Gram would read A again beside
     * the next MTTKRP; for the last mode the same pass also forms the fit's
     * dot products of M and A (tf_gpu_apply_gram_partials), so the fit step
     * reads neither again (wordnet30's 117659-row last mode: a second pass
     * over A and M before). tuning.cpd_apply_gram = 0 turns it off, 1 uses it
     * whatever the length (tests, measurements); read at setup. */
    int apply_gram_env = -1;
    bool apply_gram(uint32_t n) const
    {
        if (apply_gram_env == 0 || R != TF_GPU_APPLY_GRAM_RANK) return false;
        return apply_gram_env == 1 || dims[n] > TF_GPU_APPLY_GRAM_ROWS;
    }

    /* Small path: G of mode from one read of A_raw, on stream st; with norm
     * (tf_gpu_gram's 1: 2-norm, 2: max-norm) also the normalisation's lambda
     * and new scale, with 0 the scale is kept. */
    tf_status small_gram(uint32_t mode, int norm, cudaStream_t st)
    {
        return tf_gpu_gram((const T *)A[mode], dims[mode], (uint32_t)R, norm, gpart, graw, counter, scale[mode],
                           lambda, G[mode], d_sc, st);
    }

    tf_status gram_async(uint32_t mode) override
    {
        TF_TRY(check_mode(mode));
        const int64_t n = (int64_t)R, I = (int64_t)dims[mode];
        if (small) {
            if (gram_pending != mode) {
                TF_TRY(small_gram(mode, 0, ctx->stream));
            }
            gram_pending = TF_MAX_ORDER;
        } else if (!gram_syrk) {
            TF_CUBLAS(blas<T>::gemm(ctx->blas, CUBLAS_OP_N, CUBLAS_OP_T, n, n, I, A[mode], A[mode], G[mode]));
        } else {
            TF_CUBLAS(blas<T>::syrk(ctx->blas, n, I, A[mode], G[mode]));
            TF_TRY(tf_gpu_symmetrize(G[mode], (uint32_t)R, ctx->stream));
        }
        return TF_OK;
    }

    tf_status fit_async(uint32_t mode) override
    {
        TF_TRY(check_mode(mode));
        if (m_mode != mode)
            return tf_fail(TF_ERR_ARG, "GPU CP-ALS backend: fit of mode %u without its MTTKRP", mode + 1);
        cudaStream_t st = ctx->stream;
        /* <X, K> = sum_r lambda_r sum_i M(i,r) A(i,r) with M and A scaled:
         * both scale vectors of every mode go into the weights */
        /* M holds this GPU's rows: the inner product over them */
        if (small)
            return tf_gpu_fit_terms(M, own(mode), rows[mode], (uint32_t)R, lambda, (const T *const *)scale,
                                    (const T *const *)G, order, partial, counter + 1, d_sc, st);
        TF_TRY(tf_gpu_weighted_inner(M, own(mode), rows[mode], (uint32_t)R, lambda, (const T *const *)scale, order,
                                     partial, d_sc, st));
        TF_TRY(tf_gpu_hadamard((const T *const *)G, order, order, (uint32_t)R, V, d_sc, st));
        return tf_gpu_quadratic(V, lambda, (uint32_t)R, d_sc, st);
    }

    /* ---- the driver's per-step entry points: each waits for its step */

    tf_status mttkrp(uint32_t mode) override
    {
        TF_TRY(mttkrp_async(mode));
        TF_CU(cudaStreamSynchronize(ctx->stream)); /* the driver times MTTKRP alone */
        return TF_OK;
    }

    tf_status solve(uint32_t mode, int *used_pinv) override
    {
        int hp = 0;
        TF_TRY(solve_async(mode, &hp));
        TF_TRY(sync_scalars());
        *used_pinv = hp + (int)take_pinv();
        return TF_OK;
    }

    tf_status normalize(uint32_t mode, int max_norm) override
    {
        TF_TRY(check_mode(mode));
        if (!small) {
            TF_TRY(tf_gpu_normalize(A[mode], dims[mode], (uint32_t)R, max_norm, lambda, inv, partial, d_sc,
                                    ctx->stream));
        } else {
            /* one read of A_raw: Gram partials and column maxima; then
             * lambda, the new scales and G */
            TF_TRY(small_gram(mode, max_norm ? 2 : 1, ctx->stream));
            gram_pending = mode;
        }
        /* AO-ADMM: the dual follows its factor into the normalised scale */
        if (warm[mode] && U[mode])
            TF_TRY(tf_gpu_admm_unscale(U[mode], rows[mode], (uint32_t)R, (const T *)lambda, ctx->stream));
        return TF_OK;
    }

    tf_status gram(uint32_t mode) override
    {
        TF_TRY(gram_async(mode));
        TF_CU(cudaStreamSynchronize(ctx->stream)); /* dense time ends here for the driver's timers */
        return TF_OK;
    }

    tf_status fit_terms(uint32_t mode, double *inner, double *knorm2) override
    {
        TF_TRY(fit_async(mode));
        TF_TRY(sync_scalars());
        *inner = h_sc->inner;
        *knorm2 = h_sc->knorm2;
        return TF_OK;
    }

    /* Queues one iteration on the work stream: every mode's steps, then the
     * fit terms, with an event at each step boundary (`external`: recorded
     * as graph nodes while capturing). *host_pinv: large-R fallbacks. */
    tf_status enqueue_sweep(int max_norm, bool external, uint64_t *host_pinv)
    {
        cudaStream_t st = ctx->stream;
        const unsigned fl = external ? cudaEventRecordExternal : cudaEventRecordDefault;
        if (small) return enqueue_small_sweep(max_norm, fl);
        TF_CU(cudaEventRecordWithFlags(ev[0], st, fl));
        for (uint32_t n = 0; n < order; ++n) {
            TF_TRY(mttkrp_async(n));
            TF_CU(cudaEventRecordWithFlags(ev[2 * n + 1], st, fl));
            int hp = 0;
            TF_TRY(solve_async(n, &hp));
            *host_pinv += (uint64_t)hp;
            TF_TRY(normalize(n, max_norm));
            TF_TRY(gram_async(n));
            TF_CU(cudaEventRecordWithFlags(ev[2 * n + 2], st, fl));
        }
        TF_TRY(fit_async(order - 1));
        TF_CU(cudaEventRecordWithFlags(ev[2 * order + 1], st, fl));
        return TF_OK;
    }

    /* Step boundary e of the small sweep: the timing stream waits for the
     * work stream (an edge when capturing, not a node) and records ev[e]
     * there, so no event record sits between two kernels of the work
     * stream. Each event fires one node latency after its step ends, the
     * same shift at every boundary. */
    tf_status mark(uint32_t e, unsigned fl)
    {
        TF_CU(cudaEventRecord(tick, ctx->stream));
        TF_CU(cudaStreamWaitEvent(tstream, tick, 0));
        TF_CU(cudaEventRecordWithFlags(ev[e], tstream, fl));
        return TF_OK;
    }

    /* The small-rank iteration with the R x R work off the critical path.
     * Mode n's inverse W needs the other modes' Grams and scales, not its
     * MTTKRP; mode n's Gram is needed by the next solve, not by the next
     * MTTKRP (which reads A_raw). So the side stream (high priority) runs
     * [Gram(n-1), inverse(n)] while the work stream runs MTTKRP(n) (one
     * launch when factor n-1 is short, tf_gpu_gram_solve: as two launches
     * they outlasted uber-apr14's MTTKRPs); the work stream then waits for
     * W and applies it (A_raw = M W). A long factor
     * at rank 32 (apply_gram) gets its Gram in the apply's pass instead, on
     * the work stream, so no second read of it runs beside the next MTTKRP
     * (the side stream then only inverts). The last mode's Gram stays on
     * the work stream (the fit needs it). Same steps and the same order per
     * buffer as the sequential steps. Note: the graph runs every node at
     * the launch stream's priority (captured node priorities apply only
     * with cudaGraphInstantiateFlagUseNodePriority, measured no faster). Step
     * times: a mode's "dense" interval is the wait for W plus the apply;
     * the overlapped Gram and inverse land inside the next MTTKRP's
     * interval; the last mode's Gram is fused with the fit terms and
     * counted as the fit step. */
    tf_status enqueue_small_sweep(int max_norm, unsigned fl)
    {
        cudaStream_t st = ctx->stream, side = ctx->side;
        TF_TRY(mark(0, fl));
        for (uint32_t n = 0; n < order; ++n) {
            TF_CU(cudaEventRecord(fork_ev[n], st)); /* A[n - 1] written (n > 0) */
            TF_CU(cudaStreamWaitEvent(side, fork_ev[n], 0));
            if (n > 0 && !apply_gram(n - 1) && gram_solve(n - 1)) {
                TF_TRY(tf_gpu_gram_solve((const T *)A[n - 1], dims[n - 1], n - 1, max_norm ? 2 : 1, scale[n - 1],
                                         lambda, (const T *const *)G, (const T *const *)scale, order, n,
                                         (uint32_t)R, singular_rcond(), V, Winv, jq, d_sc, side));
            } else {
                if (n > 0 && !apply_gram(n - 1)) TF_TRY(small_gram(n - 1, max_norm ? 2 : 1, side));
                TF_TRY(small_inverse(n, side));
            }
            TF_CU(cudaEventRecord(join_ev[n], side));
            TF_TRY(check_mode(n));
            TF_TRY(eng->mttkrp(n, (const void *const *)A, M, (uint32_t)R));
            TF_TRY(mark(2 * n + 1, fl));
            TF_CU(cudaStreamWaitEvent(st, join_ev[n], 0));
            if (apply_gram(n) && n + 1 == order) /* the fit's finish below */
                TF_TRY(tf_gpu_apply_gram_partials((const T *)M, dims[n], (uint32_t)R, (const T *)Winv, A[n],
                                                  max_norm ? 2 : 1, 1, gpart, st));
            else if (apply_gram(n))
                TF_TRY(tf_gpu_apply_gram((const T *)M, dims[n], (uint32_t)R, (const T *)Winv, A[n], max_norm ? 2 : 1,
                                         gpart, graw, scale[n], lambda, G[n], d_sc, st));
            else
                TF_TRY(small_apply(n));
            TF_TRY(mark(2 * n + 2, fl));
        }
        m_mode = order - 1;
        gram_pending = TF_MAX_ORDER;
        /* the last mode's Gram and the fit terms (one launch when the
         * Gram takes one): timed as the fit step */
        const uint32_t n = order - 1;
        if (apply_gram(n))
            TF_TRY(tf_gpu_gram_fit_finish(gpart, tf_gpu_gram_slabs(dims[n]), (uint32_t)R, max_norm ? 2 : 1, graw,
                                          scale[n], lambda, G[n], (const T *const *)scale, (const T *const *)G,
                                          order, d_sc, st));
        else
            TF_TRY(tf_gpu_gram_fit((const T *)A[n], (const T *)M, dims[n], (uint32_t)R, max_norm ? 2 : 1, gpart,
                                   graw, counter, scale[n], lambda, G[n], (const T *const *)scale,
                                   (const T *const *)G, order, d_sc, st));
        TF_TRY(mark(2 * order + 1, fl));
        /* the timing stream rejoins the work stream (a capture needs it) */
        TF_CU(cudaEventRecord(tick, tstream));
        TF_CU(cudaStreamWaitEvent(st, tick, 0));
        return TF_OK;
    }

    /* Captures the small-rank sweep for max_norm into graph[max_norm];
     * on any failure leaves it empty (and direct launches are used). */
    void capture(int max_norm)
    {
        cudaStream_t st = ctx->stream;
        if (cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
            cudaGetLastError();
            use_graph = false;
            return;
        }
        uint64_t hp = 0;
        const tf_status s = enqueue_sweep(max_norm, true, &hp);
        cudaGraph_t g = nullptr;
        const cudaError_t e = cudaStreamEndCapture(st, &g);
        if (s == TF_OK && e == cudaSuccess && g &&
            cudaGraphInstantiate(&graph[max_norm], g, 0) == cudaSuccess) {
            cudaGraphDestroy(g);
            return;
        }
        if (g) cudaGraphDestroy(g);
        graph[max_norm] = nullptr;
        cudaGetLastError();
        tf_clear_error();
        use_graph = false;
    }

    /* One iteration queued at once; one synchronisation (the fit scalars). */
    tf_status sweep(int max_norm, double *inner, double *knorm2, double *t_mttkrp, double *t_dense,
                    double *t_fit, uint64_t *pinv) override
    {
        TF_TRY(check_mode(0));
        const int g = max_norm ? 1 : 0;
        uint64_t host_pinv = 0;
        if (use_graph && !graph[g]) capture(g);
        if (use_graph && graph[g]) {
            TF_CU(cudaGraphLaunch(graph[g], ctx->stream));
            m_mode = order - 1; /* as the captured steps leave it */
            gram_pending = TF_MAX_ORDER;
        } else {
            TF_TRY(enqueue_sweep(max_norm, false, &host_pinv));
        }
        TF_TRY(sync_scalars());
        auto secs = [&](uint32_t a, uint32_t b) -> double {
            float ms = 0.f;
            return cudaEventElapsedTime(&ms, ev[a], ev[b]) == cudaSuccess ? 1e-3 * ms : 0.0;
        };
        for (uint32_t n = 0; n < order; ++n) {
            t_mttkrp[n] += secs(2 * n, 2 * n + 1);
            *t_dense += secs(2 * n + 1, 2 * n + 2);
        }
        *t_fit += secs(2 * order, 2 * order + 1);
        *inner = h_sc->inner;
        *knorm2 = h_sc->knorm2;
        *pinv += host_pinv + take_pinv();
        return TF_OK;
    }

    tf_status scalars(double *inner, double *knorm2, unsigned *pinv) override
    {
        TF_TRY(tf_gpu_dev_use(ctx));
        TF_TRY(sync_scalars());
        *inner = h_sc->inner;
        *knorm2 = h_sc->knorm2;
        *pinv = take_pinv();
        return TF_OK;
    }
    void *factor(uint32_t mode) override { return mode < order ? A[mode] : nullptr; }
    uint32_t value_bytes() const override { return sizeof(T); }
    tf_gpu_dev *gpu() override { return ctx; }

    /* ---- AO-ADMM (see the members above and admm.cuh) */

    bool prox_mode(uint32_t m) const
    {
        return upd.kind == TF_CPD_UPDATE_AO_ADMM && m < order && (upd.mode[m].nonneg || upd.mode[m].l1 > 0.0);
    }

    /* A mode with a proximal operator, n of its rows here: its dual and
     * the scratch of at least n rows. */
    bool fused() const { return R <= TF_GPU_ADMM_FUSED_RANK && ctx->tune.admm_fused != 0; }

    tf_status admm_rows(uint32_t m, uint64_t n)
    {
        if (!prox_mode(m) || n == 0) return TF_OK;
        if (!U[m]) TF_TRY(tf_gpu_alloc(&U[m], n * R, "AO-ADMM dual variable"));
        if (n > scratch_rows) {
            tf_gpu_free(B);
            tf_gpu_free(Ht);
            B = Ht = nullptr;
            scratch_rows = 0;
            if (!fused()) /* the fused inner iteration keeps B in shared memory */
                TF_TRY(tf_gpu_alloc(&B, n * R, "AO-ADMM right-hand side"));
            TF_TRY(tf_gpu_alloc(&Ht, n * R, "AO-ADMM inner iterate"));
            scratch_rows = n;
        }
        return TF_OK;
    }

    /* The R x R buffers, the sums, the state and cuSOLVER's double workspace (init). */
    tf_status admm_init()
    {
        double **sq[] = {&aV, &aL, &aX, &aY};
        for (double **b : sq) TF_TRY(tf_gpu_alloc(b, R * R, "AO-ADMM R x R work"));
        TF_TRY(tf_gpu_alloc(&aw, R, "AO-ADMM eigenvalues"));
        TF_TRY(tf_gpu_alloc(&ap, R, "AO-ADMM column scales"));
        TF_TRY(tf_gpu_alloc(&Wls, R * R, "AO-ADMM inverse"));
        TF_TRY(tf_gpu_alloc(&Wrho, R * R, "AO-ADMM inverse"));
        TF_TRY(tf_gpu_alloc(&apart, tf_gpu_admm_partial_count(), "AO-ADMM residual sums"));
        TF_TRY(tf_gpu_alloc(&acount, 1, "AO-ADMM block counter"));
        TF_CU(cudaMemsetAsync(acount, 0, sizeof *acount, ctx->stream));
        TF_TRY(tf_gpu_alloc(&table, (uint64_t)admm_parts * TF_GPU_ADMM_TERMS, "AO-ADMM residual table"));
        TF_CU(cudaMemsetAsync(table, 0, (size_t)admm_parts * TF_GPU_ADMM_TERMS * sizeof(double), ctx->stream));
        TF_TRY(tf_gpu_alloc(&d_as, 1, "AO-ADMM state"));
        TF_CU(cudaMemsetAsync(d_as, 0, sizeof *d_as, ctx->stream));
        TF_CU(cudaMallocHost((void **)&h_as, sizeof *h_as));
        memset(h_as, 0, sizeof *h_as);
        size_t d1 = 0, h1 = 0, d2 = 0, h2 = 0;
        const int64_t n = (int64_t)R;
        TF_CUSOLVER(cusolverDnXpotrf_bufferSize(ctx->solver, params, CUBLAS_FILL_MODE_UPPER, n, CUDA_R_64F, aL, n,
                                                CUDA_R_64F, &d1, &h1));
        TF_CUSOLVER(cusolverDnXsyevd_bufferSize(ctx->solver, params, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER,
                                                n, CUDA_R_64F, aL, n, CUDA_R_64F, aw, CUDA_R_64F, &d2, &h2));
        a_dbytes = d1 > d2 ? d1 : d2;
        a_hbytes = h1 > h2 ? h1 : h2;
        TF_TRY(tf_gpu_alloc_bytes(&a_dwork, a_dbytes, "cuSOLVER workspace (AO-ADMM)"));
        if (a_hbytes) TF_TRY(tf_alloc(&a_hwork, a_hbytes, 1, "cuSOLVER host workspace (AO-ADMM)"));
        return TF_OK;
    }

    void admm_layout(uint32_t parts, uint32_t row) override
    {
        admm_parts = parts ? parts : 1;
        admm_row = row < admm_parts ? row : 0;
    }
    double *admm_table() override { return table; }
    bool admm_warm(uint32_t mode) const override { return mode < order && warm[mode]; }
    double *my_row() const { return table + (uint64_t)admm_row * TF_GPU_ADMM_TERMS; }

    tf_status admm_ready(uint32_t mode)
    {
        TF_TRY(check_mode(mode));
        if (m_mode != mode)
            return tf_fail(TF_ERR_ARG, "GPU CP-ALS backend: update of mode %u without its MTTKRP", mode + 1);
        if (!d_as) return tf_fail(TF_ERR_ARG, "GPU CP-ALS backend: AO-ADMM update of a run set up without it");
        gram_pending = TF_MAX_ORDER; /* A[mode] changes */
        return TF_OK;
    }

    /* aV = V + l2 I, aL = its copy, aY = I; the state reset (rho, l1 / rho)
     * and ap = the other modes' scales' product. */
    tf_status admm_system(uint32_t mode, double l2, double l1)
    {
        cudaStream_t st = ctx->stream;
        TF_TRY(tf_gpu_admm_normal<T>((const T *const *)G, order, mode, (uint32_t)R, l2, aV, aL, aY, d_sc, st));
        return tf_gpu_admm_begin<T>(aV, (const T *const *)scale, order, mode, (uint32_t)R, l1, ap, d_as, st);
    }

    /* aY = aV^-1 from aL = aV and aY = I: Cholesky when positive definite
     * enough (the ALS solve's test), else the pseudo-inverse
     * (*host_pinv = 1). Waits for the Cholesky check (and the
     * eigensolver's info); a non-finite V fails here, as on the CPU. */
    tf_status admm_inverse(int *host_pinv)
    {
        cudaStream_t st = ctx->stream;
        const int64_t n = (int64_t)R;
        TF_CUSOLVER(cusolverDnXpotrf(ctx->solver, params, CUBLAS_FILL_MODE_UPPER, n, CUDA_R_64F, aL, n, CUDA_R_64F,
                                     a_dwork, a_dbytes, a_hwork, a_hbytes, &d_sc->info));
        TF_TRY(tf_gpu_diag_range<double>(aL, (uint32_t)R, d_sc, st));
        TF_TRY(sync_scalars());
        if (spd_ok()) {
            TF_CUSOLVER(cusolverDnXpotrs(ctx->solver, params, CUBLAS_FILL_MODE_UPPER, n, n, CUDA_R_64F, aL, n,
                                         CUDA_R_64F, aY, n, &d_sc->info));
            return TF_OK;
        }
        *host_pinv = 1;
        TF_CU(cudaMemcpyAsync(aL, aV, R * R * sizeof(double), cudaMemcpyDeviceToDevice, st));
        TF_CUSOLVER(cusolverDnXsyevd(ctx->solver, params, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, n,
                                     CUDA_R_64F, aL, n, CUDA_R_64F, aw, CUDA_R_64F, a_dwork, a_dbytes, a_hwork,
                                     a_hbytes, &d_sc->info));
        TF_TRY(sync_scalars());
        if (h_sc->info != 0)
            return tf_fail(TF_ERR_NUMERIC, "pseudo-inverse: the eigendecomposition of the %llu x %llu "
                                           "normal matrix failed (cuSOLVER syevd info %d)",
                           (unsigned long long)R, (unsigned long long)R, h_sc->info);
        /* aY = Q diag(1/w) Q^T, dropped eigenvalues as zero */
        TF_TRY(tf_gpu_pinv_scale<double>(aL, aw, (uint32_t)R, singular_rcond(), aX, st));
        TF_CUBLAS(blas<double>::gemm(ctx->blas, CUBLAS_OP_N, CUBLAS_OP_T, n, n, n, aX, aL, aY));
        return TF_OK;
    }

    /* out (rows x R, row-major) = in W for a row-major R x R W: column-major,
     * out^T = W^T in^T, and W read column-major is W^T. */
    tf_status admm_apply(const T *in, const T *W, T *out, uint64_t rows_n)
    {
        if (rows_n == 0) return TF_OK;
        const int64_t n = (int64_t)R;
        TF_CUBLAS(blas<T>::gemm(ctx->blas, CUBLAS_OP_N, CUBLAS_OP_N, n, (int64_t)rows_n, n, W, in, out));
        return TF_OK;
    }

    tf_status admm_ridge(uint32_t mode, double l2, int *host_pinv) override
    {
        TF_TRY(admm_ready(mode));
        *host_pinv = 0;
        TF_TRY(admm_system(mode, l2, 0.0));
        TF_TRY(admm_inverse(host_pinv));
        /* A = M diag(ap) (V + l2 I)^-1: the true MTTKRP's solution */
        TF_TRY(tf_gpu_admm_fold<T>(aY, ap, (uint32_t)R, Wls, ctx->stream));
        return admm_apply(M, Wls, own(mode), rows[mode]);
    }

    tf_status admm_start(uint32_t mode, const tf_cpd_constraint &k, bool cold, bool ls, int *host_pinv) override
    {
        TF_TRY(admm_ready(mode));
        *host_pinv = 0;
        cudaStream_t st = ctx->stream;
        const uint64_t n = rows[mode];
        TF_TRY(admm_rows(mode, n)); /* made at setup; here only if that was skipped */
        T *H = own(mode);
        admm_nonneg = k.nonneg != 0;
        /* the warm start H = A diag(lambda) (A the normalised factor, the
         * small-rank path's A_raw diag(scale)), U diag(lambda) */
        if (!cold) TF_TRY(tf_gpu_admm_warm<T>(H, U[mode], n, (uint32_t)R, scale[mode], lambda, st));
        TF_TRY(admm_system(mode, k.l2, k.l1));
        if (ls) {
            TF_TRY(admm_inverse(host_pinv));
            TF_TRY(tf_gpu_admm_fold<T>(aY, ap, (uint32_t)R, Wls, st));
            T *S = cold ? H : Ht;
            TF_TRY(admm_apply(M, Wls, S, n));
            TF_TRY(tf_gpu_admm_negative<T>(S, n, (uint32_t)R, my_row(), st));
        }
        /* (V + rho I)^-1 by Cholesky (positive definite: eigenvalues >= rho);
         * a failure shows in the state's info, which the stop test reads */
        const int64_t r = (int64_t)R;
        TF_TRY(tf_gpu_admm_shift(aV, (uint32_t)R, d_as, aL, aY, st));
        TF_CUSOLVER(cusolverDnXpotrf(ctx->solver, params, CUBLAS_FILL_MODE_UPPER, r, CUDA_R_64F, aL, r, CUDA_R_64F,
                                     a_dwork, a_dbytes, a_hwork, a_hbytes, &d_as->info));
        TF_CUSOLVER(cusolverDnXpotrs(ctx->solver, params, CUBLAS_FILL_MODE_UPPER, r, r, CUDA_R_64F, aL, r,
                                     CUDA_R_64F, aY, r, &d_sc->info));
        TF_TRY(tf_gpu_admm_fold<T>(aY, nullptr, (uint32_t)R, Wrho, st));
        warm[mode] = true;
        return TF_OK;
    }

    tf_status admm_settle(uint32_t mode, bool cold, bool project_only) override
    {
        TF_TRY(check_mode(mode));
        cudaStream_t st = ctx->stream;
        TF_TRY(tf_gpu_admm_decide(table, admm_parts, project_only, d_as, st));
        T *H = own(mode);
        return tf_gpu_admm_settle<T>(H, U[mode], cold ? H : Ht, rows[mode], (uint32_t)R, cold, project_only, d_as,
                                     st);
    }

    tf_status admm_iterate(uint32_t mode) override
    {
        TF_TRY(check_mode(mode));
        cudaStream_t st = ctx->stream;
        const uint64_t n = rows[mode];
        T *H = own(mode);
        if (fused()) /* one pass (admm.cuh) */
            return tf_gpu_admm_inner<T>(M, ap, H, U[mode], n, (uint32_t)R, Wrho, admm_nonneg, d_as, apart, acount,
                                        my_row(), st);
        TF_TRY(tf_gpu_admm_rhs<T>(M, ap, H, U[mode], n, (uint32_t)R, d_as, B, st));
        TF_TRY(admm_apply(B, Wrho, Ht, n)); /* after the stop: scratch only */
        return tf_gpu_admm_prox<T>(Ht, H, U[mode], n, (uint32_t)R, admm_nonneg, d_as, apart, my_row(), st);
    }

    tf_status admm_test(double tol, uint32_t max_inner) override
    {
        TF_TRY(tf_gpu_dev_use(ctx));
        return tf_gpu_admm_test(table, admm_parts, tol, max_inner, d_as, ctx->stream);
    }

    tf_status admm_fetch() override
    {
        TF_TRY(tf_gpu_dev_use(ctx));
        TF_CU(cudaMemcpyAsync(h_as, d_as, sizeof *h_as, cudaMemcpyDeviceToHost, ctx->stream));
        return TF_OK;
    }

    void admm_state(int *stop, unsigned *iters, int *diverged) const override
    {
        *stop = h_as->stop;
        *iters = h_as->iters;
        *diverged = h_as->diverged;
    }

    tf_status admm_update(uint32_t mode, const tf_cpd_update *u, tf_cpd_step_report *rep) override
    {
        struct one_gpu : tf_gpu_admm_sync {
            tf_gpu_dev *c;
            explicit one_gpu(tf_gpu_dev *x) : c(x) {}
            tf_status gather() override { return TF_OK; }
            tf_status wait() override
            {
                TF_TRY(tf_gpu_dev_use(c));
                TF_CU(cudaStreamSynchronize(c->stream));
                return TF_OK;
            }
        } sync(ctx);
        gpu_cpd_base *me = this;
        int hp = 0;
        TF_TRY(tf_gpu_admm_update(&me, 1, sync, mode, u, &hp, &rep->inner));
        TF_TRY(sync_scalars());
        rep->used_pinv = hp + (int)take_pinv();
        return TF_OK;
    }

    tf_status result(tf_ktensor *out) override
    {
        if (!M) return tf_fail(TF_ERR_ARG, "GPU CP-ALS backend: init was not called");
        if (out->order != order || out->rank != R)
            return tf_fail(TF_ERR_ARG, "GPU CP-ALS backend: result ktensor does not match order %u rank %llu",
                           order, (unsigned long long)R);
        for (uint32_t m = 0; m < order; ++m)
            if (out->factors[m].rows != dims[m] || out->factors[m].cols != R)
                return tf_fail(TF_ERR_ARG, "GPU CP-ALS backend: result factor %u has the wrong shape", m + 1);
        TF_TRY(flush_scales());
        for (uint32_t m = 0; m < order; ++m)
            TF_TRY(tf_gpu_get_values(out->factors[m].data, A[m], dims[m] * R, ctx->stream));
        return tf_gpu_get_values(out->lambda, lambda, R, ctx->stream);
    }

    tf_status flush_scales() override
    {
        if (!M) return tf_fail(TF_ERR_ARG, "GPU CP-ALS backend: init was not called");
        TF_TRY(tf_gpu_dev_use(ctx));
        for (uint32_t m = 0; m < order; ++m) { /* apply the deferred scales once (they become 1) */
            TF_TRY(tf_gpu_scale_columns(A[m], dims[m], (uint32_t)R, (const T *)scale[m], ctx->stream));
            TF_TRY(tf_gpu_fill(scale[m], R, T(1), ctx->stream));
        }
        return TF_OK;
    }
};

} // namespace

/* Inner iterations queued between two reads of the state: the host waits
 * once per batch, and at most kAdmmBatch - 1 queued iterations run as
 * no-ops (a gemm on scratch and a few empty launches each) after the stop;
 * admm.c's updates take 6 to 9 on the shared tensors. */
static const uint32_t kAdmmBatch = 4;

/* Waits for the GPUs and reads their states, which must agree (every GPU
 * adds the same gathered rows in the same order). */
static tf_status admm_read(gpu_cpd_base *const *part, int n, tf_gpu_admm_sync &sync, int *stop, unsigned *iters,
                           int *diverged)
{
    for (int g = 0; g < n; ++g) TF_TRY(part[g]->admm_fetch());
    TF_TRY(sync.wait());
    part[0]->admm_state(stop, iters, diverged);
    for (int g = 1; g < n; ++g) {
        int s = 0, d = 0;
        unsigned it = 0;
        part[g]->admm_state(&s, &it, &d);
        if (s != *stop || it != *iters || d != *diverged)
            return tf_fail(TF_ERR_DEVICE, "AO-ADMM: GPU %d took %u inner iterations (stop %d), GPU 0 %u (stop %d)",
                           g, it, s, *iters, *stop);
    }
    return TF_OK;
}

tf_status tf_gpu_admm_update(gpu_cpd_base *const *part, int n, tf_gpu_admm_sync &sync, uint32_t mode,
                             const tf_cpd_update *u, int *host_pinv, uint32_t *inner)
{
    *host_pinv = 0;
    *inner = 0;
    if (mode >= TF_MAX_ORDER) return tf_fail(TF_ERR_ARG, "AO-ADMM: mode %u is outside 1..%d", mode + 1, TF_MAX_ORDER);
    const tf_cpd_constraint &k = u->mode[mode];
    if (!k.nonneg && !(k.l1 > 0.0)) { /* no proximal operator: the closed form (ALS's solve when no ridge) */
        for (int g = 0; g < n; ++g) {
            int hp = 0;
            TF_TRY(k.l2 > 0.0 ? part[g]->admm_ridge(mode, k.l2, &hp) : part[g]->solve_async(mode, &hp));
            if (g == 0) *host_pinv = hp; /* the same R x R system on every GPU */
        }
        return TF_OK;
    }
    /* admm.c: the least-squares solution starts a cold update and, with
     * non-negativity alone, is tried first on every update */
    const bool cold = !part[0]->admm_warm(mode), project_only = k.nonneg && !(k.l1 > 0.0), ls = cold || project_only;
    for (int g = 0; g < n; ++g) {
        int hp = 0;
        TF_TRY(part[g]->admm_start(mode, k, cold, ls, &hp));
        if (g == 0) *host_pinv = hp;
    }
    int stop = 0, diverged = 0;
    unsigned iters = 0;
    if (ls) {
        TF_TRY(sync.gather()); /* every GPU's "a negative entry" */
        for (int g = 0; g < n; ++g) TF_TRY(part[g]->admm_settle(mode, cold, project_only));
        if (project_only) {
            TF_TRY(admm_read(part, n, sync, &stop, &iters, &diverged));
            if (stop) return TF_OK; /* the projected least-squares solution is the update */
        }
    }
    for (uint32_t queued = 0; queued < u->max_inner && !stop;) {
        const uint32_t batch = u->max_inner - queued < kAdmmBatch ? u->max_inner - queued : kAdmmBatch;
        for (uint32_t b = 0; b < batch; ++b) {
            for (int g = 0; g < n; ++g) TF_TRY(part[g]->admm_iterate(mode));
            TF_TRY(sync.gather());
            for (int g = 0; g < n; ++g) TF_TRY(part[g]->admm_test(u->inner_tol, u->max_inner));
        }
        queued += batch;
        TF_TRY(admm_read(part, n, sync, &stop, &iters, &diverged));
    }
    *inner = iters;
    if (diverged) return tf_fail(TF_ERR_NUMERIC, "AO-ADMM: the update is not finite; the factors diverged");
    return TF_OK;
}

gpu_cpd_base *tf_gpu_cpd_new(tf_precision prec)
{
    return prec == TF_SINGLE ? (gpu_cpd_base *)new (std::nothrow) gpu_cpd<float>()
                             : (gpu_cpd_base *)new (std::nothrow) gpu_cpd<double>();
}

namespace {

gpu_cpd_base *self(void *ctx) { return (gpu_cpd_base *)ctx; }
tf_status op_init(void *c, const tf_ktensor *k) { return self(c)->init(k); }
tf_status op_mttkrp(void *c, uint32_t mode) { return self(c)->mttkrp(mode); }
/* The update kinds of one GPU: ALS and AO-ADMM (src/front/cpd.c gpu_has_update). */
tf_status op_update(void *c, uint32_t mode, const tf_cpd_update_step *step, tf_cpd_step_report *rep)
{
    switch (step->u->kind) {
    case TF_CPD_UPDATE_ALS: return self(c)->solve(mode, &rep->used_pinv);
    case TF_CPD_UPDATE_AO_ADMM: return self(c)->admm_update(mode, step->u, rep);
    default: return tf_cpd_update_unavailable(step->u, "the GPU");
    }
}
tf_status op_normalize(void *c, uint32_t mode, int mx) { return self(c)->normalize(mode, mx); }
tf_status op_gram(void *c, uint32_t mode) { return self(c)->gram(mode); }
tf_status op_fit(void *c, uint32_t mode, double *a, double *b) { return self(c)->fit_terms(mode, a, b); }
tf_status op_result(void *c, tf_ktensor *out) { return self(c)->result(out); }
void op_destroy(void *c) { delete self(c); }
tf_status op_sweep(void *c, int mx, double *a, double *b, double *tm, double *td, double *tf, uint64_t *p)
{
    return self(c)->sweep(mx, a, b, tm, td, tf, p);
}

void op_report(void *c, tf_cpd_report *rep) { rep->device_bytes = self(c)->gpu()->allocated; }

/* no aux_get / aux_put: AO-ADMM's duals stay on the device (its checkpoints are refused) */
const tf_cpd_backend_ops gpu_ops = {op_init, op_mttkrp, op_update,  op_normalize, op_gram,  op_fit,
                                    op_result, op_destroy, op_sweep, op_report, nullptr, nullptr};

} // namespace

extern "C" tf_status tf_cuda_cpd_backend_create_impl(const tf_tensor *X, const tf_cpd_opts *o,
                                                tf_cpd_backend *out)
{
    memset(out, 0, sizeof *out);
    if (!X || !o) return tf_fail(TF_ERR_ARG, "GPU CP-ALS backend: missing tensor or options");
    if (o->rank == 0 || o->rank > TF_MAX_RANK)
        return tf_fail(TF_ERR_ARG, "GPU CP-ALS backend: rank %llu is outside 1..%u",
                       (unsigned long long)o->rank, TF_MAX_RANK);
    if (o->precision != TF_DOUBLE && o->precision != TF_SINGLE)
        return tf_fail(TF_ERR_ARG, "GPU CP-ALS backend: unknown precision %d", (int)o->precision);
    if (o->update && o->update->kind != TF_CPD_UPDATE_ALS &&
        o->update->kind != TF_CPD_UPDATE_AO_ADMM) /* before any work: op_update lacks it */
        return tf_cpd_update_unavailable(o->update, "the GPU");
    gpu_cpd_base *c = tf_gpu_cpd_new(o->precision);
    if (!c) return tf_fail(TF_ERR_NOMEM, "out of memory creating the GPU CP-ALS backend");
    tf_status s = c->setup(X, o, out->plan_desc, sizeof out->plan_desc);
    if (s != TF_OK) {
        delete c;
        memset(out, 0, sizeof *out);
        return s;
    }
    out->ops = &gpu_ops;
    out->ctx = c;
    return TF_OK;
}
