/* SPDX-License-Identifier: BSD-3-Clause */
/* SDDMM on the CPU against the float64 reference: random matrices with a
 * hot row and empty rows, K = 1, 7, 33, 100, 512, both ops, alpha/beta,
 * fp64 (<= 1e-12 of each entry's rounding scale) and fp32 (<= 1e-5), 1..3
 * threads, outputs poisoned with NaN before each run; the K = 0, nnz = 0,
 * in-place and COO entry points; CSR conversion; argument errors; then
 * every real .mtx in TF_SHARED_DATA with random A and B. */
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "core/alloc.h"
#include "fmt/csr.h"
#include "fmt/sddmm_tiles.h"
#include "realdata.h"
#include "sddmm_test_util.h"

static const uint64_t Ks[] = {1, 7, 33, 100, 512};
#define COUNT(a) (sizeof(a) / sizeof *(a))

/* Runs one configuration and compares with the reference. */
static void check_one(const char *what, const tf_csr *S, const tf_matrix *A, const tf_matrix *B,
                      const tf_sddmm_opts *o, double tol)
{
    tf_sddmm_info info;
    st_check_run(what, S, A, B, o, tol, &info);
}

static void random_cases(void)
{
    tf_rng rng;
    tf_rng_seed(&rng, 4401);
    const struct { uint64_t M, N, nnz; int hot; } shapes[] = {
        {1, 1, 1, 0}, {7, 3, 12, 0}, {300, 200, 4000, 1}, {1000, 37, 6000, 1}, {50, 2000, 9000, 0}};
    for (size_t si = 0; si < COUNT(shapes); ++si) {
        tf_tensor coo = st_random_coo(&rng, shapes[si].M, shapes[si].N, shapes[si].nnz, shapes[si].hot);
        tf_csr S;
        CHECK_OK(tf_csr_from_coo(&coo, &S));
        for (size_t ki = 0; ki < COUNT(Ks); ++ki) {
            tf_matrix A = tt_random_dense(&rng, S.rows, Ks[ki]), B = tt_random_dense(&rng, S.cols, Ks[ki]);
            tf_sddmm_opts o;
            tf_sddmm_opts_default(&o);
            o.backend = TF_BACKEND_CPU;
            for (int threads = 1; threads <= 3; ++threads) {
                o.threads = threads;
                check_one("random", &S, &A, &B, &o, 1e-12);
            }
            o.threads = 2;
            o.op = TF_SDDMM_SCALE;
            o.alpha = -1.5;
            o.beta = 0.75;
            check_one("random scale", &S, &A, &B, &o, 1e-12);
            o.op = TF_SDDMM_SAMPLE;
            check_one("random sample+beta", &S, &A, &B, &o, 1e-12);
            o.precision = TF_SINGLE;
            check_one("random fp32", &S, &A, &B, &o, 1e-5);
            o.algo = TF_SDDMM_ALGO_REFERENCE;
            o.precision = TF_DOUBLE;
            check_one("reference algo", &S, &A, &B, &o, 0.0);
            tf_matrix_free(&A);
            tf_matrix_free(&B);
        }
        tf_csr_free(&S);
        tf_tensor_free(&coo);
    }
}

