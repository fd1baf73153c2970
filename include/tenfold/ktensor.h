/* SPDX-License-Identifier: BSD-3-Clause */
/* tenfold/ktensor.h — Kruskal tensors (the result of CP-ALS): their factor
 * sets on disk and their products with a sparse tensor. */
#ifndef TENFOLD_KTENSOR_H
#define TENFOLD_KTENSOR_H

#include "context.h"
#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tf_ktensor {
    uint32_t order;
    uint64_t rank;
    uint64_t dims[TF_MAX_ORDER];
    double *lambda;                     /* rank weights                 */
    tf_matrix factors[TF_MAX_ORDER];    /* dims[m] x rank, row-major    */
} tf_ktensor;

tf_status tf_ktensor_alloc(tf_ktensor *k, uint32_t order, const uint64_t *dims, uint64_t rank);
void tf_ktensor_free(tf_ktensor *k);
/* The files of a Kruskal tensor, written as one factor set:
 *   TF_KTENSOR_SPLATT  <stem>.mode<N>.mat (N = 1..order), <stem>.lambda.mat
 *   TF_KTENSOR_TTB     <stem>.ktensor (Tensor Toolbox / pyttb export_data;
 *                      the same numbers again in one file)
 * and <stem>.set, the set's manifest (a short text file naming the set's
 * files and their generation). How a set is switched:
 *   - the writer takes <stem>.lock (flock; the file is removed when it is
 *     done): a second writer of the same stem, in this or another process,
 *     fails at once ("<stem>: another tenfold run is writing this factor set
 *     (pid N)");
 *   - every file is written to a temporary name beside it and fsynced, then
 *     the manifest, which names those temporaries, is renamed into place: that
 *     one rename is the switch. The temporaries are renamed over the files
 *     after it, and files of the previous set that the new one does not have
 *     (a mode beyond the new order, the .ktensor under SPLATT alone) are
 *     removed;
 *   - readers that go through the manifest (tf_ktensor_read, `tenfold cpd
 *     --init`) see the whole previous set or the whole new one, also while
 *     the files are being renamed and after the writer was killed (SIGKILL)
 *     in the middle: they read a temporary the manifest names while it
 *     exists. The next writer of the stem finishes such an interrupted switch
 *     and removes the temporaries a killed writer left (it recorded them in
 *     the lock file before creating them);
 *   - a failure before the switch leaves the previous set as it was and no
 *     temporary behind.
 * A program reading <stem>.mode<N>.mat itself reads one file at a time: it
 * sees each file whole, old or new, but not a set that cannot change under
 * it (use tf_ktensor_read, or no concurrent writer). */
#define TF_KTENSOR_SPLATT 1u
#define TF_KTENSOR_TTB 2u
#define TF_KTENSOR_ALL 3u
tf_status tf_ktensor_write(const char *stem, const tf_ktensor *k, unsigned flags);
/* tf_ktensor_write(stem, k, TF_KTENSOR_SPLATT). */
tf_status tf_ktensor_write_splatt(const char *stem, const tf_ktensor *k);
/* The Tensor Toolbox / pyttb export_data "ktensor" file alone, at path (one
 * file: no manifest, no lock). */
tf_status tf_ktensor_write_ttb(const char *path, const tf_ktensor *k);

/* tf_ktensor_write in steps, with other files switched together with the
 * set (a report that lists the set's files):
 *   open    checks the places (as tf_output_check), takes the lock, finishes
 *           an interrupted switch of the stem and removes a killed writer's
 *           temporaries; hold it from the start of a long computation so a
 *           second writer fails before it computes
 *   put     writes the factor files to their temporaries (once)
 *   add     one more file of the same switch: written to its temporary now
 *           and renamed with the set (its path must not be one of the set's
 *           files); standard output, a FIFO or a device is written at once,
 *           before the switch, so a failure there leaves the previous set
 *   commit  writes the manifest and switches; then frees o (also on failure)
 *   abort   removes the temporaries, releases the lock, frees o */
typedef struct tf_ktensor_out tf_ktensor_out;
tf_status tf_ktensor_out_open(const char *stem, unsigned flags, tf_ktensor_out **o);
tf_status tf_ktensor_out_put(tf_ktensor_out *o, const tf_ktensor *k);
tf_status tf_ktensor_out_add(tf_ktensor_out *o, const char *path, const void *data, size_t len);
tf_status tf_ktensor_out_commit(tf_ktensor_out *o);
void tf_ktensor_out_abort(tf_ktensor_out *o);

