/* SPDX-License-Identifier: BSD-3-Clause */
/* Parallel stable LSD radix sorts. A pass is a counting sort on one digit
 * of a 64-bit key, carried with a permutation; per-thread histograms keep
 * it stable and parallel. tf_radix_sort_into sorts the COO itself without
 * a global permutation: one scatter by the top key bits (through
 * write-combining buffers), then every bucket sorted in cache by the rest;
 * on an input in the canonical order only a prefix of the key is sorted
 * (sort_prefix), which for F-COO is the output mode alone. */
#include "core/radix.h"

#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"

#ifdef TF_RADIX_TIMING
/* A measuring aid (-DTF_RADIX_TIMING): seconds per phase of
 * tf_radix_sort_into (and the F-COO flags), summed over the process and
 * printed to stderr at exit. */
#include <stdio.h>
#include <stdlib.h>
double tf_radix_t[8];
static void tf_radix_print(void)
{
    static const char *name[8] = {"scan", "hist", "scatter", "buckets", "copy", "flags", "alloc", "other"};
    for (int i = 0; i < 8; ++i) fprintf(stderr, "radix %-8s %.3f s\n", name[i], tf_radix_t[i]);
}
static void tf_radix_mark(int i, double *last)
{
    static int registered;
    if (!__atomic_exchange_n(&registered, 1, __ATOMIC_RELAXED)) atexit(tf_radix_print);
    const double now = tf_wtime();
    tf_radix_t[i] += now - *last;
    *last = now;
}
#define TSTART double tmark_ = tf_wtime()
#define TMARK(i) tf_radix_mark(i, &tmark_)
#else
#define TSTART do { } while (0)
#define TMARK(i) do { } while (0)
#endif
#define MAX_DIGIT_BITS 16   /* tf_radix_order*: few passes over the whole array */
#define LOCAL_DIGIT_BITS 11 /* buckets in cache: 2048 bins stay in L1 */
#define PAR_MIN 65536       /* below this a pass runs on one thread */
#define BUCKET_LOG2 14      /* aim: 2^14 non-zeros per bucket ...      */
#define MAX_BUCKET_BITS 12  /* ... with at most 4096 scatter streams  */
static int max_bucket_bits = MAX_BUCKET_BITS;

void tf_radix_set_bucket_bits(int bits) { max_bucket_bits = bits >= 1 && bits <= 16 ? bits : MAX_BUCKET_BITS; }

static int bits_for(uint64_t n) /* bits to represent 0..n-1 */
{
    int b = 0;
    while (b < 64 && (n - 1) >> b) ++b;
    return b;
}

static void hist_phase(const uint64_t *k, uint64_t lo, uint64_t hi, int shift, uint64_t mask, uint64_t *h)
{
    for (uint64_t i = lo; i < hi; ++i) h[(k[i] >> shift) & mask]++;
}

/* Histograms -> exclusive offsets, bin-major then thread (stable).
 * Returns 1 when one bin holds all n keys (the pass would move nothing). */
static int prefix_phase(uint64_t *hist, int nt, uint64_t nb, uint64_t n)
{
    uint64_t run = 0;
    int single = 0;
    for (uint64_t b = 0; b < nb; ++b) {
        uint64_t tot = 0;
        for (int u = 0; u < nt; ++u) {
            uint64_t c = hist[(uint64_t)u * nb + b];
            hist[(uint64_t)u * nb + b] = run;
            run += c;
            tot += c;
        }
        if (tot == n) single = 1;
    }
    return single;
}

static void scatter_phase(const uint64_t *kin, const uint64_t *pin, uint64_t *kout, uint64_t *pout,
                          uint64_t lo, uint64_t hi, int shift, uint64_t mask, uint64_t *h)
{
    for (uint64_t i = lo; i < hi; ++i) {
        const uint64_t at = h[(kin[i] >> shift) & mask]++;
        kout[at] = kin[i];
        pout[at] = pin[i];
    }
}

/* One stable pass of (key, pos) by digit (key >> shift) & (2^bits - 1) on T
 * threads; hist holds T << bits entries. Returns 0 when nothing moved (the
 * outputs are then untouched). */
