/* SPDX-License-Identifier: BSD-3-Clause */
/* The launchers' environment (OpenMPI, MPICH / PMI, PMIx, Slurm), as
 * src/core/environment.c reads it. */
#include "ranks/launch.h"

#include "core/environment.h"

int tf_launched_with_ranks(void) { return tf_env_launcher_ranks() > 1; }
