# SPDX-License-Identifier: BSD-3-Clause
"""Tensor: a sparse COO tensor, and the conversions from what Python users hold."""
from __future__ import annotations

from typing import Any, Tuple, Union

import numpy as np

from ._errors import ArgumentError
from ._tenfold_cffi import ffi, lib

MAX_ORDER = lib.TF_MAX_ORDER
MIN_ORDER = lib.TF_MIN_ORDER

# What every function takes as a tensor: a Tensor, a (coords, values, shape)
# tuple, a scipy.sparse matrix, a sparse.COO, a pyttb.sptensor or a numpy array.
TensorLike = Union["Tensor", Tuple[Any, Any, Any], np.ndarray, Any]


class Tensor:
    """A sparse tensor in coordinate form: ``coords`` (nnz x N, 0-based),
    ``values`` (nnz float64) and ``shape``.

    Built canonical, as the C readers make it: non-zeros sorted by mode 0,
    1, ..., duplicates summed and zeros dropped (``canonical=False`` keeps them
    as given; ``keep_zeros=True`` sorts and sums but keeps the entries of
    value 0, observed zeros for ``tenfold.complete``). Indices are stored per mode (N x nnz uint32), the layout of the
    C library, so calls pass them without a copy; ``coords`` is a view.
    Arrays given that need no conversion are used as they are, not copied
    (float64 values, uint32 indices in that layout or its nnz x N Fortran
    transpose, already canonical): the Tensor then shares their memory, and
    tenfold never writes to it (copy an input you will change in place).

    >>> X = tenfold.Tensor(([[0, 1], [2, 0]], [1.5, 2.0], (3, 2)))
    >>> X.nnz, X.shape
    (2, (3, 2))
    """

    __slots__ = ("_ind", "values", "shape")

    def __init__(self, data: Any, values: Any = None, shape: Any = None, *, canonical: bool = True,
                 keep_zeros: bool = False):
        if values is not None or shape is not None:
            data = (data, values, shape)
        if isinstance(data, Tensor):
            ind, vals, shp = data._ind, data.values, data.shape
        else:
            ind, vals, shp = _coo_parts(data)
        if canonical:
            ind, vals = _canonical(ind, vals, keep_zeros, shp)
        self._ind = np.ascontiguousarray(ind, dtype=np.uint32)
        self.values = np.ascontiguousarray(vals, dtype=np.float64)
        self.shape = shp

    @property
    def coords(self) -> np.ndarray:
        """nnz x N array of 0-based indices (a view of the per-mode arrays)."""
        return self._ind.T

    @property
    def nnz(self) -> int:
        return int(self.values.shape[0])

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __repr__(self):
        return f"tenfold.Tensor(shape={self.shape}, nnz={self.nnz})"

    def norm(self) -> float:
        """Frobenius norm."""
        return float(np.linalg.norm(self.values))

    def to_dense(self) -> np.ndarray:
        """The dense numpy array (mind the size)."""
        out = np.zeros(self.shape)
        np.add.at(out, tuple(self._ind.astype(np.intp)), self.values)
        return out

    def to_scipy(self) -> Any:
        """A ``scipy.sparse.coo_matrix`` (order 2 only)."""
        import scipy.sparse

        if self.ndim != 2:
            raise ArgumentError(f"to_scipy: the tensor has {self.ndim} modes (a matrix has 2)")
        return scipy.sparse.coo_matrix((self.values, (self._ind[0], self._ind[1])), shape=self.shape)

    def to_sparse(self) -> Any:
        """A ``sparse.COO`` (pydata sparse)."""
        import sparse

        return sparse.COO(self._ind.astype(np.int64), self.values, shape=self.shape)

    def to_pyttb(self) -> Any:
        """A ``pyttb.sptensor``."""
        import pyttb

        return pyttb.sptensor(self.coords.astype(np.int64), self.values.reshape(-1, 1), self.shape)

    # -- the C view: pointers into this object's arrays (keep it alive) --------
    def _c(self):
        t = ffi.new("tf_tensor *")
        t.order = self.ndim
        t.nnz = self.nnz
        for m, d in enumerate(self.shape):
            t.dims[m] = d
            t.ind[m] = ffi.cast("uint32_t *", ffi.from_buffer(self._ind[m])) if self.nnz else ffi.NULL
        t.vals = ffi.cast("double *", ffi.from_buffer(self.values)) if self.nnz else ffi.NULL
        return t

    @classmethod
    def _from_c(cls, t):
        """A copy of a C tensor (the caller frees it)."""
        N, nnz = t.order, t.nnz
        self = cls.__new__(cls)
        self.shape = tuple(int(t.dims[m]) for m in range(N))
        self._ind = np.empty((N, nnz), dtype=np.uint32)
        self.values = np.empty(nnz, dtype=np.float64)
        if nnz:
            for m in range(N):
                ffi.memmove(ffi.from_buffer(self._ind[m]), t.ind[m], 4 * nnz)
            ffi.memmove(ffi.from_buffer(self.values), t.vals, 8 * nnz)
        return self


