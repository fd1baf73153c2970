/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared human-readable output of the commands, and tensor loading. */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "gen_spec.h"
#include "progress.h"

const char *cli_bytes(char *buf, size_t len, double bytes)
{
    static const char *unit[] = {"B", "KB", "MB", "GB", "TB"};
    int u = 0;
    while (bytes >= 1024.0 && u < 4) bytes /= 1024.0, ++u;
    if (u == 0) snprintf(buf, len, "%.0f B", bytes);
    else snprintf(buf, len, "%.1f %s", bytes, unit[u]);
    return buf;
}

const char *cli_dims(char *buf, size_t len, uint32_t order, const uint64_t *dims)
{
    size_t at = 0;
    buf[0] = '\0';
    for (uint32_t m = 0; m < order && at < len; ++m) {
        int w = snprintf(buf + at, len - at, "%s%llu", m ? " x " : "", (unsigned long long)dims[m]);
        if (w < 0) break;
        at += (size_t)w;
    }
    return buf;
}

const char *cli_base_source_name(tf_base_source s)
{
    return s == TF_BASE_DETECTED ? "detected" : s == TF_BASE_OPTION ? "option" : "format";
}

const char *cli_index_base(char *buf, size_t len, const tf_read_info *info)
{
    const char *how = info->base_source == TF_BASE_DETECTED
                          ? (info->index_base ? "detected: no index is 0" : "detected: an index is 0")
                      : info->base_source == TF_BASE_OPTION ? "from --base"
                      : info->format == TF_FILE_MTX         ? "Matrix Market"
                                                            : "binary";
    snprintf(buf, len, "%d-based (%s)", info->index_base, how);
    return buf;
}

int cli_base(const char *cmd, const char *s, int *out)
{
    static const char *const names[] = {"auto", "0", "1"};
    int i = 0;
    *out = TF_BASE_AUTO;
    if (!s) return CLI_OK;
    int rc = cli_choice(cmd, "--base", s, names, 3, &i);
    if (rc == CLI_OK) *out = i == 0 ? TF_BASE_AUTO : i - 1;
    return rc;
}

const char *cli_file_format_name(tf_file_format f)
{
    switch (f) {
    case TF_FILE_AUTO: return "auto";
    case TF_FILE_TNS: return "tns";
    case TF_FILE_TNS_HEADER: return "tns-header";
    case TF_FILE_SPTENSOR: return "sptensor";
    case TF_FILE_BIN: return "bin";
    case TF_FILE_MTX: return "mtx";
    }
    return "?";
}

const char *cli_compression_name(int compressed)
{
    return compressed == 1 ? "xz" : compressed == 2 ? "gzip" : "";
}

double cli_density(const tf_tensor *t)
{
    double cells = 1.0;
    for (uint32_t m = 0; m < t->order; ++m) cells *= (double)t->dims[m];
    return cells > 0 ? (double)t->nnz / cells : 0.0;
}

const char *cli_input_name(const char *path)
{
    return strcmp(path, "-") ? path : "<stdin>";
}

int cli_one_stdin(const char *cmd, const char *const *paths, const char *const *names, int n)
{
    int first = -1;
    for (int i = 0; i < n; ++i) {
        if (!paths[i] || strcmp(paths[i], "-")) continue;
        if (first >= 0)
            return cli_usage(cmd, "%s and %s are both '-': standard input can be read only once", names[first],
                             names[i]);
        first = i;
    }
    return CLI_OK;
}

static int load(const char *cmd, const char *path, int threads, const char *base, uint64_t part, uint64_t parts,
                tf_precision precision, int keep_zeros, tf_tensor *t, tf_read_info *info);

int cli_load_base(const char *cmd, const char *path, int threads, const char *base, tf_tensor *t,
                  tf_read_info *info)
{
    return load(cmd, path, threads, base, 0, 1, TF_DOUBLE, 0, t, info);
}

int cli_load_observed(const char *cmd, const char *path, int threads, const char *base, tf_tensor *t,
                      tf_read_info *info)
{
    return load(cmd, path, threads, base, 0, 1, TF_DOUBLE, 1, t, info);
}

