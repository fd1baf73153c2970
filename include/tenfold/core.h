/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tenfold/core.h — what every part of the public API uses: the version,
 * limits, status codes and the last error, the build description, and the
 * enums and callback types shared by the topic headers. Included by every
 * other tenfold/ header; users include <tenfold.h> (all of them) or the
 * topic headers they need. Conventions of the whole API:
 *  - Every function that can fail returns a tf_status; on failure
 *    tf_last_error() returns a one-line message for the calling thread
 *    (file:line:field and what was expected, for input errors).
 *  - Per-mode indices are 0-based uint32_t (a mode longer than 2^32 is an
 *    error); non-zero counts and offsets are uint64_t.
 *  - Dense matrices are row-major (rows x cols); values are double.
 *  - Objects filled by *_alloc / readers are released with the matching
 *    *_free; a zero-initialised object is always safe to free.
 *  - Arguments are checked before anything is read through them: a NULL
 *    pointer where an object is needed, or a value outside its range (an
 *    order outside TF_MIN_ORDER..TF_MAX_ORDER, a mode >= the order, a mode
 *    order that is no permutation, rank 0, a negative count) is TF_ERR_ARG
 *    with a message naming the function and the argument ("tf_tensor_sort:
 *    t is NULL"). Functions without a status: the void ones (*_free,
 *    *_default, tf_tuning_from_env, tf_get_build_info, tf_gpu_links,
 *    tf_mpi_describe) do nothing for NULL; those that return a value return their neutral one for a
 *    NULL object (0, "", TF_BACKEND_CPU, TF_FORMAT_AUTO, -1) and leave the
 *    message in tf_last_error().
 *  - Thread counts (options' threads, OMP_NUM_THREADS) above
 *    tf_thread_limit() are clamped to it; 0 is the default.
 */
#ifndef TENFOLD_CORE_H
#define TENFOLD_CORE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TF_VERSION_MAJOR 0
#define TF_VERSION_MINOR 2
#define TF_VERSION_PATCH 0
#define TF_VERSION_STRING "0.2.0"
#define TF_MIN_ORDER 2
#define TF_MAX_ORDER 16
#define TF_MAX_GPUS 16 /* GPUs one process drives (tf_context_opts.ndevices) */

/* Largest CP-ALS rank (tf_cpd and `tenfold cpd -r`): the R x R LAPACK
 * workspaces must fit an int. MTTKRP, SpTTM and SDDMM kernels have no
 * such limit. */
#define TF_MAX_RANK 16384u

/* ------------------------------------------------------------------ status */

typedef enum tf_status {
    TF_OK = 0,
    TF_ERR_ARG,         /* invalid argument from the caller                 */
    TF_ERR_IO,          /* a file could not be opened, read or written      */
    TF_ERR_PARSE,       /* malformed input file                             */
    TF_ERR_RANGE,       /* a value outside what tenfold can represent       */
    TF_ERR_NOMEM,       /* allocation failed                                */
    TF_ERR_NUMERIC,     /* LAPACK failure or non-finite result              */
    TF_ERR_UNAVAILABLE, /* capability not built in, or no device present    */
    TF_ERR_DEVICE       /* CUDA / cuBLAS / cuSOLVER error                   */
} tf_status;

/* Short name of a status ("ok", "parse error", ...). */
const char *tf_status_name(tf_status s);
/* One-line message of the last failure in the calling thread ("" if none). */
const char *tf_last_error(void);
/* Wall-clock seconds from an arbitrary origin (monotonic). */
double tf_wtime(void);

/* The library's version at run time ("0.2.0"); TF_VERSION_STRING is the
 * header's, so a program can tell when the two differ. */
const char *tf_version(void);

/* What this build of the library is made of (strings are static). */
typedef struct tf_build_info {
    const char *version;      /* tf_version()                                        */
    const char *commit;       /* git commit the build was configured at, or "unknown" */
    const char *compiler;     /* C compiler id and version                            */
    const char *blas_lapack;  /* the shared object that provides dgemm_ at run time   */
    const char *cuda_toolkit; /* CUDA toolkit the backend was built with, "" if none  */
    int cuda_runtime;         /* CUDA runtime version (e.g. 13000), 0 without CUDA    */
    int cuda_driver;          /* highest CUDA version the driver supports, 0 if none  */
} tf_build_info;

/* Fills `out`; in a CUDA build it loads the CUDA module (tf_cuda_module) to
 * ask the runtime and the driver their versions. */
void tf_get_build_info(tf_build_info *out);

/* Floating-point precision of a computation (plans, tf_read_opts). */
typedef enum tf_precision { TF_DOUBLE = 0, TF_SINGLE } tf_precision;

/* Where a computation runs (options of contexts, plans, CP-ALS, SDDMM, SpTTM). */
typedef enum tf_backend {
    TF_BACKEND_AUTO = 0, /* GPU when one is present and supported, else CPU */
    TF_BACKEND_CPU,
    TF_BACKEND_GPU
} tf_backend;

/* Names <-> enums for the CLI ("cpu", "gpu", "auto"). tf_backend_parse returns -1 if unknown. */
int tf_backend_parse(const char *s);
const char *tf_backend_name(tf_backend b);

/* The default seed of CP-ALS's random start and of tf_nvecs's subspace
 * iteration (tf_cpd_opts.seed, tf_nvecs_opts.seed). */
#define TF_DEFAULT_SEED 20240601ULL

/* Progress of a long operation (reading a tensor, building a plan), for a
 * progress display: tf_read_opts, tf_plan_opts and tf_cpd_opts take an
 * optional callback. It is called on the calling thread, never
 * concurrently, as the work goes on -- possibly often, so it must return
 * quickly and decide itself when to draw; once it was called, a last call
 * with finished = 1 ends the operation (also on failure). It must not call
 * tenfold. */
typedef struct tf_progress {
    const char *step;   /* "reading", "sorting", "building the plan"           */
    uint64_t done;      /* reading: input bytes taken so far (compressed bytes
                           for xz / gzip); else 0                              */
    uint64_t total;     /* the input's size in bytes when known (a file; 0 for
                           a pipe, and for steps without a size)              */
    int finished;       /* 1 on the operation's last call                      */
} tf_progress;

typedef void (*tf_progress_fn)(const tf_progress *p, void *user);

#ifdef __cplusplus
}
#endif
#endif /* TENFOLD_CORE_H */
