/* SPDX-License-Identifier: BSD-3-Clause */
/* tf_read_tensor / tf_parse_tensor: content detection (tenfold binary, xz,
 * gzip, Matrix Market, .tns), then the canonical form every reader
 * returns: sorted, duplicates summed, zeros dropped (kept with
 * tf_read_opts.keep_zeros); then a part of it
 * (tf_read_opts.parts; over MPI ranks, read_ranks.c). */
#include <errno.h>
#include <float.h>
#include <stdio.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/canonical.h"
#include "core/check_args.h"
#include "core/error.h"
#include "core/parallel.h"
#include "core/progress.h"
#include "io/bin_format.h"
#include "io/decompress.h"
#include "io/header_lines.h"
#include "io/input.h"
#include "io/read_ranks.h"
#include "io/readers.h"
#include "io/stream.h"
#include "io/text_scan.h"

uint64_t tf_scan_nonzeros(const tf_tensor *t, int T, int *canonical)
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
    *canonical = sorted;
    return first_bad;
}

tf_status tf_bad_nonzero(const char *name, const tf_tensor *t, uint64_t k, uint64_t first)
{
    const uint64_t at = first + k + 1; /* the file's numbering, from 1 */
    if (!isfinite(t->vals[k]))
        return tf_fail(TF_ERR_RANGE, "%s: non-zero %llu: value is not finite", name, (unsigned long long)at);
    for (uint32_t m = 0; m < t->order; ++m)
        if (t->ind[m][k] >= t->dims[m])
            return tf_fail(TF_ERR_RANGE, "%s: non-zero %llu: mode %u index %u is outside 0..%llu", name,
                           (unsigned long long)at, m + 1, t->ind[m][k], (unsigned long long)t->dims[m] - 1);
    return TF_OK;
}

/* Checks indices < dims and finite values in parallel; *canonical says
 * whether the non-zeros are already strictly sorted and free of zeros. */
static tf_status check_tensor(const char *name, const tf_tensor *t, int T, int *canonical)
{
    const uint64_t bad = tf_scan_nonzeros(t, T, canonical);
    return bad == UINT64_MAX ? TF_OK : tf_bad_nonzero(name, t, bad, 0);
}

/* ------------------------------------------------ sums of duplicates */

/* Where entry e (0-based, in the order read) came from: "name:LINE: field
 * F" for text, "name: non-zero K" for binary; *brief gets "line L" /
 * "non-zero K". msrc: for mirrored entries (symmetric .mtx), the entry each
 * mirrors. */
static void entry_place(const char *name, const tf_origin *org, const uint64_t *msrc, uint64_t e, char *full,
                        size_t full_cap, char *brief, size_t brief_cap)
{
    const char *mirror = "";
    if (msrc && e >= org->mirrors) {
        e = msrc[e - org->mirrors];
        mirror = " (mirrored)";
    }
    const uint64_t line = org->kind == TF_ORIGIN_TEXT ? tf_line_map_line(&org->lines, e) : 0;
    char scratch[8];
    if (!full) { full = scratch; full_cap = sizeof scratch; }
    if (line) {
        snprintf(full, full_cap, "%s:%llu: field %u%s", name, (unsigned long long)line, org->value_field, mirror);
        snprintf(brief, brief_cap, "line %llu%s", (unsigned long long)line, mirror);
    } else if (org->kind == TF_ORIGIN_TEXT) { /* the line map was given up (a great many comment lines) */
        snprintf(full, full_cap, "%s: entry line %llu (not counting comment and blank lines), field %u%s", name,
                 (unsigned long long)e + 1, org->value_field, mirror);
        snprintf(brief, brief_cap, "entry line %llu%s", (unsigned long long)e + 1, mirror);
    } else {
        snprintf(full, full_cap, "%s: non-zero %llu", name, (unsigned long long)e + 1);
        snprintf(brief, brief_cap, "non-zero %llu", (unsigned long long)e + 1);
    }
}

/* The coordinate of non-zero k as the file writes it ("1 2 3"). */
static void coordinate(const tf_tensor *t, uint64_t k, int base, char *buf, size_t cap)
{
    size_t o = 0;
    buf[0] = '\0';
    for (uint32_t m = 0; m < t->order && o < cap; ++m)
        o += (size_t)snprintf(buf + o, cap - o, m ? " %llu" : "%llu", (unsigned long long)t->ind[m][k] + (unsigned)base);
}

