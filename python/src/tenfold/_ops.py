# SPDX-License-Identifier: BSD-3-Clause
"""The operations: files, CP-ALS, MTTKRP, SpTTM, SDDMM (CP-APR: _apr.py)."""
from __future__ import annotations

import atexit
import os
import re
import threading
from typing import Any, Callable, Literal, Optional, Sequence, Union

import numpy as np

from ._checkpoint import _checkpoint
from ._dlpack import GpuArray, common_device, empty_like, gpu_device, scatter
from ._errors import ArgumentError, UnavailableError, check
from ._helpers import _from_c_ktensor, fixsigns_inplace
from ._runs import enter_run, leave_run, on_callback_error
from ._tenfold_cffi import ffi, lib
from ._tensor import Tensor, TensorLike, _coo_parts, _real_values, as_tensor

PathLike = Union[str, "os.PathLike[str]"]
Device = Literal["auto", "cpu", "gpu"]

_FORMATS = {
    "auto": lib.TF_FILE_AUTO, "tns": lib.TF_FILE_TNS, "tns-header": lib.TF_FILE_TNS_HEADER,
    "sptensor": lib.TF_FILE_SPTENSOR, "bin": lib.TF_FILE_BIN, "mtx": lib.TF_FILE_MTX,
}


def _path(path):
    return os.fsencode(os.fspath(path))


def _choice(value, options, what):
    if value not in options:
        raise ArgumentError(f"{what}: {value!r} is not one of {', '.join(map(repr, options))}")
    return options[value]


def _backend(device):
    return _choice(device, {"auto": lib.TF_BACKEND_AUTO, "cpu": lib.TF_BACKEND_CPU, "gpu": lib.TF_BACKEND_GPU},
                   "device")


def _threads(threads):
    if threads is None:
        return 0
    if not isinstance(threads, (int, np.integer)) or threads < 0:
        raise ArgumentError(f"threads: expected an integer >= 0 (0 or None: all cores), got {threads!r}")
    return int(threads)


def _size(limit):
    """Bytes from None, an int, or a size such as '8G' (powers of 1024, as the CLI)."""
    if limit is None:
        return 0
    if isinstance(limit, (int, np.integer)) and limit >= 0:
        return int(limit)
    m = re.fullmatch(r"\s*([0-9.]+(?:[eE][0-9]+)?)\s*([kKmMgGtT]?)(?:i?[bB])?\s*", str(limit))
    if not m:
        raise ArgumentError(f"memory_limit: expected bytes or a size such as 8G, 512M, got {limit!r}")
    return int(float(m.group(1)) * 1024 ** " KMGT".index(m.group(2).upper() or " "))


def _matrix(a, what, rows=None):
    """A float64 C-contiguous 2-D array (the input itself when it is one)."""
    if hasattr(a, "__dlpack_device__") and not isinstance(a, np.ndarray):
        dev = a.__dlpack_device__()[0]
        if dev not in (1, 3):  # kDLCPU, kDLCUDAHost: host memory numpy can view
            raise UnavailableError(f"{what}: a device array (DLPack device type {int(dev)}); GPU arrays are taken "
                                   "by tenfold.sddmm, SDDMMPlan.run and tenfold.mttkrp: pass a host array here")
        a = np.from_dlpack(a)
    arr = np.asarray(a)
    if arr.dtype.kind not in "biuf":
        raise ArgumentError(f"{what}: expected real numbers, got dtype {arr.dtype}")
    if arr.ndim != 2:
        raise ArgumentError(f"{what}: expected a 2-D array, got shape {arr.shape}")
    if rows is not None and arr.shape[0] != rows:
        raise ArgumentError(f"{what}: {arr.shape[0]} rows, expected {rows}")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    if not np.all(np.isfinite(arr)):
        i = np.argwhere(~np.isfinite(arr))[0]
        raise ArgumentError(f"{what}: entry ({i[0]}, {i[1]}) is {arr[tuple(i)]} (expected finite values)")
    return arr


def _c_matrix(arr, out=None):
    m = out if out is not None else ffi.new("tf_matrix *")
    m.rows, m.cols = arr.shape
    m.data = ffi.cast("double *", ffi.from_buffer(arr)) if arr.size else ffi.NULL
    return m


class _Context:
    """A tf_context for one call (device, memory limit, GPUs)."""

    def __init__(self, device="auto", gpus=1, memory_limit=None, threads=None, gpu=0):
        if not isinstance(gpus, (int, np.integer)) or isinstance(gpus, bool):
            raise ArgumentError(f"gpus: expected an integer, got {gpus!r}")
        if not isinstance(gpu, (int, np.integer)) or isinstance(gpu, bool) or gpu < 0:
            raise ArgumentError(f"gpu: expected a GPU ordinal >= 0, got {gpu!r}")
        o = ffi.new("tf_context_opts *")
        lib.tf_context_opts_default(o)
        o.backend = _backend(device)
        o.device = int(gpu)
        o.ndevices = int(gpus)  # several GPUs: GPUs 0..gpus-1 (tf_context_opts_default)
        o.memory_limit = _size(memory_limit)
        o.threads = _threads(threads)
        self.ptr = ffi.new("tf_context **")
        check(lib.tf_context_create(o, self.ptr))

    def __enter__(self):
        return self.ptr[0]

    def __exit__(self, *exc):
        lib.tf_context_free(self.ptr[0])


class _SharedContext:
    """The process's context for one-shot GPU calls (``tenfold.sddmm`` with
    GPU arrays), made on first use and kept: a context's streams, library
    handles and pinned staging cost tens to hundreds of milliseconds to
    make, which a one-shot call would otherwise pay every time. One call
    uses it at a time (a lock); a call that finds it busy (another thread)
    makes a context of its own, as before. Freed when the process exits."""

    _lock = threading.Lock()
    _made = {}  # (gpu, threads) -> _Context

    def __init__(self, gpu, threads):
        self._key = (int(gpu), threads)
        self._held = False
        self._own = None

    def __enter__(self):
        if _SharedContext._lock.acquire(blocking=False):
            self._held = True
            try:
                ctx = _SharedContext._made.get(self._key)
                if ctx is None:
                    ctx = _Context("gpu", 1, None, self._key[1], gpu=self._key[0])
                    _SharedContext._made[self._key] = ctx
                return ctx
            except BaseException:
                self._held = False
                _SharedContext._lock.release()
                raise
        self._own = _Context("gpu", 1, None, self._key[1], gpu=self._key[0])
        return self._own

    def __exit__(self, *exc):
        if self._held:
            self._held = False
            _SharedContext._lock.release()
        if self._own is not None:
            lib.tf_context_free(self._own.ptr[0])
            self._own = None

    @staticmethod
    def free_all():
        for ctx in _SharedContext._made.values():
            lib.tf_context_free(ctx.ptr[0])
        _SharedContext._made.clear()


atexit.register(_SharedContext.free_all)


