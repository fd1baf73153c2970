/* SPDX-License-Identifier: BSD-3-Clause */
/* The auto backend's cost rule: a GPU run pays fixed costs (the device's
 * start-up, the plan build, first-use tuning) before its fast iterations;
 * a small problem finishes sooner on the CPU (issue 25: on an H100 host,
 * `cpd -r 16` on the shared tensors of 26k-417k non-zeros spent 0.2-0.6 s
 * in GPU set-up against 1-3 ms of MTTKRP, and the CPU finished first). */
#ifndef TF_FRONT_AUTO_BACKEND_H
#define TF_FRONT_AUTO_BACKEND_H
#include <stddef.h>

#include "tenfold.h"

/* 1 when CP-ALS of X at rank R for up to `iters` iterations is estimated
 * to finish sooner on the CPU with `threads` threads than on the GPU
 * (gpu_ready: the GPU's device context already exists, so its start-up is
 * paid); `why` then gets a one-line reason with both estimates. */
/* 1 when this machine may have an NVIDIA GPU (a CUDA build whose module
 * is there, and a trace of the driver: tf_cuda_driver_visible); answered
 * without loading the module or starting CUDA. */
int tf_gpu_maybe_present(void);

int tf_auto_prefers_cpu(const tf_tensor *X, uint64_t R, uint32_t iters, int threads, int gpu_ready, char *why,
                        size_t why_len);
#endif
