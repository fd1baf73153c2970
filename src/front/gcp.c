/* SPDX-License-Identifier: BSD-3-Clause */
/* tf_gcp, the front end of GCP: resolves and checks the options (the sample
 * sizes GenTen's defaults where 0), the values for the loss and the start,
 * creates the backend (as CP-APR chooses: a context of several GPUs or of
 * GPU ranks, their GPUs, src/gpu/gcp/multi.cu; one GPU, src/gpu/gcp, asked
 * for or under auto where there is one; else the CPU of one process or of
 * MPI ranks), then
 * runs the algorithm (algo/gcp.c) on it. On ranks every check that reads
 * the tensor is shared: a failure on one rank is every rank's (none is
 * left waiting in a collective). */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "algo/gcp.h"
#include "core/alloc.h"
#include "core/error.h"
#include "front/auto_backend.h"
#include "front/device_choice.h"
#include "seams/context.h"
#include "seams/dist.h"
#include "cpu/gcp_sample.h"
#include "cpu/gcp_kernel.h"

/* The dense mode's largest tensor (entries). */
#define DENSE_MAX (UINT64_C(1) << 26)

static const char *const loss_names[TF_GCP_LOSSES] = {"gaussian",       "poisson",         "poisson-log",
                                                      "bernoulli-odds", "bernoulli-logit", "gamma",
                                                      "rayleigh"};

const char *tf_gcp_loss_name(tf_gcp_loss loss)
{
    return (int)loss >= 0 && (int)loss < TF_GCP_LOSSES ? loss_names[loss] : NULL;
}

int tf_gcp_loss_parse(const char *name)
{
    static const struct { const char *alias; int loss; } alias[] = {
        {"normal", TF_GCP_GAUSSIAN},        {"count", TF_GCP_POISSON},
        {"bernoulli", TF_GCP_BERNOULLI_ODDS}, {"binary", TF_GCP_BERNOULLI_ODDS},
        {"logit", TF_GCP_BERNOULLI_LOGIT}};
    if (!name) return -1;
    for (int l = 0; l < TF_GCP_LOSSES; ++l)
        if (!strcmp(name, loss_names[l])) return l;
    for (size_t a = 0; a < sizeof alias / sizeof *alias; ++a)
        if (!strcmp(name, alias[a].alias)) return alias[a].loss;
    return -1;
}

const char *tf_gcp_sampling_name(tf_gcp_sampling s)
{
    static const char *const names[] = {"stratified", "semi-stratified"};
    return (int)s >= 0 && (int)s < 2 ? names[s] : NULL;
}

double tf_gcp_loss_lower_bound(tf_gcp_loss loss)
{
    switch (loss) {
    case TF_GCP_POISSON:
    case TF_GCP_BERNOULLI_ODDS:
    case TF_GCP_GAMMA:
    case TF_GCP_RAYLEIGH: return 0.0;
    default: return -HUGE_VAL;
    }
}

void tf_gcp_opts_default(tf_gcp_opts *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->size = (uint32_t)sizeof *o;
    o->loss = TF_GCP_GAUSSIAN;
    o->rank = 10;
    o->seed = TF_DEFAULT_SEED;
    o->epoch_iters = 1000;
    o->max_epochs = 0; /* 100 sampled, 1000 dense (resolved) */
    o->rate = 1e-3;
    o->decay = 0.1;
    o->max_fails = 1;
    o->beta1 = 0.9;
    o->beta2 = 0.999;
    o->adam_eps = 1e-8;
    o->ftol = 1e-12;
    o->pgtol = 1e-8;
    o->backend = TF_BACKEND_AUTO;
}

#define OPTS_SIZE_FIRST (offsetof(tf_gcp_opts, stop) + sizeof(void *))

static tf_status check_num(const char *name, double v, double lo, double hi, int lo_open)
{
    if (!(v >= lo && v <= hi) || (lo_open && v == lo) || isnan(v))
        return tf_fail(TF_ERR_ARG, "gcp: %s %g is outside %s%g, %g]", name, v, lo_open ? "(" : "[", lo, hi);
    return TF_OK;
}

