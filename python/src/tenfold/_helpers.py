# SPDX-License-Identifier: BSD-3-Clause
"""Kruskal and sparse tensor helpers a pyttb user reaches for (issue 43), on
tenfold's own types and without densifying.

Kruskal tensors: anything ``cp_als`` returns or takes as a start -- a
``CPResult``, a ``(weights, factors)`` pair, a tensorly ``CPTensor`` or a
``pyttb.ktensor``; the functions that change one return a new
``(weights, factors)`` pair (float64 arrays of their own) and never change
their input. Sparse tensors: a ``tenfold.Tensor`` or anything ``Tensor``
takes. Modes are 0-based, as in pyttb; the definitions are pyttb's
(``ktensor.norm``, ``sptensor.ttv``, ...), the kernels tenfold's C library.
"""
from __future__ import annotations

import warnings
from math import prod
from typing import Any, List, Optional, Sequence, Tuple, Union

import numpy as np

from ._errors import ArgumentError, check
from ._tenfold_cffi import ffi, lib
from ._tensor import Tensor, TensorLike, as_tensor

KTensor = Tuple[np.ndarray, List[np.ndarray]]
FULL_LIMIT = 2**27  # entries full() makes without force=True (1 GiB of float64)

# ------------------------------------------------------------ Kruskal tensors


def _is_ktensor(K) -> bool:
    if hasattr(K, "factor_matrices") and hasattr(K, "weights"):  # pyttb.ktensor
        return True
    if hasattr(K, "factors") and hasattr(K, "weights"):  # CPResult, tensorly CPTensor
        return True
    return isinstance(K, tuple) and len(K) == 2 and not isinstance(K[1], np.ndarray) and \
        isinstance(K[1], (list, tuple))


def _ktensor(K, what="K") -> KTensor:
    """(weights, factors) as float64 arrays of their own, checked."""
    if hasattr(K, "factor_matrices") and hasattr(K, "weights"):
        weights, factors = K.weights, K.factor_matrices
    elif hasattr(K, "factors") and hasattr(K, "weights"):
        weights, factors = K.weights, K.factors
    elif isinstance(K, tuple) and len(K) == 2:
        weights, factors = K
    else:
        raise ArgumentError(f"{what}: expected a Kruskal tensor (a CPResult, a (weights, factors) pair, a tensorly "
                            f"CPTensor or a pyttb.ktensor), got {type(K).__name__}")
    try:
        factors = [np.array(f, dtype=np.float64, order="C") for f in factors]
    except (TypeError, ValueError):
        raise ArgumentError(f"{what}: the factors must be real 2-D arrays") from None
    if not 2 <= len(factors) <= lib.TF_MAX_ORDER:
        raise ArgumentError(f"{what}: {len(factors)} factors (tenfold takes {lib.TF_MIN_ORDER}..{lib.TF_MAX_ORDER})")
    for n, f in enumerate(factors):
        if f.ndim != 2:
            raise ArgumentError(f"{what}: factor {n} has shape {f.shape} (expected a 2-D array)")
    R = factors[0].shape[1]
    weights = np.ones(R) if weights is None else np.array(weights, dtype=np.float64).reshape(-1)
    for n, f in enumerate(factors):
        if f.shape[1] != weights.shape[0] or f.shape[0] < 1:
            raise ArgumentError(f"{what}: factor {n} is {f.shape[0]} x {f.shape[1]}, expected {weights.shape[0]} "
                                "columns (one per weight) and at least one row")
        if not np.all(np.isfinite(f)):
            raise ArgumentError(f"{what}: factor {n} has non-finite entries")
    if weights.shape[0] < 1:
        raise ArgumentError(f"{what}: no components (rank 0)")
    if not np.all(np.isfinite(weights)):
        raise ArgumentError(f"{what}: the weights have non-finite entries")
    return weights, factors


def _c_ktensor(weights, factors):
    """A tf_ktensor over the arrays (keep them alive while it is used)."""
    k = ffi.new("tf_ktensor *")
    k.order, k.rank = len(factors), weights.shape[0]
    for m, f in enumerate(factors):
        k.dims[m] = f.shape[0]
        k.factors[m].rows, k.factors[m].cols = f.shape
        k.factors[m].data = ffi.cast("double *", ffi.from_buffer(f))
    setattr(k, "lambda", ffi.cast("double *", ffi.from_buffer(weights)))  # a Python keyword
    return k


