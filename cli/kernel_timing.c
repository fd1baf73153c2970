/* SPDX-License-Identifier: BSD-3-Clause */
/* Median of benchmark times and the device / precision options. */
#include <stdio.h>
#include <stdlib.h>

#include "args.h"
#include "kernel_timing.h"

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double cli_median_ms(double *times, int n)
{
    qsort(times, (size_t)n, sizeof *times, cmp_double);
    return n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
}

int cli_device_precision(const char *cmd, const char *device, const char *precision, tf_backend *backend,
                         tf_precision *prec)
{
    static const char *const device_names[] = {"auto", "cpu", "gpu"}; /* tf_backend's order */
    static const char *const precision_names[] = {"double", "single"};
    int d = TF_BACKEND_AUTO, p = 0, rc;
    if ((rc = cli_choice(cmd, "--device", device, device_names, 3, &d)) ||
        (rc = cli_choice(cmd, "--precision", precision, precision_names, 2, &p)))
        return rc;
    *backend = (tf_backend)d;
    *prec = p ? TF_SINGLE : TF_DOUBLE;
    if (*backend == TF_BACKEND_AUTO) *backend = tf_gpu_count() > 0 ? TF_BACKEND_GPU : TF_BACKEND_CPU;
    return CLI_OK;
}

const char *cli_device_label(tf_backend backend, int device, int threads, char *buf, size_t len)
{
    if (backend != TF_BACKEND_GPU) {
        const int n = threads > 0 ? threads : tf_default_threads();
        snprintf(buf, len, "cpu, %d thread%s", n, n == 1 ? "" : "s");
        return buf;
    }
    char desc[256];
    if (tf_gpu_describe(device, desc, sizeof desc) != TF_OK) snprintf(desc, sizeof desc, "unavailable");
    snprintf(buf, len, "gpu %d: %s", device, desc);
    return buf;
}
