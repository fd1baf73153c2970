/* SPDX-License-Identifier: BSD-3-Clause */
/* The tool's default OpenMP wait policy (passive) and the CPUs the process
 * started with (before libgomp bound its first thread). */
#ifndef TF_CLI_WAIT_POLICY_H
#define TF_CLI_WAIT_POLICY_H
#include <sched.h>

/* Re-executes the tool with OMP_WAIT_POLICY=PASSIVE unless the user chose a
 * policy; returns only when it does not (or the exec failed). Call first. */
void cli_default_passive_wait(char **argv);
/* The process's CPU mask at start, before any library's constructor ran;
 * NULL if unknown. *size: its size in bytes (for the CPU_*_S macros). */
const cpu_set_t *cli_start_cpus(size_t *size);
#endif
