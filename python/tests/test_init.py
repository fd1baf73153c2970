# SPDX-License-Identifier: BSD-3-Clause
"""Issue 43 (7, 8): CPResult's attributes, a path as cp_als's X, negative modes,
fixsigns as pyttb's, and the nvecs / svd start against pyttb (and tensorly)."""
import inspect
from pathlib import Path

import numpy as np
import pytest

import tenfold
from conftest import REPO, random_coo

UBER = REPO / "data" / "uber-apr14.tns.xz"


# ---------------------------------------------------------------- CPResult

def test_cpresult_attributes_are_documented_and_visible(small3):
    names = ["weights", "factors", "fit", "n_iter", "converged", "stopped", "fit_history", "history", "timings",
             "plan", "note", "rank"]
    for name in names:
        assert name in dir(tenfold.CPResult), name
        assert f"{name} :" in tenfold.CPResult.__doc__, name
    params = inspect.signature(tenfold.CPResult).parameters
    assert "fit_history" in params and "history" not in params and "report" not in params
    res = tenfold.cp_als(small3, 2, n_iter_max=4, tol=0.0)
    assert res.history is res.fit_history and len(res.history) == res.n_iter == 4
    assert set(res.timings) == {"init", "build", "mttkrp", "dense", "fit", "setup", "finish", "total"} and res.timings["init"] == 0
    assert not hasattr(res, "__dict__")  # slots: a misspelt attribute is an error
    with pytest.raises(AttributeError):
        res.histroy = []
    copy = tenfold.CPResult(res.weights, res.factors, fit=res.fit, fit_history=res.fit_history)
    assert copy.rank == 2 and copy.history == res.fit_history and copy.n_iter == 0


def test_cp_als_takes_a_path():
    X = tenfold.read(UBER)
    a = tenfold.cp_als(X, 3, n_iter_max=3, tol=0.0, device="cpu")
    for path in (str(UBER), UBER, Path(str(UBER))):
        b = tenfold.cp_als(path, 3, n_iter_max=3, tol=0.0, device="cpu")
        assert b.fit_history == a.fit_history
    with pytest.raises(tenfold.FileError, match="missing.tns"):
        tenfold.cp_als("missing.tns", 2)


def test_negative_modes(small3):
    X = tenfold.Tensor(small3)
    rng = np.random.default_rng(3)
    F = [rng.random((n, 4)) for n in X.shape]
    np.testing.assert_array_equal(tenfold.mttkrp(X, F, mode=-1), tenfold.mttkrp(X, F, mode=2))
    np.testing.assert_array_equal(tenfold.mttkrp(X, F, mode=-3), tenfold.mttkrp(X, F, mode=0))
    U = rng.random((X.shape[1], 3))
    a, b = tenfold.ttm(X, U, mode=-2), tenfold.ttm(X, U, mode=1)
    assert a.shape == b.shape and np.array_equal(a.values, b.values)
    np.testing.assert_array_equal(tenfold.nvecs(X, -1, 3), tenfold.nvecs(X, 2, 3))
    for f in (tenfold.mttkrp, tenfold.ttm, tenfold.nvecs):
        assert "-1" in f.__doc__ and "negative" in f.__doc__
    with pytest.raises(tenfold.ArgumentError, match=r"0\.\.2 \(or -3\.\.-1"):
        tenfold.mttkrp(X, F, mode=-4)


# ---------------------------------------------------------------- fixsigns

def _ktensor(pyttb, weights, factors):
    return pyttb.ktensor([np.asfortranarray(f.copy()) for f in factors], weights.copy())


@pytest.mark.parametrize("shape", [(5, 4, 3), (6, 5, 4, 3), (7, 2)])
def test_fixsigns_is_pyttbs(shape):
    pyttb = pytest.importorskip("pyttb")
    rng = np.random.default_rng(len(shape))
    for trial in range(20):
        R = 1 + trial % 5
        factors = [rng.standard_normal((n, R)) for n in shape]
        if trial % 4 == 0:  # a tie in magnitude (first max wins) and a zero column
            factors[0][:2, 0] = [-1.5, 1.5] if shape[0] > 1 else factors[0][:2, 0]
            factors[-1][:, R - 1] = 0.0
        weights = rng.random(R) + 0.5
        K = _ktensor(pyttb, weights, factors).fixsigns()
        res = tenfold.CPResult(weights.copy(), [f.copy() for f in factors]).fixsigns()
        for a, b in zip(res.factors, K.factor_matrices):
            np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(res.weights, K.weights)
        # the model is unchanged
        letters = "abcd"[:len(shape)]
        spec = f"r,{','.join(c + 'r' for c in letters)}->{letters}"
        np.testing.assert_allclose(np.einsum(spec, res.weights, *res.factors), np.einsum(spec, weights, *factors),
                                   rtol=0, atol=1e-14)


