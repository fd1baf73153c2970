/* SPDX-License-Identifier: BSD-3-Clause */
/* A tensor read by the ranks of MPI_COMM_WORLD together
 * (tf_read_opts.collective): they first agree on what they read, and a
 * tenfold .bin read in parts is checked as one process checks the whole
 * file, so the ranks accept and refuse exactly what one process does. */
#include <stdio.h>
#include <string.h>

#include "seams/dist.h"
#include "core/error.h"
#include "core/parallel.h"
#include "io/read_ranks.h"
#include "io/readers.h"

/* The ranks, checked against the part the caller asked for. */
static tf_status world(const tf_read_opts *o, tf_dist *d)
{
    memset(d, 0, sizeof *d);
    TF_TRY(tf_dist_world(d));
    if ((uint64_t)d->size != o->parts || (uint64_t)d->rank != o->part)
        return tf_fail(TF_ERR_ARG, "read options: a collective read of part %llu of %llu on rank %d of %d (the "
                                   "parts are the ranks)", (unsigned long long)o->part,
                       (unsigned long long)o->parts, d->rank, d->size);
    return TF_OK;
}

tf_status tf_read_ranks_meet(const tf_read_opts *o)
{
    tf_dist d;
    return world(o, &d);
}

static void add_u64(tf_agree *a, const char *name, const char *fmt, uint64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, fmt, (unsigned long long)v);
    tf_agree_add(a, name, buf);
}

/* What every rank's read must agree on first: order and dims, how it reads
 * (in parts or whole: the collectives that follow differ), non-zeros and
 * the checksum (for a .bin in parts, the file's, checked after). */
static void input_record(tf_agree *a, const tf_tensor *shape, const char *how, uint64_t nnz, uint64_t sum)
{
    char dims[TF_MAX_ORDER * 24 + 1] = "", *at = dims;
    for (uint32_t m = 0; m < shape->order; ++m)
        at += snprintf(at, sizeof dims - (size_t)(at - dims), "%s%llu", m ? " x " : "",
                       (unsigned long long)shape->dims[m]);
    memset(a, 0, sizeof *a);
    add_u64(a, "order", "%llu", shape->order);
    tf_agree_add(a, "dims", dims);
    tf_agree_add(a, "input read", how);
    add_u64(a, "non-zeros", "%llu", nnz);
    add_u64(a, "checksum", "%016llx", sum);
}

tf_status tf_read_whole_ranks(const char *name, const tf_read_opts *o, tf_tensor *t, tf_read_info *info)
{
    (void)name;
    tf_dist d;
    TF_TRY(world(o, &d));
    info->checksum = tf_tensor_checksum(t, o->threads);
    tf_agree a;
    input_record(&a, t, "whole, by every rank", t->nnz, info->checksum);
    TF_TRY(d.agree(&a));
    return tf_tensor_keep_part(t, o->part, o->parts);
}

/* 1 if coordinate a comes strictly before b. */
static int before(const uint32_t *a, const tf_tensor *t, uint64_t k)
{
    for (uint32_t m = 0; m < t->order; ++m)
        if (a[m] != t->ind[m][k]) return a[m] < t->ind[m][k];
    return 0;
}

/* The part that holds the file's non-zero k. */
static int owner_of(uint64_t k, uint64_t nnz, int parts)
{
    for (int r = 1; r < parts; ++r)
        if (k < (uint64_t)((unsigned __int128)nnz * (unsigned)r / (unsigned)parts)) return r - 1;
    return parts - 1;
}

/* Not sorted and distinct (or a zero) somewhere: every rank reads the whole
 * file and makes it canonical, as one process would, then keeps its part. */