/* alpha/beta/op semantics written out by hand on a 2 x 3 example. */
static void semantics(void)
{
    const uint64_t dims[2] = {2, 3};
    tf_tensor coo;
    CHECK_OK(tf_tensor_alloc(&coo, 2, dims, 3));
    const uint32_t r[3] = {0, 0, 1}, c[3] = {0, 2, 1};
    const double v[3] = {2.0, -1.0, 4.0};
    for (int k = 0; k < 3; ++k) { coo.ind[0][k] = r[k]; coo.ind[1][k] = c[k]; coo.vals[k] = v[k]; }
    tf_csr S;
    CHECK_OK(tf_csr_from_coo(&coo, &S));
    tf_matrix A, B;
    CHECK_OK(tf_matrix_alloc(&A, 2, 2));
    CHECK_OK(tf_matrix_alloc(&B, 3, 2));
    const double a[4] = {1, 2, 3, 4}, b[6] = {1, 0, 0, 1, 1, 1};
    memcpy(A.data, a, sizeof a);
    memcpy(B.data, b, sizeof b);
    /* A B^T = [[1 2 3] [3 4 7]]; sampled at (0,0), (0,2), (1,1): 1, 3, 4 */
    const double dots[3] = {1, 3, 4};
    tf_sddmm_opts o;
    tf_sddmm_opts_default(&o);
    o.backend = TF_BACKEND_CPU;
    double P[3];
    for (int op = 0; op < 2; ++op) {
        o.op = (tf_sddmm_op)op;
        o.alpha = 2.0;
        o.beta = -3.0;
        CHECK_OK(tf_sddmm(&S, &A, &B, &o, P, NULL));
        for (int k = 0; k < 3; ++k) {
            const double want = 2.0 * dots[k] * (op == TF_SDDMM_SCALE ? v[k] : 1.0) - 3.0 * v[k];
            CHECKF(P[k] == want, "op %d entry %d: %g, expected %g", op, k, P[k], want);
        }
    }
    /* In place: P aliases S.vals. */
    o.op = TF_SDDMM_SAMPLE;
    o.alpha = 1.0;
    o.beta = 1.0;
    CHECK_OK(tf_sddmm(&S, &A, &B, &o, S.vals, NULL));
    for (int k = 0; k < 3; ++k) CHECKF(S.vals[k] == dots[k] + v[k], "in place entry %d: %g", k, S.vals[k]);
    /* K = 0: P = beta * S, nothing else read. */
    tf_matrix A0 = {2, 0, NULL}, B0 = {3, 0, NULL};
    for (int k = 0; k < 3; ++k) S.vals[k] = v[k];
    o.beta = 0.5;
    st_poison(P, 3);
    CHECK_OK(tf_sddmm(&S, &A0, &B0, &o, P, NULL));
    for (int k = 0; k < 3; ++k) CHECK(P[k] == 0.5 * v[k]);
    /* nnz = 0: no output touched, NULL P allowed. */
    tf_csr E;
    CHECK_OK(tf_csr_alloc(&E, 2, 3, 0));
    CHECK_OK(tf_sddmm(&E, &A, &B, &o, NULL, NULL));
    tf_csr_free(&E);
    /* COO entry point: non-zeros in a shuffled order, output in that order. */
    const uint32_t r2[3] = {1, 0, 0}, c2[3] = {1, 2, 0};
    const double v2[3] = {4.0, -1.0, 2.0}, d2[3] = {4, 3, 1};
    for (int k = 0; k < 3; ++k) { coo.ind[0][k] = r2[k]; coo.ind[1][k] = c2[k]; coo.vals[k] = v2[k]; }
    o.beta = 0.0;
    st_poison(P, 3);
    CHECK_OK(tf_sddmm_coo(&coo, &A, &B, &o, P, NULL));
    for (int k = 0; k < 3; ++k) CHECKF(P[k] == d2[k], "coo entry %d: %g, expected %g", k, P[k], d2[k]);
    /* Argument errors. */
    CHECK(tf_sddmm(&S, &B, &A, &o, P, NULL) == TF_ERR_ARG);
    CHECK(tf_sddmm(&S, &A, &B, &o, NULL, NULL) == TF_ERR_ARG);
    tf_matrix A3;
    CHECK_OK(tf_matrix_alloc(&A3, 2, 3));
    CHECK(tf_sddmm(&S, &A3, &B, &o, P, NULL) == TF_ERR_ARG);
    tf_matrix_free(&A3);
    S.rowptr[1] = 5; /* decreasing offsets */
    CHECK(tf_sddmm(&S, &A, &B, &o, P, NULL) == TF_ERR_ARG);
    S.rowptr[1] = 2;
    o.vwarp = 3; /* row-scheme knobs: V a power of two <= 32, a_regs in -1..1 */
    CHECK(tf_sddmm(&S, &A, &B, &o, P, NULL) == TF_ERR_ARG);
    o.vwarp = 64;
    CHECK(tf_sddmm(&S, &A, &B, &o, P, NULL) == TF_ERR_ARG);
    o.vwarp = 0;
    o.a_regs = 2;
    CHECK(tf_sddmm(&S, &A, &B, &o, P, NULL) == TF_ERR_ARG);
    o.a_regs = 0;
    o.algo = TF_SDDMM_ALGO_ROW; /* a GPU scheme on the CPU backend */
    o.backend = TF_BACKEND_CPU;
    CHECK(tf_sddmm(&S, &A, &B, &o, P, NULL) == TF_ERR_ARG);
    o.algo = TF_SDDMM_ALGO_AUTO;
    if (tf_gpu_count() == 0) {
        o.backend = TF_BACKEND_GPU;
        tf_status s = tf_sddmm(&S, &A, &B, &o, P, NULL);
        CHECKF(s == TF_ERR_UNAVAILABLE || s == TF_ERR_DEVICE, "GPU SDDMM without a GPU gave %s", tf_status_name(s));
    }
    o.backend = TF_BACKEND_CPU;
    double times[4];
    tf_sddmm_info info;
    CHECK_OK(tf_sddmm_time(&S, &A, &B, &o, P, 1, 4, times, &info));
    for (int k = 0; k < 4; ++k) CHECK(times[k] >= 0.0);
    CHECK(info.backend == TF_BACKEND_CPU);
    CHECK(tf_sddmm_time(&S, &A, &B, &o, S.vals, 1, 4, times, NULL) == TF_ERR_ARG);
    tf_matrix_free(&A);
    tf_matrix_free(&B);
    tf_csr_free(&S);
    tf_tensor_free(&coo);
}

