/* SPDX-License-Identifier: BSD-3-Clause */
/* GPU backend of GCP (the vtable of seams/gcp.h), one GPU, double
 * precision, everything on the device: X's non-zeros (X's order) and the
 * hash set of their linear indices (built there once), the factors u, the
 * gradient g, Adam's moments m and v, the checkpoint (u0, m0, v0; (u, m,
 * v) and (u0, m0, v0) are adjacent, so save and restore are one copy
 * each), the fixed sample of the estimate (stream 0, drawn there at
 * creation). A gradient draws its sample inside its pass (stream iter + 1:
 * the CPU's draws, cpu/gcp_draw.h), so an iteration is three launches --
 * clear g, the pass, Adam -- and no copy; the host reads one double per
 * estimate. The kernels: kernels.cu. The dense mode is the CPU's (its
 * tensors are small): TF_ERR_UNAVAILABLE here. The same state, its passes
 * over a part of every sample's entries, is one GPU's of the several-GPU
 * backend (multi.cu: tf_gpu_gcp_state_new and the calls after it). */
#include <stdio.h>
#include <string.h>

#include <algorithm>
#include <new>

#include "gpu/gcp/gcp.cuh"
#include "gpu/runtime/gpu_dev.cuh"
#include "seams/cuda_module.h"
extern "C" {
#include "cpu/gcp_draw.h"
}

namespace {

/* Part p of P of n entries: [n p / P, n (p + 1) / P). */
uint64_t cut(uint64_t n, int p, int P)
{
    return (uint64_t)((unsigned __int128)n * (unsigned)p / (unsigned)P);
}

struct gpu_gcp {
    tf_gpu_dev *dev = nullptr; /* the GPU (borrowed) */
    uint64_t nparams = 0;
    double *block = nullptr; /* u m v u0 m0 v0 g, nparams each */
    double *u = nullptr, *g = nullptr, *m = nullptr, *v = nullptr, *u0 = nullptr;
    uint32_t *xind[TF_GPU_MAX_ORDER] = {nullptr};
    double *xvals = nullptr;
    unsigned long long *slot = nullptr;
    uint32_t *find[TF_GPU_MAX_ORDER] = {nullptr};
    double *fvals = nullptr, *part = nullptr, *scalar = nullptr;
    tf_gcp_gpu_args fixed = {}, grad = {}; /* the estimate's pass, the gradient's (stream set per iteration) */
    unsigned fblocks = 1, gblocks = 1;
    uint64_t gn = 0; /* the gradient sample's entries (grad covers [grad.j0, grad.n) of them) */
    double l2 = 0.0;   /* observed-only mode: 2 l2 u added to the gradient ... */
    bool own_l2 = false; /* ... here (the whole run), else by the several-GPU backend after the sum */
    bool started = false;

