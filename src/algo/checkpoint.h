/* SPDX-License-Identifier: BSD-3-Clause */
/* Checkpoints of the iterative methods (tenfold/checkpoint.h): what the
 * loops of cp_als.c, cp_apr.c and tucker.c save after an iteration and
 * start again from. The state file STEM.state is switched with the factor
 * set (io/factor_set.c), so a checkpoint is whole or the previous one:
 *
 *   # a comment line
 *   tenfold-checkpoint 1
 *   method cp-als | ao-admm | hals | cp-apr | tucker | gcp
 *   tensor order N dims I1 .. IN nnz NNZ checksum HEX
 *   rank R              (tucker: ranks R1 .. RN)
 *   options ...         (what else the trajectory depends on)
 *   iteration K         (iterations done)
 *   converged 0|1
 *   fits F1 .. FK       (%.17g: the fit, or CP-APR's log-likelihood, per iteration)
 *   extra V1 .. VE      (optional, %.17g: a method's scalar state -- GCP's
 *                        Adam rate, moment factors, sample counter, fails)
 *   aux MODE ROWS COLS  (1-based mode; then ROWS lines of COLS values: AO-ADMM's
 *                        scaled duals, CP-APR's last Phi of the mode)
 *   end
 *
 * The method, tensor, rank and options lines must equal the resumed run's. */
#ifndef TF_ALGO_CHECKPOINT_H
#define TF_ALGO_CHECKPOINT_H
#include "seams/dist.h"
#include "tenfold.h"

#define TF_CKPT_EXTRA 16

typedef struct tf_ckpt {
    const tf_checkpoint *opts; /* the caller's (path, every, resume)                  */
    int writer;                /* this process writes (rank 0, or one process)        */
    const tf_dist *dist;       /* ranks that decide together (NULL: one process)      */
    char method[16];
    char ident[1536];          /* the tensor, rank and options lines                   */
    double *fits;              /* every fit so far (nfits of them)                     */
    uint32_t nfits, cap;
    double t_last;             /* wall time of the last write (or of the start)        */
    /* what a resumed run starts from (done = 0: none) */
    uint32_t done;             /* iterations the checkpoint had done                   */
    int converged;
    tf_matrix aux[TF_MAX_ORDER]; /* per mode (rows 0: none), the caller's row order    */
    double extra[TF_CKPT_EXTRA]; /* scalar state: set before a write (nextra of them),
                                    read back by a load                              */
    uint32_t nextra;
    /* Before a write: the model (and aux) from the run's view into the
     * caller's (row labels, value scale); NULL = the same. */
    tf_status (*to_caller)(void *u, tf_ktensor *k, tf_matrix *aux);
    void *u;
    int lambda_exp;            /* lambda written times 2^lambda_exp (the run's value scale) */
} tf_ckpt;

/* c for the checkpoint options ck (NULL or nothing asked: *on = 0 and c
 * unused). method as in the state file; X (this rank's part when parts is
 * non-NULL: the count and checksum are then the whole tensor's) and
 * ranks[0..nranks) give the tensor and rank lines, options the options
 * line. Collective over parts. */
tf_status tf_ckpt_begin(tf_ckpt *c, const tf_checkpoint *ck, const char *method, const tf_tensor *X,
                        const tf_dist *parts, const tf_dist *dist, const uint64_t *ranks, uint32_t nranks,
                        const char *options, int *on);
/* Reads the checkpoint opts->resume (when there is one; else nothing) into
 * c and k (a Kruskal tensor, caller's order; lambda as written) or factors /
 * *order (Tucker: every mode's factor), checking the method, tensor, rank
 * and options lines: a mismatch is TF_ERR_ARG naming the field. */
tf_status tf_ckpt_load(tf_ckpt *c, tf_ktensor *k, tf_matrix *factors, uint32_t *order);
/* Records fit as iteration it's and says whether a checkpoint is due now
 * (last: the run ends with this iteration). The same answer on every rank. */
tf_status tf_ckpt_due(tf_ckpt *c, uint32_t it, double fit, int last, int *due);
/* Writes the checkpoint of iteration it (rank 0; collective over c->dist,
 * every rank learning whether it worked): a Kruskal tensor k (modified:
 * to_caller, the lambda scale) with aux (NULL or per mode), or a Tucker
 * tensor t. */
tf_status tf_ckpt_write(tf_ckpt *c, tf_ktensor *k, tf_matrix *aux, const tf_ttensor *t, uint32_t it,
                        int converged);
/* aux[0..order) allocated dims[m] x rank for a backend's aux_get (fills
 * them, has[m] = 1 where a mode has state), then the modes without state
 * freed (rows 0). get(ctx, aux, has) is the backend's aux_get. */
tf_status tf_ckpt_aux(uint32_t order, const uint64_t *dims, uint64_t rank,
                      tf_status (*get)(void *ctx, tf_matrix *aux, int *has), void *ctx, tf_matrix *aux);
void tf_ckpt_free(tf_ckpt *c);
#endif
