/* SPDX-License-Identifier: BSD-3-Clause */
/* The seam between libtenfold and its CUDA backend, which a CUDA build
 * makes a separate module, libtenfold_cuda.so, loaded on first GPU use
 * (src/gpu/loader; a CPU-only build links src/gpu/none instead). Loading
 * CUDA's runtime and its cuBLAS / cuSOLVER / cuSPARSE libraries takes
 * ~260 MB and 0.1 s, so nothing that runs on the CPU pays for it.
 *
 * Two tables of functions cross, nothing else (the module exports one
 * symbol, TF_CUDA_MODULE_ENTRY, and has no undefined symbol of libtenfold):
 * - tf_cuda_api, module -> library: the backend's entry points, whose
 *   front-end names (tf_gpu_count, tf_cuda_plan_build, ...) the loader
 *   defines; the CUDA code implements them as NAME_impl.
 * - tf_cuda_core_api, library -> module: the core functions the CUDA code
 *   calls (errors, allocation, the host-side format builders). The module
 *   defines each as a shim that calls the library's, so there is one
 *   error buffer and one allocator in the process, and the module needs
 *   neither liblzma nor zlib nor OpenMP.
 * Programs that link the CUDA objects directly (the GPU tests and their
 * hooks) define tf_cuda_api_table; the loader then uses it and loads
 * nothing. */
#ifndef TF_BACKEND_CUDA_MODULE_H
#define TF_BACKEND_CUDA_MODULE_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#include "backend/context.h"
#include "backend/cpd.h"
#include "backend/plan.h"
#include "backend/sddmm_backends.h"
#include "backend/spttm_backends.h"
#include "core/alloc.h"
#include "core/parallel.h"
#include "fmt/auto_format.h"
#include "fmt/blco.h"
#include "fmt/csr.h"
#include "fmt/fcoo.h"
#include "fmt/fcoo_chunks.h"
#include "fmt/sddmm_tiles.h"
#include "fmt/spttm_fcoo.h"
#include "fmt/tensor_stats.h"
#include "tenfold.h"

#define TF_CUDA_MODULE_FILE "libtenfold_cuda.so"
#define TF_CUDA_MODULE_ENTRY "tf_cuda_module_v1"

/* The backend's entry points: X(return type, front-end name, parameters,
 * arguments). The CUDA code defines NAME_impl for each. */
#define TF_CUDA_API(X)                                                                                        \
    X(int, tf_gpu_count, (void), ())                                                                          \
    X(tf_status, tf_gpu_describe, (int device, char *buf, size_t len), (device, buf, len))                   \
    X(tf_status, tf_gpu_copy_bandwidth, (int device, double *bytes_per_s), (device, bytes_per_s))            \
    X(tf_status, tf_gpu_h2d_bandwidth, (int device, double *bytes_per_s), (device, bytes_per_s))             \
    X(tf_status, tf_cuda_plan_build, (const tf_tensor *X, const tf_plan_opts *o, tf_plan *p), (X, o, p))     \
    X(tf_status, tf_cuda_plan_build_multi, (const tf_tensor *X, const tf_plan_opts *o, const tf_shards *sh,   \
      tf_plan *p), (X, o, sh, p))                                                                             \
    X(tf_status, tf_cuda_cpd_backend_create, (const tf_tensor *X, const tf_cpd_opts *o, tf_cpd_backend *out), \
      (X, o, out))                                                                                            \
    X(tf_status, tf_cuda_cpd_backend_create_multi,                                                            \
      (const tf_tensor *X, const tf_cpd_opts *o, const tf_shards *sh, tf_cpd_backend *out), (X, o, sh, out)) \
    X(tf_status, tf_cuda_context_budget, (tf_context *c, uint64_t *bytes), (c, bytes))                       \
    X(tf_status, tf_cuda_sddmm_plan_build,                                                                    \
      (const tf_csr *S, uint64_t K, const tf_sddmm_opts *o, uint32_t npanels, tf_sddmm_panel *panels,         \
       tf_sddmm_gpu **out),                                                                                   \
      (S, K, o, npanels, panels, out))                                                                        \
    X(tf_status, tf_cuda_sddmm_plan_run,                                                                      \
      (tf_sddmm_gpu * g, const tf_sddmm_part_operands *ops, int given_parts, const tf_sddmm_run_opts *ro),    \
      (g, ops, given_parts, ro))                                                                              \
    X(tf_status, tf_cuda_sddmm_plan_time,                                                                     \
      (tf_sddmm_gpu * g, const tf_sddmm_part_operands *ops, int given_parts, int warmup, int reps,             \
       double *times_ms, double *part_ms),                                                                    \
      (g, ops, given_parts, warmup, reps, times_ms, part_ms))                                                 \
    X(int, tf_cuda_memory_of, (const void *p, int *device), (p, device))                                      \
    X(tf_status, tf_cuda_spttm,                                                                               \
      (const tf_tensor *X, const tf_fibres *F, const tf_matrix *U, const tf_spttm_opts *o, double *Y,         \
       int warmup, int reps, double *times_ms),                                                               \
      (X, F, U, o, Y, warmup, reps, times_ms))
