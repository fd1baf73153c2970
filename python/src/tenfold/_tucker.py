# SPDX-License-Identifier: BSD-3-Clause
"""Sparse Tucker (HOOI) and TTMc over the C library (tf_tucker, tf_ttmc)."""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence, Union

import numpy as np

from ._checkpoint import _checkpoint
from ._errors import ArgumentError, check
from ._ops import (PathLike, _backend, _c_matrix, _matrix, _mode, _seed, _size, _tensor_arg, _threads)
from ._runs import enter_run, leave_run, on_callback_error
from ._tenfold_cffi import ffi, lib
from ._tensor import TensorLike


class TuckerResult:
    """What ``tenfold.tucker`` returns: the Tucker tensor (core, factors) and how the run went.

    Iterates as (core, factors), like tensorly's TuckerTensor.

    Attributes
    ----------
    core : numpy.ndarray
        The dense core, shape ``rank`` (core[r_0, r_1, ...]).
    factors : list of numpy.ndarray
        One (shape[n], rank[n]) float64 array per mode, orthonormal columns,
        each column's largest-magnitude entry positive.
    fit : float
        1 - sqrt(| ||X||^2 - ||core||^2 |) / ||X|| after the last iteration
        (pyttb's tucker_als formula).
    n_iter, converged, stopped : the run's end (converged: |delta fit| < tol).
    fit_history : list of float
        The fit after every iteration.
    timings : dict
        Seconds: 'init', 'build' (the compressed-fibre trees), 'ttmc' (a list,
        one per mode), 'vectors' (leading singular vectors), 'core', 'total'.
    note : str
        Why an automatic device choice ran on the CPU, else "".
    plan : str
        Where it ran: "cpu csf (3 trees)", "GPU 0, fp64, ...".
    """

    __slots__ = ("core", "factors", "fit", "n_iter", "converged", "stopped", "fit_history", "timings", "note", "plan")

    def __init__(self, core: np.ndarray, factors: Sequence[np.ndarray], fit: float = float("nan"), n_iter: int = 0,
                 converged: bool = False, stopped: bool = False, fit_history: Optional[Sequence[float]] = None,
                 timings: Optional[dict] = None, note: str = "", plan: str = ""):
        self.core = core
        self.factors = list(factors)
        self.fit = float(fit)
        self.n_iter = int(n_iter)
        self.converged = bool(converged)
        self.stopped = bool(stopped)
        self.fit_history = list(fit_history) if fit_history is not None else []
        self.timings = dict(timings) if timings is not None else {}
        self.note = note
        self.plan = plan

    @property
    def rank(self) -> tuple:
        return tuple(int(r) for r in self.core.shape)

    @property
    def shape(self) -> tuple:
        return tuple(int(f.shape[0]) for f in self.factors)

    def __iter__(self):
        return iter((self.core, self.factors))

    def __len__(self):
        return 2

    def __getitem__(self, i):
        return (self.core, self.factors)[i]

    def __repr__(self):
        return (f"TuckerResult(rank={self.rank}, fit={self.fit:.6g}, n_iter={self.n_iter}, "
                f"converged={self.converged})")

    def to_tensor(self) -> np.ndarray:
        """The dense model core x_0 U_0 x_1 U_1 ... (for small shapes only)."""
        out = self.core
        for n, U in enumerate(self.factors):
            out = np.moveaxis(np.tensordot(U, out, axes=(1, n)), 0, n)
        return out

    def to_tensorly(self) -> Any:
        """A ``tensorly.tucker_tensor.TuckerTensor`` of this result (the arrays themselves)."""
        from tensorly.tucker_tensor import TuckerTensor

        return TuckerTensor((self.core, list(self.factors)))

    def to_pyttb(self) -> Any:
        """A ``pyttb.ttensor`` (needs pyttb)."""
        import pyttb

        return pyttb.ttensor(pyttb.tensor(np.asfortranarray(self.core), self.core.shape),
                             [np.asfortranarray(f) for f in self.factors])


class TuckerIter:
    """One HOOI iteration, as passed to the callback."""

    __slots__ = ("iter", "fit", "dfit", "seconds", "t_ttmc", "t_svd", "t_core")

    def __init__(self, it):
        for k in self.__slots__:
            setattr(self, k, getattr(it, k))

    def __repr__(self):
        return f"TuckerIter(iter={self.iter}, fit={self.fit:.6g}, dfit={self.dfit:.3g}, seconds={self.seconds:.3g})"


class _State:
    def __init__(self, callback, verbose, stop):
        self.callback, self.verbose, self.stop = callback, verbose, stop
        self.history = []
        self.error = None




@ffi.def_extern(onerror=lambda et, ev, tb: on_callback_error(ev))
def _tf_py_tucker_iter(it, user):
    st = ffi.from_handle(user)
    info = TuckerIter(it)
    st.history.append(info.fit)
    if st.verbose:
        print(f"  iter {info.iter:3d}  fit {info.fit:.6g}  delta {info.dfit:+.3e}  {info.seconds:.3f} s", flush=True)
    if st.callback is not None and st.callback(info):
        st.stop[0] = 1


