# SPDX-License-Identifier: BSD-3-Clause
"""cp_als with nonneg / l1 / l2 (AO-ADMM; HALS: test_nonneg.py): the CLI's fits, non-negative factors,
tensorly's constrained_parafac (the same algorithm) and non_negative_parafac from
the same start, the penalties' effects, argument errors, the GPU's run equal to the CPU's."""
import json
import subprocess

import numpy as np
import pytest

import tenfold
from conftest import REPO

UBER = REPO / "data" / "uber-apr14.tns.xz"


def test_same_fits_as_cli(cli, tmp_path):
    X = tenfold.read(UBER)
    res = tenfold.cp_als(X, 8, n_iter_max=6, tol=0.0, random_state=11, device="cpu", nonneg=True, l1=[0, 0.5, 0, 0])
    rep = tmp_path / "r.json"
    subprocess.run([cli, "cpd", str(UBER), "-r", "8", "-i", "6", "--tol", "0", "--seed", "11", "--device", "cpu",
                    "--nonneg", "--l1", "0.5@2", "--nowrite", "-q", "--json", str(rep)], check=True)
    r = json.loads(rep.read_text())
    assert r["options"]["algorithm"] == "AO-ADMM"
    np.testing.assert_allclose(res.fit_history, [it["fit"] for it in r["iterations"]], rtol=1e-12, atol=0)
    assert res.inner_iterations == r["result"]["inner_iterations"] > 0


def _dense_nonneg(seed, shape, density):
    rng = np.random.default_rng(seed)
    return rng.random(shape) * (rng.random(shape) < density), rng


@pytest.mark.parametrize("modes", [True, [0, -1], (1,)])
def test_nonneg_factors(modes):
    D, _ = _dense_nonneg(3, (14, 11, 9), 0.4)
    res = tenfold.cp_als(D, 4, n_iter_max=30, nonneg=modes, device="cpu", fixsigns=False)
    which = range(3) if modes is True else [m % 3 for m in modes]
    for m in which:
        assert not np.signbit(res.factors[m]).any(), f"mode {m}"
    assert not np.signbit(res.weights).any() and res.inner_iterations > 0
    model = np.einsum("r,ir,jr,kr->ijk", res.weights, *res.factors)
    assert res.fit == pytest.approx(1 - np.linalg.norm(D - model) / np.linalg.norm(D), abs=1e-9)


# seeds whose runs reach the same local optimum in tenfold and tensorly (another seed may
# end elsewhere: the problem is not convex)
@pytest.mark.parametrize("seed, shape, rank, density", [
    (0, (12, 10, 8), 4, 0.5), (2, (12, 10, 8), 4, 0.5), (5, (30, 20, 10), 5, 0.2), (6, (15, 12, 10, 6), 3, 0.3)])
def test_nonneg_as_tensorly(seed, shape, rank, density):
    # the same start: tensorly's AO-ADMM (constrained_parafac, the same algorithm without
    # tenfold's normalisation) ends at tenfold's fit; its multiplicative updates
    # (non_negative_parafac) get no further in as many iterations
    tl = pytest.importorskip("tensorly")
    from tensorly.cp_tensor import CPTensor
    from tensorly.decomposition import constrained_parafac, non_negative_parafac

    D, rng = _dense_nonneg(seed, shape, density)
    start = [rng.random((n, rank)) for n in shape]
    res = tenfold.cp_als(D, rank, n_iter_max=300, tol=0.0, init=[f.copy() for f in start], nonneg=True,
                         nonneg_method="admm", device="cpu")
    assert res.algorithm == "AO-ADMM"

    def fit(cp):
        return 1 - np.linalg.norm(D - tl.cp_to_tensor(cp)) / np.linalg.norm(D)

    admm = constrained_parafac(D, rank, init=CPTensor((np.ones(rank), [f.copy() for f in start])), non_negative=True,
                               n_iter_max=300, tol_outer=0, n_iter_max_inner=25, tol_inner=1e-2)
    mu = non_negative_parafac(D, rank, init=CPTensor((np.ones(rank), [f.copy() for f in start])), n_iter_max=300,
                              tol=0)
    assert res.fit == pytest.approx(fit(admm), abs=1e-6)
    assert fit(mu) <= res.fit + 1e-6
    assert all((f >= 0).all() for f in res.factors)


def test_penalties():
    D, _ = _dense_nonneg(1, (20, 15, 10), 0.3)
    zeros = []
    for l1 in (0.0, 0.1, 1.0):
        res = tenfold.cp_als(D, 5, n_iter_max=40, nonneg=True, l1=l1, device="cpu")
        zeros.append(sum(int((f == 0).sum()) for f in res.factors))
    assert zeros[0] <= zeros[1] <= zeros[2] and zeros[2] > zeros[0], zeros
    norms = []
    for l2 in (0.0, 1.0, 10.0):
        res = tenfold.cp_als(D, 5, n_iter_max=40, l2=l2, device="cpu")
        norms.append(float(np.sum(res.weights ** 2)))
        assert res.inner_iterations == 0  # a ridge alone is solved in closed form
    assert norms[0] > norms[1] > norms[2], norms
    als = tenfold.cp_als(D, 5, n_iter_max=5, device="cpu")
    assert als.inner_iterations == 0


@pytest.mark.parametrize("kw, match", [
    ({"nonneg": "yes"}, "nonneg: expected True, False or a sequence of modes"),
    ({"nonneg": [3]}, "mode: expected an integer 0..2"),
    ({"l1": -1}, "l1: expected finite numbers >= 0"),
    ({"l2": float("inf")}, "l2: expected finite numbers >= 0"),
    ({"l1": [1, 2]}, "l1: expected a number >= 0 or 3 of them"),
    ({"l1": "a"}, "l1: expected a number >= 0 or one per mode"),
    ({"nonneg": True, "n_iter_max_inner": 0}, "n_iter_max_inner: expected an integer 1..100000"),
    ({"nonneg": True, "tol_inner": 1.0}, r"tol_inner: expected a number in \[0, 1\)"),
    ({"nonneg": True, "nonneg_method": "mu"}, "nonneg_method: 'mu' is not one of 'auto', 'admm', 'hals'"),
])
def test_bad_arguments(small3, kw, match):
    with pytest.raises(tenfold.ArgumentError, match=match):
        tenfold.cp_als(small3, 2, **kw)


def test_gpu_runs_it(small3):
    # the GPU backends run AO-ADMM (issue 44): the CPU's fits and inner iterations
    # from the same start; without a GPU, device="gpu" is unavailable (never run
    # unconstrained, nor on the CPU)
    kw = dict(n_iter_max=6, tol=0.0, random_state=3, nonneg=True, l1=[0, 0.2, 0], fixsigns=False)
    if tenfold.gpu_count() == 0:
        with pytest.raises(tenfold.UnavailableError):
            tenfold.cp_als(small3, 2, device="gpu", **kw)
    else:
        cpu = tenfold.cp_als(small3, 2, device="cpu", **kw)
        gpu = tenfold.cp_als(small3, 2, device="gpu", **kw)
        assert gpu.plan.startswith("gpu")
        np.testing.assert_allclose(gpu.fit_history, cpu.fit_history, rtol=0, atol=1e-10)
        assert gpu.inner_iterations == cpu.inner_iterations > 0
        assert not np.signbit(gpu.factors[0]).any() and not np.signbit(gpu.factors[2]).any()
    # auto: not sent to the CPU for want of it (a small problem goes there by the cost rule)
    res = tenfold.cp_als(small3, 2, n_iter_max=3, nonneg=True)
    assert "not on the GPU yet" not in res.note