/* SPDX-License-Identifier: BSD-3-Clause */
/* cuSPARSE's SDDMM as a scheme of an SDDMM plan, for `tenfold sddmm`'s
 * comparison line: S in CSR (32-bit indices), A (M x K) row-major and B
 * (N x K) row-major used as op(B) = B^T, both with leading dimension Kp
 * (the zero-padded rows the tenfold kernels use), output in place in a
 * copy of S's values. The handle, descriptors and workspace are made and
 * preprocessed once, at the plan's build. Only the sampling form
 * (TF_SDDMM_SAMPLE) exists in cuSPARSE. */
#include <cusparse.h>

#include <new>

#include "gpu/sddmm/common.cuh"

#define TF_CUSPARSE(call)                                                                       \
    do {                                                                                        \
        cusparseStatus_t tf_sp_e_ = (call);                                                     \
        if (tf_sp_e_ != CUSPARSE_STATUS_SUCCESS)                                                \
            return tf_fail(TF_ERR_DEVICE, "%s:%d: %s: %s", "sddmm/cusparse.cu", __LINE__, #call, \
                           cusparseGetErrorString(tf_sp_e_));                                   \
    } while (0)

struct tf_cusparse_sddmm {
    cusparseHandle_t h = nullptr;
    cusparseDnMatDescr_t mA = nullptr, mB = nullptr;
    cusparseSpMatDescr_t mC = nullptr;
    void *buf = nullptr;
    void *val = nullptr, *sval = nullptr; /* nnz: cuSPARSE's output in place, S's values */
    int32_t *row = nullptr, *col = nullptr;
    uint64_t nnz = 0;
    size_t vbytes = 0;
    cudaDataType ty = CUDA_R_64F;
    double alpha = 1, beta = 0;
    float alpha32 = 1, beta32 = 0;

    ~tf_cusparse_sddmm()
    {
        if (mC) cusparseDestroySpMat(mC);
        if (mB) cusparseDestroyDnMat(mB);
        if (mA) cusparseDestroyDnMat(mA);
        if (h) cusparseDestroy(h);
        tf_gpu_free(buf);
        tf_gpu_free(val);
        tf_gpu_free(sval);
        tf_gpu_free(row);
        tf_gpu_free(col);
    }
    const void *a() const { return ty == CUDA_R_32F ? (const void *)&alpha32 : (const void *)&alpha; }
    const void *b() const { return ty == CUDA_R_32F ? (const void *)&beta32 : (const void *)&beta; }

