# SPDX-License-Identifier: BSD-3-Clause
"""The input conversion's fast paths (issue 48): zero-copy index arrays, the
canonical test that skips the sort, the linear-index sort -- each against the
copying, sorting path (a plain lexsort reference here) and giving cp_als the
same bits."""
import os
from pathlib import Path

import numpy as np
import pytest

import tenfold
from conftest import random_coo

DATA = Path(os.environ.get("TENFOLD_DATA", "/work/shared/data"))


def reference(coords, vals, keep_zeros=False):
    """Canonical (per-mode uint32 indices, values) as tenfold 0.2 made them:
    lexsort by mode 0, 1, ..., duplicates summed by np.add.reduceat (its
    order of addition), zeros dropped."""
    ind = np.asarray(coords, dtype=np.int64).T
    vals = np.asarray(vals, dtype=np.float64)
    order = np.lexsort(ind[::-1])
    ind, vals = ind[:, order], vals[order]
    new = np.any(ind[:, 1:] != ind[:, :-1], axis=0)
    starts = np.flatnonzero(np.concatenate(([True], new)))
    vals, ind = np.add.reduceat(vals, starts), ind[:, starts]
    keep = np.ones(vals.shape, bool) if keep_zeros else vals != 0
    return ind[:, keep].astype(np.uint32), vals[keep]