    ~gpu_gcp()
    {
        if (dev && dev->device >= 0) {
            cudaSetDevice(dev->device);
            cudaStreamSynchronize(dev->stream);
        }
        tf_gpu_free(block);
        for (uint32_t n = 0; n < TF_GPU_MAX_ORDER; ++n) {
            tf_gpu_free(xind[n]);
            tf_gpu_free(find[n]);
        }
        tf_gpu_free(xvals);
        tf_gpu_free(slot);
        tf_gpu_free(fvals);
        tf_gpu_free(part);
        tf_gpu_free(scalar);
    }
};

tf_status use(gpu_gcp *c)
{
    if (!c->started) return tf_fail(TF_ERR_ARG, "GPU GCP backend: init was not called");
    return tf_gpu_dev_use(c->dev);
}

tf_status op_save(void *ctx);

tf_status op_init(void *ctx, const tf_ktensor *start)
{
    gpu_gcp *c = (gpu_gcp *)ctx;
    const tf_gcp_gpu_args &a = c->grad;
    if (!start || start->order != a.N || start->rank != a.R)
        return tf_fail(TF_ERR_ARG, "GPU GCP backend: the start does not match order %u rank %u", a.N, a.R);
    TF_TRY(tf_gpu_dev_use(c->dev));
    const cudaStream_t st = c->dev->stream;
    double *at = c->u;
    for (uint32_t n = 0; n < a.N; ++n) {
        if (start->factors[n].rows != a.dims[n] || start->factors[n].cols != a.R)
            return tf_fail(TF_ERR_ARG, "GPU GCP backend: start factor %u has the wrong shape", n + 1);
        TF_TRY(tf_gpu_put_values<double>(at, start->factors[n].data, a.dims[n] * a.R, st));
        at += a.dims[n] * a.R;
    }
    TF_CU(cudaMemsetAsync(c->m, 0, 2 * c->nparams * sizeof(double), st)); /* m and v */
    c->started = true;
    TF_TRY(op_save(c));
    TF_CU(cudaStreamSynchronize(st));
    return TF_OK;
}

tf_status op_estimate(void *ctx, double *f)
{
    gpu_gcp *c = (gpu_gcp *)ctx;
    *f = 0.0;
    TF_TRY(use(c));
    const cudaStream_t st = c->dev->stream;
    TF_TRY(tf_gcp_gpu_loss(c->fixed, c->fblocks, c->scalar, st));
    TF_CU(cudaMemcpyAsync(f, c->scalar, sizeof(double), cudaMemcpyDeviceToHost, st));
    TF_CU(cudaStreamSynchronize(st));
    return TF_OK;
}

tf_status op_gradient(void *ctx, uint64_t iter, double *t_sample)
{
    gpu_gcp *c = (gpu_gcp *)ctx;
    *t_sample = 0.0; /* drawn inside the pass: its time is the gradient's */
    TF_TRY(use(c));
    c->grad.stream = iter + 1;
    TF_TRY(tf_gcp_gpu_gradient(c->grad, c->gblocks, c->dev->stream));
    return c->own_l2 ? tf_gpu_gcp_add_l2(c) : TF_OK;
}

tf_status op_adam(void *ctx, double step, double beta1, double beta2, double eps, double lower)
{
    gpu_gcp *c = (gpu_gcp *)ctx;
    TF_TRY(use(c));
    return tf_gcp_gpu_adam(c->u, c->m, c->v, c->g, c->nparams, step, beta1, beta2, eps, lower, c->dev->stream);
}

tf_status op_save(void *ctx)
{
    gpu_gcp *c = (gpu_gcp *)ctx;
    TF_TRY(use(c));
    TF_CU(cudaMemcpyAsync(c->u0, c->u, 3 * c->nparams * sizeof(double), cudaMemcpyDeviceToDevice, c->dev->stream));
    return TF_OK;
}

tf_status op_restore(void *ctx)
{
    gpu_gcp *c = (gpu_gcp *)ctx;
    TF_TRY(use(c));
    TF_CU(cudaMemcpyAsync(c->u, c->u0, 3 * c->nparams * sizeof(double), cudaMemcpyDeviceToDevice, c->dev->stream));
    return TF_OK;
}

tf_status op_dense_fg(void *ctx, const double *u, double *f, double *g)
{
    (void)ctx;
    (void)u;
    (void)f;
    (void)g;
    return tf_fail(TF_ERR_UNAVAILABLE, "gcp: the dense loss mode runs on the CPU only (--device cpu)");
}

tf_status op_result(void *ctx, tf_ktensor *out)
{
    gpu_gcp *c = (gpu_gcp *)ctx;
    TF_TRY(use(c));
    const tf_gcp_gpu_args &a = c->grad;
    if (out->order != a.N || out->rank != a.R)
        return tf_fail(TF_ERR_ARG, "GPU GCP backend: the result does not match order %u rank %u", a.N, a.R);
    const double *at = c->u;
    for (uint32_t n = 0; n < a.N; ++n) {
        if (out->factors[n].rows != a.dims[n] || out->factors[n].cols != a.R)
            return tf_fail(TF_ERR_ARG, "GPU GCP backend: result factor %u has the wrong shape", n + 1);
        TF_TRY(tf_gpu_get_values<double>(out->factors[n].data, at, a.dims[n] * a.R, c->dev->stream));
        at += a.dims[n] * a.R;
    }
    for (uint32_t r = 0; r < a.R; ++r) out->lambda[r] = 1.0;
    return TF_OK;
}

void op_destroy(void *ctx)
{
    delete (gpu_gcp *)ctx;
}

/* Adam's moments for a checkpoint (algo/gcp_ckpt.c): m and v, the factors'
 * layout, to the host; put sets them and their saved copy (m0, v0). */
tf_status op_moments_get(void *ctx, double *m, double *v)
{
    gpu_gcp *c = (gpu_gcp *)ctx;
    TF_TRY(use(c));
    TF_TRY(tf_gpu_get_values<double>(m, c->m, c->nparams, c->dev->stream));
    return tf_gpu_get_values<double>(v, c->v, c->nparams, c->dev->stream);
}

tf_status op_moments_put(void *ctx, const double *m, const double *v)
{
    gpu_gcp *c = (gpu_gcp *)ctx;
    TF_TRY(use(c));
    TF_TRY(tf_gpu_put_values<double>(c->m, m, c->nparams, c->dev->stream));
    TF_TRY(tf_gpu_put_values<double>(c->v, v, c->nparams, c->dev->stream));
    TF_TRY(op_save(c));
    TF_CU(cudaStreamSynchronize(c->dev->stream));
    return TF_OK;
}

const tf_gcp_backend_ops gpu_ops = {op_init,    op_estimate, op_gradient, op_adam,   op_save,
                                    op_restore, op_dense_fg, op_result,   op_destroy,
                                    op_moments_get, op_moments_put};

/* Mode m's gradient rows in shared memory, shortest modes first, while
 * they fit `bytes`. */
void choose_private(tf_gcp_gpu_args &a, uint64_t bytes)
{
    uint32_t order[TF_GPU_MAX_ORDER];
    for (uint32_t n = 0; n < a.N; ++n) { /* by length, stably (an insertion sort) */
        a.priv_off[n] = TF_GCP_NOPRIV;
        uint32_t k = n;
        for (; k > 0 && a.dims[order[k - 1]] > a.dims[n]; --k) order[k] = order[k - 1];
        order[k] = n;
    }
    const uint64_t room = bytes / sizeof(double);
    uint64_t used = 0;
    for (uint32_t k = 0; k < a.N; ++k) {
        const uint64_t len = a.dims[order[k]] * a.R;
        if (used + len > room) break;
        a.priv_off[order[k]] = (uint32_t)used;
        used += len;
    }
    a.priv_total = (uint32_t)used;
}

/* The backend's device state for X under o (the checks done), its passes
 * over part `part` of `parts` of every sample's entries. */
tf_status build(gpu_gcp *c, const tf_tensor *X, const tf_gcp_opts *o, int part, int parts,
                const tf_gcp_gpu_observed *obs, char *desc, size_t desc_len)
{
    const uint32_t N = X->order, R = (uint32_t)o->rank;
    const uint64_t nnz = X->nnz;
    tf_gcp_gpu_args a;
    memset(&a, 0, sizeof a);
    a.N = N;
    a.R = R;
    a.C = 1; /* min(32, the power of two >= R): a warp holds 32 / C samples */
    while (a.C < R && a.C < 32) a.C <<= 1;
    a.loss = (int)o->loss;
    a.nnz = nnz;
    a.seed = o->seed;
    double numel = 1.0;
    for (uint32_t n = 0; n < N; ++n) {
        a.dims[n] = X->dims[n];
        a.place[n] = n ? a.place[n - 1] * X->dims[n - 1] : 1;
        numel *= (double)X->dims[n];
        c->nparams += X->dims[n] * R;
    }
    uint64_t slots = 16;
    while (slots < 2 * nnz) slots <<= 1;
    a.mask = slots - 1;
    uint64_t fz = o->fz, gz = o->gz;
    double fw_nz = 0.0, fw_z = 0.0;
    tf_gcp_draw_weights(numel, nnz, o->fnz, 0, &fz, &fw_nz, &fw_z);
    a.semi = o->sampling == TF_GCP_SEMI_STRATIFIED; /* the gradient's; the fixed sample is stratified */
    tf_gcp_draw_weights(numel, nnz, o->gnz, a.semi, &gz, &a.w_nz, &a.w_z);
    /* observed-only mode: samples of the non-zeros alone; one of nnz or
     * more is every non-zero once, weight 1 (the fixed one: X itself) */
    const bool fixed_all = obs && o->fnz >= nnz, grad_all = obs && o->gnz >= nnz;
    if (obs) {
        fz = gz = 0;
        a.semi = 0;
        a.w_z = fw_z = 0.0;
        c->l2 = obs->l2;
        c->own_l2 = parts == 1;
    }
    if (fixed_all) fw_nz = 1.0;
    if (grad_all) {
        a.all = 1;
        a.w_nz = 1.0;
    }
    const uint64_t fn = fixed_all ? nnz : o->fnz + fz, per = N * sizeof(uint32_t) + sizeof(double);
    const uint64_t bytes = 7 * c->nparams * sizeof(double) + nnz * per + slots * sizeof(unsigned long long) +
                           (fixed_all ? 0 : fn * per) + 4097 * sizeof(double);
    uint64_t budget = 0;
    TF_TRY(tf_gpu_dev_use(c->dev));
    TF_TRY(tf_gpu_budget(c->dev, &budget));
    if (bytes > budget)
        return tf_fail(TF_ERR_NOMEM,
                       "GPU GCP on GPU %d: the non-zeros, their hash set, the fixed sample and the factors, "
                       "gradient, moments and checkpoint (%llu bytes) do not fit the %llu bytes the GPU has left",
                       c->dev->device, (unsigned long long)bytes, (unsigned long long)budget);
    const cudaStream_t st = c->dev->stream;
    TF_TRY(tf_gpu_alloc(&c->block, 7 * c->nparams, "GCP factors, moments, checkpoint and gradient"));
    c->u = c->block;
    c->m = c->u + c->nparams;
    c->v = c->m + c->nparams;
    c->u0 = c->v + c->nparams;
    c->g = c->u0 + 3 * c->nparams;
    for (uint32_t n = 0; n < N; ++n) {
        TF_TRY(tf_gpu_upload_staged(c->dev, &c->xind[n], X->ind[n], nnz, "GCP non-zero indices", st));
        a.xind[n] = c->xind[n];
    }
    TF_TRY(tf_gpu_upload_staged(c->dev, &c->xvals, X->vals, nnz, "GCP non-zero values", st));
    a.xvals = c->xvals;
    TF_TRY(tf_gpu_alloc(&c->slot, slots, "GCP hash set of the non-zeros"));
    TF_CU(cudaMemsetAsync(c->slot, 0, slots * sizeof(unsigned long long), st));
    TF_TRY(tf_gcp_gpu_build_set(a, c->slot, st));
    a.slot = c->slot;
    TF_TRY(tf_gpu_alloc(&c->part, 4096, "GCP loss block sums"));
    TF_TRY(tf_gpu_alloc(&c->scalar, 1, "GCP loss"));
    a.part = c->part;
    double *G = c->g, *A = c->u;
    for (uint32_t n = 0; n < N; ++n) {
        a.A[n] = A;
        a.G[n] = G;
        A += X->dims[n] * R;
        G += X->dims[n] * R;
    }
    /* the fixed sample, stream 0 */
    tf_gcp_gpu_args f = a;
    f.semi = 0;
    f.all = 0;
    f.n = fn;
    f.nz = fixed_all ? nnz : o->fnz;
    f.stream = 0;
    f.w_nz = fw_nz;
    f.w_z = fw_z;
    if (fixed_all) {
        for (uint32_t n = 0; n < N; ++n) f.sind[n] = c->xind[n];
        f.svals = c->xvals;
    } else {
        for (uint32_t n = 0; n < N; ++n)
            TF_TRY(tf_gpu_alloc(&c->find[n], std::max<uint64_t>(fn, 1), "GCP fixed sample"));
        TF_TRY(tf_gpu_alloc(&c->fvals, std::max<uint64_t>(fn, 1), "GCP fixed sample values"));
        TF_TRY(tf_gcp_gpu_draw(f, c->find, c->fvals, st));
        for (uint32_t n = 0; n < N; ++n) f.sind[n] = c->find[n];
        f.svals = c->fvals;
    }
    f.j0 = cut(fn, part, parts); /* drawn whole, evaluated on this part */
    f.n = cut(fn, part + 1, parts);
    c->fixed = f;
    TF_TRY(tf_gcp_gpu_blocks(f, false, c->dev->sm_count, &c->fblocks));
    /* the gradient's sample: drawn in the pass */
    a.n = grad_all ? nnz : o->gnz + gz;
    a.nz = grad_all ? nnz : o->gnz;
    c->gn = a.n;
    a.j0 = cut(a.n, part, parts);
    a.n = cut(a.n, part + 1, parts);
    /* short modes' rows in shared memory: 32 KiB a block, or the tuning's (at most the GPU's limit) */
    const int64_t want = c->dev->tune.gcp_smem;
    uint64_t smem = want < 0 ? (32u << 10) : (uint64_t)want;
    const uint64_t limit = c->dev->smem_optin ? c->dev->smem_optin : c->dev->smem_block;
    const uint64_t most = limit > 1024 ? limit - 1024 : 0; /* room for the kernel's static shared memory */
    if (smem > most) smem = most;
    choose_private(a, smem);
    c->grad = a;
    TF_TRY(tf_gcp_gpu_blocks(a, true, c->dev->sm_count, &c->gblocks));
    TF_CU(cudaStreamSynchronize(st));
    uint32_t npriv = 0;
    for (uint32_t n = 0; n < N; ++n) npriv += a.priv_off[n] != TF_GCP_NOPRIV;
    snprintf(desc, desc_len, "GPU %d, fp64, %s samples drawn on the GPU, fused pass (%u/%u modes in smem)",
             c->dev->device, obs ? "observed-entry" : a.semi ? "semi-stratified" : "stratified", npriv, N);
    return TF_OK;
}

} // namespace

