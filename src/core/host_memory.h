/* SPDX-License-Identifier: BSD-3-Clause */
/* How much host memory this process may still take: the kernel's
 * MemAvailable, held to what the cgroup (v2) limits on the way up from this
 * process's group leave (memory.max - memory.current), and to RLIMIT_AS's
 * room. For builds that can trade speed for memory (the streamed F-COO
 * copies, fmt/fcoo_pieces.h): fast where the room is there, in pieces
 * where it is not. */
#ifndef TF_CORE_HOST_MEMORY_H
#define TF_CORE_HOST_MEMORY_H
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes; 0 when nothing could be read (treat as no limit known). */
uint64_t tf_host_memory_free(void);

#ifdef __cplusplus
}
#endif
#endif