def _free_doubles(p):
    m = ffi.new("tf_matrix *")
    m.data = p
    lib.tf_matrix_free(m)  # tf_free: the allocator that made it


def _adopt(ptr, shape):
    """A float64 numpy array over C memory of the library's allocator that it
    now owns (no copy): freed when the array and its views are gone."""
    n = int(np.prod(shape, dtype=np.int64))
    if n == 0 or ptr == ffi.NULL:
        if ptr != ffi.NULL:
            _free_doubles(ptr)
        return np.zeros(shape)
    p = ffi.gc(ffi.cast("double *", ptr), _free_doubles, size=8 * n)
    return np.frombuffer(ffi.buffer(p, 8 * n), dtype=np.float64).reshape(shape)


def _from_c_ktensor(k):
    """(weights, factors): a method's result tf_ktensor's arrays themselves,
    taken over (no copy; k's pointers cleared, so tf_ktensor_free(k) after
    frees only the rest)."""
    R = int(k.rank)
    weights = _adopt(getattr(k, "lambda"), (R,))
    setattr(k, "lambda", ffi.NULL)
    factors = []
    for m in range(int(k.order)):
        f = k.factors[m]
        factors.append(_adopt(f.data, (int(f.rows), int(f.cols))))
        f.data = ffi.NULL
    return weights, factors


def _shape(factors):
    return tuple(int(f.shape[0]) for f in factors)


def _tensor_and_ktensor(X, K, fn):
    T, (w, fs) = as_tensor(X), _ktensor(K)
    if T.shape != _shape(fs):
        raise ArgumentError(f"{fn}: the tensor has shape {T.shape}, the Kruskal tensor {_shape(fs)}")
    return T, w, fs


def model_values(X: TensorLike, K: Any) -> np.ndarray:
    """The model K at the non-zeros of X: ``m[j] = sum_r w_r prod_n A_n[i_jn, r]``
    for each non-zero j of ``tenfold.as_tensor(X)`` (in that order), computed in
    one OpenMP pass in C (tf_model_values) -- the kernel of the inner product,
    CP-APR and GCP.

    >>> m = tenfold.model_values(X, res)   # res = tenfold.cp_als(X, 8)
    """
    T, w, fs = _tensor_and_ktensor(X, K, "model_values")
    out = np.empty(T.nnz)
    if T.nnz:
        check(lib.tf_model_values(T._c(), _c_ktensor(w, fs), ffi.cast("double *", ffi.from_buffer(out))))
    return out


def innerprod(A: Any, B: Any) -> float:
    """Inner product of a Kruskal tensor and a sparse tensor (either order),
    ``sum_j x_j m_j`` over the non-zeros of the sparse one, as pyttb's
    ``ktensor.innerprod(sptensor)``; of two Kruskal tensors, pyttb's
    ``sum(w w'^T * prod_n A_n^T B_n)``; of two sparse tensors, the sum of
    products over their common non-zeros.

    >>> tenfold.innerprod(res, X)
    """
    if _is_ktensor(A) and _is_ktensor(B):
        (wa, fa), (wb, fb) = _ktensor(A, "A"), _ktensor(B, "B")
        if _shape(fa) != _shape(fb):
            raise ArgumentError(f"innerprod: shapes {_shape(fa)} and {_shape(fb)} differ")
        M = np.outer(wa, wb)
        for a, b in zip(fa, fb):
            M = M * (a.T @ b)
        return float(np.sum(M))
    if _is_ktensor(A) or _is_ktensor(B):
        X, K = (B, A) if _is_ktensor(A) else (A, B)
        T, w, fs = _tensor_and_ktensor(X, K, "innerprod")
        out = ffi.new("double *")
        check(lib.tf_ktensor_innerprod(T._c(), _c_ktensor(w, fs), out))
        return float(out[0])
    Ta, Tb = as_tensor(A), as_tensor(B)
    if Ta.shape != Tb.shape:
        raise ArgumentError(f"innerprod: shapes {Ta.shape} and {Tb.shape} differ")
    ca, cb = np.ascontiguousarray(Ta.coords), np.ascontiguousarray(Tb.coords)
    va = ca.view([("", ca.dtype)] * ca.shape[1]).reshape(-1) if Ta.nnz else np.empty(0)
    vb = cb.view([("", cb.dtype)] * cb.shape[1]).reshape(-1) if Tb.nnz else np.empty(0)
    _, ia, ib = np.intersect1d(va, vb, assume_unique=True, return_indices=True)
    return float(np.dot(Ta.values[ia], Tb.values[ib]))


