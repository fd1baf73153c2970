/* SPDX-License-Identifier: BSD-3-Clause */
/* tenfold gen: synthetic sparse tensors. */
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "gen_spec.h"
#include "outfile.h"
#include "report.h"
#include "run_context.h"
#include "verbosity.h"

static const char help[] =
    "usage: tenfold gen -o OUT --dims D1,D2,... --nnz N [options]\n"
    "\n"
    "Generates a sparse tensor with exactly N distinct non-zeros. The index of\n"
    "mode d is perm_d[floor(d * u^(1/(1-alpha)))], u uniform in [0,1) and perm_d a\n"
    "fixed random permutation of 0..d-1, so alpha = 0 is uniform and alpha -> 1\n"
    "concentrates the non-zeros on few (scattered) slices. Duplicate coordinates\n"
    "are rejected and drawn again. The same options and seed give the same file,\n"
    "whatever the thread count. Prints the time, the rate (non-zeros/s) and the\n"
    "equivalent --gen SPEC, which makes the same tensor in memory for cpd, bench\n"
    "mttkrp, mttkrp, ttm, sddmm, stats, check and convert without a file.\n"
    "On P MPI ranks (mpirun -np P tenfold gen ...) each rank generates only its\n"
    "part of the non-zeros, [N r/P, N (r+1)/P) of the canonical order (as cpd\n"
    "--gen on ranks does), and writes it to OUT with .partR before the extension\n"
    "(out.bin: out.part0.bin, out.part1.bin, ...).\n"
    "\n"
    "  -o, --output OUT     file to write: tenfold binary if OUT ends in .bin or\n"
    "                       .tfb (fast), Matrix Market if .mtx, else FROSTT .tns;\n"
    "                       '-' is standard output (.tns; the report goes to stderr)\n"
    "      --dims LIST      mode lengths, e.g. 2000000,1000000,200000 (order 2..16)\n"
    "      --nnz N          number of non-zeros (20000000, 20M or 2e7)\n"
    "      --alpha A        power-law skew in [0, 1) for every mode, or one value\n"
    "                       per mode (A1,A2,...); default 0 (uniform)\n"
    "      --seed S         random seed (default 20240601)\n"
    "      --rank R         values from a planted rank-R model: factors uniform in\n"
    "                       [0,1), value = sum_r prod_n A_n(i_n,r); default 0 =\n"
    "                       values uniform in (0,1]\n"
    "      --noise E        add E * rms(values) * N(0,1) to the planted values\n"
    "      --counts C       integer counts of mean C >= 1 instead (for cpd --method\n"
    "                       apr): 1 + Poisson(C - 1), or with --rank 1 + Poisson((C -\n"
    "                       1) m / mean(m)), m the planted model's value there\n"
    "  -t, --threads N      CPU threads (default: all cores, or OMP_NUM_THREADS;\n"
    "                       MPI ranks that share a host's cores split them)\n"
    "  -q, --quiet          print nothing but errors\n"
    "  -v, --verbose        also the rates of generating and writing\n"
    "  -h, --help           this help\n"
    "\n"
    "example: tenfold gen -o skew.bin --dims 2000000,1000000,200000 --nnz 20M --alpha 0.7\n";

/* OUT with ".partR" before its extension (or at its end). */
static const char *part_name(char *buf, size_t len, const char *out, int rank)
{
    const char *slash = strrchr(out, '/'), *dot = strrchr(out, '.');
    if (!dot || (slash && dot < slash) || dot == out || (slash && dot == slash + 1)) dot = out + strlen(out);
    snprintf(buf, len, "%.*s.part%d%s", (int)(dot - out), out, rank, dot);
    return buf;
}

static int gen_run(int argc, char **argv, int prank, int psize);

int cmd_gen(int argc, char **argv)
{
    int rank = 0, size = 1;
    int rc = cli_ranks_start(&argc, &argv, &rank, &size);
    if (rc) return rc;
    return cli_ranks_end(gen_run(argc, argv, rank, size), size);
}