def _signed(shape, nnz, seed):
    coords, _, shape = random_coo(shape, nnz, seed=seed)
    return tenfold.Tensor((coords, np.random.default_rng(seed).standard_normal(nnz), shape))


def test_cp_als_fixsigns_matches_pyttb():
    # the same signed start on signed data: pyttb's cp_als (arrange, then fixsigns,
    # both its defaults) and tenfold's (fixsigns=True, the default) end at the same
    # weights and factors; fixsigns=False keeps the signs ALS gave
    pyttb = pytest.importorskip("pyttb")
    X = _signed((14, 11, 9), 400, seed=5)
    S = pyttb.sptensor(X.coords.astype(np.int64), X.values.reshape(-1, 1), X.shape)
    rng = np.random.default_rng(8)
    flips = 0
    for trial in range(3):
        start = [rng.standard_normal((n, 3)) for n in X.shape]
        M, _, out = pyttb.cp_als(S, 3, init=pyttb.ktensor([np.asfortranarray(f) for f in start]), maxiters=12,
                                 stoptol=1e-9, printitn=0)
        res = tenfold.cp_als(X, 3, n_iter_max=12, tol=1e-9, init=[f.copy() for f in start], device="cpu")
        raw = tenfold.cp_als(X, 3, n_iter_max=12, tol=1e-9, init=[f.copy() for f in start], device="cpu",
                             fixsigns=False)
        assert res.fit == pytest.approx(out["fit"], abs=1e-10)
        np.testing.assert_allclose(res.weights, M.weights, rtol=1e-10, atol=0)
        for a, b in zip(res.factors, M.factor_matrices):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-10)
        flips += sum(not np.array_equal(a, b) for a, b in zip(res.factors, raw.factors))
    assert flips > 0  # the starts were such that signs had to be fixed


# ---------------------------------------------------------------- nvecs

def _pyttb_nvecs(S, n, r):
    """pyttb's sptensor.nvecs(n, r), real, its columns in decreasing eigenvalue order.

    pyttb returns scipy eigs's complex array (real values here), in the order
    ARPACK gives, which varies from call to call (eigs starts from a random
    vector): the columns are sorted by their eigenvalue ||X_(n)^T v||^2 (numpy,
    from pyttb's subs and vals), as "leading" means and the Tensor Toolbox's eigs
    returns them.
    """
    v = S.nvecs(n, r)
    assert np.abs(np.imag(v)).max() == 0
    v = np.ascontiguousarray(np.real(v))
    subs, vals = np.asarray(S.subs), np.asarray(S.vals).reshape(-1)
    others = [m for m in range(subs.shape[1]) if m != n]
    _, col = np.unique(subs[:, others], axis=0, return_inverse=True)
    col = col.reshape(-1)
    lam = [np.sum(np.bincount(col, weights=vals * v[subs[:, n], j]) ** 2) for j in range(r)]
    return np.ascontiguousarray(v[:, np.argsort(lam)[::-1]])


def _uber_days(days):
    """uber-apr14's first `days` days (all of its dims kept): a small real tensor."""
    X = tenfold.read(UBER)
    keep = X.coords[:, 0] < days
    return tenfold.Tensor((X.coords[keep], X.values[keep], X.shape))


def test_nvecs_matches_pyttb():
    pyttb = pytest.importorskip("pyttb")
    X = tenfold.read(UBER)
    S = pyttb.sptensor(X.coords.astype(np.int64), X.values.reshape(-1, 1), X.shape)
    for n, r in [(0, 8), (1, 8), (2, 6), (3, 6)]:
        u = tenfold.nvecs(str(UBER) if n == 0 else X, n, r)
        v = _pyttb_nvecs(S, n, r)
        assert u.shape == v.shape == (X.shape[n], r)
        # the same vectors, order and signs: the dense path to rounding, the subspace iteration (mode 4) close
        np.testing.assert_allclose(u, v, rtol=0, atol=1e-12 if X.shape[n] <= 1024 else 1e-10)
        np.testing.assert_allclose(u.T @ u, np.eye(r), rtol=0, atol=1e-12)