static tf_status resolve_opts(const tf_gcp_opts *in, tf_gcp_opts *out)
{
    tf_gcp_opts_default(out);
    if (in) {
        if (in->size < OPTS_SIZE_FIRST)
            return tf_fail(TF_ERR_ARG, "gcp: tf_gcp_opts.size is %u, expected at least %zu (set it up with "
                                       "tf_gcp_opts_default)", in->size, (size_t)OPTS_SIZE_FIRST);
        memcpy(out, in, in->size < sizeof *out ? in->size : sizeof *out);
        out->size = (uint32_t)sizeof *out;
    }
    const tf_gcp_opts *o = out;
    if (!tf_gcp_loss_name(o->loss)) return tf_fail(TF_ERR_ARG, "gcp: unknown loss %d", (int)o->loss);
    if (o->rank < 1 || o->rank > TF_MAX_RANK)
        return tf_fail(TF_ERR_ARG, "gcp: rank %llu is outside 1..%u", (unsigned long long)o->rank, TF_MAX_RANK);
    if (o->epoch_iters < 1) return tf_fail(TF_ERR_ARG, "gcp: epoch_iters is 0 (expected at least 1)");
    if (!out->max_epochs) out->max_epochs = o->dense ? 1000 : 100;
    TF_TRY(check_num("rate", o->rate, 0.0, 1e6, 1));
    TF_TRY(check_num("decay", o->decay, 0.0, 1.0, 1));
    TF_TRY(check_num("beta1", o->beta1, 0.0, 1.0, 0));
    TF_TRY(check_num("beta2", o->beta2, 0.0, 1.0, 0));
    if (o->beta1 >= 1.0 || o->beta2 >= 1.0) return tf_fail(TF_ERR_ARG, "gcp: beta1 and beta2 must be below 1");
    TF_TRY(check_num("adam_eps", o->adam_eps, 0.0, 1.0, 0));
    TF_TRY(check_num("gtol", o->gtol, -1e300, 1e300, 0));
    TF_TRY(check_num("ftol", o->ftol, 0.0, 1.0, 0));
    TF_TRY(check_num("pgtol", o->pgtol, 0.0, 1e300, 0));
    if (o->threads < 0) return tf_fail(TF_ERR_ARG, "gcp: threads %d is negative", o->threads);
    if (!tf_gcp_sampling_name(o->sampling))
        return tf_fail(TF_ERR_ARG, "gcp: unknown sampling %d (0 stratified, 1 semi-stratified)", (int)o->sampling);
    if (o->backend != TF_BACKEND_AUTO && o->backend != TF_BACKEND_CPU && o->backend != TF_BACKEND_GPU)
        return tf_fail(TF_ERR_ARG, "gcp: unknown backend %d", (int)o->backend);
    return TF_OK;
}

static int has_checkpoint(const tf_gcp_opts *o)
{
    const tf_checkpoint *ck = o->checkpoint;
    return ck && ((ck->path && *ck->path) || (ck->resume && *ck->resume));
}

/* What keeps a run on the CPU (NULL: nothing): the dense mode (its
 * L-BFGS hands whole vectors over; its tensors are small). */
static const char *cpu_only(const tf_gcp_opts *o)
{
    if (o->dense) return "the dense loss mode runs on the CPU only (--device cpu; its tensors have at most 2^26 entries)";
    return NULL;
}

/* Where a context of several GPUs, or of MPI ranks on GPUs, runs it (as
 * CP-APR chooses): *multi on those GPUs (src/gpu/gcp/multi.cu; a
 * rank-local input gathered whole on every rank: gather_whole), sampled
 * mode only; what cpu_only names refused when the GPU was asked for (the
 * option or the context), else on the CPU (one process, or the ranks'
 * CPUs), *note set. */
