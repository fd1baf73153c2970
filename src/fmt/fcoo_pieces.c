/* SPDX-License-Identifier: BSD-3-Clause */
/* A mode's streamed chunks made piece by piece (fcoo_pieces.h). */
#include "fmt/fcoo_pieces.h"

#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"
#include "fmt/fcoo.h"
#include "fmt/row_counts.h"

static uint64_t words32(uint64_t bits) { return (bits + 31) / 32; }

/* Pieces: ranges of blocks of 2^shift rows, about piece_nnz non-zeros each. */
typedef struct pieces {
    uint32_t shift;
    uint64_t nblocks, *count; /* non-zeros per block */
} pieces;

static tf_status pieces_count(const tf_tensor *X, uint32_t mode, uint64_t piece_nnz, pieces *pc)
{
    if (piece_nnz >= X->nnz) { /* one piece, every row: no pass over X to count */
        pc->shift = 32;
        pc->nblocks = 1;
        TF_TRY(TF_ALLOC(pc->count, 1, "F-COO piece counts"));
        pc->count[0] = X->nnz;
        return TF_OK;
    }
    uint32_t bits = 0; /* at most 2^16 blocks: a private table per thread stays in cache */
    while (bits < 32 && (X->dims[mode] - 1) >> bits) ++bits;
    pc->shift = bits > 16 ? bits - 16 : 0;
    pc->nblocks = tf_row_blocks(X, mode, pc->shift);
    TF_TRY(TF_ALLOC(pc->count, pc->nblocks, "F-COO piece counts"));
    return tf_count_row_blocks(X, mode, pc->shift, 0, pc->count);
}

/* The next piece from block b: blocks [b, *end), *n non-zeros. */
static void piece_next(const pieces *pc, uint64_t b, uint64_t piece_nnz, uint64_t *end, uint64_t *n)
{
    uint64_t e = b, sum = 0;
    while (e < pc->nblocks && (sum == 0 || sum + pc->count[e] <= piece_nnz)) sum += pc->count[e++];
    *end = e;
    *n = sum;
}

/* P = X's n non-zeros whose `mode` index lies in [lo, hi), in X's order
 * (a stable compaction: thread t takes a contiguous range of X). */
static tf_status gather(const tf_tensor *X, uint32_t mode, uint64_t lo, uint64_t hi, uint64_t n, tf_tensor *P)
{
    const int T = tf_team_for_work(0, X->nnz / 65536 + 1, X->nnz);
    uint64_t *at = NULL;
    TF_TRY(TF_ALLOC(at, (uint64_t)T + 1, "F-COO piece offsets"));
    tf_status s = tf_tensor_alloc(P, X->order, X->dims, n);
    if (s != TF_OK) {
        tf_free(at);
        return s;
    }
    const uint32_t *ix = X->ind[mode];
    const uint64_t N = X->nnz;
#pragma omp parallel num_threads(T)
    {
        const int t = tf_thread_id(), nt = tf_thread_count();
        const uint64_t a = N * (uint64_t)t / (uint64_t)nt, b = N * (uint64_t)(t + 1) / (uint64_t)nt;
        uint64_t c = 0;
        for (uint64_t z = a; z < b; ++z) c += ix[z] >= lo && ix[z] < hi;
        at[t + 1] = c;
#pragma omp barrier
#pragma omp single
        {
            at[0] = 0;
            for (int q = 0; q < nt; ++q) at[q + 1] += at[q];
        }
        uint64_t w = at[t];
        for (uint64_t z = a; z < b; ++z) {
            if (!(ix[z] >= lo && ix[z] < hi)) continue;
            for (uint32_t m = 0; m < X->order; ++m) P->ind[m][w] = X->ind[m][z];
            P->vals[w++] = X->vals[z];
        }
    }
    tf_free(at);
    return TF_OK;
}

/* The sorted non-zeros from position base of the mode on: the carry of
 * the last piece (those past its last whole chunk) and the current piece
 * after it. */