/* CSR conversion of an unsorted COO with duplicates keeps every entry. */
static void csr_conversion(void)
{
    tf_rng rng;
    tf_rng_seed(&rng, 4402);
    const uint64_t dims[2] = {40, 30}, n = 500;
    tf_tensor coo;
    CHECK_OK(tf_tensor_alloc(&coo, 2, dims, n));
    for (uint64_t k = 0; k < n; ++k) {
        coo.ind[0][k] = tt_draw_sparse_index(&rng, 40);
        coo.ind[1][k] = (uint32_t)tf_rng_below(&rng, 30);
        coo.vals[k] = (double)k;
    }
    tf_csr S;
    uint64_t *perm = NULL;
    CHECK_OK(tf_csr_from_coo_perm(&coo, &S, &perm));
    CHECK(S.nnz == n && S.rowptr[40] == n);
    int ok = 1;
    for (uint64_t i = 0; i < 40; ++i)
        for (uint64_t k = S.rowptr[i]; k < S.rowptr[i + 1]; ++k) {
            const uint64_t p = perm[k];
            ok &= coo.ind[0][p] == i && coo.ind[1][p] == S.colind[k] && S.vals[k] == coo.vals[p];
            if (k > S.rowptr[i]) ok &= S.colind[k - 1] <= S.colind[k];
        }
    CHECK(ok);
    CHECK(S.rowptr[1] == 0); /* row 0 is empty by construction */
    tf_tensor back;
    CHECK_OK(tf_csr_to_coo(&S, &back));
    CHECK(back.nnz == n);
    tf_tensor_free(&back);
    tf_free(perm);
    tf_csr_free(&S);
    tf_tensor_free(&coo);
    const uint64_t d3[3] = {2, 2, 2};
    tf_tensor t3;
    CHECK_OK(tf_tensor_alloc(&t3, 3, d3, 0));
    CHECK(tf_csr_from_coo(&t3, &S) == TF_ERR_ARG);
    tf_tensor_free(&t3);
}