static int pass(const uint64_t *kin, const uint64_t *pin, uint64_t *kout, uint64_t *pout, uint64_t n,
                int shift, int bits, int T, uint64_t *hist)
{
    const uint64_t nb = 1ULL << bits, mask = nb - 1;
    if (T <= 1 || n < PAR_MIN) {
        memset(hist, 0, nb * sizeof *hist);
        hist_phase(kin, 0, n, shift, mask, hist);
        if (prefix_phase(hist, 1, nb, n)) return 0;
        scatter_phase(kin, pin, kout, pout, 0, n, shift, mask, hist);
        return 1;
    }
    int skip = 0;
    memset(hist, 0, (uint64_t)T * nb * sizeof *hist);
#pragma omp parallel num_threads(T)
    {
        const int t = tf_thread_id(), nt = tf_thread_count();
        const uint64_t lo = n * (uint64_t)t / (uint64_t)nt, hi = n * (uint64_t)(t + 1) / (uint64_t)nt;
        uint64_t *h = hist + (uint64_t)t * nb;
        hist_phase(kin, lo, hi, shift, mask, h);
#pragma omp barrier
#pragma omp single
        skip = prefix_phase(hist, nt, nb, n);
        if (!skip) scatter_phase(kin, pin, kout, pout, lo, hi, shift, mask, h);
    }
    return !skip;
}

/* Stable sort of (*key, *pos) by the bits set in `varying` (the others are
 * equal in every key), through the buffers; the pointers are swapped so
 * that *key, *pos hold the result. Returns 1 if anything moved. */
static int lsd_sort(uint64_t **key, uint64_t **pos, uint64_t **kbuf, uint64_t **pbuf, uint64_t n,
                    uint64_t varying, int max_bits, int T, uint64_t *hist)
{
    if (!varying || n < 2) return 0;
    const int lo = __builtin_ctzll(varying), hi = 64 - __builtin_clzll(varying);
    const int passes = (hi - lo + max_bits - 1) / max_bits, dbits = (hi - lo + passes - 1) / passes;
    int moved = 0;
    for (int shift = lo; shift < hi; shift += dbits) {
        if (!pass(*key, *pos, *kbuf, *pbuf, n, shift, hi - shift < dbits ? hi - shift : dbits, T, hist))
            continue;
        uint64_t *t = *key; *key = *kbuf; *kbuf = t;
        t = *pos; *pos = *pbuf; *pbuf = t;
        moved = 1;
    }
    return moved;
}

static uint64_t low_mask(int bits) { return bits >= 64 ? ~0ULL : (1ULL << bits) - 1; }

