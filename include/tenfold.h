/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tenfold.h — the public C API of tenfold: sparse tensor decomposition and
 * sparse–dense kernels with a CPU backend (OpenMP) and a CUDA backend.
 *
 * This is the only header users include. Conventions:
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
#ifndef TENFOLD_H
#define TENFOLD_H

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
/* Number of threads the CPU backend uses when an option says 0: OpenMP's
 * (OMP_NUM_THREADS, omp_set_num_threads), at most tf_thread_limit(). */
int tf_default_threads(void);
/* The most threads the CPU backend starts: 4 per online CPU, at least 64.
 * A larger thread count -- an option's threads, OMP_NUM_THREADS -- is
 * clamped to it (not an error; the tenfold tool says so in a note). */
int tf_thread_limit(void);

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

/* ------------------------------------------------------------ dense matrix */

typedef struct tf_matrix {
    uint64_t rows;
    uint64_t cols;
    double *data; /* rows*cols, row-major */
} tf_matrix;

tf_status tf_matrix_alloc(tf_matrix *m, uint64_t rows, uint64_t cols);
void tf_matrix_free(tf_matrix *m);

/* ----------------------------------------------------- sparse COO tensor */

typedef struct tf_tensor {
    uint32_t order;                 /* TF_MIN_ORDER..TF_MAX_ORDER          */
    uint64_t nnz;
    uint64_t dims[TF_MAX_ORDER];    /* mode lengths, each 1..2^32          */
    uint32_t *ind[TF_MAX_ORDER];    /* ind[m][k]: 0-based index, k < nnz   */
    double *vals;                   /* nnz values                          */
} tf_tensor;

/* Allocates index and value arrays for nnz non-zeros (contents undefined). */
tf_status tf_tensor_alloc(tf_tensor *t, uint32_t order, const uint64_t *dims, uint64_t nnz);
void tf_tensor_free(tf_tensor *t);
tf_status tf_tensor_copy(const tf_tensor *src, tf_tensor *dst);
/* Checks order, dims, every index < dim and every value finite. */
tf_status tf_tensor_validate(const tf_tensor *t);
/* Sorts the non-zeros lexicographically by the modes in mode_order
 * (mode_order[0] most significant; NULL means 0,1,...,order-1). Stable. */
tf_status tf_tensor_sort(tf_tensor *t, const uint32_t *mode_order);
/* Sorts by 0,1,..., sums duplicate coordinates and drops explicit zeros
 * (also zeros that arise from summing). Counts are returned if non-NULL. */
tf_status tf_tensor_canonicalize(tf_tensor *t, uint64_t *duplicates, uint64_t *zeros);
/* Squared Frobenius norm (under- or overflows for values beyond about
 * 1e+-154; tf_tensor_norm does not). */
double tf_tensor_norm2(const tf_tensor *t);
/* Frobenius norm, summed with the values scaled by a power of two (as
 * LAPACK dnrm2 scales), so it is finite and non-zero for any finite,
 * non-zero values whose norm is representable. */
double tf_tensor_norm(const tf_tensor *t);
/* Plain FROSTT .tns records no dims: reading it back gives each mode the
 * length largest index + 1. Returns the number of modes whose declared
 * length is longer than that (their dims would be lost); implied (may be
 * NULL, TF_MAX_ORDER entries) gets largest index + 1 per mode (0 if nnz = 0). */
uint32_t tf_tensor_implied_dims(const tf_tensor *t, uint64_t *implied);
/* Memory in bytes of the COO arrays. */
uint64_t tf_tensor_bytes(const tf_tensor *t);

/* ------------------------------------------------------------------- files */

typedef enum tf_file_format {
    TF_FILE_AUTO = 0,   /* by content when reading, by extension when writing */
    TF_FILE_TNS,        /* FROSTT text, 1-based, no header                   */
    TF_FILE_TNS_HEADER, /* ParTI: "nmodes" line + dims line, then FROSTT     */
    TF_FILE_SPTENSOR,   /* Tensor Toolbox / pyttb export_data "sptensor"     */
    TF_FILE_BIN,        /* tenfold binary, versioned header with checksum   */
    TF_FILE_MTX         /* Matrix Market coordinate (order-2 tensors)        */
} tf_file_format;

/* Floating-point precision of a computation (plans, tf_read_opts). */
typedef enum tf_precision { TF_DOUBLE = 0, TF_SINGLE } tf_precision;

/* How tf_read_info.index_base was chosen. */
typedef enum tf_base_source {
    TF_BASE_FORMAT = 0, /* fixed by the format (.mtx 1-based, .bin 0-based)   */
    TF_BASE_DETECTED,   /* .tns: 0-based iff any index of any mode is 0      */
    TF_BASE_OPTION      /* .tns: given by tf_read_opts.base                  */
} tf_base_source;

typedef struct tf_read_info {
    tf_file_format format;          /* what was detected                     */
    int compressed;                 /* 0 none, 1 xz, 2 gzip                  */
    uint64_t lines;                 /* text lines read (0 for binary)        */
    uint64_t entries;               /* non-zero lines / records before fixes */
    uint64_t duplicates;            /* coordinates that appeared again (summed) */
    uint64_t zeros;                 /* explicit zeros dropped                */
    int index_base;                 /* 0 or 1: the one index base of the file */
    tf_base_source base_source;     /* how that base was chosen              */
    int declared_dims;              /* 1 if a header declared the dims       */
    uint64_t bytes;                 /* bytes of (decompressed) input         */
    double seconds;                 /* wall time of the read                 */
    /* Matrix Market only: */
    int mtx_symmetric;              /* 1 if symmetric/skew and expanded      */
    int mtx_pattern;                /* 1 if pattern (values set to 1)        */
    uint64_t total_nnz;             /* the whole tensor's non-zeros (those read,
                                       unless tf_read_opts asked for a part) */
    uint64_t checksum;              /* tf_read_opts.collective: the whole
                                       tensor's tf_tensor_checksum (for a .bin
                                       read in parts, its checked checksum);
                                       else 0 (not computed)               */
} tf_read_info;

#define TF_BASE_AUTO (-1)

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

/* Options of the readers. */
typedef struct tf_read_opts {
    int threads; /* 0 = default                                              */
    int base;    /* index base of .tns input: TF_BASE_AUTO (0-based iff any
                  * index of any mode is 0), 0 or 1. Matrix Market is always
                  * 1-based (its spec), tenfold binary 0-based.            */
    tf_progress_fn progress; /* NULL (default): none                      */
    void *progress_user;
    /* parts >= 2: only part `part` (0..parts-1) of the non-zeros, those
     * [nnz part / parts, nnz (part + 1) / parts) of the canonical tensor (the
     * ranks of a distributed run: together the parts are the tensor), read
     * whole, then cut, so the parts are exactly one process's tensor. 0 or
     * 1: all. */
    uint64_t part, parts;
    /* 1 (with parts >= 2): the parts are the ranks of MPI_COMM_WORLD (part
     * = its rank, parts = their number; MPI started by tf_mpi_start) and
     * every rank reads the same input in this call (a collective). A tenfold
     * binary file is then read at the part's offsets only, the ranks making
     * together the checks one process makes of the whole file: its
     * checksum, the first bad non-zero (numbered in the file), and whether
     * the non-zeros are sorted and distinct across the parts' boundaries
     * too (if not, every rank reads the file whole, as one process would:
     * duplicates summed, then keeps its part); so the ranks accept and
     * refuse what one process does, all of them with the same message
     * (tf_last_error_shared). Ranks that read tensors of other order, dims,
     * non-zeros or checksum, or read the input in different ways (one a .bin
     * in parts, one a text file whole), fail with "ranks disagree: ..."
     * (tf_mpi_agree). info->checksum gets the whole tensor's checksum. 0
     * (default): no collective. */
    int collective;
    /* The precision the values are for: the sum of a coordinate's
     * duplicates must be finite in it (TF_DOUBLE, default: a finite
     * double; TF_SINGLE: also every value within the float range, at most
     * FLT_MAX in magnitude), else the read fails naming the lines. */
    tf_precision precision;
} tf_read_opts;

/* threads 0, base TF_BASE_AUTO, no progress callback, the whole tensor. */
void tf_read_opts_default(tf_read_opts *o);
/* Keeps part `part` of `parts` of t's non-zeros, [nnz part / parts,
 * nnz (part + 1) / parts), in place (the ranks' parts of a tensor every
 * rank made, e.g. generated). */
tf_status tf_tensor_keep_part(tf_tensor *t, uint64_t part, uint64_t parts);