static tf_status choose_multi(const tf_gcp_opts *o, int *multi, int *note)
{
    tf_context *c = o->context;
    *multi = *note = 0;
    if (!c || !(c->dist || c->opts.ndevices > 1)) return TF_OK;
    const int ranks = c->dist != NULL;
    tf_status (*fail)(tf_status, const char *, ...) = ranks ? tf_fail_shared : tf_fail;
    const int gpus = tf_context_resolve(c) == TF_BACKEND_GPU;
    if (gpus && o->backend == TF_BACKEND_CPU)
        return fail(TF_ERR_ARG, "gcp: the run's context is on %s GPUs; the CPU backend was asked for",
                    ranks ? "its ranks'" : "several");
    if (!gpus) {
        if (o->backend == TF_BACKEND_GPU)
            return fail(TF_ERR_UNAVAILABLE, "gcp: this run's context is on the CPU (it has no GPU%s)",
                        ranks ? ": --device gpu puts one rank on each GPU" : "");
        return TF_OK;
    }
    const char *why = cpu_only(o);
    if (why && (o->backend == TF_BACKEND_GPU || c->opts.backend == TF_BACKEND_GPU))
        return fail(TF_ERR_UNAVAILABLE, "gcp: %s", why);
    *note = why != NULL;
    *multi = !why;
    return TF_OK;
}

/* Where the run may go, before the tensor is looked at: several GPUs or GPU
 * ranks (choose_multi), one GPU (not what cpu_only names); MPI ranks: the
 * CPU's, sampled mode. */
static tf_status check_place(const tf_gcp_opts *o, int *multi, int *note)
{
    const tf_context *c = o->context;
    const int ranks = c && c->dist;
    tf_status (*fail)(tf_status, const char *, ...) = ranks ? tf_fail_shared : tf_fail;
    if (ranks && o->dense)
        return fail(TF_ERR_UNAVAILABLE, "gcp: the dense loss mode is not available on MPI ranks (its tensors have at "
                                        "most 2^26 entries: one process runs it)");
    TF_TRY(choose_multi(o, multi, note));
    const char *why = cpu_only(o);
    if (why && !ranks && (o->backend == TF_BACKEND_GPU || (c && c->opts.backend == TF_BACKEND_GPU)))
        return fail(TF_ERR_UNAVAILABLE, "gcp: %s", why);
    if (o->distributed_input && !ranks)
        return tf_fail(TF_ERR_ARG, "gcp: distributed_input needs a distributed context (MPI ranks)");
    if (o->dense && has_checkpoint(o))
        return fail(TF_ERR_ARG, "gcp: checkpoints are not available in the dense loss mode (its runs are short)");
    return TF_OK;
}

/* One GPU (asked for, or under auto where the context's device -- without
 * a context, the machine -- has one), as CP-APR chooses; never for the
 * dense mode, on ranks or in a context of several GPUs (choose_multi). */
static int on_gpu(const tf_gcp_opts *o)
{
    tf_context *c = o->context;
    if (cpu_only(o) || (c && (c->dist || c->opts.ndevices > 1))) return 0;
    const tf_backend asked = o->backend == TF_BACKEND_AUTO && c && c->opts.backend == TF_BACKEND_GPU
                                 ? TF_BACKEND_GPU : o->backend;
    return tf_choose_backend(c, asked, 1) == TF_BACKEND_GPU;
}

/* The GPU backend (src/gpu/gcp) in o's context or a private one (*own,
 * freed by the caller after the backend); under auto a problem the GPU
 * cannot hold (TF_ERR_NOMEM) or a GPU backend that is not there after all
 * (TF_ERR_UNAVAILABLE: a CPU-only module, an order above the GPU's) runs
 * on the CPU, the note saying why. */