tf_status tf_radix_sort_pairs(uint64_t **keys, uint64_t **perm, uint64_t **kbuf, uint64_t **pbuf, uint64_t n,
                              int key_bits)
{
    const int T = tf_default_threads();
    uint64_t *hist = NULL;
    TF_TRY(TF_ALLOC(hist, (uint64_t)T << MAX_DIGIT_BITS, "radix histogram"));
    lsd_sort(keys, perm, kbuf, pbuf, n, low_mask(key_bits), MAX_DIGIT_BITS, T, hist);
    tf_free(hist);
    return TF_OK;
}
tf_status tf_radix_order(const tf_tensor *t, const uint32_t *mo, uint32_t nmodes, uint64_t **perm_out)
{
    const uint64_t n = t->nnz;
    uint64_t *keys = NULL, *perm = NULL, *kbuf = NULL, *pbuf = NULL;
    *perm_out = NULL;
    tf_status s = TF_ALLOC(keys, n, "sort keys");
    if (s == TF_OK) s = TF_ALLOC(perm, n, "sort permutation");
    if (s == TF_OK) s = TF_ALLOC(kbuf, n, "sort keys");
    if (s == TF_OK) s = TF_ALLOC(pbuf, n, "sort permutation");
    if (s != TF_OK) goto done;
#pragma omp parallel for num_threads(tf_default_threads()) schedule(static)
    for (int64_t k = 0; k < (int64_t)n; ++k) perm[k] = (uint64_t)k;
    /* Group consecutive least-significant modes into one 64-bit key when
     * their bits fit, to save passes. */
    for (int l = (int)nmodes - 1; l >= 0;) {
        int used = 0, first = l;
        while (l >= 0 && used + bits_for(t->dims[mo[l]]) <= 64) {
            used += bits_for(t->dims[mo[l]]);
            --l;
        }
        if (used == 0) continue; /* all remaining modes have length 1 */
        /* key = concat(mode mo[l+1] ... mo[first]), mo[first] least significant */
        const uint32_t *src[TF_MAX_ORDER];
        int width[TF_MAX_ORDER], nk = 0;
        for (int j = l + 1; j <= first; ++j) {
            width[nk] = bits_for(t->dims[mo[j]]);
            src[nk++] = t->ind[mo[j]];
        }
        const int64_t nn = (int64_t)n;
#pragma omp parallel for num_threads(tf_default_threads()) schedule(static)
        for (int64_t k = 0; k < nn; ++k) {
            uint64_t key = 0, p = perm[k];
            for (int j = 0; j < nk; ++j)
                key = (width[j] ? key << width[j] : key) | src[j][p];
            keys[k] = key;
        }
        s = tf_radix_sort_pairs(&keys, &perm, &kbuf, &pbuf, n, used);
        if (s != TF_OK) goto done;
    }
done:
    tf_free(keys); tf_free(kbuf); tf_free(pbuf);
    if (s != TF_OK) { tf_free(perm); perm = NULL; }
    *perm_out = perm;
    return s;
}

tf_status tf_apply_permutation(tf_tensor *t, const uint64_t *perm)
{
    const int64_t n = (int64_t)t->nnz;
    uint32_t *ibuf = NULL;
    double *vbuf = NULL;
    TF_TRY(TF_ALLOC(ibuf, t->nnz, "permuted indices"));
    tf_status s = TF_ALLOC(vbuf, t->nnz, "permuted values");
    if (s != TF_OK) { tf_free(ibuf); return s; }
    for (uint32_t m = 0; m < t->order; ++m) {
        const uint32_t *src = t->ind[m];
#pragma omp parallel for num_threads(tf_default_threads()) schedule(static)
        for (int64_t k = 0; k < n; ++k) ibuf[k] = src[perm[k]];
        uint32_t *old = t->ind[m];
        t->ind[m] = ibuf;
        ibuf = old;
    }
    const double *vs = t->vals;
#pragma omp parallel for num_threads(tf_default_threads()) schedule(static)
    for (int64_t k = 0; k < n; ++k) vbuf[k] = vs[perm[k]];
    tf_free(t->vals);
    t->vals = vbuf;
    tf_free(ibuf);
    return TF_OK;
}

/* ---- tf_radix_sort_into ---------------------------------------------------
 * The key is the concatenation of the modes' indices, mo[0] on top, each
 * over bits_for(its length) bits. A window is 64 (or fewer) consecutive key
 * bits, read from the index columns with a shift per overlapping mode. */
typedef struct window {
    int n;
    int col[TF_MAX_ORDER], shl[TF_MAX_ORDER], shr[TF_MAX_ORDER];
    uint64_t mask;
} window;

typedef struct engine {
    uint32_t nkey;
    uint32_t **dst;
    double *vals;
    int nwords;                          /* windows below the bucket bits */
    window word[TF_MAX_ORDER * 32 / 64]; /* word[0]: the least significant */
} engine;

static void window_init(window *w, const int *off, const int *bits, uint32_t nkey, int lo, int width)
{
    w->n = 0;
    w->mask = low_mask(width);
    for (uint32_t j = 0; j < nkey; ++j) {
        if (!bits[j] || off[j] >= lo + width || off[j] + bits[j] <= lo) continue;
        w->col[w->n] = (int)j;
        w->shl[w->n] = off[j] >= lo ? off[j] - lo : 0;
        w->shr[w->n] = off[j] < lo ? lo - off[j] : 0;
        w->n++;
    }
}