/* Reads a tensor from .tns (any header variant), binary, or .mtx, detected
 * by content -- the binary magic, the xz / gzip magic (then the same inside),
 * the %%MatrixMarket banner, else .tns text; a file named *.mtx[.xz|.gz]
 * must start with the banner. path "-" is standard input (from where it
 * stands; named "<stdin>" in messages). xz- and gzip-compressed files and
 * pipes are decompressed and parsed in windows, in memory bounded by the
 * tensor, not the text.
 * The result is canonical (sorted, duplicates summed, zeros dropped).
 * opts may be NULL (defaults). info may be NULL. */
tf_status tf_read_tensor_opts(const char *path, const tf_read_opts *opts, tf_tensor *out,
                              tf_read_info *info);
/* Parses a .tns/.mtx text (or compressed bytes) held in memory (name is
 * used in messages and for the .mtx banner rule). */
tf_status tf_parse_tensor_opts(const char *name, const char *text, size_t len,
                               const tf_read_opts *opts, tf_tensor *out, tf_read_info *info);
/* The same with default options and `threads` (0 = default). */
tf_status tf_read_tensor(const char *path, int threads, tf_tensor *out, tf_read_info *info);
tf_status tf_parse_tensor(const char *name, const char *text, size_t len, int threads,
                          tf_tensor *out, tf_read_info *info);
/* Writes atomically (temporary file + rename). TF_FILE_AUTO picks by
 * extension: .bin/.tfb -> binary, .mtx -> Matrix Market, else FROSTT .tns
 * -- plain, unless a mode's length exceeds its largest index + 1 (see
 * tf_tensor_implied_dims): then the ParTI header form (TF_FILE_TNS_HEADER),
 * which keeps the dims. An explicit TF_FILE_TNS always writes plain FROSTT
 * (such dims are then lost). */
tf_status tf_write_tensor(const char *path, const tf_tensor *t, tf_file_format fmt);
/* The format tf_write_tensor(path, t, fmt) writes (resolves TF_FILE_AUTO). */
tf_file_format tf_write_format(const char *path, const tf_tensor *t, tf_file_format fmt);

/* Dense matrix text files (SPLATT .mat style: one row per line, values
 * separated by spaces; '#' comment lines are allowed when reading; xz /
 * gzip read directly; path "-" is standard input). */
tf_status tf_matrix_read(const char *path, tf_matrix *out);
tf_status tf_matrix_write(const char *path, const tf_matrix *m);

/* --------------------------------------------------------- Kruskal tensor */

typedef struct tf_ktensor {
    uint32_t order;
    uint64_t rank;
    uint64_t dims[TF_MAX_ORDER];
    double *lambda;                     /* rank weights                 */
    tf_matrix factors[TF_MAX_ORDER];    /* dims[m] x rank, row-major    */
} tf_ktensor;

tf_status tf_ktensor_alloc(tf_ktensor *k, uint32_t order, const uint64_t *dims, uint64_t rank);
void tf_ktensor_free(tf_ktensor *k);
/* The files of a Kruskal tensor, written as one factor set:
 *   TF_KTENSOR_SPLATT  <stem>.mode<N>.mat (N = 1..order), <stem>.lambda.mat
 *   TF_KTENSOR_TTB     <stem>.ktensor (Tensor Toolbox / pyttb export_data;
 *                      the same numbers again in one file)
 * and <stem>.set, the set's manifest (a short text file naming the set's
 * files and their generation). How a set is switched:
 *   - the writer takes <stem>.lock (flock; the file is removed when it is
 *     done): a second writer of the same stem, in this or another process,
 *     fails at once ("<stem>: another tenfold run is writing this factor set
 *     (pid N)");
 *   - every file is written to a temporary name beside it and fsynced, then
 *     the manifest, which names those temporaries, is renamed into place: that
 *     one rename is the switch. The temporaries are renamed over the files
 *     after it, and files of the previous set that the new one does not have
 *     (a mode beyond the new order, the .ktensor under SPLATT alone) are
 *     removed;
 *   - readers that go through the manifest (tf_ktensor_read, `tenfold cpd
 *     --init`) see the whole previous set or the whole new one, also while
 *     the files are being renamed and after the writer was killed (SIGKILL)
 *     in the middle: they read a temporary the manifest names while it
 *     exists. The next writer of the stem finishes such an interrupted switch
 *     and removes the temporaries a killed writer left (it recorded them in
 *     the lock file before creating them);
 *   - a failure before the switch leaves the previous set as it was and no
 *     temporary behind.
 * A program reading <stem>.mode<N>.mat itself reads one file at a time: it
 * sees each file whole, old or new, but not a set that cannot change under
 * it (use tf_ktensor_read, or no concurrent writer). */
#define TF_KTENSOR_SPLATT 1u
#define TF_KTENSOR_TTB 2u
#define TF_KTENSOR_ALL 3u
tf_status tf_ktensor_write(const char *stem, const tf_ktensor *k, unsigned flags);
/* tf_ktensor_write(stem, k, TF_KTENSOR_SPLATT). */
tf_status tf_ktensor_write_splatt(const char *stem, const tf_ktensor *k);
/* The Tensor Toolbox / pyttb export_data "ktensor" file alone, at path (one
 * file: no manifest, no lock). */
tf_status tf_ktensor_write_ttb(const char *path, const tf_ktensor *k);

/* tf_ktensor_write in steps, with other files switched together with the
 * set (a report that lists the set's files):
 *   open    checks the places (as tf_output_check), takes the lock, finishes
 *           an interrupted switch of the stem and removes a killed writer's
 *           temporaries; hold it from the start of a long computation so a
 *           second writer fails before it computes
 *   put     writes the factor files to their temporaries (once)
 *   add     one more file of the same switch: written to its temporary now
 *           and renamed with the set (its path must not be one of the set's
 *           files); standard output, a FIFO or a device is written at once,
 *           before the switch, so a failure there leaves the previous set
 *   commit  writes the manifest and switches; then frees o (also on failure)
 *   abort   removes the temporaries, releases the lock, frees o */
typedef struct tf_ktensor_out tf_ktensor_out;
tf_status tf_ktensor_out_open(const char *stem, unsigned flags, tf_ktensor_out **o);
tf_status tf_ktensor_out_put(tf_ktensor_out *o, const tf_ktensor *k);
tf_status tf_ktensor_out_add(tf_ktensor_out *o, const char *path, const void *data, size_t len);
tf_status tf_ktensor_out_commit(tf_ktensor_out *o);
void tf_ktensor_out_abort(tf_ktensor_out *o);

/* Reads the factor set <stem> (as tf_ktensor_write writes it) into k: with
 * <stem>.set, exactly the files it names, as one snapshot (whole old or
 * whole new while a writer switches it: a manifest that changed during the
 * read makes it read again); without one (files from elsewhere, or written
 * by an older tenfold), <stem>.mode1.mat, .mode2.mat, ... for as long as
 * they exist, and <stem>.lambda.mat if present. k->order is the number of
 * factor files (checked against a tensor by the caller: it may be 1), k->rank
 * their column count (the same in every file), k->dims their row counts,
 * k->lambda the lambda file's values or ones; *has_lambda (may be NULL) says
 * which. Messages name the files as <stem>.mode<N>.mat. */
tf_status tf_ktensor_read(const char *stem, tf_ktensor *k, int *has_lambda);

/* ---------------------------------------------------------- output files
 * Every writer of the library (tf_write_tensor, tf_matrix_write,
 * tf_ktensor_write*, tf_write_file) treats its path alike:
 *   "-", /dev/stdout, /dev/stderr, /dev/fd/N   that open descriptor, written
 *                                   directly (no temporary, no rename)
 *   a FIFO, character or block device, socket  opened and written directly
 *   a symbolic link                 followed (chains too; a dangling link's
 *                                   target is created); its target as below
 *   a regular file or a new name    written to "<file>.tmp.<pid>.<n>" in the
 *                                   same directory (when that name is longer
 *                                   than NAME_MAX: "<start of the name>~<hash>
 *                                   .tmp.<pid>.<n>"), fsynced, renamed over it
 *                                   (an existing file keeps its permissions)
 *   a directory                     an error naming the path
 * Library code never installs signal handlers; a program that wants its
 * temporaries removed on SIGINT / SIGTERM calls tf_output_cleanup from its
 * handler. */

/* Checks that path can be written, before the work that produces it:
 * creates and removes a temporary file in the target's directory (catches
 * missing directories, permissions and read-only file systems, also as
 * root); a directory is an error. *to_stdout (may be NULL) is set to 1
 * when the output is the process's standard output. */
tf_status tf_output_check(const char *path, int *to_stdout);
/* Writes len bytes to path (by the rules above). */
tf_status tf_write_file(const char *path, const void *data, size_t len);
/* Removes the temporary files that are being written now and the lock
 * files held; a set whose switch has begun (see tf_ktensor_write) is
 * finished instead. Returns 1 when it finished a switch and removed no
 * temporary (the outputs being written are complete: a handler may exit 0),
 * else 0. Async-signal-safe (unlink and rename only): meant for SIGINT /
 * SIGTERM handlers that then exit. */
