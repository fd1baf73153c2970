/* SPDX-License-Identifier: BSD-3-Clause */
/* Every function of include/tenfold.h called with bad arguments (issue 41,
 * item 9): NULL for each pointer that must not be NULL, and values out of
 * their range (an order above TF_MAX_ORDER, a mode >= the order, a mode
 * order that is no permutation, rank 0, negative counts, absurd thread
 * counts). Each such call returns TF_ERR_ARG (or the status the header
 * names) with a one-line message naming the function -- no crash, no
 * out-of-bounds read (run it under ASan + UBSan), no quiet TF_OK. Functions
 * without a status: void ones take NULL as a no-op, value-returning ones
 * return their neutral value (0, "", TF_BACKEND_CPU, -1) and leave a
 * message. Thread counts far above the machine (1e6, OMP_NUM_THREADS =
 * 65536) are clamped to tf_thread_limit(), not a crash. The functions are
 * taken in the header's order. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "check.h"
#include "core/error.h"
#include "tenfold.h"

/* call fails with status `want` and a non-empty one-line message that contains `part` */
#define BAD(call, want, part)                                                                                   \
    do {                                                                                                        \
        tf_clear_error();                                                                                       \
        const tf_status st_ = (call);                                                                           \
        const char *msg_ = tf_last_error();                                                                     \
        CHECKF(st_ == (want) && msg_[0] && strstr(msg_, (part)) && !strchr(msg_, '\n'),                         \
               "%s -> %s \"%s\" (expected %s, a message with \"%s\")", #call, tf_status_name(st_), msg_,        \
               tf_status_name(want), (part));                                                                   \
    } while (0)
#define ARG(call, part) BAD(call, TF_ERR_ARG, part)

/* a value-returning call gives `want` and leaves a message naming `part` */
#define VALUE(call, want, part)                                                                                 \
    do {                                                                                                        \
        tf_clear_error();                                                                                       \
        const int same_ = (call) == (want);                                                                     \
        const char *msg_ = tf_last_error();                                                                     \
        CHECKF(same_ && strstr(msg_, (part)), "%s: not %s, or message \"%s\" without \"%s\"", #call, #want,      \
               msg_, (part));                                                                                   \
    } while (0)

static char tmp_dir[512];

static const char *tmp_path(const char *name)
{
    static char buf[4][640];
    static int next;
    char *p = buf[next++ % 4];
    snprintf(p, sizeof buf[0], "%s/%s", tmp_dir, name);
    return p;
}

/* The fixtures: a valid order-3 tensor X (4 x 5 x 6, 5 non-zeros), its
 * factors and MTTKRP output (rank 2), an order-2 tensor M and its CSR S
 * (3 x 4), SDDMM operands, a Kruskal tensor K of X's shape. */
static const uint64_t dims3[3] = {4, 5, 6};
static tf_tensor X, M;
static tf_matrix F[3], out0, A, B, U;
static tf_csr S;
static tf_ktensor K;
static double P[8];

static void fixtures(void)
{
    CHECK_OK(tf_tensor_alloc(&X, 3, dims3, 5));
    for (uint64_t k = 0; k < X.nnz; ++k) {
        X.ind[0][k] = (uint32_t)(k % 4);
        X.ind[1][k] = (uint32_t)k;
        X.ind[2][k] = (uint32_t)(5 - k);
        X.vals[k] = 1.0 + (double)k;
    }
    CHECK_OK(tf_tensor_canonicalize(&X, NULL, NULL));
    for (int m = 0; m < 3; ++m) {
        CHECK_OK(tf_matrix_alloc(&F[m], dims3[m], 2));
        for (uint64_t e = 0; e < dims3[m] * 2; ++e) F[m].data[e] = 0.5 + 0.1 * (double)e;
    }
    CHECK_OK(tf_matrix_alloc(&out0, 4, 2));
    CHECK_OK(tf_matrix_alloc(&U, 4, 2));
    for (uint64_t e = 0; e < 8; ++e) U.data[e] = 1.0;
    const uint64_t d2[2] = {3, 4};
    CHECK_OK(tf_tensor_alloc(&M, 2, d2, 3));
    for (uint64_t k = 0; k < 3; ++k) {
        M.ind[0][k] = (uint32_t)k;
        M.ind[1][k] = (uint32_t)(k + 1);
        M.vals[k] = 2.0;
    }
    CHECK_OK(tf_csr_from_coo(&M, &S));
    CHECK_OK(tf_matrix_alloc(&A, 3, 2));
    CHECK_OK(tf_matrix_alloc(&B, 4, 2));
    for (uint64_t e = 0; e < 6; ++e) A.data[e] = 1.0;
    for (uint64_t e = 0; e < 8; ++e) B.data[e] = 1.0;
    CHECK_OK(tf_ktensor_alloc(&K, 3, dims3, 2));
    for (uint64_t r = 0; r < 2; ++r) K.lambda[r] = 1.0;
    for (int m = 0; m < 3; ++m)
        for (uint64_t e = 0; e < dims3[m] * 2; ++e) K.factors[m].data[e] = 1.0;
}

static void free_fixtures(void)
{
    tf_tensor_free(&X);
    tf_tensor_free(&M);
    for (int m = 0; m < 3; ++m) tf_matrix_free(&F[m]);
    tf_matrix_free(&out0);
    tf_matrix_free(&U);
    tf_matrix_free(&A);
    tf_matrix_free(&B);
    tf_csr_free(&S);
    tf_ktensor_free(&K);
}

/* X's arrays under a header with order 99: every function must look at the
 * order before it indexes ind[] or dims[] with it. Not to be freed. */
static tf_tensor order99(void)
{
    tf_tensor t = X;
    t.order = 99;
    return t;
}

/* ------------------------------------------------------------ basics */

static void test_basics(void)
{
    CHECK(!strcmp(tf_status_name((tf_status)99), "unknown status"));
    CHECK(tf_last_error() != NULL);
    CHECK(tf_version() != NULL);
    tf_get_build_info(NULL); /* void: NULL is a no-op */
    CHECK(tf_default_threads() >= 1 && tf_default_threads() <= tf_thread_limit());
    CHECK(tf_thread_limit() >= 64);
}