static inline uint64_t window_at(const window *w, const uint32_t *const *cols, uint64_t k)
{
    uint64_t v = 0;
    for (int i = 0; i < w->n; ++i) v |= ((uint64_t)cols[w->col[i]][k] >> w->shr[i]) << w->shl[i];
    return v & w->mask;
}

/* Sorts dst[*][lo, lo+n) and vals[lo, lo+n) by the key bits below the
 * bucket bits, on T threads. s: 5n words of scratch; hist: T << 11. */
static void sort_bucket(const engine *e, uint64_t lo, uint64_t n, uint64_t *s, int T, uint64_t *hist)
{
    uint64_t *key = s, *pos = s + n, *kb = s + 2 * n, *pb = s + 3 * n, *tmp = s + 4 * n;
    const uint32_t *cols[TF_MAX_ORDER];
    for (uint32_t j = 0; j < e->nkey; ++j) cols[j] = e->dst[j] + lo;
    const int64_t nn = (int64_t)n;
    T = n < PAR_MIN ? 1 : T;
#pragma omp parallel for num_threads(T) if (T > 1) schedule(static)
    for (int64_t i = 0; i < nn; ++i) pos[i] = (uint64_t)i;
    int moved = 0;
    for (int w = 0; w < e->nwords; ++w) { /* LSD over the words, least significant first */
        const window *win = &e->word[w];
        uint64_t any = 0, all = ~0ULL;
#pragma omp parallel for num_threads(T) if (T > 1) schedule(static) reduction(| : any) reduction(& : all)
        for (int64_t i = 0; i < nn; ++i) {
            const uint64_t k = window_at(win, cols, pos[i]);
            key[i] = k;
            any |= k;
            all &= k;
        }
        moved |= lsd_sort(&key, &pos, &kb, &pb, n, any ^ all, LOCAL_DIGIT_BITS, T, hist);
    }
    if (!moved) return;
    for (uint32_t j = 0; j < e->nkey; ++j) {
        uint32_t *c = e->dst[j] + lo, *t32 = (uint32_t *)tmp;
#pragma omp parallel for num_threads(T) if (T > 1) schedule(static)
        for (int64_t i = 0; i < nn; ++i) t32[i] = c[pos[i]];
        memcpy(c, t32, n * sizeof *c);
    }
    if (e->vals) {
        double *v = e->vals + lo, *td = (double *)tmp;
#pragma omp parallel for num_threads(T) if (T > 1) schedule(static)
        for (int64_t i = 0; i < nn; ++i) td[i] = v[pos[i]];
        memcpy(v, td, n * sizeof *v);
    }
}

/* A bucket sorted by key bits below the bucket bits that fit one pass
 * (all in word 0, at most DIRECT_BITS): one stable counting pass that
 * moves the columns themselves through a buffer, instead of sorting
 * (key, position) pairs and gathering. One thread. s: 2n words (a
 * destination per non-zero, then one column); hist: 2^DIRECT_BITS. */
#define DIRECT_BITS 14

static void sort_bucket_direct(const engine *e, uint64_t lo, uint64_t n, uint64_t *s, uint32_t *hist)
{
    const window *win = &e->word[0];
    const uint64_t nbins = 1ULL << DIRECT_BITS;
    uint32_t *dest = (uint32_t *)s;
    void *tmp = s + (n + 1) / 2;
    const uint32_t *cols[TF_MAX_ORDER];
    for (uint32_t j = 0; j < e->nkey; ++j) cols[j] = e->dst[j] + lo;
    memset(hist, 0, nbins * sizeof *hist);
    for (uint64_t i = 0; i < n; ++i) {
        const uint32_t dg = (uint32_t)window_at(win, cols, i);
        dest[i] = dg;
        hist[dg]++;
    }
    uint32_t run = 0;
    for (uint64_t b = 0; b < nbins; ++b) {
        const uint32_t c = hist[b];
        if (c == n) return; /* one digit: already in order */
        hist[b] = run;
        run += c;
    }
    for (uint64_t i = 0; i < n; ++i) dest[i] = hist[dest[i]]++;
    for (uint32_t j = 0; j < e->nkey; ++j) {
        uint32_t *c = e->dst[j] + lo, *t32 = (uint32_t *)tmp;
        for (uint64_t i = 0; i < n; ++i) t32[dest[i]] = c[i];
        memcpy(c, t32, n * sizeof *c);
    }
    if (e->vals) {
        double *v = e->vals + lo, *td = (double *)tmp;
        for (uint64_t i = 0; i < n; ++i) td[dest[i]] = v[i];
        memcpy(v, td, n * sizeof *v);
    }
}