tf_status tf_gpu_gcp_draw_sample(void *ctx, uint64_t iter, uint32_t *const *ind, double *vals, uint64_t *n,
                                 uint64_t *nz, double *w_nz, double *w_z)
{
    gpu_gcp *c = (gpu_gcp *)ctx;
    TF_TRY(tf_gpu_dev_use(c->dev));
    tf_gcp_gpu_args a = c->grad;
    a.stream = iter + 1;
    a.j0 = 0; /* the whole sample */
    a.n = c->gn;
    const uint32_t N = a.N;
    uint32_t *dind[TF_GPU_MAX_ORDER] = {nullptr};
    double *dvals = nullptr;
    tf_status s = TF_OK;
    for (uint32_t k = 0; k < N && s == TF_OK; ++k) s = tf_gpu_alloc(&dind[k], std::max<uint64_t>(a.n, 1), "GCP test sample");
    if (s == TF_OK) s = tf_gpu_alloc(&dvals, std::max<uint64_t>(a.n, 1), "GCP test sample values");
    if (s == TF_OK) s = tf_gcp_gpu_draw(a, dind, dvals, c->dev->stream);
    for (uint32_t k = 0; k < N && s == TF_OK; ++k)
        if (cudaMemcpyAsync(ind[k], dind[k], a.n * sizeof(uint32_t), cudaMemcpyDeviceToHost, c->dev->stream) !=
            cudaSuccess)
            s = tf_fail(TF_ERR_DEVICE, "GPU GCP test: the sample's copy failed");
    if (s == TF_OK) s = tf_gpu_get_values<double>(vals, dvals, a.n, c->dev->stream);
    if (s == TF_OK && cudaStreamSynchronize(c->dev->stream) != cudaSuccess)
        s = tf_fail(TF_ERR_DEVICE, "GPU GCP test: the sample's draw failed");
    for (uint32_t k = 0; k < N; ++k) tf_gpu_free(dind[k]);
    tf_gpu_free(dvals);
    *n = a.n;
    *nz = a.nz;
    *w_nz = a.w_nz;
    *w_z = a.w_z;
    return s;
}