def _csr_arrays(S):
    """(rowptr uint64, colind uint32, values float64, shape) straight from a
    scipy.sparse CSR matrix whose columns are sorted in every row (so its
    order is the CSR order the C plan takes): no COO, no sort, the column
    indices reinterpreted in place where they are int32; else None."""
    mod = type(S).__module__ or ""
    if not mod.startswith("scipy.sparse") or getattr(S, "format", None) != "csr" or len(S.shape) != 2:
        return None
    if not S.has_sorted_indices:
        return None
    indices, data = S.indices, S.data
    if indices.dtype == np.int32:
        colind = indices.view(np.uint32)  # scipy's indices are >= 0
    else:
        if indices.size and int(indices.max()) >= 1 << 32:
            return None
        colind = indices.astype(np.uint32)
    vals = _real_values(data).reshape(-1)
    if not np.all(np.isfinite(vals)):
        k = int(np.flatnonzero(~np.isfinite(vals))[0])
        raise ArgumentError(f"values: entry {k} is {vals[k]} (values must be finite)")
    rowptr = np.ascontiguousarray(S.indptr, dtype=np.uint64)
    return rowptr, np.ascontiguousarray(colind), np.ascontiguousarray(vals, dtype=np.float64), \
        (int(S.shape[0]), int(S.shape[1]))


# ---------------------------------------------------------------- files

def read(path: PathLike, base: Literal["auto", 0, 1] = "auto", threads: Optional[int] = None,
         keep_zeros: bool = False) -> Tensor:
    """Reads a tensor file: FROSTT .tns (any header form), tenfold .bin or
    Matrix Market .mtx, plain or xz / gzip compressed, told by content.

    base: index base of .tns input, 'auto' (0-based iff an index is 0), 0 or 1.
    keep_zeros: keep the entries of value 0 (observed zeros of completion
    data; tenfold.complete reads its file arguments so); default: dropped.

    >>> X = tenfold.read("data/uber-apr14.tns.xz")
    """
    o = ffi.new("tf_read_opts *")
    lib.tf_read_opts_default(o)
    o.threads = _threads(threads)
    o.base = _choice(base, {"auto": lib.TF_BASE_AUTO, 0: 0, 1: 1}, "base")
    o.keep_zeros = _choice(keep_zeros, {False: 0, True: 1}, "keep_zeros")
    t = ffi.new("tf_tensor *")
    check(lib.tf_read_tensor_opts(_path(path), o, t, ffi.NULL))
    try:
        return Tensor._from_c(t)
    finally:
        lib.tf_tensor_free(t)


def write(path: PathLike, X: TensorLike, format: str = "auto") -> None:
    """Writes X atomically (temporary file + rename). format: 'auto' (by the
    extension: .bin, .mtx, else .tns), 'tns', 'tns-header', 'sptensor', 'bin', 'mtx'.

    >>> tenfold.write("x.tns", (coords, values, shape))
    """
    T = as_tensor(X)
    check(lib.tf_write_tensor(_path(path), T._c(), _choice(format, _FORMATS, "format")))


# ---------------------------------------------------------------- CP-ALS

class CPResult:
    """What cp_als returns: the Kruskal tensor (weights, factors) and how the run went.

    Iterates as (weights, factors), like tensorly's CPTensor.

    Attributes
    ----------
    weights : numpy.ndarray
        The rank component weights, in decreasing order (every factor column
        has unit 2-norm).
    factors : list of numpy.ndarray
        One (shape[m], rank) float64 array per mode.
    fit : float
        1 - ||X - M|| / ||X|| of the model M after the last iteration.
    n_iter : int
        Iterations run.
    converged : bool
        True when |delta fit| < tol ended the run.
    stopped : bool
        True when the callback (or Ctrl-C) ended the run.
    fit_history : list of float
        The fit after every iteration; ``history`` is the same list.
    timings : dict
        Seconds: 'init' (computing the start, init='nvecs'; else 0), 'build'
        (the MTTKRP plan), 'mttkrp' (a list, one per mode), 'dense', 'fit',
        'setup' (the start put on the backend), 'finish' (the result fetched
        and arranged), 'total' (the whole C call).
    plan : str
        The plan the run used ("cpu csf, 2 threads", ...).
    note : str
        Why an automatic choice ran on the CPU, else "".
    inner_iterations : int
        AO-ADMM (cp_als with nonneg / l1 / l2): its inner iterations; HALS: its
        column sweeps; summed over the modes and iterations; 0 for ALS. cp_apr:
        its multiplicative updates' inner iterations.
    algorithm : str
        The update that ran: 'CP-ALS', 'AO-ADMM', 'HALS' (cp_apr: 'CP-APR').
    algorithm_choice : str
        Why nonneg_method='auto' chose it ("non-negativity alone: HALS ..."),
        else "".
    loglik, loglik_history, kkt_history : float, list, list
        cp_apr: the final Poisson log-likelihood, and the log-likelihood and
        KKT violation after every outer iteration (cp_als: nan, [], []).
    loss, loss_initial, loss_history, failed_epochs, samples : float, float, list, int, dict
        gcp: the final loss estimate (dense mode: the exact loss), the
        start's, one per epoch, the failed epochs, the sample sizes used
        (other methods: nan, nan, [], 0, {}).
    rank : int
        The number of components (a property).
    """

    __slots__ = ("weights", "factors", "fit", "n_iter", "converged", "stopped", "fit_history", "timings",
                 "plan", "note", "inner_iterations", "algorithm", "algorithm_choice", "loglik", "loglik_history",
                 "kkt_history", "loss", "loss_initial", "loss_history", "failed_epochs", "samples")
    weights: np.ndarray
    factors: list
    fit: float
    n_iter: int
    converged: bool
    stopped: bool
    fit_history: list
    timings: dict
    plan: str
    note: str
    inner_iterations: int
    algorithm: str
    algorithm_choice: str
    loglik: float
    loglik_history: list
    kkt_history: list
    loss: float
    loss_initial: float
    loss_history: list
    failed_epochs: int
    samples: dict

    def __init__(self, weights: np.ndarray, factors: Sequence[np.ndarray], fit: float = float("nan"),
                 n_iter: int = 0, converged: bool = False, stopped: bool = False,
                 fit_history: Optional[Sequence[float]] = None, timings: Optional[dict] = None,
                 plan: str = "", note: str = "", inner_iterations: int = 0, algorithm: str = "CP-ALS",
                 algorithm_choice: str = "", loglik: float = float("nan"),
                 loglik_history: Optional[Sequence[float]] = None, kkt_history: Optional[Sequence[float]] = None):
        self.weights = weights
        self.factors = list(factors)
        self.fit = float(fit)
        self.n_iter = int(n_iter)
        self.converged = bool(converged)
        self.stopped = bool(stopped)
        self.fit_history = list(fit_history) if fit_history is not None else []
        self.timings = dict(timings) if timings is not None else {}
        self.plan = plan
        self.note = note
        self.inner_iterations = int(inner_iterations)
        self.algorithm = algorithm
        self.algorithm_choice = algorithm_choice
        self.loglik = float(loglik)
        self.loglik_history = list(loglik_history) if loglik_history is not None else []
        self.kkt_history = list(kkt_history) if kkt_history is not None else []
        self.loss = self.loss_initial = float("nan")
        self.loss_history = []
        self.failed_epochs = 0
        self.samples = {}

    @classmethod
    def _from_run(cls, weights, factors, report, history, stopped):
        N = len(factors)
        timings = {
            "init": report.t_init, "build": report.t_build, "mttkrp": [report.t_mttkrp[m] for m in range(N)],
            "dense": report.t_dense, "fit": report.t_fit, "setup": report.t_setup, "finish": report.t_finish,
            "total": report.t_total,
        }
        return cls(weights, factors, fit=report.fit, n_iter=report.iters, converged=report.converged,
                   stopped=stopped, fit_history=history, timings=timings,
                   plan=ffi.string(report.plan).decode(), note=ffi.string(report.note).decode(),
                   inner_iterations=report.inner_iters, algorithm=_algorithm_name(report.update_kind),
                   algorithm_choice=ffi.string(report.update_note).decode())

    @property
    def history(self) -> list:
        """The fit after every iteration (the same list as fit_history)."""
        return self.fit_history

    def fixsigns(self) -> "CPResult":
        """Flips signs as pyttb's ``ktensor.fixsigns()``, in place, and returns self.

        For each component r and each mode, the sign of the column's largest-
        magnitude entry (the first, where several tie); the modes where it is
        negative are flipped in pairs (the first 2 floor(k / 2) of the k such
        modes, in mode order), so the model is unchanged and the largest entries
        are positive wherever a pair allows. Weights are unchanged.
        """
        fixsigns_inplace(self.factors)
        return self

    @property
    def rank(self) -> int:
        return int(self.weights.shape[0])

    def __iter__(self):
        return iter((self.weights, self.factors))

    def __getitem__(self, index):
        # as tensorly's CPTensor: cp[0] the weights, cp[1] the factors
        return (self.weights, self.factors)[index]

    def __len__(self):
        return 2

    def __repr__(self):
        ll = "" if np.isnan(self.loglik) else f", loglik={self.loglik:.10g}"
        return (f"CPResult(rank={self.rank}, fit={self.fit:.6g}{ll}, n_iter={self.n_iter}, "
                f"converged={self.converged})")

    def to_tensorly(self) -> Any:
        """A ``tensorly.cp_tensor.CPTensor`` of this result's weights and factors
        (numpy arrays, tensorly's numpy backend; the arrays themselves, not copies,
        in a list of its own).

        >>> tl.cp_to_tensor(res.to_tensorly())  # the dense model
        """
        from tensorly.cp_tensor import CPTensor

        return CPTensor((self.weights, list(self.factors)))

    def to_pyttb(self) -> Any:
        """A ``pyttb.ktensor``."""
        import pyttb

        return pyttb.ktensor([np.asfortranarray(f) for f in self.factors], self.weights.copy())


