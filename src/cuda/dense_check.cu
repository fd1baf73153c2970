/* Test entries to the dense kernels of GPU CP-ALS; see dense_check.h. */
#include "cuda/dense_check.h"

#include "cuda/context.cuh"
#include "cuda/dense_cuda.cuh"

namespace {

template <typename T>
tf_status apply_gram_check(const double *hM, uint64_t I, const double *hW, int norm, double *hA, double *hlambda,
                           double *hs, double *hG, int *nonfinite)
{
    const uint32_t R = TF_GPU_APPLY_GRAM_RANK, RR = R * R;
    if (I == 0) return tf_fail(TF_ERR_ARG, "apply + Gram check: no rows");
    int dev = 0;
    TF_CU(cudaGetDevice(&dev));
    cudaStream_t st = nullptr;
    TF_CU(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    struct stream_guard {
        cudaStream_t s;
        ~stream_guard() { cudaStreamDestroy(s); }
    } guard{st};
    tf_dev_array<T> M, W, A, s, lambda, G;
    tf_dev_array<double> gpart, graw;
    tf_dev_array<tf_gpu_scalars> sc;
    TF_TRY(M.alloc(I * R, "M"));
    TF_TRY(W.alloc(RR, "W"));
    TF_TRY(A.alloc(I * R, "A"));
    TF_TRY(s.alloc(R, "scales"));
    TF_TRY(lambda.alloc(R, "lambda"));
    TF_TRY(G.alloc(RR, "G"));
    const uint64_t np = tf_gpu_gram_partial_count(I, R);
    TF_TRY(gpart.alloc(np, "Gram partials"));
    TF_TRY(graw.alloc(RR, "raw Gram"));
    TF_TRY(sc.alloc(1, "scalars"));
    TF_TRY(tf_cuda_put_values(M.p, hM, I * R, st));
    TF_TRY(tf_cuda_put_values(W.p, hW, RR, st));
    /* poison everything the pass writes (all bits set: a NaN in both types) */
    TF_CU(cudaMemsetAsync(A.p, 0xff, I * R * sizeof(T), st));
    TF_CU(cudaMemsetAsync(s.p, 0xff, R * sizeof(T), st));
    TF_CU(cudaMemsetAsync(lambda.p, 0xff, R * sizeof(T), st));
    TF_CU(cudaMemsetAsync(G.p, 0xff, RR * sizeof(T), st));
    TF_CU(cudaMemsetAsync(gpart.p, 0xff, np * sizeof(double), st));
    TF_CU(cudaMemsetAsync(graw.p, 0xff, RR * sizeof(double), st));
    TF_CU(cudaMemsetAsync(sc.p, 0, sizeof(tf_gpu_scalars), st));
    TF_TRY(tf_gpu_apply_gram<T>(M.p, I, R, W.p, A.p, norm, gpart.p, graw.p, s.p, lambda.p, G.p, sc.p, st));
    TF_TRY(tf_cuda_get_values(hA, A.p, I * R, st));
    TF_TRY(tf_cuda_get_values(hlambda, lambda.p, R, st));
    TF_TRY(tf_cuda_get_values(hs, s.p, R, st));
    TF_TRY(tf_cuda_get_values(hG, G.p, RR, st));
    tf_gpu_scalars h;
    TF_CU(cudaMemcpyAsync(&h, sc.p, sizeof h, cudaMemcpyDeviceToHost, st));
    TF_CU(cudaStreamSynchronize(st));
    *nonfinite = h.nonfinite;
    return TF_OK;
}

} // namespace

extern "C" tf_status tf_gpu_check_apply_gram(tf_precision prec, const double *M, uint64_t I, const double *W,
                                             int norm, double *A, double *lambda, double *s, double *G,
                                             int *nonfinite)
{
    if (norm != 1 && norm != 2) return tf_fail(TF_ERR_ARG, "apply + Gram check: norm %d is not 1 or 2", norm);
    return prec == TF_SINGLE ? apply_gram_check<float>(M, I, W, norm, A, lambda, s, G, nonfinite)
                             : apply_gram_check<double>(M, I, W, norm, A, lambda, s, G, nonfinite);
}
