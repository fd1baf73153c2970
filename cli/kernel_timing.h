/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by `tenfold sddmm`, `tenfold ttm` and `tenfold bench`: the median of a run's
 * times, and the --device / --precision choices. */
#ifndef TF_CLI_KERNEL_TIMING_H
#define TF_CLI_KERNEL_TIMING_H
#include "tenfold.h"

/* Sorts times[0..n-1] (n >= 1) and returns the median. */
double cli_median_ms(double *times, int n);
/* --device auto|cpu|gpu and --precision double|single (NULL keeps the
 * defaults auto / double); returns 0 or the usage exit code. */
int cli_device_precision(const char *cmd, const char *device, const char *precision, tf_backend *backend,
                         tf_precision *prec);
/* "cpu" / "gpu 0: <name>" for the backend that will run. */
const char *cli_device_label(tf_backend backend, int device, int threads, char *buf, size_t len);
#endif
