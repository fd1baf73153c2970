/* SPDX-License-Identifier: BSD-3-Clause */
/* SpTTM on the CPU against the float64 reference: random tensors of order
 * 2..5 with one long fibre and empty slices, every mode, R = 1, 7, 33, 100,
 * 512, 1..3 threads, fp64 (<= 1e-12) and fp32 (<= 1e-5); the kernel's
 * output poisoned with NaN before it runs; the semi-sparse -> sparse
 * conversion; argument errors; then every real .tns and .mtx in
 * TF_SHARED_DATA on every mode. */
#include <string.h>

#include "seams/spttm_backends.h"
#include "core/alloc.h"
#include "fmt/spttm_fcoo.h"
#include "realdata.h"
#include "spttm_test_util.h"

static const uint64_t Rs[] = {1, 7, 33, 100, 512};
#define COUNT(a) (sizeof(a) / sizeof *(a))

/* The CPU kernel on a poisoned output, through the internal entry point. */
static void check_poisoned(const tf_tensor *X, uint32_t mode, const tf_matrix *U, const tf_semisparse *ref,
                           int threads)
{
    tf_fibres F;
    tf_semisparse Y;
    CHECK_OK(tf_fibres_build(X, mode, &F));
    CHECK_OK(tf_fibres_output(X, &F, U->cols, &Y));
    for (uint64_t k = 0; k < Y.nfibers * U->cols; ++k) Y.vals[k] = NAN;
    tf_spttm_opts o;
    tf_spttm_opts_default(&o);
    o.threads = threads;
    CHECK_OK(tf_cpu_spttm(X, &F, U, &o, Y.vals));
    sp_same("poisoned", X, U, &Y, ref, 1e-12);
    tf_semisparse_free(&Y);
    tf_fibres_free(&F);
}

/* Host replay of the GPU F-COO kernel's segmented reduction (src/gpu/
 * spttm/spttm.cu): per 32-non-zero chunk, flush at every start flag; a fibre
 * wholly inside a chunk is stored, others are added. Checks the result and
 * that a stored fibre is touched by no other chunk (no race on the GPU). */
static void check_fcoo_replay(const tf_tensor *X, uint32_t mode, const tf_matrix *U, const tf_semisparse *ref)
{
    tf_fibres F;
    tf_spttm_fcoo f;
    CHECK_OK(tf_fibres_build(X, mode, &F));
    CHECK_OK(tf_spttm_fcoo_build(X, &F, &f));
    const uint64_t R = U->cols;
    double *Y = NULL;
    uint32_t *stores = NULL, *touches = NULL;
    CHECK_OK(TF_CALLOC(Y, F.nfibers * R + 1, "Y"));
    CHECK_OK(TF_CALLOC(stores, F.nfibers + 1, "stores"));
    CHECK_OK(TF_CALLOC(touches, F.nfibers + 1, "touches"));
    for (uint64_t c = 0; c < f.nchunks; ++c) {
        const uint64_t k0 = c * TF_FCOO_CHUNK;
        const uint32_t n = f.nnz - k0 < TF_FCOO_CHUNK ? (uint32_t)(f.nnz - k0) : TF_FCOO_CHUNK;
        const uint32_t word = f.flags[c];
        const int ends = c + 1 == f.nchunks || (f.flags[c + 1] & 1u);
        for (uint64_t r = 0; r < R; ++r) {
            uint64_t fid = f.chunk_fibre[c];
            int started = word & 1u;
            double acc = 0;
            for (uint32_t j = 0; j <= n; ++j) {
                if (j == n || (j > 0 && ((word >> j) & 1u))) {
                    const int store = started && (j < n || ends);
                    if (store) Y[fid * R + r] = acc;
                    else Y[fid * R + r] += acc;
                    if (r == 0) { stores[fid] += store; ++touches[fid]; }
                    if (j == n) break;
                    ++fid;
                    acc = 0;
                    started = 1;
                }
                acc += f.val[k0 + j] * U->data[(uint64_t)f.idx[k0 + j] * R + r];
            }
        }
    }
    int race = 0;
    for (uint64_t q = 0; q < F.nfibers; ++q) race |= stores[q] && touches[q] != 1;
    CHECKF(!race, "F-COO replay: a stored fibre is also touched by another chunk (mode %u)", mode + 1);
    tf_semisparse Ys = *ref;
    Ys.vals = Y;
    sp_same("F-COO replay", X, U, &Ys, ref, 1e-12);
    tf_free(Y);
    tf_free(stores);
    tf_free(touches);
    tf_spttm_fcoo_free(&f);
    tf_fibres_free(&F);
}

