/* tf_read_tensor / tf_parse_tensor: content detection (tenfold binary, xz,
 * gzip, Matrix Market, .tns), then the canonical form every reader
 * returns: sorted, duplicates summed, zeros dropped. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"
#include "io/bin_format.h"
#include "io/decompress.h"
#include "io/input.h"
#include "io/readers.h"

/* Checks indices < dims and finite values in parallel; *canonical says
 * whether the non-zeros are already strictly sorted and free of zeros. */
static tf_status check_tensor(const char *name, const tf_tensor *t, int T, int *canonical)
{
    const uint64_t n = t->nnz;
    const uint32_t N = t->order;
    uint64_t first_bad = UINT64_MAX;
    int sorted = 1;
#pragma omp parallel num_threads(T) reduction(min : first_bad) reduction(&& : sorted)
    {
        const uint64_t nt = (uint64_t)tf_thread_count(), id = (uint64_t)tf_thread_id();
        const uint64_t lo = n * id / nt, hi = n * (id + 1) / nt;
        for (uint64_t k = lo; k < hi; ++k) {
            int ok = isfinite(t->vals[k]);
            for (uint32_t m = 0; m < N; ++m) ok &= t->ind[m][k] < t->dims[m];
            if (!ok) { first_bad = k; break; }
            if (t->vals[k] == 0.0) sorted = 0;
            if (k > 0 && sorted) {
                int cmp = 0;
                for (uint32_t m = 0; m < N && !cmp; ++m)
                    cmp = (t->ind[m][k - 1] > t->ind[m][k]) - (t->ind[m][k - 1] < t->ind[m][k]);
                if (cmp >= 0) sorted = 0;
            }
        }
    }
    if (first_bad != UINT64_MAX) {
        uint64_t k = first_bad;
        if (!isfinite(t->vals[k]))
            return tf_fail(TF_ERR_RANGE, "%s: non-zero %llu: value is not finite", name,
                           (unsigned long long)k + 1);
        for (uint32_t m = 0; m < N; ++m)
            if (t->ind[m][k] >= t->dims[m])
                return tf_fail(TF_ERR_RANGE,
                               "%s: non-zero %llu: mode %u index %u is outside 0..%llu", name,
                               (unsigned long long)k + 1, m + 1, t->ind[m][k],
                               (unsigned long long)t->dims[m] - 1);
    }
    *canonical = sorted;
    return TF_OK;
}

/* Brings t into canonical form and records duplicates/zeros. canonical:
 * 1 already canonical, 0 not, -1 unknown (binary: validate first). */
static tf_status finish(const char *name, tf_tensor *t, int threads, int canonical,
                        tf_read_info *info)
{
    const uint64_t before = t->nnz;
    tf_status s = TF_OK;
    if (canonical < 0) s = check_tensor(name, t, tf_resolve_threads(threads), &canonical);
    if (s == TF_OK && !canonical) s = tf_tensor_canonicalize(t, &info->duplicates, &info->zeros);
    if (s == TF_OK && t->nnz == 0)
        s = tf_fail(TF_ERR_PARSE, "%s: no non-zeros (all %llu entries are zero or cancel out)",
                    name, (unsigned long long)before);
    if (s != TF_OK) tf_tensor_free(t);
    return s;
}

static int is_mtx(const char *p, size_t n)
{
    static const char banner[] = "%%MatrixMarket";
    return n >= sizeof banner - 1 && strncasecmp(p, banner, sizeof banner - 1) == 0;
}

static int is_bin(const char *p, size_t n)
{
    return n >= TF_BIN_MAGIC_LEN && memcmp(p, TF_BIN_MAGIC, TF_BIN_MAGIC_LEN) == 0;
}

