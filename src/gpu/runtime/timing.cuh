/* SPDX-License-Identifier: BSD-3-Clause */
/* CUDA-event timing of a launch sequence, shared by the tuners and the
 * benchmark entry points. */
#ifndef TF_CUDA_TIMING_CUH
#define TF_CUDA_TIMING_CUH
#include "gpu/runtime/check.cuh"

/* Two events, destroyed with the guard. */
struct tf_event_pair {
    cudaEvent_t start = nullptr, stop = nullptr;
    tf_event_pair() = default;
    tf_event_pair(const tf_event_pair &) = delete;
    tf_event_pair &operator=(const tf_event_pair &) = delete;
    ~tf_event_pair()
    {
        if (start) cudaEventDestroy(start);
        if (stop) cudaEventDestroy(stop);
    }
};

/* Times fn() (which launches on `stream`) with CUDA events: warmup untimed,
 * then max(reps, 1) timed, each waited for; times_ms may be NULL. Used by
 * the tuners (SDDMM, F-COO) and the SDDMM / SpTTM / MTTKRP benchmarks. */
template <typename Fn>
static tf_status tf_cuda_time_runs(cudaStream_t stream, int warmup, int reps, double *times_ms, Fn &&fn)
{
    tf_event_pair ev;
    TF_CU(cudaEventCreate(&ev.start));
    TF_CU(cudaEventCreate(&ev.stop));
    const int total = warmup + (reps > 0 ? reps : 1);
    for (int r = 0; r < total; ++r) {
        TF_CU(cudaEventRecord(ev.start, stream));
        TF_TRY(fn());
        TF_CU(cudaEventRecord(ev.stop, stream));
        TF_CU(cudaEventSynchronize(ev.stop));
        float ms = 0;
        TF_CU(cudaEventElapsedTime(&ms, ev.start, ev.stop));
        if (r >= warmup && times_ms && reps > 0) times_ms[r - warmup] = ms;
    }
    return TF_OK;
}
#endif