static void check_public(const char *what, const tf_tensor *X, uint32_t mode, const tf_matrix *U,
                         const tf_semisparse *ref, tf_precision prec, int threads)
{
    tf_spttm_opts o;
    tf_spttm_opts_default(&o);
    o.backend = TF_BACKEND_CPU;
    o.precision = prec;
    o.threads = threads;
    tf_semisparse Y;
    CHECK_OK(tf_spttm(X, mode, U, &o, &Y));
    sp_same(what, X, U, &Y, ref, prec == TF_DOUBLE ? 1e-12 : 1e-5);
    tf_semisparse_free(&Y);
}

static void random_cases(void)
{
    tf_rng rng;
    tf_rng_seed(&rng, 5501);
    const uint64_t dims2[] = {200, 37}, dims3[] = {60, 1, 45}, dims4[] = {12, 30, 9, 20}, dims5[] = {6, 7, 8, 5, 9};
    const struct { uint32_t order; const uint64_t *dims; uint64_t nnz; } shapes[] = {
        {2, dims2, 3000}, {3, dims3, 1500}, {4, dims4, 4000}, {5, dims5, 2500}};
    for (size_t si = 0; si < COUNT(shapes); ++si)
        for (uint32_t mode = 0; mode < shapes[si].order; ++mode) {
            tf_tensor X = sp_random_tensor(&rng, shapes[si].order, shapes[si].dims, shapes[si].nnz, (int)mode);
            for (size_t ri = 0; ri < COUNT(Rs); ++ri) {
                tf_matrix U = tt_random_dense(&rng, X.dims[mode], Rs[ri]);
                tf_semisparse ref;
                CHECK_OK(tf_spttm_reference(&X, mode, &U, &ref));
                check_poisoned(&X, mode, &U, &ref, 1 + (int)(ri % 3));
                if (Rs[ri] <= 33) check_fcoo_replay(&X, mode, &U, &ref);
                check_public("random", &X, mode, &U, &ref, TF_DOUBLE, 1 + (int)((ri + 1) % 3));
                check_public("random fp32", &X, mode, &U, &ref, TF_SINGLE, 2);
                tf_semisparse_free(&ref);
                tf_matrix_free(&U);
            }
            tf_tensor_free(&X);
        }
}