/* 1 if a and b hold the same tiling, array for array. */
static int same_tiles(const tf_sddmm_tiles *a, const tf_sddmm_tiles *b)
{
    if (a->ngroups != b->ngroups || a->nrows != b->nrows || a->nnz != b->nnz || a->tile_j != b->tile_j) return 0;
    const uint64_t ng = a->ngroups, nz = a->nnz;
    return !memcmp(a->group_nnz, b->group_nnz, (ng + 1) * 4) && !memcmp(a->group_rows, b->group_rows, (ng + 1) * 4) &&
           !memcmp(a->group_col0, b->group_col0, ng * 4) && !memcmp(a->rows, b->rows, a->nrows * 4) &&
           !memcmp(a->rloc, b->rloc, nz * 2) && !memcmp(a->col, b->col, nz * 4) && !memcmp(a->pos, b->pos, nz * 4) &&
           !memcmp(a->vals, b->vals, nz * 8);
}

/* The group walk runs on threads over panel ranges (a part per ~64K
 * non-zeros): 1, 2, 3 and 7 threads give the same tiling array for array,
 * and every group is cut only where it must be (a new panel, max_nnz
 * entries, or max_rows rows and a new one). */
static void tiles_threads(tf_rng *rng)
{
#ifdef _OPENMP
    const int saved = omp_get_max_threads();
    tf_tensor coo = st_random_coo(rng, 20000, 9000, 600000, 1);
    tf_csr S;
    CHECK_OK(tf_csr_from_coo(&coo, &S));
    const struct { uint32_t tj, ti, tn; } cfg[] = {{64, 5, 40}, {4500, 200, 1024}, {9000, 65535, 4096}};
    for (size_t c = 0; c < COUNT(cfg); ++c) {
        tf_sddmm_tiles one, many;
        omp_set_num_threads(1);
        CHECK_OK(tf_sddmm_tiles_build(&S, cfg[c].tj, cfg[c].ti, cfg[c].tn, &one));
        int cut_ok = 1;
        for (uint64_t g = 1; g < one.ngroups; ++g) {
            if (one.group_col0[g] != one.group_col0[g - 1]) continue; /* a new panel */
            const uint32_t n = one.group_nnz[g] - one.group_nnz[g - 1];
            const uint32_t r = one.group_rows[g] - one.group_rows[g - 1];
            const int new_row = one.rows[one.group_rows[g]] != one.rows[one.group_rows[g] - 1];
            cut_ok &= n == cfg[c].tn || (r == cfg[c].ti && new_row);
        }
        CHECKF(cut_ok && one.ngroups > 1, "tiling %zu: groups cut only where they must be", c);
        const int threads[] = {2, 3, 7};
        for (size_t k = 0; k < COUNT(threads); ++k) {
            omp_set_num_threads(threads[k]);
            CHECK_OK(tf_sddmm_tiles_build(&S, cfg[c].tj, cfg[c].ti, cfg[c].tn, &many));
            CHECKF(same_tiles(&one, &many), "tiling %zu on %d threads: as on one", c, threads[k]);
            tf_sddmm_tiles_free(&many);
        }
        tf_sddmm_tiles_free(&one);
    }
    omp_set_num_threads(saved);
    tf_csr_free(&S);
    tf_tensor_free(&coo);
#else
    (void)rng;
#endif
}

/* GPU tiling (host side): every non-zero in exactly one group, groups within
 * their caps and panel, active rows right; an SDDMM computed by walking the
 * tiles as the kernel does matches the reference. */
