/* SPDX-License-Identifier: BSD-3-Clause */
/* The seam between libtenfold and its CUDA backend, which a CUDA build
 * makes a separate module, libtenfold_cuda.so, loaded on first GPU use
 * (src/gpu/loader; a CPU-only build links src/gpu/none instead). Loading
 * CUDA's runtime and its cuBLAS / cuSOLVER / cuSPARSE libraries takes
 * ~260 MB and 0.1 s, so nothing that runs on the CPU pays for it.
 *
 * Two tables of functions cross, nothing else (the module exports one
 * symbol, TF_CUDA_MODULE_ENTRY, and has no undefined symbol of libtenfold):
 * - tf_cuda_api, module -> library: the backend's entry points, declared
 *   once, as a row of their operation family's table (seams/cuda_table.h
 *   tells what is made of a row); the CUDA code implements them as
 *   NAME_impl, and libtenfold's front ends of the same names
 *   (tf_gpu_count, tf_cuda_plan_build, ...; src/gpu/entry) call them
 *   through this table.
 * - tf_cuda_core_api, library -> module: the core functions the CUDA code
 *   calls (errors, allocation, the host-side format builders). The module
 *   defines each as a shim that calls the library's, so there is one
 *   error buffer and one allocator in the process, and the module needs
 *   neither liblzma nor zlib nor OpenMP.
 * Programs that link the CUDA objects directly (the GPU tests and their
 * hooks) define tf_cuda_api_table; the loader then uses it and loads
 * nothing. */
#ifndef TF_SEAMS_CUDA_MODULE_H
#define TF_SEAMS_CUDA_MODULE_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#include "seams/complete.h"
#include "seams/context.h"
#include "seams/cp_apr.h"
#include "seams/cpd.h"
#include "seams/gcp.h"
#include "seams/model_backends.h"
#include "seams/plan.h"
#include "seams/sddmm_backends.h"
#include "seams/spttm_backends.h"
#include "seams/tucker.h"
#include "core/alloc.h"
#include "core/environment.h"
#include "core/parallel.h"
#include "fmt/auto_format.h"
#include "fmt/blco.h"
#include "fmt/csr.h"
#include "fmt/fcoo.h"
#include "fmt/fcoo_chunks.h"
#include "fmt/fcoo_pieces.h"
#include "core/host_memory.h"
#include "fmt/row_counts.h"
#include "fmt/sddmm_tiles.h"
#include "fmt/spttm_fcoo.h"
#include "fmt/tensor_stats.h"
#include "tenfold.h"

#define TF_CUDA_MODULE_FILE "libtenfold_cuda.so"
#define TF_CUDA_MODULE_ENTRY "tf_cuda_module_v1"

/* The backend's entry points: the tables of the operation families, each
 * in its family's header (rows: seams/cuda_table.h). A new family adds
 * its table here; a new operation of a family only a row there. */
#define TF_CUDA_API(ROW)                                                                                         \
    TF_CUDA_DEVICE_API(ROW)                                                                                      \
    TF_CUDA_PLAN_API(ROW)                                                                                        \
    TF_CUDA_CPD_API(ROW)                                                                                         \
    TF_CUDA_SDDMM_API(ROW)                                                                                       \
    TF_CUDA_SPTTM_API(ROW)                                                                                       \
    TF_CUDA_MODEL_API(ROW)                                                                                       \
    TF_CUDA_APR_API(ROW)                                                                                         \
    TF_CUDA_GCP_API(ROW)                                                                                         \
    TF_CUDA_TUCKER_API(ROW)                                                                                      \
    TF_CUDA_COMPLETE_API(ROW)                                                                                    \
    /* a new family: its table here, one line */

/* The core functions the CUDA code calls (tf_fail, variadic, is passed
 * apart). Any other call into libtenfold fails the module's link
 * (-Wl,--no-undefined): add it here. */