typedef struct run {
    uint32_t np;
    uint64_t base, len, cap, hcap; /* hcap: head words held */
    uint32_t *pind[TF_MAX_ORDER];
    double *vals;
    uint32_t *head;
} run;

static void run_free(run *r)
{
    for (uint32_t j = 0; j < r->np; ++j) tf_free(r->pind[j]);
    tf_free(r->vals);
    tf_free(r->head);
    memset(r->pind, 0, sizeof r->pind);
    r->vals = NULL;
    r->head = NULL;
}

/* A run of cap non-zeros holding r's (cap >= r->len). */
static tf_status run_grow(run *r, uint64_t cap)
{
    for (uint32_t j = 0; j < r->np; ++j) TF_TRY(tf_realloc((void **)&r->pind[j], cap, sizeof(uint32_t), "F-COO run"));
    TF_TRY(tf_realloc((void **)&r->vals, cap, sizeof(double), "F-COO run"));
    TF_TRY(tf_realloc((void **)&r->head, words32(cap) + 1, sizeof(uint32_t), "F-COO run"));
    r->cap = cap;
    r->hcap = words32(cap) + 1;
    return TF_OK;
}

/* f's non-zeros appended to r: indices and values copied, head bits put
 * after r's (r->len need not be a multiple of 32; the head words may be
 * written one past the last). */
static void run_append(run *r, const tf_fcoo *f)
{
    const uint64_t L = r->len, n = f->nnz;
    for (uint32_t j = 0; j < r->np; ++j) tf_copy_bytes(r->pind[j] + L, f->pind[j], n * sizeof(uint32_t));
    tf_copy_bytes(r->vals + L, f->vals, n * sizeof(double));
    const uint32_t sh = (uint32_t)(L & 31);
    const uint64_t w0 = L / 32, nw = words32(n);
    if (sh == 0) {
        memcpy(r->head + w0, f->head, nw * sizeof(uint32_t));
    } else {
        r->head[w0] &= (1u << sh) - 1u; /* the carry's bits only */
        for (uint64_t w = 0; w < nw; ++w) {
            r->head[w0 + w] |= f->head[w] << sh;
            r->head[w0 + w + 1] = f->head[w] >> (32 - sh);
        }
    }
    r->len = L + n;
}

/* Positions [from, len) of r moved to its front (from: a multiple of 32). */
static void run_shift(run *r, uint64_t from)
{
    const uint64_t n = r->len - from;
    for (uint32_t j = 0; j < r->np; ++j) memmove(r->pind[j], r->pind[j] + from, n * sizeof(uint32_t));
    memmove(r->vals, r->vals + from, n * sizeof(double));
    memmove(r->head, r->head + from / 32, words32(n) * sizeof(uint32_t));
    r->base += from;
    r->len = n;
}

/* Start bits and partition segments of the partitions that begin in f's
 * non-zeros (positions at..at+f->nnz of the mode; segments before them:
 * seg0): from f's head bits, whose first is a segment's start. */
static void cut_piece(const tf_fcoo *f, uint64_t at, uint64_t seg0, tf_fcoo *meta)
{
    const uint64_t pn = meta->part_nnz, p0 = (at + pn - 1) / pn, p1 = (at + f->nnz + pn - 1) / pn;
    uint64_t heads = 0, w = 0; /* heads in f's words before word w */
    for (uint64_t p = p0; p < p1; ++p) {
        const uint64_t x = p * pn - at, xw = x / 32;
        while (w < xw) heads += (uint64_t)__builtin_popcount(f->head[w++]);
        const uint32_t upto = f->head[xw] & (uint32_t)((2ull << (x & 31)) - 1u); /* bits 0..x%32 */
        meta->part_seg[p] = (uint32_t)(seg0 + heads + (uint64_t)__builtin_popcount(upto) - 1);
        if ((f->head[xw] >> (x & 31)) & 1u) meta->start[p / 32] |= 1u << (p & 31);
    }
}