/* --------------------------------------------------------- dense matrix, COO tensor */

static void test_tensor(void)
{
    tf_matrix m;
    tf_tensor t;
    ARG(tf_matrix_alloc(NULL, 2, 2), "tf_matrix_alloc: m is NULL");
    BAD(tf_matrix_alloc(&m, UINT64_MAX, 2), TF_ERR_RANGE, "too large");
    tf_matrix_free(NULL);

    ARG(tf_tensor_alloc(NULL, 3, dims3, 1), "tf_tensor_alloc: t is NULL");
    ARG(tf_tensor_alloc(&t, 3, NULL, 1), "tf_tensor_alloc: dims is NULL");
    ARG(tf_tensor_alloc(&t, 99, dims3, 1), "order 99");
    ARG(tf_tensor_alloc(&t, 1, dims3, 1), "order 1");
    tf_tensor_free(NULL);

    const tf_tensor bad = order99();
    ARG(tf_tensor_copy(NULL, &t), "tf_tensor_copy: src is NULL");
    ARG(tf_tensor_copy(&X, NULL), "tf_tensor_copy: dst is NULL");
    ARG(tf_tensor_copy(&bad, &t), "order 99");
    tf_tensor nov = X;
    nov.vals = NULL;
    ARG(tf_tensor_copy(&nov, &t), "tf_tensor_copy");

    ARG(tf_tensor_validate(NULL), "tf_tensor_validate: t is NULL");
    ARG(tf_tensor_validate(&bad), "order 99");

    tf_tensor c;
    CHECK_OK(tf_tensor_copy(&X, &c));
    ARG(tf_tensor_sort(NULL, NULL), "tf_tensor_sort: t is NULL");
    const uint32_t perm510[3] = {5, 1, 0}, twice[3] = {0, 1, 1}, ok[3] = {2, 0, 1};
    ARG(tf_tensor_sort(&c, perm510), "tf_tensor_sort: mode_order is not a permutation of 0..2 (5 at position 0)");
    ARG(tf_tensor_sort(&c, twice), "tf_tensor_sort: mode_order is not a permutation of 0..2 (1 again at position 2)");
    tf_tensor cb = c;
    cb.order = 99;
    ARG(tf_tensor_sort(&cb, NULL), "order 99");
    cb = c;
    cb.ind[1] = NULL;
    ARG(tf_tensor_sort(&cb, ok), "tf_tensor_sort");
    CHECK_OK(tf_tensor_sort(&c, ok)); /* c untouched by the failures */
    CHECK_OK(tf_tensor_validate(&c));

    uint64_t d, z;
    ARG(tf_tensor_canonicalize(NULL, &d, &z), "tf_tensor_canonicalize: t is NULL");
    cb = c;
    cb.order = 99;
    ARG(tf_tensor_canonicalize(&cb, &d, &z), "order 99");
    CHECK_OK(tf_tensor_canonicalize(&c, NULL, NULL)); /* the counts may be NULL */
    tf_tensor_free(&c);

    VALUE(tf_tensor_norm2(NULL), 0.0, "tf_tensor_norm2: t is NULL");
    VALUE(tf_tensor_norm(NULL), 0.0, "tf_tensor_norm: t is NULL");
    VALUE(tf_tensor_norm(&nov), 0.0, "tf_tensor_norm");
    VALUE(tf_tensor_norm2(&nov), 0.0, "tf_tensor_norm2");
    uint64_t implied[TF_MAX_ORDER];
    VALUE(tf_tensor_implied_dims(NULL, implied), 0u, "tf_tensor_implied_dims: t is NULL");
    VALUE(tf_tensor_implied_dims(&bad, implied), 0u, "order 99");
    VALUE(tf_tensor_bytes(NULL), 0u, "tf_tensor_bytes: t is NULL");
    VALUE(tf_tensor_bytes(&bad), 0u, "order 99");
    CHECK(tf_tensor_bytes(&X) == X.nnz * (3 * 4 + 8));
}

/* --------------------------------------------------------------- files */

