/* CUDA-event timing of a launch sequence, shared by the tuners and the
 * benchmark entry points. */
#ifndef TF_CUDA_TIMING_CUH
#define TF_CUDA_TIMING_CUH
#include "cuda/check.cuh"

/* Times fn() (which launches on `stream`) with CUDA events: warmup untimed,
 * then max(reps, 1) timed, each waited for; times_ms may be NULL. Used by
 * the tuners (SDDMM, F-COO) and the SDDMM / SpTTM / MTTKRP benchmarks. */
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
#endif