#define TF_CUDA_CORE(X)                                                                                          \
    X(tf_status, tf_alloc, (void **out, uint64_t n, uint64_t size, const char *what), (out, n, size, what))     \
    X(const char *, tf_format_name, (tf_format f), (f))                                                          \
    X(const char *, tf_last_error, (void), ())                                                                   \
    X(uint64_t, tf_host_memory_free, (void), ())                                                                 \
    X(int, tf_env_test_gpus, (void), ())                                                                         \
    X(tf_status, tf_csr_rows, (const tf_csr *S, uint64_t lo, uint64_t hi, tf_csr *view, uint64_t **rowptr),    \
      (S, lo, hi, view, rowptr))                                                                                 \
    X(tf_status, tf_fcoo_build, (const tf_tensor *X, uint32_t mode, uint32_t part_nnz, tf_fcoo *out),           \
      (X, mode, part_nnz, out))                                                                                  \
    X(tf_status, tf_fcoo_rebuild, (const tf_tensor *X, uint32_t mode, uint32_t part_nnz, tf_fcoo *f),           \
      (X, mode, part_nnz, f))                                                                                    \
    X(tf_status, tf_fcoo_repartition, (tf_fcoo * f, uint32_t part_nnz), (f, part_nnz))                          \
    X(tf_status, tf_fcoo_chunks_plan,                                                                            \
      (uint32_t order, const uint64_t *dims, const uint32_t *pmodes, uint64_t nnz, uint32_t part_nnz,          \
       uint64_t chunk_parts, uint32_t value_bytes, int pack, const tf_fcoo_value_code *vc, tf_fcoo_chunks *out), \
      (order, dims, pmodes, nnz, part_nnz, chunk_parts, value_bytes, pack, vc, out))                             \
    X(tf_status, tf_fcoo_chunks_build,                                                                           \
      (const tf_tensor *X, uint32_t mode, tf_fcoo_chunks *k, uint64_t piece_nnz,                               \
       tf_fcoo_resident_fn resident, void *user, tf_fcoo *meta),                                                 \
      (X, mode, k, piece_nnz, resident, user, meta))                                                             \
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
    X(tf_status, tf_spttm_fcoo_build, (const tf_tensor *X, const tf_fibres *F, tf_spttm_fcoo *out), (X, F, out)) \
    X(tf_tucker_svd, tf_tucker_svd_choose, (uint64_t I, uint64_t C, tf_tucker_svd svd), (I, C, svd))
#define TF_CUDA_CORE_VOID(X)                                                                  \
    X(void, tf_free, (void *p), (p))                                                          \
    X(void, tf_clear_error, (void), ())                                                       \
    X(void, tf_fcoo_free, (tf_fcoo * f), (f))                                                 \
    X(void, tf_fcoo_chunks_free, (tf_fcoo_chunks * k), (k))                                   \
    X(void, tf_fcoo_chunk_layout_of, (const tf_fcoo_chunks *k, uint64_t c, tf_fcoo_chunk_layout *lay),   \
      (k, c, lay))                                                                             \
    X(void, tf_fcoo_value_code_of, (const double *vals, uint64_t n, uint32_t vb, tf_fcoo_value_code *vc), \
      (vals, n, vb, vc))                                                                       \
    X(void, tf_blco_free, (tf_blco * b), (b))                                                 \
    X(void, tf_sddmm_tiles_free, (tf_sddmm_tiles * t), (t))                                   \
    X(void, tf_spttm_fcoo_free, (tf_spttm_fcoo * f), (f))                                     \
    X(void, tf_doubles_to_floats, (const double *src, float *dst, uint64_t n), (src, dst, n)) \
    X(void, tf_floats_to_doubles, (const float *src, double *dst, uint64_t n), (src, dst, n)) \
    X(void, tf_copy_bytes, (void *dst, const void *src, uint64_t n), (dst, src, n))              \
    X(void, tf_count_rows, (const tf_tensor *X, uint32_t m, int threads, uint64_t *count),   \
      (X, m, threads, count))

