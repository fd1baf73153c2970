# SPDX-License-Identifier: BSD-3-Clause
"""CP-APR: non-negative CP of count data under a Poisson model (tf_cp_apr)."""
from __future__ import annotations

from typing import Any, Callable, Literal, Optional, Union

import numpy as np

from ._checkpoint import _checkpoint
from ._errors import ArgumentError, check
from ._helpers import _from_c_ktensor
from ._ops import CPResult, PathLike, _backend, _init_ktensor, _seed, _tensor_arg, _threads
from ._runs import enter_run, leave_run, on_callback_error
from ._tenfold_cffi import ffi, lib
from ._tensor import TensorLike


class APRIterInfo:
    """One CP-APR outer iteration, as passed to the callback."""

    __slots__ = ("iter", "loglik", "kkt", "inner_iters", "scooched", "seconds", "t_phi", "t_dense", "t_loglik")

    def __init__(self, it):
        for k in self.__slots__:
            setattr(self, k, getattr(it, k))

    def __repr__(self):
        return (f"APRIterInfo(iter={self.iter}, loglik={self.loglik:.10g}, kkt={self.kkt:.3g}, "
                f"inner_iters={self.inner_iters}, seconds={self.seconds:.3g})")


class _AprRun:
    def __init__(self, callback, printitn, stop):
        self.callback, self.printitn, self.stop = callback, printitn, stop
        self.loglik, self.kkt = [], []
        self.error = None




@ffi.def_extern(onerror=lambda et, ev, tb: on_callback_error(ev))
def _tf_py_cp_apr_iter(it, user):
    st = ffi.from_handle(user)
    info = APRIterInfo(it)
    st.loglik.append(info.loglik)
    st.kkt.append(info.kkt)
    if st.printitn and info.iter % st.printitn == 0:
        print(f"  iter {info.iter:4d}  loglik {info.loglik:.10g}  kkt {info.kkt:.4e}  inner {info.inner_iters}  "
              f"{info.seconds:.3f} s", flush=True)
    if st.callback is not None and st.callback(info):
        st.stop[0] = 1


def _number(value, what, low=0.0, strict=False):
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ArgumentError(f"{what}: expected a number, got {value!r}") from None
    if not np.isfinite(v) or v < low or (strict and v == low):
        raise ArgumentError(f"{what}: expected a finite number {'>' if strict else '>='} {low:g}, got {value!r}")
    return v


def _count(value, what, high):
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or not 1 <= value <= high:
        raise ArgumentError(f"{what}: expected an integer 1..{high}, got {value!r}")
    return int(value)


