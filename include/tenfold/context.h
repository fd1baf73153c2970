/* SPDX-License-Identifier: BSD-3-Clause */
/* tenfold/context.h — the devices of a run: the tuning policy, the context
 * every operation borrows, the GPUs and the CUDA module. */
#ifndef TENFOLD_CONTEXT_H
#define TENFOLD_CONTEXT_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------- tuning policy */

/* How a run over several GPUs or ranks cuts a mode's rows among them (its
 * "parts"), each part's non-zeros balanced (docs/DESIGN.md "Partitioner"). */
typedef enum tf_partition_schedule {
    TF_PARTITION_AUTO = 0,         /* per mode: longest-first where it lowers the largest part's
                                      non-zeros by more than 2 % of the mean, else contiguous */
    TF_PARTITION_CONTIGUOUS = 1,   /* one range of rows per part, cut where the running sum of
                                      the rows' non-zeros passes each part's share            */
    TF_PARTITION_LONGEST_FIRST = 2 /* AMPED's: rows (light ones in small runs) heaviest first,
                                      each to the part with the fewest non-zeros so far; the
                                      mode's rows relabeled inside the run so that each part's
                                      are one range (results come back in the caller's order) */
} tf_partition_schedule;

/* Kernel choices the library otherwise makes itself, by rule or by timing
 * on first use, and the bounds of its waits. tf_tuning_default lets the
 * library choose everywhere; benchmarks and tests set a field to force one
 * choice and hand the struct to a context (tf_context_opts.tuning).
 *
 * Versioned by its size, so a new knob changes no other structure and
 * breaks no program: `size` is sizeof(tf_tuning) as the caller was compiled
 * (tf_tuning_default sets it), and the library reads that many bytes and
 * no more, giving the knobs it does not find their defaults -- a program
 * built against an older tenfold.h runs with a newer library, and a newer
 * program's knobs that an older library does not know are ignored. Knobs
 * are only ever appended, each 8 bytes wide (int64_t, uint64_t or double),
 * so the struct has no padding and an older size always ends at a knob. */
