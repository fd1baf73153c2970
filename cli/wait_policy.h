/* SPDX-License-Identifier: BSD-3-Clause */
/* The tool's environment for its libraries (OpenMP's passive wait, OpenBLAS
 * under ulimit -v) and the CPUs the process started with (before libgomp
 * bound its first thread). */
#ifndef TF_CLI_WAIT_POLICY_H
#define TF_CLI_WAIT_POLICY_H
#include <sched.h>

/* Re-executes the tool with OMP_WAIT_POLICY=PASSIVE unless the user chose a
 * policy, and with OPENBLAS_NUM_THREADS=1 under an address-space limit
 * unless the user set it (wait_policy.c says why); returns only when it does
 * neither (or the exec failed). Call first. */
void cli_prepare_environment(char **argv);
/* The process's CPU mask at start, before any library's constructor ran;
 * NULL if unknown. *size: its size in bytes (for the CPU_*_S macros). */
const cpu_set_t *cli_start_cpus(size_t *size);
#endif