static tf_status create_gpu(const tf_tensor *X, const tf_gcp_opts *o, tf_gcp_backend *be, tf_context **own,
                            char *note, size_t note_len)
{
    tf_gcp_opts go = *o;
    TF_TRY(tf_context_for_call(o->context, TF_BACKEND_GPU, o->device, o->threads, &go.context, own));
    tf_status s = tf_cuda_gcp_backend_create(X, &go, be);
    if (s == TF_OK) return s;
    tf_context_free(*own);
    *own = NULL;
    if (s == TF_ERR_UNAVAILABLE && o->backend == TF_BACKEND_AUTO) {
        tf_cpu_fallback_note(note, note_len);
        return tf_cpu_gcp_backend_create(X, o, NULL, be);
    }
    if (!tf_gpu_fallback(s, o->backend, note, note_len)) return s;
    return tf_cpu_gcp_backend_create(X, o, NULL, be);
}

/* On ranks (d): s, one rank's failure (the lowest failing rank's message),
 * made every rank's; without ranks s itself. */
static tf_status shared(const tf_dist *d, tf_status s)
{
    if (!d) return s;
    char what[512] = "";
    if (s != TF_OK) snprintf(what, sizeof what, "%s", tf_last_error());
    uint64_t holder = s != TF_OK ? (uint64_t)d->rank : UINT64_MAX, code = (uint64_t)s;
    TF_TRY(d->allreduce_u64(&holder, 1, TF_RANKS_MIN));
    if (holder == UINT64_MAX) return TF_OK;
    TF_TRY(d->bcast_from(what, sizeof what, (int)holder));
    TF_TRY(d->bcast_from(&code, sizeof code, (int)holder));
    return tf_fail_shared((tf_status)code, "%s", what);
}

/* X's values suit the loss (pyttb's checks): counts for Poisson, 0/1 for
 * Bernoulli, > 0 for Gamma and Rayleigh. */
static tf_status check_values(const tf_tensor *X, tf_gcp_loss loss)
{
    for (uint64_t k = 0; k < X->nnz; ++k) {
        const double v = X->vals[k];
        const char *need = NULL;
        if ((loss == TF_GCP_POISSON || loss == TF_GCP_POISSON_LOG) && !(v >= 0.0 && v == floor(v)))
            need = "counts (integers >= 0)";
        else if ((loss == TF_GCP_BERNOULLI_ODDS || loss == TF_GCP_BERNOULLI_LOGIT) && v != 0.0 && v != 1.0)
            need = "0 or 1";
        else if ((loss == TF_GCP_GAMMA || loss == TF_GCP_RAYLEIGH) && !(v > 0.0))
            need = "values > 0";
        if (need) {
            char at[256];
            size_t n = 0;
            for (uint32_t m = 0; m < X->order && n < sizeof at; ++m)
                n += (size_t)snprintf(at + n, sizeof at - n, "%s%llu", m ? ", " : "",
                                      (unsigned long long)X->ind[m][k] + 1);
            return tf_fail(TF_ERR_ARG, "gcp: the %s loss needs %s: the non-zero at (%s) (1-based) is %.17g",
                           tf_gcp_loss_name(loss), need, at, v);
        }
    }
    return TF_OK;
}

