/* SPDX-License-Identifier: BSD-3-Clause */
/* The device-set executor (devset.cuh): devices, rows, exchange. */
#include <stdio.h>
#include <string.h>

#include "gpu/exec/devset.cuh"
extern "C" {
#include "seams/dist.h"
#include "core/alloc.h"
}

tf_devset::~tf_devset()
{
    tf_exchange_free(&xchg, failed);
    for (uint64_t *r : row_lo) tf_free(r);
    tf_free(unit_lo);
}

tf_status tf_devset::open(tf_context *c, const tf_shards *sh, uint32_t ord)
{
    if (!c || !sh || sh->count < 1 || sh->count > TF_MAX_GPUS || sh->parts < sh->count || sh->first < 0 ||
        sh->first + sh->count > sh->parts || (sh->dist && sh->count != 1) || ord > TF_MAX_ORDER)
        return tf_fail(TF_ERR_ARG, "GPUs of a run: bad shard description");
    n = sh->count;
    parts = sh->parts;
    first = sh->first;
    dist = sh->dist;
    order = ord;
    for (int g = 0; g < n; ++g)
        TF_TRY(check(dist ? tf_gpu_dev_of(c, &gpu[g]) : tf_gpu_dev_at(c, g, &gpu[g])));
    for (uint32_t m = 0; m < order; ++m) {
        TF_TRY(TF_ALLOC(row_lo[m], (uint64_t)parts + 1, "shard rows"));
        memcpy(row_lo[m], sh->row_lo[m], ((size_t)parts + 1) * sizeof(uint64_t));
    }
    TF_TRY(TF_ALLOC(unit_lo, (uint64_t)parts + 1, "rows of per-GPU totals"));
    for (int r = 0; r <= parts; ++r) unit_lo[r] = (uint64_t)r;
    no_transport();
    return TF_OK;
}

tf_status tf_devset::open_devices(tf_context *c, int count)
{
    if (!c || count < 1 || count > TF_MAX_GPUS) return tf_fail(TF_ERR_ARG, "GPUs of a run: %d (1..%d)", count, TF_MAX_GPUS);
    n = parts = count;
    first = 0;
    for (int g = 0; g < n; ++g) TF_TRY(check(tf_gpu_dev_at(c, g, &gpu[g])));
    no_transport();
    return n > 1 ? check(tf_peer_enable_reachable(gpu, n)) : TF_OK;
}

/* No transport yet: waits are bounded all the same. */
void tf_devset::no_transport()
{
    xchg.n = n;
    xchg.nranks = parts;
    xchg.first = first;
    for (int g = 0; g < n; ++g) xchg.gpu[g] = gpu[g];
    xchg.timeout_s = tf_group_timeout(n ? gpu[0] : nullptr);
}

tf_status tf_devset::open_exchange()
{
    if (exchanging) return TF_OK;
    xchg = tf_exchange();
    if (dist) TF_TRY(check(tf_exchange_init_ranks(&xchg, gpu[0], dist, parts, first)));
    else TF_TRY(check(tf_exchange_init_all(&xchg, gpu, n)));
    exchanging = true;
    return TF_OK;
}

tf_status tf_devset::agree(const tf_dist *d, tf_status s) { return tf_exchange_agree(d, s); }
