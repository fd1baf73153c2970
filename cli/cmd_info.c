/* tenfold info: version, build options, threads and GPUs. */
#include <stdio.h>

#include "args.h"
#include "commands.h"

static const char help[] =
    "usage: tenfold info\n"
    "\n"
    "Prints the version, whether the CUDA backend is built in, the default\n"
    "number of CPU threads (OMP_NUM_THREADS overrides it) and the GPUs found.\n";

int cmd_info(int argc, char **argv)
{
    cli_args a;
    static const cli_opt opts[] = {{0}};
    int rc = cli_parse(&a, "info", help, argc, argv, opts, 0, 0, "");
    if (rc >= 0) return rc;
    printf("tenfold %s\n", TF_VERSION_STRING);
    printf("build:   CUDA backend %s\n", tf_have_cuda() ? "yes" : "no");
    printf("threads: %d (CPU backend default)\n", tf_default_threads());
    int n = tf_gpu_count();
    printf("gpus:    %d found\n", n);
    for (int d = 0; d < n; ++d) {
        char desc[256];
        if (tf_gpu_describe(d, desc, sizeof desc) == TF_OK) printf("  gpu %d: %s\n", d, desc);
        else printf("  gpu %d: (%s)\n", d, tf_last_error());
    }
    return 0;
}
