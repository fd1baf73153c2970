/* SPDX-License-Identifier: BSD-3-Clause */
/* tf_context: creation, options and the per-call default context. */
#include "front/device_choice.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seams/dist.h"
#include "core/check_args.h"
#include "core/error.h"
#include "core/tuning.h"
#include "cpu/blas_threads.h"

void tf_context_opts_default(tf_context_opts *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->backend = TF_BACKEND_AUTO;
    o->device = 0;
    o->ndevices = 1;
    for (int i = 0; i < TF_MAX_GPUS; ++i) o->devices[i] = i;
    o->memory_limit = 0;
    o->threads = 0;
    o->tuning = NULL; /* the library's defaults */
}

/* Several GPUs: the backend is the GPU (auto included), the devices exist
 * and are distinct; o->device becomes the first. */
static tf_status check_devices(tf_context_opts *o, tf_backend *b)
{
    if (*b == TF_BACKEND_CPU)
        return tf_fail(TF_ERR_ARG, "context: %d GPUs asked for on the CPU backend", o->ndevices);
    const int gpus = tf_gpu_count();
    if (o->ndevices > gpus)
        return tf_fail(TF_ERR_ARG, "%d GPUs asked for; this machine has %d", o->ndevices, gpus);
    for (int i = 0; i < o->ndevices; ++i) {
        if (o->devices[i] < 0 || o->devices[i] >= gpus)
            return tf_fail(TF_ERR_ARG, "GPU %d does not exist (GPUs 0..%d)", o->devices[i], gpus - 1);
        for (int j = 0; j < i; ++j)
            if (o->devices[j] == o->devices[i])
                return tf_fail(TF_ERR_ARG, "GPU %d is listed twice", o->devices[i]);
    }
    o->device = o->devices[0];
    *b = TF_BACKEND_GPU;
    return TF_OK;
}

tf_status tf_context_create(const tf_context_opts *o, tf_context **out)
{
    if (!out) return tf_fail(TF_ERR_ARG, "tf_context_create: out is NULL (no place for the context)");
    *out = NULL;
    tf_context_opts d;
    if (!o) {
        tf_context_opts_default(&d);
        o = &d;
    }
    if (o->backend != TF_BACKEND_AUTO && o->backend != TF_BACKEND_CPU && o->backend != TF_BACKEND_GPU)
        return tf_fail(TF_ERR_ARG, "tf_context_create: unknown backend %d", (int)o->backend);
    if (o->ndevices < 1)
        return tf_fail(TF_ERR_ARG, "tf_context_create: %d GPUs asked for (at least 1)", o->ndevices);
    if (o->ndevices > TF_MAX_GPUS)
        return tf_fail(TF_ERR_ARG, "tf_context_create: %d GPUs asked for (at most %d)", o->ndevices, TF_MAX_GPUS);
    TF_TRY(tf_threads_arg("tf_context_create", o->threads));
    tf_tuning tuning;
    TF_TRY(tf_tuning_take(&tuning, o->tuning, "tf_context_create"));
    tf_backend b = (tf_backend)o->backend;
    tf_context_opts use = *o;
    if (o->ndevices > 1) TF_TRY(check_devices(&use, &b));
    tf_dist dist = {0};
    if (o->distributed) {
        if (o->ndevices > 1)
            return tf_fail(TF_ERR_UNAVAILABLE, "context: a distributed run takes one GPU per rank (start one "
                                               "rank per GPU instead of %d GPUs per rank)", o->ndevices);
        TF_TRY(tf_dist_world(&dist));
        /* each rank on one GPU when asked for: a node's ranks that see the
         * same GPUs take them in order (src/ranks/local.c: mpirun, srun, and
         * launchers that bind a GPU per rank alike); else (and under auto) the CPU */
        if (b == TF_BACKEND_GPU) {
            const int gpus = tf_gpu_count();
            if (gpus == 0)
                return tf_fail(TF_ERR_UNAVAILABLE, "rank %d: no CUDA device is present for --device gpu", dist.rank);
            if (dist.local_rank >= gpus)
                return tf_fail(TF_ERR_ARG,
                               "rank %d: it sees %d GPU%s, shared with %d ranks before it on its node (start one "
                               "rank per GPU)",
                               dist.rank, gpus, gpus == 1 ? "" : "s", dist.local_rank);
            use.device = dist.local_rank;
        } else {
            b = TF_BACKEND_CPU;
        }
    }
    /* AUTO with GPU 0 is resolved on first need (tf_context_resolve): a run
     * that ends up on the CPU never starts CUDA (issue 25: that alone made
     * `cpd --device auto` 30-60 ms slower than `--device cpu`). */
    if (b == TF_BACKEND_AUTO && use.device != 0) b = tf_gpu_count() > 0 ? TF_BACKEND_GPU : TF_BACKEND_CPU;
    if (b == TF_BACKEND_GPU) {
        char why[1024];
        const tf_cuda_module_state st = tf_cuda_module(1, why, sizeof why);
        if (st == TF_CUDA_MODULE_NONE) return tf_fail(TF_ERR_UNAVAILABLE, "%s", why);
        if (st != TF_CUDA_MODULE_LOADED) return tf_fail(TF_ERR_UNAVAILABLE, "no CUDA backend: its module %s", why);
        const int gpus = tf_gpu_count();
        if (gpus == 0) return tf_fail(TF_ERR_UNAVAILABLE, "no CUDA device is present");
        if (use.device < 0 || use.device >= gpus)
            return tf_fail(TF_ERR_ARG, "GPU %d does not exist (GPUs 0..%d)", use.device, gpus - 1);
    }
    tf_context *c = calloc(1, sizeof *c);
    if (!c) return tf_fail(TF_ERR_NOMEM, "out of memory creating a context");
    c->opts = use;
    c->tuning = tuning;
    c->opts.tuning = &c->tuning;
    c->backend = b;
    if (o->distributed) {
        c->dist = malloc(sizeof *c->dist);
        if (!c->dist) {
            free(c);
            return tf_fail(TF_ERR_NOMEM, "out of memory creating a context");
        }
        *c->dist = dist;
        c->dist->round_bytes = tuning.mpi_round_bytes;
        if (tuning.mpi_timeout > 0) tf_mpi_set_timeout(tuning.mpi_timeout); /* the process's MPI */
        /* ranks sharing the host's CPUs (src/ranks/local.c): OpenBLAS's own
         * threads (the eigensolvers') held to the rank's share too */
        const int share = tf_default_threads_shared(NULL, NULL);
        if (share > 0) tf_blas_threads_cap(share);
    }
    *out = c;
    return TF_OK;
}