def norm(X: Any) -> float:
    """Frobenius norm: of a Kruskal tensor from its R x R Grams, never formed
    densely (pyttb ``ktensor.norm``: ``sqrt(|sum_rs w_r w_s prod_n (A_n^T
    A_n)_rs|)``, tf_ktensor_norm); of a sparse tensor, of its values
    (tf_tensor_norm, safe from overflow).

    >>> tenfold.norm(res), tenfold.norm(X)
    """
    if _is_ktensor(X):
        w, fs = _ktensor(X)
        out = ffi.new("double *")
        check(lib.tf_ktensor_norm(_c_ktensor(w, fs), out))
        return float(out[0])
    T = as_tensor(X)
    return float(lib.tf_tensor_norm(T._c()))


def full(K: Any, force: bool = False) -> np.ndarray:
    """The dense numpy array of a Kruskal tensor (pyttb ``ktensor.full``):
    ``sum_r w_r a_1r o a_2r o ... o a_Nr``, as one matrix product of the
    Khatri-Rao products of the first and the last modes. Refuses (ArgumentError)
    a tensor of more than 2**27 entries (1 GiB) unless ``force=True``.

    >>> Y = tenfold.full(res)            # shape res.factors[n].shape[0] for each n
    """
    w, fs = _ktensor(K)
    shape = _shape(fs)
    n = prod(shape)
    if n > FULL_LIMIT and not force:
        raise ArgumentError(f"full: the dense tensor {shape} has {n} entries ({n * 8 / 2**30:.1f} GiB), more than "
                            f"2**27; pass force=True to make it anyway")
    N = len(fs)
    split = min(range(1, N), key=lambda i: prod(shape[:i]) + prod(shape[i:]))

    def khatri_rao(mats):
        out = mats[0]
        for a in mats[1:]:
            out = (out[:, None, :] * a[None, :, :]).reshape(-1, a.shape[1])
        return out

    left, right = khatri_rao(fs[:split]) * w, khatri_rao(fs[split:])
    return (left @ right.T).reshape(shape)


def normalize(K: Any, weight_factor: Union[None, int, str] = None, sort: bool = False, normtype: float = 2,
              mode: Optional[int] = None) -> KTensor:
    """pyttb ``ktensor.normalize`` on a copy: every factor column divided by
    its norm (``normtype``, numpy's ``ord``; 2 by default) and the weights
    multiplied by it; then negative weights made positive by flipping the
    column of factor 0; ``weight_factor`` (a mode, or 'all' for an equal share
    of every factor) absorbs the weights again; ``sort=True`` orders the
    components by weight, descending. ``mode``: normalize that factor alone
    (nothing else happens then). Returns (weights, factors).

    >>> w, A = tenfold.normalize(res, sort=True)
    """
    w, fs = _ktensor(K)
    N, R = len(fs), w.shape[0]
    if mode is not None:
        if not isinstance(mode, (int, np.integer)) or not 0 <= mode < N:
            raise ArgumentError(f"normalize: mode {mode!r} is not in 0..{N - 1}")
        modes = [int(mode)]
    else:
        modes = range(N)
    for n in modes:
        for r in range(R):
            t = np.linalg.norm(fs[n][:, r], ord=normtype)
            if t > 0:
                fs[n][:, r] = 1.0 / t * fs[n][:, r]
            w[r] = w[r] * t
    if mode is not None:
        return w, fs
    neg = w < 0
    fs[0][:, neg] = -fs[0][:, neg]
    w[neg] = -w[neg]
    if weight_factor == "all":
        D = np.power(w, 1.0 / N)
        fs = [f * D for f in fs]
        w = np.ones(R)
    elif weight_factor is not None:
        if not isinstance(weight_factor, (int, np.integer)) or not 0 <= weight_factor < N:
            raise ArgumentError(f"normalize: weight_factor {weight_factor!r} is not 'all' or a mode in 0..{N - 1}")
        fs[weight_factor] = fs[weight_factor] * w
        w = np.ones(R)
    if sort and R > 1:
        return arrange((w, fs), permutation=np.argsort(w)[::-1])
    return w, fs


