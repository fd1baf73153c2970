/* SPDX-License-Identifier: BSD-3-Clause */
/* CUDA-event timing of a launch sequence, shared by the tuners and the
 * benchmark entry points. */
#ifndef TF_GPU_RUNTIME_TIMING_CUH
#define TF_GPU_RUNTIME_TIMING_CUH
#include <stdio.h>
#include <string.h>

#include <chrono>

#include "gpu/runtime/check.cuh"

/* Wall-clock seconds (steady clock) for host-side timing of work spread
 * over several GPUs. */
static inline double tf_gpu_wall()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

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
static tf_status tf_gpu_time_runs(cudaStream_t stream, int warmup, int reps, double *times_ms, Fn &&fn)
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
/* Wall-clock phases of a plan build, for tuning.build_report (a
 * measurement aid; off, it does nothing): mark(name) waits for `stream`
 * so the GPU work queued so far counts in its phase (which removes the
 * overlap between phases: the total is then a little longer than
 * unmeasured), and report() prints one line "BUILD-PHASES what total_ms=..
 * name=ms ..." to stderr. A name marked again adds to its time. */
struct tf_phase_clock {
    bool on = false;
    cudaStream_t stream = nullptr;
    double t0 = 0, last = 0;
    int n = 0;
    const char *name[24] = {nullptr};
    double ms[24] = {0};

    static double now()
    {
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
    }
    tf_phase_clock(bool enabled, cudaStream_t s) : on(enabled), stream(s)
    {
        if (on) t0 = last = now();
    }
    void mark(const char *what)
    {
        if (!on) return;
        cudaStreamSynchronize(stream);
        const double t = now();
        int k = 0;
        while (k < n && strcmp(name[k], what)) ++k;
        if (k == n && n < 24) name[n++] = what;
        if (k < n) ms[k] += t - last;
        last = t;
    }
    void report(const char *what) const
    {
        if (!on) return;
        char line[1024];
        int len = snprintf(line, sizeof line, "BUILD-PHASES %s total_ms=%.2f", what, last - t0);
        for (int k = 0; k < n && len > 0 && (size_t)len < sizeof line; ++k)
            len += snprintf(line + len, sizeof line - (size_t)len, " %s=%.2f", name[k], ms[k]);
        fprintf(stderr, "%s\n", line);
    }
};
#endif
