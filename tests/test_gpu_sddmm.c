/* SPDX-License-Identifier: BSD-3-Clause */
/* GPU SDDMM (row, SM-L2, SM-SM, automatic choice, cuSPARSE) against the
 * float64 reference: the random matrices of test_sddmm (hot row, empty rows,
 * a dense one), K = 1, 7, 33, 100, 512, forced narrow panels and slices
 * (several panels, several K-slices per block), a one-shot auto call (the
 * quick build: the row scheme, untimed), forced row configurations
 * (every vectors-per-lane kernel, A in registers or not, several passes over
 * K, virtual warps cut short at the end of S), both ops, alpha/beta, fp64
 * (<= 1e-12 of each entry's rounding scale) and fp32 (<= 1e-5), outputs
 * poisoned with NaN; then every real .mtx in TF_SHARED_DATA. --quick: small
 * cases only (for compute-sanitizer; or TF_TEST_QUICK=1). Exits 77 without a GPU. */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "realdata.h"
#include "sddmm_test_util.h"

#define COUNT(a) (sizeof(a) / sizeof *(a))

static void check_one(const char *what, const tf_csr *S, const tf_matrix *A, const tf_matrix *B,
                      const tf_sddmm_opts *o)
{
    tf_sddmm_info info;
    st_check_run(what, S, A, B, o, o->precision == TF_DOUBLE ? 1e-12 : 1e-5, &info);
    if (o->algo == TF_SDDMM_ALGO_SM_L2 || o->algo == TF_SDDMM_ALGO_SM_SM || o->algo == TF_SDDMM_ALGO_ROW)
        CHECK(info.algo == o->algo);
    if (o->algo == TF_SDDMM_ALGO_AUTO) /* a one-shot call: the quick build, the row scheme untimed */
        CHECKF(info.algo == TF_SDDMM_ALGO_ROW, "%s: a one-shot auto call ran algorithm %d, not the row scheme", what,
               (int)info.algo);
    if (o->algo == TF_SDDMM_ALGO_ROW) {
        CHECK(!o->vwarp || info.vwarp == o->vwarp);
        CHECK(!o->nper || info.nper == o->nper);
        CHECK(o->a_regs >= 0 || !info.a_regs);
    }
}

/* Forced row configurations {vwarp, nper, a_regs}: with K = 1..512 these
 * reach 1, 2 and 4 vectors per lane, several passes over K (V = 1 and 2),
 * idle lanes (V = 32 on short rows), and nper not a multiple of the step. */
static const struct { uint32_t vwarp, nper; int a_regs; } row_cfgs[] = {
    {1, 7, -1}, {2, 16, 1}, {4, 3, 1}, {8, 64, -1}, {32, 5, 1}, {32, 1, -1}};

/* Every algorithm and precision on one matrix and K. */
static void check_all(const char *what, const tf_csr *S, const tf_matrix *A, const tf_matrix *B, int quick)
{
    for (size_t ai = 0; ai < ST_GPU_ALGOS; ++ai)
        for (int prec = 0; prec < 2; ++prec) {
            const tf_sddmm_algo algo = st_gpu_algos[ai];
            tf_sddmm_opts o = st_gpu_opts(algo, prec);
            check_one(what, S, A, B, &o);
            if (algo == TF_SDDMM_ALGO_CUSPARSE) continue; /* cuSPARSE: sampling form only */
            o.op = TF_SDDMM_SCALE;
            o.alpha = -1.5;
            o.beta = 0.75;
            check_one(what, S, A, B, &o);
            if (algo == TF_SDDMM_ALGO_ROW) {
                for (size_t ci = 0; ci < COUNT(row_cfgs); ++ci) {
                    o.vwarp = row_cfgs[ci].vwarp;
                    o.nper = row_cfgs[ci].nper;
                    o.a_regs = row_cfgs[ci].a_regs;
                    o.op = ci % 2 ? TF_SDDMM_SCALE : TF_SDDMM_SAMPLE;
                    check_one(what, S, A, B, &o);
                    /* a grid of 3 blocks: every virtual warp loops over many chunks */
                    tf_context_opts co;
                    tf_context_opts_default(&co);
                    tf_tuning tuning;
                    tf_tuning_default(&tuning);
                    co.tuning = &tuning;
                    co.backend = TF_BACKEND_GPU;
                    tuning.sddmm_row_grid = 3;
                    tf_context *ctx = NULL;
                    CHECK_OK(tf_context_create(&co, &ctx));
                    o.context = ctx;
                    check_one(what, S, A, B, &o);
                    o.context = NULL;
                    tf_context_free(ctx);
                }
                continue;
            }
            if (quick || algo == TF_SDDMM_ALGO_AUTO) continue;
            /* narrow panels and slices: several panels, several K-slices */
            o.tile_j = 32;
            o.tile_k = 32;
            check_one(what, S, A, B, &o);
        }
}