tf_status tf_gpu_gcp_state_new(tf_gpu_dev *dev, const tf_tensor *X, const tf_gcp_opts *o, int part, int parts,
                               const tf_gcp_gpu_observed *obs, void **ctx, char *desc, size_t len)
{
    *ctx = nullptr;
    if (parts < 1 || part < 0 || part >= parts) return tf_fail(TF_ERR_ARG, "GPU GCP: part %d of %d", part, parts);
    gpu_gcp *c = new (std::nothrow) gpu_gcp();
    if (!c) return tf_fail(TF_ERR_NOMEM, "out of memory creating the GPU GCP backend");
    c->dev = dev;
    const tf_status s = build(c, X, o, part, parts, obs, desc, len);
    if (s != TF_OK) {
        delete c;
        return s;
    }
    *ctx = c;
    return TF_OK;
}

const tf_gcp_backend_ops *tf_gpu_gcp_state_ops()
{
    return &gpu_ops;
}

tf_status tf_gpu_gcp_loss_async(void *ctx)
{
    gpu_gcp *c = (gpu_gcp *)ctx;
    TF_TRY(use(c));
    return tf_gcp_gpu_loss(c->fixed, c->fblocks, c->scalar, c->dev->stream);
}

tf_status tf_gpu_gcp_loss_read(void *ctx, double *f)
{
    gpu_gcp *c = (gpu_gcp *)ctx;
    *f = 0.0;
    TF_TRY(use(c));
    TF_CU(cudaMemcpyAsync(f, c->scalar, sizeof(double), cudaMemcpyDeviceToHost, c->dev->stream));
    TF_CU(cudaStreamSynchronize(c->dev->stream)); /* the caller waited for the pass (bounded) */
    return TF_OK;
}

