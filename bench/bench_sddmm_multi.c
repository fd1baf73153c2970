/* SPDX-License-Identifier: BSD-3-Clause */
/* SDDMM plans over several GPUs against one GPU (issue 30 item 2):
 *
 *   bench_sddmm_multi MATRIX [-k K[,K..]] [--precision double,single]
 *                     [--gpus G[,G..]] [--algo auto|row|sm-l2] [--reps R] [--warmup W]
 *
 * For every K and precision, a plan on GPU 0 alone, then on GPUs 0..G-1 for
 * every G of the list (default 2; e.g. 2,4 for a scaling table), each with A, B and P on the devices (per-GPU operands,
 * tf_sddmm_run_opts.parts: GPU g holds its panel's rows of A, all of B and
 * its slice of P, cudaMalloc'd as a caller's own):
 *   build     the plan's build: the one-time distribution (S cut into
 *             panels, each GPU tiles, uploads and tunes its own, at once)
 *   operands  placing A and B on the GPUs (host -> device copies; apart)
 *   run       tf_sddmm_plan_run on the per-GPU operands, returning with P
 *             written (wall clock, median of R after W warm-ups)
 *   kernel    tf_sddmm_plan_time_panels: CUDA events on each GPU around its
 *             kernel and on GPU 0 around all (median of R)
 * then SPEEDUP lines (one GPU's median over G GPUs') and the largest
 * difference of the G-GPU P from the one-GPU P (relative to max |P|).
 * A configuration that does not fit the GPUs' memory prints SKIP and the
 * next one runs. A and B hold values from a fixed pool, by global element
 * index (the same numbers on 1 and G GPUs). R defaults to 20, W to 3. The
 * TF_* tuning variables apply (TF_BUILD_REPORT=1: each GPU's build phases,
 * BUILD-PHASES lines on stderr). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tenfold.h"
#ifdef TF_BENCH_CUDA
#include <cuda_runtime.h>
#endif

#ifndef TF_BENCH_CUDA
int main(void)
{
    fprintf(stderr, "bench_sddmm_multi: built without the CUDA backend\n");
    return 77;
}
#else

#define POOL 16777259ull /* values in the pool (a prime near 2^24) */

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(const double *v, int n)
{
    double *c = malloc((size_t)n * sizeof *c);
    if (!c) return 0.0;
    memcpy(c, v, (size_t)n * sizeof *c);
    qsort(c, (size_t)n, sizeof *c, cmp_double);
    const double m = n % 2 ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
    free(c);
    return m;
}

#define CU(call)                                                                                      \
    do {                                                                                              \
        cudaError_t e_ = (call);                                                                      \
        if (e_ != cudaSuccess) {                                                                      \
            fprintf(stderr, "bench_sddmm_multi: %s: %s\n", #call, cudaGetErrorString(e_));            \
            return 1;                                                                                 \
        }                                                                                             \
    } while (0)

/* The pool of values in pinned memory, as floats and as doubles. */
static void *pool_f, *pool_d;

static int make_pool(void)
{
    CU(cudaMallocHost(&pool_f, POOL * sizeof(float)));
    CU(cudaMallocHost(&pool_d, POOL * sizeof(double)));
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (uint64_t i = 0; i < POOL; ++i) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        const double v = (double)(x >> 11) * 0x1.0p-53 * 2.0 - 1.0;
        ((double *)pool_d)[i] = v;
        ((float *)pool_f)[i] = (float)v;
    }
    return 0;
}

/* n values of width w into GPU memory dst: pool[(off + i) % POOL]. */
static int fill(void *dst, uint64_t off, uint64_t n, size_t w)
{
    const char *pool = w == sizeof(float) ? pool_f : pool_d;
    for (uint64_t done = 0; done < n;) {
        const uint64_t at = (off + done) % POOL, len = n - done < POOL - at ? n - done : POOL - at;
        CU(cudaMemcpy((char *)dst + done * w, pool + at * w, len * w, cudaMemcpyHostToDevice));
        done += len;
    }
    return 0;
}

typedef struct config {
    const tf_csr *S;
    uint64_t K;
    tf_precision prec;
    tf_sddmm_algo algo;
    int gpus, reps, warmup;
} config;

typedef struct outcome {
    int ran;         /* 0: skipped (did not fit, or failed) */
    double build_ms, operands_ms, run_ms, kernel_ms;
    double *P;       /* the result, as doubles (host) */
} outcome;

/* Per-GPU operands of every panel (parts), allocated and filled. */
typedef struct operands {
    tf_sddmm_part_operands parts[TF_MAX_GPUS];
    void *mem[TF_MAX_GPUS][3];
    tf_sddmm_panel q[TF_MAX_GPUS];
    uint32_t n;
} operands;