def _int_array(a, what):
    a = np.asarray(a)
    if a.dtype.kind not in "iub":
        if a.size == 0:
            return a.astype(np.int64)
        raise ArgumentError(f"{what}: expected integers, got dtype {a.dtype}")
    return a


def _real_values(v, what="values"):
    v = np.asarray(v)
    if v.dtype.kind not in "biuf":
        raise ArgumentError(f"{what}: expected real numbers, got dtype {v.dtype}")
    return v.astype(np.float64, copy=False)


def _check_shape(shape, N, what="shape"):
    try:
        shp = tuple(int(d) for d in shape)
    except (TypeError, ValueError):
        raise ArgumentError(f"{what}: expected a sequence of mode lengths, got {shape!r}") from None
    if len(shp) != N:
        raise ArgumentError(f"{what}: {len(shp)} lengths for coordinates of {N} modes")
    if not MIN_ORDER <= N <= MAX_ORDER:
        raise ArgumentError(f"{what}: {N} modes (tenfold takes {MIN_ORDER}..{MAX_ORDER})")
    for m, d in enumerate(shp):
        if not 1 <= d <= 2**32:
            raise ArgumentError(f"{what}: mode {m} has length {d} (expected 1..2^32)")
    return shp


def _from_coo(coords, values, shape, index_rows=False):
    """(N x nnz per-mode indices, float64 values, shape), checked.

    The indices come back as one C-contiguous N x nnz uint32 array: the array
    given itself (no copy) where it is one already (an N x nnz uint32 array in
    C order, or its nnz x N transpose in Fortran order), else converted in one
    vectorised pass after a range check over the whole input."""
    c = _int_array(coords, "coords")
    v = _real_values(values).reshape(-1)
    if c.ndim != 2:
        raise ArgumentError(f"coords: expected an nnz x N array, got {c.ndim} dimension(s) {c.shape}")
    ind = c if index_rows else c.T
    if ind.shape[1] != v.shape[0]:
        raise ArgumentError(f"coords has {ind.shape[1]} rows, values {v.shape[0]} entries")
    if shape is None:
        shape = tuple(int(x) + 1 for x in ind.max(axis=1)) if v.size else None
        if shape is None:
            raise ArgumentError("an empty tensor needs its shape")
    shp = _check_shape(shape, ind.shape[0])
    if ind.size:
        ind = _uint32_rows(ind, shp)
    else:
        ind = np.zeros(ind.shape, dtype=np.uint32)
    if not np.isfinite(v).all():
        k = int(np.flatnonzero(~np.isfinite(v))[0])
        raise ArgumentError(f"values: entry {k} is {v[k]} (values must be finite)")
    return ind, v, shp


def _range_error(ind, shp):
    """The first mode with an index outside 0..shape-1 (ind: N x nnz, any integers)."""
    for m in range(len(shp)):
        lo, hi = ind[m].min(), ind[m].max()
        if lo < 0 or hi >= shp[m]:
            bad = lo if lo < 0 else hi
            raise ArgumentError(f"coords: mode {m} index {int(bad)} is outside 0..{shp[m] - 1}")


def _uint32_rows(ind, shp):
    """ind (N x nnz integers, any layout) as C-contiguous uint32, range-checked.
    uint32 already: no conversion, per-mode maxima on the rows. Else the whole
    array's minimum and maximum (contiguous passes over the input, whatever its
    layout) decide that the cast is exact, then one casting copy and the
    per-mode maxima on its uint32 rows."""
    if ind.dtype != np.uint32:
        if ind.dtype.kind == "u" and ind.dtype.itemsize < 4:
            pass  # uint8/16: always >= 0 and < 2^32
        else:
            whole = ind.T if ind.T.flags.c_contiguous else ind  # reduce in memory order
            lo, hi = whole.min(), whole.max()
            if lo < 0 or hi >= 2**32:
                _range_error(ind, shp)
        out = np.empty(ind.shape, dtype=np.uint32)
        np.copyto(out, ind, casting="unsafe")
        ind = out
    else:
        ind = np.ascontiguousarray(ind)
    for m in range(len(shp)):
        if shp[m] < 2**32 and ind[m].max() >= shp[m]:
            _range_error(ind, shp)
    return ind