#define TF_CUDA_FIELD_(ret, name, params, args) ret(*name) params;

/* What library and module must agree on besides the function lists: the
 * version, the configured commit, and the sizes of the structures that
 * cross, listed here once (a new one is a line). The module refuses a
 * library that differs. */
#define TF_CUDA_ABI_TYPES(T)  \
    T(tf_tensor)              \
    T(tf_matrix)              \
    T(tf_csr)                 \
    T(tf_plan)                \
    T(tf_plan_opts)           \
    T(tf_cpd_opts)            \
    T(tf_cpd_backend)         \
    T(tf_context)             \
    T(tf_tuning)              \
    T(tf_sddmm_opts)          \
    T(tf_sddmm_info)          \
    T(tf_spttm_opts)          \
    T(tf_fibres)              \
    T(tf_fcoo)                \
    T(tf_blco)                \
    T(tf_sddmm_tiles)         \
    T(tf_spttm_fcoo)          \
    T(tf_fcoo_chunks)         \
    T(tf_fcoo_range)          \
    T(tf_shards)              \
    T(tf_cpd_report)          \
    T(tf_context_opts)        \
    T(tf_dense)               \
    T(tf_sddmm_run_opts)      \
    T(tf_sddmm_part_operands) \
    T(tf_sddmm_panel)         \
    T(tf_ktensor)             \
    T(tf_model_opts)          \
    T(tf_cpd_update)          \
    T(tf_cp_apr_opts)         \
    T(tf_cp_apr_backend)      \
    T(tf_tucker_opts)         \
    T(tf_tucker_backend)      \
    T(tf_complete_opts)       \
    T(tf_complete_backend)    \
    T(tf_gcp_opts)            \
    T(tf_gcp_backend)         \
    /* a new one: a line here */
#define TF_CUDA_ABI_SIZE_(type) sizeof(type),
#define TF_CUDA_ABI_ONE_(type) +1
#define TF_CUDA_ABI_SIZES {TF_CUDA_ABI_TYPES(TF_CUDA_ABI_SIZE_)}
#define TF_CUDA_ABI_NSIZES (0 TF_CUDA_ABI_TYPES(TF_CUDA_ABI_ONE_))

#define TF_CUDA_API_FIELD_(front, ret, name, params, args, pre, answer) ret(*name) params;

typedef struct tf_cuda_api {
    size_t size; /* sizeof(tf_cuda_api) */
    TF_CUDA_API(TF_CUDA_API_FIELD_)
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
#define TF_CUDA_IMPL_DECL_(front, ret, name, params, args, pre, answer) ret name##_impl params;
TF_CUDA_API(TF_CUDA_IMPL_DECL_)

/* The table of the CUDA code (src/gpu/runtime/api.cu), in the module and
 * in programs that link the CUDA objects directly. */
const tf_cuda_api *tf_cuda_api_table(void);

/* What the front ends of the entry points (src/gpu/entry/entry_points.c)
 * call, from src/gpu/loader in a CUDA build and src/gpu/none in a CPU-only
 * one: the backend's table -- loading the module on first use when `load`,
 * else only if it is loaded already -- or NULL when there is none (a
 * CPU-only build, a module missing or failing to load); and the failure
 * of an entry point without it: TF_ERR_UNAVAILABLE, "<what> the CUDA
 * backend, ..." naming why there is none ("no CUDA backend: ..." when
 * what is NULL). */
const tf_cuda_api *tf_cuda_backend(int load);
tf_status tf_cuda_unavailable(const char *what);

/* The module's one export: checks that `core` is the library it was built
 * with (else NULL and the reason in why), keeps it for the shims, and
 * returns tf_cuda_api_table(). */
typedef const tf_cuda_api *(*tf_cuda_module_entry_fn)(const tf_cuda_core_api *core, char *why, size_t why_len);

#ifdef __cplusplus
}
#endif
#endif
