/* SPDX-License-Identifier: BSD-3-Clause */
/* Checkpoints and resume through the C API (tf_checkpoint in tf_cpd_opts,
 * tf_cp_apr_opts, tf_tucker_opts): on random tensors, for ALS, AO-ADMM (l1
 * on one mode, nonneg on all), HALS, CP-APR and Tucker, 4 iterations with a
 * checkpoint every 3 (and the last) then a resume to 9 give the bits of 9
 * straight (factors, lambda / core, final fit; Tucker's report lists all 9
 * fits); a resume with max_iters reached or after convergence returns the
 * checkpoint's result without iterating (no callback); values outside
 * 2^-40..2^40 (the scaled run) resume to the same bits and the checkpoint's
 * lambda is in the caller's scale; the checkpoint's files read back as a
 * model (tf_ktensor_read); mismatches and bad options fail with one line. */
#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "io/output.h"
#include "test_paths.h"
#include "test_random.h"

static const char *dir;

static tf_tensor random_tensor(uint64_t seed, int counts, double scale)
{
    tf_rng rng;
    tf_rng_seed(&rng, seed);
    const uint64_t dims[3] = {25, 20, 15};
    tf_tensor X;
    CHECK_OK(tf_tensor_alloc(&X, 3, dims, 900));
    for (uint64_t k = 0; k < X.nnz; ++k) {
        for (uint32_t m = 0; m < 3; ++m) X.ind[m][k] = tt_draw_sparse_index(&rng, dims[m]);
        const double v = 1.0 + tf_rng_uniform(&rng);
        X.vals[k] = counts ? floor(3.0 * v) : v * scale;
    }
    CHECK_OK(tf_tensor_canonicalize(&X, NULL, NULL));
    return X;
}

static int same_ktensor(const tf_ktensor *a, const tf_ktensor *b)
{
    if (a->order != b->order || a->rank != b->rank) return 0;
    for (uint32_t m = 0; m < a->order; ++m)
        if (memcmp(a->factors[m].data, b->factors[m].data, a->dims[m] * a->rank * sizeof(double))) return 0;
    return !memcmp(a->lambda, b->lambda, a->rank * sizeof(double));
}

static int calls;
static void count_call(const tf_cpd_iter *it, void *u) { (void)it, (void)u, ++calls; }

/* 9 straight against 4 + resume to 9, for the update u (NULL: ALS). */
static void cpd_case(const char *name, const tf_tensor *X, const tf_cpd_update *u)
{
    tf_cpd_opts o;
    tf_cpd_opts_default(&o);
    o.rank = 4;
    o.tol = 0.0;
    o.backend = TF_BACKEND_CPU;
    o.update = u;
    tf_ktensor s, p, r, e;
    tf_cpd_report rs, rp, rr, re;
    o.max_iters = 9;
    CHECK_OK(tf_cpd(X, &o, &s, &rs));
    char stem[64];
    snprintf(stem, sizeof stem, "ckpt_%s", name);
    const tf_checkpoint c4 = {tt_path(dir, stem), 3, 0.0, NULL};
    o.max_iters = 4;
    o.checkpoint = &c4;
    CHECK_OK(tf_cpd(X, &o, &p, &rp));
    tf_ktensor k;
    int has_lambda = 0;
    CHECK_OK(tf_ktensor_read(c4.path, &k, &has_lambda));
    CHECKF(has_lambda && k.rank == 4, "%s: the checkpoint reads as a model", name);
    tf_ktensor_free(&k);
    const tf_checkpoint cr = {NULL, 0, 0.0, c4.path};
    o.max_iters = 9;
    o.checkpoint = &cr;
    o.callback = count_call;
    calls = 0;
    CHECK_OK(tf_cpd(X, &o, &r, &rr));
    CHECKF(calls == 5 && rr.iters == 9, "%s: resumed for iterations 5..9 (%d calls, %u)", name, calls, rr.iters);
    CHECKF(rr.fit == rs.fit, "%s: the straight run's fit (%.17g, %.17g)", name, rr.fit, rs.fit);
    CHECKF(same_ktensor(&s, &r), "%s: the straight run's factors and lambda (bits)", name);
    /* a checkpoint of the last iteration: its result, no iteration */
    const tf_checkpoint c9 = {tt_path(dir, "ckpt_end"), 0, 0.0, NULL};
    o.checkpoint = &c9;
    o.callback = NULL;
    tf_ktensor_free(&r);
    CHECK_OK(tf_cpd(X, &o, &r, &rr));
    const tf_checkpoint ce = {NULL, 0, 0.0, c9.path};
    o.checkpoint = &ce;
    o.callback = count_call;
    calls = 0;
    CHECK_OK(tf_cpd(X, &o, &e, &re));
    CHECKF(calls == 0 && re.iters == 9 && re.fit == rs.fit && same_ktensor(&s, &e),
           "%s: resumed at the end: the result, no iteration (%d calls)", name, calls);
    tf_ktensor_free(&s), tf_ktensor_free(&p), tf_ktensor_free(&r), tf_ktensor_free(&e);
}