static void free_operands(operands *x)
{
    for (uint32_t g = 0; g < x->n; ++g)
        for (int k = 0; k < 3; ++k)
            if (x->mem[g][k]) {
                cudaSetDevice(x->q[g].device);
                cudaFree(x->mem[g][k]);
                x->mem[g][k] = NULL;
            }
}

/* 1: out of memory (a SKIP); 0: placed. */
static int place_operands(tf_sddmm_plan *plan, const config *c, operands *x)
{
    const size_t w = c->prec == TF_SINGLE ? sizeof(float) : sizeof(double);
    const uint64_t K = c->K, N = c->S->cols;
    for (uint32_t g = 0; g < x->n; ++g) {
        if (tf_sddmm_plan_panel(plan, g, &x->q[g]) != TF_OK) return 1;
        const tf_sddmm_panel *q = &x->q[g];
        const uint64_t rows = q->row_hi - q->row_lo, nnz = q->nnz_hi - q->nnz_lo;
        CU(cudaSetDevice(q->device));
        const size_t bytes[3] = {rows * K * w, N * K * w, nnz * w};
        for (int k = 0; k < 3; ++k)
            if (cudaMalloc(&x->mem[g][k], bytes[k] ? bytes[k] : 16) != cudaSuccess) {
                cudaGetLastError();
                x->mem[g][k] = NULL;
                fprintf(stderr, "  (GPU %d: no room for %zu bytes of %c)\n", q->device, bytes[k], "ABP"[k]);
                return 1;
            }
        if (fill(x->mem[g][0], q->row_lo * K, rows * K, w) || fill(x->mem[g][1], 0, N * K, w)) return 1;
        CU(cudaMemset(x->mem[g][2], 0xff, bytes[2]));
        const tf_dense A = {x->mem[g][0], rows, K, K, c->prec, TF_MEMORY_DEVICE};
        const tf_dense B = {x->mem[g][1], N, K, K, c->prec, TF_MEMORY_DEVICE};
        const tf_dense P = {x->mem[g][2], nnz, 1, 1, c->prec, TF_MEMORY_DEVICE};
        x->parts[g].A = A;
        x->parts[g].B = B;
        x->parts[g].P = P;
    }
    for (uint32_t g = 0; g < x->n; ++g) {
        CU(cudaSetDevice(x->q[g].device));
        CU(cudaDeviceSynchronize());
    }
    return 0;
}

/* The timed runs on placed operands; prints the RESULT and PANEL lines. */
static int measure(tf_sddmm_plan *plan, const config *c, operands *x, outcome *out)
{
    const char *pn = c->prec == TF_SINGLE ? "single" : "double";
    const tf_sddmm_run_opts ro = {NULL, x->parts, x->n};
    const int R = c->reps;
    double *t = calloc((size_t)R, sizeof *t), *whole = calloc((size_t)R, sizeof *whole);
    double *part = calloc((size_t)R * x->n, sizeof *part), *col = calloc((size_t)R, sizeof *col);
    int rc = !t || !whole || !part || !col;
    for (int r = 0; r < c->warmup && !rc; ++r) rc = tf_sddmm_plan_run(plan, NULL, NULL, NULL, &ro) != TF_OK;
    for (int r = 0; r < R && !rc; ++r) {
        const double t0 = tf_wtime();
        rc = tf_sddmm_plan_run(plan, NULL, NULL, NULL, &ro) != TF_OK;
        t[r] = (tf_wtime() - t0) * 1e3;
    }
    if (!rc) rc = tf_sddmm_plan_time_panels(plan, NULL, NULL, &ro, c->warmup, R, whole, part) != TF_OK;
    if (rc) {
        fprintf(stderr, "bench_sddmm_multi: runs: %s\n", tf_last_error());
    } else {
        const double nnz = (double)c->S->nnz;
        out->run_ms = median(t, R);
        out->kernel_ms = median(whole, R);
        printf("RESULT k=%llu prec=%s gpus=%d nnz=%llu build_ms=%.1f operands_ms=%.1f run_ms=%.4f kernel_ms=%.4f "
               "gflops=%.1f\n",
               (unsigned long long)c->K, pn, c->gpus, (unsigned long long)c->S->nnz, out->build_ms, out->operands_ms,
               out->run_ms, out->kernel_ms, 2.0 * (double)c->K * nnz / (out->run_ms * 1e-3) / 1e9);
        for (uint32_t g = 0; g < x->n; ++g) {
            const tf_sddmm_panel *q = &x->q[g];
            for (int r = 0; r < R; ++r) col[r] = part[(size_t)r * x->n + g];
            printf("PANEL k=%llu prec=%s gpus=%d panel=%u device=%d rows=%llu..%llu nnz=%llu share=%.1f algo=%s "
                   "build_ms=%.1f kernel_ms=%.4f\n",
                   (unsigned long long)c->K, pn, c->gpus, g, q->device, (unsigned long long)q->row_lo,
                   (unsigned long long)q->row_hi, (unsigned long long)(q->nnz_hi - q->nnz_lo),
                   nnz > 0 ? 100.0 * (double)(q->nnz_hi - q->nnz_lo) / nnz : 0.0, q->nnz_hi > q->nnz_lo ? tf_sddmm_algo_name(q->info.algo) : "-",
                   q->build_ms, median(col, R));
        }
    }
    free(t);
    free(whole);
    free(part);
    free(col);
    return rc;
}

