/* SPDX-License-Identifier: BSD-3-Clause */
/* Test entries to the dense kernels of GPU CP-ALS; see dense_check.h. */
#include "hooks/dense_check.h"

#include "gpu/runtime/gpu_dev.cuh"
#include "gpu/cpd/dense.cuh"

namespace {

/* A stream of the check's own, destroyed on scope exit. */
struct check_stream {
    cudaStream_t s = nullptr;
    ~check_stream()
    {
        if (s) cudaStreamDestroy(s);
    }
    tf_status create()
    {
        TF_CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        return TF_OK;
    }
};

/* n elements, every bit set (a NaN in float and in double). */
template <typename T>
tf_status poisoned(tf_dev_array<T> &a, uint64_t n, const char *what, cudaStream_t st)
{
    TF_TRY(a.alloc(n, what));
    TF_CU(cudaMemsetAsync(a.p, 0xff, n * sizeof(T), st));
    return TF_OK;
}

/* n elements from host doubles. */
template <typename T>
tf_status uploaded(tf_dev_array<T> &a, const double *h, uint64_t n, const char *what, cudaStream_t st)
{
    TF_TRY(a.alloc(n, what));
    return tf_gpu_put_values(a.p, h, n, st);
}

/* The step scalars, zeroed; scalars_back copies them to the host and waits. */
tf_status zero_scalars(tf_dev_array<tf_gpu_scalars> &sc, cudaStream_t st)
{
    TF_TRY(sc.alloc(1, "scalars"));
    TF_CU(cudaMemsetAsync(sc.p, 0, sizeof(tf_gpu_scalars), st));
    return TF_OK;
}
tf_status scalars_back(const tf_dev_array<tf_gpu_scalars> &sc, tf_gpu_scalars *h, cudaStream_t st)
{
    TF_CU(cudaMemcpyAsync(h, sc.p, sizeof *h, cudaMemcpyDeviceToHost, st));
    TF_CU(cudaStreamSynchronize(st));
    return TF_OK;
}

/* n zeros (the kernels' last-block counters). */
tf_status zeroed(tf_dev_array<unsigned> &a, uint64_t n, const char *what, cudaStream_t st)
{
    TF_TRY(a.alloc(n, what));
    TF_CU(cudaMemsetAsync(a.p, 0, n * sizeof(unsigned), st));
    return TF_OK;
}

/* TF_OK if the last-block counter is back at zero after the kernels ran
 * (their contract: the next launch counts from zero); waits. */
tf_status counter_left_zero(const tf_dev_array<unsigned> &c, const char *what, cudaStream_t st)
{
    unsigned h = 1;
    TF_CU(cudaMemcpyAsync(&h, c.p, sizeof h, cudaMemcpyDeviceToHost, st));
    TF_CU(cudaStreamSynchronize(st));
    if (h != 0) return tf_fail(TF_ERR_NUMERIC, "%s: its completion counter was left at %u, not 0", what, h);
    return TF_OK;
}

/* The fit terms and the non-finite flag to the host (waits). */
tf_status fit_back(const tf_dev_array<tf_gpu_scalars> &sc, cudaStream_t st, double *inner, double *knorm2,
                   int *nonfinite)
{
    tf_gpu_scalars h;
    TF_TRY(scalars_back(sc, &h, st));
    *inner = h.inner;
    *knorm2 = h.knorm2;
    *nonfinite = h.nonfinite;
    return TF_OK;
}

/* Pointers to the k-th of n stacked blocks of `each` elements, in p[k]. */
template <typename T>
void stacked(const tf_dev_array<T> &a, uint32_t n, uint64_t each, const T **p)
{
    for (uint32_t k = 0; k < n; ++k) p[k] = a.p + (uint64_t)k * each;
}

/* lambda, the scales, G (R x R) and the non-finite flag to the host (waits). */
template <typename T>
tf_status normalised_back(const tf_dev_array<T> &lambda, const tf_dev_array<T> &s, const tf_dev_array<T> &G, uint32_t R,
                          const tf_dev_array<tf_gpu_scalars> &sc, cudaStream_t st, double *hlambda, double *hs,
                          double *hG, int *nonfinite)
{
    TF_TRY(tf_gpu_get_values(hlambda, lambda.p, R, st));
    TF_TRY(tf_gpu_get_values(hs, s.p, R, st));
    TF_TRY(tf_gpu_get_values(hG, G.p, (uint64_t)R * R, st));
    tf_gpu_scalars h;
    TF_TRY(scalars_back(sc, &h, st));
    *nonfinite = h.nonfinite;
    return TF_OK;
}

/* V, W (R x R), the solve's info, pseudo-inverse count and the non-finite flag to the host (waits). */
template <typename T>
tf_status solved_back(const tf_dev_array<T> &V, const tf_dev_array<T> &W, uint32_t R,
                      const tf_dev_array<tf_gpu_scalars> &sc, cudaStream_t st, double *hV, double *hW, int *info,
                      unsigned *pinv, int *nonfinite)
{
    TF_TRY(tf_gpu_get_values(hV, V.p, (uint64_t)R * R, st));
    TF_TRY(tf_gpu_get_values(hW, W.p, (uint64_t)R * R, st));
    tf_gpu_scalars h;
    TF_TRY(scalars_back(sc, &h, st));
    *info = h.info;
    *pinv = h.pinv;
    *nonfinite = h.nonfinite;
    return TF_OK;
}

template <typename T>
tf_status apply_gram_check(const double *hM, uint64_t I, const double *hW, int norm, double *hA, double *hlambda,
                           double *hs, double *hG, int *nonfinite)
{
    const uint32_t R = TF_GPU_APPLY_GRAM_RANK, RR = R * R;
    if (I == 0) return tf_fail(TF_ERR_ARG, "apply + Gram check: no rows");
    check_stream cs;
    TF_TRY(cs.create());
    const cudaStream_t st = cs.s;
    tf_dev_array<T> M, W, A, s, lambda, G;
    tf_dev_array<double> gpart, graw;
    tf_dev_array<tf_gpu_scalars> sc;
    TF_TRY(uploaded(M, hM, I * R, "M", st));
    TF_TRY(uploaded(W, hW, RR, "W", st));
    TF_TRY(poisoned(A, I * R, "A", st));
    TF_TRY(poisoned(s, R, "scales", st));
    TF_TRY(poisoned(lambda, R, "lambda", st));
    TF_TRY(poisoned(G, RR, "G", st));
    TF_TRY(poisoned(gpart, tf_gpu_gram_partial_count(I, R), "Gram partials", st));
    TF_TRY(poisoned(graw, RR, "raw Gram", st));
    TF_TRY(zero_scalars(sc, st));
    TF_TRY(tf_gpu_apply_gram<T>(M.p, I, R, W.p, A.p, norm, gpart.p, graw.p, s.p, lambda.p, G.p, sc.p, st));
    TF_TRY(tf_gpu_get_values(hA, A.p, I * R, st));
    return normalised_back(lambda, s, G, R, sc, st, hlambda, hs, hG, nonfinite);
}

template <typename T>
tf_status gram_check(const double *hA, uint64_t I, uint32_t R, int norm, const double *hs_in, double *hlambda,
                     double *hs, double *hG, int *nonfinite)
{
    const uint32_t RR = R * R;
    check_stream cs;
    TF_TRY(cs.create());
    const cudaStream_t st = cs.s;
    tf_dev_array<T> A, s, lambda, G;
    tf_dev_array<double> gpart, graw;
    tf_dev_array<unsigned> counter;
    tf_dev_array<tf_gpu_scalars> sc;
    TF_TRY(uploaded(A, hA, I * R, "A", st));
    TF_TRY(norm == 0 ? uploaded(s, hs_in, R, "scales", st) : poisoned(s, R, "scales", st));
    TF_TRY(poisoned(lambda, R, "lambda", st));
    TF_TRY(poisoned(G, RR, "G", st));
    TF_TRY(poisoned(gpart, tf_gpu_gram_partial_count(I, R), "Gram partials", st));
    TF_TRY(poisoned(graw, RR, "raw Gram", st));
    TF_TRY(zeroed(counter, 1, "counter", st));
    TF_TRY(zero_scalars(sc, st));
    TF_TRY(tf_gpu_gram<T>(A.p, I, R, norm, gpart.p, graw.p, counter.p, s.p, lambda.p, G.p, sc.p, st));
    TF_TRY(counter_left_zero(counter, "Gram", st));
    return normalised_back(lambda, s, G, R, sc, st, hlambda, hs, hG, nonfinite);
}

/* A solve's device inputs and outputs: the n stacked Grams and scale
 * vectors uploaded (pointers to each in gp / sp), V, W and the Jacobi
 * scratch poisoned, the scalars zeroed. */
template <typename T>
struct solve_io {
    tf_dev_array<T> G, scales, V, W;
    tf_dev_array<double> jq;
    tf_dev_array<tf_gpu_scalars> sc;
    const T *gp[16], *sp[16];
    tf_status prepare(const double *hG, const double *hscales, uint32_t n, uint32_t R, cudaStream_t st)
    {
        const uint64_t RR = (uint64_t)R * R;
        TF_TRY(uploaded(G, hG, n * RR, "Grams", st));
        TF_TRY(uploaded(scales, hscales, (uint64_t)n * R, "scales", st));
        TF_TRY(poisoned(V, RR, "V", st));
        TF_TRY(poisoned(W, RR, "W", st));
        TF_TRY(poisoned(jq, RR, "Jacobi scratch", st));
        TF_TRY(zero_scalars(sc, st));
        stacked(G, n, RR, gp);
        stacked(scales, n, R, sp);
        return TF_OK;
    }
};

template <typename T>
tf_status solve_check(const double *hG, const double *hscales, uint32_t n, uint32_t skip, uint32_t R, double rcond,
                      double *hV, double *hW, int *info, unsigned *pinv, int *nonfinite)
{
    check_stream cs;
    TF_TRY(cs.create());
    const cudaStream_t st = cs.s;
    solve_io<T> io;
    TF_TRY(io.prepare(hG, hscales, n, R, st));
    TF_TRY(tf_gpu_small_solve<T>(io.gp, io.sp, n, skip, R, rcond, io.V.p, io.W.p, io.jq.p, io.sc.p, st));
    return solved_back(io.V, io.W, R, io.sc, st, hV, hW, info, pinv, nonfinite);
}

template <typename T>
tf_status gram_solve_check(const double *hA, uint64_t I, uint32_t g, int norm, const double *hG,
                           const double *hscales, uint32_t n, uint32_t skip, uint32_t R, double rcond,
                           double *hlambda, double *hs, double *hGg, double *hV, double *hW, int *info,
                           unsigned *pinv, int *nonfinite)
{
    const uint32_t RR = R * R;
    check_stream cs;
    TF_TRY(cs.create());
    const cudaStream_t st = cs.s;
    tf_dev_array<T> A, lambda;
    solve_io<T> io;
    TF_TRY(uploaded(A, hA, I * R, "A", st));
    TF_TRY(io.prepare(hG, hscales, n, R, st));
    /* mode g's Gram and scale: written by the kernel */
    T *Gg = io.G.p + (uint64_t)g * RR, *sg = io.scales.p + (uint64_t)g * R;
    TF_CU(cudaMemsetAsync(Gg, 0xff, RR * sizeof(T), st));
    TF_CU(cudaMemsetAsync(sg, 0xff, R * sizeof(T), st));
    TF_TRY(poisoned(lambda, R, "lambda", st));
    TF_TRY(tf_gpu_gram_solve<T>(A.p, I, g, norm, sg, lambda.p, io.gp, io.sp, n, skip, R, rcond, io.V.p, io.W.p,
                                io.jq.p, io.sc.p, st));
    TF_TRY(tf_gpu_get_values(hlambda, lambda.p, R, st));
    TF_TRY(tf_gpu_get_values(hs, sg, R, st));
    TF_TRY(tf_gpu_get_values(hGg, Gg, RR, st));
    return solved_back(io.V, io.W, R, io.sc, st, hV, hW, info, pinv, nonfinite);
}

template <typename T>
tf_status small_apply_check(const double *hM, uint64_t I, uint32_t R, const double *hW, double *hA)
{
    check_stream cs;
    TF_TRY(cs.create());
    const cudaStream_t st = cs.s;
    tf_dev_array<T> M, W, A;
    TF_TRY(uploaded(M, hM, I * R, "M", st));
    TF_TRY(uploaded(W, hW, (uint64_t)R * R, "W", st));
    TF_TRY(poisoned(A, I * R, "A", st));
    TF_TRY(tf_gpu_small_apply<T>(M.p, I, R, W.p, A.p, st));
    return tf_gpu_get_values(hA, A.p, I * R, st);
}

/* The fit terms' scratch (slab partials poisoned, `counters` last-block
 * counters and the scalars zeroed) and pointers to the n stacked scale
 * vectors and Grams in sp / gp. */
template <typename T>
struct fit_io {
    tf_dev_array<double> partial;
    tf_dev_array<unsigned> counter;
    tf_dev_array<tf_gpu_scalars> sc;
    const T *sp[16], *gp[16];
    tf_status prepare(uint64_t I, uint32_t R, const tf_dev_array<T> &scales, const tf_dev_array<T> &G, uint32_t n,
                      uint32_t counters, cudaStream_t st)
    {
        TF_TRY(poisoned(partial, (uint64_t)tf_gpu_slabs(I) * R, "fit partials", st));
        TF_TRY(zeroed(counter, counters, "counters", st));
        TF_TRY(zero_scalars(sc, st));
        stacked(scales, n, R, sp);
        stacked(G, n, (uint64_t)R * R, gp);
        return TF_OK;
    }
};

template <typename T>
tf_status fit_terms_check(const double *hA, const double *hB, uint64_t I, uint32_t R, const double *hw,
                          const double *hscales, const double *hG, uint32_t n, double *inner, double *knorm2,
                          int *nonfinite)
{
    check_stream cs;
    TF_TRY(cs.create());
    const cudaStream_t st = cs.s;
    tf_dev_array<T> A, B, w, scales, G;
    fit_io<T> io;
    TF_TRY(uploaded(A, hA, I * R, "A", st));
    TF_TRY(uploaded(B, hB, I * R, "B", st));
    TF_TRY(uploaded(w, hw, R, "weights", st));
    TF_TRY(uploaded(scales, hscales, (uint64_t)n * R, "scales", st));
    TF_TRY(uploaded(G, hG, (uint64_t)n * R * R, "Grams", st));
    TF_TRY(io.prepare(I, R, scales, G, n, 1, st));
    TF_TRY(tf_gpu_fit_terms<T>(A.p, B.p, I, R, w.p, io.sp, io.gp, n, io.partial.p, io.counter.p, io.sc.p, st));
    TF_TRY(counter_left_zero(io.counter, "fit terms", st));
    return fit_back(io.sc, st, inner, knorm2, nonfinite);
}

/* The buffers of a last mode's Gram + fit check: modes 0 .. n - 2's
 * scales and Grams given; mode n - 1's (sn, Gn), lambda and the partials
 * poisoned. back() returns lambda, sn, Gn and the fit terms (waits). */
template <typename T>
struct last_mode_io {
    tf_dev_array<T> scales, G, lambda;
    tf_dev_array<double> gpart, graw;
    fit_io<T> io;
    T *sn = nullptr, *Gn = nullptr;
    uint32_t R = 0;