def cp_apr(X: Union[TensorLike, PathLike], rank: int, algorithm: Literal["mu", "pdnr"] = "mu",
           stoptol: float = 1e-4, maxiters: int = 1000, init: Any = "random", maxinneriters: int = 10,
           epsDivZero: float = 1e-10, printitn: int = 0, kappa: float = 0.01, kappatol: float = 1e-10,
           epsActive: float = 1e-8, mu0: float = 1e-5, inexact: bool = True,
           random_state: Union[None, int, np.random.Generator, np.random.RandomState] = None,
           device: Literal["auto", "cpu", "gpu"] = "auto", threads: Optional[int] = None,
           callback: Optional[Callable[[APRIterInfo], Optional[bool]]] = None, checkpoint: Any = None,
           checkpoint_every: Any = None, resume: Any = None) -> CPResult:
    """Non-negative CP of count data by alternating Poisson regression (CP-APR,
    Chi & Kolda 2012) with multiplicative updates, as ``pyttb.cp_apr(X, rank,
    algorithm='mu')``: the same parameters (names and defaults), the same
    iteration, the same log-likelihood (``tt_loglikelihood``); or, with
    algorithm='pdnr', by row-wise projected damped Newton steps (Hansen,
    Plantenga & Kolda 2015) as ``pyttb.cp_apr(..., algorithm='pdnr')``: every
    row of a mode its own subproblem, maxinneriters Newton steps per row at
    most, epsActive the active-set tolerance, mu0 the starting damping,
    inexact pyttb's inexact Newton schedule; no kappa; far fewer outer
    iterations than 'mu'. 'pdnr' runs on the CPU only yet (device='gpu'
    raises; 'auto' runs it on the CPU) and takes no checkpoints.

    X: a Tensor, anything ``Tensor`` takes, or the path of a tensor file; its
    values must be counts (integers >= 0: ``ArgumentError`` names the first
    other non-zero). init: 'random' (factors uniform in [0, 1) from
    random_state; not numpy's stream, so not pyttb's start) or a given start
    with entries >= 0 (a list of factors, a (weights, factors) pair, a
    CPResult, a tensorly CPTensor or a pyttb ktensor). printitn: print every
    printitn-th outer iteration (0: none, pyttb's default is 1). One GPU
    runs it in double precision (device='gpu'; 'auto' where one is present;
    copies of the non-zeros that do not fit it stream from host memory, and
    the CPU runs what does not fit even so), else the CPU.
    callback(info) runs after every outer iteration with an APRIterInfo;
    returning True stops the run there (Ctrl-C does too, then
    KeyboardInterrupt is raised). epsActive, mu0 and inexact belong to pdnr
    and are not used by 'mu'; kappa and kappatol are not used by 'pdnr'.
    checkpoint=STEM saves the run's state as it goes (a factor set STEM.* plus
    STEM.state, switched in one step; 'tenfold cpd --checkpoint'):
    checkpoint_every=N iterations, a time ('5m', '30s', '1h') or both as a
    pair (default: every iteration), always the last; resume=STEM goes on
    from such a checkpoint up to maxiters iterations in all and ends with the bits
    of a run that never stopped (the histories hold the resumed iterations).

    Returns a CPResult: weights (decreasing) and factors with columns of unit
    1-norm (pyttb's normtype=1), loglik (pyttb's ``output['obj']``),
    loglik_history and kkt_history (one per outer iteration; pyttb's
    ``output['kktViolations']`` is the latter), n_iter, converged,
    inner_iterations (pyttb's ``output['nTotalIters']``), timings ('build',
    'phi', 'dense', 'loglik', 'total' seconds), and fit, the least-squares
    fit 1 - ||X - M|| / ||X|| that pyttb prints.

    >>> res = tenfold.cp_apr(X, 8)
    >>> res.loglik, res.kkt_history[-1], res.weights
    """
    T = _tensor_arg(X)
    algorithms = {"mu": lib.TF_CP_APR_MU, "pdnr": lib.TF_CP_APR_PDNR}
    if algorithm not in algorithms:
        raise ArgumentError(f"algorithm: expected 'mu' or 'pdnr' ('pqnr' is not available yet), got {algorithm!r}")
    if not isinstance(inexact, (bool, np.bool_)):
        raise ArgumentError(f"inexact: expected True or False, got {inexact!r}")
    o = ffi.new("tf_cp_apr_opts *")
    lib.tf_cp_apr_opts_default(o)
    o.algorithm = algorithms[algorithm]
    o.mu0 = _number(mu0, "mu0")
    o.inexact = int(bool(inexact))
    o.rank = _count(rank, "rank", lib.TF_MAX_RANK)
    o.max_iters = _count(maxiters, "maxiters", 2**32 - 1)
    o.max_inner = _count(maxinneriters, "maxinneriters", 100000)
    o.stoptol = _number(stoptol, "stoptol")
    o.epsdivzero = _number(epsDivZero, "epsDivZero", strict=True)
    o.kappa = _number(kappa, "kappa")
    o.kappatol = _number(kappatol, "kappatol")
    o.epsactive = _number(epsActive, "epsActive")
    if not isinstance(printitn, (int, np.integer)) or isinstance(printitn, bool) or printitn < 0:
        raise ArgumentError(f"printitn: expected an integer >= 0, got {printitn!r}")
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
        keep.append(k)  # owns the struct o.init points to
        o.init = k
    ck = _checkpoint(checkpoint, checkpoint_every, resume, keep)
    if ck is not None:
        o.checkpoint = ck
    if callback is not None and not callable(callback):
        raise ArgumentError("callback: expected a callable taking an APRIterInfo")
    stop = ffi.new("int *")
    state = _AprRun(callback, int(printitn), stop)
    handle = ffi.new_handle(state)
    o.callback, o.user, o.stop = lib._tf_py_cp_apr_iter, handle, stop
    Xc = T._c()
    out = ffi.new("tf_ktensor *")
    rep = ffi.new("tf_cp_apr_report *")
    fit = ffi.new("double *")
    prev = enter_run(state)
    try:
        status = lib.tf_cp_apr(Xc, o, out, rep)
        if state.error is not None:
            raise state.error
        check(status)
        check(lib.tf_ktensor_fit(Xc, out, fit))
        weights, factors = _from_c_ktensor(out)
    finally:
        leave_run(prev)
        lib.tf_ktensor_free(out)  # zeroed by tf_cp_apr on failure: safe
    if printitn:
        print(f"cp_apr: log-likelihood {rep.loglik:.10g}, KKT violation {rep.kkt:.4g} after {rep.iters} iterations "
              f"({rep.inner_iters} inner), {rep.t_total:.3f} s ({ffi.string(rep.plan).decode()})")
    timings = {"build": rep.t_build, "phi": rep.t_phi, "dense": rep.t_dense, "loglik": rep.t_loglik,
               "total": rep.t_total}
    return CPResult(weights, factors, fit=fit[0], n_iter=rep.iters, converged=bool(rep.converged),
                    stopped=bool(rep.stopped), timings=timings, plan=ffi.string(rep.plan).decode(),
                    note=ffi.string(rep.note).decode(), inner_iterations=rep.inner_iters, algorithm="CP-APR", loglik=rep.loglik,
                    loglik_history=state.loglik, kkt_history=state.kkt)
