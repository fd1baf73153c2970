# SPDX-License-Identifier: BSD-3-Clause
"""HALS (issue 44): tenfold.non_negative_parafac_hals against a float64 numpy
HALS (tensorly's formulation) iteration by iteration from the same start, a
planted sparse non-negative model recovered, tensorly's own
non_negative_parafac_hals from the same start, non_negative_parafac's
choice, tensorly's return conventions and argument errors, the CLI's fits."""
import json
import subprocess
import warnings

import numpy as np
import pytest

import tenfold
from conftest import REPO

UBER = REPO / "data" / "uber-apr14.tns.xz"
LETTERS = "ijklmnop"


def _mttkrp(D, factors, n):
    """X_(n) times the Khatri-Rao product of the other factors, by einsum."""
    N = D.ndim
    ins = [LETTERS[:N]] + [LETTERS[m] + "z" for m in range(N) if m != n]
    return np.einsum(",".join(ins) + "->" + LETTERS[n] + "z", D, *[factors[m] for m in range(N) if m != n])


def hals_reference(D, start, n_iter, sweeps=5, tol=1e-8, l1=None):
    """tensorly's non_negative_parafac_hals (hals_nnls inside), plainly, in
    float64: unnormalised factors, every mode non-negative. The fit after
    every iteration."""
    F = [f.astype(np.float64).copy() for f in start]
    N, R = D.ndim, F[0].shape[1]
    normx = np.linalg.norm(D)
    fits = []
    for _ in range(n_iter):
        for n in range(N):
            V = np.ones((R, R))
            for m in range(N):
                if m != n:
                    V *= F[m].T @ F[m]
            M = _mttkrp(D, F, n)
            A = F[n]
            first = None
            for _s in range(sweeps):
                err = 0.0
                for r in range(R):
                    if V[r, r] == 0:
                        continue
                    num = M[:, r] - A @ V[:, r] + V[r, r] * A[:, r] - (l1[n] if l1 else 0.0)
                    new = np.maximum(num / V[r, r], 0.0)
                    err += np.sum((A[:, r] - new) ** 2)
                    A[:, r] = new
                first = err if first is None else first
                if err < tol * first or err == 0:
                    break
        G = np.ones((R, R))
        for m in range(N):
            G *= F[m].T @ F[m]
        inner = np.sum(M * F[N - 1])
        fits.append(1 - np.sqrt(abs(normx ** 2 + G.sum() - 2 * inner)) / normx)
    return fits, F


def _dense_nonneg(seed, shape, density):
    rng = np.random.default_rng(seed)
    return rng.random(shape) * (rng.random(shape) < density), rng


@pytest.mark.parametrize("seed, shape, rank", [(0, (14, 11, 9), 4), (1, (20, 8, 6), 6), (2, (9, 8, 7, 6), 3)])
def test_equals_numpy_reference(seed, shape, rank):
    D, rng = _dense_nonneg(seed, shape, 0.4)
    start = [rng.random((n, rank)) for n in shape]
    ref, F = hals_reference(D, start, 25)
    res = tenfold.non_negative_parafac_hals(D, rank, n_iter_max=25, init=[f.copy() for f in start], tol=0,
                                            device="cpu")
    assert res.algorithm == "HALS" and res.n_iter == 25 and res.inner_iterations > 0
    np.testing.assert_allclose(res.fit_history, ref, rtol=0, atol=1e-10)
    model = np.einsum(",".join([LETTERS[:len(shape)]] + [LETTERS[m] + "z" for m in range(len(shape))]) + "->"
                      + LETTERS[:len(shape)], np.ones(shape), *F)
    mine = np.einsum("z," + ",".join(LETTERS[m] + "z" for m in range(len(shape))) + "->" + LETTERS[:len(shape)],
                     res.weights, *res.factors)
    np.testing.assert_allclose(mine, model, rtol=0, atol=1e-9 * np.abs(model).max())


