# SPDX-License-Identifier: BSD-3-Clause
"""tenfold.tucker (sparse HOOI) and tenfold.ttmc: the fit of every iteration
equal to pyttb's tucker_als from the same start (to 1e-9) on a 3-mode and a
4-mode shared tensor; TTMc equal to pyttb's ttm + tenmat; a planted sparse
tensor of low multilinear rank recovered to fit >= 0.99; the result's
conversions (pyttb ttensor, tensorly TuckerTensor); argument errors."""
import os
from pathlib import Path

import numpy as np
import pytest

import tenfold

SHARED = Path(os.environ.get("TF_TEST_DATA", Path(__file__).resolve().parents[3] / "shared" / "data"))


def _shared(name):
    p = SHARED / name
    if not p.exists():
        pytest.skip(f"{p} not found")
    return tenfold.read(p)


def _pyttb_sptensor(T):
    ttb = pytest.importorskip("pyttb")
    return ttb.sptensor(np.asarray(T.coords, dtype=np.int64), np.asarray(T.values).reshape(-1, 1), T.shape)


def _start(T, ranks, seed):
    rng = np.random.default_rng(seed)
    return [rng.random((T.shape[n], ranks[n])) for n in range(T.ndim)]


def _pyttb_fits(X, ranks, start, iters):
    """pyttb's fit after each of the first `iters` iterations from `start`
    (pyttb prints fits to 7 digits only: one run per iteration count)."""
    ttb = pytest.importorskip("pyttb")
    fits = []
    for k in range(1, iters + 1):
        _, _, out = ttb.tucker_als(X, ranks, stoptol=0.0, maxiters=k, init=[u.copy() for u in start], printitn=0)
        fits.append(out["fit"])
    return fits


@pytest.mark.parametrize("name,subset,ranks", [
    ("enron-igraphdata.tns.xz", None, [4, 5, 6]),
    ("uber-apr14.tns.xz", (slice(None), slice(None), slice(0, 200), slice(0, 300)), [3, 4, 5, 5]),
])
def test_fits_equal_pyttb(name, subset, ranks):
    T = _shared(name)
    if subset is not None:
        T = tenfold.subtensor(T, subset)
    X = _pyttb_sptensor(T)
    start = _start(T, ranks, 7)
    iters = 4
    res = tenfold.tucker(T, ranks, n_iter_max=iters, tol=0.0, init=start)
    assert res.n_iter == iters and len(res.fit_history) == iters
    ref = _pyttb_fits(X, ranks, start, iters)
    np.testing.assert_allclose(res.fit_history, ref, rtol=0, atol=1e-9)
    # the model itself: pyttb's last run from the same start
    ttb = pytest.importorskip("pyttb")
    M, _, _ = ttb.tucker_als(X, ranks, stoptol=0.0, maxiters=iters, init=[u.copy() for u in start], printitn=0)
    for n in range(T.ndim):  # the same subspaces (signs and rotations aside)
        P = res.factors[n] @ res.factors[n].T
        Q = M.factor_matrices[n] @ M.factor_matrices[n].T
        assert np.abs(P - Q).max() < 1e-6


def test_ttmc_equals_pyttb_ttm_tenmat():
    ttb = pytest.importorskip("pyttb")
    T = _shared("enron-igraphdata.tns.xz")
    T = tenfold.subtensor(T, (slice(0, 60), slice(0, 50), slice(0, 90)))
    X = _pyttb_sptensor(T)
    rng = np.random.default_rng(3)
    U = [rng.standard_normal((T.shape[n], 2 + n)) for n in range(3)]
    for n in range(3):
        Y = tenfold.ttmc(T, U, n)
        ref = X.ttm(U, exclude_dims=n, transpose=True)
        ref = ttb.tensor(ref.full().data if hasattr(ref, "full") and not isinstance(ref, ttb.tensor) else ref.data,
                         ref.shape) if not isinstance(ref, ttb.tensor) else ref
        Yref = ref.to_tenmat(rdims=np.array([n])).double()
        assert Y.shape == Yref.shape
        np.testing.assert_allclose(Y, Yref, rtol=1e-12, atol=1e-10 * np.abs(Yref).max())