int tf_output_cleanup(void);

/* What a path names, to tell when two of a run's inputs and outputs are the
 * same file (an output must not overwrite an input or another output). */
typedef struct tf_path_id {
    int kind;                    /* 0: nothing to compare (a character device
                                    such as /dev/null or a terminal, a path
                                    that does not resolve); 1: an existing
                                    file, FIFO or open stream; 2: a new name */
    unsigned long long dev, ino; /* 1: of the file; 2: of its directory   */
    char name[256];              /* 2: the name in that directory         */
} tf_path_id;
/* output = 1: the file a writer would write (symlinks followed as above,
 * "-" and /dev/fd/N the descriptor's file); output = 0: the file an input
 * path reads ("-" standard input; nothing when it does not exist). */
void tf_path_id_get(const char *path, int output, tf_path_id *id);
/* 1 when both name the same file (device and inode, or the same new name in
 * the same directory). */
int tf_path_id_same(const tf_path_id *a, const tf_path_id *b);

/* ------------------------------------------- tuning policy and context */

typedef enum tf_backend {
    TF_BACKEND_AUTO = 0, /* GPU when one is present and supported, else CPU */
    TF_BACKEND_CPU,
    TF_BACKEND_GPU
} tf_backend;

/* Kernel choices the library otherwise makes itself, by rule or by timing
 * on first use. tf_tuning_default lets the library choose everywhere;
 * benchmarks and tests set a field to force one choice. */
typedef struct tf_tuning {
    /* backend choice */
    int auto_cost;            /* 1 (default): under the auto backend, CP-ALS of a small
                                 problem runs on the CPU when that is estimated to finish
                                 before the GPU's set-up does; 0: the GPU whenever present */
    /* GPU F-COO MTTKRP */
    int fcoo_tune;            /* 1 (default): on a mode's first MTTKRP time the partition
                                 sizes, then the kernel variants at the best size, then
                                 slices; 2: every size with every variant; 0: the
                                 defaults, untimed                                       */
    uint64_t fcoo_tune_nnz;   /* non-zeros a long mode is timed on; 0 = 2^18 per SM      */
    int fcoo_kernel;          /* 0 auto (seg where a mode has segments), 1 scan, 2 seg   */
    int fcoo_variant;         /* seg kernel: 0 timed; 2, 3 or 4 blocks per SM; 5 the
                                 software-pipelined variant                              */
    uint32_t fcoo_part;       /* non-zeros per warp partition of every mode (a multiple
                                 of 32 in 32..65536); 0 = by rule                         */
    uint32_t fcoo_seg_part;   /* the same for seg modes only (then untimed); 0 = by rule */
    uint32_t fcoo_slice;      /* rank pieces per grid row: 0 timed, 16 or 32             */
    int fcoo_vec;             /* 1 (default): 16-byte factor loads where aligned; 0 off  */
    int fcoo_build;           /* 0 (default): the copies are sorted on the GPU when the
                                 COO and the sort's scratch fit its budget, else on the
                                 host; 1 always on the host; 2 on the GPU if at all possible */
    /* GPU MTTKRP on tensors larger than the device (the streamed F-COO path) */
    int stream;               /* 0 (default): the F-COO copies stay in pinned host memory
                                 and stream through the GPU only when no format fits the
                                 device budget (what fits stays resident); 1 always
                                 (tests, benchmarks); 2 never (out of memory instead)    */
    uint64_t stream_chunk;    /* non-zeros per streamed chunk (rounded to whole groups of
                                 32 partitions); 0 = about 32 MiB of copy per chunk       */
    int stream_resident;      /* -1 (default): as many chunks resident as the budget
                                 allows; 0..100: the chunks holding up to that percentage
                                 of every mode's non-zeros                               */
    int stream_pack;          /* 1 (default): a non-zero's product-mode indices go as one
                                 packed key where their bits fit 64, and the values in
                                 fewer bits where that is exact (one power-of-two scale,
                                 an integer range); 2: keys only; 0: neither (4 bytes
                                 per index, the value as stored)                         */
    /* GPU BLCO MTTKRP */
    int blco_resolution;      /* 0 auto, 1 register, 2 hierarchical conflict resolution  */
    int blco_hot;             /* 1 (default): stash for up to 16 heavy rows; 0 off       */
    /* GPU CP-ALS dense steps */
    int cpd_cusolver;         /* 0 (default): one-block solves for R <= 64; 1 cuSOLVER   */
    int cpd_graph;            /* 1 (default): the sweep captured as a CUDA graph; 0 not  */
    int cpd_apply;            /* 0 auto (own kernel for short fp32 factors), 1 own
                                 kernel, 2 cuBLAS gemm                                   */
    int cpd_gram_syrk;        /* 0 (default): Gram by gemm for large R; 1 cuBLAS syrk    */
    int cpd_apply_gram;       /* -1 (default) by rule, 0 never, 1 always (R = 32): apply
                                 and Gram in one pass                                    */
    int64_t cpd_gram_solve_rows; /* -1 (default) the built-in limit; 0 off; N: Gram +
                                 solve in one launch for factors of up to N rows (<= 256) */
    int cpd_overlap;          /* several GPUs, R <= 32: 1 (default) the factor-row
                                 exchange of a mode runs beside the next mode's MTTKRP
                                 of the non-zeros that need no other GPU's rows; 0 not */
    int gpu_exchange;         /* several GPUs in one process: 0 (default) the factor rows
                                 go GPU to GPU on the copy engines where every pair has
                                 peer access, else through NCCL; 1 NCCL always (MPI
                                 ranks always use NCCL)                                  */
    /* MPI ranks */
    uint64_t mpi_round_bytes; /* collectives between ranks (the non-zeros' all-to-all,
                                 the rows' all-gather) move at most this many bytes from
                                 a rank per round; 0 (default) 256 MiB                   */
    int partition;            /* several GPUs or ranks: how each mode's rows are cut among
                                 them (tf_partition_schedule): 0 (default) per mode by the
                                 predicted imbalance, 1 contiguous, 2 longest-first      */
    /* GPU SDDMM */
    uint32_t sddmm_row_grid;  /* 0 (default) by rule; N: every ROW candidate gets N blocks */
    /* GPU uploads */
    int gpu_staging;          /* 1 (default): large host -> device copies go through the
                                 context's pinned staging buffers (host copy on the
                                 default threads, overlapped with the DMA); 0: plain
                                 cudaMemcpy from pageable memory (slower; tests)          */
    /* tests and measurements */
    int gpu_poison;           /* 1: GPU MTTKRP outputs are filled with NaN before a run  */
    int build_report;         /* 1: GPU plan builds print their phases' times to stderr  */
} tf_tuning;

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

void tf_tuning_default(tf_tuning *t);
/* Applies the TF_* benchmark overrides from the environment to t
 * (docs/DESIGN.md lists them). The library reads the environment here
 * only, and only when a caller asks; the tenfold tool does for every run. */
void tf_tuning_from_env(tf_tuning *t);

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
    tf_tuning tuning;
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

/* ------------------------------------------------------- MTTKRP plans */

typedef enum tf_format {
    TF_FORMAT_AUTO = 0,
    TF_FORMAT_COO,   /* plain coordinate list                               */
    TF_FORMAT_CSF,   /* per-mode compressed sparse fibres (CPU)             */
    TF_FORMAT_FCOO,  /* flagged COO (GPU)                                   */
    TF_FORMAT_BLCO   /* blocked linearised coordinates (GPU)                */
} tf_format;

/* Where the array of a tf_dense is. */
typedef enum tf_memory {
    TF_MEMORY_AUTO = 0, /* told from the pointer: memory of a GPU of the plan (device
                           or managed memory, cudaPointerGetAttributes) or host  */
    TF_MEMORY_HOST,     /* host memory (pageable or pinned)                       */
    TF_MEMORY_DEVICE    /* GPU memory of a GPU of the plan (a CUDA allocation)    */
} tf_memory;

/* A dense operand of a plan run (SDDMM, MTTKRP), in host or GPU memory:
 * rows x cols, row-major, ld elements from one row's start to the next
 * (0 = cols), each a double (TF_DOUBLE) or a float (TF_SINGLE). A GPU plan checks `memory`
 * against the pointer (a GPU array called host, or a host array called
 * device, is an error, not a crash). */
typedef struct tf_dense {
    void *data;
    uint64_t rows, cols, ld;
    tf_precision precision;
    tf_memory memory;
} tf_dense;