def _ranks(rank, N, shape):
    vals = list(rank) if isinstance(rank, (list, tuple, np.ndarray)) else [rank] * N
    if len(vals) != N:
        raise ArgumentError(f"rank: {len(vals)} ranks for a tensor of {N} modes (expected {N}, or one for every mode)")
    out = []
    for n, r in enumerate(vals):
        if not isinstance(r, (int, np.integer)) or isinstance(r, bool) or not 1 <= r <= shape[n]:
            raise ArgumentError(f"rank: the rank of mode {n} is {r!r}, expected an integer 1..{shape[n]} "
                                "(the mode's length)")
        out.append(int(r))
    return out


def _init_factors(init, T, ranks, first):
    """The factor arrays of a given start: a list of factors, (core, factors), a
    TuckerResult, a tensorly TuckerTensor or a pyttb ttensor."""
    factors = init
    if hasattr(init, "factor_matrices"):  # pyttb.ttensor
        factors = init.factor_matrices
    elif hasattr(init, "factors") and not isinstance(init, (list, tuple)):  # TuckerResult, TuckerTensor
        factors = init.factors
    elif isinstance(init, tuple) and len(init) == 2 and not isinstance(init[1], np.ndarray):
        factors = init[1]
    factors = list(factors)
    if len(factors) != T.ndim:
        raise ArgumentError(f"init: {len(factors)} factors for a tensor of {T.ndim} modes")
    mats = []
    for m, f in enumerate(factors):
        if f is None and m == first:  # the first updated mode's is not needed (pyttb's Uinit[dimorder[0]])
            mats.append(None)
            continue
        a = _matrix(f, f"init factor {m}", rows=T.shape[m])
        if a.shape[1] != ranks[m]:
            raise ArgumentError(f"init factor {m}: {a.shape[1]} columns, expected the rank {ranks[m]}")
        mats.append(a)
    return mats