    tf_status prepare(uint64_t I, uint32_t r, const double *hscales, const double *hG, uint32_t n, cudaStream_t st)
    {
        R = r;
        const uint64_t RR = (uint64_t)R * R;
        TF_TRY(poisoned(scales, (uint64_t)n * R, "scales", st));
        TF_TRY(poisoned(G, n * RR, "Grams", st));
        if (n > 1) {
            TF_TRY(tf_gpu_put_values(scales.p, hscales, (uint64_t)(n - 1) * R, st));
            TF_TRY(tf_gpu_put_values(G.p, hG, (n - 1) * RR, st));
        }
        TF_TRY(poisoned(lambda, R, "lambda", st));
        TF_TRY(poisoned(gpart, tf_gpu_gram_partial_count(I, R), "Gram partials", st));
        TF_TRY(poisoned(graw, RR, "raw Gram", st));
        TF_TRY(io.prepare(I, R, scales, G, n, 1, st));
        sn = scales.p + (uint64_t)(n - 1) * R;
        Gn = G.p + (n - 1) * RR;
        return TF_OK;
    }
    tf_status back(cudaStream_t st, double *hlambda, double *hs, double *hGn, double *inner, double *knorm2,
                   int *nonfinite)
    {
        TF_TRY(tf_gpu_get_values(hlambda, lambda.p, R, st));
        TF_TRY(tf_gpu_get_values(hs, sn, R, st));
        TF_TRY(tf_gpu_get_values(hGn, Gn, (uint64_t)R * R, st));
        return fit_back(io.sc, st, inner, knorm2, nonfinite);
    }
};

template <typename T>
tf_status gram_fit_check(const double *hA, const double *hM, uint64_t I, uint32_t R, int norm, const double *hscales,
                         const double *hG, uint32_t n, double *hlambda, double *hs, double *hGn, double *inner,
                         double *knorm2, int *nonfinite)
{
    check_stream cs;
    TF_TRY(cs.create());
    const cudaStream_t st = cs.s;
    tf_dev_array<T> A, M;
    last_mode_io<T> lm;
    TF_TRY(uploaded(A, hA, I * R, "A", st));
    TF_TRY(uploaded(M, hM, I * R, "M", st));
    TF_TRY(lm.prepare(I, R, hscales, hG, n, st));
    TF_TRY(tf_gpu_gram_fit<T>(A.p, M.p, I, R, norm, lm.gpart.p, lm.graw.p, lm.io.counter.p, lm.sn, lm.lambda.p, lm.Gn,
                              lm.io.sp, lm.io.gp, n, lm.io.sc.p, st));
    TF_TRY(counter_left_zero(lm.io.counter, "Gram + fit", st));
    return lm.back(st, hlambda, hs, hGn, inner, knorm2, nonfinite);
}

/* tf_gpu_apply_gram_partials with the fit's dots, then
 * tf_gpu_gram_fit_finish: as gram_fit_check with A = M W formed (and
 * returned) by the pass */
template <typename T>
tf_status apply_gram_fit_check(const double *hM, uint64_t I, const double *hW, int norm, const double *hscales,
                               const double *hG, uint32_t n, double *hA, double *hlambda, double *hs, double *hGn,
                               double *inner, double *knorm2, int *nonfinite)
{
    check_stream cs;
    TF_TRY(cs.create());
    const cudaStream_t st = cs.s;
    const uint32_t R = TF_GPU_APPLY_GRAM_RANK;
    tf_dev_array<T> M, W, A;
    last_mode_io<T> lm;
    TF_TRY(uploaded(M, hM, I * R, "M", st));
    TF_TRY(uploaded(W, hW, (uint64_t)R * R, "W", st));
    TF_TRY(poisoned(A, I * R, "A", st));
    TF_TRY(lm.prepare(I, R, hscales, hG, n, st));
    TF_TRY(tf_gpu_apply_gram_partials<T>(M.p, I, R, W.p, A.p, norm, 1, lm.gpart.p, st));
    TF_TRY(tf_gpu_gram_fit_finish<T>(lm.gpart.p, tf_gpu_gram_slabs(I), R, norm, lm.graw.p, lm.sn, lm.lambda.p, lm.Gn,
                                     lm.io.sp, lm.io.gp, n, lm.io.sc.p, st));
    TF_TRY(tf_gpu_get_values(hA, A.p, I * R, st));
    return lm.back(st, hlambda, hs, hGn, inner, knorm2, nonfinite);
}

/* The arguments both last-mode checks take: rows, norm 1 or 2, 1..16 modes. */
tf_status last_mode_args(const char *what, uint64_t I, int norm, uint32_t n)
{
    if (I == 0) return tf_fail(TF_ERR_ARG, "%s check: no rows", what);
    if (norm != 1 && norm != 2) return tf_fail(TF_ERR_ARG, "%s check: norm %d is not 1 or 2", what, norm);
    if (n == 0 || n > 16) return tf_fail(TF_ERR_ARG, "%s check: %u modes, 1..16 expected", what, n);
    return TF_OK;
}

} // namespace

