# SPDX-License-Identifier: BSD-3-Clause
"""Non-negative CP with tensorly's names: non_negative_parafac and
non_negative_parafac_hals, over cp_als's HALS and AO-ADMM updates."""
from __future__ import annotations

import warnings
from typing import Any, Callable, Literal, Optional, Sequence, Union

import numpy as np

from ._errors import ArgumentError
from ._ops import CPResult, Device, IterInfo, PathLike, _mode, _tensor_arg, cp_als
from ._tensor import TensorLike

# tensorly's SVD functions; tenfold computes the 'svd' start itself (its nvecs)
_SVDS = ("truncated_svd", "symeig_svd", "randomized_svd")


def _nn_modes(nn_modes, N):
    if isinstance(nn_modes, str):
        if nn_modes != "all":
            raise ArgumentError(f"nn_modes: expected 'all', None or a sequence of modes, got {nn_modes!r}")
        return list(range(N))
    if nn_modes is None:
        return []
    try:
        return sorted({_mode(m, N) for m in nn_modes})
    except TypeError:
        raise ArgumentError(f"nn_modes: expected 'all', None or a sequence of modes, got {nn_modes!r}") from None


def _sparsity(coefs, N, modes):
    """tensorly's sparsity_coefficients (None, a float, or one per mode, None
    meaning none) as cp_als's l1; a mode that is not non-negative gets none,
    with tensorly's warning."""
    if coefs is None:
        return None
    vals = [coefs] * N if isinstance(coefs, (int, float, np.floating, np.integer)) else list(coefs)
    if len(vals) != N:
        raise ArgumentError(f"sparsity_coefficients: expected a number or {N} of them (one per mode), got "
                            f"{len(vals)}")
    l1 = [0.0 if v is None else v for v in vals]
    if any(l1[m] and m not in modes for m in range(N)):
        warnings.warn("Sparsity coefficient is ignored in unconstrained modes.")
        l1 = [v if m in modes else 0.0 for m, v in enumerate(l1)]
    return l1 if any(l1) else None


def _run(X, rank, method, modes_arg, l1_arg, n_iter_max, init, svd, tol, random_state, normalize_factors, verbose,
         return_errors, cvg_criterion, fixed_modes, inner, inner_tol, device, threads, callback, ckpt=(None, None, None)):
    if fixed_modes:
        raise ArgumentError("fixed_modes: tenfold updates every mode (fixed modes are not available)")
    if svd not in _SVDS:
        raise ArgumentError(f"svd: expected one of {', '.join(map(repr, _SVDS))} (tenfold computes the 'svd' start "
                            f"itself), got {svd!r}")
    if cvg_criterion not in ("abs_rec_error", "rec_error"):
        raise ArgumentError(f"cvg_criterion: expected 'abs_rec_error' or 'rec_error', got {cvg_criterion!r}")
    try:
        tol = float(tol) if tol else 0.0
    except (TypeError, ValueError):
        raise ArgumentError(f"tol: expected a number, got {tol!r}") from None
    T = _tensor_arg(X)
    N = T.ndim
    modes = _nn_modes(modes_arg, N)
    l1 = _sparsity(l1_arg, N, modes)
    user_cb = callback
    stop_tol = tol
    if cvg_criterion == "rec_error" and tol:
        # tensorly's: stop when the error's decrease (the fit's rise) is below tol, a rise of the
        # error included; the library's own test is |delta fit| < tol
        stop_tol = 0.0

        def callback(info, _user=user_cb):
            stop = bool(_user(info)) if _user is not None else False
            return stop or (info.iter > 1 and info.dfit < tol)
    res = cp_als(T, rank, n_iter_max=n_iter_max, tol=stop_tol, init=init, random_state=random_state, device=device,
                 threads=threads, fixsigns=False, nonneg=modes, l1=l1, n_iter_max_inner=inner, tol_inner=inner_tol,
                 nonneg_method=method, verbose=bool(verbose), callback=callback, checkpoint=ckpt[0],
                 checkpoint_every=ckpt[1], resume=ckpt[2])
    if cvg_criterion == "rec_error" and tol and res.stopped and (user_cb is None or res.n_iter < n_iter_max):
        res.converged = True  # tensorly's criterion ended it
    if not normalize_factors:
        # tensorly keeps the weights at 1 and the scale in the factors: each factor gets the
        # N-th root of a component's weight (the model is unchanged)
        root = res.weights ** (1.0 / N)
        res.factors = [f * root for f in res.factors]
        res.weights = np.ones_like(res.weights)
    if return_errors:
        return res, [1.0 - f for f in res.fit_history]
    return res


