/* SPDX-License-Identifier: BSD-3-Clause */
/* tenfold check: validate a tensor file and report what was fixed. */
#include <stdio.h>
#include <stdlib.h>

#include "args.h"
#include "commands.h"
#include "outfile.h"
#include "dims_note.h"
#include "report.h"
#include "verbosity.h"

static const char help[] =
    "usage: tenfold check FILE|--gen SPEC [--fix OUT] [--base auto|0|1] [-t THREADS] [-q|-v]\n"
    "\n"
    "Reads FILE and reports what tenfold had to fix or noticed: duplicate\n"
    "coordinates (summed), explicit zeros (dropped), the index base (one per\n"
    "file: 0-based if any index is 0, or as --base says) and empty slices.\n"
    "Exit status 0 when the file is valid (warnings are fine), 1 with a\n"
    "one-line message naming file:line:field when it is not.\n"
    "\n"
    "      --fix OUT        also write the canonical tensor to OUT (format by\n"
    "                       extension: .bin/.tfb binary, .mtx Matrix Market, else\n"
    "                       .tns -- with the ParTI dims header when plain .tns\n"
    "                       would shrink a mode; written atomically; '-' is\n"
    "                       standard output, then the report goes to stderr)\n"
    CLI_BASE_HELP
    CLI_GEN_HELP
    "  -t, --threads N      threads for reading (default: all cores)\n"
    CLI_VERBOSITY_HELP
    "                       (-q: only the warning lines; the exit status says\n"
    "                       whether the file is valid)\n"
    "  -h, --help           this help\n"
    CLI_STDIN_HELP
    CLI_PROGRESS_HELP;

/* Prints one note per mode with empty slices; 1 if out of memory. */
static int report_empty_slices(const tf_tensor *t)
{
    for (uint32_t m = 0; m < t->order; ++m) {
        uint64_t nonempty = 0;
        uint64_t *cnt = cli_slice_counts(t, m, &nonempty);
        if (!cnt) return CLI_FAIL;
        const uint64_t empty = t->dims[m] - nonempty;
        free(cnt);
        if (!empty) continue;
        printf("note:    mode %u has %llu empty slice%s of %llu (their factor rows will be zero)\n", m + 1,
               (unsigned long long)empty, cli_s(empty), (unsigned long long)t->dims[m]);
    }
    return CLI_OK;
}

int cmd_check(int argc, char **argv)
{
    const char *fix = NULL, *threads = NULL;
    const char *base = NULL;
    const cli_opt opts[] = {{"fix", 0, &fix, NULL}, {"threads", 't', &threads, NULL}, {"base", 0, &base, NULL},
                          CLI_VERBOSITY_OPTS, CLI_GEN_OPT, {0}};
    cli_args a;
    int rc = cli_parse(&a, "check", help, argc, argv, opts, 1, 1, "FILE");
    if (rc >= 0) return rc;
    int nthreads = 0;
    if ((rc = cli_threads("check", threads, &nthreads))) return rc;
    const cli_path paths[] = {{"the input", cli_generated(a.pos[0]) ? NULL : a.pos[0], 0, 0}, {"--fix", fix, 1, 0}};
    if ((rc = cli_paths_distinct("check", paths, 2))) return rc;
    if ((rc = cli_outputs_check(&fix, 1))) return rc; /* before reading FILE */

    tf_tensor t;
    tf_read_info info;
    if ((rc = cli_load_base("check", a.pos[0], nthreads, base, &t, &info))) return rc;
    const int say = !cli_quiet();
    if (say) {
        cli_print_problem(stdout, a.pos[0], &t, &info);
        if (!cli_generated(a.pos[0]))
            printf("entries: %llu read from %llu line%s, %s\n", (unsigned long long)info.entries,
                   (unsigned long long)info.lines, cli_s(info.lines),
                   info.declared_dims ? "dims declared by a header" : "dims inferred from the largest indices");
    }
    if (cli_verbose()) cli_print_read(stdout, &info);
    int warnings = 0;
    if (info.duplicates) {
        ++warnings;
        printf("warning: %llu duplicate coordinate%s (values summed)\n", (unsigned long long)info.duplicates,
               cli_s(info.duplicates));
    }
    if (info.zeros) {
        ++warnings;
        printf("warning: %llu explicit zero%s dropped (including sums of duplicates that cancel)\n",
               (unsigned long long)info.zeros, cli_s(info.zeros));
    }
    if (say && info.base_source == TF_BASE_DETECTED && info.index_base == 0)
        printf("note:    the file is 0-based (an index is 0), every mode is read 0-based\n");
    else if (say && info.base_source == TF_BASE_OPTION)
        printf("note:    the file is read %d-based (--base %d)\n", info.index_base, info.index_base);
    if (say && info.mtx_symmetric) printf("note:    symmetric Matrix Market file expanded to both triangles\n");
    if (say && info.mtx_pattern) printf("note:    pattern Matrix Market file: values set to 1\n");
    if (t.nnz == 0) {
        ++warnings;
        printf("warning: the tensor has no non-zeros\n");
    }
    if (say && report_empty_slices(&t)) {
        tf_tensor_free(&t);
        return CLI_FAIL;
    }
    if (say) printf("valid:   yes (%d warning%s)\n", warnings, cli_s((uint64_t)warnings));
    if (fix) {
        if (tf_write_tensor(fix, &t, TF_FILE_AUTO) != TF_OK) {
            tf_tensor_free(&t);
            return cli_fail();
        }
        cli_note_tns_dims(fix, &t, TF_FILE_AUTO);
        if (say) printf("fixed:   wrote the canonical tensor to %s\n", fix);
    }
    tf_tensor_free(&t);
    return 0;
}
