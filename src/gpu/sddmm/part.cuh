/* SPDX-License-Identifier: BSD-3-Clause */
/* One GPU's part of an SDDMM plan: S's arrays (of its row panel) for the
 * scheme its build chose, its operand buffers, and what a run or a timing
 * does on that GPU. sddmm.cu builds parts; plan.cu holds a plan's parts
 * (one, or one per GPU of a context of several) and runs them. */
#ifndef TF_GPU_SDDMM_PART_CUH
#define TF_GPU_SDDMM_PART_CUH
#include <memory>

#include "gpu/sddmm/common.cuh"

/* Where an operand is, for the part that reads or writes it. */
enum sddmm_loc {
    SDDMM_HOST, /* host memory (pageable or pinned): copied through the staging  */
    SDDMM_HERE, /* GPU memory the part's kernels reach in place: device memory of
                   its GPU, or managed memory                                   */
    SDDMM_PEER  /* device memory of another GPU: copied peer-to-peer            */
};

/* An operand of a part as located (tf_sddmm_locate). */
struct sddmm_operand {
    const tf_dense *X = nullptr;
    sddmm_loc loc = SDDMM_HOST;
    int device = -1; /* SDDMM_PEER: the GPU it is on */
};

/* What X is, for a part on GPU `device` of a plan of precision prec: its
 * memory (TF_MEMORY_AUTO told from the pointer; HOST / DEVICE checked
 * against it) and, in GPU memory, the plan's precision. Another GPU's
 * memory is SDDMM_PEER: the caller decides whether a peer copy is allowed.
 * `name` ("A", "parts[1].B") and `who` start the messages. */
tf_status tf_sddmm_locate(const tf_dense &X, const char *name, const char *who, int device, tf_precision prec,
                          sddmm_operand *out);

struct sddmm_part {
    tf_gpu_dev *ctx = nullptr; /* borrowed from the plan's context */
    uint64_t nnz = 0;
    virtual ~sddmm_part() = default;
    /* P from A and B on stream st: A and B placed for the kernels (read in
     * place where they can be, else copied into padded buffers: from the
     * host through the staging, from a peer GPU by a peer copy), the kernel
     * writes P in place (SDDMM_HERE) or into the part's buffer, which goes
     * to the host (then st is waited for) or to the peer GPU. With P in GPU
     * memory st is waited for iff wait. */
    virtual tf_status run(const sddmm_operand &A, const sddmm_operand &B, const sddmm_operand &P, cudaStream_t st,
                          bool wait) = 0;
    /* A and B placed as a run places them, kept for launch(). */
    virtual tf_status stage(const sddmm_operand &A, const sddmm_operand &B, cudaStream_t st) = 0;
    /* The kernel alone on the staged operands, into the part's own output buffer. */
    virtual tf_status launch(cudaStream_t st) = 0;
};

/* Builds a part for S (a panel of rows, or all of it) and K with the
 * options o on the context c (which must be current on the calling thread:
 * tf_gpu_dev_use); info (may be NULL) gets the choice. */
tf_status tf_sddmm_part_new(tf_gpu_dev *c, const tf_csr *S, uint64_t K, const tf_sddmm_opts *o, tf_sddmm_info *info,
                            std::unique_ptr<sddmm_part> *out);
#endif