static tf_status read_whole(const char *name, int fd, uint64_t size, const tf_read_opts *o, tf_tensor *t,
                            tf_read_info *info)
{
    TF_TRY(tf_bin_read_fd(name, fd, size, o->threads, o->progress, o->progress_user, t));
    info->entries = t->nnz;
    /* the file is the same on every rank (agreed, checksum checked): so is an empty result */
    const tf_origin org = {.kind = TF_ORIGIN_BIN, .mirrors = UINT64_MAX}; /* non-zeros named by number */
    TF_TRY(tf_read_finish(name, t, o, -1, 1, info, &org));
    info->total_nnz = t->nnz;
    info->checksum = tf_tensor_checksum(t, o->threads);
    const tf_status s = tf_tensor_keep_part(t, o->part, o->parts);
    if (s != TF_OK) tf_tensor_free(t);
    return s;
}

/* In order, as one process (bin_read.c, read.c): the header and length
 * (each rank), then the ranks agree on the file; each reads its part and
 * hashes the blocks that start in it; the blocks' hashes XOR-ed over the
 * ranks give the file's checksum; then the first bad non-zero over the
 * ranks (its holder words the message, numbered in the file); then
 * whether the file is canonical -- each part, and across each boundary
 * (the non-zero before a part's first, read from the file). */
tf_status tf_read_bin_ranks(const char *name, int fd, uint64_t size, const tf_read_opts *o, tf_tensor *t,
                            tf_read_info *info)
{
    tf_dist d;
    tf_bin_part p;
    memset(t, 0, sizeof *t);
    TF_TRY(world(o, &d));
    TF_TRY(tf_bin_part_open(name, fd, size, o->part, o->parts, &p));
    tf_agree a;
    input_record(&a, &p.shape, "in parts (a tenfold .bin)", p.shape.nnz, p.sum);
    tf_status s = d.agree(&a);
    if (s == TF_OK) s = tf_bin_part_read(name, fd, o->threads, &p, t);
    if (s == TF_OK) s = d.allreduce_u64(p.blocks, p.nblocks, TF_RANKS_XOR);
    if (s == TF_OK && tf_bin_part_checksum(&p) != p.sum)
        s = tf_fail_shared(TF_ERR_PARSE, "%s: tenfold binary: checksum mismatch (the file is corrupt)", name);
    uint64_t v[2] = {UINT64_MAX, 1}; /* the file's first bad non-zero; 1 if canonical */
    if (s == TF_OK) {
        int canonical = 1;
        const uint64_t bad = tf_scan_nonzeros(t, tf_resolve_threads(o->threads), &canonical);
        if (bad != UINT64_MAX) v[0] = p.k0 + bad;
        if (canonical && t->nnz && p.k0 > 0) { /* across the boundary with the part before */
            uint32_t prev[TF_MAX_ORDER];
            s = tf_bin_part_coord(name, fd, &p, p.k0 - 1, prev);
            canonical = s == TF_OK && before(prev, t, 0);
        }
        v[1] = (uint64_t)canonical;
    }
    if (s == TF_OK) s = d.allreduce_u64(v, 2, TF_RANKS_MIN);
    if (s == TF_OK && v[0] != UINT64_MAX) { /* as one process: the first bad non-zero of the file */
        char msg[1024] = "";
        const int holder = owner_of(v[0], p.shape.nnz, d.size);
        if (holder == d.rank) {
            tf_bad_nonzero(name, t, v[0] - p.k0, p.k0);
            snprintf(msg, sizeof msg, "%s", tf_last_error());
        }
        s = d.bcast_from(msg, sizeof msg, holder);
        if (s == TF_OK) s = tf_fail_shared(TF_ERR_RANGE, "%s", msg);
    }
    if (s == TF_OK) {
        info->entries = p.shape.nnz;
        info->total_nnz = p.shape.nnz;
        info->checksum = p.sum;
        if (!v[1] || p.shape.nnz == 0) {
            tf_tensor_free(t);
            s = read_whole(name, fd, size, o, t, info);
        }
    }
    if (s != TF_OK) tf_tensor_free(t);
    tf_bin_part_free(&p);
    return s;
}
