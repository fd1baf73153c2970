# SPDX-License-Identifier: BSD-3-Clause
"""GCP (tenfold.gcp) against pyttb.gcp_opt with L-BFGS-B in the dense-loss
mode: from the same start, the same objective at the optimum each finds, to
1e-6 relative, on small slices of the bundled uber-apr14 (Gaussian, Poisson,
Poisson with the log link); started from pyttb's optimum tenfold stays there
(the same loss and stationarity); the sampled GCP-Adam converges to within
1 % of the dense optimum, with stratified and semi-stratified sampling; results, callbacks and errors."""
import numpy as np
import pytest
from conftest import REPO

import tenfold

UBER = REPO / "data" / "uber-apr14.tns.xz"


@pytest.fixture(scope="module")
def ttb():
    return pytest.importorskip("pyttb")


@pytest.fixture(scope="module")
def uber_slice():
    """Days 1-4, every hour, the 12 busiest latitudes and longitudes: a dense
    4 x 24 x 12 x 12 count tensor (about 2800 non-zeros of 13824)."""
    X = tenfold.read(UBER)
    c, v = X.coords, X.values
    top2 = np.sort(np.argsort(-np.bincount(c[:, 2]))[:12])
    top3 = np.sort(np.argsort(-np.bincount(c[:, 3]))[:12])
    sel = (c[:, 0] < 4) & np.isin(c[:, 2], top2) & np.isin(c[:, 3], top3)
    c, v = c[sel].copy(), v[sel]
    c[:, 2] = np.searchsorted(top2, c[:, 2])
    c[:, 3] = np.searchsorted(top3, c[:, 3])
    return c.astype(np.int64), v, (4, 24, 12, 12)


def dense_loss(loss, X, factors, weights):
    """The loss over every entry of the model (pyttb's handles, eps 1e-10)."""
    M = np.einsum("r,ir,jr,kr,lr->ijkl", weights, *factors)
    D = np.zeros(X.shape)
    D[tuple(X.coords.T)] = X.values
    if loss == "gaussian":
        return float(((M - D) ** 2).sum())
    if loss == "poisson":
        return float((M - D * np.log(M + 1e-10)).sum())
    return float((np.exp(M) - D * M).sum())


@pytest.mark.parametrize("loss,rank", [("gaussian", 2), ("poisson", 2), ("poisson", 4), ("poisson-log", 2)])
def test_dense_matches_pyttb(ttb, uber_slice, loss, rank):
    from pyttb.gcp.handles import Objectives
    from pyttb.gcp.optimizers import LBFGSB
    c, v, shape = uber_slice
    obj = {"gaussian": Objectives.GAUSSIAN, "poisson": Objectives.POISSON, "poisson-log": Objectives.POISSON_LOG}[loss]
    rng = np.random.default_rng(rank)
    init = [rng.random((n, rank)) for n in shape]
    Xp = ttb.sptensor(c, v.reshape(-1, 1), shape)
    with np.errstate(over="ignore"):
        M, _, info = ttb.gcp_opt(Xp.full(), rank, obj, LBFGSB(factr=10, pgtol=1e-10, maxiter=10000),
                                 init=ttb.ktensor([a.copy() for a in init]), printitn=0)
    fp = info["final_f"]
    X = tenfold.Tensor((c, v, shape))
    res = tenfold.gcp(X, rank, loss=loss, dense=True, init=init, max_epochs=10000, threads=2)
    assert res.converged and res.algorithm == "GCP dense L-BFGS"
    assert abs(res.loss - fp) <= 1e-6 * abs(fp), (res.loss, fp)
    # the reported loss is the returned model's
    assert abs(dense_loss(loss, X, res.factors, res.weights) - res.loss) <= 1e-9 * abs(res.loss)
    # from pyttb's optimum: the same loss, and no further descent (stationary for both)
    again = tenfold.gcp(X, rank, loss=loss, dense=True, init=M, max_epochs=100)
    assert abs(again.loss_initial - fp) <= 1e-12 * abs(fp) and abs(again.loss - fp) <= 1e-9 * abs(fp)
    assert again.n_iter <= 3


