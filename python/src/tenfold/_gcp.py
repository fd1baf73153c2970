# SPDX-License-Identifier: BSD-3-Clause
"""Generalized CP (GCP): CP under a loss other than least squares (tf_gcp)."""
from __future__ import annotations

from typing import Any, Callable, Literal, Optional, Tuple, Union

import numpy as np

from ._apr import _count, _number
from ._checkpoint import _checkpoint
from ._errors import ArgumentError, check
from ._helpers import _from_c_ktensor
from ._ops import CPResult, PathLike, _backend, _init_ktensor, _seed, _tensor_arg, _threads
from ._runs import enter_run, leave_run, on_callback_error
from ._tenfold_cffi import ffi, lib
from ._tensor import TensorLike

LOSSES = ("gaussian", "poisson", "poisson-log", "bernoulli-odds", "bernoulli-logit", "gamma", "rayleigh")


class GCPEpochInfo:
    """One GCP epoch (dense mode: one L-BFGS iteration), as passed to the callback."""

    __slots__ = ("epoch", "loss_estimate", "rate", "failed", "seconds", "t_sample", "t_gradient", "t_step",
                 "t_estimate")

    def __init__(self, e):
        for k in self.__slots__:
            setattr(self, k, getattr(e, k))

    def __repr__(self):
        return (f"GCPEpochInfo(epoch={self.epoch}, loss_estimate={self.loss_estimate:.10g}, rate={self.rate:.3g}, "
                f"failed={bool(self.failed)}, seconds={self.seconds:.3g})")


class _GcpRun:
    def __init__(self, callback, printitn, stop):
        self.callback, self.printitn, self.stop = callback, printitn, stop
        self.loss = []
        self.error = None




@ffi.def_extern(onerror=lambda et, ev, tb: on_callback_error(ev))
def _tf_py_gcp_epoch(e, user):
    st = ffi.from_handle(user)
    info = GCPEpochInfo(e)
    st.loss.append(info.loss_estimate)
    if st.printitn and info.epoch % st.printitn == 0:
        print(f"  epoch {info.epoch:4d}  loss {info.loss_estimate:.10g}  rate {info.rate:.3g}"
              f"{'  failed' if info.failed else ''}  {info.seconds:.3f} s", flush=True)
    if st.callback is not None and st.callback(info):
        st.stop[0] = 1


def _pair(value, what):
    if value is None:
        return 0, 0
    if (not isinstance(value, (tuple, list)) or len(value) != 2
            or not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= 0 for v in value)):
        raise ArgumentError(f"{what}: expected (non-zeros, zeros), two integers >= 0, got {value!r}")
    return int(value[0]), int(value[1])


