/* SPDX-License-Identifier: BSD-3-Clause */
/* The leading left singular vectors of Y_(n) on one GPU; see vectors.cuh.
 * Row-major Y (I x C) is cuBLAS's column-major C x I matrix A (lda C): Y Y^T
 * = A^T A (syrk 'T'), Y^T Y = A A^T (syrk 'N'). syevd gives the eigenvalues
 * ascending, the vectors as the columns of the Gram's buffer; the r last,
 * reversed, are the leading ones (the CPU's dsyevr picks the same). */
#include <algorithm>

#include "gpu/tucker/vectors.cuh"
#include "seams/cuda_module.h"

#define LEAD_THREADS 256

namespace {

/* out <- the r leading eigenvectors of E (n x n column-major, ascending):
 * ROWMAJOR out[i r + c], else out[c n + i] (column-major n x r). */
__global__ void take_leading_kernel(const double *E, uint64_t n, uint32_t r, bool rowmajor, double *out)
{
    const uint64_t total = n * r;
    for (uint64_t e = (uint64_t)blockIdx.x * LEAD_THREADS + threadIdx.x; e < total;
         e += (uint64_t)gridDim.x * LEAD_THREADS) {
        const uint64_t i = rowmajor ? e / r : e % n, c = rowmajor ? e % r : e / n;
        out[e] = E[(n - 1 - c) * n + i];
    }
}

/* out (I x r row-major) <- in (I x r column-major). */
__global__ void to_rowmajor_kernel(const double *in, uint64_t I, uint32_t r, double *out)
{
    const uint64_t total = I * r;
    for (uint64_t e = (uint64_t)blockIdx.x * LEAD_THREADS + threadIdx.x; e < total;
         e += (uint64_t)gridDim.x * LEAD_THREADS)
        out[e] = in[(e % r) * I + e / r];
}

/* Column blockIdx.x of U (I x r row-major) times -1 where its first
 * largest-magnitude entry is negative (the CPU's tf_eig_fix_signs: a NaN is
 * never the largest). */
__global__ void __launch_bounds__(LEAD_THREADS) fix_signs_kernel(double *U, uint64_t I, uint32_t r)
{
    __shared__ double sv[LEAD_THREADS];
    __shared__ uint64_t si[LEAD_THREADS];
    __shared__ bool flip;
    const uint32_t j = blockIdx.x, t = threadIdx.x;
    double best = -1.0;
    uint64_t at = UINT64_MAX;
    for (uint64_t i = t; i < I; i += LEAD_THREADS) { /* increasing i: strict > keeps the first */
        const double v = fabs(U[i * r + j]);
        if (v > best) best = v, at = i;
    }
    sv[t] = best;
    si[t] = at;
    __syncthreads();
    for (uint32_t h = LEAD_THREADS / 2; h > 0; h >>= 1) {
        if (t < h && (sv[t + h] > sv[t] || (sv[t + h] == sv[t] && si[t + h] < si[t]))) {
            sv[t] = sv[t + h];
            si[t] = si[t + h];
        }
        __syncthreads();
    }
    if (t == 0) flip = si[0] != UINT64_MAX && U[si[0] * r + j] < 0.0;
    __syncthreads();
    if (flip)
        for (uint64_t i = t; i < I; i += LEAD_THREADS) U[i * r + j] = -U[i * r + j];
}

unsigned blocks_for(const tf_gpu_dev *dev, uint64_t n)
{
    const uint64_t b = (n + LEAD_THREADS - 1) / LEAD_THREADS, cap = (uint64_t)dev->sm_count * 16;
    return (unsigned)std::max<uint64_t>(1, std::min(b, cap));
}

/* G[e] <- the sum over b = 0..pieces-1 of P[b n2 + e], in b's order (the
 * same bits every run). */
__global__ void sum_pieces_kernel(const double *P, uint64_t n2, uint32_t pieces, double *G)
{
    for (uint64_t e = (uint64_t)blockIdx.x * LEAD_THREADS + threadIdx.x; e < n2; e += (uint64_t)gridDim.x * LEAD_THREADS) {
        double s = 0.0;
        for (uint32_t b = 0; b < pieces; ++b) s += P[(uint64_t)b * n2 + e];
        G[e] = s;
    }
}

/* How many pieces of rows Y^T Y of Y (I x C) is cut into (1: one syrk).
 * syrk / gemm give a C x C output a handful of tiles, one per block, over
 * all I rows: at C 256 and I 20M that is a few of the GPU's SMs for a
 * second. Pieces of rows, their products side by side (a batched gemm)
 * and then summed, fill the GPU: about 4 blocks per SM, each piece at
 * least 2C rows (the partial sums then cost at most half the gemm's
 * reads), at most 512 pieces. */
uint32_t gram_pieces(const tf_gpu_dev *dev, uint64_t I, uint64_t C)
{
    if (C == 0 || C > 2048) return 1;
    const uint64_t tiles = ((C + 127) / 128) * ((C + 127) / 128);
    const uint64_t want = ((uint64_t)std::max(dev->sm_count, 1) * 4 + tiles - 1) / tiles;
    const uint64_t b = std::min<uint64_t>({want, I / (2 * C), 512});
    return b < 2 ? 1 : (uint32_t)b;
}

/* Waits for the solver and checks its info (what: the step, of n x n). */
tf_status check_info(tf_gpu_lead *L, const char *what, uint64_t n)
{
    int info = 0;
    TF_CU(cudaMemcpyAsync(&info, L->info, sizeof info, cudaMemcpyDeviceToHost, L->dev->stream));
    TF_CU(cudaStreamSynchronize(L->dev->stream));
    if (info != 0)
        return tf_fail(TF_ERR_NUMERIC, "tucker: %s failed on the GPU (%llu rows; cuSOLVER info %d)", what,
                       (unsigned long long)n, info);
    return TF_OK;
}

} // namespace

