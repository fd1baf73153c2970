/* SPDX-License-Identifier: BSD-3-Clause */
/* SDDMM plans against one-shot calls (issue 30), on one matrix:
 *
 *   bench_sddmm_plan MATRIX [-k K] [--precision double|single] [--device cpu|gpu]
 *                    [--runs N] [--reps R]
 *
 * prints (one RESULT line each, then a summary):
 *   build     the plan's build (validation, tiles, uploads, the timed choice)
 *   kernel    the kernel alone (tf_sddmm_plan_time: CUDA events on the GPU),
 *             median of R
 *   overhead  GPU, A, B and P in GPU memory (cudaMalloc, as a caller that keeps
 *             them there): the wall time of one tf_sddmm_plan_run that returns
 *             with P written (median of R after warm-up) less the kernel's
 *             median; the host time of one call queued on the caller's stream
 *             (returns at once); and the wall time per run of N runs queued
 *             back to back on that stream, less the kernel's
 *   repeat    N plan runs against N one-shot tf_sddmm calls on host arrays
 *             (wall time of all N each, one context for both: the saving per
 *             call is the build's work), and N plan runs on GPU arrays
 * A and B are random (fixed seed); K defaults to 32, N to 100, R to 200. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tenfold.h"
#ifdef TF_BENCH_CUDA
#include <cuda_runtime.h>
#endif

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static tf_matrix random_dense(uint64_t rows, uint64_t cols, uint64_t seed)
{
    tf_matrix m = {0};
    if (tf_matrix_alloc(&m, rows, cols) != TF_OK) return m;
    uint64_t x = seed * 0x9E3779B97F4A7C15ULL + 1;
    for (uint64_t k = 0; k < rows * cols; ++k) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        m.data[k] = (double)(x >> 11) * 0x1.0p-53 * 2.0 - 1.0;
    }
    return m;
}

#define TRY(call)                                                                                     \
    do {                                                                                              \
        if ((call) != TF_OK) {                                                                        \
            fprintf(stderr, "bench_sddmm_plan: %s: %s\n", #call, tf_last_error());                    \
            return 1;                                                                                 \
        }                                                                                             \
    } while (0)

#ifdef TF_BENCH_CUDA
#define CU(call)                                                                                      \
    do {                                                                                              \
        cudaError_t e_ = (call);                                                                      \
        if (e_ != cudaSuccess) {                                                                      \
            fprintf(stderr, "bench_sddmm_plan: %s: %s\n", #call, cudaGetErrorString(e_));             \
            return 1;                                                                                 \
        }                                                                                             \
    } while (0)

/* A, B and P in GPU memory: per-run overhead and N runs. */
static int gpu_arrays(tf_sddmm_plan *plan, const tf_csr *S, const tf_matrix *A, const tf_matrix *B, int single,
                      int runs, int reps, double kernel_ms)
{
    const size_t w = single ? sizeof(float) : sizeof(double);
    const uint64_t K = A->cols, nA = S->rows * K, nB = S->cols * K;
    void *hA = malloc((nA + nB) * w), *dA = NULL, *dB = NULL, *dP = NULL;
    if (!hA) return 1;
    for (uint64_t k = 0; k < nA + nB; ++k) {
        const double v = k < nA ? A->data[k] : B->data[k - nA];
        if (single) ((float *)hA)[k] = (float)v;
        else ((double *)hA)[k] = v;
    }
    CU(cudaMalloc(&dA, nA * w));
    CU(cudaMalloc(&dB, nB * w));
    CU(cudaMalloc(&dP, S->nnz * w));
    CU(cudaMemcpy(dA, hA, nA * w, cudaMemcpyHostToDevice));
    CU(cudaMemcpy(dB, (char *)hA + nA * w, nB * w, cudaMemcpyHostToDevice));
    free(hA);
    const tf_precision pr = single ? TF_SINGLE : TF_DOUBLE;
    const tf_dense a = {dA, S->rows, K, K, pr, TF_MEMORY_DEVICE}, b = {dB, S->cols, K, K, pr, TF_MEMORY_DEVICE};
    const tf_dense p = {dP, S->nnz, 1, 1, pr, TF_MEMORY_DEVICE};
    cudaStream_t stream;
    CU(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    const tf_sddmm_run_opts ro = {stream, NULL, 0};
    double *t = calloc((size_t)reps, sizeof *t);
    if (!t) return 1;
    for (int i = 0; i < 20; ++i) TRY(tf_sddmm_plan_run(plan, &a, &b, &p, NULL)); /* warm-up */
    for (int i = 0; i < reps; ++i) {
        const double t0 = tf_wtime();
        TRY(tf_sddmm_plan_run(plan, &a, &b, &p, NULL));
        t[i] = (tf_wtime() - t0) * 1e3;
    }
    const double sync_ms = median(t, reps);
    for (int i = 0; i < reps; ++i) {
        CU(cudaStreamSynchronize(stream)); /* each call finds the stream idle */
        const double t0 = tf_wtime();
        TRY(tf_sddmm_plan_run(plan, &a, &b, &p, &ro));
        t[i] = (tf_wtime() - t0) * 1e3;
    }
    CU(cudaStreamSynchronize(stream));
    const double call_ms = median(t, reps);
    const double t0 = tf_wtime();
    for (int i = 0; i < runs; ++i) TRY(tf_sddmm_plan_run(plan, &a, &b, &p, &ro));
    CU(cudaStreamSynchronize(stream));
    const double queued_ms = (tf_wtime() - t0) * 1e3 / runs;
    const double t1 = tf_wtime();
    for (int i = 0; i < runs; ++i) TRY(tf_sddmm_plan_run(plan, &a, &b, &p, NULL));
    const double sync_total_ms = (tf_wtime() - t1) * 1e3;
    printf("RESULT overhead sync_run_ms=%.4f kernel_ms=%.4f overhead_us=%.2f async_call_us=%.2f "
           "queued_run_ms=%.4f queued_overhead_us=%.2f\n",
           sync_ms, kernel_ms, (sync_ms - kernel_ms) * 1e3, call_ms * 1e3, queued_ms, (queued_ms - kernel_ms) * 1e3);
    printf("RESULT repeat_gpu_arrays runs=%d plan_total_ms=%.3f plan_per_run_ms=%.4f\n", runs, sync_total_ms,
           sync_total_ms / runs);
    free(t);
    cudaStreamDestroy(stream);
    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dP);
    return 0;
}
#endif