/* A host tf_matrix as a tf_dense (double, ld = cols, TF_MEMORY_HOST). */
tf_dense tf_dense_host(const tf_matrix *m);

typedef struct tf_plan_opts {
    tf_backend backend;
    tf_format format;
    tf_precision precision;
    int threads;        /* CPU threads, 0 = default                    */
    int device;         /* GPU ordinal                                  */
    uint64_t rank_hint; /* expected rank (lets a backend size buffers)  */
    tf_context *context; /* devices, budget, tuning; NULL = a private default one */
    tf_progress_fn progress; /* the build's progress (tf_progress); NULL = none */
    void *progress_user;
} tf_plan_opts;

typedef struct tf_plan tf_plan;

void tf_plan_opts_default(tf_plan_opts *o);
/* Builds the data structure for MTTKRP on every mode of X. X must be
 * canonical or at least valid; the plan keeps its own copy of what it needs. */
tf_status tf_plan_build(const tf_tensor *X, const tf_plan_opts *o, tf_plan **out);
/* out (dims[mode] x R) = MTTKRP of X with factors[0..order-1] (dims[m] x R),
 * factors[mode] is not read. out is fully overwritten. On the GPU with
 * F-COO the first call for a mode (and for each new R) also times the
 * format's partition sizes and kernel variants and keeps the fastest, so
 * it takes longer. */
tf_status tf_plan_mttkrp(tf_plan *p, uint32_t mode, const tf_matrix *factors, tf_matrix *out);

typedef struct tf_mttkrp_run_opts {
    void *stream; /* GPU: a cudaStream_t to queue the run on, after the work already
                     there; when out is in GPU memory the call then returns at
                     once (out is written when the stream reaches that point).
                     NULL (default): the legacy default stream, and the call
                     returns when out is written. Ignored on the CPU.        */
} tf_mttkrp_run_opts;

/* tf_plan_mttkrp with dense operands in host or GPU memory: out (dims[mode]
 * x R, R = out->cols >= 1) = MTTKRP of the plan's tensor with factors[m]
 * (dims[m] x R) for m != mode (factors[mode] is not read; factors holds
 * order entries). Host arrays hold doubles or floats (any ld; what is not
 * doubles with ld = cols is converted on the host). A GPU plan (one GPU)
 * reads GPU arrays of its precision on its device in place (no host copy)
 * when ld = R and the data are 16-byte aligned, else copies them on the
 * device first, and writes a GPU out in place likewise; host and GPU arrays
 * may be mixed. A CPU plan, or one over several GPUs, takes host arrays
 * only. ro may be NULL (defaults). A wrong shape, precision or memory is
 * TF_ERR_ARG naming the array ("factor 2", "out"). tf_plan_mttkrp is this
 * with host doubles. */
tf_status tf_plan_mttkrp_dense(tf_plan *p, uint32_t mode, const tf_dense *factors, const tf_dense *out,
                               const tf_mttkrp_run_opts *ro);
/* Benchmark helper: `warmup` untimed then `reps` timed MTTKRPs of `mode`;
 * times_ms[0..reps-1] receives each run's milliseconds. GPU plans keep the
 * factors on the device and time with CUDA events; CPU plans use the wall
 * clock. out receives the result of the last run. */
tf_status tf_plan_time_mttkrp(tf_plan *p, uint32_t mode, const tf_matrix *factors, tf_matrix *out,
                              int warmup, int reps, double *times_ms);
void tf_plan_free(tf_plan *p);
/* Human-readable description ("cpu csf, 2 threads") and memory in bytes. */
const char *tf_plan_describe(const tf_plan *p);
/* Why a TF_BACKEND_AUTO plan runs on the CPU although a GPU is present
 * (the problem does not fit the GPU's memory budget), or a slower fallback
 * a GPU plan took (host memory could not be pinned for streaming); ""
 * otherwise. */
const char *tf_plan_note(const tf_plan *p);
uint64_t tf_plan_bytes(const tf_plan *p);
/* Bytes copied from host to device memory by one MTTKRP of `mode`: 0 for
 * a plan whose tensor is resident on its device, else what streams of it
 * (the F-COO copies that do not fit the GPU's budget; tf_tuning.stream). */
uint64_t tf_plan_streamed_bytes(const tf_plan *p, uint32_t mode);
/* The most host memory the build held at once above what was held before
 * it: the plan's own arrays and the builders' scratch, counted over
 * tenfold's allocations (not pinned or device memory; allocations made by
 * other threads during the build count too). */
uint64_t tf_plan_build_peak(const tf_plan *p);
tf_backend tf_plan_backend(const tf_plan *p);
tf_format tf_plan_format(const tf_plan *p);

/* Plain float64 reference MTTKRP (single-threaded, no reordering); the
 * yardstick the tests compare every kernel with. */
tf_status tf_mttkrp_reference(const tf_tensor *X, uint32_t mode, const tf_matrix *factors,
                              tf_matrix *out);

/* Names <-> enums for the CLI ("cpu", "csf", "double", ...). Return -1 if unknown. */
int tf_backend_parse(const char *s);
int tf_format_parse(const char *s);
const char *tf_backend_name(tf_backend b);
const char *tf_format_name(tf_format f);

/* ------------------------------------------------------------- CP-ALS */

typedef struct tf_cpd_iter {
    uint32_t iter;     /* 1-based                         */
    double fit;
    double dfit;       /* fit - previous fit               */
    double seconds;    /* wall time of this iteration     */
    /* This iteration's share of the step times of tf_cpd_report (seconds,
     * measured the same way): MTTKRP summed over the modes, the dense
     * steps, the fit. */
    double t_mttkrp;
    double t_dense;
    double t_fit;
} tf_cpd_iter;

typedef void (*tf_cpd_callback)(const tf_cpd_iter *it, void *user);

/* Largest CP-ALS rank (tf_cpd and `tenfold cpd -r`): the R x R LAPACK
 * workspaces must fit an int. MTTKRP, SpTTM and SDDMM kernels have no
 * such limit. */
#define TF_MAX_RANK 16384u

/* How CP-ALS starts when tf_cpd_opts.init is NULL. */
typedef enum tf_cpd_start {
    TF_START_RANDOM = 0, /* factors uniform in [0,1) drawn from seed (default)      */
    TF_START_NVECS = 1   /* factors 2..N: the R leading left singular vectors of the
                            mode-n unfoldings (tf_nvecs; the Tensor Toolbox's and
                            pyttb's init 'nvecs', tensorly's 'svd'). Factor 1 is
                            not needed (CP-ALS solves for it first) and starts at
                            zero; columns past a mode's length (R > dims[n]) are
                            filled as the random start would fill them. Not
                            with distributed_input (no rank holds all of X). */
} tf_cpd_start;

typedef struct tf_cpd_opts {
    uint64_t rank;          /* 1..TF_MAX_RANK                             */
    uint32_t max_iters;     /* default 50                                 */
    double tol;             /* stop when |dfit| < tol, default 1e-5       */
    uint64_t seed;          /* default TF_DEFAULT_SEED                    */
    int threads;            /* 0 = default                                */
    tf_backend backend;
    tf_format format;
    tf_precision precision;
    int device;
    tf_cpd_callback callback; /* called after every iteration (may be NULL) */
    void *user;
    tf_context *context;      /* devices, budget, tuning; NULL = a private one */
    tf_progress_fn progress;  /* progress of building the plan / backend
                                 (tf_progress); NULL = none                     */
    void *progress_user;
    const tf_ktensor *init;   /* the start; NULL (default) = the one `start`
                                 names (random: factors uniform in [0,1)
                                 drawn from seed). Else order, dims and
                                 rank as X and rank, factors[m] dims[m] x rank,
                                 finite; lambda (NULL = all 1) is folded into
                                 factors[0]. CP-ALS solves for factor 1 from the
                                 others first, so factors[1..] steer the run; a
                                 previous result continues it.                 */
    int distributed_input;    /* a distributed context (tf_context_opts.distributed): 1
                                 when X holds only this rank's part of the non-zeros
                                 (tf_read_opts.part / parts, tf_tensor_keep_part; dims
                                 are the whole tensor's): the ranks send each other the
                                 non-zeros of every mode's rows, so no rank holds the
                                 whole tensor; 0 (default): every rank holds all of X */
    const volatile int *stop; /* NULL (default) or a flag read after every
                                 iteration (after the callback): non-zero ends
                                 the run there with the factors so far, as a
                                 success with rep->stopped = 1. The callback or
                                 a signal handler may set it (bindings: a
                                 Python callback, Ctrl-C).                     */
    tf_cpd_start start;       /* the start when init is NULL: TF_START_RANDOM
                                 (default) or TF_START_NVECS                   */
} tf_cpd_opts;

#define TF_DEFAULT_SEED 20240601ULL