def _coo_parts(X):
    """Per-mode indices, values and shape of anything tenfold takes."""
    if isinstance(X, Tensor):
        return X._ind, X.values, X.shape
    if isinstance(X, tuple) and len(X) == 3:
        return _from_coo(*X)
    mod = type(X).__module__ or ""
    if mod.startswith("scipy.sparse"):
        coo = X.tocoo()
        return _from_coo(np.vstack([coo.row, coo.col]), coo.data, coo.shape, index_rows=True)
    if mod.startswith("sparse") and hasattr(X, "coords") and hasattr(X, "data"):  # pydata sparse
        if not hasattr(X, "fill_value") or X.fill_value != 0:
            raise ArgumentError("sparse.COO: only a fill value of 0 is supported")
        coo = X.asformat("coo") if hasattr(X, "asformat") else X
        return _from_coo(coo.coords, coo.data, coo.shape, index_rows=True)
    if mod.startswith("pyttb") and hasattr(X, "subs") and hasattr(X, "vals"):
        return _from_coo(X.subs, X.vals, X.shape)
    if isinstance(X, np.ndarray) or (hasattr(X, "__array__") and not isinstance(X, (str, bytes, tuple))):
        a = np.asarray(X)
        if a.dtype.kind not in "biuf":
            raise ArgumentError(f"array: expected real numbers, got dtype {a.dtype}")
        nz = np.nonzero(a)
        return _from_coo(np.vstack(nz) if nz else np.zeros((a.ndim, 0)), a[nz], a.shape, index_rows=True)
    raise ArgumentError(
        "expected a tenfold.Tensor, a (coords, values, shape) tuple, a scipy.sparse matrix, "
        f"a sparse.COO, a pyttb.sptensor or a numpy array, got {type(X).__name__}")


def _keys(ind, shape):
    """The row-major linear index of every non-zero (uint64), or None where the
    tensor has 2^64 entries or more."""
    if int(np.prod([int(d) for d in shape], dtype=object)) > 2**64:
        return None
    key = ind[0].astype(np.uint64)
    for m in range(1, len(shape)):
        key *= np.uint64(shape[m])
        key += ind[m]
    return key


def _strictly_sorted(ind):
    """Whether the non-zeros are in strictly increasing lexicographic order
    (sorted by mode 0, 1, ..., no duplicate), one vectorised pass per mode."""
    eq = np.ones(ind.shape[1] - 1, dtype=bool)
    for m in range(ind.shape[0]):
        a, b = ind[m, 1:], ind[m, :-1]
        if (eq & (a < b)).any():
            return False
        eq &= a == b
    return not eq.any()


def _canonical(ind, vals, keep_zeros=False, shape=None):
    """Sorted by mode 0, 1, ..., duplicates summed, zeros dropped unless
    keep_zeros (as tf_tensor_canonicalize, tf_read_opts.keep_zeros).

    Input already in that order (tenfold's files, pyttb's and sparse's COO, a
    Tensor's coords): a cheap vectorised test (increasing linear indices) and no
    sort, no copy. Else a stable sort on the linear index (lexsort over the modes
    where the tensor has 2^64 entries or more): the same order either way."""
    if vals.size > 1:
        key = _keys(ind, shape) if shape is not None else None
        if key is not None:
            if not (key[1:] > key[:-1]).all():
                order = np.argsort(key, kind="stable")
                ind, vals, key = ind[:, order], vals[order], key[order]
                new = key[1:] != key[:-1]
                if not new.all():
                    starts = np.flatnonzero(np.concatenate(([True], new)))
                    vals = np.add.reduceat(vals, starts)
                    ind = ind[:, starts]
        elif not _strictly_sorted(ind):
            order = np.lexsort(ind[::-1])
            ind, vals = ind[:, order], vals[order]
            new = np.any(ind[:, 1:] != ind[:, :-1], axis=0)
            if not new.all():
                starts = np.flatnonzero(np.concatenate(([True], new)))
                vals = np.add.reduceat(vals, starts)
                ind = ind[:, starts]
    if not keep_zeros:
        keep = vals != 0
        if not keep.all():
            ind, vals = ind[:, keep], vals[keep]
    return ind, vals


def as_tensor(X: TensorLike, canonical: bool = True, keep_zeros: bool = False) -> Tensor:
    """X as a Tensor (X itself when it is one already)."""
    if isinstance(X, Tensor):
        return X
    return Tensor(X, canonical=canonical, keep_zeros=keep_zeros)