/* ... and those returning nothing. */
#define TF_CUDA_API_VOID(X)                                                    \
    X(void, tf_cuda_context_release, (void *gpu), (gpu))                      \
    X(void, tf_cuda_sddmm_plan_free, (tf_sddmm_gpu * g), (g))                  \
    X(void, tf_cuda_versions, (int *runtime, int *driver), (runtime, driver))  \
    X(void, tf_gpu_links, (char *buf, size_t len), (buf, len))

/* The core functions the CUDA code calls (tf_fail, variadic, is passed
 * apart). Any other call into libtenfold fails the module's link
 * (-Wl,--no-undefined): add it here. */
#define TF_CUDA_CORE(X)                                                                                          \
    X(tf_status, tf_alloc, (void **out, uint64_t n, uint64_t size, const char *what), (out, n, size, what))     \
    X(const char *, tf_format_name, (tf_format f), (f))                                                          \
    X(const char *, tf_last_error, (void), ())                                                                   \
    X(tf_status, tf_csr_rows, (const tf_csr *S, uint64_t lo, uint64_t hi, tf_csr *view, uint64_t **rowptr),    \
      (S, lo, hi, view, rowptr))                                                                                 \
    X(tf_status, tf_fcoo_build, (const tf_tensor *X, uint32_t mode, uint32_t part_nnz, tf_fcoo *out),           \
      (X, mode, part_nnz, out))                                                                                  \
    X(tf_status, tf_fcoo_rebuild, (const tf_tensor *X, uint32_t mode, uint32_t part_nnz, tf_fcoo *f),           \
      (X, mode, part_nnz, f))                                                                                    \
    X(tf_status, tf_fcoo_repartition, (tf_fcoo * f, uint32_t part_nnz), (f, part_nnz))                          \
    X(tf_status, tf_fcoo_chunks_pack, (const tf_fcoo *f, uint64_t chunk_parts, uint32_t value_bytes, int pack,  \
      tf_fcoo_chunks *out), (f, chunk_parts, value_bytes, pack, out))                                            \
    X(uint64_t, tf_fcoo_chunk_plain,                                                                             \
      (uint32_t order, uint32_t value_bytes, uint64_t nnz, uint64_t parts, tf_fcoo_chunk_layout *lay),         \
      (order, value_bytes, nnz, parts, lay))                                                                     \
    X(tf_status, tf_fcoo_zero_rows, (const tf_fcoo *f, uint64_t max_rows, uint32_t **rows, uint64_t *n),        \
      (f, max_rows, rows, n))                                                                                    \
    X(uint64_t, tf_fcoo_bytes, (const tf_fcoo *f, uint32_t value_bytes), (f, value_bytes))                      \
    X(tf_status, tf_blco_build, (const tf_tensor *X, uint64_t max_block_nnz, tf_blco *out),                     \
      (X, max_block_nnz, out))                                                                                   \
    X(tf_status, tf_blco_tiles, (const tf_blco *b, uint32_t tile_nnz, uint64_t *ntiles, uint64_t **tile_block), \
      (b, tile_nnz, ntiles, tile_block))                                                                         \
    X(tf_status, tf_gpu_auto_format,                                                                             \
      (const tf_tensor *X, uint64_t rank, uint32_t value_bytes, uint64_t budget_bytes, int allow_stream,        \
       tf_format *fmt, char *why, size_t why_len),                                                               \
      (X, rank, value_bytes, budget_bytes, allow_stream, fmt, why, why_len))                                     \
    X(uint64_t, tf_gpu_format_bytes, (const tf_tensor *X, tf_format fmt, uint32_t value_bytes),                 \
      (X, fmt, value_bytes))                                                                                     \
    X(uint32_t, tf_gpu_heavy_rows,                                                                               \
      (const tf_tensor *X, uint32_t mode, uint64_t sample, double min_share, uint32_t max_rows, uint32_t *rows), \
      (X, mode, sample, min_share, max_rows, rows))                                                              \
    X(tf_status, tf_sddmm_tiles_build,                                                                           \
      (const tf_csr *S, uint32_t tile_j, uint32_t max_rows, uint32_t max_nnz, tf_sddmm_tiles *t),               \
      (S, tile_j, max_rows, max_nnz, t))                                                                         \
    X(uint32_t, tf_sddmm_model_tile_j, (const tf_csr *S, uint64_t K, size_t value_bytes, uint64_t l2_bytes),    \
      (S, K, value_bytes, l2_bytes))                                                                             \
    X(tf_status, tf_spttm_fcoo_build, (const tf_tensor *X, const tf_fibres *F, tf_spttm_fcoo *out), (X, F, out))