typedef struct tf_tuning {
    size_t size;                  /* sizeof(tf_tuning) of the caller (tf_tuning_default) */
    /* backend choice */
    int64_t auto_cost;            /* 1 (default): under the auto backend, CP-ALS of a small
                                     problem runs on the CPU when that is estimated to finish
                                     before the GPU's set-up does; 0: the GPU whenever present */
    /* GPU F-COO MTTKRP */
    int64_t fcoo_tune;            /* 1 (default): on a mode's first MTTKRP time the partition
                                     sizes, then the kernel variants at the best size, then
                                     slices; 2: every size with every variant; 0: the
                                     defaults, untimed                                       */
    uint64_t fcoo_tune_nnz;       /* non-zeros a long mode is timed on; 0 = 2^18 per SM      */
    int64_t fcoo_kernel;          /* 0 auto (seg where a mode has segments), 1 scan, 2 seg   */
    int64_t fcoo_variant;         /* seg kernel: 0 timed; 2, 3 or 4 blocks per SM; 5 the
                                     software-pipelined variant                              */
    uint64_t fcoo_part;           /* non-zeros per warp partition of every mode (a multiple
                                     of 32 in 32..65536); 0 = by rule                         */
    uint64_t fcoo_seg_part;       /* the same for seg modes only (then untimed); 0 = by rule */
    uint64_t fcoo_slice;          /* rank pieces per grid row: 0 timed, 16 or 32             */
    int64_t fcoo_vec;             /* 1 (default): 16-byte factor loads where aligned; 0 off  */
    int64_t fcoo_build;           /* 0 (default): the copies are sorted on the GPU when the
                                     COO and the sort's scratch fit its budget, else on the
                                     host; 1 always on the host; 2 on the GPU if at all possible
                                     (F-COO's copies; CP-APR's resident copies: 1 or not) */
    /* GPU MTTKRP on tensors larger than the device (the streamed F-COO path) */
    int64_t stream;               /* 0 (default): the F-COO copies stay in pinned host memory
                                     and stream through the GPU only when no format fits the
                                     device budget (what fits stays resident); 1 always
                                     (tests, benchmarks); 2 never (out of memory instead)    */
    uint64_t stream_chunk;        /* non-zeros per streamed chunk (rounded to whole groups of
                                     32 partitions); 0 = about 32 MiB of copy per chunk       */
    int64_t stream_resident;      /* -1 (default): as many chunks resident as the budget
                                     allows; 0..100: the chunks holding up to that percentage
                                     of every mode's non-zeros                               */
    int64_t stream_pack;          /* 1 (default): a non-zero's product-mode indices go as one
                                     packed key where their bits fit 64, and the values in
                                     fewer bits where that is exact (one power-of-two scale,
                                     an integer range); 2: keys only; 0: neither (4 bytes
                                     per index, the value as stored)                         */
    /* GPU BLCO MTTKRP */
    int64_t blco_resolution;      /* 0 auto, 1 register, 2 hierarchical conflict resolution  */
    int64_t blco_hot;             /* 1 (default): stash for up to 16 heavy rows; 0 off       */
    /* GPU CP-ALS dense steps */
    int64_t cpd_cusolver;         /* 0 (default): one-block solves for R <= 64; 1 cuSOLVER   */
    int64_t cpd_graph;            /* 1 (default): the sweep captured as a CUDA graph; 0 not  */
    int64_t cpd_apply;            /* 0 auto (own kernel for short fp32 factors), 1 own
                                     kernel, 2 cuBLAS gemm                                   */
    int64_t cpd_gram_syrk;        /* 0 (default): Gram by gemm for large R; 1 cuBLAS syrk    */
    int64_t cpd_apply_gram;       /* -1 (default) by rule, 0 never, 1 always (R = 32): apply
                                     and Gram in one pass                                    */
    int64_t cpd_gram_solve_rows;  /* -1 (default) the built-in limit; 0 off; N: Gram +
                                     solve in one launch for factors of up to N rows (<= 256) */
    int64_t cpd_overlap;          /* several GPUs, R <= 32: 1 (default) the factor-row
                                     exchange of a mode runs beside the next mode's MTTKRP
                                     of the non-zeros that need no other GPU's rows; 0 not */
    int64_t gpu_exchange;         /* how factor rows go among GPUs (TF_EXCHANGE): 0 (default)
                                     auto: in one process GPU to GPU on the copy engines
                                     where every pair has peer access, else NCCL where it
                                     loads, else through the host; GPU MPI ranks NCCL where
                                     it loads on every rank and their GPUs are distinct,
                                     else host staging over MPI; 1 NCCL always; 2 host
                                     staging always (pinned copies, MPI between ranks)      */
    /* MPI ranks */
    uint64_t mpi_round_bytes;     /* collectives between ranks (the non-zeros' all-to-all,
                                     the rows' all-gather) move at most this many bytes from
                                     a rank per round; 0 (default) 256 MiB                   */
    /* GPU SDDMM */
    uint64_t sddmm_row_grid;      /* 0 (default) by rule; N: every ROW candidate gets N blocks */
    /* GPU uploads */
    int64_t gpu_staging;          /* 1 (default): large host -> device copies go through the
                                     context's pinned staging buffers (host copy on the
                                     default threads, overlapped with the DMA); 0: plain
                                     cudaMemcpy from pageable memory (slower; tests)          */
    /* tests and measurements */
    int64_t gpu_poison;           /* 1: GPU MTTKRP outputs are filled with NaN before a run  */
    int64_t build_report;         /* 1: GPU plan builds print their phases' times to stderr  */
    /* bounds of the waits on other processes and GPUs (seconds; 0 = the default, 600):
     * past it a collective fails naming who did not answer, instead of hanging */
    double mpi_timeout;           /* every wait of an MPI collective (tf_context_create
                                     of a distributed context sets the process's bound,
                                     tf_mpi_set_timeout, when this is not 0)                 */
    double nccl_timeout;          /* every wait of the GPUs' factor-row exchange (NCCL or
                                     peer copies)                                            */
    /* several GPUs or ranks */
    int64_t partition;            /* how each mode's rows are cut among them
                                     (tf_partition_schedule): 0 (default) per mode by the
                                     predicted imbalance, 1 contiguous, 2 longest-first      */
    /* GPU AO-ADMM */
    int64_t admm_fused;           /* -1 (default): an inner iteration is one fused kernel up
                                     to rank 128, else right-hand side, gemm and prox
                                     apart; 0: always apart (tests, measurements)            */
    /* GPU GCP */
    int64_t gcp_smem;             /* the gradient's pass: -1 (default) 32 KiB of shared
                                     memory per block hold the shortest modes' gradient
                                     rows (as many modes as fit); 0: none (every mode by
                                     global atomics); N: N bytes (at most the GPU's
                                     per-block limit)                                        */
    /* several GPUs in one process (and GPU ranks with the whole tensor) */
    int64_t gpu_shards;           /* 0 (default): each GPU cuts its shards of a mode from the
                                     COO streamed through it and sorts them there, where the
                                     shard stays resident and fits (the COO kept on each GPU
                                     after the first mode where there is room, the later
                                     modes cut from it); 1: the host splits every mode's
                                     shards (the older path; A/B and tests); 2: on the GPUs
                                     wherever resident, without the budget test; 3: as 0,
                                     the COO streamed again for every mode (never kept)     */
} tf_tuning;