static void tiles(void)
{
    tf_rng rng;
    tf_rng_seed(&rng, 4404);
    const struct { uint64_t M, N, nnz; int hot; uint32_t tj, ti, tn; } cases[] = {
        {300, 200, 4000, 1, 32, 7, 50},  {300, 200, 4000, 1, 200, 65535, 2048}, {1000, 37, 6000, 1, 64, 3, 5},
        {5, 5000, 3000, 0, 100, 2, 1},   {64, 64, 4096, 0, 16, 16, 256}};
    for (size_t ci = 0; ci < COUNT(cases); ++ci) {
        tf_tensor coo = st_random_coo(&rng, cases[ci].M, cases[ci].N, cases[ci].nnz, cases[ci].hot);
        tf_csr S;
        CHECK_OK(tf_csr_from_coo(&coo, &S));
        tf_sddmm_tiles t;
        CHECK_OK(tf_sddmm_tiles_build(&S, cases[ci].tj, cases[ci].ti, cases[ci].tn, &t));
        const uint64_t K = 5;
        tf_matrix A = tt_random_dense(&rng, S.rows, K), B = tt_random_dense(&rng, S.cols, K);
        double *P = NULL, *ref = NULL;
        uint8_t *seen = NULL;
        CHECK_OK(TF_ALLOC(P, S.nnz + 1, "P"));
        CHECK_OK(TF_ALLOC(ref, S.nnz + 1, "ref"));
        CHECK_OK(TF_CALLOC(seen, S.nnz + 1, "seen"));
        st_poison(P, S.nnz);
        int ok = t.nnz == S.nnz && t.group_nnz[t.ngroups] == S.nnz;
        for (uint64_t g = 0; g < t.ngroups; ++g) {
            const uint32_t e0 = t.group_nnz[g], e1 = t.group_nnz[g + 1];
            const uint32_t nr = t.group_rows[g + 1] - t.group_rows[g];
            ok &= e1 > e0 && e1 - e0 <= cases[ci].tn && nr >= 1 && nr <= cases[ci].ti;
            ok &= t.group_col0[g] % cases[ci].tj == 0;
            if (g > 0) ok &= t.group_col0[g] >= t.group_col0[g - 1];
            for (uint32_t e = e0; e < e1; ++e) {
                const uint64_t p = t.pos[e];
                ok &= p < S.nnz && !seen[p] && t.rloc[e] < nr;
                if (!ok) break;
                seen[p] = 1;
                const uint32_t row = t.rows[t.group_rows[g] + t.rloc[e]];
                ok &= S.rowptr[row] <= p && p < S.rowptr[row + 1] && S.colind[p] == t.col[e] && S.vals[p] == t.vals[e];
                ok &= t.col[e] >= t.group_col0[g] && t.col[e] < (uint64_t)t.group_col0[g] + cases[ci].tj;
                double d = 0;
                for (uint64_t k = 0; k < K; ++k) d += A.data[row * K + k] * B.data[(uint64_t)t.col[e] * K + k];
                P[p] = d;
            }
        }
        CHECKF(ok, "tiles case %zu: structure", ci);
        tf_sddmm_opts o;
        tf_sddmm_opts_default(&o);
        CHECK_OK(tf_sddmm_reference(&S, &A, &B, o.op, o.alpha, o.beta, ref));
        const double err = st_max_err(&S, &A, &B, &o, P, ref);
        CHECKF(err <= 1e-12, "tiles case %zu: walk error %.3g", ci, err);
        tf_free(P);
        tf_free(ref);
        tf_free(seen);
        tf_matrix_free(&A);
        tf_matrix_free(&B);
        tf_sddmm_tiles_free(&t);
        tf_csr_free(&S);
        tf_tensor_free(&coo);
    }
    /* A wide, very sparse matrix in narrow panels (8M x 8M, 1M non-zeros,
     * 250,000 panels of 32 columns): the builder's work grows with the
     * non-zeros and panels, not panels x rows (2e12 steps before: far past
     * the test's time limit); every non-zero once, in its panel, rows right. */
    {
        tf_tensor coo = st_random_coo(&rng, 8000000, 8000000, 1000000, 1);
        tf_csr W;
        CHECK_OK(tf_csr_from_coo(&coo, &W));
        tf_sddmm_tiles t;
        CHECK_OK(tf_sddmm_tiles_build(&W, 32, 64, 256, &t));
        uint8_t *seen = NULL;
        CHECK_OK(TF_CALLOC(seen, W.nnz + 1, "seen"));
        int ok = t.nnz == W.nnz && t.group_nnz[t.ngroups] == W.nnz;
        for (uint64_t g = 0; ok && g < t.ngroups; ++g)
            for (uint32_t e = t.group_nnz[g]; ok && e < t.group_nnz[g + 1]; ++e) {
                const uint64_t p = t.pos[e];
                const uint32_t row = t.rows[t.group_rows[g] + t.rloc[e]];
                ok &= p < W.nnz && row < W.rows && !seen[p] && W.rowptr[row] <= p && p < W.rowptr[row + 1] &&
                      W.colind[p] == t.col[e] && W.vals[p] == t.vals[e] && t.col[e] / 32 == t.group_col0[g] / 32;
                if (ok) seen[p] = 1;
            }
        CHECKF(ok, "tiles of an 8M x 8M matrix in 32-column panels: structure");
        tf_free(seen);
        tf_sddmm_tiles_free(&t);
        tf_csr_free(&W);
        tf_tensor_free(&coo);
    }
    tiles_threads(&rng);
    /* Model: one panel for a sparse matrix on a large L2, narrower when B's panel would not fit. */
    tf_csr S = {.rows = 100000, .cols = 100000, .nnz = 1000000};
    CHECK(tf_sddmm_model_tile_j(&S, 32, 4, 50u << 20) == 100000);
    const uint32_t tj = tf_sddmm_model_tile_j(&S, 512, 4, 50u << 20);
    CHECKF(tj < 100000 && tj % 32 == 0 && (uint64_t)tj * 512 * 4 <= (50u << 20), "model Tj %u", tj);
    S.nnz = 5000000000ULL;
    S.rows = S.cols = 1000;
    tf_sddmm_tiles t;
    CHECK(tf_sddmm_tiles_build(&S, 32, 8, 8, &t) == TF_ERR_RANGE);
}