def _planted(shape, ranks, support, seed):
    """Factors with disjoint supports of `support` rows per column, a dense
    random core: a sparse tensor of multilinear rank `ranks`."""
    rng = np.random.default_rng(seed)
    U = []
    for I, R in zip(shape, ranks):
        A = np.zeros((I, R))
        rows = rng.permutation(I)[:R * support].reshape(R, support)
        for r in range(R):
            A[rows[r], r] = 0.5 + rng.random(support)
        U.append(A)
    G = rng.standard_normal(ranks)
    D = G
    for n, A in enumerate(U):
        D = np.moveaxis(np.tensordot(A, D, axes=(1, n)), 0, n)
    coords = np.argwhere(D != 0)
    return tenfold.Tensor(coords, D[tuple(coords.T)], shape)


@pytest.mark.parametrize("init", ["random", "svd"])
def test_planted_recovered(init):
    T = _planted((80, 60, 50), (3, 4, 2), 5, seed=1)
    assert T.nnz < 0.05 * np.prod(T.shape)
    res = tenfold.tucker(T, [3, 4, 2], init=init, tol=1e-10, n_iter_max=100)
    assert res.fit >= 0.99
    core, factors = res
    assert core.shape == (3, 4, 2) and [f.shape for f in factors] == [(80, 3), (60, 4), (50, 2)]
    for f in factors:
        np.testing.assert_allclose(f.T @ f, np.eye(f.shape[1]), atol=1e-10)
    # the dense model is the tensor (exact multilinear rank)
    dense = np.zeros(T.shape)
    dense[tuple(np.asarray(T.coords).T)] = T.values
    np.testing.assert_allclose(res.to_tensor(), dense, atol=1e-6 * np.abs(dense).max())


def test_conversions():
    T = _planted((20, 15, 12, 10), (2, 2, 3, 2), 3, seed=2)
    res = tenfold.tucker(T, [2, 2, 3, 2], init="hosvd")
    assert res.fit > 0.99 and res.rank == (2, 2, 3, 2)
    full = res.to_tensor()
    try:
        import pyttb
    except ImportError:
        pyttb = None
    if pyttb is not None:
        tt = res.to_pyttb()
        np.testing.assert_allclose(tt.full().data, full, atol=1e-12)
    try:
        import tensorly as tl
    except ImportError:
        tl = None
    if tl is not None:
        np.testing.assert_allclose(tl.tucker_to_tensor(res.to_tensorly()), full, atol=1e-12)
    # a previous result continues the run
    again = tenfold.tucker(T, [2, 2, 3, 2], init=res, n_iter_max=2)
    assert again.fit >= res.fit - 1e-7


def test_callback_history_and_stop():
    T = _planted((30, 20, 10), (2, 2, 2), 4, seed=3)
    seen = []
    res = tenfold.tucker(T, 2, tol=0, n_iter_max=10, callback=lambda it: (seen.append(it.fit), it.iter == 3)[1])
    assert res.stopped and res.n_iter == 3 and seen == res.fit_history
    assert set(res.timings) == {"init", "build", "ttmc", "vectors", "core", "total"}


def test_errors():
    T = _planted((10, 8, 6), (2, 2, 2), 2, seed=4)
    with pytest.raises(tenfold.ArgumentError, match="2 ranks for a tensor of 3 modes"):
        tenfold.tucker(T, [2, 2])
    with pytest.raises(tenfold.ArgumentError, match="the rank of mode 2 is 7"):
        tenfold.tucker(T, [2, 2, 7])
    with pytest.raises(tenfold.ArgumentError, match="more than the product of the other ranks"):
        tenfold.tucker(T, [1, 1, 2])
    if tenfold.gpu_count() == 0:  # one GPU runs it where there is one
        with pytest.raises(tenfold.UnavailableError):
            tenfold.tucker(T, 2, device="gpu")
    with pytest.raises(tenfold.OutOfMemoryError, match="over the limit"):
        tenfold.tucker(T, 2, memory_limit=100)
    with pytest.raises(tenfold.ArgumentError, match="init factor 1: 3 columns"):
        tenfold.tucker(T, 2, init=[None, np.ones((8, 3)), np.ones((6, 2))])
