/* SPDX-License-Identifier: BSD-3-Clause */
/* tenfold/checkpoint.h — checkpoints of the iterative methods (tf_cpd with
 * every update kind, tf_cp_apr, tf_gcp's epochs, tf_tucker) and resuming
 * from them. */
#ifndef TENFOLD_CHECKPOINT_H
#define TENFOLD_CHECKPOINT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Where and how often a run saves the state it needs to go on, and where it
 * goes on from (tf_cpd_opts.checkpoint, tf_cp_apr_opts.checkpoint,
 * tf_gcp_opts.checkpoint, tf_tucker_opts.checkpoint; NULL = neither).
 *
 * A checkpoint is one factor set (see tf_ktensor_write: STEM.mode<N>.mat,
 * STEM.lambda.mat -- Tucker: STEM.core.tensor -- switched in one step
 * through the manifest STEM.set, under the lock STEM.lock) plus STEM.state,
 * a small versioned text file switched with it: the method, the iteration
 * count, every fit (log-likelihood) so far, AO-ADMM's dual variables, and
 * what must match on resume (the tensor's dims, non-zero count and a
 * checksum of its non-zeros, the rank(s), the method, the constraints and
 * the precision). A process killed while it writes leaves the previous
 * checkpoint whole. On MPI ranks rank 0 writes.
 *
 * A resumed run reads the checkpoint (through the manifest), checks that it
 * belongs to this tensor and these options (else TF_ERR_ARG, one line
 * naming the field that differs) and runs the iterations that are left of
 * max_iters in all: it ends with the fits and the factors the run would
 * have had without the stop (the same bits on the same machine and
 * backend). A checkpoint of a run that converged resumes to its result
 * without iterating. */
typedef struct tf_checkpoint {
    const char *path;      /* the stem to write to; NULL or "" = no checkpoints      */
    uint32_t every_iters;  /* a checkpoint after every every_iters-th iteration...  */
    double every_seconds;  /* ... and/or when every_seconds (wall) have passed since
                              the last one (both 0: after every iteration). The last
                              iteration of a run (converged, stopped, max_iters) is
                              always written                                       */
    const char *resume;    /* the stem of a checkpoint to go on from; NULL or "" =
                              start afresh. It may be the same as path             */
} tf_checkpoint;

#ifdef __cplusplus
}
#endif
#endif /* TENFOLD_CHECKPOINT_H */