/* P back to the host as doubles (one copy per panel). */
static int gather(const config *c, const operands *x, double *P)
{
    const size_t w = c->prec == TF_SINGLE ? sizeof(float) : sizeof(double);
    for (uint32_t g = 0; g < x->n; ++g) {
        const uint64_t lo = x->q[g].nnz_lo, n = x->q[g].nnz_hi - lo;
        if (!n) continue;
        CU(cudaSetDevice(x->q[g].device));
        if (w == sizeof(double)) {
            CU(cudaMemcpy(P + lo, x->mem[g][2], n * w, cudaMemcpyDeviceToHost));
            continue;
        }
        float *f = malloc(n * w);
        if (!f) return 1;
        const cudaError_t e = cudaMemcpy(f, x->mem[g][2], n * w, cudaMemcpyDeviceToHost);
        for (uint64_t k = 0; k < n && e == cudaSuccess; ++k) P[lo + k] = f[k];
        free(f);
        CU(e);
    }
    return 0;
}

/* One configuration on c->gpus GPUs; out->ran = 0 when it was skipped. */
static int run_config(const config *c, outcome *out)
{
    memset(out, 0, sizeof *out);
    const char *pn = c->prec == TF_SINGLE ? "single" : "double";
    tf_context_opts co;
    tf_context_opts_default(&co);
    co.backend = TF_BACKEND_GPU;
    co.ndevices = c->gpus;
    tf_tuning tuning;
    tf_tuning_default(&tuning);
    tf_tuning_from_env(&tuning); /* TF_BUILD_REPORT=1: the build's phases on stderr */
    co.tuning = &tuning;
    tf_context *ctx = NULL;
    if (tf_context_create(&co, &ctx) != TF_OK) {
        printf("SKIP k=%llu prec=%s gpus=%d: %s\n", (unsigned long long)c->K, pn, c->gpus, tf_last_error());
        return 0;
    }
    tf_sddmm_opts o;
    tf_sddmm_opts_default(&o);
    o.backend = TF_BACKEND_GPU;
    o.precision = c->prec;
    o.algo = c->algo;
    o.context = ctx;
    tf_sddmm_plan *plan = NULL;
    double t0 = tf_wtime();
    const tf_status s = tf_sddmm_plan_build(c->S, c->K, &o, &plan);
    out->build_ms = (tf_wtime() - t0) * 1e3;
    int rc = 0;
    operands x;
    memset(&x, 0, sizeof x);
    if (s != TF_OK) {
        printf("SKIP k=%llu prec=%s gpus=%d: the build: %s\n", (unsigned long long)c->K, pn, c->gpus,
               tf_last_error());
    } else {
        tf_sddmm_info info;
        tf_sddmm_plan_info(plan, &info);
        x.n = info.panels;
        t0 = tf_wtime();
        const int oom = place_operands(plan, c, &x);
        out->operands_ms = (tf_wtime() - t0) * 1e3;
        if (oom) {
            printf("SKIP k=%llu prec=%s gpus=%d: A, B and P do not fit beside the plan\n", (unsigned long long)c->K,
                   pn, c->gpus);
        } else {
            rc = measure(plan, c, &x, out);
            out->P = rc ? NULL : malloc(c->S->nnz * sizeof(double) + 8);
            if (!rc && (!out->P || gather(c, &x, out->P))) rc = 1;
            out->ran = !rc;
        }
    }
    free_operands(&x);
    tf_sddmm_plan_free(plan);
    tf_context_free(ctx);
    fflush(stdout);
    return rc;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* a line at a time: a run cut by a time limit keeps what it printed */
    const char *path = NULL, *ks = "32,128,512", *precs = "double,single", *algo = "auto";
    const char *gpu_list = "2";
    int gpus = 0, reps = 20, warmup = 3; /* gpus: the largest of the list */
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "-k") && i + 1 < argc) ks = argv[++i];
        else if (!strcmp(argv[i], "--precision") && i + 1 < argc) precs = argv[++i];
        else if (!strcmp(argv[i], "--gpus") && i + 1 < argc) gpu_list = argv[++i];
        else if (!strcmp(argv[i], "--algo") && i + 1 < argc) algo = argv[++i];
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--warmup") && i + 1 < argc) warmup = atoi(argv[++i]);
        else path = argv[i];
    }
    const tf_sddmm_algo al = !strcmp(algo, "row")     ? TF_SDDMM_ALGO_ROW
                             : !strcmp(algo, "sm-l2") ? TF_SDDMM_ALGO_SM_L2
                                                      : TF_SDDMM_ALGO_AUTO;
    int counts[TF_MAX_GPUS], ncounts = 0;
    {
        char gbuf[128];
        snprintf(gbuf, sizeof gbuf, "%s", gpu_list);
        for (char *t = strtok(gbuf, ","); t; t = strtok(NULL, ",")) {
            const int g = atoi(t);
            if (g < 1 || g > TF_MAX_GPUS || ncounts == TF_MAX_GPUS) {
                gpus = -1;
                break;
            }
            counts[ncounts++] = g;
            if (g > gpus) gpus = g;
        }
    }
    if (!path || gpus < 1 || gpus > TF_MAX_GPUS || reps < 1 || warmup < 0) {
        fprintf(stderr, "usage: bench_sddmm_multi MATRIX [-k K[,K..]] [--precision double,single] [--gpus G] "
                        "[--algo auto|row|sm-l2] [--reps R] [--warmup W]\n");
        return 2;
    }
    const int have = tf_gpu_count();
    if (have < gpus) {
        fprintf(stderr, "bench_sddmm_multi: %d GPUs asked for; this machine has %d\n", gpus, have);
        return 77;
    }
    tf_tensor coo;
    tf_csr S;
    memset(&coo, 0, sizeof coo);
    double t0 = tf_wtime();
    if (tf_read_tensor(path, 0, &coo, NULL) != TF_OK) {
        fprintf(stderr, "bench_sddmm_multi: %s\n", tf_last_error());
        return 1;
    }
    if (coo.order != 2 || tf_csr_from_coo(&coo, &S) != TF_OK) {
        fprintf(stderr, "bench_sddmm_multi: %s: %s\n", path, coo.order != 2 ? "not a matrix" : tf_last_error());
        return 1;
    }
    tf_tensor_free(&coo);
    char dev[256] = "";
    tf_gpu_describe(0, dev, sizeof dev);
    printf("matrix %s: %llu x %llu, %llu non-zeros (read in %.1f s)\n", path, (unsigned long long)S.rows,
           (unsigned long long)S.cols, (unsigned long long)S.nnz, tf_wtime() - t0);
    printf("device 0: %s; %d GPUs; algo %s, %d timed runs after %d warm-up\n", dev, have, algo, reps, warmup);
    if (make_pool()) return 1;
    int rc = 0;
    char kbuf[256];
    snprintf(kbuf, sizeof kbuf, "%s", ks);
    for (char *kt = strtok(kbuf, ","); kt; kt = strtok(NULL, ",")) {
        const uint64_t K = strtoull(kt, NULL, 10);
        for (int pi = 0; pi < 2; ++pi) {
            const char *pn = pi ? "single" : "double";
            if (!strstr(precs, pn) || K == 0) continue;
            config c = {&S, K, pi ? TF_SINGLE : TF_DOUBLE, al, 1, reps, warmup};
            outcome one;
            rc |= run_config(&c, &one);
            for (int gi = 0; gi < ncounts; ++gi) {
                if (counts[gi] == 1) continue;
                outcome many;
                c.gpus = counts[gi];
                rc |= run_config(&c, &many);
                if (one.ran && many.ran) {
                    double diff = 0, scale = 0;
                    int nan = 0;
                    for (uint64_t k = 0; k < S.nnz; ++k) {
                        const double d = fabs(one.P[k] - many.P[k]), a = fabs(one.P[k]);
                        if (d != d) nan = 1;
                        else if (d > diff) diff = d;
                        if (a > scale) scale = a;
                    }
                    if (nan) diff = NAN;
                    printf("SPEEDUP k=%llu prec=%s gpus=%d run=%.2fx kernel=%.2fx build_ms_1=%.1f build_ms_%d=%.1f "
                           "maxreldiff=%.3g\n",
                           (unsigned long long)K, pn, c.gpus, one.run_ms / many.run_ms, one.kernel_ms / many.kernel_ms,
                           one.build_ms, c.gpus, many.build_ms, scale > 0 ? diff / scale : diff);
                    fflush(stdout);
                }
                free(many.P);
            }
            free(one.P);
        }
    }
    cudaFreeHost(pool_f);
    cudaFreeHost(pool_d);
    tf_csr_free(&S);
    return rc;
}
#endif