def non_negative_parafac_hals(tensor: Union[TensorLike, PathLike], rank: int, n_iter_max: int = 100, init: Any = "svd",
                              svd: str = "truncated_svd", tol: float = 10e-8,
                              random_state: Union[None, int, np.random.Generator, np.random.RandomState] = None,
                              sparsity_coefficients: Union[None, float, Sequence[Optional[float]]] = None,
                              fixed_modes: Optional[Sequence[int]] = None,
                              nn_modes: Union[str, None, Sequence[int]] = "all", exact: bool = False,
                              normalize_factors: bool = False, verbose: bool = False, return_errors: bool = False,
                              cvg_criterion: Literal["abs_rec_error", "rec_error"] = "abs_rec_error", *,
                              device: Device = "auto", threads: Optional[int] = None,
                              callback: Optional[Callable[[IterInfo], Optional[bool]]] = None,
                              checkpoint: Any = None, checkpoint_every: Any = None, resume: Any = None) -> Any:
    """Non-negative CP by HALS, with tensorly's ``non_negative_parafac_hals``
    arguments and results, on tenfold's sparse tensors (``cp_als(...,
    nonneg=..., nonneg_method='hals')``; ``tenfold cpd --nonneg
    --nonneg-method hals``).

    Per outer iteration and mode: the MTTKRP M and the Hadamard product V of the
    other Grams, then (a non-negative mode) up to 5 sweeps over the columns
    A(:,r) <- max(0, (M(:,r) - A V(:,r) + V(r,r) A(:,r) - l1) / V(r,r)), stopped
    early when a sweep changes A by less than 1e-8 times the first (tensorly's
    hals_nnls inside non_negative_parafac_hals; exact=True: 50000 sweeps, 1e-16),
    or (another mode) least squares. From the same start the fits are tensorly's
    (without sparsity_coefficients; to 1e-9 in the tests).

    tensor: a Tensor, anything ``Tensor`` takes (numpy arrays, scipy / pydata
      sparse arrays, COO triples) or a tensor file's path.
    init: 'svd' (default: tenfold's sparse leading singular vectors of the
      unfoldings, ``tenfold.nvecs``, for factors 2..N, absolute values on the
      non-negative modes; factor 1 starts at zero: it is solved first), 'random'
      (uniform [0, 1) from random_state: tenfold's generator, not numpy's), or a
      given start (a CPTensor, (weights, factors), a list of factors, a CPResult).
    svd: accepted for tensorly's names, not used.
    tol: stop when the relative error 1 - fit changes by less than tol
      (cvg_criterion 'abs_rec_error'), or decreases by less ('rec_error'); 0 or
      None: n_iter_max iterations.
    sparsity_coefficients: l1 per mode (None, a number, or one per mode): l1
      sum(A) added to 1/2 ||X - model||^2 (tensorly's objective); ignored with a
      warning on modes that are not non-negative, as tensorly does. tenfold
      keeps the other factors' columns normalised, so the penalised factor
      carries the weights (``cp_als``'s l1): with sparsity the iterates differ
      from tensorly's, whose penalty falls on unnormalised factors.
    nn_modes: 'all' (default), None or the modes (0-based) held non-negative.
    fixed_modes: not available (ArgumentError when given).
    normalize_factors: False (default): weights all 1, each factor holding the
      N-th root of a component's scale (the model is the same); True: unit
      columns and the scales in the weights, decreasing.
    return_errors: also return the relative errors 1 - fit, one per iteration.

    Returns a CPResult, which is (weights, factors) as tensorly's CPTensor is
    (``res.to_tensorly()`` makes one), with fit, n_iter, the inner sweeps
    (``inner_iterations``) and timings; with return_errors ``(res, errors)``.
    device: 'auto' or 'cpu' (HALS runs on the CPU); threads: CPU threads.
    checkpoint=STEM, checkpoint_every=, resume=STEM: checkpoints and resume,
    as ``cp_als``'s (with tol, a run ended by tensorly's criterion writes its
    last iteration as stopped, not converged: a resume goes on from it).
    """
    return _run(tensor, rank, "hals", nn_modes, sparsity_coefficients, n_iter_max, init, svd, tol, random_state,
                normalize_factors, verbose, return_errors, cvg_criterion, fixed_modes, 50000 if exact else None,
                1e-16 if exact else None, device, threads, callback, (checkpoint, checkpoint_every, resume))


def non_negative_parafac(tensor: Union[TensorLike, PathLike], rank: int, n_iter_max: int = 100, init: Any = "svd",
                         svd: str = "truncated_svd", tol: float = 10e-7,
                         random_state: Union[None, int, np.random.Generator, np.random.RandomState] = None,
                         verbose: int = 0, normalize_factors: bool = False, return_errors: bool = False,
                         mask: Any = None, cvg_criterion: Literal["abs_rec_error", "rec_error"] = "abs_rec_error",
                         fixed_modes: Optional[Sequence[int]] = None, *,
                         method: Literal["auto", "hals", "admm"] = "auto", device: Device = "auto",
                         threads: Optional[int] = None,
                         callback: Optional[Callable[[IterInfo], Optional[bool]]] = None,
                         checkpoint: Any = None, checkpoint_every: Any = None, resume: Any = None) -> Any:
    """Non-negative CP with tensorly's ``non_negative_parafac`` arguments and
    results, on tenfold's sparse tensors: every factor >= 0.

    tensorly runs multiplicative updates (Shashua & Hazan 2005), which converge
    more slowly (from the same start they end at or below tenfold's fit in the
    tests); tenfold runs the update ``method`` names (bench/RESULTS.md,
    "Non-negative CP: HALS against AO-ADMM"):
      * 'hals': HALS (``non_negative_parafac_hals``);
      * 'admm': AO-ADMM (``cp_als(nonneg=True, nonneg_method='admm')``, tensorly's
        ``constrained_parafac(non_negative=True)``);
      * 'auto' (default): the library's choice (``tenfold cpd --nonneg``): the
        result's ``algorithm`` says which ran and ``algorithm_choice`` why.
    mask: not available (ArgumentError unless None). The other arguments and the
    result are as in ``non_negative_parafac_hals``.
    """
    if mask is not None:
        raise ArgumentError("mask: not available in tenfold (a sparse tensor's zeros are values, not missing)")
    return _run(tensor, rank, method, "all", None, n_iter_max, init, svd, tol, random_state, normalize_factors,
                verbose, return_errors, cvg_criterion, fixed_modes, None, None, device, threads, callback,
                (checkpoint, checkpoint_every, resume))


__all__ = ["non_negative_parafac", "non_negative_parafac_hals", "CPResult"]