/* Sum of |value| (inf if it overflows): a bound of every sum of duplicates. */
static double abs_sum(const tf_tensor *t, int T)
{
    double sum = 0.0;
    const int64_t n = (int64_t)t->nnz;
    const double *v = t->vals;
#pragma omp parallel for num_threads(T) reduction(+ : sum) schedule(static)
    for (int64_t k = 0; k < n; ++k) sum += fabs(v[k]);
    return sum;
}

static tf_status single_value_error(const char *where, double v)
{
    return tf_fail(TF_ERR_RANGE, "%s: expected a value that fits single precision (at most %g in magnitude), found %g",
                   where, (double)FLT_MAX, v);
}

/* The sums of duplicates a canonical t would hold must be finite -- and
 * with o->precision TF_SINGLE, every value within the float range -- else
 * an error naming the lines (org) of the entries. Most tensors need one
 * pass: the sum of all |values| bounds every sum. Otherwise t is sorted
 * here with each entry's number in place of its value, so the entries of
 * a coordinate are found in the order they were read (t comes back sorted,
 * its values in place). canonical: 1 if t has no duplicates. */
static tf_status check_sums(const char *name, tf_tensor *t, int canonical, const tf_read_opts *o,
                            const tf_origin *org, int base)
{
    const int single = o->precision == TF_SINGLE;
    const double limit = single ? (double)FLT_MAX : DBL_MAX;
    const uint64_t n = t->nnz;
    char where[TF_MAX_ORDER * 12 + 512], first[96], brief[96], coord[TF_MAX_ORDER * 12];
    if ((canonical == 1 && !single) || n == 0) return TF_OK;
    if (abs_sum(t, tf_resolve_threads(o->threads)) <= limit) return TF_OK;
    if (canonical == 1) { /* no duplicates: each value on its own, in the order read */
        for (uint64_t k = 0; k < n; ++k)
            if (fabs(t->vals[k]) > limit) {
                entry_place(name, org, NULL, k, where, sizeof where, brief, sizeof brief);
                return single_value_error(where, t->vals[k]);
            }
        return TF_OK;
    }
    double *orig = NULL;
    uint64_t *msrc = NULL;
    TF_TRY(TF_ALLOC(orig, n, "values (checking sums of duplicates)"));
    tf_status s = TF_OK;
    if (org->mirrors < n && (s = TF_ALLOC(msrc, n - org->mirrors, "mirrored entries")) == TF_OK)
        for (uint64_t k = 0, w = 0; k < org->mirrors; ++k)
            if (t->ind[0][k] != t->ind[1][k]) msrc[w++] = k;
    if (s == TF_OK) {
        memcpy(orig, t->vals, n * sizeof(double));
        for (uint64_t k = 0; k < n; ++k) t->vals[k] = (double)k; /* exact below 2^53 */
        s = tf_tensor_sort(t, NULL);                              /* stable */
        if (s != TF_OK) memcpy(t->vals, orig, n * sizeof(double));
    }
    const uint32_t N = t->order;
    for (uint64_t k = 0, j; s == TF_OK && k < n; k = j) {
        double sum = orig[(uint64_t)t->vals[k]];
        for (j = k + 1; j < n; ++j) {
            uint32_t m = 0;
            while (m < N && t->ind[m][j] == t->ind[m][k]) ++m;
            if (m < N) break;
            const double v = orig[(uint64_t)t->vals[j]];
            sum += v;
            if (isfinite(sum)) continue;
            coordinate(t, k, base, coord, sizeof coord);
            entry_place(name, org, msrc, (uint64_t)t->vals[j], where, sizeof where, brief, sizeof brief);
            entry_place(name, org, msrc, (uint64_t)t->vals[k], NULL, 0, first, sizeof first);
            s = tf_fail(TF_ERR_RANGE,
                        "%s: coordinate %s again (first on %s; duplicates are summed): expected a value that keeps "
                        "their sum finite, found %g: the sum overflows the double range",
                        where, coord, first, v);
            break;
        }
        if (s != TF_OK || !single || !(fabs(sum) > limit)) continue;
        const double v = orig[(uint64_t)t->vals[j - 1]];
        entry_place(name, org, msrc, (uint64_t)t->vals[j - 1], where, sizeof where, brief, sizeof brief);
        if (j - k == 1) {
            s = single_value_error(where, v);
            break;
        }
        coordinate(t, k, base, coord, sizeof coord);
        entry_place(name, org, msrc, (uint64_t)t->vals[k], NULL, 0, first, sizeof first);
        s = tf_fail(TF_ERR_RANGE,
                    "%s: coordinate %s again (first on %s; %llu entries, summed): expected a sum that fits single "
                    "precision (at most %g in magnitude), found %g: the sum is %g",
                    where, coord, first, (unsigned long long)(j - k), (double)FLT_MAX, v, sum);
    }
    if (s == TF_OK)
        for (uint64_t k = 0; k < n; ++k) t->vals[k] = orig[(uint64_t)t->vals[k]];
    tf_free(msrc);
    tf_free(orig);
    return s;
}