extern "C" tf_status tf_gpu_check_apply_gram_fit(tf_precision prec, const double *M, uint64_t I, const double *W,
                                                 int norm, const double *scales, const double *G, uint32_t n,
                                                 double *A, double *lambda, double *s, double *Gn, double *inner,
                                                 double *knorm2, int *nonfinite)
{
    TF_TRY(last_mode_args("apply + Gram + fit", I, norm, n));
    return prec == TF_SINGLE
               ? apply_gram_fit_check<float>(M, I, W, norm, scales, G, n, A, lambda, s, Gn, inner, knorm2, nonfinite)
               : apply_gram_fit_check<double>(M, I, W, norm, scales, G, n, A, lambda, s, Gn, inner, knorm2, nonfinite);
}

extern "C" tf_status tf_gpu_check_apply_gram(tf_precision prec, const double *M, uint64_t I, const double *W,
                                             int norm, double *A, double *lambda, double *s, double *G,
                                             int *nonfinite)
{
    if (norm != 1 && norm != 2) return tf_fail(TF_ERR_ARG, "apply + Gram check: norm %d is not 1 or 2", norm);
    return prec == TF_SINGLE ? apply_gram_check<float>(M, I, W, norm, A, lambda, s, G, nonfinite)
                             : apply_gram_check<double>(M, I, W, norm, A, lambda, s, G, nonfinite);
}

