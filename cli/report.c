/* Shared human-readable output of the commands, and tensor loading. */
#include "report.h"

#include <stdlib.h>
#include <string.h>

#include "args.h"

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

const char *cli_zero_based(char *buf, size_t len, const tf_read_info *info, uint32_t order)
{
    size_t at = 0;
    buf[0] = '\0';
    for (uint32_t m = 0; m < order && at < len; ++m) {
        if (!info->zero_based[m]) continue;
        int w = snprintf(buf + at, len - at, "%s%u", at ? ", " : "", m + 1);
        if (w < 0) break;
        at += (size_t)w;
    }
    if (at == 0) snprintf(buf, len, "none");
    return buf;
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

int cli_load(const char *path, int threads, tf_tensor *t, tf_read_info *info)
{
    memset(t, 0, sizeof *t);
    memset(info, 0, sizeof *info);
    if (tf_read_tensor(path, threads, t, info) != TF_OK) {
        tf_tensor_free(t);
        return cli_fail();
    }
    return CLI_OK;
}

void cli_print_problem(FILE *f, const char *path, const tf_tensor *t, const tf_read_info *info)
{
    char dims[TF_MAX_ORDER * 24], mem[32], in[32];
    const char *z = cli_compression_name(info->compressed);
    double rate = info->seconds > 0 ? (double)info->bytes / info->seconds : 0.0;
    fprintf(f, "input:  %s (%s%s%s, %s, read in %.3f s, %s/s)\n", path,
            cli_file_format_name(info->format), *z ? ", " : "", z,
            cli_bytes(in, sizeof in, (double)info->bytes), info->seconds,
            cli_bytes(mem, sizeof mem, rate));
    fprintf(f, "tensor: order %u, dims %s, nnz %llu, density %.3e, COO memory %s\n", t->order,
            cli_dims(dims, sizeof dims, t->order, t->dims), (unsigned long long)t->nnz,
            cli_density(t), cli_bytes(mem, sizeof mem, (double)tf_tensor_bytes(t)));
}

void cli_print_fixes(FILE *f, const tf_tensor *t, const tf_read_info *info)
{
    char zb[TF_MAX_ORDER * 4 + 8];
    fprintf(f, "fixes:  %llu duplicate%s summed, %llu explicit zero%s dropped, 0-based modes: %s\n",
            (unsigned long long)info->duplicates, info->duplicates == 1 ? "" : "s",
            (unsigned long long)info->zeros, info->zeros == 1 ? "" : "s",
            cli_zero_based(zb, sizeof zb, info, t->order));
}

uint64_t *cli_slice_counts(const tf_tensor *t, uint32_t m)
{
    uint64_t *cnt = calloc(t->dims[m] ? t->dims[m] : 1, sizeof *cnt);
    if (!cnt) {
        fprintf(stderr, "tenfold: out of memory counting the %llu slices of mode %u\n",
                (unsigned long long)t->dims[m], m + 1);
        return NULL;
    }
    const uint32_t *ix = t->ind[m];
    for (uint64_t k = 0; k < t->nnz; ++k) cnt[ix[k]]++;
    return cnt;
}