static tf_status check_start(const tf_tensor *X, const tf_gcp_opts *o)
{
    const tf_ktensor *k = o->init;
    if (!k) return TF_OK;
    if (k->order != X->order || k->rank != o->rank)
        return tf_fail(TF_ERR_ARG, "gcp: the initial Kruskal tensor has order %u rank %llu, the run %u and %llu",
                       k->order, (unsigned long long)k->rank, X->order, (unsigned long long)o->rank);
    const double lb = tf_gcp_loss_lower_bound(o->loss);
    for (uint32_t m = 0; m < X->order; ++m) {
        const tf_matrix *f = &k->factors[m];
        if (f->rows != X->dims[m] || f->cols != o->rank || !f->data)
            return tf_fail(TF_ERR_ARG, "gcp: initial factor %u is %llu x %llu, expected %llu x %llu", m + 1,
                           (unsigned long long)f->rows, (unsigned long long)f->cols,
                           (unsigned long long)X->dims[m], (unsigned long long)o->rank);
        for (uint64_t e = 0; e < f->rows * f->cols; ++e)
            if (!isfinite(f->data[e]) || f->data[e] < lb)
                return tf_fail(TF_ERR_ARG, "gcp: initial factor %u has %g at row %llu, column %llu (expected "
                               "finite%s)", m + 1, f->data[e], (unsigned long long)(e / f->cols + 1),
                               (unsigned long long)(e % f->cols + 1), lb == 0.0 ? " and >= 0 for this loss" : "");
    }
    for (uint64_t r = 0; k->lambda && r < k->rank; ++r)
        if (!isfinite(k->lambda[r]) || k->lambda[r] < lb)
            return tf_fail(TF_ERR_ARG, "gcp: initial lambda %llu is %g", (unsigned long long)r + 1, k->lambda[r]);
    return TF_OK;
}

/* prod dims as a double, and whether it fits the dense mode. */
static double numel_of(const tf_tensor *X)
{
    double n = 1.0;
    for (uint32_t m = 0; m < X->order; ++m) n *= (double)X->dims[m];
    return n;
}

/* GenTen's default sample sizes (tenfold/gcp.h) where 0. */
static void resolve_samples(const tf_tensor *X, tf_gcp_opts *o)
{
    const uint64_t nnz = X->nnz;
    const double zeros_d = numel_of(X) - (double)nnz;
    const uint64_t zeros = zeros_d > 1.8e19 ? UINT64_MAX : (uint64_t)zeros_d;
    uint64_t ftmp = (nnz + 99) / 100, gtmp = (3 * nnz + o->max_epochs - 1) / o->max_epochs;
    if (ftmp < 100000) ftmp = 100000;
    if (gtmp < 1000) gtmp = 1000;
    if (!o->fnz) o->fnz = ftmp < nnz ? ftmp : nnz;
    if (!o->fz) o->fz = o->fnz < zeros ? o->fnz : zeros;
    if (!o->gnz) o->gnz = gtmp < nnz ? gtmp : nnz;
    const int semi = o->sampling == TF_GCP_SEMI_STRATIFIED; /* its zeros: any entry */
    const double numel = numel_of(X);
    const uint64_t entries = numel > 1.8e19 ? UINT64_MAX : (uint64_t)numel;
    if (!o->gz) o->gz = semi ? (o->gnz < entries ? o->gnz : entries) : o->gnz < zeros ? o->gnz : zeros;
    if (!zeros) o->fz = 0;
    if (!zeros && !semi) o->gz = 0;
    if (!nnz) o->fnz = o->gnz = 0;
}

/* On ranks with a distributed input: the whole tensor's non-zero count,
 * this rank's first canonical index, and (*keys, allocated) the linear
 * index of every non-zero of the whole (8 bytes each, gathered); vals not
 * NULL: *vals (allocated) every non-zero's value too. */