tf_gpu_lead::~tf_gpu_lead()
{
    double *bufs[] = {G, w, V, Q, tau, work, part};
    for (double *b : bufs) tf_gpu_free(b);
    tf_gpu_free(info);
}

uint64_t tf_gpu_lead_doubles(const tf_gpu_dev *dev, uint64_t I, uint64_t C, uint64_t r, tf_tucker_svd m)
{
    if (m == TF_TUCKER_SVD_ROW_GRAM) return I * I + I;
    return C * C + C + C * r + I * r + r + tf_gpu_gram_scratch(dev, I, C, m);
}

tf_status tf_gpu_lead_alloc(tf_gpu_lead *L, tf_gpu_dev *dev, uint32_t count, const uint64_t *I, const uint64_t *C,
                            const uint64_t *r, const tf_tucker_svd *m)
{
    L->dev = dev;
    TF_TRY(tf_gpu_dev_use(dev));
    TF_TRY(tf_gpu_dev_blas(dev));
    TF_TRY(tf_gpu_dev_solver(dev));
    uint64_t g = 1, n = 1, v = 1, q = 1, t = 1, part = 0;
    for (uint32_t k = 0; k < count; ++k) {
        const uint64_t side = m[k] == TF_TUCKER_SVD_ROW_GRAM ? I[k] : C[k];
        if (side > INT32_MAX || I[k] > INT32_MAX || C[k] > INT32_MAX)
            return tf_fail(TF_ERR_RANGE, "tucker: Y_(n) of %llu x %llu is beyond cuSOLVER's int sizes",
                           (unsigned long long)I[k], (unsigned long long)C[k]);
        g = std::max(g, side * side);
        n = std::max(n, side);
        if (m[k] == TF_TUCKER_SVD_COL_GRAM) {
            v = std::max(v, C[k] * r[k]);
            q = std::max(q, I[k] * r[k]);
            t = std::max(t, r[k]);
            part = std::max(part, tf_gpu_gram_scratch(dev, I[k], C[k], m[k]));
        }
    }
    TF_TRY(tf_gpu_alloc(&L->G, g, "Tucker Gram"));
    TF_TRY(tf_gpu_alloc(&L->w, n, "Tucker eigenvalues"));
    TF_TRY(tf_gpu_alloc(&L->V, v, "Tucker right vectors"));
    TF_TRY(tf_gpu_alloc(&L->Q, q, "Tucker QR"));
    TF_TRY(tf_gpu_alloc(&L->tau, t, "Tucker QR"));
    TF_TRY(tf_gpu_alloc(&L->info, 1, "cuSOLVER info"));
    if (part) TF_TRY(tf_gpu_alloc(&L->part, part, "Tucker Gram pieces"));
    int lwork = 1;
    for (uint32_t k = 0; k < count; ++k) {
        const int side = (int)(m[k] == TF_TUCKER_SVD_ROW_GRAM ? I[k] : C[k]);
        int lw = 0;
        TF_CUSOLVER(cusolverDnDsyevd_bufferSize(dev->solver, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, side,
                                                L->G, side, L->w, &lw));
        lwork = std::max(lwork, lw);
        if (m[k] == TF_TUCKER_SVD_COL_GRAM) {
            const int rows = (int)I[k], cols = (int)r[k];
            TF_CUSOLVER(cusolverDnDgeqrf_bufferSize(dev->solver, rows, cols, L->Q, rows, &lw));
            lwork = std::max(lwork, lw);
            TF_CUSOLVER(cusolverDnDorgqr_bufferSize(dev->solver, rows, cols, cols, L->Q, rows, L->tau, &lw));
            lwork = std::max(lwork, lw);
        }
    }
    TF_TRY(tf_gpu_alloc(&L->work, (uint64_t)lwork, "cuSOLVER workspace"));
    L->lwork = lwork;
    return TF_OK;
}