def hals_reference_normalised(D, start, n_iter, l1, sweeps=5, tol=1e-8):
    """HALS with tenfold's normalisation (the CP-ALS loop's: after a mode's
    update its columns are divided by their 2-norms in the first iteration,
    by max(max |a|, 1) later, into the weights; the next update starts from
    the factor times the weights). Without l1 the iterates are tensorly's up
    to the column scales (HALS is equivariant under them); with l1 they
    differ: the penalty applies to the factor as updated, which carries the
    weights. The fit after every iteration."""
    F = [f.astype(np.float64).copy() for f in start]
    N, R = D.ndim, F[0].shape[1]
    lam = np.ones(R)
    normx = np.linalg.norm(D)
    fits = []
    for it in range(n_iter):
        for n in range(N):
            V = np.ones((R, R))
            for m in range(N):
                if m != n:
                    V *= F[m].T @ F[m]
            M = _mttkrp(D, F, n)
            A = F[n] * np.where(np.diag(V) != 0, lam, 1.0)
            first = None
            for _s in range(sweeps):
                err = 0.0
                for r in range(R):
                    if V[r, r] == 0:
                        continue
                    new = np.maximum((M[:, r] - A @ V[:, r] + V[r, r] * A[:, r] - l1[n]) / V[r, r], 0.0)
                    err += np.sum((A[:, r] - new) ** 2)
                    A[:, r] = new
                first = err if first is None else first
                if err < tol * first or err == 0:
                    break
            lam = np.linalg.norm(A, axis=0) if it == 0 else np.maximum(np.abs(A).max(axis=0), 1.0)
            F[n] = A / np.where(lam > 0, lam, 1.0)
        model = np.einsum("z," + ",".join(LETTERS[m] + "z" for m in range(N)) + "->" + LETTERS[:N], lam, *F)
        fits.append(1 - np.linalg.norm(D - model) / normx)
    return fits


def test_sparsity_equals_numpy_reference():
    D, rng = _dense_nonneg(4, (12, 10, 8), 0.5)
    start = [rng.random((n, 3)) for n in D.shape]
    l1 = [0.2, 0.0, 0.5]
    ref = hals_reference_normalised(D, start, 15, l1)
    res = tenfold.non_negative_parafac_hals(D, 3, n_iter_max=15, init=start, tol=0, sparsity_coefficients=l1,
                                            device="cpu")
    np.testing.assert_allclose(res.fit_history, ref, rtol=0, atol=1e-10)
    # without l1 the normalised loop is tensorly's (the scales do not matter)
    plain, _ = hals_reference(D, start, 15)
    np.testing.assert_allclose(hals_reference_normalised(D, start, 15, [0.0] * 3), plain, rtol=0, atol=1e-12)


def _planted(seed, shape, rank, density):
    """A sparse non-negative CP model: factor entries 0 or in [0.5, 1.5)."""
    rng = np.random.default_rng(seed)
    F = [(rng.random((n, rank)) < density) * (0.5 + rng.random((n, rank))) for n in shape]
    for f in F:  # no empty column
        f[rng.integers(0, f.shape[0]), :] = 1.0
    D = np.einsum("ir,jr,kr->ijk", *F)
    coords = np.argwhere(D)
    return (coords, D[tuple(coords.T)], shape), D


def test_planted_sparse_model():
    X, D = _planted(7, (60, 50, 40), 4, 0.25)
    assert len(X[1]) < 0.2 * D.size  # sparse
    res = tenfold.non_negative_parafac_hals(X, 4, n_iter_max=500, tol=1e-12, random_state=3, init="random",
                                            device="cpu")
    assert res.fit >= 0.99, res.fit
    assert not any(np.signbit(f).any() for f in res.factors) and not np.signbit(res.weights).any()
    res2 = tenfold.non_negative_parafac(X, 4, n_iter_max=500, tol=1e-12, init="svd", device="cpu")
    assert res2.algorithm == "HALS" and res2.fit >= 0.99, (res2.algorithm, res2.fit)
    assert not any(np.signbit(f).any() for f in res2.factors)


@pytest.mark.parametrize("seed, shape, rank, density", [
    (0, (12, 10, 8), 4, 0.5), (5, (30, 20, 10), 5, 0.2), (6, (15, 12, 10, 6), 3, 0.3)])
