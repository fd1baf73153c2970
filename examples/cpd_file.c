/* SPDX-License-Identifier: BSD-3-Clause */
/* CP-ALS of a tensor file: cpd_file TENSOR RANK
 * Reads any format tenfold reads (.tns, .bin, .mtx, xz / gzip), runs CP-ALS
 * in one run context (a GPU when there is one, else the CPU) and prints the
 * fit and the largest weights. */
#include <stdio.h>
#include <stdlib.h>

#include <tenfold.h>

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s TENSOR RANK\n", argv[0]);
        return 2;
    }
    tf_tensor X;
    tf_context *ctx = NULL;
    tf_ktensor K;
    tf_cpd_report rep;
    if (tf_read_tensor(argv[1], 0, &X, NULL) != TF_OK || tf_context_create(NULL, &ctx) != TF_OK) {
        fprintf(stderr, "cpd_file: %s\n", tf_last_error());
        return 1;
    }
    tf_cpd_opts o;
    tf_cpd_opts_default(&o);
    o.rank = strtoull(argv[2], NULL, 10);
    o.context = ctx;
    const tf_status s = tf_cpd(&X, &o, &K, &rep);
    if (s != TF_OK) {
        fprintf(stderr, "cpd_file: %s\n", tf_last_error());
    } else {
        printf("tenfold %s: fit %.6g after %u iteration%s on %s\n", tf_version(), rep.fit, rep.iters,
               rep.iters == 1 ? "" : "s", rep.plan);
        for (uint64_t r = 0; r < K.rank && r < 3; ++r) printf("  lambda[%llu] = %g\n", (unsigned long long)r, K.lambda[r]);
        tf_ktensor_free(&K);
    }
    tf_context_free(ctx);
    tf_tensor_free(&X);
    return s == TF_OK ? 0 : 1;
}