def messy_coo(shape, nnz, seed):
    """Shuffled coordinates with duplicates and some explicit zeros."""
    rng = np.random.default_rng(seed)
    if np.prod(shape, dtype=np.float64) < 2**62:
        c, v, _ = random_coo(shape, nnz, seed)
    else:
        c = np.stack([rng.integers(0, n, nnz) for n in shape], axis=1)
        c[nnz // 2:, :2] = c[:nnz - nnz // 2, :2]  # ties in the leading modes
        v = 1.0 + rng.random(nnz)
    dup = rng.integers(0, nnz, nnz // 5)
    c, v = np.vstack([c, c[dup]]), np.concatenate([v, rng.random(dup.size)])
    v[rng.integers(0, v.size, nnz // 10)] = 0.0
    p = rng.permutation(v.size)
    return c[p], v[p]


@pytest.mark.parametrize("shape", [(12, 9, 7), (5, 4, 3, 6), (2**20, 2**20, 2**20, 2**20)])
@pytest.mark.parametrize("keep_zeros", [False, True])
def test_unsorted_input_matches_the_lexsort_reference(shape, keep_zeros):
    # the last shape has 2^80 entries: no 64-bit linear index, the lexsort path
    c, v = messy_coo(shape, 300, seed=len(shape))
    ref_i, ref_v = reference(c, v, keep_zeros)
    X = tenfold.Tensor((c, v, shape), keep_zeros=keep_zeros)
    np.testing.assert_array_equal(X._ind, ref_i)
    np.testing.assert_array_equal(X.values, ref_v)  # the same sums: same order of addition


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint32, np.uint16])
@pytest.mark.parametrize("order", ["C", "F"])
def test_layouts_and_dtypes_give_the_same_tensor(dtype, order):
    c, v, shape = random_coo((40, 30, 20), 500, seed=7)
    base = tenfold.Tensor((np.ascontiguousarray(c, dtype=np.int64), v, shape))
    X = tenfold.Tensor((np.array(c, dtype=dtype, order=order), v, shape))
    np.testing.assert_array_equal(X._ind, base._ind)
    np.testing.assert_array_equal(X.values, base.values)
    assert X._ind.dtype == np.uint32 and X._ind.flags.c_contiguous


def test_canonical_uint32_input_is_not_copied():
    c, v, shape = random_coo((40, 30, 20), 500, seed=8)
    base = tenfold.Tensor((c, v, shape))
    rows = base._ind.copy()  # N x nnz uint32, C order: tenfold's own layout
    vals = base.values.copy()
    X = tenfold.Tensor((rows.T, vals, shape))  # its nnz x N view (Fortran order)
    assert np.shares_memory(X._ind, rows) and np.shares_memory(X.values, vals)
    np.testing.assert_array_equal(X._ind, base._ind)
    # a non-canonical one is copied (sorted), the input left as it was
    rev = rows[:, ::-1].copy()
    Y = tenfold.Tensor((rev.T, vals[::-1].copy(), shape))
    assert not np.shares_memory(Y._ind, rev)
    np.testing.assert_array_equal(Y._ind, base._ind)
    np.testing.assert_array_equal(rev, rows[:, ::-1])


@pytest.mark.parametrize("coords, match", [
    (np.array([[0, 2**32]], dtype=np.int64), r"mode 1 index 4294967296 is outside 0\.\.2"),
    (np.array([[0, 1], [-3, 0]], dtype=np.int32), r"mode 0 index -3"),
    (np.array([[0, 1], [1, 9]], dtype=np.uint32), r"mode 1 index 9 is outside 0\.\.2"),
    (np.asfortranarray(np.array([[5, 1], [1, 2]], dtype=np.int64)), r"mode 0 index 5 is outside 0\.\.1"),
])
def test_out_of_range_on_every_path(coords, match):
    with pytest.raises(tenfold.ArgumentError, match=match):
        tenfold.Tensor((coords, np.ones(coords.shape[0]), (2, 3)))


def cp(X, start):
    return tenfold.cp_als(X, 6, n_iter_max=8, tol=0.0, init=[f.copy() for f in start], device="cpu")


def same_result(a, b):
    assert a.fit_history == b.fit_history
    np.testing.assert_array_equal(a.weights, b.weights)
    for fa, fb in zip(a.factors, b.factors):
        np.testing.assert_array_equal(fa, fb)


def test_cp_als_identical_from_every_input():
    c, v = messy_coo((30, 25, 20), 2000, seed=11)
    shape = (30, 25, 20)
    rng = np.random.default_rng(2)
    start = [rng.random((n, 6)) for n in shape]
    ref = cp(tenfold.Tensor((c.astype(np.int64), v, shape)), start)  # sorted, summed: copies
    X = tenfold.Tensor((c, v, shape))
    rows, vals = X._ind.copy(), X.values.copy()
    for inp in [(rows.T, vals, shape),  # zero-copy
                (np.asfortranarray(rows.T.astype(np.int64)), vals, shape),
                (rows.T.astype(np.int32), vals, shape),
                (np.ascontiguousarray(rows.T, dtype=np.int64), vals, shape)]:
        same_result(cp(inp, start), ref)


@pytest.mark.parametrize("name", ["enron-igraphdata", "collegemsg"])
def test_real_data_zero_copy_and_pyttb(name):
    path = DATA / f"{name}.tns.xz"
    if not path.exists():
        pytest.skip(f"{path} not there (TENFOLD_DATA)")
    X = tenfold.read(path)
    rng = np.random.default_rng(0)
    start = [rng.random((n, 6)) for n in X.shape]
    ref = cp(X, start)
    # the file's order reversed: the sort path; C-order int64: the converting path
    c64 = np.ascontiguousarray(X.coords, dtype=np.int64)
    same_result(cp((c64[::-1].copy(), X.values[::-1].copy(), X.shape), start), ref)
    same_result(cp((c64, X.values, X.shape), start), ref)
    Z = tenfold.Tensor((X._ind.T, X.values, X.shape))
    assert np.shares_memory(Z._ind, X._ind)
    same_result(cp(Z, start), ref)
    pyttb = pytest.importorskip("pyttb")
    S = pyttb.sptensor(c64, X.values.reshape(-1, 1), X.shape)
    same_result(cp(S, start), ref)


def test_results_taken_over_from_c_outlive_the_result():
    import gc

    c, v, shape = random_coo((30, 20, 10), 400, seed=5)
    X = tenfold.Tensor((c, v, shape))
    a = tenfold.cp_als(X, 4, n_iter_max=5, random_state=3)
    b = tenfold.cp_als(X, 4, n_iter_max=5, random_state=3)
    assert all(f.flags.writeable and f.flags.c_contiguous and f.dtype == np.float64 for f in a.factors)
    kept = a.factors[1][2:5]  # a view: keeps the C buffer alive
    w = a.weights
    del a
    gc.collect()
    junk = [np.full((30, 4), np.nan) for _ in range(50)]  # reuse of freed memory would show
    np.testing.assert_array_equal(kept, b.factors[1][2:5])
    np.testing.assert_array_equal(w, b.weights)
    kept[0, 0] = 7.0  # writable, its own memory
    assert b.factors[1][2, 0] != 7.0 and len(junk) == 50