#define TF_CUDA_CORE_VOID(X)                                                                  \
    X(void, tf_free, (void *p), (p))                                                          \
    X(void, tf_clear_error, (void), ())                                                       \
    X(void, tf_fcoo_free, (tf_fcoo * f), (f))                                                 \
    X(void, tf_fcoo_chunks_free, (tf_fcoo_chunks * k), (k))                                   \
    X(void, tf_fcoo_chunk_layout_of, (const tf_fcoo_chunks *k, uint64_t c, tf_fcoo_chunk_layout *lay),   \
      (k, c, lay))                                                                             \
    X(void, tf_blco_free, (tf_blco * b), (b))                                                 \
    X(void, tf_sddmm_tiles_free, (tf_sddmm_tiles * t), (t))                                   \
    X(void, tf_spttm_fcoo_free, (tf_spttm_fcoo * f), (f))                                     \
    X(void, tf_doubles_to_floats, (const double *src, float *dst, uint64_t n), (src, dst, n)) \
    X(void, tf_floats_to_doubles, (const float *src, double *dst, uint64_t n), (src, dst, n)) \
    X(void, tf_copy_bytes, (void *dst, const void *src, uint64_t n), (dst, src, n))

#define TF_CUDA_FIELD_(ret, name, params, args) ret(*name) params;

/* What library and module must agree on besides the function lists: the
 * version, the configured commit, and the sizes of the structures that
 * cross. The module refuses a library that differs. */
#define TF_CUDA_ABI_SIZES                                                                                  \
    {sizeof(tf_tensor), sizeof(tf_matrix), sizeof(tf_csr), sizeof(tf_plan), sizeof(tf_plan_opts),        \
     sizeof(tf_cpd_opts), sizeof(tf_cpd_backend), sizeof(tf_context), sizeof(tf_tuning),                  \
     sizeof(tf_sddmm_opts), sizeof(tf_sddmm_info), sizeof(tf_spttm_opts), sizeof(tf_fibres),              \
     sizeof(tf_fcoo), sizeof(tf_blco), sizeof(tf_sddmm_tiles), sizeof(tf_spttm_fcoo), sizeof(tf_fcoo_chunks),   \
     sizeof(tf_shards), sizeof(tf_cpd_report), sizeof(tf_context_opts), sizeof(tf_dense),                       \
     sizeof(tf_sddmm_run_opts), sizeof(tf_sddmm_part_operands), sizeof(tf_sddmm_panel), sizeof(tf_cpd_update)}
#define TF_CUDA_ABI_NSIZES 26

typedef struct tf_cuda_api {
    size_t size; /* sizeof(tf_cuda_api) */
    TF_CUDA_API(TF_CUDA_FIELD_)
    TF_CUDA_API_VOID(TF_CUDA_FIELD_)
} tf_cuda_api;

typedef struct tf_cuda_core_api {
    size_t size;           /* sizeof(tf_cuda_core_api)          */
    const char *version;   /* TF_VERSION_STRING                 */
    const char *commit;    /* TF_BUILD_COMMIT                   */
    size_t abi[TF_CUDA_ABI_NSIZES]; /* TF_CUDA_ABI_SIZES        */
    tf_status (*tf_fail)(tf_status s, const char *fmt, ...);
    TF_CUDA_CORE(TF_CUDA_FIELD_)
    TF_CUDA_CORE_VOID(TF_CUDA_FIELD_)
} tf_cuda_core_api;

/* The CUDA code's implementations of the entry points. */
#define TF_CUDA_IMPL_DECL_(ret, name, params, args) ret name##_impl params;
TF_CUDA_API(TF_CUDA_IMPL_DECL_)
TF_CUDA_API_VOID(TF_CUDA_IMPL_DECL_)

/* The table of the CUDA code (src/gpu/runtime/api.cu), in the module and
 * in programs that link the CUDA objects directly. */
const tf_cuda_api *tf_cuda_api_table(void);

/* The module's one export: checks that `core` is the library it was built
 * with (else NULL and the reason in why), keeps it for the shims, and
 * returns tf_cuda_api_table(). */
typedef const tf_cuda_api *(*tf_cuda_module_entry_fn)(const tf_cuda_core_api *core, char *why, size_t why_len);

#ifdef __cplusplus
}
#endif
#endif