def _algorithm_name(kind):
    return {lib.TF_CPD_UPDATE_AO_ADMM: "AO-ADMM", lib.TF_CPD_UPDATE_HALS: "HALS"}.get(int(kind), "CP-ALS")


class IterInfo:
    """One CP-ALS iteration, as passed to the callback."""

    __slots__ = ("iter", "fit", "dfit", "seconds", "t_mttkrp", "t_dense", "t_fit", "inner_iters")

    def __init__(self, it):
        for k in self.__slots__:
            setattr(self, k, getattr(it, k))

    def __repr__(self):
        return f"IterInfo(iter={self.iter}, fit={self.fit:.6g}, dfit={self.dfit:.3g}, seconds={self.seconds:.3g})"


class _RunState:
    def __init__(self, callback, verbose, stop):
        self.callback, self.verbose, self.stop = callback, verbose, stop
        self.history = []
        self.error = None


@ffi.def_extern(onerror=lambda et, ev, tb: on_callback_error(ev))
def _tf_py_cpd_iter(it, user):
    st = ffi.from_handle(user)
    st.history.append(it.fit)
    if st.callback is None and not st.verbose:
        return  # the history alone (and Ctrl-C, raised here): no IterInfo
    info = IterInfo(it)
    if st.verbose:
        print(f"  iter {info.iter:3d}  fit {info.fit:.6g}  delta {info.dfit:+.3e}  {info.seconds:.3f} s",
              flush=True)
    if st.callback is not None and st.callback(info):
        st.stop[0] = 1




def _seed(random_state):
    if random_state is None:
        return lib.TF_DEFAULT_SEED  # the CLI's default: same fits as `tenfold cpd`
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(0, 2**63))
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(0, 2**31))
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool) and \
            0 <= random_state < 2**64:
        return int(random_state)
    raise ArgumentError(f"random_state: expected None, an integer 0..2^64-1 or a numpy Generator, "
                        f"got {random_state!r}")


def _init_ktensor(init, T, rank, keep):
    """tf_ktensor over the arrays of a given start (factors, (weights, factors), CPTensor, ktensor)."""
    weights, factors = None, init
    if hasattr(init, "factor_matrices") and hasattr(init, "weights"):  # pyttb.ktensor
        weights, factors = init.weights, init.factor_matrices
    elif hasattr(init, "factors") and hasattr(init, "weights"):  # tensorly CPTensor, CPResult
        weights, factors = init.weights, init.factors
    elif isinstance(init, tuple) and len(init) == 2 and not isinstance(init[1], np.ndarray):
        weights, factors = init
    factors = list(factors)
    if len(factors) != T.ndim:
        raise ArgumentError(f"init: {len(factors)} factors for a tensor of {T.ndim} modes")
    mats = [_matrix(f, f"init factor {m}", rows=T.shape[m]) for m, f in enumerate(factors)]
    for m, a in enumerate(mats):
        if a.shape[1] != rank:
            raise ArgumentError(f"init factor {m}: {a.shape[1]} columns, expected the rank {rank}")
    k = ffi.new("tf_ktensor *")
    k.order, k.rank = T.ndim, rank
    for m, a in enumerate(mats):
        k.dims[m] = T.shape[m]
        _c_matrix(a, k.factors[m])
    if weights is not None:
        w = np.ascontiguousarray(np.asarray(weights, dtype=np.float64).reshape(-1))
        if w.shape[0] != rank or not np.all(np.isfinite(w)):
            raise ArgumentError(f"init weights: expected {rank} finite values, got {w.shape[0]}")
        keep.append(w)
        setattr(k, "lambda", ffi.cast("double *", ffi.from_buffer(w)))  # a Python keyword
    keep.extend(mats)
    return k


