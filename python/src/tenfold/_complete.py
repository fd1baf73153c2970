# SPDX-License-Identifier: BSD-3-Clause
"""Tensor completion: a CP model of the observed entries only, by ALS (tf_complete),
and the model's values at given coordinates (tf_complete_predict)."""
from __future__ import annotations

from typing import Any, Callable, Literal, Optional, Union

import numpy as np

from ._errors import ArgumentError, check
from ._helpers import _c_ktensor, _ktensor
from ._ops import PathLike, _backend, _Context, _init_ktensor, _seed, _tensor_arg, _threads
from ._runs import enter_run, leave_run, on_callback_error
from ._tenfold_cffi import ffi, lib
from ._tensor import Tensor, TensorLike


class CompleteIterInfo:
    """One completion iteration, as passed to the callback."""

    __slots__ = ("iter", "train_rmse", "val_rmse", "objective", "seconds", "t_solve", "t_rmse")

    def __init__(self, it):
        for k in self.__slots__:
            setattr(self, k, getattr(it, k))

    def __repr__(self):
        return (f"CompleteIterInfo(iter={self.iter}, train_rmse={self.train_rmse:.6g}, "
                f"val_rmse={self.val_rmse:.6g}, seconds={self.seconds:.3g})")


class CompletionResult:
    """What ``tenfold.complete`` returns: the model kept (weights all ones,
    factors) and how the run went. Iterates as (weights, factors), so it is a
    Kruskal tensor wherever tenfold takes one (``tenfold.predict``,
    ``tenfold.model_values``, ...).

    train_rmse, val_rmse, test_rmse: of the model kept (nan: no such entries);
    train_rmse_history, val_rmse_history, objective_history: per iteration
    (the objective: squared errors on the training entries + l2 * sum of the
    factors' squared norms); n_iter, best_iter (the iteration of the model
    kept, 0: the start), converged (stopped after `patience` iterations
    without improvement), stopped (the callback or Ctrl-C); timings ('build',
    'solve', 'rmse', 'test', 'total' seconds); plan, note.
    """

    __slots__ = ("weights", "factors", "train_rmse", "val_rmse", "test_rmse", "train_rmse_history",
                 "val_rmse_history", "objective_history", "n_iter", "best_iter", "converged", "stopped", "timings",
                 "plan", "note")

    def __init__(self, **kw):
        for k in self.__slots__:
            setattr(self, k, kw[k])

    def __iter__(self):
        return iter((self.weights, self.factors))

    @property
    def rank(self):
        return int(self.weights.shape[0])

    def __repr__(self):
        return (f"CompletionResult(rank={self.rank}, train_rmse={self.train_rmse:.6g}, val_rmse={self.val_rmse:.6g}, "
                f"test_rmse={self.test_rmse:.6g}, n_iter={self.n_iter}, best_iter={self.best_iter})")


class _Run:
    def __init__(self, callback, verbose, stop):
        self.callback, self.verbose, self.stop = callback, verbose, stop
        self.train, self.val, self.objective = [], [], []
        self.error = None




@ffi.def_extern(onerror=lambda et, ev, tb: on_callback_error(ev))
def _tf_py_complete_iter(it, user):
    st = ffi.from_handle(user)
    info = CompleteIterInfo(it)
    st.train.append(info.train_rmse)
    st.val.append(info.val_rmse)
    st.objective.append(info.objective)
    if st.verbose:
        print(f"  iter {info.iter:4d}  train rmse {info.train_rmse:.6f}  val rmse {info.val_rmse:.6f}  "
              f"{info.seconds:.3f} s", flush=True)
    if st.callback is not None and st.callback(info):
        st.stop[0] = 1


def _number(value, what):
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ArgumentError(f"{what}: expected a number, got {value!r}") from None
    if not np.isfinite(v) or v < 0:
        raise ArgumentError(f"{what}: expected a finite number >= 0, got {value!r}")
    return v


def _count(value, what, high):
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or not 1 <= value <= high:
        raise ArgumentError(f"{what}: expected an integer 1..{high}, got {value!r}")
    return int(value)


def _held_out(X, what):
    if X is None:
        return None
    return _tensor_arg(X, keep_zeros=True)