/* The defaults in the first `size` bytes of t (size: the caller's
 * sizeof(tf_tuning); the fields past what this library knows are zeroed),
 * and t->size = size. Nothing for NULL or a size below sizeof(size_t).
 * Callers use tf_tuning_default. */
void tf_tuning_init(tf_tuning *t, size_t size);
/* The library's defaults everywhere, and t->size for this header's tf_tuning. */
static inline void tf_tuning_default(tf_tuning *t) { tf_tuning_init(t, sizeof *t); }
/* Applies the TF_* benchmark overrides from the environment to the fields
 * of t within t->size (docs/DESIGN.md lists them; TF_MPI_TIMEOUT and
 * TF_NCCL_TIMEOUT fill the two timeouts). The library reads the environment
 * for its knobs here only, and only when a caller asks; the tenfold tool
 * does for every run. */
void tf_tuning_from_env(tf_tuning *t);

/* ---------------------------------------------------------------- context */

/* A context: the compute devices of a run (none = the CPU, or a GPU), its
 * streams and cuBLAS / cuSOLVER handles (made on first use and kept), the
 * device memory budget and the tuning policy. Create one per run and pass
 * it in the options of plans, CP-ALS, SDDMM and SpTTM; it must outlive
 * them. A NULL context in those options gives each call a private one
 * with the defaults (tf_context_opts_default). One thread at a time. */
typedef struct tf_context tf_context;

typedef struct tf_context_opts {
    tf_backend backend;       /* AUTO (default) takes a GPU when one is
                                 present, else the CPU                                   */
    int device;               /* GPU ordinal (default 0)                                 */
    int ndevices;             /* GPUs to use (default 1). With several, devices[0..ndevices)
                                 are their ordinals (default 0, 1, 2, ...; distinct) and
                                 `device` is ignored: tf_cpd splits every mode's non-zeros
                                 over them by ranges of its index (balanced by non-zeros),
                                 each GPU updates its own factor rows and NCCL shares
                                 them; memory_limit applies to each GPU                  */
    int devices[TF_MAX_GPUS];
    uint64_t memory_limit;    /* device bytes tenfold may hold for this context: plans
                                 are chosen to fit, and an allocation past it fails
                                 with TF_ERR_NOMEM naming it; 0 (default) = no limit
                                 beyond 90 % of the free memory                          */
    int threads;              /* CPU threads, 0 = default                                */
    const tf_tuning *tuning;  /* the tuning policy (tf_tuning_default, then the fields to
                                 force): read by tf_context_create, which keeps a copy;
                                 NULL (default): the library's defaults. A size of 0 (a
                                 struct tf_tuning_default never filled) is TF_ERR_ARG    */
    int distributed;          /* 1: the context spans the ranks of MPI_COMM_WORLD (MPI
                                 started by tf_mpi_start): tf_cpd splits every mode's
                                 non-zeros over the ranks by ranges of its index and
                                 exchanges factor rows: CPU ranks through MPI, or with
                                 backend GPU one GPU per rank (a node's ranks take its
                                 GPUs in order) through NCCL; 0 (default): this process
                                 alone                                                    */
} tf_context_opts;

