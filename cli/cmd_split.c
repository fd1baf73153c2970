/* SPDX-License-Identifier: BSD-3-Clause */
/* tenfold split: one tensor's entries into training, validation and test
 * files at random (completion's held-out sets). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "commands.h"
#include "outfile.h"
#include "report.h"
#include "verbosity.h"

static const char help[] =
    "usage: tenfold split FILE -o STEM [--fractions F1,F2,F3] [--seed S]\n"
    "\n"
    "Splits the entries of FILE at random into STEM.train.tns, STEM.val.tns and\n"
    "STEM.test.tns (the held-out sets of tenfold complete): a permutation of the\n"
    "entries drawn from the seed, its first round(F1 nnz) entries to training,\n"
    "the next round(F2 nnz) to validation, the rest to test, each file in FILE's\n"
    "entry order, plain FROSTT text (SPLATT reads it too). Where no training\n"
    "entry has a mode's last index, its first entry moves to training, so the\n"
    "training file has FILE's dims. The same file and seed give the same split\n"
    "on every machine. Entries of value 0 are kept (an observed 0 is data for\n"
    "tenfold complete, which keeps them too); the summary says how many.\n"
    "\n"
    "  -o, --stem STEM      the output stem (required)\n"
    "      --fractions F1,F2,F3  the shares of training, validation and test\n"
    "                       entries, each in [0, 1], summing to 1 (default\n"
    "                       0.8,0.1,0.1)\n"
    "      --seed S         the seed of the permutation (default 20240601)\n"
    CLI_BASE_HELP
    CLI_VERBOSITY_HELP
    "  -h, --help           this help\n"
    CLI_STDIN_HELP;

/* splitmix64: the permutation's stream. */
static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [0, n), n >= 1, without bias (rejection). */
static uint64_t below(uint64_t *s, uint64_t n)
{
    const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do x = next(s);
    while (x >= limit);
    return x % n;
}

/* part[k] in {0, 1, 2} for every entry. */
static int assign(uint64_t nnz, const double *f, uint64_t seed, unsigned char *part)
{
    uint64_t *perm = malloc((nnz ? nnz : 1) * sizeof *perm);
    if (!perm) return CLI_FAIL;
    for (uint64_t k = 0; k < nnz; ++k) perm[k] = k;
    uint64_t s = seed;
    for (uint64_t k = nnz; k > 1; --k) {
        const uint64_t j = below(&s, k);
        const uint64_t t = perm[k - 1];
        perm[k - 1] = perm[j];
        perm[j] = t;
    }
    const uint64_t n0 = (uint64_t)((double)nnz * f[0] + 0.5);
    uint64_t n1 = (uint64_t)((double)nnz * f[1] + 0.5);
    if (n0 + n1 > nnz) n1 = nnz - n0;
    for (uint64_t k = 0; k < nnz; ++k) part[perm[k]] = k < n0 ? 0 : k < n0 + n1 ? 1 : 2;
    free(perm);
    return CLI_OK;
}

/* Every mode's last index in the training file (plain FROSTT files keep no
 * dims: the training file's are then FILE's, as SPLATT reads them): where
 * no training entry has it, its first entry goes to training. */
static void cover_dims(const tf_tensor *X, unsigned char *part)
{
    for (uint32_t m = 0; m < X->order; ++m) {
        const uint32_t last = (uint32_t)(X->dims[m] - 1);
        uint64_t first = UINT64_MAX;
        int covered = 0;
        for (uint64_t k = 0; k < X->nnz && !covered; ++k) {
            if (X->ind[m][k] != last) continue;
            if (part[k] == 0) covered = 1;
            else if (first == UINT64_MAX) first = k;
        }
        if (!covered && first != UINT64_MAX) part[first] = 0;
    }
}

/* The entries of X with part p, in X's order, with X's dims. */
static tf_status take(const tf_tensor *X, const unsigned char *part, unsigned char p, tf_tensor *out)
{
    uint64_t n = 0;
    for (uint64_t k = 0; k < X->nnz; ++k) n += part[k] == p;
    const tf_status st = tf_tensor_alloc(out, X->order, X->dims, n);
    if (st != TF_OK) return st;
    uint64_t at = 0;
    for (uint64_t k = 0; k < X->nnz; ++k) {
        if (part[k] != p) continue;
        for (uint32_t m = 0; m < X->order; ++m) out->ind[m][at] = X->ind[m][k];
        out->vals[at++] = X->vals[k];
    }
    return TF_OK;
}