void tf_context_free(tf_context *c)
{
    if (!c) return;
    for (int i = 1; i < TF_MAX_GPUS; ++i)
        if (c->peer[i]) tf_cuda_context_release(c->peer[i]);
    if (c->gpu) tf_cuda_context_release(c->gpu);
    free(c->dist);
    free(c);
}

tf_backend tf_context_resolve(tf_context *c)
{
    if (c->backend == TF_BACKEND_AUTO) c->backend = tf_gpu_count() > 0 ? TF_BACKEND_GPU : TF_BACKEND_CPU;
    return c->backend;
}

void tf_cpu_fallback_note(char *note, size_t len)
{
    /* the GPU's error cut short where it must be, so that the note always
     * ends saying where the run went */
    static const char tail[] = ": running on the CPU";
    const int room = len > sizeof tail + 3 ? (int)(len - sizeof tail - 3) : 0;
    const char *e = tf_last_error();
    snprintf(note, len, "%.*s%s%s", room, e, strlen(e) > (size_t)room ? "..." : "", tail);
    tf_clear_error();
}

tf_backend tf_choose_backend(tf_context *c, tf_backend asked, int gpu_capable)
{
    if (asked != TF_BACKEND_AUTO) return asked;
    if (!gpu_capable) return TF_BACKEND_CPU; /* asks CUDA nothing (loads no module) */
    const int gpu = c ? tf_context_resolve(c) == TF_BACKEND_GPU : tf_gpu_count() > 0;
    return gpu ? TF_BACKEND_GPU : TF_BACKEND_CPU;
}

int tf_gpu_fallback(tf_status s, tf_backend asked, char *note, size_t len)
{
    if (s != TF_ERR_NOMEM || asked != TF_BACKEND_AUTO) return 0;
    tf_cpu_fallback_note(note, len);
    return 1;
}

tf_backend tf_context_backend(const tf_context *c)
{
    return c ? tf_context_resolve((tf_context *)c) : TF_BACKEND_CPU; /* resolving only caches */
}

tf_status tf_context_memory_budget(tf_context *c, uint64_t *bytes)
{
    if (bytes) *bytes = 0;
    TF_ARG_NOT_NULL("tf_context_memory_budget", c);
    TF_ARG_NOT_NULL("tf_context_memory_budget", bytes);
    if (tf_context_resolve(c) != TF_BACKEND_GPU)
        return tf_fail(TF_ERR_UNAVAILABLE, "context: no GPU, so no device memory budget");
    return tf_cuda_context_budget(c, bytes);
}

tf_status tf_context_for_call(tf_context *given, tf_backend backend, int device, int threads,
                              tf_context **use, tf_context **own)
{
    *own = NULL;
    if (given) {
        tf_context_resolve(given);
        *use = given;
        return TF_OK;
    }
    tf_context_opts o;
    tf_context_opts_default(&o);
    o.backend = backend == TF_BACKEND_AUTO ? TF_BACKEND_AUTO : backend;
    o.device = device;
    o.threads = threads;
    /* The call decides CPU or GPU itself; the private context only carries
     * the device and the defaults, so it is made for the GPU only when one
     * is asked for and exists. */
    if (o.backend == TF_BACKEND_AUTO) o.backend = tf_gpu_count() > 0 ? TF_BACKEND_GPU : TF_BACKEND_CPU;
    TF_TRY(tf_context_create(&o, own));
    *use = *own;
    return TF_OK;
}