typedef struct tf_cpd_report {
    uint32_t iters;
    int converged;
    double fit;
    double t_build;                     /* plan construction               */
    /* Step times in seconds, summed over iterations (GPU: CUDA events on
     * the device, the iteration queued without waits; CPU: wall clock). */
    double t_mttkrp[TF_MAX_ORDER];      /* per mode                        */
    double t_dense;                     /* Gram, Hadamard, solve, normalise */
    double t_fit;                       /* fit computation                 */
    double t_total;                     /* whole tf_cpd call               */
    uint64_t pinv_fallbacks;            /* solves that fell back to pinv   */
    char plan[96];                      /* tf_plan_describe of the plan    */
    char note[256];                     /* why an auto run is not on the GPU it
                                           would have used ("GPU 0 ... : running
                                           on the CPU"), "" otherwise        */
    uint64_t build_peak_bytes;          /* host memory the build held at most
                                           above what was held before it, as
                                           tf_plan_build_peak counts it     */
    int stopped;                        /* 1 if tf_cpd_opts.stop ended the run */
    /* Several GPUs or ranks (else 0): how many took part, the factor-row
     * exchange time (seconds, summed over iterations; part of t_dense) and
     * the load imbalance of the shards: max over modes of the largest
     * part's non-zeros over the mean, minus 1 (0.01 = 1 %). */
    int parts;
    double t_exchange;
    double imbalance;
    uint64_t device_bytes;              /* GPU memory the run held after its build,
                                           all GPUs of this process (0 on the CPU) */
    double t_init;                      /* computing the start (TF_START_NVECS;
                                           part of t_total), else 0          */
    /* Several GPUs or ranks: per mode, the schedule its rows were cut by
     * (TF_PARTITION_CONTIGUOUS or TF_PARTITION_LONGEST_FIRST) and that cut's
     * imbalance (`imbalance` is the largest of them). */
    int schedule[TF_MAX_ORDER];
    double mode_imbalance[TF_MAX_ORDER];
} tf_cpd_report;

void tf_cpd_opts_default(tf_cpd_opts *o);
/* CP-ALS. out is allocated by the call (free with tf_ktensor_free). Any
 * finite values work: when the largest |value| is outside 2^-40..2^40 the
 * iteration runs on a copy of the values scaled by an exact power of two
 * (safe in fp32 too) and lambda is scaled back; fits are scale-invariant. */
tf_status tf_cpd(const tf_tensor *X, const tf_cpd_opts *o, tf_ktensor *out, tf_cpd_report *rep);
/* Fit 1 - ||X - K|| / ||X|| of a Kruskal tensor, computed directly (for
 * tests); X and lambda are scaled by a power of two first, so values near
 * the ends of the double range work. */
tf_status tf_ktensor_fit(const tf_tensor *X, const tf_ktensor *K, double *fit);

/* The leading mode-n vectors of X: the r leading left singular vectors of
 * the unfolding X_(n) (dims[n] x the product of the other lengths), i.e.
 * the eigenvectors of the Gram X_(n) X_(n)^T with the r largest eigenvalues,
 * computed without forming X_(n): its columns are the distinct index tuples
 * of the other modes (the non-zeros sorted by those modes, as SpTTM's
 * fibres), and the Gram is either formed from them (sum over fibres of the
 * outer products of their values) or applied as Y = X_(n) (X_(n)^T V), two
 * sparse passes. Columns in decreasing eigenvalue order, each with unit
 * norm and its largest-magnitude entry positive (the first such entry, as
 * pyttb's sptensor.nvecs flips them). */
typedef enum tf_nvecs_method {
    TF_NVECS_AUTO = 0,     /* DENSE for dims[n] <= 1024; else SUBSPACE on the formed
                              Gram when dims[n] <= 4096 and forming it costs less
                              than ~20 sparse passes, else SUBSPACE on the sparse
                              operator                                            */
    TF_NVECS_DENSE = 1,    /* the Gram formed (dims[n]^2 doubles, at most 16384
                              rows), eigenvectors by LAPACK dsyevr: exact         */
    TF_NVECS_SUBSPACE = 2  /* block subspace iteration on the sparse operator:
                              r + 10 columns from a fixed random start, each step
                              a Chebyshev filter of degree <= 8 (damping the
                              eigenvalues below the block's smallest Ritz value;
                              converged leading vectors locked and deflated),
                              then Rayleigh-Ritz (dsyevd), until every residual
                              ||G u - t u|| <= tol * t_1                           */
} tf_nvecs_method;

typedef struct tf_nvecs_opts {
    int threads;             /* 0 = default                                        */
    tf_nvecs_method method;  /* default TF_NVECS_AUTO                              */
    double tol;              /* subspace iteration: relative residual, default 1e-12 */
    uint32_t max_iters;      /* subspace iteration: at most this many applications of
                                G (default 3000); then the vectors so far,
                                info->residual says how close they are             */
    uint64_t seed;           /* the subspace iteration's random start (default
                                TF_DEFAULT_SEED)                                   */
} tf_nvecs_opts;

typedef struct tf_nvecs_info {
    tf_nvecs_method method;  /* TF_NVECS_DENSE or TF_NVECS_SUBSPACE: what ran      */
    int formed_gram;         /* 1 when the Gram was formed (DENSE, or SUBSPACE on it) */
    uint32_t iters;          /* SUBSPACE: applications of G to the block (0 for DENSE) */
    double residual;         /* largest ||G u - t u|| / t_1 of the r vectors         */
    double seconds;          /* the whole call                                       */
} tf_nvecs_info;

void tf_nvecs_opts_default(tf_nvecs_opts *o);
/* out (allocated by the call: dims[mode] x r, row-major) gets the vectors;
 * values (NULL, or r doubles) the eigenvalues of the Gram (squared singular
 * values), decreasing. 1 <= r <= dims[mode]. opts and info may be NULL. */
tf_status tf_nvecs(const tf_tensor *X, uint32_t mode, uint64_t r, const tf_nvecs_opts *opts, tf_matrix *out,
                   double *values, tf_nvecs_info *info);

/* ------------------------------------------------------- synthetic data */

typedef struct tf_gen_opts {
    uint32_t order;
    uint64_t dims[TF_MAX_ORDER];
    uint64_t nnz;                   /* exact number of distinct non-zeros   */
    double alpha[TF_MAX_ORDER];     /* per-mode power-law skew in [0, 1); 0 = uniform */
    uint64_t seed;
    uint64_t rank;                  /* >0: values from a planted rank-R model */
    double noise;                   /* relative Gaussian noise on planted values */
    int threads;                    /* 0 = default (OpenMP); the output does not depend on it */
} tf_gen_opts;

/* Index of mode d: perm_d[floor(d * u^(1/(1-alpha)))], u ~ U[0,1), perm_d a
 * fixed random permutation; the tensor holds the first nnz distinct
 * coordinates of the sequence of draws (duplicates rejected), sorted.
 * Deterministic for a given seed, whatever the thread count; parallel
 * (OpenMP, o->threads). Peak memory about 24 bytes per draw (coordinates
 * of up to 64 bits), then 16 per draw plus the COO. */
tf_status tf_generate(const tf_gen_opts *o, tf_tensor *out);

/* ------------------------------------------------------- SDDMM and SpTTM */

/* Sparse matrix in compressed sparse row form. Column indices within a row
 * are ascending (tf_csr_from_coo sorts them); duplicates are allowed. */
typedef struct tf_csr {
    uint64_t rows;
    uint64_t cols;
    uint64_t nnz;
    uint64_t *rowptr;   /* rows + 1 offsets, rowptr[0] = 0, rowptr[rows] = nnz */
    uint32_t *colind;   /* nnz column indices                                  */
    double *vals;       /* nnz values                                          */
} tf_csr;

tf_status tf_csr_alloc(tf_csr *c, uint64_t rows, uint64_t cols, uint64_t nnz);
void tf_csr_free(tf_csr *c);
/* From an order-2 tensor (non-zeros in any order; mode 0 = rows). */
tf_status tf_csr_from_coo(const tf_tensor *S, tf_csr *out);
/* Back to an order-2 COO tensor in row-major order (explicit zeros kept). */
tf_status tf_csr_to_coo(const tf_csr *S, tf_tensor *out);
/* Checks shape, rowptr monotonicity, column bounds and finite values. */
tf_status tf_csr_validate(const tf_csr *S);

/* SDDMM, cuSPARSE semantics: with A (M x K) and B (N x K) dense row-major
 * and S (M x N) sparse, the output holds one value per non-zero of S:
 *   TF_SDDMM_SAMPLE: P = alpha * (A B^T) o spy(S) + beta * S
 *   TF_SDDMM_SCALE:  P = alpha * (A B^T) o S      + beta * S   (the paper's S o (A B^T))
 * K = 0 gives P = beta * S; nnz = 0 does nothing; neither launches a kernel. */