def cp_als(X: Union[TensorLike, PathLike], rank: int, n_iter_max: int = 50, tol: float = 1e-5, init: Any = "random",
           random_state: Union[None, int, np.random.Generator, np.random.RandomState] = None,
           device: Device = "auto", gpus: int = 1, precision: Literal["double", "single"] = "double",
           memory_limit: Union[None, int, str] = None, verbose: bool = False,
           callback: Optional[Callable[[IterInfo], Optional[bool]]] = None,
           threads: Optional[int] = None, fixsigns: bool = True, nonneg: Union[bool, Sequence[int]] = False,
           l1: Union[None, float, Sequence[float]] = None, l2: Union[None, float, Sequence[float]] = None,
           n_iter_max_inner: Optional[int] = None, tol_inner: Optional[float] = None,
           nonneg_method: Literal["auto", "admm", "hals"] = "auto", checkpoint: Any = None,
           checkpoint_every: Any = None, resume: Any = None) -> CPResult:
    """CP decomposition by alternating least squares (Tensor Toolbox cp_als rules).

    X: a Tensor, anything ``Tensor`` takes, or the path of a tensor file (str or
    os.PathLike, read by ``tenfold.read``).

    init: the start.
      * 'random' (default): factors uniform in [0, 1) from random_state (None is
        the CLI's default seed, so ``random_state=S`` gives the fits of
        ``tenfold cpd --seed S``).
      * 'nvecs' or 'svd' (synonyms): factors 2..N are the rank leading left
        singular vectors of the mode-n unfoldings (``tenfold.nvecs``, computed
        sparsely; pyttb's and the Tensor Toolbox's init='nvecs', tensorly's
        init='svd'), as ``tenfold cpd --init nvecs``. Deterministic: random_state
        is not used (except for the columns past a mode's length, rank >
        shape[n], which are the random start's). Factor 1 is not needed (CP-ALS
        solves for it first).
      * a given start: a list of factors, a (weights, factors) pair, a CPResult,
        a tensorly CPTensor or a pyttb ktensor.

    fixsigns: as pyttb's cp_als (default True): the result's signs are fixed by
    ``CPResult.fixsigns`` (the largest-magnitude entry of each column positive,
    modes flipped in pairs); False leaves them as ALS ends.

    nonneg, l1, l2: constraints; any of them runs AO-ADMM or HALS instead of
    ALS, as ``tenfold cpd --nonneg / --l1 / --l2``:
      * nonneg: True (every factor >= 0), False (default) or the modes (0-based,
        negative from the end) whose factors are non-negative.
      * l1: a number >= 0 for every mode, or one per mode: l1 ||A||_1 added to
        the squared error (sparse factors; larger, more zeros).
      * l2: the same for l2 / 2 ||A||_F^2 (ridge).
    They combine per mode (nonneg=True, l1=0.1: non-negative and sparse).
    nonneg_method: how ('tenfold cpd --nonneg-method'):
      * 'admm': AO-ADMM (Huang, Sidiropoulos & Liavas 2016, as SPLATT's and
        tensorly's ``constrained_parafac``): per mode a few ADMM iterations on
        one Cholesky factor (at most n_iter_max_inner, default 25, until the
        residuals relative to the factor and the dual are <= tol_inner,
        default 1e-2). Any combination of constraints.
      * 'hals': HALS (as tensorly's ``non_negative_parafac_hals``): per
        non-negative mode a few sweeps over the columns, each solved exactly
        (at most n_iter_max_inner, default 5, until a sweep changes the factor
        by less than tol_inner, default 1e-8, times the first sweep); l1 only
        on non-negative modes.
      * 'auto' (default): HALS for non-negativity alone, AO-ADMM with l1 / l2
        (``CPResult.algorithm`` says which ran, ``.algorithm_choice`` why).
    ``CPResult.inner_iterations`` counts the inner iterations. AO-ADMM runs
    on the CPU and the GPU (device='gpu', gpus=2; the GPU's fits and inner
    iterations are the CPU's from the same start); HALS on the CPU (on a GPU,
    'auto' picks AO-ADMM; 'hals' raises UnavailableError).

    device: 'auto', 'cpu' or 'gpu'; precision 'double' or 'single' (GPU);
    memory_limit: device bytes (int or '8G'). callback(info) runs after every
    iteration with an IterInfo; returning True stops the run there (Ctrl-C does
    too, then KeyboardInterrupt is raised). The GIL is released while C runs.
    checkpoint=STEM saves the run's state as it goes (a factor set STEM.* plus
    STEM.state, switched in one step; 'tenfold cpd --checkpoint'):
    checkpoint_every=N iterations, a time ('5m', '30s', '1h') or both as a
    pair (default: every iteration), always the last; resume=STEM goes on
    from such a checkpoint up to n_iter_max iterations in all and ends with the bits
    of a run that never stopped (the histories hold the resumed iterations).

    >>> res = tenfold.cp_als(X, 16, n_iter_max=30, random_state=1)
    >>> res.fit, res.weights, res.factors[0].shape
    >>> res = tenfold.cp_als("data/uber-apr14.tns.xz", 16, init="nvecs")
    >>> res = tenfold.cp_als(X, 8, nonneg=True, l1=0.1)     # non-negative, sparse
    """
    T = _tensor_arg(X)
    if not isinstance(rank, (int, np.integer)) or isinstance(rank, bool) or not 1 <= rank <= lib.TF_MAX_RANK:
        raise ArgumentError(f"rank: expected an integer 1..{lib.TF_MAX_RANK}, got {rank!r}")
    if not isinstance(n_iter_max, (int, np.integer)) or not 1 <= n_iter_max < 2**32:
        raise ArgumentError(f"n_iter_max: expected an integer >= 1, got {n_iter_max!r}")
    o = ffi.new("tf_cpd_opts *")
    lib.tf_cpd_opts_default(o)
    o.rank, o.max_iters = int(rank), int(n_iter_max)
    try:
        o.tol = float(tol)
    except (TypeError, ValueError):
        raise ArgumentError(f"tol: expected a number, got {tol!r}") from None
    o.threads = _threads(threads)
    o.backend = _backend(device)
    o.precision = _choice(precision, {"double": lib.TF_DOUBLE, "single": lib.TF_SINGLE}, "precision")
    o.seed = _seed(random_state)
    keep = []
    if isinstance(init, str):
        o.start = _choice(init, {"random": lib.TF_START_RANDOM, "nvecs": lib.TF_START_NVECS,
                                 "svd": lib.TF_START_NVECS}, "init")
    else:
        k = _init_ktensor(init, T, int(rank), keep)
        keep.append(k)  # owns the struct o.init points to
        o.init = k
    update = _update(nonneg, l1, l2, n_iter_max_inner, tol_inner, T.ndim, nonneg_method)
    if update is not None:
        keep.append(update)
        o.update = update
    ck = _checkpoint(checkpoint, checkpoint_every, resume, keep)
    if ck is not None:
        o.checkpoint = ck
    if callback is not None and not callable(callback):
        raise ArgumentError("callback: expected a callable taking an IterInfo")
    stop = ffi.new("int *")
    state = _RunState(callback, verbose, stop)
    handle = ffi.new_handle(state)
    o.callback, o.user, o.stop = lib._tf_py_cpd_iter, handle, stop
    Xc = T._c()
    out = ffi.new("tf_ktensor *")
    rep = ffi.new("tf_cpd_report *")
    prev = enter_run(state)
    try:
        with _Context(device, gpus, memory_limit, threads) as ctx:
            o.context = ctx
            status = lib.tf_cpd(Xc, o, out, rep)
        if state.error is not None:
            raise state.error
        check(status)
        weights, factors = _from_c_ktensor(out)
    finally:
        leave_run(prev)
        lib.tf_ktensor_free(out)  # zeroed by tf_cpd on failure: safe
    if verbose:
        print(f"cp_als: fit {rep.fit:.6g} after {rep.iters} iterations, {rep.t_total:.3f} s ({ffi.string(rep.plan).decode()})")
    res = CPResult._from_run(weights, factors, rep, state.history, bool(rep.stopped))
    if fixsigns:
        res.fixsigns()
    return res


def _penalty(value, name, N):
    """l1 / l2 of cp_als: one number >= 0 per mode (None: zeros)."""
    if value is None:
        return [0.0] * N
    vals = list(value) if isinstance(value, (list, tuple, np.ndarray)) else [value] * N
    if len(vals) != N:
        raise ArgumentError(f"{name}: expected a number >= 0 or {N} of them (one per mode), got {len(vals)}")
    out = []
    for v in vals:
        try:
            f = float(v)
        except (TypeError, ValueError):
            raise ArgumentError(f"{name}: expected a number >= 0 or one per mode, got {v!r}") from None
        if isinstance(v, bool) or not (f >= 0.0 and np.isfinite(f)):
            raise ArgumentError(f"{name}: expected finite numbers >= 0, got {v!r}")
        out.append(f)
    return out