/* Real matrices: every K whose A and B fit in 256 MB. */
static void sddmm_real_matrix(const char *name, const char *path, tf_tensor *coo, void *rng)
{
    tf_csr S;
    CHECK_OK(tf_csr_from_coo(coo, &S));
    for (size_t ki = 0; ki < COUNT(Ks); ++ki) {
        if ((S.rows + S.cols) * Ks[ki] * 8 > (256u << 20)) continue;
        tf_matrix A = tt_random_dense(rng, S.rows, Ks[ki]), B = tt_random_dense(rng, S.cols, Ks[ki]);
        tf_sddmm_opts o;
        tf_sddmm_opts_default(&o);
        o.backend = TF_BACKEND_CPU;
        o.op = ki % 2 ? TF_SDDMM_SCALE : TF_SDDMM_SAMPLE;
        o.beta = ki % 2 ? 0.5 : 0.0;
        check_one(name, &S, &A, &B, &o, 1e-12);
        tf_matrix_free(&A);
        tf_matrix_free(&B);
    }
    printf("%s: %llu x %llu, %llu nnz checked\n", name, (unsigned long long)S.rows,
           (unsigned long long)S.cols, (unsigned long long)S.nnz);
    tf_csr_free(&S);
}

static void real_data(void)
{
    static const char *const mtx[] = {".mtx.xz", ".mtx", NULL};
    tf_rng rng;
    tf_rng_seed(&rng, 4403);
    const int count = tf_for_each_data_file("test_sddmm", mtx, sddmm_real_matrix, &rng);
    if (count >= 0) CHECKF(count > 0, "no .mtx file in %s", tf_test_data_dir());
}

int main(void)
{
    random_cases();
    semantics();
    csr_conversion();
    tiles();
    real_data();
    return tf_test_finish("test_sddmm");
}
