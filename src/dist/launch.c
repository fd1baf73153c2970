/* SPDX-License-Identifier: BSD-3-Clause */
/* The launchers' environment (OpenMPI, MPICH / PMI, PMIx, Slurm). */
#include "dist/launch.h"

#include <stdlib.h>

int tf_launched_with_ranks(void)
{
    const char *vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; ++i) {
        const char *v = getenv(vars[i]);
        if (v && atoi(v) > 1) return 1;
    }
    return 0;
}