extern "C" tf_status tf_gpu_check_gram(tf_precision prec, const double *A, uint64_t I, uint32_t R, int norm,
                                       const double *s_in, double *lambda, double *s, double *G, int *nonfinite)
{
    if (norm < 0 || norm > 2) return tf_fail(TF_ERR_ARG, "Gram check: norm %d is not 0, 1 or 2", norm);
    if (norm == 0 && !s_in) return tf_fail(TF_ERR_ARG, "Gram check: norm 0 needs the scales");
    return prec == TF_SINGLE ? gram_check<float>(A, I, R, norm, s_in, lambda, s, G, nonfinite)
                             : gram_check<double>(A, I, R, norm, s_in, lambda, s, G, nonfinite);
}

extern "C" tf_status tf_gpu_check_small_solve(tf_precision prec, const double *G, const double *scales, uint32_t n,
                                              uint32_t skip, uint32_t R, double rcond, double *V, double *W,
                                              int *info, unsigned *pinv, int *nonfinite)
{
    if (n == 0 || n > 16) return tf_fail(TF_ERR_ARG, "small solve check: %u Grams, 1..16 expected", n);
    return prec == TF_SINGLE ? solve_check<float>(G, scales, n, skip, R, rcond, V, W, info, pinv, nonfinite)
                             : solve_check<double>(G, scales, n, skip, R, rcond, V, W, info, pinv, nonfinite);
}