static void random_cases(int quick)
{
    tf_rng rng;
    tf_rng_seed(&rng, 6601);
    const struct { uint64_t M, N, nnz; int hot; } shapes[] = {
        {1, 1, 1, 0}, {7, 3, 12, 0}, {300, 200, 4000, 1}, {64, 64, 1500, 0}, {1000, 37, 6000, 1}, {50, 2000, 9000, 0}};
    const uint64_t Ks[] = {1, 7, 33, 100, 512};
    for (size_t si = 0; si < COUNT(shapes); ++si) {
        if (quick && shapes[si].nnz > 4000) continue;
        tf_tensor coo = st_random_coo(&rng, shapes[si].M, shapes[si].N, shapes[si].nnz, shapes[si].hot);
        tf_csr S;
        CHECK_OK(tf_csr_from_coo(&coo, &S));
        for (size_t ki = 0; ki < COUNT(Ks); ++ki) {
            if (quick && Ks[ki] > 33) continue;
            tf_matrix A = tt_random_dense(&rng, S.rows, Ks[ki]), B = tt_random_dense(&rng, S.cols, Ks[ki]);
            check_all("random", &S, &A, &B, quick);
            tf_matrix_free(&A);
            tf_matrix_free(&B);
        }
        tf_csr_free(&S);
        tf_tensor_free(&coo);
    }
}

static void gpu_sddmm_real_matrix(const char *name, const char *path, tf_tensor *coo, void *rng)
{
    const uint64_t Ks[] = {32, 128, 512};
    tf_csr S;
    CHECK_OK(tf_csr_from_coo(coo, &S));
    for (size_t ki = 0; ki < COUNT(Ks); ++ki) {
        if ((S.rows + S.cols) * Ks[ki] * 8 > (1ull << 30)) continue;
        tf_matrix A = tt_random_dense(rng, S.rows, Ks[ki]), B = tt_random_dense(rng, S.cols, Ks[ki]);
        for (int prec = 0; prec < 2; ++prec) {
            tf_sddmm_opts o;
            tf_sddmm_opts_default(&o);
            o.backend = TF_BACKEND_GPU;
            o.precision = prec ? TF_SINGLE : TF_DOUBLE;
            check_one(name, &S, &A, &B, &o);
            o.algo = TF_SDDMM_ALGO_ROW;
            for (o.a_regs = -1; o.a_regs <= 1; o.a_regs += 2) check_one(name, &S, &A, &B, &o);
            o.a_regs = 0;
            o.algo = TF_SDDMM_ALGO_CUSPARSE;
            check_one(name, &S, &A, &B, &o);
        }
        tf_matrix_free(&A);
        tf_matrix_free(&B);
    }
    printf("%s: checked\n", name);
    tf_csr_free(&S);
}

static void real_data(void)
{
    static const char *const mtx[] = {".mtx.xz", ".mtx", NULL};
    tf_rng rng;
    tf_rng_seed(&rng, 6603);
    tf_for_each_data_file("test_gpu_sddmm", mtx, gpu_sddmm_real_matrix, &rng);
}

int main(int argc, char **argv)
{
    const int quick = tf_test_quick(argc, argv);
    if (tf_gpu_count() == 0) return tf_test_skip("test_gpu_sddmm", "no GPU");
    random_cases(quick);
    if (!quick) real_data();
    return tf_test_finish("test_gpu_sddmm");
}