typedef enum tf_sddmm_op { TF_SDDMM_SAMPLE = 0, TF_SDDMM_SCALE } tf_sddmm_op;

typedef enum tf_sddmm_algo {
    TF_SDDMM_ALGO_AUTO = 0, /* CPU: OpenMP kernel; GPU: the fastest of a few ROW, SM-L2
                               and SM-SM configurations, timed on S before the run  */
    TF_SDDMM_ALGO_SM_L2,    /* GPU: column panels, active rows of A in shared memory  */
    TF_SDDMM_ALGO_SM_SM,    /* GPU: A and B tiles both in shared memory               */
    TF_SDDMM_ALGO_ROW,      /* GPU: non-zero-parallel in CSR order, A and B via L1/L2 */
    TF_SDDMM_ALGO_CUSPARSE, /* GPU: cusparseSDDMM (for comparison)                    */
    TF_SDDMM_ALGO_REFERENCE /* CPU: plain float64 reference                           */
} tf_sddmm_algo;

typedef struct tf_sddmm_opts {
    tf_sddmm_op op;         /* default TF_SDDMM_SAMPLE                          */
    double alpha;           /* default 1                                         */
    double beta;            /* default 0                                         */
    tf_backend backend;     /* default TF_BACKEND_AUTO                           */
    tf_sddmm_algo algo;     /* default TF_SDDMM_ALGO_AUTO                        */
    tf_precision precision; /* default TF_DOUBLE (inputs and output stay double) */
    int threads;            /* CPU threads, 0 = default                          */
    int device;             /* GPU ordinal                                       */
    uint32_t tile_j;        /* GPU column-panel width, 0 = L2-capacity model     */
    uint32_t tile_k;        /* GPU K-slice, 0 = quick auto-tune                  */
    uint32_t vwarp;         /* GPU ROW: lanes per non-zero (1, 2, 4, .., 32), 0 = auto-tune */
    uint32_t nper;          /* GPU ROW: non-zeros per virtual warp, 0 = auto-tune */
    int a_regs;             /* GPU ROW: 1 keeps a lane's slice of A's row in registers
                               (when one pass covers K), -1 reads A through L1, 0 = auto-tune */
    tf_context *context;    /* devices, tuning; NULL = a private default one       */
} tf_sddmm_opts;

/* What a run chose (filled when the info pointer is non-NULL). */
typedef struct tf_sddmm_info {
    tf_backend backend;     /* TF_BACKEND_CPU or TF_BACKEND_GPU                  */
    tf_sddmm_algo algo;     /* the algorithm that ran                            */
    uint32_t tile_i;        /* GPU: rows of A staged per thread block            */
    uint32_t tile_j;        /* GPU: column-panel width                           */
    uint32_t tile_k;        /* GPU: K-slice                                      */
    uint32_t vwarp;         /* GPU: threads per non-zero (virtual warp)          */
    uint32_t nper;          /* GPU ROW: non-zeros per virtual warp (tiles are 0) */
    int a_regs;             /* GPU ROW: 1 if A's row was kept in registers       */
    uint64_t blocks;        /* GPU: thread blocks per launch                     */
    uint32_t panels;        /* row panels of S the plan runs (tf_sddmm_plan_panel):
                               one per GPU of a context of several GPUs, else 1;
                               with several, the fields above are those of the
                               first panel with non-zeros                        */
    char note[256];         /* why an auto run is on the CPU (the GPU could not
                               hold it: "...: running on the CPU"), else ""      */
} tf_sddmm_info;

void tf_sddmm_opts_default(tf_sddmm_opts *o);
/* An algorithm's name as the tool spells it: "auto", "sm-l2", "sm-sm", "row",
 * "cusparse", "reference" ("unknown" otherwise). A CPU run's info says auto
 * for its OpenMP kernel. */
const char *tf_sddmm_algo_name(tf_sddmm_algo a);
/* P (S->nnz values, in S's order; may alias S->vals) as above. */
tf_status tf_sddmm(const tf_csr *S, const tf_matrix *A, const tf_matrix *B, const tf_sddmm_opts *o,
                   double *P, tf_sddmm_info *info);
/* The same with S as an order-2 COO tensor (P in S's non-zero order). */
tf_status tf_sddmm_coo(const tf_tensor *S, const tf_matrix *A, const tf_matrix *B,
                       const tf_sddmm_opts *o, double *P, tf_sddmm_info *info);
/* Plain float64 reference SDDMM over a CSR matrix (single-threaded). */
tf_status tf_sddmm_reference(const tf_csr *S, const tf_matrix *A, const tf_matrix *B,
                             tf_sddmm_op op, double alpha, double beta, double *P);
/* Benchmark helper: prepares once (GPU: tiles, uploads), then `warmup`
 * untimed and `reps` timed runs; times_ms[0..reps-1] gets each run (CUDA
 * events on the GPU, wall clock on the CPU). P receives the last result of
 * a run from the original S values (P must not alias S->vals here). */
tf_status tf_sddmm_time(const tf_csr *S, const tf_matrix *A, const tf_matrix *B,
                        const tf_sddmm_opts *o, double *P, int warmup, int reps, double *times_ms,
                        tf_sddmm_info *info);

/* SDDMM plans: build once for a pattern S and an inner dimension K, run
 * many times with new A and B (ALS, LDA, attention), in the manner of
 * cuSPARSE's cusparseSDDMM_bufferSize / _preprocess / cusparseSDDMM. The
 * build validates S and the options, chooses the backend (as tf_sddmm), and
 * on the GPU tiles S, uploads it and, under TF_SDDMM_ALGO_AUTO, times the
 * candidate kernels on S once; a run then moves only what is on the host
 * (A, B in; P out) and launches the kernel chosen. tf_sddmm is build + run
 * + free. A plan keeps what it needs of S (S may be freed after the build),
 * borrows the options' context (which must outlive it; NULL: the plan owns
 * a private one), and is used by one thread, and one stream, at a time
 * (runs share the plan's device buffers). */
typedef struct tf_sddmm_plan tf_sddmm_plan;

/* One GPU's operands of a run of a plan over several GPUs (see
 * tf_sddmm_run_opts.parts), for panel g (tf_sddmm_plan_panel):
 *   A  the panel's rows of A (row_hi - row_lo rows), or all of A (S's rows:
 *      its rows row_lo .. row_hi - 1 are read), K columns
 *   B  all of B (S's columns x K)
 *   P  the panel's slice of P (nnz_hi - nnz_lo values), or all of P (S's
 *      non-zeros: values nnz_lo .. nnz_hi - 1 are written); ignored by
 *      tf_sddmm_plan_time_panels
 * each in GPU memory of the panel's GPU (read and written there, no copies),
 * managed memory, or host memory (copied as in a run of one GPU). */
typedef struct tf_sddmm_part_operands {
    tf_dense A, B, P;
} tf_sddmm_part_operands;

typedef struct tf_sddmm_run_opts {
    void *stream; /* GPU: a cudaStream_t to queue the run on, after the work already
                     there; when P is in GPU memory the call then returns at once
                     (P is written when the stream reaches that point). NULL
                     (default): the legacy default stream, and the call returns
                     when P is written. Ignored on the CPU. A plan over several
                     GPUs: a stream of the plan's first GPU (panel 0's); every
                     panel starts after the work queued there before the call,
                     the panels on the other GPUs run on their own streams, and
                     the stream waits for all of them; work of the other GPUs
                     that writes operands a panel reads must be complete before
                     the call. NULL: each panel on the legacy default stream of
                     its GPU, after the work queued on the legacy streams of all
                     the plan's GPUs, and the call returns when P is written.    */
    /* Per-GPU operands instead of A, B and P (which must then be NULL): one
     * tf_sddmm_part_operands per panel, nparts = tf_sddmm_info.panels, each
     * GPU array in memory of its panel's GPU (a GPU array elsewhere is
     * TF_ERR_ARG: nothing is copied between GPUs). NULL (default): A, B and P
     * are given whole. On one GPU or the CPU, one part: A, B and P whole. */
    const tf_sddmm_part_operands *parts;
    uint32_t nparts;
} tf_sddmm_run_opts;

/* One row panel of a plan (tf_sddmm_plan_panel). */
typedef struct tf_sddmm_panel {
    int device;              /* its GPU's ordinal; -1 for a plan on the CPU          */
    uint64_t row_lo, row_hi; /* its rows of S, [row_lo, row_hi)                      */
    uint64_t nnz_lo, nnz_hi; /* its non-zeros in S's (CSR) order, [nnz_lo, nnz_hi):
                                the slice of P it writes                            */
    double build_ms;         /* wall time of its part of the build (panel, tiles,
                                upload, tuning; the GPUs build at the same time)    */
    tf_sddmm_info info;      /* what its build chose (zeros: a panel without
                                non-zeros, which launches nothing)                  */
} tf_sddmm_panel;