uint64_t tf_gpu_gram_scratch(const tf_gpu_dev *dev, uint64_t I, uint64_t C, tf_tucker_svd m)
{
    if (m != TF_TUCKER_SVD_COL_GRAM) return 0;
    const uint32_t b = gram_pieces(dev, I, C);
    return b < 2 ? 0 : ((uint64_t)b + 1) * C * C; /* b pieces and the rows left over */
}

tf_status tf_gpu_gram(tf_gpu_dev *dev, const double *Y, uint64_t I, uint64_t C, tf_tucker_svd m, double *G,
                      double *scratch)
{
    const double one = 1.0, zero = 0.0;
    const int i = (int)I, c = (int)C;
    if (m == TF_TUCKER_SVD_ROW_GRAM) {
        TF_CUBLAS(cublasDsyrk(dev->blas, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_T, i, c, &one, Y, c, &zero, G, i));
        return TF_OK;
    }
    const uint32_t b = scratch ? gram_pieces(dev, I, C) : 1;
    if (b < 2) {
        TF_CUBLAS(cublasDsyrk(dev->blas, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, c, i, &one, Y, c, &zero, G, c));
        return TF_OK;
    }
    /* Y's rows as the column-major C x I matrix A: piece p is A's columns
     * [p k, (p + 1) k), its A_p A_p^T in scratch slot p; the I - b k rows
     * left over in slot b */
    const uint64_t k = I / b, rest = I - (uint64_t)b * k, n2 = C * C;
    TF_CUBLAS(cublasDgemmStridedBatched(dev->blas, CUBLAS_OP_N, CUBLAS_OP_T, c, c, (int)k, &one, Y, c,
                                        (long long)(k * C), Y, c, (long long)(k * C), &zero, scratch, c,
                                        (long long)n2, (int)b));
    if (rest)
        TF_CUBLAS(cublasDgemm(dev->blas, CUBLAS_OP_N, CUBLAS_OP_T, c, c, (int)rest, &one, Y + (uint64_t)b * k * C, c,
                              Y + (uint64_t)b * k * C, c, &zero, scratch + (uint64_t)b * n2, c));
    sum_pieces_kernel<<<blocks_for(dev, n2), LEAD_THREADS, 0, dev->stream>>>(scratch, n2, b + (rest ? 1 : 0), G);
    TF_CU_LAUNCH("sum_pieces_kernel");
    return TF_OK;
}