def complete(train: Union[TensorLike, PathLike], rank: int, test: Union[None, TensorLike, PathLike] = None,
             val: Union[None, TensorLike, PathLike] = None, method: Literal["als", "adam"] = "als",
             l2: float = 100.0, n_iter_max: int = 1000, tol: float = 1e-4, patience: int = 20, init: Any = "random",
             random_state: Union[None, int, np.random.Generator, np.random.RandomState] = None,
             device: Literal["auto", "cpu", "gpu"] = "auto", threads: Optional[int] = None, verbose: bool = False,
             callback: Optional[Callable[[CompleteIterInfo], Optional[bool]]] = None, rate: float = 1e-3,
             epoch_iters: int = 1000, samples: Optional[int] = None, gpus: int = 1) -> CompletionResult:
    """Tensor completion: a rank-`rank` CP model fitted to the entries of
    `train` only (the entries not listed are unknown, not zero) by
    alternating least squares with an L2 penalty, as ``tenfold complete`` and
    SPLATT's ``complete -a als``: per iteration each row a of each factor in
    turn solves ``(sum over its observed entries of h h^T + l2 I) a = sum x
    h`` (h the product of the other factors' rows at the entry).

    train, val, test: Tensors, anything ``Tensor`` takes, or tensor file
    paths; val and test are held-out entries of the same tensor (same order,
    indices inside train's shape). Their entries of value 0 are kept
    (observed zeros are data: files are read with keep_zeros=True, tuples and
    arrays of coordinates keep them too; a Tensor is taken as it is). The model kept is the one of the best
    validation RMSE (training RMSE without val); the run stops after
    `patience` iterations without an improvement of more than tol, or at
    n_iter_max. l2: SPLATT's --reg (its ALS default, 100). init: 'random'
    (factors uniform in [-1, 1) from random_state) or a start (factors, a
    (weights, factors) pair, a CPResult / CompletionResult, a tensorly
    CPTensor or a pyttb ktensor). method='adam': GCP-Adam with the Gaussian
    loss on the observed entries only (the same objective: squared errors
    on train + l2 * sum of the factors' squared norms), each step's gradient
    from `samples` entries of train drawn uniformly (default 3 % of them, at
    least 1000; >= their count: every entry), step size `rate`, an iteration
    being an epoch of `epoch_iters` steps; an epoch that raises the
    validation RMSE is undone and the rate divided by 10 (a second one ends
    the run). callback(info) runs after every iteration with a
    CompleteIterInfo; returning True stops the run. device: 'gpu' runs on
    one GPU (ALS: every row's system summed and solved there, rank up to
    128; Adam: the CPU's samples drawn there, the gradient summed there: the
    CPU's numbers to rounding), 'auto' (default) there when the machine has
    a GPU, else the CPU; the result's `plan` says which ran. gpus=N: GPUs
    0..N-1 of this process; ALS cuts every mode's rows over them by training
    entries, each solving its rows and sending them to the others -- one
    GPU's factors, bit for bit; Adam has every GPU draw every sample and
    evaluate its part, the gradients summed (one GPU's run to rounding).

    >>> res = tenfold.complete(train, 10, val=val, test=test, l2=1.0)
    >>> res.test_rmse, tenfold.predict(res, coords)
    """
    if method not in ("als", "adam"):
        raise ArgumentError(f"method: expected 'als' or 'adam', got {method!r}")
    T = _tensor_arg(train, keep_zeros=True)
    V, S = _held_out(val, "val"), _held_out(test, "test")
    o = ffi.new("tf_complete_opts *")
    lib.tf_complete_opts_default(o)
    o.rank = _count(rank, "rank", lib.TF_COMPLETE_MAX_RANK)
    o.max_iters = _count(n_iter_max, "n_iter_max", 1000000)
    o.patience = _count(patience, "patience", 2**32 - 1)
    o.l2 = _number(l2, "l2")
    o.tol = _number(tol, "tol")
    o.method = lib.TF_COMPLETE_ADAM if method == "adam" else lib.TF_COMPLETE_ALS
    o.rate = _number(rate, "rate")
    o.epoch_iters = _count(epoch_iters, "epoch_iters", 2**32 - 1)
    if samples is not None:
        o.samples = _count(samples, "samples", 2**63)
    o.threads = _threads(threads)
    o.backend = _backend(device)
    o.seed = _seed(random_state)
    keep = []
    if isinstance(init, str):
        if init != "random":
            raise ArgumentError(f"init: expected 'random' or a start (factors, (weights, factors), a ktensor), "
                                f"got {init!r}")
    else:
        k = _init_ktensor(init, T, o.rank, keep)
        keep.append(k)
        o.init = k
    if callback is not None and not callable(callback):
        raise ArgumentError("callback: expected a callable taking a CompleteIterInfo")
    stop = ffi.new("int *")
    state = _Run(callback, bool(verbose), stop)
    handle = ffi.new_handle(state)
    o.callback, o.user, o.stop = lib._tf_py_complete_iter, handle, stop
    Tc = T._c()
    Vc = V._c() if V is not None else ffi.NULL
    Sc = S._c() if S is not None else ffi.NULL
    out = ffi.new("tf_ktensor *")
    rep = ffi.new("tf_complete_report *")
    prev = enter_run(state)
    try:
        if gpus != 1:  # several GPUs: a context of GPUs 0..gpus-1
            with _Context(device, gpus, None, threads) as ctx:
                o.context = ctx
                status = lib.tf_complete(Tc, Vc, Sc, o, out, rep)
        else:
            status = lib.tf_complete(Tc, Vc, Sc, o, out, rep)
        if state.error is not None:
            raise state.error
        check(status)
        R = int(out.rank)
        factors = []
        for m in range(T.ndim):
            f = out.factors[m]
            a = np.frombuffer(ffi.buffer(f.data, 8 * f.rows * f.cols), dtype=np.float64)
            factors.append(a.reshape(int(f.rows), int(f.cols)).copy())
    finally:
        leave_run(prev)
        lib.tf_ktensor_free(out)
        lib.tf_complete_report_free(rep)
    timings = {"build": rep.t_build, "solve": rep.t_solve, "rmse": rep.t_rmse, "test": rep.t_test,
               "total": rep.t_total}
    return CompletionResult(weights=np.ones(R), factors=factors, train_rmse=rep.train_rmse, val_rmse=rep.val_rmse,
                            test_rmse=rep.test_rmse, train_rmse_history=state.train, val_rmse_history=state.val,
                            objective_history=state.objective, n_iter=int(rep.iters), best_iter=int(rep.best_iter),
                            converged=bool(rep.converged), stopped=bool(rep.stopped), timings=timings,
                            plan=ffi.string(rep.plan).decode(), note=ffi.string(rep.note).decode())