def gcp(X: Union[TensorLike, PathLike], rank: int, loss: str = "gaussian", dense: bool = False,
        samples: Optional[Tuple[int, int]] = None, fsamples: Optional[Tuple[int, int]] = None,
        epoch_iters: int = 1000, max_epochs: Optional[int] = None, rate: float = 1e-3, decay: float = 0.1,
        max_fails: int = 1, init: Any = "random", ftol: float = 1e-12, pgtol: float = 1e-8,
        random_state: Union[None, int, np.random.Generator, np.random.RandomState] = None,
        device: Literal["auto", "cpu", "gpu"] = "auto", threads: Optional[int] = None, printitn: int = 0,
        callback: Optional[Callable[[GCPEpochInfo], Optional[bool]]] = None,
        sampling: Literal["stratified", "semi-stratified"] = "stratified", checkpoint: Any = None,
        checkpoint_every: Any = None, resume: Any = None) -> CPResult:
    """Generalized CP (Hong, Kolda & Duersch 2020) of X under ``loss``:
    'gaussian', 'poisson' (m - x log m, factors >= 0), 'poisson-log',
    'bernoulli-odds' ('bernoulli'), 'bernoulli-logit', 'gamma', 'rayleigh'
    (pyttb's gcp_opt definitions). By default GCP-Adam on stratified samples
    (GenTen's gcp-sgd: ``samples`` = (non-zeros, zeros) per iteration,
    ``fsamples`` the fixed sample of the loss estimate, 0 or None: GenTen's
    defaults; epochs of ``epoch_iters`` iterations, at most ``max_epochs``
    (default 100); a failed epoch is undone and the rate times ``decay``;
    more than ``max_fails`` end the run). ``sampling='semi-stratified'``
    (GenTen's; Kolda & Hong 2020): the gradient's zero samples uniform over
    every entry without the non-zero test, the non-zero samples counting
    f(x, m) - f(0, m) (unbiased; zeros default to as many as the non-zeros);
    the loss estimate's fixed sample stays stratified. checkpoint=STEM
    (sampled mode) saves the state after epochs as ``tenfold cpd --method gcp
    --checkpoint`` (the factors, Adam's moments, rate and sample counter;
    checkpoint_every=N epochs, a time '5m' or both); resume=STEM goes on from
    one to max_epochs in all, to the estimates and factors of a run never
    stopped (the sample sizes must be the checkpoint's: the defaults depend
    on max_epochs, so give ``samples``/``fsamples`` to resume with another).
    ``dense=True``: the exact loss over
    every entry (tensors of at most 2^26 entries) minimised by projected
    L-BFGS to ``ftol`` / ``pgtol`` (``max_epochs`` its iterations, default
    1000) -- the objective pyttb's ``gcp_opt`` with L-BFGS-B minimises.
    init: 'random' or a start (factors, (weights, factors), a CPResult, a
    tensorly CPTensor or a pyttb ktensor). device: one GPU (the CPU's
    samples, the same estimates to rounding; 'auto' where one is present) or
    the CPU; dense=True runs on the CPU only (device='gpu' raises
    UnavailableError).

    Returns a CPResult (weights, factors: unit 2-norm columns), with loss
    (the final estimate; dense: the exact loss), loss_initial, loss_history
    (one per epoch), n_iter (epochs), failed_epochs, converged, timings.
    """
    T = _tensor_arg(X)
    if not isinstance(loss, str) or lib.tf_gcp_loss_parse(loss.encode()) < 0:
        raise ArgumentError(f"loss: expected one of {', '.join(LOSSES)}, got {loss!r}")
    o = ffi.new("tf_gcp_opts *")
    lib.tf_gcp_opts_default(o)
    o.loss = lib.tf_gcp_loss_parse(loss.encode())
    o.rank = _count(rank, "rank", lib.TF_MAX_RANK)
    o.dense = 1 if dense else 0
    kinds = {"stratified": lib.TF_GCP_STRATIFIED, "semi-stratified": lib.TF_GCP_SEMI_STRATIFIED}
    if not isinstance(sampling, str) or sampling not in kinds:
        raise ArgumentError(f"sampling: expected 'stratified' or 'semi-stratified', got {sampling!r}")
    o.sampling = kinds[sampling]
    o.gnz, o.gz = _pair(samples, "samples")
    o.fnz, o.fz = _pair(fsamples, "fsamples")
    o.epoch_iters = _count(epoch_iters, "epoch_iters", 2**32 - 1)
    if max_epochs is not None:
        o.max_epochs = _count(max_epochs, "max_epochs", 2**32 - 1)
    o.rate = _number(rate, "rate", strict=True)
    o.decay = _number(decay, "decay", strict=True)
    if not isinstance(max_fails, (int, np.integer)) or isinstance(max_fails, bool) or max_fails < 0:
        raise ArgumentError(f"max_fails: expected an integer >= 0, got {max_fails!r}")
    o.max_fails = int(max_fails)
    o.ftol = _number(ftol, "ftol")
    o.pgtol = _number(pgtol, "pgtol")
    if not isinstance(printitn, (int, np.integer)) or isinstance(printitn, bool) or printitn < 0:
        raise ArgumentError(f"printitn: expected an integer >= 0, got {printitn!r}")
    o.threads = _threads(threads)
    o.backend = _backend(device)
    o.seed = _seed(random_state)
    keep = []
    if isinstance(init, str):
        if init != "random":
            raise ArgumentError(f"init: expected 'random' or a start, got {init!r}")
    else:
        k = _init_ktensor(init, T, o.rank, keep)
        keep.append(k)
        o.init = k
    ck = _checkpoint(checkpoint, checkpoint_every, resume, keep)
    if ck is not None:
        o.checkpoint = ck
    if callback is not None and not callable(callback):
        raise ArgumentError("callback: expected a callable taking a GCPEpochInfo")
    stop = ffi.new("int *")
    state = _GcpRun(callback, int(printitn), stop)
    handle = ffi.new_handle(state)
    o.callback, o.user, o.stop = lib._tf_py_gcp_epoch, handle, stop
    Xc = T._c()
    out = ffi.new("tf_ktensor *")
    rep = ffi.new("tf_gcp_report *")
    prev = enter_run(state)
    try:
        status = lib.tf_gcp(Xc, o, out, rep)
        if state.error is not None:
            raise state.error
        check(status)
        weights, factors = _from_c_ktensor(out)
    finally:
        leave_run(prev)
        lib.tf_ktensor_free(out)
    timings = {"build": rep.t_build, "sample": rep.t_sample, "gradient": rep.t_gradient, "step": rep.t_step,
               "estimate": rep.t_estimate, "total": rep.t_total}
    res = CPResult(weights, factors, n_iter=rep.epochs, converged=bool(rep.converged), stopped=bool(rep.stopped),
                   timings=timings, plan=ffi.string(rep.plan).decode(), note=ffi.string(rep.note).decode(),
                   algorithm="GCP dense L-BFGS" if dense else "GCP-Adam")
    res.loss = float(rep.loss_estimate)
    res.loss_initial = float(rep.loss_initial)
    res.loss_history = state.loss
    res.failed_epochs = int(rep.fails)
    res.samples = {"nonzero": int(rep.gnz), "zero": int(rep.gz), "f_nonzero": int(rep.fnz), "f_zero": int(rep.fz)}
    return res