def test_as_tensorly(seed, shape, rank, density):
    tl = pytest.importorskip("tensorly")
    from tensorly.cp_tensor import CPTensor
    from tensorly.decomposition import non_negative_parafac_hals

    D, rng = _dense_nonneg(seed, shape, density)
    start = [rng.random((n, rank)) for n in shape]
    res, errors = tenfold.non_negative_parafac_hals(D, rank, n_iter_max=100, init=[f.copy() for f in start], tol=0,
                                                    return_errors=True, device="cpu")
    cp, tl_errors = non_negative_parafac_hals(D, rank, n_iter_max=100, init=CPTensor((np.ones(rank), start)),
                                              tol=1e-300, return_errors=True)  # tol 0 would skip its errors

    def fit(c):
        return 1 - np.linalg.norm(D - tl.cp_to_tensor(c)) / np.linalg.norm(D)

    np.testing.assert_allclose(errors, [float(e) for e in tl_errors], rtol=0, atol=1e-9)
    assert res.fit == pytest.approx(fit(cp), abs=1e-9)
    assert fit(res.to_tensorly()) == pytest.approx(res.fit, abs=1e-9)


def test_return_conventions():
    D, rng = _dense_nonneg(8, (10, 9, 8), 0.5)
    start = [rng.random((n, 3)) for n in D.shape]
    res = tenfold.non_negative_parafac_hals(D, 3, n_iter_max=20, init=start, tol=0, device="cpu")
    weights, factors = res  # tensorly's CPTensor unpacks so
    assert res[0] is weights and res[1] is factors and len(res) == 2
    np.testing.assert_array_equal(weights, np.ones(3))
    norm = tenfold.non_negative_parafac_hals(D, 3, n_iter_max=20, init=start, tol=0, normalize_factors=True,
                                             device="cpu")
    assert list(norm.weights) == sorted(norm.weights, reverse=True)
    np.testing.assert_allclose([np.linalg.norm(f, axis=0) for f in norm.factors], 1.0, atol=1e-12)
    full = lambda w, fs: np.einsum("r,ir,jr,kr->ijk", w, *fs)  # noqa: E731
    np.testing.assert_allclose(full(*res), full(*norm), atol=1e-12 * np.abs(D).max())
    out, errors = tenfold.non_negative_parafac_hals(D, 3, n_iter_max=20, init=start, tol=0, return_errors=True,
                                                    device="cpu")
    assert len(errors) == out.n_iter == 20 and errors[-1] == pytest.approx(1 - out.fit, abs=1e-15)
    # the tolerance stops it; cvg_criterion 'rec_error' stops on a decrease below tol (a rise too)
    a = tenfold.non_negative_parafac_hals(D, 3, n_iter_max=500, init=start, tol=1e-4, device="cpu")
    b = tenfold.non_negative_parafac_hals(D, 3, n_iter_max=500, init=start, tol=1e-4, cvg_criterion="rec_error",
                                          device="cpu")
    assert a.converged and a.n_iter < 500 and b.converged and b.n_iter <= a.n_iter
    # exact: many more sweeps
    e = tenfold.non_negative_parafac_hals(D, 3, n_iter_max=3, init=start, tol=0, exact=True, device="cpu")
    assert e.inner_iterations > 3 * 3 * 5
    # some modes non-negative, the others least squares
    s = tenfold.non_negative_parafac_hals(D - 0.2, 3, n_iter_max=10, init=start, tol=0, nn_modes=[1],
                                          normalize_factors=True, device="cpu")
    assert not np.signbit(s.factors[1]).any() and (np.signbit(s.factors[0]).any() or np.signbit(s.factors[2]).any())
    assert s.inner_iterations <= 10 * 5