/* Reads the factor set <stem> (as tf_ktensor_write writes it) into k: with
 * <stem>.set, exactly the files it names, as one snapshot (whole old or
 * whole new while a writer switches it: a manifest that changed during the
 * read makes it read again); without one (files from elsewhere, or written
 * by an older tenfold), <stem>.mode1.mat, .mode2.mat, ... for as long as
 * they exist, and <stem>.lambda.mat if present. k->order is the number of
 * factor files (checked against a tensor by the caller: it may be 1), k->rank
 * their column count (the same in every file), k->dims their row counts,
 * k->lambda the lambda file's values or ones; *has_lambda (may be NULL) says
 * which. Messages name the files as <stem>.mode<N>.mat. */
tf_status tf_ktensor_read(const char *stem, tf_ktensor *k, int *has_lambda);

/* ----------------------------------------------------- ktensor operations
 * The ktensor and sptensor operations of the Tensor Toolbox / pyttb on
 * tenfold's types, without densifying (issue 43). Every function checks its
 * arguments (a NULL pointer, a mode out of range, a shape mismatch, an
 * invalid tensor as tf_tensor_validate) and fails with TF_ERR_ARG and a
 * message naming the argument; outputs are then left as they were (a
 * tf_tensor output zeroed). Passes over the non-zeros run on
 * tf_default_threads() OpenMP threads where the size warrants; sums are
 * taken in blocks whose partials are added in order, so a result does not
 * depend on the thread count. A ktensor's lambda may be NULL (all ones);
 * its order and dims must be the tensor's, factors[m] dims[m] x rank. */

/* The model at the non-zeros of X: out[j] = sum_r lambda_r prod_n
 * A_n(i_jn, r), one value per non-zero (out: X->nnz doubles). The kernel of
 * <X, K>, CP-APR and GCP. On the CPU, as the other helpers here;
 * tf_model_values_ex also runs on a GPU. */
tf_status tf_model_values(const tf_tensor *X, const tf_ktensor *K, double *out);

typedef tf_run_info tf_model_info; /* where a tf_model_values_ex ran */

typedef struct tf_model_opts {
    tf_backend backend;     /* default TF_BACKEND_AUTO: the context's device,
                               else the GPU when one is present              */
    tf_precision precision; /* the GPU's arithmetic, default TF_DOUBLE (TF_SINGLE:
                               factors, lambda and sums in float); the CPU
                               computes in double either way                  */
    int threads;            /* CPU threads, 0 = default                         */
    int device;             /* GPU ordinal                                      */
    tf_context *context;    /* devices, tuning; NULL = a private default one      */
    tf_model_info *info;    /* optional output (NULL: none)                      */
} tf_model_opts;

void tf_model_opts_default(tf_model_opts *o);
/* tf_model_values with the device chosen as SpTTM's is (o NULL: the
 * defaults): on the GPU the factors (and lambda) and the non-zeros'
 * indices are uploaded -- the indices in pieces the device's memory budget
 * holds -- the model computed there and out downloaded; under auto, a
 * problem the GPU cannot hold runs on the CPU (info->note says why). */
tf_status tf_model_values_ex(const tf_tensor *X, const tf_ktensor *K, const tf_model_opts *o, double *out);
/* <X, K> = sum_j x_j m_j (pyttb ktensor.innerprod with an sptensor), in the
 * same pass, without storing the model values. */
tf_status tf_ktensor_innerprod(const tf_tensor *X, const tf_ktensor *K, double *out);
/* Frobenius norm of the full tensor of K from the R x R Grams, never formed
 * densely: sqrt(|sum_{r,s} lambda_r lambda_s prod_n (A_n^T A_n)(r,s)|)
 * (pyttb ktensor.norm). rank <= TF_MAX_RANK. */
tf_status tf_ktensor_norm(const tf_ktensor *K, double *out);
/* pyttb's ktensor.fixsigns() in place: in every component r, per factor the
 * entry of largest magnitude in column r (the first of ties; a NaN counts as
 * largest and is not negative), and of the factors where it is negative the
 * first 2 floor(k / 2) of the k (in mode order) have column r negated -- an
 * even count, so the model is unchanged. lambda is left alone; a factor of 0
 * rows may have no data. */
tf_status tf_ktensor_fixsigns(tf_ktensor *K);

/* Fit 1 - ||X - K|| / ||X|| of a Kruskal tensor, computed directly (for
 * tests); X and lambda are scaled by a power of two first, so values near
 * the ends of the double range work. */
tf_status tf_ktensor_fit(const tf_tensor *X, const tf_ktensor *K, double *fit);

#ifdef __cplusplus
}
#endif
#endif /* TENFOLD_KTENSOR_H */