extern "C" tf_status tf_gpu_check_gram_solve(tf_precision prec, const double *A, uint64_t I, uint32_t g, int norm,
                                             const double *G, const double *scales, uint32_t n, uint32_t skip,
                                             uint32_t R, double rcond, double *lambda, double *s, double *Gg,
                                             double *V, double *W, int *info, unsigned *pinv, int *nonfinite)
{
    if (n == 0 || n > 16) return tf_fail(TF_ERR_ARG, "Gram + solve check: %u Grams, 1..16 expected", n);
    return prec == TF_SINGLE ? gram_solve_check<float>(A, I, g, norm, G, scales, n, skip, R, rcond, lambda, s, Gg, V,
                                                       W, info, pinv, nonfinite)
                             : gram_solve_check<double>(A, I, g, norm, G, scales, n, skip, R, rcond, lambda, s, Gg,
                                                        V, W, info, pinv, nonfinite);
}

extern "C" tf_status tf_gpu_check_small_apply(tf_precision prec, const double *M, uint64_t I, uint32_t R,
                                              const double *W, double *A)
{
    if (I == 0) return tf_fail(TF_ERR_ARG, "small apply check: no rows");
    return prec == TF_SINGLE ? small_apply_check<float>(M, I, R, W, A) : small_apply_check<double>(M, I, R, W, A);
}