/* Builds a plan for S (validated as tf_csr_validate) and inner dimension K
 * (>= 1) with the options o (NULL: defaults); *out is NULL on failure. Under
 * TF_BACKEND_AUTO a problem the GPU cannot hold is planned on the CPU, and
 * the plan's info says why (note). On a context of several GPUs
 * (tf_context_opts.ndevices > 1) S is cut into one contiguous row panel per
 * GPU with about nnz / GPUs non-zeros each (by the prefix sums of the rows'
 * counts; a row is never split, so a heavy row makes its panel heavier), and
 * each GPU builds (and, under TF_SDDMM_ALGO_AUTO, tunes) its own part of the
 * plan on its panel, all at the same time on one host thread each; a run
 * runs the panels at the same time, each writing its slice of P. On a
 * context over MPI ranks (tf_context_opts.distributed), every rank passes
 * the same S; S is cut the same way into one panel per rank, each rank
 * plans its own panel (on the CPU or its GPU; tf_sddmm_plan_panel(plan, 0)
 * describes it), and a run computes that panel's slice and all-gathers P,
 * which must then be host memory of doubles: every rank ends with all of P.
 * Every rank must build, run and free the plan together (collectives). */
tf_status tf_sddmm_plan_build(const tf_csr *S, uint64_t K, const tf_sddmm_opts *o, tf_sddmm_plan **out);
/* The same for a run or a few (what tf_sddmm does): under TF_SDDMM_ALGO_AUTO a
 * GPU plan runs the row scheme in its default configuration, with no tiling
 * and nothing timed -- a build costing about as much as cuSPARSE's set-up,
 * where tuning (tf_sddmm_plan_build) pays only over many runs. */
tf_status tf_sddmm_plan_build_once(const tf_csr *S, uint64_t K, const tf_sddmm_opts *o, tf_sddmm_plan **out);
/* P = the SDDMM of the plan's S with A (S->rows x K) and B (S->cols x K),
 * as tf_sddmm; P (S->nnz x 1) is written in S's order. Host arrays are
 * double, or float on a TF_SINGLE plan; GPU arrays are of the plan's
 * precision and are read and written in place (no copies) when A and B
 * have ld = K, K is a multiple of 16 bytes of values (2 doubles, 4 floats)
 * and the data 16-byte aligned -- else they are copied on the device into
 * a padded buffer first. A CPU plan takes host arrays only. ro may be NULL
 * (defaults). A wrong shape, precision or memory is TF_ERR_ARG naming the
 * array; a plan after tf_sddmm_plan_free is TF_ERR_ARG (always caught in
 * debug builds, which keep freed plans' headers). On several GPUs each GPU
 * takes its panel's rows of A and all of B and writes its slice of P: host
 * arrays are copied to (and P from) every GPU by one host thread each; GPU
 * arrays on one of the plan's GPUs are read in place by that GPU's panel and
 * copied peer-to-peer (cudaMemcpyPeerAsync) to the others, whose slices of P
 * go back the same way; ro->parts gives each GPU its own operands (no
 * copies between GPUs at all). */
tf_status tf_sddmm_plan_run(tf_sddmm_plan *plan, const tf_dense *A, const tf_dense *B, const tf_dense *P,
                            const tf_sddmm_run_opts *ro);
/* Benchmark helper: places A and B as a run does, then `warmup` untimed and
 * `reps` timed runs of the kernel alone (CUDA events on the GPU, wall clock
 * on the CPU), times_ms[0..reps-1] getting each; P is not written. */
tf_status tf_sddmm_plan_time(tf_sddmm_plan *plan, const tf_dense *A, const tf_dense *B, int warmup, int reps,
                             double *times_ms);
/* The same per panel: A and B as tf_sddmm_plan_run takes them (or NULL with
 * ro->parts; ro may be NULL; its stream is not used), placed once; then each
 * run launches every panel's kernel at once, CUDA events on each GPU around
 * its kernel, and on the first GPU around all of them (the other GPUs start
 * after an event of the first and the first waits for theirs). times_ms[r]
 * gets run r's whole time (first start to last end), part_ms (NULL: not
 * wanted; else reps x panels values) part_ms[r * panels + g] panel g's kernel
 * in run r (0 for a panel without non-zeros). */
tf_status tf_sddmm_plan_time_panels(tf_sddmm_plan *plan, const tf_dense *A, const tf_dense *B,
                                    const tf_sddmm_run_opts *ro, int warmup, int reps, double *times_ms,
                                    double *part_ms);
/* What the build chose (backend, algorithm, tiles, note; panels). */
tf_status tf_sddmm_plan_info(const tf_sddmm_plan *plan, tf_sddmm_info *info);
/* Panel g (0 .. panels - 1) of the plan: its GPU, rows, non-zeros, build time
 * and choice. A plan on one GPU or on the CPU has one panel, all of S. */
tf_status tf_sddmm_plan_panel(const tf_sddmm_plan *plan, uint32_t g, tf_sddmm_panel *panel);
/* Frees the plan and its device memory; NULL is ignored. */
void tf_sddmm_plan_free(tf_sddmm_plan *plan);

/* SpTTM: Y = X x_n U with U of size I_n x R (dims[n] rows, R columns):
 *   Y(i_1, .., r, .., i_N) = sum_i X(i_1, .., i, .., i_N) * U(i, r).
 * NOTE: the Tensor Toolbox's ttm(X, V, n) multiplies by V of size R x I_n
 * (Y = X x_n V with V(r, i)); tenfold's U is that V transposed, the F-COO
 * paper's convention. Y is semi-sparse: one dense length-R row for each
 * distinct index tuple of the other modes that occurs in X ("fibre"). */
typedef struct tf_semisparse {
    uint32_t order;                 /* order of X                             */
    uint32_t mode;                  /* the dense mode n (0-based)             */
    uint64_t dims[TF_MAX_ORDER];    /* dims of Y: those of X with dims[n] = R */
    uint64_t nfibers;               /* distinct index tuples of the other modes */
    uint32_t *ind[TF_MAX_ORDER];    /* ind[m][f] for m != n (ind[n] = NULL), fibres in
                                       lexicographic order of the other modes */
    double *vals;                   /* nfibers x R, row-major                  */
} tf_semisparse;

void tf_semisparse_free(tf_semisparse *y);
/* The non-zero entries of Y as a sparse tensor (order of X; mode n has
 * length R); exact zeros are left out. */
tf_status tf_semisparse_to_tensor(const tf_semisparse *y, tf_tensor *out);

/* Where an SpTTM ran (optional output of tf_spttm / tf_spttm_time). */
typedef struct tf_spttm_info {
    tf_backend backend;     /* TF_BACKEND_CPU or TF_BACKEND_GPU                 */
    char note[256];         /* why an auto run is on the CPU (the GPU could not
                               hold it: "...: running on the CPU"), else ""     */
} tf_spttm_info;

typedef struct tf_spttm_opts {
    tf_backend backend;     /* default TF_BACKEND_AUTO                          */
    tf_precision precision; /* default TF_DOUBLE                                */
    int threads;            /* CPU threads, 0 = default                         */
    int device;             /* GPU ordinal                                      */
    tf_context *context;    /* devices, tuning; NULL = a private default one      */
    tf_spttm_info *info;    /* optional output (NULL: none)                      */
} tf_spttm_opts;

void tf_spttm_opts_default(tf_spttm_opts *o);
/* Y = X x_mode U (U: dims[mode] x R, R >= 1). out is allocated by the call. */
tf_status tf_spttm(const tf_tensor *X, uint32_t mode, const tf_matrix *U, const tf_spttm_opts *o,
                   tf_semisparse *out);
/* Plain float64 reference (single-threaded; sorts with qsort). */
tf_status tf_spttm_reference(const tf_tensor *X, uint32_t mode, const tf_matrix *U,
                             tf_semisparse *out);
/* Benchmark helper like tf_sddmm_time: the sort by the other modes (and,
 * on the GPU, the F-COO build and upload) is done once and not timed. */
tf_status tf_spttm_time(const tf_tensor *X, uint32_t mode, const tf_matrix *U,
                        const tf_spttm_opts *o, int warmup, int reps, double *times_ms,
                        tf_semisparse *out);