static void test_files(void)
{
    tf_tensor t;
    tf_read_info info;
    tf_read_opts o;
    const char *path = tmp_path("api_args.tns");
    CHECK_OK(tf_write_tensor(path, &X, TF_FILE_TNS_HEADER));

    tf_read_opts_default(NULL);
    ARG(tf_tensor_keep_part(NULL, 0, 2), "tf_tensor_keep_part: t is NULL");
    const tf_tensor bad = order99();
    tf_tensor b2 = bad;
    ARG(tf_tensor_keep_part(&b2, 0, 2), "order 99");
    CHECK_OK(tf_tensor_copy(&X, &t));
    ARG(tf_tensor_keep_part(&t, 2, 2), "tf_tensor_keep_part");
    ARG(tf_tensor_keep_part(&t, 0, 0), "tf_tensor_keep_part");
    tf_tensor_free(&t);

    ARG(tf_read_tensor_opts(path, NULL, NULL, &info), "tf_read_tensor_opts: out is NULL");
    ARG(tf_read_tensor_opts(NULL, NULL, &t, &info), "tf_read_tensor_opts: path is NULL");
    tf_read_opts_default(&o);
    o.threads = -3;
    ARG(tf_read_tensor_opts(path, &o, &t, &info), "threads -3");
    o.threads = 1000000; /* clamped, not a million threads (GOMP_parallel's alloca overflowed the stack) */
    CHECK_OK(tf_read_tensor_opts(path, &o, &t, &info));
    CHECK(t.nnz == X.nnz);
    tf_tensor_free(&t);
    tf_read_opts_default(&o);
    o.base = 7;
    ARG(tf_read_tensor_opts(path, &o, &t, NULL), "base");

    static const char text[] = "1 1 1 1.5\n2 2 2 2.5\n";
    ARG(tf_parse_tensor_opts("x.tns", text, sizeof text - 1, NULL, NULL, NULL), "tf_parse_tensor_opts: out is NULL");
    ARG(tf_parse_tensor_opts("x.tns", NULL, 5, NULL, &t, NULL), "text is NULL");
    tf_read_opts_default(&o);
    o.threads = -1;
    ARG(tf_parse_tensor_opts("x.tns", text, sizeof text - 1, &o, &t, NULL), "threads -1");

    ARG(tf_read_tensor(path, 0, NULL, NULL), "tf_read_tensor: out is NULL");
    ARG(tf_read_tensor(NULL, 0, &t, NULL), "path is NULL");
    ARG(tf_read_tensor(path, -1, &t, NULL), "threads -1");
    CHECK_OK(tf_read_tensor(path, 1000000, &t, NULL));
    tf_tensor_free(&t);
    CHECK_OK(tf_read_tensor(path, INT_MAX, &t, NULL));
    tf_tensor_free(&t);
    ARG(tf_parse_tensor("x.tns", text, sizeof text - 1, 0, NULL, NULL), "tf_parse_tensor: out is NULL");
    CHECK_OK(tf_parse_tensor("x.tns", text, sizeof text - 1, 1000000, &t, NULL));
    tf_tensor_free(&t);

    const char *w = tmp_path("api_args_w.tns");
    ARG(tf_write_tensor(NULL, &X, TF_FILE_AUTO), "tf_write_tensor: path is NULL");
    ARG(tf_write_tensor(w, NULL, TF_FILE_AUTO), "tf_write_tensor: t is NULL");
    ARG(tf_write_tensor(w, &bad, TF_FILE_TNS), "order 99");
    ARG(tf_write_tensor(w, &bad, TF_FILE_BIN), "order 99");
    ARG(tf_write_tensor(w, &X, (tf_file_format)42), "format 42");
    struct stat st;
    CHECK(stat(w, &st) != 0); /* nothing written by the failures */
    /* tf_write_format has no status: the format as given when it cannot tell */
    CHECK(tf_write_format(NULL, &X, TF_FILE_AUTO) == TF_FILE_AUTO);
    CHECK(tf_write_format(w, NULL, TF_FILE_AUTO) == TF_FILE_TNS);
    CHECK(tf_write_format(w, &bad, TF_FILE_AUTO) == TF_FILE_TNS);

    const char *mat = tmp_path("api_args.mat");
    tf_matrix m;
    ARG(tf_matrix_write(NULL, &F[0]), "tf_matrix_write: path is NULL");
    ARG(tf_matrix_write(mat, NULL), "tf_matrix_write: m is NULL");
    tf_matrix nod = F[0];
    nod.data = NULL;
    ARG(tf_matrix_write(mat, &nod), "no data");
    CHECK_OK(tf_matrix_write(mat, &F[0]));
    ARG(tf_matrix_read(mat, NULL), "tf_matrix_read: out is NULL");
    ARG(tf_matrix_read(NULL, &m), "tf_matrix_read: path is NULL");
}

/* ------------------------------------------------------------ Kruskal tensors, outputs */

static void test_ktensor(void)
{
    tf_ktensor k;
    ARG(tf_ktensor_alloc(NULL, 3, dims3, 2), "tf_ktensor_alloc: k is NULL");
    ARG(tf_ktensor_alloc(&k, 3, NULL, 2), "tf_ktensor_alloc: dims is NULL");
    ARG(tf_ktensor_alloc(&k, 99, dims3, 2), "order 99");
    ARG(tf_ktensor_alloc(&k, 3, dims3, 0), "rank");
    tf_ktensor_free(NULL);

    const char *stem = tmp_path("api_args_k");
    ARG(tf_ktensor_write(NULL, &K, TF_KTENSOR_ALL), "tf_ktensor_write: stem is NULL");
    ARG(tf_ktensor_write(stem, NULL, TF_KTENSOR_ALL), "tf_ktensor_write: k is NULL");
    ARG(tf_ktensor_write(stem, &K, 0), "flags");
    tf_ktensor kb = K;
    kb.order = 99;
    ARG(tf_ktensor_write(stem, &kb, TF_KTENSOR_ALL), "order 99");
    kb = K;
    kb.rank = 0;
    ARG(tf_ktensor_write(stem, &kb, TF_KTENSOR_ALL), "rank 0");
    ARG(tf_ktensor_write_splatt(NULL, &K), "tf_ktensor_write_splatt: stem is NULL");
    ARG(tf_ktensor_write_splatt(stem, NULL), "tf_ktensor_write_splatt: k is NULL");
    ARG(tf_ktensor_write_ttb(NULL, &K), "tf_ktensor_write_ttb: path is NULL");
    ARG(tf_ktensor_write_ttb(stem, NULL), "tf_ktensor_write_ttb: k is NULL");

    /* the factor-set switch (tf_ktensor_out_*), its reader and the path ids */
    tf_ktensor_out *ko = NULL;
    ARG(tf_ktensor_out_open(stem, TF_KTENSOR_ALL, NULL), "tf_ktensor_out_open: out is NULL");
    ARG(tf_ktensor_out_open(NULL, TF_KTENSOR_ALL, &ko), "no output stem");
    ARG(tf_ktensor_out_put(NULL, &K), "tf_ktensor_out_put: o is NULL");
    ARG(tf_ktensor_out_add(NULL, stem, "x", 1), "tf_ktensor_out_add: o is NULL");
    ARG(tf_ktensor_out_commit(NULL), "tf_ktensor_out_commit: o is NULL");
    tf_ktensor_out_abort(NULL);
    CHECK_OK(tf_ktensor_out_open(stem, TF_KTENSOR_ALL, &ko));
    ARG(tf_ktensor_out_put(ko, NULL), "tf_ktensor_out_put: k is NULL");
    ARG(tf_ktensor_out_add(ko, tmp_path("api_args_rep"), NULL, 4), "tf_ktensor_out_add: data is NULL");
    tf_ktensor_out_abort(ko);
    ARG(tf_ktensor_read(stem, NULL, NULL), "tf_ktensor_read: k is NULL");
    tf_ktensor kr;
    ARG(tf_ktensor_read(NULL, &kr, NULL), "stem");
    tf_path_id_get(stem, 1, NULL); /* void: NULL is a no-op */
    CHECK(tf_path_id_same(NULL, NULL) == 0);

    int to_stdout = 0;
    ARG(tf_output_check(NULL, &to_stdout), "tf_output_check: path is NULL");
    CHECK_OK(tf_output_check(tmp_path("api_args_out"), NULL)); /* to_stdout may be NULL */
    ARG(tf_write_file(NULL, "x", 1), "tf_write_file: path is NULL");
    ARG(tf_write_file(tmp_path("api_args_wf"), NULL, 1), "tf_write_file: data is NULL");
    CHECK_OK(tf_write_file(tmp_path("api_args_wf"), NULL, 0)); /* nothing to write: an empty file */
}

