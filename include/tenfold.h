/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tenfold.h — the public C API of tenfold: sparse tensor decomposition and
 * sparse–dense kernels with a CPU backend (OpenMP) and a CUDA backend.
 *
 * Users include this header; it includes every topic header below, each of
 * which also compiles on its own (with those it needs) for a program that
 * wants one part of the API only. The conventions of the whole API are at
 * the top of tenfold/core.h.
 *
 *   tenfold/core.h     version, limits, status codes and tf_last_error, the
 *                      build description, tf_precision, tf_backend, progress
 *   tenfold/tensor.h   tf_matrix, tf_tensor and their operations; tf_dense
 *   tenfold/io.h       reading and writing tensors and matrices, output files
 *   tenfold/ktensor.h  Kruskal tensors: factor sets on disk, <X, K>, norms
 *   tenfold/context.h  the tuning policy, contexts, GPUs, the CUDA module
 *   tenfold/mttkrp.h   MTTKRP plans
 *   tenfold/cpd.h      CP-ALS and the nvecs start
 *   tenfold/cp_apr.h   CP-APR (Poisson CP of counts)
 *   tenfold/sddmm.h    CSR matrices and SDDMM (one-shot calls and plans)
 *   tenfold/spttm.h    SpTTM and semi-sparse tensors
 *   tenfold/tucker.h   TTMc and sparse Tucker (HOOI), Tucker tensors
 *   tenfold/gen.h      synthetic tensors
 *   tenfold/threads.h  the CPU backend's threads
 *   tenfold/mpi.h      several processes (MPI ranks)
 */
#ifndef TENFOLD_H
#define TENFOLD_H

#include "tenfold/core.h"
#include "tenfold/tensor.h"
#include "tenfold/io.h"
#include "tenfold/ktensor.h"
#include "tenfold/context.h"
#include "tenfold/checkpoint.h"
#include "tenfold/mttkrp.h"
#include "tenfold/cpd.h"
#include "tenfold/cp_apr.h"
#include "tenfold/complete.h"
#include "tenfold/gcp.h"
#include "tenfold/sddmm.h"
#include "tenfold/spttm.h"
#include "tenfold/tucker.h"
#include "tenfold/gen.h"
#include "tenfold/threads.h"
#include "tenfold/mpi.h"

#endif /* TENFOLD_H */