_METHODS = {"auto": lib.TF_CPD_UPDATE_AUTO, "admm": lib.TF_CPD_UPDATE_AO_ADMM, "hals": lib.TF_CPD_UPDATE_HALS}


def _update(nonneg, l1, l2, n_iter_max_inner, tol_inner, N, method="auto"):
    """The tf_cpd_update of cp_als's constraints: None for ALS (none given)."""
    if isinstance(nonneg, (bool, np.bool_)):
        modes = set(range(N)) if nonneg else set()
    elif isinstance(nonneg, (list, tuple, set, range, np.ndarray)):
        modes = {_mode(m, N) for m in nonneg}
    else:
        raise ArgumentError(f"nonneg: expected True, False or a sequence of modes, got {nonneg!r}")
    pl1, pl2 = _penalty(l1, "l1", N), _penalty(l2, "l2", N)
    kind = _choice(method, _METHODS, "nonneg_method")
    if n_iter_max_inner is not None and (not isinstance(n_iter_max_inner, (int, np.integer)) or
                                         isinstance(n_iter_max_inner, bool) or not 1 <= n_iter_max_inner <= 100000):
        raise ArgumentError(f"n_iter_max_inner: expected an integer 1..100000, got {n_iter_max_inner!r}")
    tol = None
    if tol_inner is not None:
        try:
            tol = float(tol_inner)
        except (TypeError, ValueError):
            raise ArgumentError(f"tol_inner: expected a number in [0, 1), got {tol_inner!r}") from None
        if not 0.0 <= tol < 1.0:
            raise ArgumentError(f"tol_inner: expected a number in [0, 1), got {tol_inner!r}")
    if not modes and l1 is None and l2 is None:
        return None
    if kind == lib.TF_CPD_UPDATE_HALS:
        for m in range(N):
            if pl1[m] > 0 and m not in modes:
                raise ArgumentError(f"l1: mode {m} is not non-negative, and HALS imposes l1 on non-negative modes "
                                    f"only (nonneg_method='admm' imposes it anywhere)")
    u = ffi.new("tf_cpd_update *")
    lib.tf_cpd_update_default(u)
    u.kind = kind
    if n_iter_max_inner is not None:  # whichever runs (auto: both)
        u.max_inner = u.hals_max_inner = int(n_iter_max_inner)
    if tol is not None:
        u.inner_tol = u.hals_tol = tol
    for m in range(N):
        u.mode[m].nonneg = int(m in modes)
        u.mode[m].l1, u.mode[m].l2 = pl1[m], pl2[m]
    return u


def nvecs(X: Union[TensorLike, PathLike], mode: int, r: int, threads: Optional[int] = None) -> np.ndarray:
    """The r leading mode-`mode` vectors of X: the leading left singular vectors
    of the unfolding X_(mode) (shape[mode] x the product of the other lengths),
    i.e. the eigenvectors of X_(mode) X_(mode)^T with the r largest eigenvalues,
    as a (shape[mode], r) float64 array, in decreasing eigenvalue order, each
    column with its largest-magnitude entry positive -- pyttb's
    ``sptensor.nvecs(mode, r)`` (which flips signs the same way).

    Computed without forming the unfolding (the C library's tf_nvecs): for
    shape[mode] <= 1024 the Gram is formed from the non-zeros and decomposed
    by LAPACK; longer modes run a block subspace iteration, to residuals below
    1e-12 of the largest eigenvalue. mode may be negative (-1: the last mode).
    X may be a file path. 1 <= r <= shape[mode].

    >>> U = tenfold.nvecs(X, 1, 8)
    """
    T = _tensor_arg(X)
    mode = _mode(mode, T.ndim)
    if not isinstance(r, (int, np.integer)) or isinstance(r, bool) or not 1 <= r <= T.shape[mode]:
        raise ArgumentError(f"r: expected an integer 1..{T.shape[mode]} (mode {mode}'s length), got {r!r}")
    o = ffi.new("tf_nvecs_opts *")
    lib.tf_nvecs_opts_default(o)
    o.threads = _threads(threads)
    out = ffi.new("tf_matrix *")
    check(lib.tf_nvecs(T._c(), mode, int(r), o, out, ffi.NULL, ffi.NULL))
    try:
        a = np.frombuffer(ffi.buffer(out.data, 8 * out.rows * out.cols), dtype=np.float64)
        return a.reshape(int(out.rows), int(out.cols)).copy()
    finally:
        lib.tf_matrix_free(out)


def _tensor_arg(X, keep_zeros=False):
    """X as a Tensor; a str or os.PathLike is a file, read by tenfold.read.
    keep_zeros: entries of value 0 kept (completion's observed entries)."""
    if isinstance(X, (str, bytes, os.PathLike)):
        return read(X, keep_zeros=keep_zeros)
    return as_tensor(X, keep_zeros=keep_zeros)


# ---------------------------------------------------------------- kernels

def mttkrp(X: TensorLike, factors: Sequence[Any], mode: int, device: Device = "auto",
           threads: Optional[int] = None, out: Any = None) -> Any:
    """Matricized tensor times Khatri-Rao product of mode `mode`:
    out (shape[mode] x R) = X_(mode) (kr of the other factors). factors: one
    shape[m] x R array per mode (factors[mode] is not read, only its shape).
    mode: 0..N-1, or negative from the end as in numpy (-1 is the last mode,
    -N the first). X may be a file path (read by ``tenfold.read``).

    Host arrays (numpy, or anything numpy takes) give a float64 numpy array.
    GPU arrays (PyTorch / CuPy through DLPack: every factor on one CUDA
    device, all float64 or all float32, row-major) are read in place on the
    device, no host copy; the plan computes in their precision on their GPU,
    and the result comes back on it as an array of the factors' library (or
    in `out`, a GPU array of shape (shape[mode], R) and their dtype). The
    call returns once the result is written (see tenfold._dlpack on
    streams). X itself is a host tensor (copied to the GPU by the plan).
    Mixing host and GPU arrays is an ArgumentError.

    >>> M = tenfold.mttkrp(X, [A, B, C], mode=0)
    >>> M = tenfold.mttkrp(X, [A, B, C], mode=-1)   # the last mode, as mode=2
    >>> Mt = tenfold.mttkrp(X, [torch.from_numpy(F).cuda() for F in (A, B, C)], mode=0)  # a CUDA tensor
    """
    T = _tensor_arg(X)
    mode = _mode(mode, T.ndim)
    factors = list(factors)
    if len(factors) != T.ndim:
        raise ArgumentError(f"factors: {len(factors)} matrices for a tensor of {T.ndim} modes")
    named = [(f"factor {m}", f) for m, f in enumerate(factors)] + [("out", out)]
    gpu = common_device(named)
    if gpu is not None:
        return _mttkrp_gpu(T, factors, mode, gpu, device, threads, out)
    mats = [_matrix(f, f"factor {m}", rows=T.shape[m]) for m, f in enumerate(factors)]
    R = mats[0].shape[1]
    for m, a in enumerate(mats):
        if a.shape[1] != R:
            raise ArgumentError(f"factor {m}: {a.shape[1]} columns, factor 0 has {R}")
    cf = ffi.new("tf_matrix[]", T.ndim)
    for m, a in enumerate(mats):
        _c_matrix(a, cf[m])
    res = _host_out(out, (T.shape[mode], R))
    po = _mttkrp_plan_opts(device, threads, R)
    with _Context(device, 1, None, threads) as ctx:
        po.context = ctx
        _with_plan(T, po, lambda plan: lib.tf_plan_mttkrp(plan, mode, cf, _c_matrix(res)))
    return res