def arrange(K: Any, permutation: Optional[Sequence[int]] = None, weight_factor: Optional[int] = None) -> KTensor:
    """pyttb ``ktensor.arrange`` on a copy: with a permutation, the components
    reordered by it (component r of the result is component permutation[r]);
    without one, normalized (``normalize``) and sorted by weight, descending,
    the weights then absorbed into factor ``weight_factor`` when given. Returns
    (weights, factors).

    >>> w, A = tenfold.arrange(res)                  # largest weight first
    >>> w, A = tenfold.arrange(res, [2, 0, 1])
    """
    w, fs = _ktensor(K)
    if permutation is not None:
        if weight_factor is not None:
            raise ArgumentError("arrange: give a permutation or a weight_factor, not both")
        p = np.asarray(permutation)
        if p.shape != (w.shape[0],) or p.dtype.kind not in "iu" or \
                not np.array_equal(np.sort(p), np.arange(w.shape[0])):
            raise ArgumentError(f"arrange: permutation must be a permutation of 0..{w.shape[0] - 1}, "
                                f"got {permutation!r}")
        return w[p], [f[:, p] for f in fs]
    w, fs = normalize((w, fs))
    p = np.argsort(w)[::-1]
    w, fs = w[p], [f[:, p] for f in fs]
    if weight_factor is not None:
        if not isinstance(weight_factor, (int, np.integer)) or not 0 <= weight_factor < len(fs):
            raise ArgumentError(f"arrange: weight_factor {weight_factor!r} is not a mode in 0..{len(fs) - 1}")
        fs[weight_factor] = fs[weight_factor] * w
        w = np.ones_like(w)
    return w, fs


def fixsigns_inplace(fs: List[np.ndarray]) -> None:
    """pyttb's ktensor.fixsigns() without another ktensor, on the factor arrays
    themselves: per component, the columns whose largest-magnitude entry is
    negative flipped, in pairs (so the model is unchanged). One pass in C
    (tf_ktensor_fixsigns) over arrays that are C-contiguous float64 already
    (a method's results), else over contiguous copies written back."""
    if not fs or fs[0].shape[1] == 0:
        return
    work = [f if f.dtype == np.float64 and f.flags.c_contiguous and f.flags.writeable
            else np.ascontiguousarray(f, dtype=np.float64) for f in fs]
    check(lib.tf_ktensor_fixsigns(_c_ktensor(np.ones(fs[0].shape[1]), work)))
    for f, w in zip(fs, work):
        if w is not f:
            f[...] = w


def fixsigns(K: Any, other: Any = None) -> KTensor:
    """pyttb ``ktensor.fixsigns`` on a copy. Alone: in every component, the
    largest-magnitude entry of each factor column made positive where the
    signs can be flipped in pairs (the model is unchanged). With ``other``
    (a Kruskal tensor of the same shape and at most as many components):
    both normalized, then in component r of K the columns whose inner
    product with other's column r is negative flipped, in pairs (an odd
    count: one more or one fewer, as the Tensor Toolbox decides -- pyttb
    1.8's port flips an odd number there, changing the model; this does
    not). Returns (weights, factors).

    >>> w, A = tenfold.fixsigns(res)
    """
    w, fs = _ktensor(K)
    N, R = len(fs), w.shape[0]
    if other is None:
        fixsigns_inplace(fs)
        return w, fs
    w, fs = normalize((w, fs))
    wb, fb = normalize(other, )
    if _shape(fb) != _shape(fs):
        raise ArgumentError(f"fixsigns: shapes {_shape(fs)} and {_shape(fb)} differ")
    RB = wb.shape[0]
    if RB > R:
        raise ArgumentError(f"fixsigns: other has {RB} components, K only {R}")
    for r in range(RB):
        score = np.array([fs[n][:, r] @ fb[n][:, r] for n in range(N)])
        idx = np.argsort(score)
        s = score[idx]
        count = int(np.count_nonzero(s < 0))  # the negative scores lead the sorted ones
        if count == 0:
            continue
        if count % 2:
            warnings.warn(f"Trouble fixing signs for mode {r}", stacklevel=2)
            count = count + 1 if count < N and -s[count - 1] > s[count] else count - 1
        for n in idx[:count]:
            fs[n][:, r] = -fs[n][:, r]
    return w, fs