def test_nvecs_arguments(small3):
    X = tenfold.Tensor(small3)
    with pytest.raises(tenfold.ArgumentError, match="r: expected an integer 1..9"):
        tenfold.nvecs(X, 1, 10)
    with pytest.raises(tenfold.ArgumentError, match="mode"):
        tenfold.nvecs(X, 3, 1)
    assert tenfold.nvecs(X, 1, 9).shape == (9, 9)


def test_init_nvecs_fits_match_pyttb():
    # pyttb's cp_als from its nvecs start and tenfold's init='nvecs': the same fit
    # after every iteration, the same model. pyttb's cp_als(init='nvecs') builds
    # the start as ktensor([X.nvecs(n, R) for every n]); here it is built the same
    # way, since pyttb 1.8.6's own trips on its complex nvecs for sparse tensors
    # ("... must be a numpy.ndarray object with dtype=float") and its columns come
    # in ARPACK's varying order (which pairs columns of different modes
    # differently from run to run): _pyttb_nvecs sorts them, leading first. Each
    # prefix of the run is a run with maxiters=k (pyttb returns the last fit only)
    pyttb = pytest.importorskip("pyttb")
    X = _uber_days(4)
    S = pyttb.sptensor(X.coords.astype(np.int64), X.values.reshape(-1, 1), X.shape)
    R, iters = 6, 5
    Minit = pyttb.ktensor([_pyttb_nvecs(S, n, R) for n in range(X.ndim)])
    fits = []
    for k in range(1, iters + 1):
        M, _, out = pyttb.cp_als(S, R, init=Minit, maxiters=k, stoptol=0.0, printitn=0)
        fits.append(out["fit"])
    for init in ("nvecs", "svd"):
        res = tenfold.cp_als(X, R, init=init, n_iter_max=iters, tol=0.0, device="cpu")
        np.testing.assert_allclose(res.fit_history, fits, rtol=0, atol=1e-9)
        np.testing.assert_allclose(res.weights, M.weights, rtol=1e-8)
        for a, b in zip(res.factors, M.factor_matrices):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-8)
        assert res.timings["init"] > 0
    # the same stopping rule: both stop at the same iteration with stoptol 1e-3
    M, _, out = pyttb.cp_als(S, R, init=Minit, maxiters=50, stoptol=1e-3, printitn=0)
    res = tenfold.cp_als(X, R, init="nvecs", n_iter_max=50, tol=1e-3, device="cpu")
    assert res.converged and res.n_iter == out["iters"] + 1
    assert res.fit == pytest.approx(out["fit"], abs=1e-9)


def test_init_nvecs_is_deterministic_and_not_random(small3):
    a = tenfold.cp_als(small3, 3, n_iter_max=5, tol=0.0, init="nvecs")
    b = tenfold.cp_als(small3, 3, n_iter_max=5, tol=0.0, init="nvecs", random_state=5)
    c = tenfold.cp_als(small3, 3, n_iter_max=5, tol=0.0)
    assert a.fit_history == b.fit_history and a.fit_history != c.fit_history
    one = tenfold.cp_als(small3, 3, n_iter_max=5, tol=0.0, init="nvecs", threads=1)
    np.testing.assert_allclose(one.fit_history, a.fit_history, rtol=0, atol=1e-12)
    # a rank above a mode's length (7): those columns are the random start's
    d = tenfold.cp_als(small3, 8, n_iter_max=3, tol=0.0, init="nvecs")
    assert np.isfinite(d.fit) and d.n_iter == 3


def test_init_svd_like_tensorly():
    # tensorly's parafac with init='svd' (dense, numpy backend) starts from the
    # leading left singular vectors too; its factor 1 is used there, ours is not,
    # and its signs / scaling differ, so the fits agree once factor 1 is solved
    # for from the others -- from the first iteration on, to rounding
    tl = pytest.importorskip("tensorly")
    from tensorly.decomposition import parafac

    X = tenfold.Tensor(random_coo((10, 8, 6), 200, seed=4))
    res = tenfold.cp_als(X, 3, init="svd", n_iter_max=6, tol=0.0)
    cp, errors = parafac(X.to_dense(), 3, init="svd", n_iter_max=6, tol=0, normalize_factors=False,
                         return_errors=True)
    np.testing.assert_allclose(1 - np.asarray(errors), res.fit_history, rtol=0, atol=1e-9)