extern "C" tf_status tf_gpu_check_fit_terms(tf_precision prec, const double *A, const double *B, uint64_t I,
                                            uint32_t R, const double *w, const double *scales, const double *G,
                                            uint32_t n, double *inner, double *knorm2, int *nonfinite)
{
    if (I == 0) return tf_fail(TF_ERR_ARG, "fit terms check: no rows");
    if (n == 0 || n > 16) return tf_fail(TF_ERR_ARG, "fit terms check: %u modes, 1..16 expected", n);
    return prec == TF_SINGLE ? fit_terms_check<float>(A, B, I, R, w, scales, G, n, inner, knorm2, nonfinite)
                             : fit_terms_check<double>(A, B, I, R, w, scales, G, n, inner, knorm2, nonfinite);
}

extern "C" tf_status tf_gpu_check_gram_fit(tf_precision prec, const double *A, const double *M, uint64_t I, uint32_t R,
                                           int norm, const double *scales, const double *G, uint32_t n,
                                           double *lambda, double *s, double *Gn, double *inner, double *knorm2,
                                           int *nonfinite)
{
    TF_TRY(last_mode_args("Gram + fit", I, norm, n));
    return prec == TF_SINGLE
               ? gram_fit_check<float>(A, M, I, R, norm, scales, G, n, lambda, s, Gn, inner, knorm2, nonfinite)
               : gram_fit_check<double>(A, M, I, R, norm, scales, G, n, lambda, s, Gn, inner, knorm2, nonfinite);
}