/* ---------------------------------------------------------- tuning, context */

static void test_context(void)
{
    tf_tuning_default(NULL);
    tf_tuning_from_env(NULL);
    tf_context_opts_default(NULL);
    tf_context_opts o;
    tf_context *c = NULL;
    ARG(tf_context_create(NULL, NULL), "tf_context_create");
    tf_context_opts_default(&o);
    o.backend = (tf_backend)7;
    ARG(tf_context_create(&o, &c), "backend 7");
    tf_context_opts_default(&o);
    o.threads = -1;
    ARG(tf_context_create(&o, &c), "threads");
    tf_context_opts_default(&o);
    o.ndevices = 0;
    ARG(tf_context_create(&o, &c), "GPUs");
    tf_context_opts_default(&o);
    o.ndevices = TF_MAX_GPUS + 1;
    ARG(tf_context_create(&o, &c), "GPUs");
    tf_context_opts_default(&o);
    o.backend = TF_BACKEND_CPU;
    o.threads = 1000000; /* clamped where it is used */
    CHECK_OK(tf_context_create(&o, &c));
    tf_context_free(NULL);
    CHECK(tf_context_backend(NULL) == TF_BACKEND_CPU);
    uint64_t bytes;
    ARG(tf_context_memory_budget(NULL, &bytes), "tf_context_memory_budget");
    ARG(tf_context_memory_budget(c, NULL), "tf_context_memory_budget");
    tf_dense d = tf_dense_host(NULL);
    CHECK(d.data == NULL && d.rows == 0);

    /* a plan on that context runs with at most tf_thread_limit() threads */
    tf_plan_opts po;
    tf_plan_opts_default(&po);
    po.context = c;
    po.backend = TF_BACKEND_CPU;
    po.threads = 1000000;
    tf_plan *p = NULL;
    CHECK_OK(tf_plan_build(&X, &po, &p));
    CHECK_OK(tf_plan_mttkrp(p, 0, F, &out0));
    tf_plan_free(p);
    tf_context_free(c);
}

/* ------------------------------------------------------------ MTTKRP plans */

static void test_plans(void)
{
    tf_plan_opts_default(NULL);
    tf_plan_opts o;
    tf_plan *p = NULL;
    const tf_tensor bad = order99();
    ARG(tf_plan_build(&X, NULL, NULL), "tf_plan_build: out is NULL");
    ARG(tf_plan_build(NULL, NULL, &p), "tf_plan_build");
    ARG(tf_plan_build(&bad, NULL, &p), "order 99");
    tf_plan_opts_default(&o);
    o.backend = (tf_backend)9;
    ARG(tf_plan_build(&X, &o, &p), "backend 9");
    tf_plan_opts_default(&o);
    o.format = (tf_format)42;
    ARG(tf_plan_build(&X, &o, &p), "format 42");
    tf_plan_opts_default(&o);
    o.precision = (tf_precision)5;
    ARG(tf_plan_build(&X, &o, &p), "precision 5");
    tf_plan_opts_default(&o);
    o.threads = -2;
    ARG(tf_plan_build(&X, &o, &p), "threads -2");
    CHECK(p == NULL);

    tf_plan_opts_default(&o);
    o.backend = TF_BACKEND_CPU;
    CHECK_OK(tf_plan_build(&X, &o, &p));
    ARG(tf_plan_mttkrp(NULL, 0, F, &out0), "tf_plan_mttkrp");
    ARG(tf_plan_mttkrp(p, 3, F, &out0), "tf_plan_mttkrp: mode 4 is outside 1..3");
    ARG(tf_plan_mttkrp(p, UINT32_MAX, F, &out0), "tf_plan_mttkrp");
    ARG(tf_plan_mttkrp(p, 0, NULL, &out0), "tf_plan_mttkrp");
    ARG(tf_plan_mttkrp(p, 0, F, NULL), "tf_plan_mttkrp");
    tf_matrix o1 = out0;
    o1.cols = 0;
    ARG(tf_plan_mttkrp(p, 0, F, &o1), "tf_plan_mttkrp");

    tf_dense fd[3], od = tf_dense_host(&out0);
    for (int m = 0; m < 3; ++m) fd[m] = tf_dense_host(&F[m]);
    ARG(tf_plan_mttkrp_dense(NULL, 0, fd, &od, NULL), "tf_plan_mttkrp_dense");
    ARG(tf_plan_mttkrp_dense(p, 3, fd, &od, NULL), "tf_plan_mttkrp_dense");
    ARG(tf_plan_mttkrp_dense(p, 0, NULL, &od, NULL), "tf_plan_mttkrp_dense");
    ARG(tf_plan_mttkrp_dense(p, 0, fd, NULL, NULL), "tf_plan_mttkrp_dense");
    CHECK_OK(tf_plan_mttkrp_dense(p, 0, fd, &od, NULL));

    double ms[2];
    ARG(tf_plan_time_mttkrp(NULL, 0, F, &out0, 0, 1, ms), "tf_plan_time_mttkrp");
    ARG(tf_plan_time_mttkrp(p, 0, F, &out0, 0, 1, NULL), "tf_plan_time_mttkrp");
    ARG(tf_plan_time_mttkrp(p, 0, F, &out0, -1, 1, ms), "tf_plan_time_mttkrp");
    ARG(tf_plan_time_mttkrp(p, 0, F, &out0, 0, 0, ms), "tf_plan_time_mttkrp");
    ARG(tf_plan_time_mttkrp(p, 5, F, &out0, 0, 1, ms), "tf_plan_time_mttkrp");

    tf_plan_free(NULL);
    VALUE(tf_plan_describe(NULL)[0], '\0', "tf_plan_describe: p is NULL");
    VALUE(tf_plan_note(NULL)[0], '\0', "tf_plan_note: p is NULL");
    VALUE(tf_plan_bytes(NULL), 0u, "tf_plan_bytes: p is NULL");
    VALUE(tf_plan_streamed_bytes(NULL, 0), 0u, "tf_plan_streamed_bytes: p is NULL");
    VALUE(tf_plan_streamed_bytes(p, 99), 0u, "tf_plan_streamed_bytes: mode 100 is outside 1..3");
    VALUE(tf_plan_build_peak(NULL), 0u, "tf_plan_build_peak: p is NULL");
    VALUE(tf_plan_backend(NULL), TF_BACKEND_CPU, "tf_plan_backend: p is NULL");
    VALUE(tf_plan_format(NULL), TF_FORMAT_AUTO, "tf_plan_format: p is NULL");
    CHECK(tf_plan_backend(p) == TF_BACKEND_CPU && tf_plan_format(p) == TF_FORMAT_CSF);
    tf_plan_free(p);

    ARG(tf_mttkrp_reference(NULL, 0, F, &out0), "tf_mttkrp_reference: X is NULL");
    ARG(tf_mttkrp_reference(&bad, 0, F, &out0), "order 99");
    ARG(tf_mttkrp_reference(&X, 3, F, &out0), "tf_mttkrp_reference: mode 4 is outside 1..3");
    ARG(tf_mttkrp_reference(&X, 0, NULL, &out0), "tf_mttkrp_reference");
    ARG(tf_mttkrp_reference(&X, 0, F, NULL), "tf_mttkrp_reference");
    tf_tensor wild;
    CHECK_OK(tf_tensor_copy(&X, &wild));
    wild.ind[0][0] = 1000; /* an index outside its mode: the reference writes nothing out of bounds */
    BAD(tf_mttkrp_reference(&wild, 0, F, &out0), TF_ERR_RANGE, "index");
    tf_tensor_free(&wild);

    VALUE(tf_backend_parse(NULL), -1, "tf_backend_parse: s is NULL");
    VALUE(tf_format_parse(NULL), -1, "tf_format_parse: s is NULL");
    CHECK(tf_backend_parse("gpu") == TF_BACKEND_GPU && tf_format_parse("blco") == TF_FORMAT_BLCO);
    CHECK(!strcmp(tf_backend_name((tf_backend)-1), "?") && !strcmp(tf_format_name((tf_format)99), "?"));
}