static tf_status gather_keys(const tf_tensor *X, const tf_dist *d, uint64_t *nnz, uint64_t *held, uint64_t **keys,
                             double **vals)
{
    const uint64_t P = (uint64_t)d->size;
    uint64_t *cnt = NULL, *row_lo = NULL;
    double *buf = NULL;
    tf_status s = TF_ALLOC(cnt, 2 * P + 1, "GCP rank counts");
    if (s != TF_OK) return s;
    row_lo = cnt + P;
    memset(cnt, 0, P * sizeof *cnt);
    cnt[d->rank] = X->nnz;
    s = d->allreduce_u64(cnt, P, TF_RANKS_XOR); /* every slot one rank's: the XOR is the count */
    row_lo[0] = 0;
    for (uint64_t r = 0; r < P; ++r) row_lo[r + 1] = row_lo[r] + cnt[r];
    *nnz = row_lo[P];
    *held = row_lo[d->rank];
    double numel = 1.0;
    uint64_t place[TF_MAX_ORDER];
    for (uint32_t n = 0; n < X->order; ++n) {
        place[n] = n ? place[n - 1] * X->dims[n - 1] : 1;
        numel *= (double)X->dims[n];
    }
    if (s == TF_OK && !(numel < 9.2e18))
        s = tf_fail_shared(TF_ERR_UNAVAILABLE, "gcp: on MPI ranks the tensor's entries (%.6g) must be fewer than "
                                               "2^63 (one process runs it)", numel);
    if (s == TF_OK) s = TF_ALLOC(buf, *nnz ? *nnz : 1, "GCP non-zero keys of every rank");
    s = shared(d, s);
    if (s != TF_OK) {
        tf_free(cnt);
        tf_free(buf);
        return s;
    }
    uint64_t *key = (uint64_t *)(void *)buf;
    for (uint64_t k = 0; k < X->nnz; ++k) {
        uint64_t e = 0;
        for (uint32_t n = 0; n < X->order; ++n) e += X->ind[n][k] * place[n];
        key[*held + k] = e;
    }
    s = d->allgather_rows(buf, row_lo, 1, d->round_bytes); /* bytes moved as they are */
    double *v = NULL;
    if (vals) s = shared(d, s == TF_OK ? TF_ALLOC(v, *nnz ? *nnz : 1, "GCP non-zero values of every rank") : s);
    if (s == TF_OK && vals) {
        memcpy(v + *held, X->vals, X->nnz * sizeof *v);
        s = d->allgather_rows(v, row_lo, 1, d->round_bytes);
    }
    tf_free(cnt);
    if (s != TF_OK) {
        tf_free(buf);
        tf_free(v);
        return s;
    }
    *keys = key;
    if (vals) *vals = v;
    return TF_OK;
}

/* On GPU ranks with a distributed input: the whole tensor into W (every
 * GPU holds it: src/gpu/gcp/multi.cu), the ranks' parts in rank order (the
 * canonical order, as one process reads it), from the gathered keys and
 * values. */
static tf_status gather_whole(const tf_tensor *X, const tf_dist *d, tf_tensor *W)
{
    uint64_t nnz = 0, held = 0, *keys = NULL;
    double *vals = NULL;
    memset(W, 0, sizeof *W);
    TF_TRY(gather_keys(X, d, &nnz, &held, &keys, &vals));
    tf_status s = shared(d, tf_tensor_alloc(W, X->order, X->dims, nnz));
    if (s == TF_OK) {
        uint64_t place[TF_MAX_ORDER];
        for (uint32_t n = 0; n < X->order; ++n) place[n] = n ? place[n - 1] * X->dims[n - 1] : 1;
        for (uint64_t k = 0; k < nnz; ++k) {
            for (uint32_t n = 0; n < X->order; ++n) W->ind[n][k] = (uint32_t)(keys[k] / place[n] % X->dims[n]);
            W->vals[k] = vals[k];
        }
    }
    tf_free(keys);
    tf_free(vals);
    return s;
}

/* tf_gcp_run with o->checkpoint: the state to write and the one to go on
 * from (the checkpoint's factors as the backend held them, lambda ones). */
static tf_status checkpointed(const tf_gcp_backend *be, const tf_tensor *X, double xnorm, const tf_gcp_opts *o,
                              const tf_dist *d, tf_ktensor *out, tf_gcp_report *rep)
{
    char opt[512];
    tf_gcp_ckpt_options(o, opt, sizeof opt);
    tf_ckpt ck;
    int on = 0;
    TF_TRY(tf_ckpt_begin(&ck, o->checkpoint, "gcp", X, d && o->distributed_input ? d : NULL, d, &o->rank, 1, opt,
                         &on));
    if (!on) return tf_gcp_run(be, X, xnorm, o, NULL, NULL, out, rep);
    tf_ktensor loaded;
    memset(&loaded, 0, sizeof loaded);
    tf_status s = tf_ckpt_load(&ck, &loaded, NULL, NULL);
    if (s == TF_OK && ck.done) {
        tf_gcp_opts lo = *o;
        lo.init = &loaded;
        s = shared(d, check_start(X, &lo)); /* the shapes and values a start must have */
    }
    if (s == TF_OK) s = tf_gcp_run(be, X, xnorm, o, &ck, ck.done ? &loaded : NULL, out, rep);
    tf_ktensor_free(&loaded);
    tf_ckpt_free(&ck);
    return s;
}

