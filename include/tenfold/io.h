/* SPDX-License-Identifier: BSD-3-Clause */
/* tenfold/io.h — reading and writing tensors (.tns, .bin, .mtx; xz / gzip)
 * and dense matrices, the rules every writer follows for its path, and the
 * checksum of the binary format. Factor sets (Kruskal tensors): tenfold/ktensor.h. */
#ifndef TENFOLD_IO_H
#define TENFOLD_IO_H

#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------- files */

typedef enum tf_file_format {
    TF_FILE_AUTO = 0,   /* by content when reading, by extension when writing */
    TF_FILE_TNS,        /* FROSTT text, 1-based, no header                   */
    TF_FILE_TNS_HEADER, /* ParTI: "nmodes" line + dims line, then FROSTT     */
    TF_FILE_SPTENSOR,   /* Tensor Toolbox / pyttb export_data "sptensor"     */
    TF_FILE_BIN,        /* tenfold binary, versioned header with checksum   */
    TF_FILE_MTX         /* Matrix Market coordinate (order-2 tensors)        */
} tf_file_format;

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
    uint64_t zeros_kept;            /* tf_read_opts.keep_zeros: the entries of
                                       value 0 kept (coordinates listed with
                                       0, or whose duplicates sum to 0)    */
} tf_read_info;

#define TF_BASE_AUTO (-1)

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
    /* 1: entries of value 0 are kept, as listed (a coordinate whose
     * duplicates sum to 0 too): for completion, an observed 0 (a rating,
     * a reading) is data, not an absent entry; info->zeros_kept counts
     * them. 0 (default): dropped (info->zeros counts them). */
    int keep_zeros;
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
 * The result is canonical (sorted, duplicates summed, zeros dropped --
 * kept with opts->keep_zeros).
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

/* The checksum the tenfold binary file of t holds (its header, indices and
 * values; tf_write_tensor to .bin): equal tensors, equal checksums. */
uint64_t tf_tensor_checksum(const tf_tensor *t, int threads);
/* The same 64-bit hash of n bytes (seed: 0, or a previous hash to chain). */
uint64_t tf_checksum_bytes(const void *data, uint64_t n, uint64_t seed, int threads);

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

#ifdef __cplusplus
}
#endif
#endif /* TENFOLD_IO_H */