/* -------------------------------------------------------------- CP-ALS, generator */

static void test_cpd(void)
{
    tf_cpd_opts_default(NULL);
    tf_cpd_opts o;
    tf_ktensor out;
    tf_cpd_report rep;
    const tf_tensor bad = order99();
    ARG(tf_cpd(NULL, NULL, &out, NULL), "tf_cpd");
    ARG(tf_cpd(&X, NULL, NULL, NULL), "tf_cpd");
    ARG(tf_cpd(&bad, NULL, &out, NULL), "order 99");
    tf_cpd_opts_default(&o);
    o.rank = 0;
    ARG(tf_cpd(&X, &o, &out, &rep), "rank 0");
    tf_cpd_opts_default(&o);
    o.rank = TF_MAX_RANK + 1;
    ARG(tf_cpd(&X, &o, &out, &rep), "rank");
    tf_cpd_opts_default(&o);
    o.threads = -1;
    ARG(tf_cpd(&X, &o, &out, &rep), "threads");
    tf_cpd_opts_default(&o);
    tf_ktensor kb = K;
    kb.factors[1].data = NULL;
    o.rank = 2;
    o.init = &kb;
    ARG(tf_cpd(&X, &o, &out, &rep), "initial factor 2 has no data");
    kb = K;
    kb.order = 99;
    ARG(tf_cpd(&X, &o, &out, &rep), "order 99");
    tf_cpd_opts_default(&o);
    o.rank = 2;
    o.max_iters = 3;
    o.threads = 1000000; /* clamped */
    o.backend = TF_BACKEND_CPU;
    CHECK_OK(tf_cpd(&X, &o, &out, &rep));
    tf_ktensor_free(&out);

    double fit;
    ARG(tf_ktensor_fit(NULL, &K, &fit), "tf_ktensor_fit");
    ARG(tf_ktensor_fit(&X, NULL, &fit), "tf_ktensor_fit");
    ARG(tf_ktensor_fit(&X, &K, NULL), "tf_ktensor_fit");
    ARG(tf_ktensor_fit(&bad, &K, &fit), "order 99");
    kb = K;
    kb.order = 99;
    ARG(tf_ktensor_fit(&X, &kb, &fit), "tf_ktensor_fit");

    tf_gen_opts g;
    memset(&g, 0, sizeof g);
    g.order = 3;
    g.dims[0] = g.dims[1] = g.dims[2] = 10;
    g.nnz = 20;
    g.seed = 1;
    tf_tensor t;
    ARG(tf_generate(NULL, &t), "tf_generate");
    ARG(tf_generate(&g, NULL), "tf_generate: out is NULL");
    g.order = 99;
    ARG(tf_generate(&g, &t), "order 99");
    g.order = 3;
    g.threads = -1;
    ARG(tf_generate(&g, &t), "threads");
    g.threads = 1000000; /* clamped */
    CHECK_OK(tf_generate(&g, &t));
    CHECK(t.nnz == 20);
    tf_tensor_free(&t);
}

/* ------------------------------------------------------------ CSR, SDDMM */