int cmd_split(int argc, char **argv)
{
    const char *stem = NULL, *fractions = NULL, *seed = NULL, *base = NULL;
    const cli_opt opts[] = {{"stem", 'o', &stem, NULL},   {"fractions", 0, &fractions, NULL},
                            {"seed", 0, &seed, NULL},     {"base", 0, &base, NULL},
                            CLI_VERBOSITY_OPTS,           {0}};
    cli_args a;
    int rc = cli_parse(&a, "split", help, argc, argv, opts, 1, 1, "FILE");
    if (rc >= 0) return rc;
    double f[3] = {0.8, 0.1, 0.1};
    int nf = 3;
    uint64_t s = TF_DEFAULT_SEED;
    if ((fractions && (rc = cli_double_list("split", "--fractions", fractions, 0.0, 1.0, 0, f, 3, &nf))) ||
        (rc = cli_u64("split", "--seed", seed, 0, UINT64_MAX, &s)))
        return rc;
    if (nf != 3) return cli_usage("split", "--fractions: expected three shares F1,F2,F3, got %d", nf);
    const double sum = f[0] + f[1] + f[2];
    if (sum < 1.0 - 1e-9 || sum > 1.0 + 1e-9)
        return cli_usage("split", "--fractions: the shares sum to %g, expected 1", sum);
    if (!stem || !*stem || !strcmp(stem, "-")) return cli_usage("split", "missing -o STEM (the output stem)");
    static const char *const suffix[3] = {"train", "val", "test"};
    char names[3][4200];
    cli_path p[4];
    p[0] = (cli_path){"the input", a.pos[0], 0, 0};
    for (int i = 0; i < 3; ++i) {
        snprintf(names[i], sizeof names[i], "%s.%s.tns", stem, suffix[i]);
        p[i + 1] = (cli_path){"an output", names[i], 1, 0};
    }
    if ((rc = cli_paths_distinct("split", p, 4))) return rc;
    const char *outs[3] = {names[0], names[1], names[2]};
    if ((rc = cli_outputs_check(outs, 3))) return rc;
    tf_tensor X, part[3];
    tf_read_info info;
    memset(&X, 0, sizeof X);
    memset(part, 0, sizeof part);
    unsigned char *label = NULL;
    if ((rc = cli_load_observed("split", a.pos[0], 0, base, &X, &info))) goto done;
    label = malloc(X.nnz ? X.nnz : 1);
    if (!label || assign(X.nnz, f, s, label)) {
        fprintf(stderr, "tenfold: split: out of memory for %llu entries\n", (unsigned long long)X.nnz);
        rc = CLI_FAIL;
        goto done;
    }
    cover_dims(&X, label);
    for (int i = 0; i < 3; ++i)
        if (take(&X, label, (unsigned char)i, &part[i]) != TF_OK) {
            rc = cli_fail();
            goto done;
        }
    /* the three as one set: each written beside its name first, then all
     * renamed; a failed write removes what the others wrote and keeps any
     * earlier files of those names whole */
    char tmp[3][4240];
    for (int i = 0; i < 3; ++i) snprintf(tmp[i], sizeof tmp[i], "%.4200s.tmp.%ld", names[i], (long)getpid());
    for (int i = 0; i < 3; ++i)
        if (tf_write_tensor(tmp[i], &part[i], TF_FILE_TNS) != TF_OK) {
            rc = cli_fail();
            for (int j = 0; j <= i; ++j) unlink(tmp[j]);
            goto done;
        }
    for (int i = 0; i < 3; ++i)
        if (rename(tmp[i], names[i]) != 0) {
            fprintf(stderr, "tenfold: split: %s: cannot rename %s into place: %s\n", names[i], tmp[i],
                    strerror(errno));
            rc = CLI_FAIL;
            for (int j = i; j < 3; ++j) unlink(tmp[j]);
            goto done;
        }
    char zeros[32] = "";
    if (info.zeros_kept) snprintf(zeros, sizeof zeros, "%llu", (unsigned long long)info.zeros_kept);
    if (!cli_quiet())
        printf("split: %llu entries of %s (seed %llu%s%s): %llu training, %llu validation, %llu test\nwrote: %s, %s, "
               "%s\n",
               (unsigned long long)X.nnz, cli_input_name(a.pos[0]), (unsigned long long)s,
               info.zeros_kept ? "; of value 0, kept: " : "", zeros,
               (unsigned long long)part[0].nnz, (unsigned long long)part[1].nnz, (unsigned long long)part[2].nnz,
               names[0], names[1], names[2]);
done:
    free(label);
    for (int i = 0; i < 3; ++i) tf_tensor_free(&part[i]);
    tf_tensor_free(&X);
    return rc;
}