int main(int argc, char **argv)
{
    const char *path = NULL, *device = "gpu";
    uint64_t K = 32;
    int single = 0, runs = 100, reps = 200;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "-k") && i + 1 < argc) K = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--precision") && i + 1 < argc) single = !strcmp(argv[++i], "single");
        else if (!strcmp(argv[i], "--device") && i + 1 < argc) device = argv[++i];
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc) runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else path = argv[i];
    }
    if (!path || K == 0 || runs < 1 || reps < 1) {
        fprintf(stderr, "usage: bench_sddmm_plan MATRIX [-k K] [--precision double|single] [--device cpu|gpu] "
                        "[--runs N] [--reps R]\n");
        return 2;
    }
    const int gpu = !strcmp(device, "gpu");
    tf_tensor coo;
    tf_csr S;
    TRY(tf_read_tensor(path, 0, &coo, NULL));
    TRY(tf_csr_from_coo(&coo, &S));
    tf_context_opts co;
    tf_context_opts_default(&co);
    co.backend = gpu ? TF_BACKEND_GPU : TF_BACKEND_CPU;
    tf_context *ctx = NULL;
    TRY(tf_context_create(&co, &ctx));
    tf_sddmm_opts o;
    tf_sddmm_opts_default(&o);
    o.backend = co.backend;
    o.precision = single ? TF_SINGLE : TF_DOUBLE;
    o.context = ctx;
    tf_matrix A = random_dense(S.rows, K, 1), B = random_dense(S.cols, K, 2);
    double *P = malloc((S.nnz + 1) * sizeof *P), *t = calloc((size_t)reps, sizeof *t);
    if (!A.data || !B.data || !P || !t) return 1;
    char desc[256] = "cpu";
    if (gpu) tf_gpu_describe(0, desc, sizeof desc);
    printf("matrix %s: %llu x %llu, %llu nnz; K %llu, %s, %s\n", path, (unsigned long long)S.rows,
           (unsigned long long)S.cols, (unsigned long long)S.nnz, (unsigned long long)K, single ? "single" : "double",
           desc);
    /* the context's set-up (CUDA, streams) once, before anything is timed */
    TRY(tf_sddmm(&S, &A, &B, &o, P, NULL));

    tf_sddmm_plan *plan = NULL;
    double t0 = tf_wtime();
    TRY(tf_sddmm_plan_build(&S, K, &o, &plan));
    const double build_ms = (tf_wtime() - t0) * 1e3;
    tf_sddmm_info info;
    TRY(tf_sddmm_plan_info(plan, &info));
    const tf_dense a = tf_dense_host(&A), b = tf_dense_host(&B);
    const tf_dense p = {P, S.nnz, 1, 1, TF_DOUBLE, TF_MEMORY_HOST};
    TRY(tf_sddmm_plan_time(plan, &a, &b, 5, reps, t));
    const double kernel_ms = median(t, reps);
    printf("RESULT build_ms=%.3f kernel_ms=%.4f algo=%d vwarp=%u nper=%u blocks=%llu\n", build_ms, kernel_ms,
           (int)info.algo, info.vwarp, info.nper, (unsigned long long)info.blocks);

    for (int i = 0; i < 3; ++i) TRY(tf_sddmm_plan_run(plan, &a, &b, &p, NULL)); /* warm-up */
    t0 = tf_wtime();
    for (int i = 0; i < runs; ++i) TRY(tf_sddmm_plan_run(plan, &a, &b, &p, NULL));
    const double plan_ms = (tf_wtime() - t0) * 1e3;
    t0 = tf_wtime();
    for (int i = 0; i < runs; ++i) TRY(tf_sddmm(&S, &A, &B, &o, P, NULL));
    const double shot_ms = (tf_wtime() - t0) * 1e3;
    printf("RESULT repeat_host_arrays runs=%d plan_total_ms=%.3f one_shot_total_ms=%.3f plan_per_run_ms=%.4f "
           "one_shot_per_call_ms=%.4f saving_per_call_ms=%.4f speedup=%.2f\n",
           runs, plan_ms + build_ms, shot_ms, plan_ms / runs, shot_ms / runs, (shot_ms - plan_ms) / runs,
           shot_ms / (plan_ms + build_ms));
#ifdef TF_BENCH_CUDA
    if (gpu && gpu_arrays(plan, &S, &A, &B, single, runs, reps, kernel_ms)) return 1;
#endif
    tf_sddmm_plan_free(plan);
    tf_context_free(ctx);
    tf_matrix_free(&A);
    tf_matrix_free(&B);
    free(P);
    free(t);
    tf_csr_free(&S);
    tf_tensor_free(&coo);
    return 0;
}