static void apr_case(const tf_tensor *C)
{
    tf_cp_apr_opts o;
    tf_cp_apr_opts_default(&o);
    o.rank = 3;
    o.stoptol = 0.0;
    o.backend = TF_BACKEND_CPU;
    tf_ktensor s, p, r;
    tf_cp_apr_report rs, rp, rr;
    o.max_iters = 9;
    CHECK_OK(tf_cp_apr(C, &o, &s, &rs));
    const tf_checkpoint c4 = {tt_path(dir, "ckpt_apr"), 0, 0.0, NULL};
    o.max_iters = 4;
    o.checkpoint = &c4;
    CHECK_OK(tf_cp_apr(C, &o, &p, &rp));
    const tf_checkpoint cr = {NULL, 0, 0.0, c4.path};
    o.max_iters = 9;
    o.checkpoint = &cr;
    CHECK_OK(tf_cp_apr(C, &o, &r, &rr));
    CHECKF(rr.loglik == rs.loglik && rr.iters == 9, "apr: the straight run's log-likelihood (%.17g, %.17g)", rr.loglik,
           rs.loglik);
    CHECK(same_ktensor(&s, &r));
    /* another kappa: one line naming it */
    o.kappa = 0.5;
    tf_ktensor f;
    CHECK_FAILS(tf_cp_apr(C, &o, &f, &rr), TF_ERR_ARG, "made with options 'kappa 0.01', this run has 'kappa 0.5'");
    tf_ktensor_free(&s), tf_ktensor_free(&p), tf_ktensor_free(&r);
}

static void tucker_case(const tf_tensor *X)
{
    tf_tucker_opts o;
    tf_tucker_opts_default(&o);
    o.ranks[0] = 3, o.ranks[1] = 4, o.ranks[2] = 2;
    o.tol = 0.0;
    tf_ttensor s, r;
    tf_tucker_report rs, rr;
    o.max_iters = 9;
    CHECK_OK(tf_tucker(X, &o, &s, &rs));
    const tf_checkpoint c4 = {tt_path(dir, "ckpt_tucker"), 0, 0.0, NULL};
    o.max_iters = 4;
    o.checkpoint = &c4;
    CHECK_OK(tf_tucker(X, &o, &r, &rr));
    tf_ttensor_free(&r), tf_tucker_report_free(&rr);
    const tf_checkpoint cr = {NULL, 0, 0.0, c4.path};
    o.max_iters = 9;
    o.checkpoint = &cr;
    CHECK_OK(tf_tucker(X, &o, &r, &rr));
    CHECKF(rr.iters == 9 && rr.fit == rs.fit, "tucker: 9 iterations, the straight fit (%u, %.17g, %.17g)", rr.iters,
           rr.fit, rs.fit);
    for (uint32_t i = 0; i < 9 && rr.iters == 9; ++i)
        CHECKF(rr.iterations[i].fit == rs.iterations[i].fit, "tucker: iteration %u's fit", i + 1);
    CHECK(!memcmp(r.core, s.core, 3 * 4 * 2 * sizeof(double)));
    for (uint32_t m = 0; m < 3; ++m)
        CHECK(!memcmp(r.factors[m].data, s.factors[m].data, X->dims[m] * o.ranks[m] * sizeof(double)));
    tf_ttensor_free(&r), tf_tucker_report_free(&rr);
    /* other ranks */
    o.ranks[2] = 3;
    CHECK_FAILS(tf_tucker(X, &o, &r, &rr), TF_ERR_ARG, "made with ranks '4 2', this run has '4 3'");
    tf_ttensor_free(&s), tf_tucker_report_free(&rs);
}

