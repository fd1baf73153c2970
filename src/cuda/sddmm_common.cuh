/* Pieces shared by the SDDMM schemes and the cuSPARSE comparison: the
 * padded upload of the dense operands, event timing, and the entry points. */
#ifndef TF_CUDA_SDDMM_COMMON_CUH
#define TF_CUDA_SDDMM_COMMON_CUH
#include <stdint.h>

#include "cuda/context.cuh"
extern "C" {
#include "core/alloc.h"
#include "cpu/sddmm.h"
}

/* Row length of A and B on the device: K rounded up to 16 bytes of T. */
template <typename T>
static inline uint32_t tf_sddmm_padded_k(uint64_t K)
{
    const uint64_t w = 16 / sizeof(T);
    return (uint32_t)((K + w - 1) / w * w);
}

/* rows x Kp device copy of m (rows x K), converted to T, zero-padded. */
template <typename T>
static tf_status tf_sddmm_upload_padded(tf_dev_array<T> &d, const tf_matrix *m, uint32_t Kp, const char *what)
{
    const uint64_t n = m->rows * (uint64_t)Kp;
    T *h = nullptr;
    TF_TRY(TF_ALLOC(h, n ? n : 1, "padded dense operand"));
    for (uint64_t i = 0; i < m->rows; ++i)
        for (uint64_t k = 0; k < Kp; ++k) h[i * Kp + k] = k < m->cols ? (T)m->data[i * m->cols + k] : T(0);
    tf_status s = d.upload(h, n, what);
    tf_free(h);
    return s;
}

/* Device context released on scope exit. */
struct tf_cuda_ctx_guard {
    tf_cuda_ctx c;
    ~tf_cuda_ctx_guard() { tf_cuda_ctx_destroy(&c); }
};

/* (Also used by the SpTTM driver.) Times fn() (which launches on `stream`) with CUDA events: warmup untimed,
 * then max(reps, 1) timed; times_ms may be NULL. */
template <typename Fn>
static tf_status tf_cuda_time_runs(cudaStream_t stream, int warmup, int reps, double *times_ms, Fn &&fn)
{
    cudaEvent_t ev0, ev1;
    TF_CU(cudaEventCreate(&ev0));
    cudaError_t ce = cudaEventCreate(&ev1);
    if (ce != cudaSuccess) {
        cudaEventDestroy(ev0);
        return tf_cuda_fail(__FILE__, __LINE__, "cudaEventCreate", ce);
    }
    tf_status s = TF_OK;
    const int total = warmup + (reps > 0 ? reps : 1);
    for (int r = 0; r < total && s == TF_OK; ++r) {
        cudaEventRecord(ev0, stream);
        s = fn();
        cudaEventRecord(ev1, stream);
        if (s != TF_OK) break;
        ce = cudaEventSynchronize(ev1);
        if (ce != cudaSuccess) { s = tf_cuda_fail(__FILE__, __LINE__, "cudaEventSynchronize", ce); break; }
        float ms = 0;
        cudaEventElapsedTime(&ms, ev0, ev1);
        if (r >= warmup && times_ms && reps > 0) times_ms[r - warmup] = ms;
    }
    cudaEventDestroy(ev0);
    cudaEventDestroy(ev1);
    return s;
}

/* The cuSPARSE comparison (cusparseSDDMM, CSR, in-place output). */
tf_status tf_cuda_sddmm_cusparse(tf_cuda_ctx *ctx, const tf_csr *S, const tf_matrix *A, const tf_matrix *B,
                                 const tf_sddmm_opts *o, double *P, int warmup, int reps, double *times_ms);
#endif
