/* SPDX-License-Identifier: BSD-3-Clause */
/* Work that each GPU of a run does on its own (building its shards: the
 * upload, the device sort, the F-COO tables) done on all of them at once,
 * one host thread per GPU, instead of one GPU after the other. */
#ifndef TF_GPU_RUNTIME_PER_GPU_CUH
#define TF_GPU_RUNTIME_PER_GPU_CUH
#include <stdio.h>
#include <string.h>

#include <new>
#include <system_error>
#include <thread>

extern "C" {
#include "core/error.h"
}

/* fn(i) for i in 0..n, each on a thread of its own (0 on the calling one;
 * fn selects its GPU itself: the current device is per thread). All finish
 * before the return. The status is the first failure in order of i, with
 * its message (tf_fail keeps one per thread: it is carried over); where a
 * thread cannot be started its i runs on the calling thread. */
template <class Fn> tf_status tf_per_gpu(int n, Fn &&fn)
{
    if (n <= 1) return n == 1 ? fn(0) : TF_OK;
    struct outcome {
        tf_status s = TF_OK;
        char msg[1024] = "";
    };
    outcome *res = new (std::nothrow) outcome[n];
    if (!res) return tf_fail(TF_ERR_NOMEM, "out of memory starting the per-GPU threads");
    auto one = [&](int i) {
        res[i].s = fn(i);
        if (res[i].s != TF_OK) snprintf(res[i].msg, sizeof res[i].msg, "%s", tf_last_error());
    };
    std::thread *th = new (std::nothrow) std::thread[n];
    bool *started = new (std::nothrow) bool[n]();
    for (int i = 1; i < n; ++i) {
        if (!th || !started) break;
        try {
            th[i] = std::thread(one, i);
            started[i] = true;
        } catch (const std::system_error &) {
            /* no thread: done below on this one */
        }
    }
    one(0);
    for (int i = 1; i < n; ++i) {
        if (started && started[i]) th[i].join();
        else one(i);
    }
    delete[] th;
    delete[] started;
    tf_status s = TF_OK;
    for (int i = 0; i < n && s == TF_OK; ++i)
        if (res[i].s != TF_OK) s = tf_fail(res[i].s, "%s", res[i].msg);
    delete[] res;
    return s;
}
#endif