def predict(model: Any, coords: Any, threads: Optional[int] = None) -> np.ndarray:
    """The Kruskal tensor `model` (a CompletionResult, CPResult, (weights,
    factors) pair, tensorly CPTensor or pyttb ktensor) at a list of
    coordinates: an integer array of shape (n, N) (0-based) or a Tensor (its
    coordinates; its values are not read). Returns n float64 values, as
    ``tenfold predict``.

    >>> tenfold.predict(res, [[0, 1, 2], [3, 4, 5]])
    """
    w, fs = _ktensor(model, "model")
    N = len(fs)
    if isinstance(coords, Tensor):
        if coords.ndim != N:
            raise ArgumentError(f"coords: {coords.ndim} modes, the model {N}")
        ind = [np.ascontiguousarray(coords._ind[m], dtype=np.uint32) for m in range(N)]
        n = coords.nnz
    else:
        c = np.asarray(coords)
        if c.ndim == 1 and c.size == N:
            c = c.reshape(1, N)
        if c.ndim != 2 or c.shape[1] != N or (c.size and c.dtype.kind not in "iu"):
            raise ArgumentError(f"coords: expected an integer array of shape (n, {N}), got shape {c.shape} "
                                f"dtype {c.dtype}")
        if c.size and (c.min() < 0 or np.any(c.max(axis=0) >= np.array([f.shape[0] for f in fs]))):
            bad = int(np.argmax(np.any((c < 0) | (c >= np.array([f.shape[0] for f in fs])), axis=1)))
            raise ArgumentError(f"coords: row {bad} {tuple(int(x) for x in c[bad])} is outside the model's shape "
                                f"{tuple(int(f.shape[0]) for f in fs)}")
        ind = [np.ascontiguousarray(c[:, m], dtype=np.uint32) for m in range(N)]
        n = c.shape[0]
    out = np.empty(n)
    if n == 0:
        return out
    t = ffi.new("tf_tensor *")
    t.order, t.nnz = N, n
    for m in range(N):
        t.dims[m] = fs[m].shape[0]
        t.ind[m] = ffi.cast("uint32_t *", ffi.from_buffer(ind[m]))
    t.vals = ffi.NULL
    check(lib.tf_complete_predict(t, _c_ktensor(w, fs), _threads(threads), ffi.cast("double *", ffi.from_buffer(out))))
    return out
