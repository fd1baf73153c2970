/* SPDX-License-Identifier: BSD-3-Clause */
/* tenfold convert: tensor file format conversion. */
#include <stdio.h>

#include "args.h"
#include "commands.h"
#include "outfile.h"
#include "dims_note.h"
#include "report.h"
#include "verbosity.h"

static const char help[] =
    "usage: tenfold convert IN|--gen SPEC OUT [--to FORMAT] [--base auto|0|1] [-t THREADS] [-q|-v]\n"
    "\n"
    "Reads IN (any supported format, detected by content; .xz/.gz are read\n"
    "directly) and writes the canonical tensor (sorted, duplicates summed,\n"
    "zeros dropped, 1-based indices in text formats) to OUT. OUT is written\n"
    "to a temporary file and renamed, so a failed run leaves no OUT behind;\n"
    "OUT '-' is standard output (tns unless --to says otherwise; progress then\n"
    "goes to stderr), a symlink's target is replaced, a FIFO or device is\n"
    "written directly. OUT is checked before IN is read; OUT naming IN (also\n"
    "through a link) is a usage error.\n"
    "\n"
    "      --to FORMAT      tns         FROSTT text, no header (records no dims:\n"
    "                                   read back, a mode is as long as its\n"
    "                                   largest index; a warning says when\n"
    "                                   that shrinks a mode)\n"
    "                       tns-header  ParTI: order line + dims line, then FROSTT\n"
    "                       sptensor    Tensor Toolbox / pyttb export_data\n"
    "                       bin         tenfold binary (versioned header, checksum)\n"
    "                       mtx         Matrix Market coordinate (order 2 only)\n"
    "                       default: by OUT's extension (.bin/.tfb -> bin,\n"
    "                       .mtx -> mtx, anything else -> tns, or tns-header\n"
    "                       when plain tns would shrink a mode; a note says so)\n"
    CLI_BASE_HELP
    CLI_GEN_HELP
    "  -t, --threads N      threads for reading (default: all cores)\n"
    CLI_VERBOSITY_HELP
    "  -h, --help           this help\n"
    CLI_STDIN_HELP
    CLI_PROGRESS_HELP;

static const char *const format_names[] = {"tns", "tns-header", "sptensor", "bin", "mtx"};
static const tf_file_format format_values[] = {TF_FILE_TNS, TF_FILE_TNS_HEADER, TF_FILE_SPTENSOR,
                                               TF_FILE_BIN, TF_FILE_MTX};

int cmd_convert(int argc, char **argv)
{
    const char *to = NULL, *threads = NULL;
    const char *base = NULL;
    const cli_opt opts[] = {{"to", 0, &to, NULL}, {"threads", 't', &threads, NULL}, {"base", 0, &base, NULL},
                          CLI_VERBOSITY_OPTS, CLI_GEN_OPT, {0}};
    cli_args a;
    int rc = cli_parse(&a, "convert", help, argc, argv, opts, 2, 2, "IN OUT");
    if (rc >= 0) return rc;
    int fmt = -1, nthreads = 0;
    if ((rc = cli_choice("convert", "--to", to, format_names, 5, &fmt))) return rc;
    if ((rc = cli_threads("convert", threads, &nthreads))) return rc;
    tf_file_format out_fmt = fmt < 0 ? TF_FILE_AUTO : format_values[fmt];
    const cli_path paths[] = {{"the input", cli_generated(a.pos[0]) ? NULL : a.pos[0], 0, 0},
                              {"the output", a.pos[1], 1, 0}};
    if ((rc = cli_paths_distinct("convert", paths, 2))) return rc;
    if ((rc = cli_outputs_check(&a.pos[1], 1))) return rc; /* before reading IN */

    tf_tensor t;
    tf_read_info info;
    if ((rc = cli_load_base("convert", a.pos[0], nthreads, base, &t, &info))) return rc;
    double t0 = tf_wtime();
    if (tf_write_tensor(a.pos[1], &t, out_fmt) != TF_OK) {
        tf_tensor_free(&t);
        return cli_fail();
    }
    double t1 = tf_wtime();
    if (!cli_quiet()) {
        cli_print_problem(stdout, a.pos[0], &t, &info);
        cli_print_fixes(stdout, &t, &info);
    }
    if (cli_verbose()) cli_print_read(stdout, &info);
    cli_note_tns_dims(a.pos[1], &t, out_fmt);
    if (!cli_quiet())
        printf("wrote:  %s (%s) in %.3f s\n", a.pos[1],
               fmt < 0 ? cli_file_format_name(tf_write_format(a.pos[1], &t, out_fmt)) : format_names[fmt], t1 - t0);
    tf_tensor_free(&t);
    return 0;
}