/* The bucket scatter through write-combining buffers: each bucket keeps
 * the line of WC non-zeros it is filling, per column, in a small buffer (in
 * cache), placed as in the destination (slot = position mod WC); a full
 * line leaves at once, with non-temporal stores where the thread owns all
 * of it (no read of the destination line first, no cache pollution), so
 * the thousands of buckets' streams cost a TLB miss and a line per WC
 * non-zeros rather than per non-zero. A thread's first and last line in a
 * bucket may be shared with its neighbours: only its own slots are
 * written there, with plain stores. Same order as the plain scatter. */
#define WC 16             /* non-zeros per line of 4-byte indices (64 bytes) */
#ifndef WC_MIN_BUCKETS
#define WC_MIN_BUCKETS 64 /* fewer streams need no buffers */
#endif

/* bytes of one bucket's lines: nkey index lines and two of values (a multiple of 64) */
static uint64_t wc_bucket_bytes(uint32_t nkey) { return (uint64_t)nkey * WC * sizeof(uint32_t) + WC * sizeof(double); }

#if defined(__SSE2__)
static inline void stream_bytes(void *dst, const void *src, unsigned bytes) /* both 16-byte aligned */
{
    for (unsigned i = 0; i < bytes / 16; ++i)
        _mm_stream_si128((__m128i *)dst + i, _mm_load_si128((const __m128i *)src + i));
}
#define STREAM_FENCE() _mm_sfence()
#else
static inline void stream_bytes(void *dst, const void *src, unsigned bytes) { memcpy(dst, src, bytes); }
#define STREAM_FENCE() do { } while (0)
#endif

static void scatter_wc(const window *wd, const uint32_t *const *src, uint32_t nkey, const double *sv, uint32_t **dst,
                       double *dv, uint64_t lo, uint64_t hi, uint64_t nb, uint64_t *h, unsigned char *buf)
{
    const uint64_t per = wc_bucket_bytes(nkey), ibytes = (uint64_t)nkey * WC * sizeof(uint32_t);
    unsigned char *first = buf + nb * per; /* the first slot of the open line that is ours */
    int aligned = !dv || ((uintptr_t)dv & 15) == 0;
    for (uint32_t j = 0; j < nkey; ++j) aligned &= ((uintptr_t)dst[j] & 15) == 0;
    for (uint64_t b = 0; b < nb; ++b) first[b] = (unsigned char)(h[b] & (WC - 1));
    for (uint64_t k = lo; k < hi; ++k) {
        const uint64_t b = window_at(wd, src, k), at = h[b]++;
        const unsigned slot = (unsigned)(at & (WC - 1));
        uint32_t *ib = (uint32_t *)(buf + b * per);
        double *vb = (double *)(buf + b * per + ibytes);
        for (uint32_t j = 0; j < nkey; ++j) ib[j * WC + slot] = src[j][k];
        if (dv) vb[slot] = sv[k];
        if (slot != WC - 1) continue;
        const uint64_t line = at - (WC - 1);
        const unsigned f = first[b];
        first[b] = 0;
        if (f == 0 && aligned) {
            for (uint32_t j = 0; j < nkey; ++j) stream_bytes(dst[j] + line, ib + j * WC, WC * sizeof(uint32_t));
            if (dv) stream_bytes(dv + line, vb, WC * sizeof(double));
        } else {
            for (uint32_t j = 0; j < nkey; ++j) memcpy(dst[j] + line + f, ib + j * WC + f, (WC - f) * sizeof(uint32_t));
            if (dv) memcpy(dv + line + f, vb + f, (WC - f) * sizeof(double));
        }
    }
    for (uint64_t b = 0; b < nb; ++b) { /* the open lines: slots [first, next) */
        const unsigned f = first[b], end = (unsigned)(h[b] & (WC - 1));
        if (end <= f) continue; /* nothing open (a line just left, or none of ours) */
        const uint32_t *ib = (const uint32_t *)(buf + b * per);
        const double *vb = (const double *)(buf + b * per + ibytes);
        const uint64_t line = h[b] - end;
        for (uint32_t j = 0; j < nkey; ++j) memcpy(dst[j] + line + f, ib + j * WC + f, (end - f) * sizeof(uint32_t));
        if (dv) memcpy(dv + line + f, vb + f, (end - f) * sizeof(double));
    }
    STREAM_FENCE();
}