def score(A: Any, B: Any, weight_penalty: bool = True) -> Tuple[float, np.ndarray]:
    """Congruence of two Kruskal tensors of one shape, pyttb ``ktensor.score``
    with greedy matching: both normalized; the congruence of components a
    (of A) and b (of B) is ``prod_n |A_n[:, a]^T B_n[:, b]|``, times ``1 -
    |w_a - w_b| / max(|w_a|, |w_b|)`` with weight_penalty (pyttb's default);
    the best pair is matched, its row and column taken out, R_B times; the
    score is the mean over the matches (1 for a perfect match). A must have
    at least as many components as B. Returns (score, perm): perm[b] is A's
    component matched with B's component b (then A's unmatched ones), so
    ``arrange(normalize(A), perm)`` lines A up with B.

    >>> s, perm = tenfold.score(res, truth)
    """
    wa, fa = normalize(A)
    wb, fb = normalize(B)
    if _shape(fa) != _shape(fb):
        raise ArgumentError(f"score: shapes {_shape(fa)} and {_shape(fb)} differ")
    RA, RB = wa.shape[0], wb.shape[0]
    if RA < RB:
        raise ArgumentError(f"score: A has {RA} components, fewer than B's {RB}")
    C = np.ones((RA, RB))
    for a, b in zip(fa, fb):
        C = C * np.abs(a.T @ b)
    if weight_penalty:
        la, lb = wa[:, None], wb[None, :]
        with np.errstate(invalid="ignore", divide="ignore"):
            P = 1 - np.abs(la - lb) / np.maximum(np.abs(la), np.abs(lb))
        P[(la == 0) & (lb == 0)] = 1
        C = P * C
    perm = -np.ones(RA, dtype=np.int64)
    total = 0.0
    for _ in range(RB):
        i, j = np.unravel_index(np.argmax(C.reshape(-1, order="F")), (RA, RB), order="F")
        total += C[i, j]
        C[i, :] = -10
        C[:, j] = -10
        perm[j] = i
    rest = np.arange(RA)
    perm[RB:] = rest[~np.isin(rest, perm[:RB])]
    return float(total / RB), perm


# --------------------------------------------------------------- sparse tensors

def _modes(N, modes, exclude, what):
    """Sorted modes and, with them, their positions in the given list (pyttb's tt_dimscheck)."""
    if modes is not None and exclude is not None:
        raise ArgumentError(f"{what}: give modes or exclude, not both")
    if exclude is not None:
        ex = np.atleast_1d(np.asarray(exclude))
        if ex.dtype.kind not in "iu" or np.any((ex < 0) | (ex >= N)):
            raise ArgumentError(f"{what}: exclude must hold modes in 0..{N - 1}, got {exclude!r}")
        dims = np.setdiff1d(np.arange(N), ex)
    elif modes is None:
        dims = np.arange(N)
    else:
        dims = np.atleast_1d(np.asarray(modes))
        if dims.dtype.kind not in "iu" or dims.ndim != 1 or np.any((dims < 0) | (dims >= N)):
            raise ArgumentError(f"{what}: modes must be modes in 0..{N - 1}, got {modes!r}")
        if np.unique(dims).size != dims.size:
            raise ArgumentError(f"{what}: a mode is listed twice in {modes!r}")
    if dims.size == 0:
        raise ArgumentError(f"{what}: no mode to work on")
    order = np.argsort(dims, kind="stable")
    return dims[order].astype(np.int64), order