def test_sparsity_on_unconstrained_mode_warns():
    D, _ = _dense_nonneg(9, (10, 9, 8), 0.5)
    with pytest.warns(UserWarning, match="Sparsity coefficient is ignored in unconstrained modes"):
        tenfold.non_negative_parafac_hals(D, 2, n_iter_max=3, nn_modes=[0, 1], sparsity_coefficients=0.1,
                                          device="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tenfold.non_negative_parafac_hals(D, 2, n_iter_max=3, sparsity_coefficients=[0.1, None, 0.2], device="cpu")


def test_non_negative_parafac_methods():
    D, rng = _dense_nonneg(10, (14, 11, 9), 0.4)
    start = [rng.random((n, 4)) for n in D.shape]
    auto = tenfold.non_negative_parafac(D, 4, n_iter_max=40, init=start, tol=0, device="cpu")
    hals = tenfold.non_negative_parafac_hals(D, 4, n_iter_max=40, init=start, tol=0, device="cpu")
    admm = tenfold.non_negative_parafac(D, 4, n_iter_max=40, init=start, tol=0, method="admm", device="cpu")
    assert auto.algorithm == "HALS" and auto.algorithm_choice.startswith("non-negativity alone: HALS")
    assert auto.fit_history == hals.fit_history
    assert admm.algorithm == "AO-ADMM" and admm.algorithm_choice == ""
    for r in (auto, admm):
        assert not any(np.signbit(f).any() for f in r.factors)
    tl = pytest.importorskip("tensorly")
    from tensorly.cp_tensor import CPTensor
    from tensorly.decomposition import non_negative_parafac

    # tensorly's multiplicative updates from the same start get no further
    mu = non_negative_parafac(D, 4, n_iter_max=40, init=CPTensor((np.ones(4), start)), tol=0)
    mu_fit = 1 - np.linalg.norm(D - tl.cp_to_tensor(mu)) / np.linalg.norm(D)
    assert mu_fit <= auto.fit + 1e-6


def test_cp_als_methods():
    D, _ = _dense_nonneg(11, (14, 11, 9), 0.4)
    r = tenfold.cp_als(D, 3, n_iter_max=10, nonneg=True, device="cpu")
    assert r.algorithm == "HALS" and "HALS" in r.algorithm_choice
    r = tenfold.cp_als(D, 3, n_iter_max=10, nonneg=True, l1=0.1, device="cpu")
    assert r.algorithm == "AO-ADMM" and "AO-ADMM" in r.algorithm_choice
    r = tenfold.cp_als(D, 3, n_iter_max=10, nonneg=[0], nonneg_method="hals", n_iter_max_inner=2, device="cpu")
    assert r.algorithm == "HALS" and r.inner_iterations <= 10 * 2
    r = tenfold.cp_als(D, 3, n_iter_max=10, device="cpu")
    assert r.algorithm == "CP-ALS" and r.algorithm_choice == ""


def test_same_fits_as_cli(cli, tmp_path):
    X = tenfold.read(UBER)
    res = tenfold.cp_als(X, 8, n_iter_max=6, tol=0.0, random_state=11, device="cpu", nonneg=[0, 2, 3])
    rep = tmp_path / "r.json"
    subprocess.run([cli, "cpd", str(UBER), "-r", "8", "-i", "6", "--tol", "0", "--seed", "11", "--device", "cpu",
                    "--nonneg", "1,3,4", "--nowrite", "-q", "--json", str(rep)], check=True)
    r = json.loads(rep.read_text())
    assert r["options"]["algorithm"] == res.algorithm == "HALS"
    np.testing.assert_allclose(res.fit_history, [it["fit"] for it in r["iterations"]], rtol=1e-12, atol=0)
    assert res.inner_iterations == r["result"]["inner_iterations"] > 0


@pytest.mark.parametrize("call, match", [
    (lambda X: tenfold.non_negative_parafac_hals(X, 2, fixed_modes=[0]), "fixed_modes: tenfold updates every mode"),
    (lambda X: tenfold.non_negative_parafac(X, 2, mask=np.ones((12, 9, 7))), "mask: not available"),
    (lambda X: tenfold.non_negative_parafac(X, 2, svd="eig"), "svd: expected one of"),
    (lambda X: tenfold.non_negative_parafac_hals(X, 2, nn_modes="some"), "nn_modes: expected 'all', None"),
    (lambda X: tenfold.non_negative_parafac_hals(X, 2, nn_modes=[5]), "mode: expected an integer 0..2"),
    (lambda X: tenfold.non_negative_parafac_hals(X, 2, cvg_criterion="x"), "cvg_criterion: expected"),
    (lambda X: tenfold.non_negative_parafac_hals(X, 2, sparsity_coefficients=[1, 2]), "sparsity_coefficients"),
    (lambda X: tenfold.non_negative_parafac(X, 2, method="mu"), "nonneg_method: 'mu' is not one of"),
    (lambda X: tenfold.cp_als(X, 2, nonneg=[0], l1=0.1, nonneg_method="hals"), "l1: mode 1 is not non-negative"),
])
def test_bad_arguments(small3, call, match):
    with pytest.raises(tenfold.ArgumentError, match=match):
        call(small3)


def test_gpu_refuses_it(small3):
    with pytest.raises(tenfold.UnavailableError):
        tenfold.non_negative_parafac_hals(small3, 2, device="gpu")
    res = tenfold.non_negative_parafac_hals(small3, 2, n_iter_max=3)  # auto: the CPU
    assert res.plan.startswith("cpu")