void tf_context_opts_default(tf_context_opts *o);
tf_status tf_context_create(const tf_context_opts *o, tf_context **out);
void tf_context_free(tf_context *c);
/* TF_BACKEND_CPU or TF_BACKEND_GPU: what the context resolved to (an AUTO
 * context for GPU 0 resolves on the first call that needs to know, so a
 * run that ends on the CPU never starts CUDA; this call resolves it). */
tf_backend tf_context_backend(const tf_context *c);
/* Device bytes a plan may use now on the context's GPU: 90 % of the free
 * memory, or what is left of memory_limit (less what the context's plans
 * and runs hold) where smaller. TF_ERR_UNAVAILABLE without a GPU. */
tf_status tf_context_memory_budget(tf_context *c, uint64_t *bytes);

/* ------------------------------------------------------------ devices */

/* Number of usable CUDA devices: 0 when CUDA is not built in, its module
 * does not load (tf_cuda_module), no NVIDIA driver is visible (none of
 * /dev/nvidiactl, /dev/nvidia0, /dev/dxg, /proc/driver/nvidia, nvidia-modprobe
 * exists: then the answer loads nothing), or no device is present. */
int tf_gpu_count(void);
/* Describes a device: name, multiprocessors, memory. */
tf_status tf_gpu_describe(int device, char *buf, size_t len);
/* NCCL's version (or why several GPUs cannot be used: no libnccl.so.2) and
 * which pairs of GPUs reach each other directly (peer access), one line,
 * e.g. "NCCL 2.28.9; peer access 0-1 yes"; "" without the CUDA backend. */
void tf_gpu_links(char *buf, size_t len);
/* Measured device-to-device copy bandwidth (bytes read + written per
 * second) of a large cudaMemcpy: the ceiling memory-bound kernels are
 * compared with. */
tf_status tf_gpu_copy_bandwidth(int device, double *bytes_per_s);
/* Measured pinned host-to-device copy bandwidth (bytes per second) of a
 * 256 MiB cudaMemcpy: the ceiling of a streamed plan (tf_plan_streamed_bytes). */
tf_status tf_gpu_h2d_bandwidth(int device, double *bytes_per_s);
/* 1 if the CUDA backend is available: the library was built with it and
 * its module loads (the first call loads it; see tf_cuda_module). */
int tf_have_cuda(void);

/* A CUDA build keeps the CUDA backend in a module, libtenfold_cuda.so, that
 * the library loads on the first GPU query or operation, once per process:
 * a run on the CPU never loads CUDA's libraries (~260 MB). It is looked for
 * at $TF_CUDA_MODULE when that is set (a file name; nowhere else then), else
 * beside the library or program that holds libtenfold (the build tree), in
 * its tenfold/ folder (an installed libtenfold.so), in ../lib/tenfold/ (an
 * installed tool) and in the install prefix's lib/tenfold/. Without it the
 * library works as a CPU-only build: no GPUs, and GPU operations fail with
 * TF_ERR_UNAVAILABLE naming the reason. */
typedef enum tf_cuda_module_state {
    TF_CUDA_MODULE_NONE = 0,    /* built without CUDA                          */
    TF_CUDA_MODULE_MISSING = 1, /* not found                                   */
    TF_CUDA_MODULE_FAILED = 2,  /* found, but it did not load                  */
    TF_CUDA_MODULE_FOUND = 3,   /* found, not loaded yet                       */
    TF_CUDA_MODULE_LOADED = 4   /* loaded, or linked into the program          */
} tf_cuda_module_state;
/* Where the module stands, after loading it when `load` is non-zero (with 0
 * it only looks for the file). `where` (may be NULL) gets the module's path
 * when found or loaded ("linked into the program" for test programs), else
 * one line saying why there is none (the places looked in, or the loader's
 * error). Thread-safe. */
tf_cuda_module_state tf_cuda_module(int load, char *where, size_t len);

/* Where a call ran: the optional output of SpTTM (tf_spttm / tf_spttm_time)
 * and of the model values (tf_model_values_ex). */
typedef struct tf_run_info {
    tf_backend backend;     /* TF_BACKEND_CPU or TF_BACKEND_GPU                 */
    char note[256];         /* why an auto run is on the CPU (the GPU could not
                               hold it: "...: running on the CPU"), else ""     */
} tf_run_info;

#ifdef __cplusplus
}
#endif
#endif /* TENFOLD_CONTEXT_H */