static void origin_init(tf_origin *org)
{
    memset(org, 0, sizeof *org);
    org->mirrors = UINT64_MAX;
}

tf_status tf_read_finish(const char *name, tf_tensor *t, const tf_read_opts *o, int canonical, int shared,
                         tf_read_info *info, const tf_origin *org)
{
    const int threads = o->threads;
    const uint64_t before = t->nnz;
    tf_status s = TF_OK;
    if (canonical < 0) s = check_tensor(name, t, tf_resolve_threads(threads), &canonical);
    if (s == TF_OK) s = check_sums(name, t, canonical, o, org, info->index_base);
    if (s == TF_OK && !canonical) {
        tf_progress_report(o->progress, o->progress_user, TF_STEP_SORT, 0, 0, 0);
        uint64_t zeros = 0;
        s = tf_tensor_canonicalize_zeros(t, o->keep_zeros, &info->duplicates, &zeros);
        if (o->keep_zeros) info->zeros_kept = zeros;
        else info->zeros = zeros;
    }
    if (s == TF_OK && t->nnz == 0 && shared)
        s = tf_fail_shared(TF_ERR_PARSE, "%s: no non-zeros (all %llu entries are zero or cancel out)", name,
                           (unsigned long long)before);
    else if (s == TF_OK && t->nnz == 0)
        s = tf_fail(TF_ERR_PARSE, "%s: no non-zeros (all %llu entries are zero or cancel out)", name,
                    (unsigned long long)before);
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

/* 1 if name ends in .mtx, .mtx.xz or .mtx.gz (any case). */
static int has_mtx_name(const char *name)
{
    static const char *const ext[] = {".mtx", ".mtx.xz", ".mtx.gz"};
    size_t n = strlen(name);
    for (size_t i = 0; i < sizeof ext / sizeof *ext; ++i) {
        size_t e = strlen(ext[i]);
        if (n > e && strcasecmp(name + n - e, ext[i]) == 0) return 1;
    }
    return 0;
}

/* The header of a .tns text, read into the window: its lines must end
 * within the header limit; the first entry line after it is looked for
 * too (quoted in messages), without that limit. */
static tf_status need_tns_header(tf_text_src *src)
{
    tf_line_cursor c;
    size_t b, e;
    TF_TRY(tf_src_need_lines(src, '#', 1));
    tf_lines_init(&c, src->text, src->len, 0);
    const uint32_t want = tf_next_content_line(&c, '#', &b, &e) ? tf_tns_header_lines(src->text + b, src->text + e) : 1;
    TF_TRY(tf_src_need_lines(src, '#', want));
    return tf_src_want_lines(src, '#', want + 1);
}

/* Detects the content of a text source's first window and parses it (not
 * yet canonical). A binary image in a stream is read whole. inside: the
 * compression the source is decoded from (0 none, 1 xz, 2 gzip). */
static tf_status parse_src(tf_text_src *src, int inside, const tf_read_opts *o, tf_tensor *t,
                           tf_read_info *info, int *canonical, tf_origin *org)
{
    const char *name = src->name;
    *canonical = -1;
    if (src->len == 0) return tf_fail(TF_ERR_PARSE, "%s: empty file (no non-zeros)", name);
    if (is_bin(src->text, src->len)) {
        TF_TRY(tf_src_slurp(src));
        info->format = TF_FILE_BIN;
        info->declared_dims = 1;
        info->bytes = src->len;
        TF_TRY(tf_bin_parse_mem(name, src->text, src->len, o->threads, t));
        info->entries = t->nnz;
        org->kind = TF_ORIGIN_BIN;
        return TF_OK;
    }
    TF_TRY(tf_src_check_start(src, inside)); /* compressed inside, a BOM, CR line ends */
    if (src->len == 0) return tf_fail(TF_ERR_PARSE, "%s: empty file (no non-zeros)", name);
    tf_status s;
    if (is_mtx(src->text, src->len)) {
        /* the banner is a '%' line: the header is the size line; the first
         * entry line is looked for too (quoted in messages) */
        TF_TRY(tf_src_need_lines(src, '%', 1));
        TF_TRY(tf_src_want_lines(src, '%', 2));
        s = tf_mtx_parse(src, o->threads, t, info, canonical, org);
    } else if (has_mtx_name(name)) {
        char found[80];
        const char *nl = memchr(src->text, '\n', src->len);
        tf_describe_found(src->text, nl ? nl : src->text + src->len, found, sizeof found);
        return tf_fail(TF_ERR_PARSE, "%s:1: expected the %%%%MatrixMarket banner, found %s", name,
                       found);
    } else {
        TF_TRY(need_tns_header(src));
        s = tf_tns_parse(src, o, t, info, canonical, org);
    }
    info->bytes = src->bytes;
    return s;
}

/* Parses data[0..len): compressed bytes through a decoder stream, text in
 * place, a binary image by copy. */
static tf_status parse_mem(const char *name, const char *data, size_t len, const tf_read_opts *o,
                           tf_tensor *t, tf_read_info *info, int *canonical, tf_origin *org)
{
    tf_text_src src;
    *canonical = -1;
    if (len == 0) return tf_fail(TF_ERR_PARSE, "%s: empty file (no non-zeros)", name);
    if (tf_is_xz(data, len) || tf_is_gzip(data, len)) {
        tf_decoder *dec = NULL;
        int kind = 0;
        TF_TRY(tf_decoder_open_mem(name, data, len, o->threads, &dec, &kind));
        tf_status s = tf_src_init_stream(&src, name, dec);
        tf_src_set_progress(&src, o->progress, o->progress_user, len);
        if (s == TF_OK) s = parse_src(&src, kind, o, t, info, canonical, org);
        tf_src_free(&src);
        info->compressed = kind;
        return s;
    }
    tf_src_init_mem(&src, name, data, len);
    tf_src_set_progress(&src, o->progress, o->progress_user, len);
    return parse_src(&src, 0, o, t, info, canonical, org);
}

/* Streams an fd (a regular file, a compressed file, a pipe) through the
 * decoder; total: the bytes it holds from where it stands, 0 if unknown
 * (progress); regular: the fd is a regular file of `total` bytes from
 * there (input that ends sooner is an error: the file shrank). */
static tf_status parse_fd(const char *name, int fd, uint64_t total, int regular, const tf_read_opts *o,
                          tf_tensor *t, tf_read_info *info, int *canonical, tf_origin *org)
{
    tf_decoder *dec = NULL;
    tf_text_src src;
    int kind = 0;
    *canonical = -1;
    TF_TRY(tf_decoder_open_fd(name, fd, o->threads, &dec, &kind));
    if (regular) tf_decoder_expect(dec, total);
    tf_status s = tf_src_init_stream(&src, name, dec);
    tf_src_set_progress(&src, o->progress, o->progress_user, total);
    if (s == TF_OK) s = parse_src(&src, kind, o, t, info, canonical, org);
    tf_src_free(&src);
    info->compressed = kind;
    return s;
}

void tf_read_opts_default(tf_read_opts *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->threads = 0;
    o->base = TF_BASE_AUTO;
}

static tf_status check_opts(const char *fn, const tf_read_opts *o)
{
    TF_TRY(tf_threads_arg(fn, o->threads));
    if (o->base != TF_BASE_AUTO && o->base != 0 && o->base != 1)
        return tf_fail(TF_ERR_ARG, "%s: base must be -1 (auto), 0 or 1, got %d", fn, o->base);
    if (o->keep_zeros != 0 && o->keep_zeros != 1)
        return tf_fail(TF_ERR_ARG, "%s: keep_zeros must be 0 or 1, got %d", fn, o->keep_zeros);
    if (o->parts > 1 && o->part >= o->parts)
        return tf_fail(TF_ERR_ARG, "%s: part %llu of %llu (parts are 0..%llu)", fn, (unsigned long long)o->part,
                       (unsigned long long)o->parts, (unsigned long long)o->parts - 1);
    return TF_OK;
}

tf_status tf_tensor_keep_part(tf_tensor *t, uint64_t part, uint64_t parts)
{
    TF_TRY(tf_tensor_arg("tf_tensor_keep_part", "t", t));
    if (parts < 1 || part >= parts)
        return tf_fail(TF_ERR_ARG, "tf_tensor_keep_part: part %llu of %llu", (unsigned long long)part,
                       (unsigned long long)parts);
    const uint64_t k0 = (uint64_t)((unsigned __int128)t->nnz * part / parts);
    const uint64_t k1 = (uint64_t)((unsigned __int128)t->nnz * (part + 1) / parts);
    tf_tensor p;
    TF_TRY(tf_tensor_alloc(&p, t->order, t->dims, k1 - k0));
    for (uint32_t m = 0; m < t->order; ++m) memcpy(p.ind[m], t->ind[m] + k0, (k1 - k0) * sizeof(uint32_t));
    memcpy(p.vals, t->vals + k0, (k1 - k0) * sizeof(double));
    tf_tensor_free(t);
    *t = p;
    return TF_OK;
}

static tf_status parse_tensor(const char *fn, const char *name, const char *text, size_t len,
                              const tf_read_opts *opts, tf_tensor *out, tf_read_info *info)
{
    tf_read_info local;
    tf_read_opts def;
    double t0 = tf_wtime();
    TF_ARG_NOT_NULL(fn, out);
    if (!info) info = &local;
    if (!opts) { tf_read_opts_default(&def); opts = &def; }
    memset(info, 0, sizeof *info);
    memset(out, 0, sizeof *out);
    if (!name) name = "(memory)";
    TF_TRY(check_opts(fn, opts));
    if (!text && len) return tf_fail(TF_ERR_ARG, "%s: text is NULL (%s, %zu bytes)", fn, name, len);
    int canonical = -1;
    tf_origin org;
    origin_init(&org);
    tf_progress_report(opts->progress, opts->progress_user, TF_STEP_READ, 0, len, 0);
    tf_status s = parse_mem(name, text, len, opts, out, info, &canonical, &org);
    if (s == TF_OK) s = tf_read_finish(name, out, opts, canonical, 0, info, &org);
    tf_line_map_free(&org.lines);
    tf_progress_report(opts->progress, opts->progress_user, TF_STEP_READ, len, len, 1);
    TF_TRY(s);
    info->seconds = tf_wtime() - t0;
    return TF_OK;
}

tf_status tf_parse_tensor_opts(const char *name, const char *text, size_t len,
                               const tf_read_opts *opts, tf_tensor *out, tf_read_info *info)
{
    return parse_tensor("tf_parse_tensor_opts", name, text, len, opts, out, info);
}

tf_status tf_parse_tensor(const char *name, const char *text, size_t len, int threads,
                          tf_tensor *out, tf_read_info *info)
{
    tf_read_opts o;
    tf_read_opts_default(&o);
    o.threads = threads;
    return parse_tensor("tf_parse_tensor", name, text, len, &o, out, info);
}

/* Regular file: binary goes through pread into the arrays; text (plain or
 * compressed) is read in windows with read(), never mapped: a file cut
 * short while it is read is an error, not a SIGBUS. */
static tf_status read_regular(const char *path, int fd, uint64_t size, const tf_read_opts *o,
                              tf_tensor *t, tf_read_info *info, int *canonical, tf_origin *org)
{
    char head[TF_BIN_MAGIC_LEN > 6 ? TF_BIN_MAGIC_LEN : 6];
    if (size == 0) return tf_fail(TF_ERR_PARSE, "%s: empty file (no non-zeros)", path);
    ssize_t got = pread(fd, head, sizeof head, 0);
    size_t n = got > 0 ? (size_t)got : 0;
    if (is_bin(head, n)) {
        info->format = TF_FILE_BIN;
        info->declared_dims = 1;
        info->bytes = size;
        if (o->collective && o->parts > 1) { /* each rank its part, the whole file's checks together */
            *canonical = -2;
            return tf_read_bin_ranks(path, fd, size, o, t, info);
        }
        TF_TRY(tf_bin_read_fd(path, fd, size, o->threads, o->progress, o->progress_user, t));
        info->entries = t->nnz;
        org->kind = TF_ORIGIN_BIN;
        return TF_OK;
    }
    return parse_fd(path, fd, size, 1, o, t, info, canonical, org);
}

static tf_status read_tensor(const char *fn, const char *path, const tf_read_opts *opts, tf_tensor *out,
                             tf_read_info *info)
{
    tf_read_info local;
    tf_read_opts def;
    double t0 = tf_wtime();
    TF_ARG_NOT_NULL(fn, out);
    if (!info) info = &local;
    if (!opts) { tf_read_opts_default(&def); opts = &def; }
    memset(info, 0, sizeof *info);
    memset(out, 0, sizeof *out);
    TF_TRY(check_opts(fn, opts));
    TF_ARG_NOT_NULL(fn, path);
    if (!*path) return tf_fail(TF_ERR_ARG, "no input file given");
    if (opts->collective && opts->parts > 1 && !strcmp(path, "-"))
        return tf_fail(TF_ERR_ARG, "reading standard input ('-') is not possible on MPI ranks (mpirun gives it to "
                                   "rank 0 alone); convert it to a file first (tenfold convert - FILE.bin)");
    /* ranks sharing a host's CPUs: each a team of its share from the read on */
    if (opts->collective && opts->parts > 1) TF_TRY(tf_read_ranks_meet(opts));
    int fd = -1, is_stdin = 0;
    const char *name = path;
    TF_TRY(tf_open_input(path, &fd, &name, &is_stdin));
    struct stat st;
    tf_status s = TF_OK;
    int canonical = -1;
    tf_origin org;
    origin_init(&org);
    const int stat_ok = fstat(fd, &st) == 0;
    const uint64_t size = stat_ok && S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0; /* for progress */
    tf_progress_report(opts->progress, opts->progress_user, TF_STEP_READ, 0, size, 0);
    if (!stat_ok) s = tf_fail(TF_ERR_IO, "%s: cannot stat: %s", name, strerror(errno));
    else if (S_ISDIR(st.st_mode)) s = tf_fail(TF_ERR_IO, "%s: is a directory", name);
    else if (S_ISREG(st.st_mode) && (!is_stdin || lseek(fd, 0, SEEK_CUR) == 0))
        s = read_regular(name, fd, (uint64_t)st.st_size, opts, out, info, &canonical, &org);
    else { /* a pipe, a device, or standard input part-way through a file: from where it is */
        const off_t at = S_ISREG(st.st_mode) ? lseek(fd, 0, SEEK_CUR) : -1;
        const uint64_t rest = at >= 0 && at <= st.st_size ? (uint64_t)(st.st_size - at) : 0;
        s = parse_fd(name, fd, rest, S_ISREG(st.st_mode) && at >= 0, opts, out, info, &canonical, &org);
    }
    close(fd);
    if (s == TF_OK && canonical != -2) s = tf_read_finish(name, out, opts, canonical, 0, info, &org);
    tf_line_map_free(&org.lines);
    if (s == TF_OK && canonical != -2) { /* read whole (a .bin in parts is done): cut on every rank */
        info->total_nnz = out->nnz;
        if (opts->collective && opts->parts > 1) s = tf_read_whole_ranks(name, opts, out, info);
        else if (opts->parts > 1) s = tf_tensor_keep_part(out, opts->part, opts->parts);
        if (s != TF_OK) tf_tensor_free(out);
    }
    tf_progress_report(opts->progress, opts->progress_user, TF_STEP_READ, size, size, 1);
    info->seconds = tf_wtime() - t0;
    return s;
}

tf_status tf_read_tensor_opts(const char *path, const tf_read_opts *opts, tf_tensor *out,
                              tf_read_info *info)
{
    return read_tensor("tf_read_tensor_opts", path, opts, out, info);
}

tf_status tf_read_tensor(const char *path, int threads, tf_tensor *out, tf_read_info *info)
{
    tf_read_opts o;
    tf_read_opts_default(&o);
    o.threads = threads;
    return read_tensor("tf_read_tensor", path, &o, out, info);
}