static void test_sddmm(void)
{
    tf_csr c;
    tf_tensor t;
    ARG(tf_csr_alloc(NULL, 2, 2, 1), "tf_csr_alloc: c is NULL");
    tf_csr_free(NULL);
    ARG(tf_csr_from_coo(NULL, &c), "tf_csr_from_coo");
    ARG(tf_csr_from_coo(&M, NULL), "tf_csr_from_coo: out is NULL");
    const tf_tensor bad = order99();
    ARG(tf_csr_from_coo(&bad, &c), "order 99");
    ARG(tf_csr_to_coo(NULL, &t), "tf_csr_to_coo");
    ARG(tf_csr_to_coo(&S, NULL), "tf_csr_to_coo: out is NULL");
    ARG(tf_csr_validate(NULL), "tf_csr_validate");
    tf_csr sb = S;
    sb.rowptr = NULL;
    ARG(tf_csr_validate(&sb), "no row offsets");

    tf_sddmm_opts_default(NULL);
    CHECK(!strcmp(tf_sddmm_algo_name((tf_sddmm_algo)99), "unknown"));
    tf_sddmm_opts o;
    tf_sddmm_opts_default(&o);
    o.backend = TF_BACKEND_CPU;
    ARG(tf_sddmm(NULL, &A, &B, &o, P, NULL), "tf_sddmm");
    ARG(tf_sddmm(&S, NULL, &B, &o, P, NULL), "tf_sddmm");
    ARG(tf_sddmm(&S, &A, NULL, &o, P, NULL), "tf_sddmm");
    ARG(tf_sddmm(&S, &A, &B, &o, NULL, NULL), "tf_sddmm");
    tf_sddmm_opts ob = o;
    ob.threads = -1;
    ARG(tf_sddmm(&S, &A, &B, &ob, P, NULL), "threads");
    ob = o;
    ob.threads = 1000000; /* clamped */
    CHECK_OK(tf_sddmm(&S, &A, &B, &ob, P, NULL));
    ARG(tf_sddmm_coo(NULL, &A, &B, &o, P, NULL), "tf_sddmm_coo");
    ARG(tf_sddmm_coo(&M, &A, &B, &o, NULL, NULL), "tf_sddmm");
    ARG(tf_sddmm_coo(&M, NULL, &B, &o, P, NULL), "tf_sddmm");
    ARG(tf_sddmm_coo(&bad, &A, &B, &o, P, NULL), "order 99");
    ARG(tf_sddmm_reference(NULL, &A, &B, TF_SDDMM_SAMPLE, 1, 0, P), "tf_sddmm_reference");
    ARG(tf_sddmm_reference(&S, NULL, &B, TF_SDDMM_SAMPLE, 1, 0, P), "tf_sddmm_reference");
    ARG(tf_sddmm_reference(&S, &A, &B, TF_SDDMM_SAMPLE, 1, 0, NULL), "tf_sddmm_reference");
    ARG(tf_sddmm_reference(&sb, &A, &B, TF_SDDMM_SAMPLE, 1, 0, P), "no row offsets");
    ARG(tf_sddmm_reference(&S, &A, &B, (tf_sddmm_op)9, 1, 0, P), "tf_sddmm_reference: unknown op 9");
    tf_matrix an = A;
    an.data = NULL;
    ARG(tf_sddmm_reference(&S, &an, &B, TF_SDDMM_SAMPLE, 1, 0, P), "tf_sddmm_reference");
    double ms[2];
    ARG(tf_sddmm_time(&S, &A, &B, &o, P, 0, 1, NULL, NULL), "tf_sddmm_time");
    ARG(tf_sddmm_time(&S, &A, &B, &o, P, -1, 1, ms, NULL), "tf_sddmm_time");
    ARG(tf_sddmm_time(NULL, &A, &B, &o, P, 0, 1, ms, NULL), "tf_sddmm");

    tf_sddmm_plan *p = NULL;
    ARG(tf_sddmm_plan_build(&S, 2, &o, NULL), "tf_sddmm_plan_build");
    ARG(tf_sddmm_plan_build(NULL, 2, &o, &p), "tf_sddmm_plan_build");
    ARG(tf_sddmm_plan_build(&S, 0, &o, &p), "tf_sddmm_plan_build");
    ob = o;
    ob.threads = -4;
    ARG(tf_sddmm_plan_build(&S, 2, &ob, &p), "threads");
    CHECK_OK(tf_sddmm_plan_build(&S, 2, &o, &p));
    const tf_dense da = tf_dense_host(&A), db = tf_dense_host(&B), dp = {P, S.nnz, 1, 1, TF_DOUBLE, TF_MEMORY_HOST};
    ARG(tf_sddmm_plan_run(NULL, &da, &db, &dp, NULL), "tf_sddmm_plan_run");
    ARG(tf_sddmm_plan_run(p, NULL, &db, &dp, NULL), "tf_sddmm_plan_run");
    ARG(tf_sddmm_plan_run(p, &da, NULL, &dp, NULL), "tf_sddmm_plan_run");
    ARG(tf_sddmm_plan_run(p, &da, &db, NULL, NULL), "tf_sddmm_plan_run");
    ARG(tf_sddmm_plan_time(NULL, &da, &db, 0, 1, ms), "tf_sddmm_plan_time");
    ARG(tf_sddmm_plan_time(p, &da, &db, 0, 1, NULL), "tf_sddmm_plan_time");
    ARG(tf_sddmm_plan_time(p, NULL, &db, 0, 1, ms), "tf_sddmm_plan_time");
    ARG(tf_sddmm_plan_time_panels(NULL, &da, &db, NULL, 0, 1, ms, NULL), "tf_sddmm_plan_time");
    ARG(tf_sddmm_plan_time_panels(p, &da, &db, NULL, 0, 0, ms, NULL), "tf_sddmm_plan_time");
    tf_sddmm_info info;
    tf_sddmm_panel panel;
    ARG(tf_sddmm_plan_info(NULL, &info), "tf_sddmm_plan_info");
    ARG(tf_sddmm_plan_info(p, NULL), "tf_sddmm_plan_info");
    ARG(tf_sddmm_plan_panel(NULL, 0, &panel), "tf_sddmm_plan_panel");
    ARG(tf_sddmm_plan_panel(p, 0, NULL), "tf_sddmm_plan_panel");
    ARG(tf_sddmm_plan_panel(p, 1, &panel), "tf_sddmm_plan_panel");
    CHECK_OK(tf_sddmm_plan_run(p, &da, &db, &dp, NULL));
    tf_sddmm_plan_free(p);
    tf_sddmm_plan_free(NULL);
}

/* ------------------------------------------------------------------ SpTTM */