/* ------------------------------------- Kruskal and sparse tensor helpers
 * The ktensor and sptensor operations of the Tensor Toolbox / pyttb on
 * tenfold's types, without densifying (issue 43). Every function checks its
 * arguments (a NULL pointer, a mode out of range, a shape mismatch, an
 * invalid tensor as tf_tensor_validate) and fails with TF_ERR_ARG and a
 * message naming the argument; outputs are then left as they were (a
 * tf_tensor output zeroed). Passes over the non-zeros run on
 * tf_default_threads() OpenMP threads where the size warrants; sums are
 * taken in blocks whose partials are added in order, so a result does not
 * depend on the thread count. A ktensor's lambda may be NULL (all ones);
 * its order and dims must be the tensor's, factors[m] dims[m] x rank. */

/* The model at the non-zeros of X: out[j] = sum_r lambda_r prod_n
 * A_n(i_jn, r), one value per non-zero (out: X->nnz doubles). The kernel of
 * <X, K>, CP-APR and GCP. */
tf_status tf_model_values(const tf_tensor *X, const tf_ktensor *K, double *out);
/* <X, K> = sum_j x_j m_j (pyttb ktensor.innerprod with an sptensor), in the
 * same pass, without storing the model values. */
tf_status tf_ktensor_innerprod(const tf_tensor *X, const tf_ktensor *K, double *out);
/* Frobenius norm of the full tensor of K from the R x R Grams, never formed
 * densely: sqrt(|sum_{r,s} lambda_r lambda_s prod_n (A_n^T A_n)(r,s)|)
 * (pyttb ktensor.norm). rank <= TF_MAX_RANK. */
tf_status tf_ktensor_norm(const tf_ktensor *K, double *out);

/* What tf_tensor_collapse does with the values that fall on one entry. */
typedef enum tf_collapse_op {
    TF_COLLAPSE_SUM = 0, /* their sum                                          */
    TF_COLLAPSE_MAX,     /* the largest stored value (implicit zeros not counted, as pyttb's
                            collapse with np.max over the non-zeros)            */
    TF_COLLAPSE_MIN      /* the smallest stored value, likewise                 */
} tf_collapse_op;

/* The result of a reduction over `nmodes` distinct modes (`modes`, 1 ..
 * order of them) of X: what is left is k = order - nmodes modes, in their
 * order in X.
 *   k >= 2: *out gets a sparse tensor over them (allocated by the call,
 *           canonical: sorted, one entry per coordinate, exact zeros
 *           dropped); dense is not used (may be NULL).
 *   k == 1: dense gets the dense vector, dims of the one mode left (entries
 *           no non-zero falls on are 0); out is not used (may be NULL).
 *   k == 0: dense[0] gets the scalar. */
/* Tensor times vectors (pyttb sptensor.ttv): X multiplied in modes[i] by
 * the vector vecs[i] (dims[modes[i]] values) for every i < nmodes, those
 * modes summed away. */
tf_status tf_tensor_ttv(const tf_tensor *X, uint32_t nmodes, const uint32_t *modes,
                        const double *const *vecs, tf_tensor *out, double *dense);
/* X collapsed over `modes` by op (pyttb sptensor.collapse with np.sum,
 * np.max, np.min). */
tf_status tf_tensor_collapse(const tf_tensor *X, uint32_t nmodes, const uint32_t *modes, tf_collapse_op op,
                             tf_tensor *out, double *dense);
/* out = X with every value multiplied by alpha and, when v is non-NULL, by
 * v[i] at its index i of `mode` (v: dims[mode] values; pyttb sptensor.scale
 * with a vector, or a scalar). Non-zeros keep their order; those that become
 * exactly 0 are dropped. out is allocated by the call. */
tf_status tf_tensor_scale(const tf_tensor *X, uint32_t mode, const double *v, double alpha, tf_tensor *out);
/* out = X with its modes reordered: out's mode m is X's mode perm[m] (perm a
 * permutation of 0..order-1; pyttb sptensor.permute), sorted by 0, 1, ...
 * (canonical when X is). out is allocated by the call. */
tf_status tf_tensor_permute(const tf_tensor *X, const uint32_t *perm, tf_tensor *out);
/* The part of X in the index box lo[m] <= i_m < hi[m] (0 <= lo[m] < hi[m]
 * <= dims[m], every mode), indices re-based to i_m - lo[m], dims hi - lo
 * (pyttb X[lo0:hi0, lo1:hi1, ...]). Non-zeros keep their order. out is
 * allocated by the call. */
tf_status tf_tensor_subtensor(const tf_tensor *X, const uint64_t *lo, const uint64_t *hi, tf_tensor *out);

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
/* 1 if this build has MPI (several processes: `mpirun -np P tenfold cpd ...`). */
int tf_have_mpi(void);
/* The MPI library's name and version ("Open MPI v4.1.4, ..."; "none" without MPI). */
void tf_mpi_describe(char *buf, size_t len);
/* The CPU threads in one line (tenfold cpd -v, tenfold info --threads): the
 * OpenMP team of `threads` (0 = the default); with X (NULL: none) and rank,
 * the teams of that problem's MTTKRP and dense steps (fewer threads where
 * the work is small); the BLAS library's threads; the OpenMP binding and
 * wait policy in force; the CPUs the process may use. */
void tf_threads_describe(int threads, const tf_tensor *X, uint64_t rank, char *buf, size_t len);
/* Where the threads run, as CPU lists in /proc's form (0-3,8):
 * "team: [..] [..]" for each thread of a parallel region of `threads` (0 =
 * the default), then "\nothers: [..] ..." for the process's other threads
 * (the BLAS library's own, ...; "(none)"). */
void tf_threads_placement(int threads, char *buf, size_t len);
/* Starts MPI when mpirun / mpiexec / srun started this process as one of
 * several ranks (else nothing: *rank = 0, *size = 1). A build without MPI
 * started as one of several ranks fails (TF_ERR_UNAVAILABLE), so no rank
 * runs the whole job alone. */
tf_status tf_mpi_start(int *argc, char ***argv, int *rank, int *size);
/* Ends MPI if tf_mpi_start started it. */
void tf_mpi_stop(void);
/* Ends every rank with `code` (MPI_Abort) after a failure on this one, so no
 * rank waits in a collective for it; exit(code) without MPI. */
void tf_mpi_abort(int code);
/* x[0..n) summed over the ranks, the same on every rank (reports that
 * gather each rank's figures); x as it is when MPI was not started. */
tf_status tf_mpi_allreduce_sum(double *x, uint64_t n);

/* What the ranks of a run must agree on before they work together: named
 * fields (the command, each option that must match, the input's order,
 * dims, non-zeros and checksum), compared by value across the ranks. One
 * fixed size, so ranks that disagree on everything still exchange records
 * of one size. Zero it, then add fields in the same order on every rank. */
#define TF_AGREE_FIELDS 40
typedef struct tf_agree_field {
    char name[24];  /* "command", "-i/--iters", "dims", ...                 */
    char text[48];  /* the value as said in a message (cut with "..." when
                       longer)                                              */
    uint64_t hash;  /* of the whole value: what is compared                 */
} tf_agree_field;
typedef struct tf_agree {
    uint32_t n;
    tf_agree_field field[TF_AGREE_FIELDS];
} tf_agree;
/* Appends field `name` with its value as text (past TF_AGREE_FIELDS the
 * last field takes the rest: named "more", their values hashed together). */
void tf_agree_add(tf_agree *a, const char *name, const char *value);
/* Every rank of MPI_COMM_WORLD with its record (a collective): TF_OK when
 * all are equal; else TF_ERR_ARG on every rank with the same message,
 * "ranks disagree: rank R has NAME VALUE, rank 0 has VALUE" for the first
 * field where a rank differs from rank 0 and the lowest such rank, and
 * tf_last_error_shared() = 1. Like every collective of tenfold's ranks, a
 * rank that does not answer within TF_MPI_TIMEOUT seconds (default 600)
 * fails the call, naming it. TF_OK with one process. */
tf_status tf_mpi_agree(const tf_agree *a);
/* 1 when the calling thread's last failure was reached by every rank of
 * MPI_COMM_WORLD together, with the same message (tf_mpi_agree; a file the
 * ranks read in parts that they refuse together): no rank waits for another,
 * so a program may say it once (rank 0) and end with tf_mpi_stop instead of
 * tf_mpi_abort. 0 otherwise: then the other ranks may be waiting. */
int tf_last_error_shared(void);
/* The checksum the tenfold binary file of t holds (its header, indices and
 * values; tf_write_tensor to .bin): equal tensors, equal checksums. */
uint64_t tf_tensor_checksum(const tf_tensor *t, int threads);
/* The same 64-bit hash of n bytes (seed: 0, or a previous hash to chain). */
uint64_t tf_checksum_bytes(const void *data, uint64_t n, uint64_t seed, int threads);

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

#ifdef __cplusplus
}
#endif
#endif /* TENFOLD_H */