/* Detects the content of data[0..len) and parses it (not yet canonical). */
static tf_status parse_any(const char *name, const char *data, size_t len, int threads,
                           int may_decompress, tf_tensor *t, tf_read_info *info, int *canonical)
{
    if (len == 0) return tf_fail(TF_ERR_PARSE, "%s: empty file (no non-zeros)", name);
    if (may_decompress) {
        char *plain = NULL;
        size_t plain_len = 0;
        int kind = 0;
        TF_TRY(tf_decompress_any(name, data, len, threads, &plain, &plain_len, &kind));
        if (kind) {
            tf_status s = parse_any(name, plain, plain_len, threads, 0, t, info, canonical);
            tf_free(plain);
            info->compressed = kind;
            return s;
        }
    }
    info->bytes = len;
    *canonical = -1;
    if (is_bin(data, len)) {
        info->format = TF_FILE_BIN;
        info->declared_dims = 1;
        TF_TRY(tf_bin_parse_mem(name, data, len, threads, t));
        info->entries = t->nnz;
        return TF_OK;
    }
    if (is_mtx(data, len)) return tf_mtx_parse(name, data, len, threads, t, info, canonical);
    return tf_tns_parse(name, data, len, threads, t, info, canonical);
}

tf_status tf_parse_tensor(const char *name, const char *text, size_t len, int threads,
                          tf_tensor *out, tf_read_info *info)
{
    tf_read_info local;
    double t0 = tf_wtime();
    if (!info) info = &local;
    memset(info, 0, sizeof *info);
    memset(out, 0, sizeof *out);
    if (!name) name = "(memory)";
    if (!text && len) return tf_fail(TF_ERR_ARG, "%s: no text given", name);
    int canonical = -1;
    TF_TRY(parse_any(name, text, len, threads, 1, out, info, &canonical));
    TF_TRY(finish(name, out, threads, canonical, info));
    info->seconds = tf_wtime() - t0;
    return TF_OK;
}

/* Regular file: binary goes through pread into the arrays; everything
 * else is mapped (pre-faulted) and parsed in place. */
static tf_status read_regular(const char *path, int fd, uint64_t size, int threads, tf_tensor *t,
                              tf_read_info *info, int *canonical)
{
    char head[TF_BIN_MAGIC_LEN];
    if (size == 0) return tf_fail(TF_ERR_PARSE, "%s: empty file (no non-zeros)", path);
    if (size >= TF_BIN_MAGIC_LEN && pread(fd, head, sizeof head, 0) == (ssize_t)sizeof head &&
        is_bin(head, sizeof head)) {
        info->format = TF_FILE_BIN;
        info->declared_dims = 1;
        info->bytes = size;
        TF_TRY(tf_bin_read_fd(path, fd, size, threads, t));
        info->entries = t->nnz;
        return TF_OK;
    }
    if (size > SIZE_MAX) return tf_fail(TF_ERR_NOMEM, "%s: file too large to map", path);
    void *map = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (map == MAP_FAILED)
        return tf_fail(TF_ERR_IO, "%s: cannot map the file: %s", path, strerror(errno));
    tf_status s = parse_any(path, map, (size_t)size, threads, 1, t, info, canonical);
    munmap(map, (size_t)size);
    return s;
}

tf_status tf_read_tensor(const char *path, int threads, tf_tensor *out, tf_read_info *info)
{
    tf_read_info local;
    double t0 = tf_wtime();
    if (!info) info = &local;
    memset(info, 0, sizeof *info);
    memset(out, 0, sizeof *out);
    if (!path || !*path) return tf_fail(TF_ERR_ARG, "no input file given");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return tf_fail(TF_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    tf_status s = TF_OK;
    int canonical = -1;
    if (fstat(fd, &st) != 0) s = tf_fail(TF_ERR_IO, "%s: cannot stat: %s", path, strerror(errno));
    else if (S_ISDIR(st.st_mode)) s = tf_fail(TF_ERR_IO, "%s: is a directory", path);
    else if (S_ISREG(st.st_mode))
        s = read_regular(path, fd, (uint64_t)st.st_size, threads, out, info, &canonical);
    else {
        char *buf = NULL;
        size_t len = 0;
        s = tf_slurp_fd(path, fd, &buf, &len);
        if (s == TF_OK) s = parse_any(path, buf, len, threads, 1, out, info, &canonical);
        tf_free(buf);
    }
    close(fd);
    if (s == TF_OK) s = finish(path, out, threads, canonical, info);
    info->seconds = tf_wtime() - t0;
    return s;
}