def tucker(X: Union[TensorLike, PathLike], rank: Union[int, Sequence[int]], n_iter_max: int = 50, init: Any = "random",
           tol: float = 1e-4, random_state: Union[None, int, np.random.Generator, np.random.RandomState] = None,
           verbose: bool = False, callback: Optional[Callable[[TuckerIter], Optional[bool]]] = None,
           threads: Optional[int] = None, device: str = "auto", memory_limit: Union[None, int, str] = None,
           dimorder: Optional[Sequence[int]] = None, checkpoint: Any = None, checkpoint_every: Any = None,
           resume: Any = None) -> TuckerResult:
    """Sparse Tucker decomposition by HOOI (pyttb's / the Tensor Toolbox's
    tucker_als, tensorly's tucker names), never forming the dense tensor.

    rank: the core's shape, one per mode (or one int for every mode);
    1 <= rank[n] <= shape[n] and at most the product of the other ranks.

    init:
      * 'random' (default): factors uniform in [0, 1) from random_state (None:
        the CLI's default seed, as ``tenfold tucker``);
      * 'svd' / 'hosvd' / 'nvecs': the truncated HOSVD (the leading left
        singular vectors of each unfolding, computed sparsely);
      * a given start: a list of factors (the first may be None: HOOI computes
        it first), a (core, factors) pair, a TuckerResult, a tensorly
        TuckerTensor or a pyttb ttensor.

    Per iteration, per mode n: Y = X times every other factor transposed
    (TTMc), U_n = its rank[n] leading left singular vectors; then the core and
    fit = 1 - sqrt(| ||X||^2 - ||core||^2 |) / ||X||. Stops when |delta fit| <
    tol or after n_iter_max iterations. callback(info) runs after every
    iteration with a TuckerIter; returning True stops the run (Ctrl-C too,
    then KeyboardInterrupt is raised). memory_limit: host bytes for the dense
    arrays (int or '8G'; default half the physical memory). device: 'auto'
    (one GPU where there is one, else the CPU; what the GPU cannot hold or
    lacks -- the subspace method -- runs on the CPU, res.note says why),
    'cpu' or 'gpu' (UnavailableError without one); res.plan says where it ran. checkpoint=STEM,
    checkpoint_every=, resume=STEM: checkpoints and resume, as cp_als's (the
    iterations before the checkpoint are in the result's history too).

    >>> core, factors = tenfold.tucker(X, rank=[8, 8, 4])
    >>> res = tenfold.tucker("data/uber-apr14.tns.xz", [5, 5, 10, 10], init="svd")
    >>> res.fit, res.core.shape, res.to_pyttb()
    """
    T = _tensor_arg(X)
    N = T.ndim
    ranks = _ranks(rank, N, T.shape)
    if not isinstance(n_iter_max, (int, np.integer)) or isinstance(n_iter_max, bool) or not 1 <= n_iter_max < 2**32:
        raise ArgumentError(f"n_iter_max: expected an integer >= 1, got {n_iter_max!r}")
    o = ffi.new("tf_tucker_opts *")
    lib.tf_tucker_opts_default(o)
    for n, r in enumerate(ranks):
        o.ranks[n] = r
    o.max_iters = int(n_iter_max)
    try:
        o.tol = float(tol)
    except (TypeError, ValueError):
        raise ArgumentError(f"tol: expected a number, got {tol!r}") from None
    o.seed = _seed(random_state)
    o.threads = _threads(threads)
    o.backend = _backend(device)
    o.memory_limit = _size(memory_limit)
    keep = []
    first = 0
    if dimorder is not None:
        d = [_mode(m, N) for m in dimorder]
        if sorted(d) != list(range(N)):
            raise ArgumentError(f"dimorder: expected a permutation of 0..{N - 1}, got {list(dimorder)!r}")
        order = ffi.new("uint32_t[]", d)
        keep.append(order)
        o.dimorder = order
        first = d[0]
    if isinstance(init, str):
        o.init = {"random": lib.TF_TUCKER_INIT_RANDOM, "svd": lib.TF_TUCKER_INIT_HOSVD,
                  "hosvd": lib.TF_TUCKER_INIT_HOSVD, "nvecs": lib.TF_TUCKER_INIT_HOSVD}.get(init, -1)
        if o.init == -1:
            raise ArgumentError(f"init: {init!r} is not one of 'random', 'svd', 'hosvd', 'nvecs' or a start")
    else:
        mats = _init_factors(init, T, ranks, first)
        arr = ffi.new("tf_matrix[]", N)
        for m, a in enumerate(mats):
            if a is not None:
                _c_matrix(a, arr[m])
        keep += [mats, arr]
        o.init = lib.TF_TUCKER_INIT_GIVEN
        o.init_factors = arr
    if callback is not None and not callable(callback):
        raise ArgumentError("callback: expected a callable taking a TuckerIter")
    stop = ffi.new("int *")
    state = _State(callback, verbose, stop)
    handle = ffi.new_handle(state)
    ck = _checkpoint(checkpoint, checkpoint_every, resume, keep)
    if ck is not None:
        o.checkpoint = ck
    o.callback, o.user, o.stop = lib._tf_py_tucker_iter, handle, stop
    out = ffi.new("tf_ttensor *")
    rep = ffi.new("tf_tucker_report *")
    prev = enter_run(state)
    try:
        status = lib.tf_tucker(T._c(), o, out, rep)
        if state.error is not None:
            raise state.error
        check(status)
        shape = tuple(int(out.ranks[m]) for m in range(N))
        size = int(np.prod(shape))
        core = np.frombuffer(ffi.buffer(out.core, 8 * size), dtype=np.float64).reshape(shape, order="F")
        core = np.ascontiguousarray(core)
        factors = []
        for m in range(N):
            f = out.factors[m]
            a = np.frombuffer(ffi.buffer(f.data, 8 * f.rows * f.cols), dtype=np.float64)
            factors.append(a.reshape(int(f.rows), int(f.cols)).copy())
        timings = {"init": rep.t_init, "build": rep.t_build, "ttmc": [rep.t_ttmc[m] for m in range(N)],
                   "vectors": rep.t_svd, "core": rep.t_core, "total": rep.t_total}
        res = TuckerResult(core, factors, fit=rep.fit, n_iter=rep.iters, converged=rep.converged,
                           stopped=rep.stopped, fit_history=state.history, timings=timings,
                           note=ffi.string(rep.note).decode(), plan=ffi.string(rep.plan).decode())
    finally:
        leave_run(prev)
        lib.tf_ttensor_free(out)
        lib.tf_tucker_report_free(rep)
    if verbose:
        print(f"tucker: fit {res.fit:.6g} after {res.n_iter} iterations, {res.timings['total']:.3f} s")
    return res


def ttmc(X: Union[TensorLike, PathLike], factors: Sequence[Any], mode: int, threads: Optional[int] = None) -> np.ndarray:
    """TTMc: the mode-`mode` unfolding of X times every other factor transposed,
    Y = X_(mode) (U_{N-1} kron ... kron U_0, U_mode left out), a (shape[mode], C)
    float64 array, C the product of the other factors' columns, the lowest
    mode's column index fastest -- pyttb's ``X.ttm(U, exclude_dims=mode,
    transpose=True).to_tenmat(rdims=[mode])``. factors[mode] is not read (may be
    None). Never forms the dense tensor.
    """
    T = _tensor_arg(X)
    N = T.ndim
    mode = _mode(mode, N)
    factors = list(factors)
    if len(factors) != N:
        raise ArgumentError(f"factors: {len(factors)} for a tensor of {N} modes")
    mats = [None if m == mode else _matrix(f, f"factor {m}", rows=T.shape[m]) for m, f in enumerate(factors)]
    arr = ffi.new("tf_matrix[]", N)
    for m, a in enumerate(mats):
        if a is not None:
            _c_matrix(a, arr[m])
    o = ffi.new("tf_ttmc_opts *")
    lib.tf_ttmc_opts_default(o)
    o.threads = _threads(threads)
    out = ffi.new("tf_matrix *")
    check(lib.tf_ttmc(T._c(), mode, arr, o, out))
    try:
        a = np.frombuffer(ffi.buffer(out.data, 8 * out.rows * out.cols), dtype=np.float64)
        return a.reshape(int(out.rows), int(out.cols)).copy()
    finally:
        lib.tf_matrix_free(out)