    tf_status make(tf_gpu_dev *ctx, const tf_csr *S, uint64_t K, uint32_t Kp, bool single, const void *dA,
                   const void *dB, const tf_sddmm_opts *o)
    {
        nnz = S->nnz;
        ty = single ? CUDA_R_32F : CUDA_R_64F;
        vbytes = single ? sizeof(float) : sizeof(double);
        alpha = o->alpha;
        beta = o->beta;
        alpha32 = (float)o->alpha;
        beta32 = (float)o->beta;
        int32_t *hrow = nullptr, *hcol = nullptr;
        TF_TRY(TF_ALLOC(hrow, S->rows + 1, "CSR offsets (int32)"));
        tf_status s = TF_ALLOC(hcol, S->nnz, "CSR columns (int32)");
        if (s == TF_OK) {
            for (uint64_t i = 0; i <= S->rows; ++i) hrow[i] = (int32_t)S->rowptr[i];
            for (uint64_t k = 0; k < S->nnz; ++k) hcol[k] = (int32_t)S->colind[k];
            s = tf_gpu_upload_new(&row, hrow, S->rows + 1, "cuSPARSE CSR offsets");
            if (s == TF_OK) s = tf_gpu_upload_new(&col, hcol, S->nnz, "cuSPARSE CSR columns");
        }
        tf_free(hrow);
        tf_free(hcol);
        TF_TRY(s);
        TF_TRY(tf_gpu_alloc_bytes(&val, nnz * vbytes, "cuSPARSE CSR values"));
        TF_TRY(tf_gpu_alloc_bytes(&sval, nnz * vbytes, "cuSPARSE S values"));
        if (single) TF_TRY(tf_gpu_put_values<float>((float *)sval, S->vals, nnz, ctx->stream));
        else TF_TRY(tf_gpu_put_values<double>((double *)sval, S->vals, nnz, ctx->stream));
        TF_CUSPARSE(cusparseCreate(&h));
        TF_CUSPARSE(cusparseSetStream(h, ctx->stream));
        TF_CUSPARSE(cusparseCreateDnMat(&mA, (int64_t)S->rows, (int64_t)K, Kp, (void *)dA, ty, CUSPARSE_ORDER_ROW));
        TF_CUSPARSE(cusparseCreateDnMat(&mB, (int64_t)S->cols, (int64_t)K, Kp, (void *)dB, ty, CUSPARSE_ORDER_ROW));
        TF_CUSPARSE(cusparseCreateCsr(&mC, (int64_t)S->rows, (int64_t)S->cols, (int64_t)S->nnz, row, col, val,
                                      CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, ty));
        TF_CU(cudaMemcpyAsync(val, sval, nnz * vbytes, cudaMemcpyDeviceToDevice, ctx->stream));
        size_t bytes = 0;
        TF_CUSPARSE(cusparseSDDMM_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_TRANSPOSE, a(),
                                             mA, mB, b(), mC, ty, CUSPARSE_SDDMM_ALG_DEFAULT, &bytes));
        TF_TRY(tf_gpu_alloc_bytes(&buf, bytes, "cuSPARSE SDDMM workspace"));
        TF_CUSPARSE(cusparseSDDMM_preprocess(h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_TRANSPOSE, a(),
                                             mA, mB, b(), mC, ty, CUSPARSE_SDDMM_ALG_DEFAULT, buf));
        TF_CU(cudaStreamSynchronize(ctx->stream));
        return TF_OK;
    }

    tf_status launch(cudaStream_t s, void *out)
    {
        TF_CUSPARSE(cusparseSetStream(h, s));
        if (out) TF_CU(cudaMemcpyAsync(val, sval, nnz * vbytes, cudaMemcpyDeviceToDevice, s));
        TF_CUSPARSE(cusparseSDDMM(h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_TRANSPOSE, a(), mA, mB, b(),
                                  mC, ty, CUSPARSE_SDDMM_ALG_DEFAULT, buf));
        if (out) TF_CU(cudaMemcpyAsync(out, val, nnz * vbytes, cudaMemcpyDeviceToDevice, s));
        return TF_OK;
    }
};

tf_status tf_cusparse_sddmm_create(tf_gpu_dev *ctx, const tf_csr *S, uint64_t K, uint32_t Kp, bool single,
                                   const void *dA, const void *dB, const tf_sddmm_opts *o, tf_cusparse_sddmm **out)
{
    *out = nullptr;
    if (S->nnz > (uint64_t)INT32_MAX || S->rows > (uint64_t)INT32_MAX || S->cols > (uint64_t)INT32_MAX)
        return tf_fail(TF_ERR_RANGE, "cuSPARSE comparison uses 32-bit CSR indices; S is too large");
    if (o->op != TF_SDDMM_SAMPLE)
        return tf_fail(TF_ERR_ARG, "cusparseSDDMM has no scaled form (S o (A B^T)); use the sampling form");
    tf_cusparse_sddmm *c = new (std::nothrow) tf_cusparse_sddmm();
    if (!c) return tf_fail(TF_ERR_NOMEM, "out of memory for the cuSPARSE SDDMM");
    const tf_status s = c->make(ctx, S, K, Kp, single, dA, dB, o);
    if (s != TF_OK) {
        delete c;
        return s;
    }
    *out = c;
    return TF_OK;
}

tf_status tf_cusparse_sddmm_launch(tf_cusparse_sddmm *c, cudaStream_t s, void *out) { return c->launch(s, out); }

void tf_cusparse_sddmm_free(tf_cusparse_sddmm *c) { delete c; }