tf_status tf_gpu_times_v(tf_gpu_dev *dev, const double *Y, uint64_t I, uint64_t C, const double *V, uint64_t r,
                         double *Q)
{
    const double one = 1.0, zero = 0.0;
    if (I == 0) return TF_OK;
    TF_CUBLAS(cublasDgemm(dev->blas, CUBLAS_OP_T, CUBLAS_OP_N, (int)I, (int)r, (int)C, &one, Y, (int)C, V, (int)C,
                          &zero, Q, (int)I));
    return TF_OK;
}

tf_status tf_gpu_lead_eig(tf_gpu_lead *L, uint64_t n, uint64_t r, tf_tucker_svd m, double *U)
{
    tf_gpu_dev *dev = L->dev;
    const cudaStream_t st = dev->stream;
    const int k = (int)n;
    TF_CUSOLVER(cusolverDnDsyevd(dev->solver, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, k, L->G, k, L->w,
                                 L->work, L->lwork, L->info));
    if (m == TF_TUCKER_SVD_ROW_GRAM) {
        TF_TRY(check_info(L, "the eigendecomposition (syevd) of the Gram Y Y^T", n));
        take_leading_kernel<<<blocks_for(dev, n * r), LEAD_THREADS, 0, st>>>(L->G, n, (uint32_t)r, true, U);
        TF_CU_LAUNCH("take_leading_kernel");
        fix_signs_kernel<<<(unsigned)r, LEAD_THREADS, 0, st>>>(U, n, (uint32_t)r);
        TF_CU_LAUNCH("fix_signs_kernel");
    } else {
        TF_TRY(check_info(L, "the eigendecomposition (syevd) of the Gram Y^T Y", n));
        take_leading_kernel<<<blocks_for(dev, n * r), LEAD_THREADS, 0, st>>>(L->G, n, (uint32_t)r, false, L->V);
        TF_CU_LAUNCH("take_leading_kernel");
    }
    return TF_OK;
}

tf_status tf_gpu_lead_qr(tf_gpu_lead *L, uint64_t I, uint64_t r, double *U)
{
    tf_gpu_dev *dev = L->dev;
    const cudaStream_t st = dev->stream;
    const int i = (int)I, k = (int)r;
    TF_CUSOLVER(cusolverDnDgeqrf(dev->solver, i, k, L->Q, i, L->tau, L->work, L->lwork, L->info));
    TF_TRY(check_info(L, "the QR factorisation (geqrf) of Y V", I));
    TF_CUSOLVER(cusolverDnDorgqr(dev->solver, i, k, k, L->Q, i, L->tau, L->work, L->lwork, L->info));
    TF_TRY(check_info(L, "the QR factorisation (orgqr) of Y V", I));
    to_rowmajor_kernel<<<blocks_for(dev, I * r), LEAD_THREADS, 0, st>>>(L->Q, I, (uint32_t)r, U);
    TF_CU_LAUNCH("to_rowmajor_kernel");
    fix_signs_kernel<<<(unsigned)r, LEAD_THREADS, 0, st>>>(U, I, (uint32_t)r);
    TF_CU_LAUNCH("fix_signs_kernel");
    return TF_OK;
}

tf_status tf_gpu_lead_run(tf_gpu_lead *L, const double *Y, uint64_t I, uint64_t C, uint64_t r, tf_tucker_svd m,
                          double *U)
{
    if (m != TF_TUCKER_SVD_ROW_GRAM && m != TF_TUCKER_SVD_COL_GRAM)
        return tf_fail(TF_ERR_UNAVAILABLE, "tucker: the subspace method is not on the GPU yet (the CPU runs it: "
                                           "--device cpu)");
    TF_TRY(tf_gpu_gram(L->dev, Y, I, C, m, L->G, L->part));
    if (m == TF_TUCKER_SVD_ROW_GRAM) return tf_gpu_lead_eig(L, I, r, m, U);
    TF_TRY(tf_gpu_lead_eig(L, C, r, m, U));
    TF_TRY(tf_gpu_times_v(L->dev, Y, I, C, L->V, r, L->Q));
    return tf_gpu_lead_qr(L, I, r, U);
}