static void test_spttm(void)
{
    tf_semisparse y;
    tf_tensor t;
    const tf_tensor bad = order99();
    tf_semisparse_free(NULL);
    CHECK_OK(tf_spttm_reference(&X, 0, &U, &y));
    ARG(tf_semisparse_to_tensor(NULL, &t), "tf_semisparse_to_tensor");
    ARG(tf_semisparse_to_tensor(&y, NULL), "tf_semisparse_to_tensor: out is NULL");
    tf_semisparse yb = y;
    yb.order = 99;
    ARG(tf_semisparse_to_tensor(&yb, &t), "order 99");
    yb = y;
    yb.vals = NULL;
    ARG(tf_semisparse_to_tensor(&yb, &t), "tf_semisparse_to_tensor");
    yb = y;
    yb.ind[1] = NULL;
    ARG(tf_semisparse_to_tensor(&yb, &t), "tf_semisparse_to_tensor");
    CHECK_OK(tf_semisparse_to_tensor(&y, &t));
    tf_tensor_free(&t);
    tf_semisparse_free(&y);

    tf_spttm_opts_default(NULL);
    tf_spttm_opts o;
    tf_spttm_opts_default(&o);
    o.backend = TF_BACKEND_CPU;
    ARG(tf_spttm(NULL, 0, &U, &o, &y), "tf_spttm");
    ARG(tf_spttm(&X, 0, NULL, &o, &y), "tf_spttm");
    ARG(tf_spttm(&X, 0, &U, &o, NULL), "tf_spttm");
    ARG(tf_spttm(&X, 3, &U, &o, &y), "tf_spttm: mode 4 is outside 1..3");
    ARG(tf_spttm(&bad, 0, &U, &o, &y), "order 99");
    tf_spttm_opts ob = o;
    ob.threads = -1;
    ARG(tf_spttm(&X, 0, &U, &ob, &y), "threads");
    ob.threads = 1000000; /* clamped */
    CHECK_OK(tf_spttm(&X, 0, &U, &ob, &y));
    tf_semisparse_free(&y);
    ARG(tf_spttm_reference(NULL, 0, &U, &y), "tf_spttm_reference");
    ARG(tf_spttm_reference(&X, 0, NULL, &y), "tf_spttm_reference");
    ARG(tf_spttm_reference(&X, 0, &U, NULL), "tf_spttm_reference: out is NULL");
    ARG(tf_spttm_reference(&bad, 0, &U, &y), "order 99");
    ARG(tf_spttm_reference(&X, 7, &U, &y), "tf_spttm_reference: mode 8 is outside 1..3");
    double ms[2];
    ARG(tf_spttm_time(&X, 0, &U, &o, 0, 1, NULL, &y), "tf_spttm_time");
    ARG(tf_spttm_time(&X, 0, &U, &o, 0, 0, ms, &y), "tf_spttm_time");
    ARG(tf_spttm_time(&X, 0, &U, &o, 0, 1, ms, NULL), "tf_spttm");
}

/* ------------------------------------------------------------ Tucker */

static void test_tucker(void)
{
    const tf_tensor bad = order99();
    tf_matrix Y;
    tf_ttmc_opts_default(NULL);
    tf_ttmc_opts to;
    tf_ttmc_opts_default(&to);
    ARG(tf_ttmc(NULL, 0, F, &to, &Y), "tf_ttmc: X is NULL");
    ARG(tf_ttmc(&X, 0, NULL, &to, &Y), "tf_ttmc: U is NULL");
    ARG(tf_ttmc(&X, 0, F, &to, NULL), "tf_ttmc: out is NULL");
    ARG(tf_ttmc(&X, 3, F, &to, &Y), "tf_ttmc: mode 4 is outside 1..3");
    ARG(tf_ttmc(&bad, 0, F, &to, &Y), "order 99");
    tf_matrix Fb[3] = {F[0], F[1], F[2]};
    Fb[1].data = NULL;
    ARG(tf_ttmc(&X, 0, Fb, &to, &Y), "tf_ttmc: factor 2 has no data");
    Fb[1] = F[1];
    Fb[2].rows = 5;
    ARG(tf_ttmc(&X, 0, Fb, &to, &Y), "tf_ttmc: factor 3 is 5 x 2");
    tf_ttmc_opts tb = to;
    tb.threads = -1;
    ARG(tf_ttmc(&X, 0, F, &tb, &Y), "threads");
    tb.threads = 1000000; /* clamped */
    CHECK_OK(tf_ttmc(&X, 0, F, &tb, &Y));
    CHECK(Y.rows == 4 && Y.cols == 4);
    tf_matrix_free(&Y);
    CHECK_OK(tf_ttmc(&X, 1, F, NULL, &Y)); /* NULL options: the defaults */
    tf_matrix_free(&Y);

    tf_ttensor t;
    const uint64_t r2[3] = {2, 2, 2}, r0[3] = {2, 0, 2};
    tf_ttensor_free(NULL);
    ARG(tf_ttensor_alloc(NULL, 3, dims3, r2), "tf_ttensor_alloc: t is NULL");
    ARG(tf_ttensor_alloc(&t, 3, NULL, r2), "tf_ttensor_alloc: dims is NULL");
    ARG(tf_ttensor_alloc(&t, 3, dims3, NULL), "tf_ttensor_alloc: ranks is NULL");
    ARG(tf_ttensor_alloc(&t, 99, dims3, r2), "order 99");
    ARG(tf_ttensor_alloc(&t, 3, dims3, r0), "mode 2 has length 5 and rank 0");
    CHECK_OK(tf_ttensor_alloc(&t, 3, dims3, r2));
    for (int m = 0; m < 3; ++m)
        for (uint64_t e = 0; e < dims3[m] * 2; ++e) t.factors[m].data[e] = 0.5;
    for (int e = 0; e < 8; ++e) t.core[e] = 1.0;
    ARG(tf_ttensor_write(NULL, &t), "tf_ttensor_write: stem is NULL");
    ARG(tf_ttensor_write(tmp_path("tt"), NULL), "tf_ttensor_write: t is NULL");
    tf_ttensor tb2 = t;
    tb2.order = 99;
    ARG(tf_ttensor_write(tmp_path("tt"), &tb2), "not a valid Tucker tensor (order 99");
    tb2 = t;
    tb2.ranks[1] = 3;
    ARG(tf_ttensor_write(tmp_path("tt"), &tb2), "factor 2 is 5 x 2, expected 5 x 3");
    tf_ktensor_out *o = NULL;
    ARG(tf_ttensor_out_open(tmp_path("tt"), NULL), "tf_ttensor_out_open: out is NULL");
    ARG(tf_ttensor_out_open(NULL, &o), "no output stem given");
    CHECK_OK(tf_ttensor_out_open(tmp_path("tt"), &o));
    ARG(tf_ttensor_out_put(o, NULL), "tf_ttensor_out_put: t is NULL");
    ARG(tf_ktensor_out_put(o, &K), "a Tucker tensor's set (tf_ttensor_out_open) takes tf_ttensor_out_put");
    CHECK_OK(tf_ttensor_out_put(o, &t));
    ARG(tf_ttensor_out_put(o, &t), "the factors were given already");
    CHECK_OK(tf_ktensor_out_commit(o));
    ARG(tf_ttensor_out_put(NULL, &t), "tf_ttensor_out_put: o is NULL");
    tf_matrix f[TF_MAX_ORDER];
    uint32_t n = 0;
    ARG(tf_factor_files_read(tmp_path("tt"), NULL, &n), "tf_factor_files_read: factors is NULL");
    ARG(tf_factor_files_read(tmp_path("tt"), f, NULL), "tf_factor_files_read: order is NULL");
    ARG(tf_factor_files_read(NULL, f, &n), "no factor set stem given");
    CHECK_OK(tf_factor_files_read(tmp_path("tt"), f, &n));
    CHECK(n == 3 && f[1].rows == 5 && f[1].cols == 2);
    for (uint32_t m = 0; m < n; ++m) tf_matrix_free(&f[m]);
    tf_ttensor_free(&t);
    CHECK(t.core == NULL);

    tf_tucker_opts_init(NULL, sizeof(tf_tucker_opts));
    tf_tucker_report_free(NULL);
    tf_tucker_opts uo;
    tf_tucker_opts_default(&uo);
    uo.ranks[0] = uo.ranks[1] = uo.ranks[2] = 2;
    tf_tucker_report rep;
    ARG(tf_tucker(NULL, &uo, &t, &rep), "tf_tucker: X is NULL");
    ARG(tf_tucker(&X, &uo, NULL, &rep), "tf_tucker: out is NULL");
    ARG(tf_tucker(&bad, &uo, &t, &rep), "order 99");
    ARG(tf_tucker(&X, NULL, &t, &rep), "the rank of mode 1 is 0"); /* NULL options: no ranks */
    tf_tucker_opts ub = uo;
    ub.threads = -1;
    ARG(tf_tucker(&X, &ub, &t, &rep), "threads -1");
    ub = uo;
    ub.max_iters = 0;
    ARG(tf_tucker(&X, &ub, &t, &rep), "max_iters is 0");
    ub = uo;
    ub.tol = -1;
    ARG(tf_tucker(&X, &ub, &t, &rep), "tolerance -1");
    ub = uo;
    ub.init = (tf_tucker_init)7;
    ARG(tf_tucker(&X, &ub, &t, &rep), "unknown init 7");
    ub = uo;
    ub.svd = (tf_tucker_svd)9;
    ARG(tf_tucker(&X, &ub, &t, &rep), "unknown svd method 9");
    ub = uo;
    ub.threads = 1000000; /* clamped */
    ub.max_iters = 2;
    CHECK_OK(tf_tucker(&X, &ub, &t, NULL));
    tf_ttensor_free(&t);
}

