/* SPDX-License-Identifier: BSD-3-Clause */
/* Whether mpirun / mpiexec / srun started this process as one of several ranks. */
#ifndef TF_RANKS_LAUNCH_H
#define TF_RANKS_LAUNCH_H
int tf_launched_with_ranks(void);
#endif