/* A hand-made example: X 2x3x2, mode 2, U 3x2. */
static void semantics(void)
{
    const uint64_t dims[3] = {2, 3, 2};
    tf_tensor X;
    CHECK_OK(tf_tensor_alloc(&X, 3, dims, 4));
    const uint32_t i[4] = {0, 0, 1, 1}, j[4] = {0, 2, 1, 1}, k[4] = {1, 1, 0, 1};
    const double v[4] = {1, 2, 3, 4};
    for (int n = 0; n < 4; ++n) { X.ind[0][n] = i[n]; X.ind[1][n] = j[n]; X.ind[2][n] = k[n]; X.vals[n] = v[n]; }
    tf_matrix U;
    CHECK_OK(tf_matrix_alloc(&U, 3, 2));
    const double u[6] = {1, 10, 2, 20, 3, 30}; /* U(i, r) */
    memcpy(U.data, u, sizeof u);
    tf_spttm_opts o;
    tf_spttm_opts_default(&o);
    o.backend = TF_BACKEND_CPU;
    tf_semisparse Y;
    CHECK_OK(tf_spttm(&X, 1, &U, &o, &Y));
    /* fibres (i,k): (0,1): 1*U(0,:) + 2*U(2,:) = (7, 70); (1,0): 3*U(1,:) = (6, 60); (1,1): 4*U(1,:) = (8, 80) */
    const double want[6] = {7, 70, 6, 60, 8, 80};
    CHECK(Y.nfibers == 3 && Y.dims[1] == 2 && Y.dims[0] == 2 && Y.dims[2] == 2 && Y.ind[1] == NULL);
    if (Y.nfibers == 3) {
        for (int n = 0; n < 6; ++n) CHECKF(Y.vals[n] == want[n], "Y[%d] = %g, expected %g", n, Y.vals[n], want[n]);
        CHECK(Y.ind[0][0] == 0 && Y.ind[2][0] == 1 && Y.ind[0][1] == 1 && Y.ind[2][1] == 0);
    }
    tf_tensor T;
    CHECK_OK(tf_semisparse_to_tensor(&Y, &T));
    CHECK(T.nnz == 6 && T.order == 3 && T.dims[1] == 2);
    CHECK_OK(tf_tensor_validate(&T));
    tf_tensor_free(&T);
    tf_semisparse_free(&Y);
    /* Errors: wrong U rows, mode out of range, R = 0. */
    CHECK(tf_spttm(&X, 0, &U, &o, &Y) == TF_ERR_ARG);
    CHECK(tf_spttm(&X, 3, &U, &o, &Y) == TF_ERR_ARG);
    tf_matrix U0 = {3, 0, NULL};
    CHECK(tf_spttm(&X, 1, &U0, &o, &Y) == TF_ERR_ARG);
    if (tf_gpu_count() == 0) {
        o.backend = TF_BACKEND_GPU;
        tf_status s = tf_spttm(&X, 1, &U, &o, &Y);
        CHECKF(s == TF_ERR_UNAVAILABLE || s == TF_ERR_DEVICE, "GPU SpTTM without a GPU gave %s", tf_status_name(s));
        o.backend = TF_BACKEND_CPU;
    }
    double times[3];
    CHECK_OK(tf_spttm_time(&X, 1, &U, &o, 1, 3, times, &Y));
    CHECK(Y.nfibers == 3);
    tf_semisparse_free(&Y);
    tf_matrix_free(&U);
    tf_tensor_free(&X);
}

static void spttm_real_tensor(const char *name, const char *path, tf_tensor *X, void *rng)
{
    for (uint32_t mode = 0; mode < X->order; ++mode)
        for (size_t ri = 0; ri < COUNT(Rs); ++ri) {
            /* output at most nnz x R doubles: keep it under 64 MB */
            if (X->nnz * Rs[ri] * 8 > (64u << 20)) continue;
            tf_matrix U = tt_random_dense(rng, X->dims[mode], Rs[ri]);
            tf_semisparse ref;
            CHECK_OK(tf_spttm_reference(X, mode, &U, &ref));
            check_public(name, X, mode, &U, &ref, TF_DOUBLE, 2);
            tf_semisparse_free(&ref);
            tf_matrix_free(&U);
        }
    printf("%s: order %u, %llu nnz checked\n", name, X->order, (unsigned long long)X->nnz);
}

static void real_data(void)
{
    static const char *const tensors[] = {".tns.xz", ".tns", ".mtx.xz", ".mtx", NULL};
    tf_rng rng;
    tf_rng_seed(&rng, 5503);
    const int count = tf_for_each_data_file("test_spttm", tensors, spttm_real_tensor, &rng);
    if (count >= 0) CHECKF(count > 0, "no tensor file in %s", tf_test_data_dir());
}

int main(void)
{
    random_cases();
    semantics();
    real_data();
    return tf_test_finish("test_spttm");
}