def _multiplicands(items, dims, order, N, what):
    """The items of the sorted modes dims: items[m] when there is one per
    mode, else the items in the order the modes were given."""
    if len(items) == N and dims.size != N:
        return [items[m] for m in dims]
    if len(items) != dims.size:
        raise ArgumentError(f"{what}: {len(items)} given for {dims.size} modes (one per mode, or one for each of the "
                            f"tensor's {N} modes)")
    return [items[i] for i in order]


def _reduced(T, dims, call, what):
    """Runs a C reduction over the modes dims; a Tensor, a vector or a float by the modes left."""
    N = T.ndim
    left = [m for m in range(N) if m not in set(dims.tolist())]
    modes = ffi.new("uint32_t[]", [int(m) for m in dims])
    Xc = T._c()
    if len(left) >= 2:
        t = ffi.new("tf_tensor *")
        check(call(Xc, len(dims), modes, t, ffi.NULL))
        try:
            return Tensor._from_c(t)
        finally:
            lib.tf_tensor_free(t)
    out = np.empty(T.shape[left[0]] if left else 1)
    check(call(Xc, len(dims), modes, ffi.NULL, ffi.cast("double *", ffi.from_buffer(out))))
    return out if left else float(out[0])


def ttv(X: TensorLike, vectors: Any, modes: Any = None, exclude: Any = None) -> Union[Tensor, np.ndarray, float]:
    """Sparse tensor times vectors (pyttb ``sptensor.ttv``): X multiplied in
    each mode m of ``modes`` (default all; or all but ``exclude``) by a vector
    of length X.shape[m], those modes summed away, in one pass in C
    (tf_tensor_ttv). ``vectors``: one vector, or a list with one per mode
    listed (in that order) or one per mode of X. Returns a Tensor over the
    modes left (two or more), a numpy vector (one) or a float (none).

    >>> y = tenfold.ttv(X, [u, v], modes=[0, 2])
    >>> s = tenfold.ttv(X, [a, b, c])        # all modes: a float
    """
    T = as_tensor(X)
    N = T.ndim
    if (isinstance(vectors, np.ndarray) and vectors.ndim == 1) or \
            (isinstance(vectors, (list, tuple)) and vectors and np.ndim(vectors[0]) == 0):
        vectors = [np.asarray(vectors, dtype=np.float64)]
    vectors = list(vectors)
    dims, order = _modes(N, modes, exclude, "ttv")
    vecs = _multiplicands(vectors, dims, order, N, "ttv")
    arrs = []
    for m, v in zip(dims, vecs):
        a = np.ascontiguousarray(np.asarray(v, dtype=np.float64).reshape(-1))
        if a.shape[0] != T.shape[m]:
            raise ArgumentError(f"ttv: the vector of mode {m} has {a.shape[0]} entries, expected {T.shape[m]}")
        if not np.all(np.isfinite(a)):
            raise ArgumentError(f"ttv: the vector of mode {m} has non-finite entries")
        arrs.append(a)
    ptrs = ffi.new("double *[]", [ffi.cast("double *", ffi.from_buffer(a)) for a in arrs])
    return _reduced(T, dims, lambda Xc, n, md, t, d: lib.tf_tensor_ttv(Xc, n, md, ptrs, t, d), "ttv")


_OPS = {"sum": lib.TF_COLLAPSE_SUM, "max": lib.TF_COLLAPSE_MAX, "min": lib.TF_COLLAPSE_MIN}