/* Which key modes need sorting. When the input is in the canonical order
 * (sorted by modes 0, 1, ..., order-1, ties allowed), a stable sort by a
 * prefix mo[0..p-1] of the key already puts the non-zeros in the order of
 * the whole key if the modes left out of the prefix, taken in ascending
 * order, begin with mo[p..nkey-1]: ties of the prefix keep the input's
 * order, which is ascending in those modes (and the stable order past
 * them). The shortest such prefix; nkey when the input is not sorted. */
static uint32_t sort_prefix(uint32_t order, const uint32_t *mo, uint32_t nkey, int sorted)
{
    if (!sorted) return nkey;
    for (uint32_t p = 0; p < nkey; ++p) {
        int in[TF_MAX_ORDER] = {0}, ok = 1;
        for (uint32_t j = 0; j < p; ++j) in[mo[j]] = 1;
        uint32_t at = p; /* the next key mode the ascending rest must match */
        for (uint32_t m = 0; m < order && at < nkey && ok; ++m)
            if (!in[m]) ok = mo[at++] == m;
        if (ok) return p;
    }
    return nkey;
}

/* One pass over the input: for every key column the OR and the AND of
 * its indices (the bits that vary), and whether the non-zeros are in the
 * canonical order (lexicographic by modes 0..order-1, ties allowed). In
 * blocks of SCAN_BLOCK non-zeros, mode by mode, so the loops vectorise and
 * each index is read once. */
#define SCAN_BLOCK 2048

static int scan_input(const tf_tensor *t, const uint32_t *mo, uint32_t nkey, int T, uint32_t *any,
                      uint32_t *all)
{
    const uint64_t n = t->nnz;
    const uint32_t N = t->order;
    uint32_t mode_any[TF_MAX_ORDER], mode_all[TF_MAX_ORDER];
    int sorted = 1;
    for (uint32_t m = 0; m < N; ++m) mode_any[m] = 0, mode_all[m] = ~0u;
#pragma omp parallel num_threads(T)
    {
        const int tid = tf_thread_id(), nt = tf_thread_count();
        const uint64_t lo = n * (uint64_t)tid / (uint64_t)nt, hi = n * (uint64_t)(tid + 1) / (uint64_t)nt;
        uint32_t a[TF_MAX_ORDER], b[TF_MAX_ORDER];
        for (uint32_t m = 0; m < N; ++m) a[m] = 0, b[m] = ~0u;
        unsigned char lt[SCAN_BLOCK], eq[SCAN_BLOCK]; /* k-1 < k, k-1 == k in the modes so far */
        int ok = 1;
        for (uint64_t k0 = lo; k0 < hi; k0 += SCAN_BLOCK) {
            const uint64_t len = hi - k0 < SCAN_BLOCK ? hi - k0 : SCAN_BLOCK;
            const uint64_t i0 = k0 == 0; /* pairs (k-1, k) from k = max(k0, 1) */
            memset(lt, 0, len);
            memset(eq, 1, len);
            for (uint32_t m = 0; m < N; ++m) {
                const uint32_t *c = t->ind[m] + k0;
                uint32_t x = a[m], y = b[m];
                for (uint64_t i = 0; i < len; ++i) x |= c[i], y &= c[i];
                a[m] = x, b[m] = y;
                if (!ok) continue;
                for (uint64_t i = i0; i < len; ++i) {
                    const uint32_t p = c[(int64_t)i - 1], q = c[i];
                    lt[i] |= (unsigned char)(eq[i] & (p < q));
                    eq[i] &= (unsigned char)(p == q);
                }
            }
            unsigned char fine = 1;
            for (uint64_t i = i0; i < len; ++i) fine &= lt[i] | eq[i];
            ok &= fine;
        }
#pragma omp critical(tf_radix_scan)
        {
            for (uint32_t m = 0; m < N; ++m) mode_any[m] |= a[m], mode_all[m] &= b[m];
            sorted &= ok;
        }
    }
    for (uint32_t j = 0; j < nkey; ++j) any[j] = mode_any[mo[j]], all[j] = mode_all[mo[j]];
    return sorted;
}