@pytest.mark.parametrize("sampling", ["stratified", "semi-stratified"])
def test_sampled_within_one_percent(uber_slice, sampling):
    c, v, shape = uber_slice
    X = tenfold.Tensor((c, v, shape))
    rng = np.random.default_rng(2)
    init = [rng.random((n, 2)) for n in shape]
    dense = tenfold.gcp(X, 2, loss="poisson", dense=True, init=init, max_epochs=10000)
    nnz = len(v)
    res = tenfold.gcp(X, 2, loss="poisson", init=init, samples=(nnz // 4, nnz // 4), fsamples=(nnz, 3 * nnz),
                      epoch_iters=200, max_epochs=60, rate=0.01, max_fails=3, random_state=7, sampling=sampling)
    exact = dense_loss("poisson", X, res.factors, res.weights)
    assert exact <= 1.01 * dense.loss, (exact, dense.loss)
    assert res.algorithm == "GCP-Adam" and len(res.loss_history) == res.n_iter
    assert res.samples == {"nonzero": nnz // 4, "zero": nnz // 4, "f_nonzero": nnz, "f_zero": 3 * nnz}
    assert min(min(f.min() for f in res.factors), res.weights.min()) >= 0


def test_reproducible_and_callback(uber_slice):
    c, v, shape = uber_slice
    X = tenfold.Tensor((c, v, shape))
    seen = []
    a = tenfold.gcp(X, 3, loss="poisson", epoch_iters=20, max_epochs=3, random_state=5, device="cpu",
                    callback=lambda e: seen.append(e.loss_estimate))
    b = tenfold.gcp(X, 3, loss="poisson", epoch_iters=20, max_epochs=3, random_state=5, device="cpu")
    assert seen == a.loss_history == b.loss_history and len(seen) == 3
    assert all(np.array_equal(x, y) for x, y in zip(a.factors, b.factors))
    stopped = tenfold.gcp(X, 3, loss="poisson", epoch_iters=20, max_epochs=9, callback=lambda e: e.epoch == 2)
    assert stopped.n_iter == 2 and stopped.stopped


def test_errors(uber_slice):
    c, v, shape = uber_slice
    X = tenfold.Tensor((c, v, shape))
    with pytest.raises(tenfold.ArgumentError, match="loss"):
        tenfold.gcp(X, 2, loss="cauchy")
    with pytest.raises(tenfold.ArgumentError, match="samples"):
        tenfold.gcp(X, 2, samples=(5,))
    with pytest.raises(tenfold.UnavailableError, match="dense loss mode runs on the CPU only"):
        tenfold.gcp(X, 2, dense=True, device="gpu")
    if tenfold.gpu_count() == 0:  # one GPU runs it where there is one
        with pytest.raises(tenfold.UnavailableError):
            tenfold.gcp(X, 2, device="gpu")
    with pytest.raises(tenfold.ArgumentError, match="sampling"):
        tenfold.gcp(X, 2, sampling="uniform")
    if tenfold.gpu_count() == 0:  # semi-stratified runs on a GPU too where there is one
        with pytest.raises(tenfold.UnavailableError):
            tenfold.gcp(X, 2, sampling="semi-stratified", device="gpu")
    with pytest.raises(tenfold.ArgumentError, match="needs 0 or 1"):
        tenfold.gcp(X, 2, loss="bernoulli")


@pytest.mark.skipif(tenfold.gpu_count() == 0, reason="no GPU")
@pytest.mark.parametrize("sampling", ["stratified", "semi-stratified"])
def test_gpu_is_the_cpus(uber_slice, sampling):
    """One GPU draws the CPU's samples: the same estimates (to 1e-8: its gradient sums by atomics)."""
    c, v, shape = uber_slice
    X = tenfold.Tensor((c, v, shape))
    kw = dict(loss="poisson", epoch_iters=20, max_epochs=3, random_state=5, sampling=sampling)
    a = tenfold.gcp(X, 3, device="cpu", **kw)
    b = tenfold.gcp(X, 3, device="gpu", **kw)
    assert b.plan.startswith("GPU"), b.plan
    assert abs(a.loss_initial - b.loss_initial) <= 1e-12 * abs(a.loss_initial)
    assert np.allclose(a.loss_history, b.loss_history, rtol=1e-8, atol=0)


def test_checkpoint_resume(uber_slice, tmp_path):
    """4 epochs with checkpoint=, resumed to 8: the estimates and factors of 8 straight."""
    c, v, shape = uber_slice
    X = tenfold.Tensor((c, v, shape))
    kw = dict(loss="poisson", samples=(1000, 1000), fsamples=(2000, 2000), epoch_iters=20, rate=0.05, max_fails=5,
              random_state=3, threads=1, device="cpu")  # checkpoints: the CPU's (auto would run full on a GPU)
    full = tenfold.gcp(X, 3, max_epochs=8, **kw)
    stem = str(tmp_path / "ck")
    part = tenfold.gcp(X, 3, max_epochs=4, checkpoint=stem, **kw)
    assert part.loss_history == full.loss_history[:4]
    res = tenfold.gcp(X, 3, max_epochs=8, resume=stem, checkpoint=stem, **kw)
    assert res.loss_history == full.loss_history[4:] and res.loss == full.loss
    assert all(np.array_equal(a, b) for a, b in zip(res.factors, full.factors))
    with pytest.raises(tenfold.ArgumentError, match="dense"):
        tenfold.gcp(X, 2, dense=True, checkpoint=stem)