def collapse(X: TensorLike, modes: Any = None, op: Any = "sum") -> Union[Tensor, np.ndarray, float]:
    """X collapsed over ``modes`` (default all) by ``op`` -- 'sum', 'max' or
    'min' (or np.sum, np.max, np.min, sum, max, min) -- over the stored
    non-zeros, as pyttb's ``sptensor.collapse(dims, fun)``, in C
    (tf_tensor_collapse). Returns a Tensor over the modes left (two or more;
    entries that come out 0 dropped), a numpy vector (one; entries no
    non-zero falls on are 0) or a float (none).

    >>> tenfold.collapse(X, [1, 2])                 # mode-0 slice sums
    >>> tenfold.collapse(X, [0], np.max)
    """
    T = as_tensor(X)
    name = op if isinstance(op, str) else {np.sum: "sum", np.max: "max", np.min: "min", np.amax: "max",
                                           np.amin: "min", sum: "sum", max: "max", min: "min"}.get(op)
    if name not in _OPS:
        raise ArgumentError(f"collapse: op {op!r} is not 'sum', 'max' or 'min'")
    dims, _ = _modes(T.ndim, modes, None, "collapse")
    c = _OPS[name]
    return _reduced(T, dims, lambda Xc, n, md, t, d: lib.tf_tensor_collapse(Xc, n, md, c, t, d), "collapse")


def scale(X: TensorLike, factor: Any, mode: Optional[int] = None) -> Tensor:
    """X with its values scaled (pyttb ``sptensor.scale``): by a number, or by
    a vector along ``mode`` (value at index i of that mode times factor[i]),
    in C (tf_tensor_scale). Entries that become 0 are dropped.

    >>> Y = tenfold.scale(X, 1 / counts, mode=0)
    """
    T = as_tensor(X)
    t = ffi.new("tf_tensor *")
    if np.ndim(factor) == 0:
        alpha = float(factor)
        if mode is not None:
            raise ArgumentError("scale: a number scales every value; mode is for a vector")
        check(lib.tf_tensor_scale(T._c(), 0, ffi.NULL, alpha, t))
    else:
        if not isinstance(mode, (int, np.integer)) or not 0 <= mode < T.ndim:
            raise ArgumentError(f"scale: a vector needs its mode, 0..{T.ndim - 1} (got {mode!r})")
        v = np.ascontiguousarray(np.asarray(factor, dtype=np.float64).reshape(-1))
        if v.shape[0] != T.shape[mode]:
            raise ArgumentError(f"scale: the vector has {v.shape[0]} entries, mode {mode} has length {T.shape[mode]}")
        check(lib.tf_tensor_scale(T._c(), int(mode), ffi.cast("double *", ffi.from_buffer(v)), 1.0, t))
    try:
        return Tensor._from_c(t)
    finally:
        lib.tf_tensor_free(t)


def permute(X: TensorLike, order: Sequence[int]) -> Tensor:
    """X with its modes reordered (pyttb ``sptensor.permute``): mode m of the
    result is mode order[m] of X; sorted, in C (tf_tensor_permute).

    >>> Y = tenfold.permute(X, [2, 0, 1])
    """
    T = as_tensor(X)
    p = np.asarray(order)
    if p.shape != (T.ndim,) or p.dtype.kind not in "iu" or not np.array_equal(np.sort(p), np.arange(T.ndim)):
        raise ArgumentError(f"permute: order must be a permutation of 0..{T.ndim - 1}, got {order!r}")
    t = ffi.new("tf_tensor *")
    check(lib.tf_tensor_permute(T._c(), ffi.new("uint32_t[]", [int(m) for m in p]), t))
    try:
        return Tensor._from_c(t)
    finally:
        lib.tf_tensor_free(t)