/* SIGKILL at rename `kill_step` of the commit of checkpoint `kill_commit`. */
static int commits, kill_commit, kill_step;
static void kill_hook(int step)
{
    if (step == 0) ++commits;
    if (commits == kill_commit && step == kill_step) raise(SIGKILL);
}

static int same_file(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int same = fa && fb;
    while (same) {
        const int x = fgetc(fa), y = fgetc(fb);
        same = x == y;
        if (x == EOF || y == EOF) break;
    }
    if (fa) fclose(fa);
    if (fb) fclose(fb);
    return same;
}

/* Files of dir whose names begin with prefix and hold ".tmp." or end in ".lock". */
static int leftovers(const char *prefix)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        if (!strncmp(e->d_name, prefix, strlen(prefix)) &&
            (strstr(e->d_name, ".tmp.") || strstr(e->d_name, ".lock")))
            ++n;
    if (d) closedir(d);
    return n;
}

/* A run killed between the renames of its last checkpoint's switch (the
 * manifest renamed, the files not yet all), then resumed with nothing left
 * to do: the resume finishes the switch, so the files read by name are the
 * last checkpoint's, and leaves no temporary and no lock (it wrote nothing
 * itself; before the fix the plain files stayed one checkpoint behind).
 * Forked first, before the parent has started any OpenMP team. */
static void killed_in_last_switch(void)
{
    tf_cpd_opts o;
    tf_cpd_opts_default(&o);
    o.rank = 4;
    o.tol = 0.0;
    o.threads = 1;
    o.backend = TF_BACKEND_CPU;
    o.max_iters = 5;
    const tf_checkpoint ck = {tt_path(dir, "ckpt_kill"), 1, 0.0, NULL};
    o.checkpoint = &ck;
    const pid_t pid = fork();
    if (pid == 0) {
        tf_tensor X = random_tensor(11, 0, 1.0);
        tf_ktensor k;
        tf_cpd_report rep;
        kill_commit = 5; /* the last iteration's checkpoint */
        kill_step = 2;   /* the manifest and one file renamed */
        tf_out_test_commit_step = kill_hook;
        tf_cpd(&X, &o, &k, &rep);
        _exit(3); /* not killed */
    }
    int st = 0;
    waitpid(pid, &st, 0);
    CHECKF(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "killed in the last switch: the writer died there (%d)", st);
    CHECKF(leftovers("ckpt_kill") > 0, "killed in the last switch: its temporaries and lock are left");
    tf_tensor X = random_tensor(11, 0, 1.0);
    tf_ktensor r, k;
    tf_cpd_report rr, rk;
    const tf_checkpoint ref = {tt_path(dir, "ckpt_killref"), 1, 0.0, NULL};
    o.checkpoint = &ref;
    CHECK_OK(tf_cpd(&X, &o, &r, &rr));
    const tf_checkpoint res = {ck.path, 1, 0.0, ck.path};
    o.checkpoint = &res;
    calls = 0;
    o.callback = count_call;
    CHECK_OK(tf_cpd(&X, &o, &k, &rk));
    CHECKF(calls == 0 && same_ktensor(&r, &k), "killed in the last switch: resumed at the end, no iteration (%d)",
           calls);
    const char *files[] = {"state", "lambda.mat", "mode1.mat", "mode2.mat", "mode3.mat"};
    for (int i = 0; i < 5; ++i) {
        char a[512], b[512];
        snprintf(a, sizeof a, "%s.%s", ck.path, files[i]);
        snprintf(b, sizeof b, "%s.%s", ref.path, files[i]);
        CHECKF(same_file(a, b), "killed in the last switch, resumed: %s is the last checkpoint's", a);
    }
    CHECKF(leftovers("ckpt_kill") == 0, "killed in the last switch, resumed: no temporary or lock left");
    tf_ktensor_free(&r), tf_ktensor_free(&k);
    tf_tensor_free(&X);
}