static void copy_columns(const tf_tensor *t, const uint32_t *const *src, uint32_t nkey, uint32_t **dst,
                         double *vals, int T)
{
    const int64_t nn = (int64_t)t->nnz;
#pragma omp parallel num_threads(T)
    {
        const int tid = tf_thread_id(), nt = tf_thread_count();
        const uint64_t lo = (uint64_t)nn * (uint64_t)tid / (uint64_t)nt, hi = (uint64_t)nn * (uint64_t)(tid + 1) / (uint64_t)nt;
        for (uint32_t j = 0; j < nkey; ++j) memcpy(dst[j] + lo, src[j] + lo, (hi - lo) * sizeof(uint32_t));
        if (vals) memcpy(vals + lo, t->vals + lo, (hi - lo) * sizeof(double));
    }
}

tf_status tf_radix_sort_into(const tf_tensor *t, const uint32_t *mo, uint32_t nkey, uint32_t **dst,
                             double *vals, int threads)
{
    TSTART;
    const uint64_t n = t->nnz;
    int T = threads > 0 ? threads : tf_default_threads();
    if (n < PAR_MIN) T = 1;
    const uint32_t *src[TF_MAX_ORDER];
    for (uint32_t j = 0; j < nkey; ++j) src[j] = t->ind[mo[j]];
    uint32_t any[TF_MAX_ORDER], all[TF_MAX_ORDER];
    const int sorted = scan_input(t, mo, nkey, T, any, all);
    /* the sort key: the first nsort key modes (the rest follow from the input order) */
    const uint32_t nsort = sort_prefix(t->order, mo, nkey, sorted);
    TMARK(0);
    if (nsort == 0) {
        copy_columns(t, src, nkey, dst, vals, T);
        TMARK(4);
        return TF_OK;
    }
    int off[TF_MAX_ORDER] = {0}, bits[TF_MAX_ORDER] = {0};
    for (int j = (int)nsort - 1, o = 0; j >= 0; --j) {
        bits[j] = bits_for(t->dims[mo[j]]);
        off[j] = o;
        o += bits[j];
    }
    /* the highest key bit that varies: the bits above are the same everywhere */
    int top = 0; /* bits 0..top-1 matter */
    for (uint32_t j = 0; j < nsort; ++j)
        if (any[j] ^ all[j]) {
            const int h = off[j] + 32 - __builtin_clz(any[j] ^ all[j]);
            if (h > top) top = h;
        }
    int d = bits_for(n) - BUCKET_LOG2;
    d = d < 0 ? 0 : d > max_bucket_bits ? max_bucket_bits : d;
    if (d > top) d = top;
    const int dlo = top - d;
    window wd;
    window_init(&wd, off, bits, nsort, dlo, d);
    engine e = {.nkey = nkey, .dst = dst, .vals = vals, .nwords = (dlo + 63) / 64};
    for (int w = 0; w < e.nwords; ++w)
        window_init(&e.word[w], off, bits, nsort, 64 * w, dlo - 64 * w < 64 ? dlo - 64 * w : 64);

    /* scatter by the bucket bits (stable: threads take consecutive ranges) */
    const uint64_t nb = 1ULL << d;
    uint64_t *hist = NULL, *start = NULL, *scratch = NULL;
    unsigned char *wc = NULL;
    const uint64_t wc_bytes = nb >= WC_MIN_BUCKETS ? wc_bucket_bytes(nkey) * nb + nb : 0;
    tf_status s = TF_CALLOC(hist, (uint64_t)T * nb, "radix bucket counts");
    if (s == TF_OK) s = TF_ALLOC(start, nb + 1, "radix buckets");
    if (s == TF_OK && wc_bytes) s = TF_ALLOC(wc, (uint64_t)T * wc_bytes, "radix scatter buffers");
    if (s != TF_OK) goto done;
#pragma omp parallel num_threads(T)
    {
        const int tid = tf_thread_id(), nt = tf_thread_count();
        const uint64_t lo = n * (uint64_t)tid / (uint64_t)nt, hi = n * (uint64_t)(tid + 1) / (uint64_t)nt;
        uint64_t *h = hist + (uint64_t)tid * nb;
        for (uint64_t k = lo; k < hi; ++k) h[window_at(&wd, src, k)]++;
#pragma omp barrier
#pragma omp single
        {
        start[nb] = tf_bucket_offsets(hist, start, nb, nt);
        TMARK(1);
        }
        if (wc)
            scatter_wc(&wd, src, nkey, t->vals, dst, vals, lo, hi, nb, h, wc + (uint64_t)tid * wc_bytes);
        else
            for (uint64_t k = lo; k < hi; ++k) {
                const uint64_t at = h[window_at(&wd, src, k)]++;
                for (uint32_t j = 0; j < nkey; ++j) dst[j][at] = src[j][k];
                if (vals) vals[at] = t->vals[k];
            }
    }
    TMARK(2);
    if (e.nwords == 0) goto done; /* the bucket bits were the whole key */

    /* Buckets above 8 times the mean or a quarter of a thread's share
     * (heavy slices) are sorted one at a time by all threads, the others
     * each by one thread: a thread's scratch stays at 8 mean buckets. */
    uint64_t big = n / (4 * (uint64_t)T) < 8 * (n >> d) ? n / (4 * (uint64_t)T) : 8 * (n >> d);
    big = big > PAR_MIN ? big : PAR_MIN;
    uint64_t max_small = 0, max_big = 0;
    for (uint64_t b = 0; b < nb; ++b) {
        const uint64_t c = start[b + 1] - start[b];
        if (c <= big && c > max_small) max_small = c;
        if (c > big && c > max_big) max_big = c;
    }
    /* one counting pass per bucket when the bits below the bucket bits are few */
    const int direct = e.nwords == 1 && dlo <= DIRECT_BITS && big < (1ULL << 32);
    const uint64_t hsz = 1ULL << (direct ? DIRECT_BITS : LOCAL_DIGIT_BITS),
                   per = (direct ? 2 : 5) * max_small + hsz;
    const uint64_t words = (uint64_t)T * per > 5 * max_big + (uint64_t)T * hsz ? (uint64_t)T * per
                                                                                : 5 * max_big + (uint64_t)T * hsz;
    if ((s = TF_ALLOC(scratch, words, "radix bucket scratch")) != TF_OK) goto done;
    TMARK(6);
    const int64_t nbi = (int64_t)nb;
#pragma omp parallel num_threads(T)
    {
        uint64_t *mine = scratch + (uint64_t)tf_thread_id() * per;
#pragma omp for schedule(dynamic, 1)
        for (int64_t b = 0; b < nbi; ++b) {
            const uint64_t c = start[b + 1] - start[b];
            if (c < 2 || c > big) continue;
            if (direct) sort_bucket_direct(&e, start[b], c, mine + hsz, (uint32_t *)mine);
            else sort_bucket(&e, start[b], c, mine + hsz, 1, mine);
        }
    }
    for (uint64_t b = 0; b < nb; ++b) {
        const uint64_t c = start[b + 1] - start[b];
        if (c > big) sort_bucket(&e, start[b], c, scratch + (uint64_t)T * hsz, T, scratch);
    }
    TMARK(3);
done:
    tf_free(wc);
    tf_free(hist);
    tf_free(start);
    tf_free(scratch);
    return s;
}