def _host_out(out, shape):
    """out (a writable C-contiguous float64 array of `shape`), or a new one."""
    if out is None:
        return np.empty(shape)
    if not (isinstance(out, np.ndarray) and out.dtype == np.float64 and out.shape == shape
            and out.flags.c_contiguous and out.flags.writeable):
        raise ArgumentError(f"out: expected a writable C-contiguous float64 array of shape {shape}")
    return out


def _mttkrp_plan_opts(device, threads, R, single=False):
    po = ffi.new("tf_plan_opts *")
    lib.tf_plan_opts_default(po)
    po.backend, po.threads, po.rank_hint = _backend(device), _threads(threads), R
    po.precision = lib.TF_SINGLE if single else lib.TF_DOUBLE
    return po


def _with_plan(T, po, run):
    """Builds an MTTKRP plan of T with options po, checks run(plan)'s status, frees the plan."""
    plan = ffi.new("tf_plan **")
    check(lib.tf_plan_build(T._c(), po, plan))
    try:
        check(run(plan[0]))
    finally:
        lib.tf_plan_free(plan[0])


def _gpu_only(device, what):
    _backend(device)
    if device == "cpu":
        raise ArgumentError(f"{what}: device='cpu' with GPU arrays: pass host arrays, or device='gpu' / 'auto'")


def _check_gpu(v, rows, cols, dtype=None):
    """A GpuArray v of rows x cols (cols None: any), of dtype when given."""
    if v.shape[0] != rows:
        raise ArgumentError(f"{v.what}: {v.shape[0]} rows, expected {rows}")
    if cols is not None and (v.shape[1] if len(v.shape) == 2 else 1) != cols:
        raise ArgumentError(f"{v.what}: {v.shape[1]} columns, expected {cols}")
    if dtype is not None and v.dtype != dtype:
        raise ArgumentError(f"{v.what}: {v.dtype} values, expected {dtype} (one precision for all arrays)")


def _mttkrp_gpu(T, factors, mode, gpu, device, threads, out):
    _gpu_only(device, "mttkrp")
    views = []
    try:
        for m, f in enumerate(factors):
            views.append(GpuArray(f, f"factor {m}", 2))
        R, dtype = views[0].shape[1], views[0].dtype
        for m, v in enumerate(views):
            _check_gpu(v, T.shape[m], R, dtype)
        res = out if out is not None else empty_like(views[(mode + 1) % T.ndim], (T.shape[mode], R))
        ov = GpuArray(res, "out", 2, writable=True)
        views.append(ov)
        _check_gpu(ov, T.shape[mode], R, dtype)
        cf = ffi.new("tf_dense[]", T.ndim)
        for m in range(T.ndim):
            views[m].dense(cf[m])
        po = _mttkrp_plan_opts("gpu", threads, R, single=views[0].single)
        with _Context("gpu", 1, None, threads, gpu=gpu[1]) as ctx:
            po.context = ctx
            _with_plan(T, po, lambda plan: lib.tf_plan_mttkrp_dense(plan, mode, cf, ov.dense(), ffi.NULL))
    finally:
        for v in views:
            v.release()
    return res


def _mode(mode, N):
    if not isinstance(mode, (int, np.integer)) or isinstance(mode, bool) or not -N <= mode < N:
        raise ArgumentError(f"mode: expected an integer 0..{N - 1} (or -{N}..-1 from the end), got {mode!r}")
    return int(mode) % N


def ttm(X: TensorLike, U: np.ndarray, mode: int, device: Device = "auto", threads: Optional[int] = None) -> Tensor:
    """Sparse tensor times matrix, Y = X x_mode U with U of shape
    (X.shape[mode], R), the C library's and the CLI's convention (pyttb's and
    tensorly's matrix is U.T): Y(.., r, ..) = sum_i X(.., i, ..) U(i, r).
    Returns a Tensor whose mode `mode` has length R (exact zeros left out).
    mode: 0..N-1, or negative from the end as in numpy (-1 is the last mode,
    -N the first). X may be a file path (read by ``tenfold.read``).

    >>> Y = tenfold.ttm(X, U, mode=1)
    >>> Y = tenfold.ttm(X, V, mode=-1)   # the last mode
    """
    T = _tensor_arg(X)
    mode = _mode(mode, T.ndim)
    Ua = _matrix(U, "U", rows=T.shape[mode])
    o = ffi.new("tf_spttm_opts *")
    lib.tf_spttm_opts_default(o)
    o.backend, o.threads = _backend(device), _threads(threads)
    y = ffi.new("tf_semisparse *")
    t = ffi.new("tf_tensor *")
    Xc = T._c()
    with _Context(device, 1, None, threads) as ctx:
        o.context = ctx
        check(lib.tf_spttm(Xc, mode, _c_matrix(Ua), o, y))
    try:
        check(lib.tf_semisparse_to_tensor(y, t))
        return Tensor._from_c(t)
    finally:
        lib.tf_semisparse_free(y)
        lib.tf_tensor_free(t)


