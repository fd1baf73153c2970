/* SPDX-License-Identifier: BSD-3-Clause */
/* Host plan-build benchmark: times the format builders one by one on a
 * tensor file -- F-COO (every mode one after the other in the same arrays,
 * tf_fcoo_rebuild, as a GPU plan builds it on the host),
 * CSF (every mode, the CPU plan), BLCO, and for a matrix (order 2) the GPU
 * SDDMM's tiles (tf_sddmm_tiles_build: SM-L2's panels of the L2 model's
 * width at K 32 fp64 on 50 MiB of L2, then SM-SM's 448-column panels, as
 * the plan's candidates are built) -- and prints each one's rate and
 * the most host memory it held above the input (tenfold's allocations
 * counted, tf_alloc_peak), next to the COO's size.
 *
 *   bench_build FILE|--gen D1,..,Dn,NNZ,ALPHA [-t THREADS] [--reps N] [--shuffle]
 *               [--bucket-bits B] [--only LIST: fcoo,csf,blco,tiles]
 *
 * --gen makes the tensor in memory (tf_generate, default seed) instead.
 * --reps N times each builder N times (each line its own). The CPU
 * seconds beside each line (user, system) tell the work apart from the
 * page faults of fresh allocations, and stay meaningful on a loaded
 * machine where the wall clock does not. --shuffle puts the non-zeros in
 * a scrambled order first (k <- a k + b mod nnz), as a caller of the C API
 * may hand them: every reader and the generator leave them in the
 * canonical order, which the builders exploit. --bucket-bits B caps the
 * radix sort's first scatter at 2^B buckets (default 12). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"
#include "core/radix.h"
#include "fmt/blco.h"
#include "fmt/csf.h"
#include "fmt/csr.h"
#include "fmt/fcoo.h"
#include "fmt/sddmm_tiles.h"
#include "tenfold.h"

/* CPU seconds of the process so far: user, system (page faults land there) */
static void cpu_times(double *user, double *sys)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    *user = (double)u.ru_utime.tv_sec + 1e-6 * (double)u.ru_utime.tv_usec;
    *sys = (double)u.ru_stime.tv_sec + 1e-6 * (double)u.ru_stime.tv_usec;
}

static double cpu_u0, cpu_s0;
static void cpu_mark(void) { cpu_times(&cpu_u0, &cpu_s0); }

static void report(const char *what, const tf_tensor *X, double secs, uint64_t peak)
{
    double u, s;
    cpu_times(&u, &s);
    printf("%-5s %8.3f s  %8.1f M nnz/s  peak %8.1f MB (%.2f x COO, %.1f B/nnz)  cpu user %.2f s sys %.2f s\n",
           what, secs, (double)X->nnz / secs / 1e6, (double)peak / 1e6, (double)peak / (double)tf_tensor_bytes(X),
           (double)peak / (double)X->nnz, u - cpu_u0, s - cpu_s0);
}

/* Non-zero k takes the place of non-zero (a k + b) mod nnz, a coprime to
 * nnz: a fixed scrambled order, gathered column by column in parallel. */
static uint64_t scrambled(uint64_t k, uint64_t a, uint64_t b, uint64_t n)
{
    const uint64_t p = (uint64_t)((unsigned __int128)a * k % n);
    return p + b < n ? p + b : p + b - n;
}

static tf_status scramble(tf_tensor *X)
{
    const uint64_t n = X->nnz, b = n / 3;
    uint64_t a = (uint64_t)(0.618033988749895 * (double)n) | 1;
    for (;; ++a) { /* gcd(a, n) == 1 */
        uint64_t x = a, y = n;
        while (y) { const uint64_t r = x % y; x = y; y = r; }
        if (x == 1) break;
    }
    const int64_t nn = (int64_t)n;
    double *v = NULL;
    TF_TRY(TF_ALLOC(v, n, "scrambled values"));
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < nn; ++k) v[k] = X->vals[scrambled((uint64_t)k, a, b, n)];
    tf_free(X->vals);
    X->vals = v;
    for (uint32_t m = 0; m < X->order; ++m) {
        uint32_t *c = NULL;
        TF_TRY(TF_ALLOC(c, n, "scrambled indices"));
#pragma omp parallel for schedule(static)
        for (int64_t k = 0; k < nn; ++k) c[k] = X->ind[m][scrambled((uint64_t)k, a, b, n)];
        tf_free(X->ind[m]);
        X->ind[m] = c;
    }
    return TF_OK;
}

int main(int argc, char **argv)
{
    const char *path = NULL, *only = NULL, *gen = NULL;
    int threads = 0, reps = 1, shuffle = 0;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "-t") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--shuffle")) shuffle = 1;
        else if (!strcmp(argv[i], "--bucket-bits") && i + 1 < argc) tf_radix_set_bucket_bits(atoi(argv[++i]));
        else if (!strcmp(argv[i], "--gen") && i + 1 < argc) gen = argv[++i];
        else path = argv[i];
    }
    if (!path && !gen) {
        fprintf(stderr, "usage: bench_build FILE|--gen D1,..,Dn,NNZ,ALPHA [-t THREADS] [--reps N]\n"
                        "       [--only LIST: fcoo,csf,blco,tiles]\n");
        return 2;
    }