int cli_load_precision(const char *cmd, const char *path, int threads, const char *base, tf_precision precision,
                       tf_tensor *t, tf_read_info *info)
{
    return load(cmd, path, threads, base, 0, 1, precision, 0, t, info);
}

int cli_load_part(const char *cmd, const char *path, int threads, const char *base, uint64_t part, uint64_t parts,
                  tf_tensor *t, tf_read_info *info)
{
    return load(cmd, path, threads, base, part, parts, TF_DOUBLE, 0, t, info);
}

static int load(const char *cmd, const char *path, int threads, const char *base, uint64_t part, uint64_t parts,
                tf_precision precision, int keep_zeros, tf_tensor *t, tf_read_info *info)
{
    tf_read_opts o;
    tf_read_opts_default(&o);
    o.threads = threads;
    o.part = part;
    o.parts = parts;
    o.collective = parts > 1; /* the parts are the MPI ranks: they read together */
    o.precision = precision;
    o.keep_zeros = keep_zeros;
    memset(t, 0, sizeof *t);
    memset(info, 0, sizeof *info);
    int rc = cli_base(cmd, base, &o.base);
    if (rc) return rc;
    if (cli_generated(path)) /* each rank generates only its part */
        return cli_gen_load(cmd, path, threads, part, parts, t, info);
    o.progress = cli_progress_fn(); /* a progress line for a long read */
    o.progress_user = (void *)cli_input_name(path);
    if (tf_read_tensor_opts(path, &o, t, info) != TF_OK) {
        tf_tensor_free(t);
        return cli_fail();
    }
    return CLI_OK;
}

int cli_load(const char *path, int threads, tf_tensor *t, tf_read_info *info)
{
    return cli_load_base("", path, threads, NULL, t, info);
}

void cli_print_problem(FILE *f, const char *path, const tf_tensor *t, const tf_read_info *info)
{
    char dims[TF_MAX_ORDER * 24], mem[32], in[32];
    const char *z = cli_compression_name(info->compressed), *spec = cli_generated(path);
    double rate = info->seconds > 0 ? (double)info->bytes / info->seconds : 0.0;
    if (spec)
        fprintf(f, "input:  generated %s in %.3f s (%.1f M non-zeros/s, peak host %s)\n", spec, info->seconds,
                info->seconds > 0 ? (double)(info->total_nnz ? info->total_nnz : t->nnz) / info->seconds / 1e6 : 0.0,
                cli_bytes(in, sizeof in, (double)cli_gen_peak()));
    else
        fprintf(f, "input:  %s (%s%s%s, %s, read in %.3f s, %s/s)\n", cli_input_name(path),
                cli_file_format_name(info->format), *z ? ", " : "", z,
                cli_bytes(in, sizeof in, (double)info->bytes), info->seconds,
                cli_bytes(mem, sizeof mem, rate));
    if (info->total_nnz > t->nnz) { /* this process holds a part (MPI ranks) */
        tf_tensor whole = *t;
        whole.nnz = info->total_nnz;
        fprintf(f, "tensor: order %u, dims %s, nnz %llu, density %.3e (this rank holds %llu: COO memory %s)\n",
                t->order, cli_dims(dims, sizeof dims, t->order, t->dims), (unsigned long long)whole.nnz,
                cli_density(&whole), (unsigned long long)t->nnz, cli_bytes(mem, sizeof mem, (double)tf_tensor_bytes(t)));
        return;
    }
    fprintf(f, "tensor: order %u, dims %s, nnz %llu, density %.3e, COO memory %s\n", t->order,
            cli_dims(dims, sizeof dims, t->order, t->dims), (unsigned long long)t->nnz,
            cli_density(t), cli_bytes(mem, sizeof mem, (double)tf_tensor_bytes(t)));
}