def subtensor(X: TensorLike, index: Sequence[Any]) -> Union[Tensor, np.ndarray, float]:
    """The part of X in a box of index ranges, indices re-based (pyttb
    ``X[0:10, :, 5:7]``): ``index`` holds one entry per mode, a slice of step 1
    (negative bounds count from the end, as numpy's) or an integer (that one
    index; the mode is then dropped, as pyttb drops it). In C
    (tf_tensor_subtensor). Returns a Tensor (two or more modes left), a numpy
    vector (one) or a float (none).

    >>> Y = tenfold.subtensor(X, (slice(0, 10), slice(None), slice(5, 7)))
    """
    T = as_tensor(X)
    index = tuple(index) if isinstance(index, (tuple, list)) else (index,)
    if len(index) != T.ndim:
        raise ArgumentError(f"subtensor: {len(index)} index entries for a tensor of {T.ndim} modes")
    lo, hi, keep = [], [], []
    for m, (ix, d) in enumerate(zip(index, T.shape)):
        if isinstance(ix, slice):
            a, b, step = ix.indices(d)
            if step != 1:
                raise ArgumentError(f"subtensor: mode {m}: a slice of step {step} (only ranges of step 1)")
            if a >= b:
                raise ArgumentError(f"subtensor: mode {m}: the range {ix} of a mode of length {d} is empty")
            keep.append(m)
        elif isinstance(ix, (int, np.integer)) and not isinstance(ix, bool):
            a = int(ix) + d if ix < 0 else int(ix)
            if not 0 <= a < d:
                raise ArgumentError(f"subtensor: mode {m}: index {ix} is outside 0..{d - 1}")
            b = a + 1
        else:
            raise ArgumentError(f"subtensor: mode {m}: expected a slice or an integer, got {ix!r}")
        lo.append(a)
        hi.append(b)
    t = ffi.new("tf_tensor *")
    check(lib.tf_tensor_subtensor(T._c(), ffi.new("uint64_t[]", lo), ffi.new("uint64_t[]", hi), t))
    try:
        Y = Tensor._from_c(t)
    finally:
        lib.tf_tensor_free(t)
    if len(keep) == T.ndim:
        return Y
    if len(keep) >= 2:
        out = Tensor.__new__(Tensor)
        out._ind = np.ascontiguousarray(Y._ind[keep])
        out.values, out.shape = Y.values, tuple(Y.shape[m] for m in keep)
        return out
    if len(keep) == 1:
        v = np.zeros(Y.shape[keep[0]])
        v[Y._ind[keep[0]].astype(np.intp)] = Y.values
        return v
    return float(Y.values.sum()) if Y.nnz else 0.0


def ttm_chain(X: TensorLike, matrices: Any, modes: Any = None, exclude: Any = None,
              transpose: bool = False) -> Union[Tensor, np.ndarray]:
    """X multiplied by a matrix in each of several modes: ``tenfold.ttm`` (the
    C SpTTM, tf_spttm) once per mode, in increasing mode order. Matrices are
    tenfold's U of shape (X.shape[m], R_m), as ``tenfold.ttm`` takes them;
    ``transpose=True`` takes pyttb's V of shape (R_m, X.shape[m]) instead, so
    pyttb's ``X.ttm([V0, V2], [0, 2])`` is ``ttm_chain(X, [V0, V2], [0, 2],
    transpose=True)``. ``matrices``: one matrix, or a list with one per mode
    listed (in that order) or one per mode of X; ``modes`` default all (or
    all but ``exclude``). Returns a dense numpy array when every mode was
    multiplied, else a Tensor whose multiplied modes have length R_m
    (semi-sparse: dense along them; exact zeros left out).

    >>> G = tenfold.ttm_chain(X, [U0, U1, U2])            # the dense core
    >>> Y = tenfold.ttm_chain(X, [U1, U2], modes=[1, 2])  # sparse in mode 0
    """
    from ._ops import ttm

    T = as_tensor(X)
    N = T.ndim
    if isinstance(matrices, np.ndarray) and matrices.ndim == 2:
        matrices = [matrices]
    matrices = list(matrices)
    dims, order = _modes(N, modes, exclude, "ttm_chain")
    mats = _multiplicands(matrices, dims, order, N, "ttm_chain")
    Y = T
    for m, U in zip(dims, mats):
        U = np.asarray(U)
        if U.ndim != 2:
            raise ArgumentError(f"ttm_chain: the matrix of mode {m} has shape {U.shape} (expected 2-D)")
        Y = ttm(Y, U.T if transpose else U, int(m))
    return Y.to_dense() if dims.size == N else Tensor(Y)  # canonical: sorted by mode 0, 1, ...


# nvecs (a sparse tensor's leading mode vectors) is tenfold.nvecs, in _ops.py
__all__ = ["model_values", "innerprod", "norm", "full", "normalize", "arrange", "fixsigns", "score", "ttv",
           "collapse", "scale", "permute", "subtensor", "ttm_chain"]