#ifdef _OPENMP
    if (threads > 0) omp_set_num_threads(threads);
#endif
    tf_tensor X;
    double t0 = tf_wtime();
    tf_status st;
    if (gen) { /* D1,..,Dn,NNZ,ALPHA */
        double v[TF_MAX_ORDER + 2];
        int n = 0;
        for (char *e = (char *)gen; n < TF_MAX_ORDER + 2 && *e; ++e) {
            v[n++] = strtod(e, &e);
            if (*e != ',') break;
        }
        tf_gen_opts g = {.order = (uint32_t)(n - 2), .nnz = (uint64_t)v[n - 2], .seed = TF_DEFAULT_SEED};
        for (int m = 0; m < n - 2; ++m) g.dims[m] = (uint64_t)v[m], g.alpha[m] = v[n - 1];
        st = n >= 4 ? tf_generate(&g, &X) : TF_ERR_ARG;
    } else {
        st = tf_read_tensor(path, threads, &X, NULL);
    }
    if (st != TF_OK) {
        fprintf(stderr, "bench_build: %s\n", tf_last_error());
        return 1;
    }
    if (shuffle && X.nnz > 1 && scramble(&X) != TF_OK) {
        fprintf(stderr, "bench_build: %s\n", tf_last_error());
        return 1;
    }
    printf("tensor: order %u, nnz %llu, COO %.1f MB, %d threads, %s in %.2f s\n", X.order,
           (unsigned long long)X.nnz, (double)tf_tensor_bytes(&X) / 1e6, tf_default_threads(),
           gen ? (shuffle ? "generated, scrambled," : "generated") : (shuffle ? "read, scrambled," : "read"),
           tf_wtime() - t0);
    int rc = 0;
    for (int rep = 0; rep < reps && !rc; ++rep) {
        if (!only || strstr(only, "fcoo")) { /* one mode at a time, as a GPU plan that builds on the host */
            uint64_t held = tf_alloc_peak_reset();
            cpu_mark();
            double t0 = tf_wtime();
            tf_fcoo f;
            memset(&f, 0, sizeof f);
            for (uint32_t m = 0; rc == 0 && m < X.order; ++m)
                if (tf_fcoo_rebuild(&X, m, 128, &f) != TF_OK) rc = 1;
            tf_fcoo_free(&f);
            report("fcoo", &X, tf_wtime() - t0, tf_alloc_peak() - held);
        }
        if (!rc && (!only || strstr(only, "csf"))) { /* all modes kept, as the CPU plan does */
            tf_csf c[TF_MAX_ORDER];
            memset(c, 0, sizeof c);
            uint64_t held = tf_alloc_peak_reset();
            cpu_mark();
            double t0 = tf_wtime();
            for (uint32_t m = 0; rc == 0 && m < X.order; ++m) {
                uint32_t mo[TF_MAX_ORDER];
                tf_csf_default_order(&X, m, mo);
                if (tf_csf_build(&X, mo, 0.5, tf_default_threads(), &c[m]) != TF_OK) rc = 1;
            }
            report("csf", &X, tf_wtime() - t0, tf_alloc_peak() - held);
            for (uint32_t m = 0; m < X.order; ++m) tf_csf_free(&c[m]);
        }
        if (!rc && (!only || strstr(only, "blco")) && X.order <= 8) {
            tf_blco b;
            uint64_t held = tf_alloc_peak_reset();
            cpu_mark();
            double t0 = tf_wtime();
            if (tf_blco_build(&X, 0, &b) != TF_OK) rc = 1;
            report("blco", &X, tf_wtime() - t0, tf_alloc_peak() - held);
            tf_blco_free(&b);
        }
        if (!rc && (!only || strstr(only, "tiles")) && X.order == 2) {
            tf_csr S;
            if (tf_csr_from_coo(&X, &S) != TF_OK) {
                rc = 1;
                break;
            }
            /* SM-L2 at K 32 fp64 (V 16: 32 threads' groups of 4), SM-SM at ~450 columns */
            const uint32_t tj[2] = {tf_sddmm_model_tile_j(&S, 32, 8, 50u << 20), 448};
            const uint32_t ti[2] = {128, 128}, tn[2] = {128, 128};
            for (int k = 0; k < 2 && !rc; ++k) {
                tf_sddmm_tiles t;
                uint64_t held = tf_alloc_peak_reset();
                cpu_mark();
                double t0 = tf_wtime();
                if (tf_sddmm_tiles_build(&S, tj[k], ti[k], tn[k], &t) != TF_OK) rc = 1;
                char what[32];
                snprintf(what, sizeof what, "tiles %u", tj[k]);
                if (!rc) report(what, &X, tf_wtime() - t0, tf_alloc_peak() - held);
                tf_sddmm_tiles_free(&t);
            }
            tf_csr_free(&S);
        }
    }
    if (rc) fprintf(stderr, "bench_build: %s\n", tf_last_error());
    tf_tensor_free(&X);
    return rc;
}