/* The whole chunks of r from chunk *next on: resident ones to `resident`,
 * the others packed into k's data; r keeps what is past the last. `last`:
 * r ends the mode (its last chunk may be short). */
static tf_status emit(run *r, tf_fcoo_chunks *k, tf_fcoo *meta, int last, tf_fcoo_resident_fn resident,
                      void *user, uint64_t *next)
{
    const uint64_t end = r->base + r->len, c0 = *next;
    uint64_t c1 = c0;
    while (c1 < k->nchunks && (k->part_off[c1 + 1] * k->part_nnz <= end || (last && c1 + 1 == k->nchunks))) ++c1;
    if (c1 == c0) return TF_OK;
    tf_fcoo view = *meta; /* pind, vals, head from r->base on */
    for (uint32_t j = 0; j < r->np; ++j) view.pind[j] = r->pind[j];
    view.vals = r->vals;
    view.head = r->head;
    const uint64_t cr = c1 < k->first ? c1 : k->first; /* resident: [c0, cr) */
    if (c0 < cr) {
        if (!resident) return tf_fail(TF_ERR_ARG, "F-COO chunks: chunk %llu is resident, no one takes it",
                                      (unsigned long long)c0);
        tf_fcoo_range g;
        memset(&g, 0, sizeof g);
        g.n0 = k->part_off[c0] * k->part_nnz;
        const uint64_t n1 = k->part_off[cr] * k->part_nnz;
        g.nnz = (n1 < k->nnz ? n1 : k->nnz) - g.n0;
        g.p0 = k->part_off[c0];
        g.parts = k->part_off[cr] - g.p0;
        for (uint32_t j = 0; j < r->np; ++j) g.pind[j] = r->pind[j] + (g.n0 - r->base);
        g.vals = r->vals + (g.n0 - r->base);
        g.head = r->head + (g.n0 - r->base) / 32;
        g.start = meta->start + g.p0 / 32;
        g.part_seg = meta->part_seg + g.p0;
        TF_TRY(resident(user, &g));
    }
    const uint64_t cs = c0 > k->first ? c0 : k->first; /* streamed: [cs, c1) */
    if (cs < c1 && !k->data) /* made now, after the first piece's sort: not beside it */
        TF_TRY(tf_alloc((void **)&k->data, k->off[k->nchunks] - k->off[k->first], 1, "streamed F-COO chunks (host)"));
    if (cs < c1) tf_fcoo_chunks_fill_range_at(&view, r->base, k, cs, c1, tf_fcoo_chunk_data(k, cs));
    *next = c1;
    if (c1 < k->nchunks) run_shift(r, k->part_off[c1] * k->part_nnz - r->base);
    else r->len = 0;
    return TF_OK;
}

static tf_status meta_make(const tf_tensor *X, uint32_t mode, const tf_fcoo_chunks *k, tf_fcoo *meta)
{
    memset(meta, 0, sizeof *meta);
    meta->order = X->order;
    meta->mode = mode;
    meta->nnz = X->nnz;
    memcpy(meta->dims, X->dims, sizeof meta->dims);
    for (uint32_t m = 0, j = 0; m < X->order; ++m)
        if (m != mode) meta->pmodes[j++] = m;
    meta->part_nnz = k->part_nnz;
    meta->nparts = k->nparts;
    const uint64_t maxseg = X->nnz < X->dims[mode] ? X->nnz : X->dims[mode];
    TF_TRY(TF_CALLOC(meta->start, words32(k->nparts) + 1, "F-COO start flags"));
    TF_TRY(TF_ALLOC(meta->part_seg, k->nparts + 1, "F-COO partition segments"));
    return TF_ALLOC(meta->seg_row, maxseg + 1, "F-COO segment rows");
}

/* f's arrays handed to an empty run (no copy): a piece with no carry. */
static void run_adopt(run *r, tf_fcoo *f)
{
    run_free(r);
    for (uint32_t j = 0; j < r->np; ++j) {
        r->pind[j] = f->pind[j];
        f->pind[j] = NULL;
    }
    r->vals = f->vals;
    r->head = f->head;
    f->vals = NULL;
    f->head = NULL;
    r->len = r->cap = f->nnz;
    r->hcap = words32(f->nnz);
}

