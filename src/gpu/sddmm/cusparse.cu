/* SPDX-License-Identifier: BSD-3-Clause */
/* cuSPARSE's SDDMM on the same inputs, for `tenfold sddmm`'s comparison
 * line: S in CSR (32-bit indices), A (M x K) row-major and B (N x K)
 * row-major used as op(B) = B^T, both with leading dimension Kp (the
 * zero-padded rows the tenfold kernels use), output in place in S's values.
 * Only the sampling form (TF_SDDMM_SAMPLE) exists in cuSPARSE. */
#include <cusparse.h>

#include "gpu/sddmm/common.cuh"

#define TF_CUSPARSE(call)                                                                       \
    do {                                                                                        \
        cusparseStatus_t tf_sp_e_ = (call);                                                     \
        if (tf_sp_e_ != CUSPARSE_STATUS_SUCCESS) {                                              \
            s = tf_fail(TF_ERR_DEVICE, "%s:%d: %s: %s", "sddmm_cusparse.cu", __LINE__, #call,    \
                        cusparseGetErrorString(tf_sp_e_));                                      \
            goto done;                                                                          \
        }                                                                                       \
    } while (0)

namespace {

template <typename T> struct cuda_type;
template <> struct cuda_type<float> { static constexpr cudaDataType value = CUDA_R_32F; };
template <> struct cuda_type<double> { static constexpr cudaDataType value = CUDA_R_64F; };

template <typename T>
tf_status run(tf_cuda_ctx *ctx, const tf_csr *S, const tf_matrix *A, const tf_matrix *B, const tf_sddmm_opts *o,
              double *P, int warmup, int reps, double *times_ms)
{
    if (S->nnz > (uint64_t)INT32_MAX || S->rows > (uint64_t)INT32_MAX || S->cols > (uint64_t)INT32_MAX)
        return tf_fail(TF_ERR_RANGE, "cuSPARSE comparison uses 32-bit CSR indices; S is too large");
    if (o->op != TF_SDDMM_SAMPLE)
        return tf_fail(TF_ERR_ARG, "cusparseSDDMM has no scaled form (S o (A B^T)); use the sampling form");
    const uint32_t Kp = tf_sddmm_padded_k<T>(A->cols);
    tf_dev_array<T> dA, dB, dval;
    tf_dev_array<int32_t> drow, dcol;
    TF_TRY(tf_sddmm_upload_padded(dA, A, Kp, "cuSPARSE SDDMM A"));
    TF_TRY(tf_sddmm_upload_padded(dB, B, Kp, "cuSPARSE SDDMM B"));
    int32_t *hrow = nullptr, *hcol = nullptr;
    TF_TRY(TF_ALLOC(hrow, S->rows + 1, "CSR offsets (int32)"));
    tf_status s = TF_ALLOC(hcol, S->nnz, "CSR columns (int32)");
    if (s == TF_OK) {
        for (uint64_t i = 0; i <= S->rows; ++i) hrow[i] = (int32_t)S->rowptr[i];
        for (uint64_t k = 0; k < S->nnz; ++k) hcol[k] = (int32_t)S->colind[k];
        s = drow.upload(hrow, S->rows + 1, "cuSPARSE CSR offsets");
        if (s == TF_OK) s = dcol.upload(hcol, S->nnz, "cuSPARSE CSR columns");
    }
    tf_free(hrow);
    tf_free(hcol);
    TF_TRY(s);
    TF_TRY(dval.alloc(S->nnz, "cuSPARSE CSR values"));
    cusparseHandle_t h = nullptr;
    cusparseDnMatDescr_t mA = nullptr, mB = nullptr;
    cusparseSpMatDescr_t mC = nullptr;
    void *buf = nullptr;
    size_t bytes = 0;
    const T alpha = (T)o->alpha, beta = (T)o->beta;
    const cudaDataType ty = cuda_type<T>::value;
    TF_CUSPARSE(cusparseCreate(&h));
    TF_CUSPARSE(cusparseSetStream(h, ctx->stream));
    TF_CUSPARSE(cusparseCreateDnMat(&mA, (int64_t)S->rows, (int64_t)A->cols, Kp, dA.p, ty, CUSPARSE_ORDER_ROW));
    TF_CUSPARSE(cusparseCreateDnMat(&mB, (int64_t)S->cols, (int64_t)A->cols, Kp, dB.p, ty, CUSPARSE_ORDER_ROW));
    TF_CUSPARSE(cusparseCreateCsr(&mC, (int64_t)S->rows, (int64_t)S->cols, (int64_t)S->nnz, drow.p, dcol.p, dval.p,
                                  CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, ty));
    s = tf_cuda_put_values<T>(dval.p, S->vals, S->nnz, ctx->stream);
    if (s != TF_OK) goto done;
    TF_CUSPARSE(cusparseSDDMM_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_TRANSPOSE, &alpha, mA,
                                         mB, &beta, mC, ty, CUSPARSE_SDDMM_ALG_DEFAULT, &bytes));
    s = tf_cuda_alloc_bytes(&buf, bytes, "cuSPARSE SDDMM workspace");
    if (s != TF_OK) goto done;
    TF_CUSPARSE(cusparseSDDMM_preprocess(h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_TRANSPOSE, &alpha, mA,
                                         mB, &beta, mC, ty, CUSPARSE_SDDMM_ALG_DEFAULT, buf));
    /* Timed runs (with beta != 0 the values drift run to run; times are what matter). */
    s = tf_cuda_time_runs(ctx->stream, warmup, reps, times_ms, [&]() -> tf_status {
        cusparseStatus_t e = cusparseSDDMM(h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_TRANSPOSE, &alpha,
                                           mA, mB, &beta, mC, ty, CUSPARSE_SDDMM_ALG_DEFAULT, buf);
        if (e != CUSPARSE_STATUS_SUCCESS)
            return tf_fail(TF_ERR_DEVICE, "sddmm_cusparse.cu: cusparseSDDMM: %s", cusparseGetErrorString(e));
        return TF_OK;
    });
    if (s != TF_OK) goto done;
    /* One more run from the original values for the result. */
    s = tf_cuda_put_values<T>(dval.p, S->vals, S->nnz, ctx->stream);
    if (s != TF_OK) goto done;
    TF_CUSPARSE(cusparseSDDMM(h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_TRANSPOSE, &alpha, mA, mB, &beta,
                              mC, ty, CUSPARSE_SDDMM_ALG_DEFAULT, buf));
    s = tf_cuda_get_values<T>(P, dval.p, S->nnz, ctx->stream);
done:
    tf_cuda_free(buf);
    if (mC) cusparseDestroySpMat(mC);
    if (mB) cusparseDestroyDnMat(mB);
    if (mA) cusparseDestroyDnMat(mA);
    if (h) cusparseDestroy(h);
    return s;
}

} // namespace

tf_status tf_cuda_sddmm_cusparse(tf_cuda_ctx *ctx, const tf_csr *S, const tf_matrix *A, const tf_matrix *B,
                                 const tf_sddmm_opts *o, double *P, int warmup, int reps, double *times_ms)
{
    if (o->precision == TF_SINGLE) return run<float>(ctx, S, A, B, o, P, warmup, reps, times_ms);
    return run<double>(ctx, S, A, B, o, P, warmup, reps, times_ms);
}
