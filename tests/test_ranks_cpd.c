/* SPDX-License-Identifier: BSD-3-Clause */
/* CP-ALS on CPU ranks through the C API (src/front/cpd.c, cpu/cpd_cpu.c):
 * every rank holding the whole tensor (distributed_input 0: each cuts its
 * shards itself) and every rank holding its part (distributed_input 1: the
 * shards gathered by tf_partition_exchange) give one process's fits and
 * factors, with the formats the ranks run (auto, coo, csf-short), on a
 * tensor whose mode is shorter than the ranks (a rank without rows there)
 * and a skewed one, cut by the auto schedule and longest-first. Each rank's shard counts its rows from
 * its first (the plans span its rows alone). Run plainly it starts itself on
 * 3 ranks (mpirun); skipped (77) without MPI in the build or without
 * mpirun. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/environment.h"
#include "mpi_self.h"
#include "tenfold.h"

/* The largest |a - b| over a's factors and lambda, over the largest |a|. */
static double factor_diff(const tf_ktensor *a, const tf_ktensor *b)
{
    double d = 0.0, top = 0.0;
    for (uint32_t m = 0; m < a->order; ++m)
        for (uint64_t e = 0; e < a->factors[m].rows * a->factors[m].cols; ++e) {
            d = fmax(d, fabs(a->factors[m].data[e] - b->factors[m].data[e]));
            top = fmax(top, fabs(a->factors[m].data[e]));
        }
    for (uint64_t r = 0; r < a->rank; ++r) /* lambda relative to itself */
        d = fmax(d, fabs(a->lambda[r] - b->lambda[r]) / fmax(fabs(a->lambda[r]), 1e-300) * top);
    return top > 0 ? d / top : d;
}

static tf_status run(const tf_tensor *X, tf_context *c, int part, tf_format format, tf_ktensor *out,
                     tf_cpd_report *rep)
{
    tf_cpd_opts o;
    tf_cpd_opts_default(&o);
    o.rank = 4;
    o.max_iters = 6;
    o.tol = 0;
    o.seed = 7;
    o.threads = 1;
    o.backend = TF_BACKEND_CPU;
    o.format = format;
    o.context = c;
    o.distributed_input = part;
    return tf_cpd(X, &o, out, rep);
}

/* One tensor: one process's run against the ranks' with X whole and in parts. */
static void check_case(tf_context *dist, int rank, int size, const tf_gen_opts *g, const char *what)
{
    tf_tensor X, mine;
    CHECK_OK(tf_generate(g, &X));
    CHECK_OK(tf_generate(g, &mine));
    CHECK_OK(tf_tensor_keep_part(&mine, (uint64_t)rank, (uint64_t)size));
    const tf_format formats[] = {TF_FORMAT_AUTO, TF_FORMAT_COO, TF_FORMAT_CSF_SHORT};
    for (size_t f = 0; f < sizeof formats / sizeof formats[0]; ++f) {
        tf_ktensor one, whole, parts;
        tf_cpd_report r1, rw, rp;
        memset(&one, 0, sizeof one), memset(&whole, 0, sizeof whole), memset(&parts, 0, sizeof parts);
        CHECK_OK(run(&X, NULL, 0, formats[f], &one, &r1));
        CHECK_OK(run(&X, dist, 0, formats[f], &whole, &rw));
        CHECK_OK(run(&mine, dist, 1, formats[f], &parts, &rp));
        CHECKF(rw.parts == size && rp.parts == size, "%s, format %d: %d and %d parts", what, (int)formats[f], rw.parts,
               rp.parts);
        CHECKF(fabs(rw.fit - r1.fit) <= 1e-12 * fabs(r1.fit) && fabs(rp.fit - r1.fit) <= 1e-12 * fabs(r1.fit),
               "rank %d, %s, format %d: fits %.17g (whole) %.17g (parts) against one process's %.17g", rank, what,
               (int)formats[f], rw.fit, rp.fit, r1.fit);
        const double dw = factor_diff(&one, &whole), dp = factor_diff(&one, &parts);
        CHECKF(dw <= 1e-10 && dp <= 1e-10, "rank %d, %s, format %d: factors differ by %.3g (whole) %.3g (parts)", rank,
               what, (int)formats[f], dw, dp);
        tf_ktensor_free(&one);
        tf_ktensor_free(&whole);
        tf_ktensor_free(&parts);
    }
    tf_tensor_free(&X);
    tf_tensor_free(&mine);
}

static int on_ranks(int argc, char **argv)
{
    int rank = 0, size = 1;
    CHECK_OK(tf_mpi_start(&argc, &argv, &rank, &size));
    if (size != 3) {
        tf_mpi_stop();
        return tf_test_skip("test_ranks_cpd", "needs 3 ranks");
    }
    tf_tuning tune;
    tf_tuning_default(&tune);
    for (int lf = 0; lf < 2; ++lf) { /* the auto schedule, then every mode longest-first (relabeled) */
        tune.partition = lf ? TF_PARTITION_LONGEST_FIRST : TF_PARTITION_AUTO;
        tf_context_opts co;
        tf_context_opts_default(&co);
        co.distributed = 1;
        co.backend = TF_BACKEND_CPU;
        co.tuning = &tune;
        tf_context *dist = NULL;
        CHECK_OK(tf_context_create(&co, &dist));
        if (!dist) continue;
        tf_gen_opts g;
        memset(&g, 0, sizeof g);
        g.order = 3;
        g.dims[0] = 40, g.dims[1] = 2, g.dims[2] = 30; /* mode 2: one rank owns none of its rows */
        g.nnz = 1500;
        g.alpha[0] = g.alpha[2] = 0.5;
        g.seed = 11;
        g.rank = 3;
        check_case(dist, rank, size, &g, lf ? "a mode shorter than the ranks, longest-first"
                                            : "a mode shorter than the ranks");
        g.dims[0] = 300, g.dims[1] = 200, g.dims[2] = 100;
        g.nnz = 20000;
        g.alpha[0] = g.alpha[1] = g.alpha[2] = 0.9;
        g.seed = 12;
        g.noise = 0.1;
        check_case(dist, rank, size, &g, lf ? "skewed, longest-first" : "skewed");
        tf_context_free(dist);
    }
    char name[64];
    snprintf(name, sizeof name, "test_ranks_cpd (rank %d)", rank);
    const int rc = tf_test_finish(name);
    tf_mpi_stop();
    return rc;
}

int main(int argc, char **argv)
{
    if (tf_env_launcher_ranks() > 0) return on_ranks(argc, argv);
    return tf_test_mpi_self("test_ranks_cpd", argv[0], 3, 300);
}