static tf_status run(const tf_tensor *X, tf_gcp_opts *o, tf_ktensor *out, tf_gcp_report *rep)
{
    int multi = 0, multi_note = 0;
    TF_TRY(check_place(o, &multi, &multi_note));
    const tf_dist *d = o->context ? o->context->dist : NULL;
    tf_status s = tf_tensor_validate(X);
    if (s == TF_OK) s = check_start(X, o);
    if (s == TF_OK) s = check_values(X, o->loss);
    TF_TRY(shared(d, s));
    tf_gcp_ranks ranks = {d, X->nnz, 0, NULL};
    uint64_t *keys = NULL;
    tf_tensor gathered; /* GPU ranks of a distributed input: the whole tensor */
    memset(&gathered, 0, sizeof gathered);
    if (d && o->distributed_input && multi) {
        TF_TRY(gather_whole(X, d, &gathered));
        ranks.nnz = gathered.nnz;
    } else if (d && o->distributed_input) {
        TF_TRY(gather_keys(X, d, &ranks.nnz, &ranks.held, &keys, NULL));
    }
    ranks.keys = keys;
    tf_tensor whole = *X; /* the sample sizes are the whole tensor's */
    whole.nnz = ranks.nnz;
    s = TF_OK;
    if (o->dense && numel_of(X) > (double)DENSE_MAX)
        s = tf_fail(TF_ERR_ARG, "gcp: the dense loss mode takes tensors of at most %llu entries; this one has %.6g "
                    "(sample instead: leave dense off)", (unsigned long long)DENSE_MAX, numel_of(X));
    if (s == TF_OK && !o->dense) {
        if (!whole.nnz) s = (d ? tf_fail_shared : tf_fail)(TF_ERR_ARG, "gcp: the tensor has no non-zeros to sample");
        if (s == TF_OK) resolve_samples(&whole, o);
        if (s == TF_OK && (o->gnz + o->gz == 0 || o->fnz + o->fz == 0))
            s = (d ? tf_fail_shared : tf_fail)(TF_ERR_ARG, "gcp: no samples to draw");
    }
    double xnorm = tf_tensor_norm(X);
    if (s == TF_OK && d && o->distributed_input) { /* the whole tensor's norm */
        double x2 = xnorm * xnorm;
        s = d->allreduce_sum(&x2, 1);
        xnorm = sqrt(x2);
    }
    if (s != TF_OK) {
        tf_free(keys);
        tf_tensor_free(&gathered);
        return s;
    }
    rep->fnz = o->fnz, rep->fz = o->fz, rep->gnz = o->gnz, rep->gz = o->gz;
    if (cpu_only(o) && (multi_note || (!d && o->backend == TF_BACKEND_AUTO && tf_gpu_maybe_present())))
        snprintf(rep->note, sizeof rep->note, "GCP's %s runs on the CPU",
                 o->dense ? "dense loss mode" : o->sampling == TF_GCP_SEMI_STRATIFIED ? "semi-stratified sampling"
                                                                                       : "checkpointed run");
    tf_gcp_backend be;
    tf_context *own = NULL; /* the GPU's private context, when o has none */
    const double t = tf_wtime();
    const tf_tensor *all = gathered.nnz ? &gathered : X; /* the several GPUs' */
    const tf_status cs = multi      ? tf_cuda_gcp_backend_create_multi(all, o, d, &be)
                         : on_gpu(o) ? create_gpu(X, o, &be, &own, rep->note, sizeof rep->note)
                                     : tf_cpu_gcp_backend_create(X, o, d ? &ranks : NULL, &be);
    tf_free(keys);
    tf_tensor_free(&gathered);
    s = shared(d, cs);
    if (s != TF_OK) {
        if (cs == TF_OK) be.ops->destroy(be.ctx);
        tf_context_free(own);
        return s;
    }
    rep->t_build = tf_wtime() - t;
    snprintf(rep->plan, sizeof rep->plan, "%s", be.plan_desc);
    s = checkpointed(&be, X, xnorm, o, d, out, rep);
    be.ops->destroy(be.ctx);
    tf_context_free(own);
    return s;
}