def sddmm(S: TensorLike, A: Any, B: Any, alpha: float = 1.0, beta: float = 0.0, scale: bool = False,
          device: Device = "auto", threads: Optional[int] = None, out: Any = None) -> Any:
    """Sampled dense-dense matrix product, as ``tenfold sddmm``: with S (M x N)
    sparse, A (M x K), B (N x K):  P = alpha (A B^T) o spy(S) + beta S, or with
    scale=True  P = alpha (A B^T) o S + beta S. Returns P as S's type (scipy
    format, sparse.COO, pyttb.sptensor, Tensor, tuple or dense array), with S's
    non-zeros in S's order.

    A and B in GPU memory (PyTorch / CuPy through DLPack, both on one CUDA
    device, both float64 or both float32, row-major): the SDDMM runs on that
    GPU in their precision, reading them in place (no host round trip), and
    returns P's values (nnz,) in S's non-zero order on the device, as an
    array of A's library -- or in `out`, a GPU array of nnz values of their
    dtype. S stays a host object (it is planned and uploaded once per call;
    for repeated runs use SDDMMPlan). Returns once P is written. Mixing host
    and GPU arrays is an ArgumentError.

    >>> P = tenfold.sddmm(S, A, B)   # S a scipy.sparse matrix -> the same format
    >>> Pt = tenfold.sddmm(S, torch.from_numpy(A).cuda(), torch.from_numpy(B).cuda())  # a CUDA tensor
    """
    gpu = common_device([("A", A), ("B", B), ("out", out)])
    if gpu is not None:
        _gpu_only(device, "sddmm")
        a = GpuArray(A, "A", 2)
        K, single = a.shape[1], a.single
        a.release()
        with _SharedContext(gpu[1], _threads(threads)) as ctx, \
                SDDMMPlan(S, K, alpha=alpha, beta=beta, scale=scale, device="gpu",
                          precision="single" if single else "double", threads=threads, gpu=gpu[1],
                          _once=True, _context=ctx) as plan:  # one run: no tuning (tf_sddmm_plan_build_once)
            return plan.run(A, B, out=out)
    if out is not None:
        raise ArgumentError("out: sddmm with host arrays returns S's type; out= is for GPU arrays")
    ind, vals, shape = _coo_parts(S)  # S's own order, duplicates kept
    if len(shape) != 2:
        raise ArgumentError(f"sddmm: S has {len(shape)} modes (expected a matrix)")
    T = Tensor.__new__(Tensor)
    T._ind = np.ascontiguousarray(ind, dtype=np.uint32)
    T.values = np.ascontiguousarray(vals, dtype=np.float64)
    T.shape = shape
    Aa = _matrix(A, "A", rows=shape[0])
    Ba = _matrix(B, "B", rows=shape[1])
    if Aa.shape[1] != Ba.shape[1]:
        raise ArgumentError(f"A has {Aa.shape[1]} columns, B {Ba.shape[1]} (expected the same K)")
    o = ffi.new("tf_sddmm_opts *")
    lib.tf_sddmm_opts_default(o)
    o.op = lib.TF_SDDMM_SCALE if scale else lib.TF_SDDMM_SAMPLE
    o.alpha, o.beta = float(alpha), float(beta)
    o.backend, o.threads = _backend(device), _threads(threads)
    P = np.empty(T.nnz)
    Sc = T._c()
    with _Context(device, 1, None, threads) as ctx:
        o.context = ctx
        check(lib.tf_sddmm_coo(Sc, _c_matrix(Aa), _c_matrix(Ba), o,
                               ffi.cast("double *", ffi.from_buffer(P)) if P.size else ffi.NULL, ffi.NULL))
    return _like(S, T, P)