int main(void)
{
    dir = TF_TEST_TMP;
    killed_in_last_switch();
    tf_tensor X = random_tensor(11, 0, 1.0), C = random_tensor(11, 1, 1.0), big = random_tensor(11, 0, ldexp(1.0, 60));
    cpd_case("als", &X, NULL);
    tf_cpd_update u;
    tf_cpd_update_default(&u);
    u.kind = TF_CPD_UPDATE_AO_ADMM;
    for (uint32_t m = 0; m < 3; ++m) u.mode[m].nonneg = 1;
    u.mode[1].l1 = 0.01;
    cpd_case("admm", &X, &u);
    tf_cpd_update h;
    tf_cpd_update_default(&h);
    h.kind = TF_CPD_UPDATE_HALS;
    for (uint32_t m = 0; m < 3; ++m) h.mode[m].nonneg = 1;
    cpd_case("hals", &X, &h);
    cpd_case("scaled", &big, NULL);
    { /* the scaled run's checkpoint: lambda in the caller's scale (about 2^60, not about 1) */
        tf_ktensor k;
        CHECK_OK(tf_ktensor_read(tt_path(dir, "ckpt_scaled"), &k, NULL));
        CHECKF(k.lambda[0] > ldexp(1.0, 50), "scaled: the checkpoint's lambda %g is in the caller's scale", k.lambda[0]);
        tf_ktensor_free(&k);
    }
    apr_case(&C);
    tucker_case(&X);

    /* mismatches and bad options */
    tf_cpd_opts o;
    tf_cpd_opts_default(&o);
    o.rank = 5;
    o.backend = TF_BACKEND_CPU;
    tf_ktensor k;
    tf_cpd_report rep;
    const tf_checkpoint r_als = {NULL, 0, 0.0, tt_path(dir, "ckpt_als")};
    o.checkpoint = &r_als;
    CHECK_FAILS(tf_cpd(&X, &o, &k, &rep), TF_ERR_ARG, "the checkpoint was made with rank '4', this run has '5'");
    o.rank = 4;
    CHECK_FAILS(tf_cpd(&C, &o, &k, &rep), TF_ERR_ARG, "the checkpoint was made with tensor 'checksum ");
    o.update = &h;
    CHECK_FAILS(tf_cpd(&X, &o, &k, &rep), TF_ERR_ARG, "made with method 'cp-als', this run has 'hals'");
    o.update = NULL;
    const tf_checkpoint none = {NULL, 0, 0.0, tt_path(dir, "ckpt_nothere")};
    o.checkpoint = &none;
    CHECK_FAILS(tf_cpd(&X, &o, &k, &rep), TF_ERR_IO, "ckpt_nothere.mode1.mat");
    const tf_checkpoint neg = {tt_path(dir, "ckpt_neg"), 0, -1.0, NULL};
    o.checkpoint = &neg;
    CHECK_FAILS(tf_cpd(&X, &o, &k, &rep), TF_ERR_ARG, "every_seconds -1 is not a time");
    tf_tensor_free(&X), tf_tensor_free(&C), tf_tensor_free(&big);
    return tf_test_finish("test_checkpoint");
}