tf_status tf_gcp(const tf_tensor *X, const tf_gcp_opts *o, tf_ktensor *out, tf_gcp_report *rep)
{
    const double t_start = tf_wtime();
    tf_gcp_report local;
    if (!rep) rep = &local;
    memset(rep, 0, sizeof *rep);
    if (out) memset(out, 0, sizeof *out);
    if (!X) return tf_fail(TF_ERR_ARG, "tf_gcp: X is NULL");
    if (!out) return tf_fail(TF_ERR_ARG, "tf_gcp: out is NULL");
    tf_gcp_opts ro;
    TF_TRY(resolve_opts(o, &ro));
    const tf_status s = run(X, &ro, out, rep);
    rep->t_total = tf_wtime() - t_start;
    return s;
}

tf_status tf_gcp_loss_dense(const tf_tensor *X, const tf_ktensor *K, tf_gcp_loss loss, int threads, double *out)
{
    if (!X || !K || !out) return tf_fail(TF_ERR_ARG, "tf_gcp_loss_dense: a NULL argument");
    if (!tf_gcp_loss_name(loss)) return tf_fail(TF_ERR_ARG, "gcp: unknown loss %d", (int)loss);
    TF_TRY(tf_tensor_validate(X));
    if (K->order != X->order) return tf_fail(TF_ERR_ARG, "gcp: the Kruskal tensor's order is not the tensor's");
    for (uint32_t m = 0; m < X->order; ++m)
        if (K->factors[m].rows != X->dims[m] || K->factors[m].cols != K->rank || !K->factors[m].data)
            return tf_fail(TF_ERR_ARG, "gcp: factor %u is not %llu x %llu", m + 1, (unsigned long long)X->dims[m],
                           (unsigned long long)K->rank);
    if (K->rank < 1) return tf_fail(TF_ERR_ARG, "gcp: the Kruskal tensor has rank 0");
    if (numel_of(X) > (double)DENSE_MAX)
        return tf_fail(TF_ERR_ARG, "gcp: the dense loss takes tensors of at most %llu entries",
                       (unsigned long long)DENSE_MAX);
    tf_gcp_samples s;
    TF_TRY(tf_gcp_samples_dense(X, &s));
    /* lambda into a copy of the first factor */
    double *a0 = NULL;
    tf_status st = TF_ALLOC(a0, X->dims[0] * K->rank, "GCP first factor");
    if (st == TF_OK) {
        const double *A[TF_MAX_ORDER];
        for (uint32_t m = 0; m < X->order; ++m) A[m] = K->factors[m].data;
        for (uint64_t i = 0; i < X->dims[0]; ++i)
            for (uint64_t r = 0; r < K->rank; ++r)
                a0[i * K->rank + r] = A[0][i * K->rank + r] * (K->lambda ? K->lambda[r] : 1.0);
        A[0] = a0;
        const tf_gcp_pass_in in = {&s, A, X->dims, K->rank, (int)loss, threads, 1, NULL, 0, 0, NULL};
        st = tf_cpu_gcp_pass(&in, NULL, out);
    }
    tf_free(a0);
    tf_gcp_samples_free(&s);
    return st;
}