/* One piece: gathered (the whole mode: X itself), sorted, its rows and
 * partitions recorded in meta, put after r's carry, its whole chunks
 * emitted. */
static tf_status piece(const tf_tensor *X, uint32_t mode, uint64_t lo, uint64_t hi, uint64_t n, int last,
                       tf_fcoo_chunks *k, run *r, tf_fcoo *meta, tf_fcoo_resident_fn resident, void *user,
                       uint64_t *next)
{
    tf_tensor P;
    memset(&P, 0, sizeof P);
    tf_fcoo f;
    memset(&f, 0, sizeof f);
    const int whole = lo == 0 && hi >= X->dims[mode];
    tf_status s = whole ? TF_OK : gather(X, mode, lo, hi, n, &P);
    if (s == TF_OK) s = tf_fcoo_build(whole ? X : &P, mode, k->part_nnz, &f);
    tf_tensor_free(&P);
    if (s == TF_OK) {
        memcpy(meta->seg_row + meta->nseg, f.seg_row, f.nseg * sizeof(uint32_t));
        cut_piece(&f, r->base + r->len, meta->nseg, meta);
        meta->nseg += f.nseg;
        if (r->len == 0) run_adopt(r, &f);
        else if (r->len + f.nnz > r->cap || words32(r->len + f.nnz) + 1 > r->hcap) /* run_append writes one word past */
            s = run_grow(r, r->len + f.nnz);
    }
    if (s == TF_OK && f.vals) run_append(r, &f);
    tf_fcoo_free(&f);
    if (s == TF_OK) s = emit(r, k, meta, last, resident, user, next);
    return s;
}

tf_status tf_fcoo_chunks_build(const tf_tensor *X, uint32_t mode, tf_fcoo_chunks *k, uint64_t piece_nnz,
                               tf_fcoo_resident_fn resident, void *user, tf_fcoo *meta)
{
    memset(meta, 0, sizeof *meta);
    if (mode >= X->order || k->order != X->order || k->nnz != X->nnz)
        return tf_fail(TF_ERR_ARG, "F-COO chunks: mode %u of an order-%u tensor of %llu non-zeros, planned for %u and %llu",
                       mode + 1, X->order, (unsigned long long)X->nnz, k->order, (unsigned long long)k->nnz);
    pieces pc;
    memset(&pc, 0, sizeof pc);
    run r;
    memset(&r, 0, sizeof r);
    r.np = X->order - 1;
    uint64_t next = 0;
    tf_status s = meta_make(X, mode, k, meta);
    if (s == TF_OK) s = pieces_count(X, mode, piece_nnz, &pc);
    for (uint64_t b = 0, e = 0, n = 0; s == TF_OK && b < pc.nblocks; b = e) {
        piece_next(&pc, b, piece_nnz ? piece_nnz : 1, &e, &n);
        const uint64_t lo = b << pc.shift, hi = e << pc.shift; /* one piece: shift 32, hi = 2^32 >= the mode's rows */
        if (n) s = piece(X, mode, lo, hi < X->dims[mode] ? hi : X->dims[mode], n, e == pc.nblocks, k, &r, meta,
                         resident, user, &next);
    }
    if (s == TF_OK && next < k->nchunks) /* the last piece was empty: the rest is in the carry */
        s = emit(&r, k, meta, 1, resident, user, &next);
    if (s == TF_OK && next != k->nchunks)
        s = tf_fail(TF_ERR_ARG, "F-COO chunks: %llu of %llu chunks made (the plan is not X's)",
                    (unsigned long long)next, (unsigned long long)k->nchunks);
    tf_free(pc.count);
    run_free(&r);
    if (s != TF_OK) tf_fcoo_free(meta);
    return s;
}