tf_status tf_gpu_gcp_add_l2(void *ctx)
{
    gpu_gcp *c = (gpu_gcp *)ctx;
    if (!(c->l2 > 0.0)) return TF_OK;
    TF_TRY(use(c));
    return tf_gcp_gpu_add_scaled(c->g, c->u, c->nparams, 2.0 * c->l2, c->dev->stream);
}

double *tf_gpu_gcp_gradient_of(void *ctx, uint64_t *nparams)
{
    gpu_gcp *c = (gpu_gcp *)ctx;
    *nparams = c->nparams;
    return c->g;
}

tf_status tf_gpu_gcp_get_gradient(void *ctx, double *g)
{
    gpu_gcp *c = (gpu_gcp *)ctx;
    TF_TRY(tf_gpu_dev_use(c->dev));
    return tf_gpu_get_values<double>(g, c->g, c->nparams, c->dev->stream);
}

tf_status tf_gpu_gcp_poison(void *ctx)
{
    gpu_gcp *c = (gpu_gcp *)ctx;
    TF_TRY(tf_gpu_dev_use(c->dev));
    TF_CU(cudaMemsetAsync(c->g, 0xff, c->nparams * sizeof(double), c->dev->stream)); /* all ones: NaN */
    TF_CU(cudaMemsetAsync(c->part, 0xff, 4096 * sizeof(double), c->dev->stream));
    TF_CU(cudaMemsetAsync(c->scalar, 0xff, sizeof(double), c->dev->stream));
    TF_CU(cudaStreamSynchronize(c->dev->stream));
    return TF_OK;
}

