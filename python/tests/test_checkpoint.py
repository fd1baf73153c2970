# SPDX-License-Identifier: BSD-3-Clause
"""Checkpoints and resume from Python (issue 49 item 4): checkpoint=,
checkpoint_every=, resume= on cp_als (ALS, AO-ADMM, HALS), cp_apr, tucker
and non_negative_parafac: 4 iterations with a checkpoint and a resume to 10
end with the weights and factors of 10 straight (the same bits); the
checkpoint's files are a factor set; bad keywords and a resume with another
rank raise."""
import numpy as np
import pytest
from conftest import random_coo

import tenfold


@pytest.fixture
def X():
    return tenfold.Tensor(random_coo((20, 15, 12), 600, seed=3))


@pytest.fixture
def C():
    coords, vals, shape = random_coo((20, 15, 12), 600, seed=3)
    return tenfold.Tensor((coords, np.floor(vals * 3), shape))


def same(a, b):
    assert np.array_equal(a.weights, b.weights)
    for fa, fb in zip(a.factors, b.factors):
        assert np.array_equal(fa, fb)


@pytest.mark.parametrize("kw", [{}, {"nonneg": True, "nonneg_method": "admm", "l1": 0.01},
                                {"nonneg": True, "nonneg_method": "hals"}])
def test_cp_als_resume_is_the_straight_run(X, tmp_path, kw):
    s = tenfold.cp_als(X, 4, n_iter_max=10, tol=0, device="cpu", **kw)
    p = tenfold.cp_als(X, 4, n_iter_max=4, tol=0, device="cpu", checkpoint=tmp_path / "ck", checkpoint_every=2, **kw)
    assert p.n_iter == 4
    assert (tmp_path / "ck.state").exists() and (tmp_path / "ck.mode1.mat").exists()
    r = tenfold.cp_als(X, 4, n_iter_max=10, tol=0, device="cpu", resume=tmp_path / "ck", **kw)
    assert r.n_iter == 10 and r.fit == s.fit
    assert r.fit_history == s.fit_history[4:]  # the resumed iterations
    same(s, r)


def test_cp_apr_resume(C, tmp_path):
    s = tenfold.cp_apr(C, 3, maxiters=10, stoptol=0, device="cpu")
    tenfold.cp_apr(C, 3, maxiters=4, stoptol=0, device="cpu", checkpoint=str(tmp_path / "a"))
    r = tenfold.cp_apr(C, 3, maxiters=10, stoptol=0, device="cpu", resume=str(tmp_path / "a"))
    assert r.loglik == s.loglik and r.n_iter == 10
    same(s, r)


def test_tucker_resume(X, tmp_path):
    s = tenfold.tucker(X, [3, 4, 2], n_iter_max=10, tol=0)
    tenfold.tucker(X, [3, 4, 2], n_iter_max=4, tol=0, checkpoint=tmp_path / "t", checkpoint_every="1h")
    r = tenfold.tucker(X, [3, 4, 2], n_iter_max=10, tol=0, resume=tmp_path / "t")
    assert r.fit == s.fit
    assert np.array_equal(r.core, s.core)
    for a, b in zip(r.factors, s.factors):
        assert np.array_equal(a, b)


def test_non_negative_parafac_resume(X, tmp_path):
    s = tenfold.non_negative_parafac(X, 3, n_iter_max=8, tol=0, init="random", random_state=1, method="admm")
    tenfold.non_negative_parafac(X, 3, n_iter_max=3, tol=0, init="random", random_state=1, method="admm",
                                 checkpoint=tmp_path / "n")
    r = tenfold.non_negative_parafac(X, 3, n_iter_max=8, tol=0, init="random", random_state=1, method="admm",
                                     resume=tmp_path / "n")
    for a, b in zip(r.factors, s.factors):
        assert np.array_equal(a, b)


def test_errors(X, tmp_path):
    with pytest.raises(tenfold.ArgumentError, match="checkpoint_every: only with checkpoint"):
        tenfold.cp_als(X, 2, checkpoint_every=3)
    for bad in (0, "5x", "-1m", (1, 2), True):
        with pytest.raises(tenfold.ArgumentError, match="checkpoint_every"):
            tenfold.cp_als(X, 2, checkpoint=tmp_path / "e", checkpoint_every=bad)
    with pytest.raises(tenfold.ArgumentError, match="checkpoint: expected the stem"):
        tenfold.cp_als(X, 2, checkpoint="")
    tenfold.cp_als(X, 2, n_iter_max=2, device="cpu", checkpoint=tmp_path / "k")
    with pytest.raises(tenfold.ArgumentError, match="made with rank '2', this run has '3'"):
        tenfold.cp_als(X, 3, device="cpu", resume=tmp_path / "k")
    with pytest.raises(tenfold.ArgumentError, match="method 'cp-als', this run has 'tucker'"):
        tenfold.tucker(X, 2, resume=tmp_path / "k")