static int gen_run(int argc, char **argv, int prank, int psize)
{
    const char *out = NULL, *dims = NULL, *nnz = NULL, *alpha = NULL, *seed = NULL, *rank = NULL,
               *noise = NULL, *threads = NULL, *counts = NULL;
    const cli_opt opts[] = {
        {"output", 'o', &out, NULL}, {"dims", 0, &dims, NULL},   {"nnz", 0, &nnz, NULL},
        {"alpha", 0, &alpha, NULL},  {"seed", 0, &seed, NULL},   {"rank", 0, &rank, NULL},
        {"noise", 0, &noise, NULL},  {"threads", 't', &threads, NULL}, {"counts", 0, &counts, NULL},
        CLI_VERBOSITY_OPTS, {0}};
    cli_args a;
    int rc = cli_parse(&a, "gen", help, argc, argv, opts, 0, 0, "");
    if (rc >= 0) return rc;
    if (!out) return cli_usage("gen", "missing -o OUT");
    if (!dims) return cli_usage("gen", "missing --dims D1,D2,...");
    if (!nnz) return cli_usage("gen", "missing --nnz N");

    tf_gen_opts o = {0};
    o.seed = TF_DEFAULT_SEED;
    int order = 0, nalpha = 0;
    double alphas[TF_MAX_ORDER] = {0};
    if ((rc = cli_u64_list("gen", "--dims", dims, 1, 1ULL << 32, o.dims, TF_MAX_ORDER, &order))) return rc;
    if (order < TF_MIN_ORDER)
        return cli_usage("gen", "--dims: expected %d to %d mode lengths, got %d", TF_MIN_ORDER,
                         TF_MAX_ORDER, order);
    o.order = (uint32_t)order;
    if ((rc = cli_u64("gen", "--nnz", nnz, 1, UINT64_MAX, &o.nnz))) return rc;
    if (alpha && (rc = cli_double_list("gen", "--alpha", alpha, 0.0, 1.0, 1, alphas, TF_MAX_ORDER, &nalpha)))
        return rc;
    if (alpha && nalpha != 1 && nalpha != order)
        return cli_usage("gen", "--alpha: expected 1 or %d values (one per mode), got %d", order, nalpha);
    for (int m = 0; m < order; ++m) o.alpha[m] = nalpha == 1 ? alphas[0] : alphas[m];
    if ((rc = cli_u64("gen", "--seed", seed, 0, UINT64_MAX, &o.seed))) return rc;
    if ((rc = cli_u64("gen", "--rank", rank, 0, 1000000, &o.rank))) return rc;
    if ((rc = cli_double("gen", "--noise", noise, 0.0, 1e6, &o.noise))) return rc;
    if (o.noise > 0 && o.rank == 0) return cli_usage("gen", "--noise needs a planted model (--rank R)");
    if ((rc = cli_double("gen", "--counts", counts, 1.0, 1e12, &o.counts))) return rc;
    if (o.counts > 0 && o.noise > 0) return cli_usage("gen", "--counts: not with --noise (the counts are Poisson draws)");
    if ((rc = cli_threads("gen", threads, &o.threads))) return rc;

    char partbuf[4096], spec[1024];
    if (psize > 1) { /* the ranks agree on what they generate, then each writes its part */
        if (!strcmp(out, "-")) return cli_alike(cli_usage("gen", "-o -: on %d ranks, each writes a file", psize));
        tf_agree a;
        memset(&a, 0, sizeof a);
        tf_agree_add(&a, "command", "gen");
        tf_agree_add(&a, "generated", cli_gen_format(spec, sizeof spec, &o));
        if ((rc = cli_ranks_agree(&a, psize))) return rc;
        out = part_name(partbuf, sizeof partbuf, out, prank);
    }
    if ((rc = cli_outputs_check(&out, 1))) return rc; /* before generating */
    tf_tensor t = {0};
    tf_gen_info gi;
    double t0 = tf_wtime();
    if (tf_generate_part(&o, (uint64_t)prank, (uint64_t)psize, &t, &gi) != TF_OK) return cli_fail();
    double t1 = tf_wtime();
    if (tf_write_tensor(out, &t, TF_FILE_AUTO) != TF_OK) {
        tf_tensor_free(&t);
        return cli_fail();
    }
    double t2 = tf_wtime();
    char d[TF_MAX_ORDER * 24], mem[32], peak[32];
    tf_tensor whole = t;
    whole.nnz = o.nnz;
    if (!cli_quiet()) {
        printf("generated: order %u, dims %s, nnz %llu, density %.3e, seed %llu in %.3f s (%.1f M non-zeros/s)\n",
               t.order, cli_dims(d, sizeof d, t.order, t.dims), (unsigned long long)o.nnz, cli_density(&whole),
               (unsigned long long)o.seed, t1 - t0, t1 > t0 ? (double)o.nnz / (t1 - t0) / 1e6 : 0.0);
        if (psize > 1)
            printf("part:      rank %d of %d holds non-zeros %llu..%llu; generator peak host %s\n", prank, psize,
                   (unsigned long long)gi.first, (unsigned long long)(gi.first + t.nnz),
                   cli_bytes(peak, sizeof peak, (double)gi.peak_bytes));
        printf("skew:      alpha");
        for (int m = 0; m < order; ++m) printf("%s%g", m ? "," : " ", o.alpha[m]);
        if (o.counts > 0) printf("; counts of mean %g%s", o.counts, o.rank ? " around a planted model" : "");
        if (o.rank) printf("; planted rank %llu, noise %g", (unsigned long long)o.rank, o.noise);
        else if (o.counts == 0) printf("; values uniform in (0,1]");
        printf("\nas --gen:  %s\n", cli_gen_format(spec, sizeof spec, &o));
        printf("wrote:     %s (COO %s in memory) in %.3f s\n", out,
               cli_bytes(mem, sizeof mem, (double)tf_tensor_bytes(&t)), t2 - t1);
    }
    if (cli_verbose() && psize == 1)
        printf("memory:    generator peak host %s\n", cli_bytes(peak, sizeof peak, (double)gi.peak_bytes));
    if (cli_verbose())
        printf("rates:     %.3g non-zeros/s generated, %.3g non-zeros/s written\n",
               t1 > t0 ? (double)t.nnz / (t1 - t0) : 0.0, t2 > t1 ? (double)t.nnz / (t2 - t1) : 0.0);
    tf_tensor_free(&t);
    return 0;
}
