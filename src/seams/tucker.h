/* SPDX-License-Identifier: BSD-3-Clause */
/* The seam of sparse Tucker (HOOI): the algorithm (src/algo/tucker.c) owns
 * the start, the iteration, the timers, convergence and the fit formula; a
 * backend owns the tensor's layout, the factors, Y_(n) and the core in its
 * own memory, and only scalars cross per iteration. The front end
 * (src/front/tucker.c) checks the options and the memory, and creates the
 * backend: the CPU one (src/cpu/tucker_cpu.c) or one GPU's (src/gpu/tucker).
 *
 * The GPU backend (src/gpu/tucker) implements the same table; its entry
 * point, and the GPU's single TTMc, are the rows of TF_CUDA_TUCKER_API
 * below (docs/DESIGN.md "Adding a GPU operation").
 */
#ifndef TF_SEAMS_TUCKER_H
#define TF_SEAMS_TUCKER_H
#include "core/error.h"
#include "seams/cuda_table.h"
#include "tenfold.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tf_tucker_backend_ops {
    /* Takes the start: factors[m] (host, dims[m] x ranks[m]) for every mode
     * but `skip` (the first of the order, computed before it is read). */
    tf_status (*init)(void *ctx, const tf_matrix *factors, uint32_t skip);
    /* Y <- Y_(mode), the TTMc of X with the current factors of the other
     * modes (tf_ttmc's layout); held by the backend until the next ttmc. */
    tf_status (*ttmc)(void *ctx, uint32_t mode);
    /* Factor `mode` <- the ranks[mode] leading left singular vectors of Y
     * (the last ttmc, of this mode), each column's first largest-magnitude
     * entry positive; *method what ran (tf_tucker_svd). */
    tf_status (*leading)(void *ctx, uint32_t mode, tf_tucker_svd *method);
    /* The core G = U_mode^T Y_(mode) (Y the last ttmc, of this mode, U_mode
     * its new factor) kept as the result's core; *norm2 = ||G||^2. */
    tf_status (*core)(void *ctx, uint32_t mode, double *norm2);
    /* Copies the factors and the core into out (allocated by the driver). */
    tf_status (*result)(void *ctx, tf_ttensor *out);
    void (*destroy)(void *ctx);
} tf_tucker_backend_ops;

typedef struct tf_tucker_backend {
    const tf_tucker_backend_ops *ops;
    void *ctx;
    char desc[96];
} tf_tucker_backend;

/* The bytes of the dense arrays a run of these ranks holds at most (Y_(n),
 * the Gram or the subspace blocks, the core, the factors); *y_bytes the
 * largest Y_(n). The front end checks it against the memory limit. */
uint64_t tf_tucker_work_bytes(const tf_tensor *X, const uint64_t *ranks, tf_tucker_svd svd, uint64_t *y_bytes);
/* The method `svd` (AUTO: by the sizes) for Y of I rows, C columns. */
tf_tucker_svd tf_tucker_svd_choose(uint64_t I, uint64_t C, tf_tucker_svd svd);

/* ---- the CPU backend (src/cpu/tucker_cpu.c, src/cpu/ttmc_cpu.c) */

/* TTMc on the CPU: a compressed-fibre tree per mode it is made for (rooted
 * at that mode, the others by increasing length, every level compressed). */
typedef struct tf_cpu_ttmc tf_cpu_ttmc;
/* Trees for the modes with want[m] != 0 (NULL: every mode). */
tf_status tf_cpu_ttmc_create(const tf_tensor *X, const int *want, int threads, tf_cpu_ttmc **out);
/* Y (dims[mode] x C, row-major, every entry written) = TTMc for mode with
 * the factors U[k], k != mode (tf_ttmc's layout). */
tf_status tf_cpu_ttmc_run(tf_cpu_ttmc *p, uint32_t mode, const tf_matrix *U, double *Y);
void tf_cpu_ttmc_free(tf_cpu_ttmc *p);
/* For tests: the most doubles the per-chunk partial outputs of a short mode
 * may take (0: never; default 2^24), and the chunks (0: by the sizes). Not
 * thread-safe. */
void tf_cpu_ttmc_set_chunking(uint64_t partial_doubles, uint32_t chunks);

/* The CPU Tucker backend over the trees of every mode (o: the resolved
 * options: ranks checked, svd set). */
tf_status tf_cpu_tucker_backend_create(const tf_tensor *X, const tf_tucker_opts *o, tf_tucker_backend *out);
/* The same on MPI ranks: part this rank's non-zeros (X's dims), its TTMc
 * summed on rank 0, which computes the factors and the core and broadcasts
 * them (every rank holds rank 0's); a failure every rank's (shared). */
struct tf_dist;
tf_status tf_cpu_tucker_backend_create_dist(const tf_tensor *part, const tf_tucker_opts *o, const struct tf_dist *d,
                                            tf_tucker_backend *out);

/* The CUDA backend's entry point (src/gpu/tucker; its format:
 * seams/cuda_table.h):
 * - tf_cuda_tucker_backend_create: HOOI on the one GPU of o->context (never
 *   NULL here), in double precision: per mode a copy of the non-zeros
 *   sorted by the mode's index (the TTMc's segmented pass), the factors,
 *   Y_(n), the Grams on the device; the eigenvectors by cuSOLVER syevd, the
 *   same sign rule as the CPU. o: the resolved options (ranks checked).
 *   TF_ERR_NOMEM (naming the bytes and the budget) when they do not fit the
 *   context's device budget; TF_ERR_UNAVAILABLE for what the GPU lacks (the
 *   subspace method, an order above the GPU's), so that the front end runs
 *   it on the CPU under auto. X borrowed during the call only.
 * - tf_cuda_ttmc: one TTMc (tf_ttmc's) on the one GPU of ctx: Y (host,
 *   dims[mode] x C) from the factors U (host); the sorted copy of the mode
 *   made for the call. */
#define TF_CUDA_TUCKER_API(ROW)                                                                                    \
    ROW(MAY_LOAD, tf_status, tf_cuda_tucker_backend_create,                                                        \
        (const tf_tensor *X, const tf_tucker_opts *o, tf_tucker_backend *out), (X, o, out),                        \
        , tf_cuda_unavailable("GPU Tucker needs"))                                                                 \
    ROW(MAY_LOAD, tf_status, tf_cuda_ttmc,                                                                         \
        (const tf_tensor *X, uint32_t mode, const tf_matrix *U, tf_context *ctx, double *Y), (X, mode, U, ctx, Y), \
        , tf_cuda_unavailable("GPU TTMc needs"))
TF_CUDA_TUCKER_API(TF_CUDA_DECLARE_)

#ifdef __cplusplus
}
#endif
#endif