void cli_print_fixes(FILE *f, const tf_tensor *t, const tf_read_info *info)
{
    char base[64];
    (void)t;
    if (info->format == TF_FILE_AUTO) return; /* generated (--gen): nothing was read */
    const int kept = info->zeros_kept > 0;
    const uint64_t z = kept ? info->zeros_kept : info->zeros;
    fprintf(f, "fixes:  %llu duplicate%s summed, %llu explicit zero%s %s, indices %s\n",
            (unsigned long long)info->duplicates, info->duplicates == 1 ? "" : "s", (unsigned long long)z,
            z == 1 ? "" : "s", kept ? "kept (observed entries)" : "dropped", cli_index_base(base, sizeof base, info));
}

void cli_print_read(FILE *f, const tf_read_info *info)
{
    if (info->format == TF_FILE_BIN) {
        fprintf(f, "read:   tenfold binary, %llu entr%s, dims from its header\n",
                (unsigned long long)info->entries, info->entries == 1 ? "y" : "ies");
        return;
    }
    fprintf(f, "read:   %llu line%s, %llu entr%s before the fixes, dims %s%s%s\n",
            (unsigned long long)info->lines, cli_s(info->lines), (unsigned long long)info->entries,
            info->entries == 1 ? "y" : "ies",
            info->declared_dims ? "declared by a header" : "inferred from the largest indices",
            info->mtx_symmetric ? ", symmetric (expanded)" : "", info->mtx_pattern ? ", pattern (values 1)" : "");
}

/* Sorts a[0..n) with two 16-bit LSD radix passes; 0 if out of memory. */
static int sort_u32(uint32_t *a, uint64_t n)
{
    uint32_t *tmp = malloc((n ? n : 1) * sizeof *tmp);
    uint64_t *cnt = malloc((65536 + 1) * sizeof *cnt);
    if (!tmp || !cnt) { free(tmp); free(cnt); return 0; }
    for (int shift = 0; shift < 32; shift += 16) {
        memset(cnt, 0, (65536 + 1) * sizeof *cnt);
        for (uint64_t k = 0; k < n; ++k) cnt[((a[k] >> shift) & 0xFFFF) + 1]++;
        for (uint32_t d = 0; d < 65536; ++d) cnt[d + 1] += cnt[d];
        for (uint64_t k = 0; k < n; ++k) tmp[cnt[(a[k] >> shift) & 0xFFFF]++] = a[k];
        uint32_t *x = a; a = tmp; tmp = x; /* after two passes the result is back in a */
    }
    free(tmp);
    free(cnt);
    return 1;
}

uint64_t *cli_slice_counts(const tf_tensor *t, uint32_t m, uint64_t *nonempty)
{
    const uint64_t dim = t->dims[m], n = t->nnz;
    const uint32_t *ix = t->ind[m];
    uint64_t *cnt = NULL, ne = 0;
    *nonempty = 0;
    if (dim <= 2 * n + 1024) { /* dense counter, then keep the non-empty ones */
        cnt = calloc(dim ? dim : 1, sizeof *cnt);
        if (cnt) {
            for (uint64_t k = 0; k < n; ++k) cnt[ix[k]]++;
            for (uint64_t i = 0; i < dim; ++i)
                if (cnt[i]) cnt[ne++] = cnt[i];
        }
    } else { /* long mode: sort a copy of the indices, count the runs (O(nnz)) */
        uint32_t *s = malloc((n ? n : 1) * sizeof *s);
        cnt = s ? malloc((n ? n : 1) * sizeof *cnt) : NULL;
        if (cnt && sort_u32(memcpy(s, ix, n * sizeof *s), n)) {
            for (uint64_t k = 0; k < n; ++k) {
                if (k == 0 || s[k] != s[k - 1]) cnt[ne++] = 0;
                cnt[ne - 1]++;
            }
        } else {
            free(cnt);
            cnt = NULL;
        }
        free(s);
    }
    if (!cnt) {
        fprintf(stderr, "tenfold: out of memory counting the non-zeros per slice of mode %u "
                        "(length %llu, %llu non-zero%s)\n",
                m + 1, (unsigned long long)dim, (unsigned long long)n, cli_s(n));
        return NULL;
    }
    *nonempty = ne;
    return cnt;
}

