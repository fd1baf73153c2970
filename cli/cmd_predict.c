/* SPDX-License-Identifier: BSD-3-Clause */
/* tenfold predict: a model's values at a list of coordinates (the missing
 * entries a completion predicts). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "outfile.h"
#include "report.h"
#include "verbosity.h"

static const char help[] =
    "usage: tenfold predict MODEL_STEM COORDS -o OUT [options]\n"
    "\n"
    "The values of the CP model MODEL_STEM (a factor set as tenfold complete -o or\n"
    "tenfold cpd -o write it: MODEL_STEM.mode<N>.mat, MODEL_STEM.lambda.mat when\n"
    "present, read through MODEL_STEM.set when there is one) at the coordinates\n"
    "of COORDS, a tensor file of the model's order whose values are not used\n"
    "(read as every tenfold input, but entries of value 0 kept, as tenfold\n"
    "complete keeps them: every listed coordinate, duplicates merged). Writes OUT,\n"
    "a tensor with COORDS' coordinates and the predicted values, with the model's\n"
    "dims (.tns text unless the name ends .bin/.tfb or .mtx), written whole or\n"
    "not at all.\n"
    "\n"
    "  -o, --output OUT     the predictions (required; '-' is standard output)\n"
    CLI_BASE_HELP
    "  -t, --threads N      CPU threads (default: all cores)\n"
    CLI_VERBOSITY_HELP
    "  -h, --help           this help\n"
    CLI_STDIN_HELP;

int cmd_predict(int argc, char **argv)
{
    const char *out = NULL, *threads = NULL, *base = NULL;
    const cli_opt opts[] = {{"output", 'o', &out, NULL}, {"threads", 't', &threads, NULL}, {"base", 0, &base, NULL},
                            CLI_VERBOSITY_OPTS,          {0}};
    cli_args a;
    int rc = cli_parse(&a, "predict", help, argc, argv, opts, 2, 2, "MODEL_STEM COORDS");
    if (rc >= 0) return rc;
    const char *stem = a.pos[0], *coords = a.pos[1];
    int nt = 0;
    if ((rc = cli_threads("predict", threads, &nt))) return rc;
    if (!out) return cli_usage("predict", "missing -o OUT (the file of predicted values)");
    char set[4200];
    snprintf(set, sizeof set, "%s.set", stem);
    const cli_path p[3] = {{"COORDS", coords, 0, 0}, {"the model", set, 0, 0}, {"-o", out, 1, 0}};
    if ((rc = cli_paths_distinct("predict", p, 3))) return rc;
    const char *outs[1] = {out};
    if ((rc = cli_outputs_check(outs, 1))) return rc;
    tf_ktensor K;
    tf_tensor C;
    tf_read_info info;
    memset(&K, 0, sizeof K);
    memset(&C, 0, sizeof C);
    double *vals = NULL;
    if (tf_ktensor_read(stem, &K, NULL) != TF_OK) {
        rc = cli_fail();
        goto done;
    }
    if ((rc = cli_load_observed("predict", coords, nt, base, &C, &info))) goto done;
    if (C.order != K.order) {
        fprintf(stderr, "tenfold: predict: %s has %u modes, the model %s %u\n", cli_input_name(coords), C.order, stem,
                K.order);
        rc = CLI_FAIL;
        goto done;
    }
    vals = malloc((C.nnz ? C.nnz : 1) * sizeof *vals);
    if (!vals) {
        fprintf(stderr, "tenfold: predict: out of memory for %llu values\n", (unsigned long long)C.nnz);
        rc = CLI_FAIL;
        goto done;
    }
    if (tf_complete_predict(&C, &K, nt, vals) != TF_OK) {
        fprintf(stderr, "tenfold: predict: %s: %s\n", cli_input_name(coords), tf_last_error());
        rc = CLI_FAIL;
        goto done;
    }
    memcpy(C.vals, vals, C.nnz * sizeof *vals);
    memcpy(C.dims, K.dims, sizeof C.dims);
    if (tf_write_tensor(outs[0], &C, TF_FILE_AUTO) != TF_OK) {
        rc = cli_fail();
        goto done;
    }
    if (!cli_quiet())
        printf("predict: %llu value%s of the rank-%llu model %s at the coordinates of %s\nwrote: %s\n",
               (unsigned long long)C.nnz, cli_s(C.nnz), (unsigned long long)K.rank, stem, cli_input_name(coords),
               out);
done:
    free(vals);
    tf_tensor_free(&C);
    tf_ktensor_free(&K);
    return rc;
}