tf_status tf_gpu_gcp_check(const tf_tensor *X, const tf_gcp_opts *o)
{
    if (!X || !o) return tf_fail(TF_ERR_ARG, "GPU GCP backend: missing tensor or options");
    if (o->dense)
        return tf_fail(TF_ERR_UNAVAILABLE, "gcp: the dense loss mode runs on the CPU only (--device cpu)");
    if (o->rank == 0 || o->rank > TF_MAX_RANK)
        return tf_fail(TF_ERR_ARG, "GPU GCP backend: rank %llu is outside 1..%u", (unsigned long long)o->rank,
                       TF_MAX_RANK);
    if (X->order > TF_GPU_MAX_ORDER)
        return tf_fail(TF_ERR_UNAVAILABLE, "gcp: order %u is above the GPU's %u", X->order, TF_GPU_MAX_ORDER);
    double numel = 1.0;
    for (uint32_t n = 0; n < X->order; ++n) numel *= (double)X->dims[n];
    if (!(numel < 9.2e18))
        return tf_fail(TF_ERR_UNAVAILABLE, "gcp: on the GPU the tensor's entries (%.6g) must be fewer than 2^63",
                       numel);
    return TF_OK;
}

/* The one-GPU backend of o->context's GPU (obs: NULL, or the observed-only mode). */
static tf_status create_one(const tf_tensor *X, const tf_gcp_opts *o, const tf_gcp_gpu_observed *obs,
                            tf_gcp_backend *out)
{
    memset(out, 0, sizeof *out);
    TF_TRY(tf_gpu_gcp_check(X, o));
    tf_gpu_dev *dev = nullptr;
    void *c = nullptr;
    tf_status s = tf_gpu_dev_of(o->context, &dev);
    if (s == TF_OK) s = tf_gpu_gcp_state_new(dev, X, o, 0, 1, obs, &c, out->plan_desc, sizeof out->plan_desc);
    if (s != TF_OK) {
        memset(out, 0, sizeof *out);
        return s;
    }
    out->ops = &gpu_ops;
    out->ctx = c;
    return TF_OK;
}

extern "C" tf_status tf_cuda_gcp_backend_create_impl(const tf_tensor *X, const tf_gcp_opts *o, tf_gcp_backend *out)
{
    return create_one(X, o, nullptr, out);
}

extern "C" tf_status tf_cuda_gcp_backend_create_observed_impl(const tf_tensor *X, const tf_gcp_opts *o, double l2,
                                                              int multi, const tf_dist *dist, tf_gcp_backend *out)
{
    memset(out, 0, sizeof *out);
    if (!X || !o) return tf_fail(TF_ERR_ARG, "GPU GCP backend: missing tensor or options");
    if (o->fz || o->gz || o->dense || !(l2 >= 0.0) || (dist && !multi))
        return tf_fail(TF_ERR_ARG, "GPU GCP backend: observed-only mode draws no zeros (fz %llu, gz %llu, dense %d, "
                                   "l2 %g, ranks %d, multi %d)", (unsigned long long)o->fz, (unsigned long long)o->gz,
                       o->dense, l2, dist != nullptr, multi);
    const tf_gcp_gpu_observed obs = {l2};
    return multi ? tf_gpu_gcp_multi_create(X, o, dist, &obs, out) : create_one(X, o, &obs, out);
}