class SDDMMPlan:
    """An SDDMM plan: built once for a pattern S and an inner dimension K,
    run many times with new A and B (ALS, LDA, attention) -- the C library's
    tf_sddmm_plan. The build checks S, chooses the device and, on a GPU,
    tiles S, uploads it and times the candidate kernels; each run then only
    moves A, B and P and launches the kernel chosen.

    S: as for ``tenfold.sddmm`` (any sparse type tenfold takes; its non-zeros
    in its own order, duplicates kept). alpha, beta, scale: as ``sddmm``.
    device 'auto' | 'cpu' | 'gpu'; precision 'double' | 'single' (float
    arithmetic; then A and B may be float32 arrays, taken as they are); gpu:
    the ordinal of the GPU a GPU plan runs on.

    >>> plan = tenfold.SDDMMPlan(S, 32)
    >>> for it in range(10):
    ...     P = plan.run(A, B)          # values in S's order (float64)
    >>> plan.like(P)                    # on S's pattern, as S's type
    >>> plan.close()                    # or: with tenfold.SDDMMPlan(...) as plan:

    GPU arrays (PyTorch / CuPy through DLPack) on a GPU plan: run reads A
    and B in place on the device and returns P there (see run).

    >>> plan = tenfold.SDDMMPlan(S, 32, device="gpu")
    >>> P = plan.run(A_cuda, B_cuda)    # a CUDA tensor of nnz values, S's order
    """

    def __init__(self, S: TensorLike, K: int, alpha: float = 1.0, beta: float = 0.0, scale: bool = False,
                 device: Device = "auto", precision: Literal["double", "single"] = "double",
                 memory_limit: Union[None, int, str] = None, threads: Optional[int] = None, gpu: int = 0,
                 _once: bool = False, _context: Any = None):
        self._plan = None
        self._ctx = None
        if not isinstance(K, (int, np.integer)) or isinstance(K, bool) or K < 1:
            raise ArgumentError(f"K: expected an integer >= 1, got {K!r}")
        self._single = _choice(precision, {"double": False, "single": True}, "precision")
        csr = _csr_arrays(S)
        if csr is not None:  # scipy CSR in CSR order: its arrays as they are
            rowptr, colind, cvals, shape = csr
            self._ind_lazy, self._perm = None, None
        else:
            ind, vals, shape = _coo_parts(S)  # S's own order, duplicates kept
            if len(shape) != 2:
                raise ArgumentError(f"SDDMMPlan: S has {len(shape)} modes (expected a matrix)")
            self._ind_lazy = np.ascontiguousarray(ind, dtype=np.uint32)
            rowptr, colind, cvals = self._csr_order(self._ind_lazy, vals, shape)
        self._S, self.shape, self.K = S, tuple(shape), int(K)
        self._rowptr, self._colind = (rowptr, colind) if csr is not None else (None, None)  # views of S's
        self.nnz = int(colind.shape[0])
        c = ffi.new("tf_csr *")
        c.rows, c.cols, c.nnz = shape[0], shape[1], self.nnz
        c.rowptr = ffi.cast("uint64_t *", ffi.from_buffer(rowptr))
        c.colind = ffi.cast("uint32_t *", ffi.from_buffer(colind)) if self.nnz else ffi.NULL
        c.vals = ffi.cast("double *", ffi.from_buffer(cvals)) if self.nnz else ffi.NULL
        o = ffi.new("tf_sddmm_opts *")
        lib.tf_sddmm_opts_default(o)
        o.op = lib.TF_SDDMM_SCALE if scale else lib.TF_SDDMM_SAMPLE
        o.alpha, o.beta = float(alpha), float(beta)
        o.backend, o.threads = _backend(device), _threads(threads)
        o.precision = lib.TF_SINGLE if self._single else lib.TF_DOUBLE
        if _context is not None:  # borrowed (a one-shot call's shared context)
            o.context = _context.ptr[0]
        else:
            self._ctx = _Context(device, 1, memory_limit, threads, gpu=gpu)
            o.context = self._ctx.ptr[0]
        plan = ffi.new("tf_sddmm_plan **")
        try:
            build = lib.tf_sddmm_plan_build_once if _once else lib.tf_sddmm_plan_build
            check(build(c, self.K, o, plan))  # keeps its own copy of S
        except BaseException:
            self.close()
            raise
        self._plan = plan[0]
        info = ffi.new("tf_sddmm_info *")
        check(lib.tf_sddmm_plan_info(self._plan, info))
        self.device = "gpu" if info.backend == lib.TF_BACKEND_GPU else "cpu"
        self.note = ffi.string(info.note).decode()
        self._p = np.empty(self.nnz) if self._perm is not None else None  # P in CSR order

    def _csr_order(self, ind, vals, shape):
        """S's non-zeros in CSR order (rows, then columns; stable) for the C
        plan, whose P comes back in it; self._perm maps it to S's order (None:
        S is in it already, one pass to see, no sort)."""
        nnz = int(ind.shape[1])
        r, c = ind[0], ind[1]
        if nnz < 2 or bool(np.all((r[1:] > r[:-1]) | ((r[1:] == r[:-1]) & (c[1:] >= c[:-1])))):
            self._perm, order = None, slice(None)
        else:
            key = (r.astype(np.uint64) << np.uint64(32)) | c.astype(np.uint64)
            order = np.argsort(key, kind="stable")
            self._perm = order
            del key
        rows, cols = ind[0][order], ind[1][order]
        rowptr = np.zeros(shape[0] + 1, dtype=np.uint64)
        np.cumsum(np.bincount(rows, minlength=shape[0]), out=rowptr[1:])
        colind = np.ascontiguousarray(cols, dtype=np.uint32)
        cvals = np.ascontiguousarray(np.asarray(vals, dtype=np.float64)[order])
        return rowptr, colind, cvals

    @property
    def _ind(self):
        """S's per-mode indices in S's order (made from the CSR arrays on first need)."""
        if self._ind_lazy is None:
            rows = np.repeat(np.arange(self.shape[0], dtype=np.uint32),
                             np.diff(self._rowptr).astype(np.int64))
            self._ind_lazy = np.vstack([rows, self._colind])
        return self._ind_lazy

    def _operand(self, a, what, rows):
        """(array, tf_dense): float32 arrays as they are on a single-precision plan, else float64."""
        if self._single and isinstance(a, np.ndarray) and a.dtype == np.float32 and a.ndim == 2 \
                and a.flags.c_contiguous:
            if a.shape[0] != rows:
                raise ArgumentError(f"{what}: {a.shape[0]} rows, expected {rows}")
            if not np.all(np.isfinite(a)):
                raise ArgumentError(f"{what}: has non-finite entries (expected finite values)")
            prec, ctype = lib.TF_SINGLE, "float *"
        else:
            a = _matrix(a, what, rows=rows)
            prec, ctype = lib.TF_DOUBLE, "double *"
        if a.shape[1] != self.K:
            raise ArgumentError(f"{what}: {a.shape[1]} columns, expected {self.K} (the plan's K)")
        d = ffi.new("tf_dense *")
        d.data = ffi.cast(ctype, ffi.from_buffer(a)) if a.size else ffi.NULL
        d.rows, d.cols, d.ld, d.precision, d.memory = a.shape[0], a.shape[1], a.shape[1], prec, lib.TF_MEMORY_HOST
        return a, d

    def run(self, A: Any, B: Any, out: Any = None) -> Any:
        """P's values (float64, S's non-zeros in S's order) for A (M x K) and B
        (N x K); into `out` (a float64 array of nnz values) when given.

        With A and B in GPU memory (PyTorch / CuPy through DLPack, on the
        plan's GPU, of its precision: float32 on a 'single' plan, else
        float64; row-major) they are read in place and P comes back on the
        device: a new array of A's library, or `out` (a GPU array of nnz
        values of that dtype). Returns once P is written. Mixing host and
        GPU arrays is an ArgumentError; GPU arrays are not checked for NaN.
        """
        if self._plan is None:
            raise ArgumentError("SDDMMPlan.run: the plan is closed")
        if common_device([("A", A), ("B", B), ("out", out)]) is not None:
            return self._run_gpu(A, B, out)
        Aa, da = self._operand(A, "A", self.shape[0])
        Ba, db = self._operand(B, "B", self.shape[1])
        if out is None:
            out = np.empty(self.nnz)
        elif not (isinstance(out, np.ndarray) and out.dtype == np.float64 and out.shape == (self.nnz,)
                  and out.flags.c_contiguous and out.flags.writeable):
            raise ArgumentError(f"out: expected a writable contiguous float64 array of shape ({self.nnz},)")
        target = out if self._perm is None else self._p
        dp = ffi.new("tf_dense *")
        dp.data = ffi.cast("double *", ffi.from_buffer(target)) if self.nnz else ffi.NULL
        dp.rows, dp.cols, dp.ld, dp.precision, dp.memory = self.nnz, 1, 1, lib.TF_DOUBLE, lib.TF_MEMORY_HOST
        check(lib.tf_sddmm_plan_run(self._plan, da, db, dp, ffi.NULL))
        if self._perm is not None:
            out[self._perm] = self._p
        return out

    def _run_gpu(self, A, B, out):
        if self.device != "gpu" and self.nnz:
            raise ArgumentError("SDDMMPlan.run: GPU arrays need a plan on the GPU; this one runs on the CPU"
                                + (f" ({self.note})" if self.note else " (build it with device='gpu')"))
        dtype = np.dtype(np.float32 if self._single else np.float64)
        views = []
        try:
            a = GpuArray(A, "A", 2)
            views.append(a)
            b = GpuArray(B, "B", 2)
            views.append(b)
            _check_gpu(a, self.shape[0], self.K, dtype)
            _check_gpu(b, self.shape[1], self.K, dtype)
            res = out if out is not None else empty_like(a, (self.nnz,))
            o = GpuArray(res, "out", 1, writable=True)
            views.append(o)
            _check_gpu(o, self.nnz, None, dtype)
            # P comes in CSR order: S's order by a scatter on the device when they differ
            if not self.nnz:  # nothing to compute (no plan on a device)
                return res
            p = o if self._perm is None else GpuArray(empty_like(o, (self.nnz,)), "P", 1, writable=True)
            views.append(p)
            check(lib.tf_sddmm_plan_run(self._plan, a.dense(), b.dense(), p.dense(), ffi.NULL))
            if self._perm is not None:
                scatter(res, self._perm, p.obj)
        finally:
            for v in views:
                v.release()
        return res

    def like(self, P: np.ndarray) -> Any:
        """The values P (as run returns them) on S's pattern, as S's type:
        what ``tenfold.sddmm`` returns. P must be a host array."""
        if gpu_device(P) is not None:
            raise ArgumentError("like: P is in GPU memory, and S's type holds host arrays: pass P copied to the "
                                "host (torch: P.cpu().numpy(); cupy: P.get())")
        T = Tensor.__new__(Tensor)
        T._ind, T.values, T.shape = self._ind, np.asarray(P, dtype=np.float64), self.shape
        return _like(self._S, T, T.values)

    def close(self) -> None:
        """Frees the plan (and its device memory) now; run then raises."""
        if self._plan is not None:
            lib.tf_sddmm_plan_free(self._plan)
            self._plan = None
        if self._ctx is not None:
            self._ctx.__exit__(None, None, None)
            self._ctx = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    def __repr__(self):
        state = "closed" if self._plan is None else self.device
        return f"SDDMMPlan(shape={self.shape}, nnz={self.nnz}, K={self.K}, {state})"


def _like(S, T, P):
    """The values P on S's pattern, as S's type."""
    mod = type(S).__module__ or ""
    if isinstance(S, Tensor):
        out = Tensor.__new__(Tensor)
        out._ind, out.values, out.shape = T._ind, P, T.shape
        return out
    if isinstance(S, tuple):
        return (np.asarray(S[0]), P, T.shape)
    if mod.startswith("scipy.sparse"):
        import scipy.sparse

        coo_cls = scipy.sparse.coo_matrix
        if hasattr(scipy.sparse, "sparray") and isinstance(S, scipy.sparse.sparray):
            coo_cls = scipy.sparse.coo_array
        return coo_cls((P, (T._ind[0].astype(np.int64), T._ind[1].astype(np.int64))), shape=T.shape).asformat(S.format)
    if mod.startswith("sparse"):
        import sparse

        return sparse.COO(T._ind.astype(np.int64), P, shape=T.shape)
    if mod.startswith("pyttb"):
        import pyttb

        return pyttb.sptensor(T.coords.astype(np.int64), P.reshape(-1, 1), T.shape)
    out = np.zeros(T.shape)
    out[tuple(T._ind.astype(np.intp))] = P
    return out