/* ---------------------------------------------------------- devices, MPI */

static void test_devices(void)
{
    char buf[256];
    double bw;
    CHECK(tf_gpu_count() >= 0);
    ARG(tf_gpu_describe(0, NULL, 10), "tf_gpu_describe: buf is NULL");
    ARG(tf_gpu_describe(-1, buf, sizeof buf), "tf_gpu_describe: device -1");
    tf_gpu_links(NULL, 10); /* void: NULL is a no-op */
    ARG(tf_gpu_copy_bandwidth(0, NULL), "tf_gpu_copy_bandwidth: bytes_per_s is NULL");
    ARG(tf_gpu_copy_bandwidth(-1, &bw), "tf_gpu_copy_bandwidth: device -1");
    ARG(tf_gpu_h2d_bandwidth(0, NULL), "tf_gpu_h2d_bandwidth: bytes_per_s is NULL");
    ARG(tf_gpu_h2d_bandwidth(-1, &bw), "tf_gpu_h2d_bandwidth: device -1");
    if (tf_gpu_count() == 0) { /* no CUDA backend: unavailable; one without a driver: the device's error */
        tf_clear_error();
        const tf_status st = tf_gpu_copy_bandwidth(0, &bw);
        CHECKF((st == TF_ERR_UNAVAILABLE || st == TF_ERR_DEVICE) && strstr(tf_last_error(), "CUDA"),
               "tf_gpu_copy_bandwidth(0) without a GPU -> %s \"%s\"", tf_status_name(st), tf_last_error());
    }
    CHECK(tf_have_cuda() == 0 || tf_have_cuda() == 1);
    CHECK(tf_have_mpi() == 0 || tf_have_mpi() == 1);
    tf_mpi_describe(NULL, 10);
    int rank, size;
    ARG(tf_mpi_start(NULL, NULL, NULL, &size), "tf_mpi_start: rank is NULL");
    ARG(tf_mpi_start(NULL, NULL, &rank, NULL), "tf_mpi_start: size is NULL");
    ARG(tf_mpi_allreduce_sum(NULL, 3), "tf_mpi_allreduce_sum: x is NULL");
    CHECK_OK(tf_mpi_allreduce_sum(NULL, 0));
    (void)tf_cuda_module(0, NULL, 10);
}

int main(void)
{
    snprintf(tmp_dir, sizeof tmp_dir, "%s", TF_TEST_TMP);
    mkdir(tmp_dir, 0777);
#ifdef _OPENMP
    /* what OMP_NUM_THREADS=65536 sets: every region the library starts is
     * clamped to tf_thread_limit() */
    omp_set_num_threads(65536);
    CHECK(tf_default_threads() == tf_thread_limit());
#endif
    fixtures();
    test_basics();
    test_tensor();
    test_files();
    test_ktensor();
    test_context();
    test_plans();
    test_cpd();
    test_sddmm();
    test_spttm();
    test_tucker();
    test_devices();
    free_fixtures();
    return tf_test_finish("test_api_args");
}
