# SPDX-License-Identifier: BSD-3-Clause
"""Completion (tenfold.complete, tenfold.predict) against a numpy float64
ALS on the observed entries from the same start: the training RMSE and the
objective after every iteration and the factors to 1e-10 relative, on a
random 3-way and 4-way tensor and a slice of a real ratings-like tensor
(the shared lastfm-2k-tags); validation and test RMSE; predictions; the
same numbers on 1 and 2 threads; method='adam' (GCP-Adam on the observed
entries) beside ALS on a planted tensor, with numpy's objective of its
model; the refusals."""
import numpy as np
import pytest
from conftest import REPO

import tenfold

RTOL = 1e-10
LASTFM = REPO.parent / "shared" / "data" / "lastfm-2k-tags.tns.xz"


def random_entries(shape, nnz, seed):
    rng = np.random.default_rng(seed)
    flat = rng.choice(int(np.prod(shape)), size=nnz, replace=False)
    coords = np.stack(np.unravel_index(flat, shape), axis=1)
    return coords, rng.uniform(1, 5, nnz)


def ref_als(coords, vals, shape, start, l2, iters):
    """numpy ALS on the observed entries: per mode, per row, the normal
    equations of its entries, solved by numpy.linalg.solve."""
    A = [a.copy() for a in start]
    N, R = len(shape), start[0].shape[1]
    hist = []
    for _ in range(iters):
        for n in range(N):
            H = np.ones((len(vals), R))
            for m in range(N):
                if m != n:
                    H *= A[m][coords[:, m]]
            for i in range(shape[n]):
                sel = coords[:, n] == i
                G = H[sel].T @ H[sel] + l2 * np.eye(R)
                A[n][i] = np.linalg.solve(G, H[sel].T @ vals[sel])
        m = model(A, coords)
        sse = float(np.sum((vals - m) ** 2))
        hist.append((np.sqrt(sse / len(vals)), sse + l2 * sum(float(np.sum(a * a)) for a in A)))
    return A, hist


def model(A, coords):
    P = np.ones((coords.shape[0], A[0].shape[1]))
    for m, a in enumerate(A):
        P *= a[coords[:, m]]
    return P.sum(axis=1)


@pytest.mark.parametrize("shape,nnz,R,l2", [((14, 11, 9), 500, 4, 0.5), ((8, 7, 6, 5), 600, 3, 0.05)])
def test_against_numpy(shape, nnz, R, l2):
    coords, vals = random_entries(shape, nnz, seed=len(shape))
    rng = np.random.default_rng(7)
    start = [rng.uniform(-1, 1, (n, R)) for n in shape]
    X = tenfold.Tensor((coords, vals, shape))
    iters = 5
    res = tenfold.complete(X, R, l2=l2, n_iter_max=iters, tol=0.0, patience=1000, init=start, threads=2)
    A, hist = ref_als(coords, vals, shape, start, l2, iters)
    assert res.n_iter == iters and len(res.train_rmse_history) == iters
    for k, (rmse, obj) in enumerate(hist):
        assert res.train_rmse_history[k] == pytest.approx(rmse, rel=RTOL), k
        assert res.objective_history[k] == pytest.approx(obj, rel=RTOL), k
    # the objective never rises
    o = res.objective_history
    assert all(b <= a * (1 + 1e-12) for a, b in zip(o, o[1:]))
    assert np.all(np.isnan(res.val_rmse_history)) and np.isnan(res.test_rmse)
    if res.best_iter == iters:
        for a, b in zip(res.factors, A):
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10 * np.abs(b).max())
    np.testing.assert_array_equal(res.weights, np.ones(R))


def test_realdata_slice():
    if not LASTFM.exists():
        pytest.skip(f"{LASTFM} not present")
    X = tenfold.read(str(LASTFM))
    # its first 3000 entries, every mode's indices renumbered densely
    c = np.asarray(X.coords)[:3000]
    coords = np.stack([np.unique(c[:, m], return_inverse=True)[1] for m in range(X.ndim)], axis=1)
    vals = np.log1p(np.asarray(X.values)[:3000])
    shape = tuple(int(x) for x in coords.max(axis=0) + 1)
    assert len(vals) > 100
    R, l2 = 3, 0.3
    rng = np.random.default_rng(3)
    start = [rng.uniform(-1, 1, (n, R)) for n in shape]
    res = tenfold.complete(tenfold.Tensor((coords, vals, shape)), R, l2=l2, n_iter_max=4, tol=0.0, patience=100,
                           init=start)
    _, hist = ref_als(coords, vals, shape, start, l2, 4)
    for k, (rmse, obj) in enumerate(hist):
        assert res.train_rmse_history[k] == pytest.approx(rmse, rel=RTOL)
        assert res.objective_history[k] == pytest.approx(obj, rel=RTOL)


def test_held_out_predict_threads():
    shape = (20, 15, 10)
    rng = np.random.default_rng(5)
    F = [rng.uniform(0, 1, (n, 2)) for n in shape]
    coords = np.argwhere(np.ones(shape, dtype=bool))
    vals = model(F, coords)
    part = rng.uniform(size=len(vals))
    tr, va, te = part < 0.4, (part >= 0.4) & (part < 0.5), part >= 0.5
    T = lambda s: tenfold.Tensor((coords[s], vals[s], shape))  # noqa: E731
    runs = [tenfold.complete(T(tr), 2, val=T(va), test=T(te), l2=1e-3, n_iter_max=60, tol=0.0,
                             threads=t) for t in (1, 2)]
    a, b = runs
    assert a.train_rmse_history == b.train_rmse_history and a.val_rmse_history == b.val_rmse_history
    for x, y in zip(a.factors, b.factors):
        np.testing.assert_array_equal(x, y)
    assert a.val_rmse == min(a.val_rmse_history) and a.val_rmse == a.val_rmse_history[a.best_iter - 1]
    # the test RMSE is the RMSE of predict at the test coordinates
    p = tenfold.predict(a, coords[te])
    np.testing.assert_allclose(p, model(a.factors, coords[te]), rtol=1e-12, atol=1e-14)
    assert np.sqrt(np.mean((p - vals[te]) ** 2)) == pytest.approx(a.test_rmse, rel=1e-12)
    assert a.test_rmse < 0.05
    # a Tensor's coordinates too; a single coordinate
    np.testing.assert_array_equal(tenfold.predict(a, T(te)), p)  # argwhere's order is the Tensor's
    assert tenfold.predict(a, [1, 2, 3]).shape == (1,)
    # a callback that stops
    seen = []
    r = tenfold.complete(T(tr), 2, l2=1e-3, callback=lambda info: seen.append(info.iter) or info.iter == 3)
    assert seen == [1, 2, 3] and r.stopped and r.n_iter == 3


def test_errors():
    coords, vals = random_entries((6, 5, 4), 40, seed=1)
    X = tenfold.Tensor((coords, vals, (6, 5, 4)))
    with pytest.raises(tenfold.ArgumentError, match="method"):
        tenfold.complete(X, 2, method="sgd")
    with pytest.raises(tenfold.ArgumentError, match="epoch_iters"):
        tenfold.complete(X, 2, method="adam", epoch_iters=0)
    with pytest.raises(tenfold.ArgumentError, match="rate 0 is not a finite number > 0"):
        tenfold.complete(X, 2, method="adam", rate=0)
    if tenfold.gpu_count() == 0:  # on the GPU: test_gpu_device_matches_cpu, test_gpu_adam
        with pytest.raises(tenfold.UnavailableError):
            tenfold.complete(X, 2, device="gpu")
        with pytest.raises(tenfold.UnavailableError):
            tenfold.complete(X, 2, method="adam", device="gpu")
    with pytest.raises(tenfold.ArgumentError, match="l2"):
        tenfold.complete(X, 2, l2=-1)
    with pytest.raises(tenfold.ArgumentError, match="rank"):
        tenfold.complete(X, 0)
    far = tenfold.Tensor((np.array([[6, 0, 0]]), np.array([1.0]), (7, 5, 4)))
    with pytest.raises(tenfold.ArgumentError, match="test entry 1 has mode-1 index 7"):
        tenfold.complete(X, 2, test=far)
    res = tenfold.complete(X, 2, n_iter_max=2)
    with pytest.raises(tenfold.ArgumentError, match="outside the model"):
        tenfold.predict(res, [[6, 0, 0]])
    with pytest.raises(tenfold.ArgumentError, match="shape"):
        tenfold.predict(res, [[1, 2]])


def test_adam_planted():
    """method='adam': the same objective as ALS's, its test RMSE near ALS's
    on a planted rank-3 tensor with 30 % observed, the report's objective
    numpy's, the same numbers again from the seed."""
    rng = np.random.default_rng(3)
    shape, R = (30, 25, 20), 3
    P = [rng.uniform(0, 1, (d, R)) for d in shape]
    full = np.einsum("ir,jr,kr->ijk", *P)
    coords = np.argwhere(np.ones(shape, dtype=bool))
    part = rng.uniform(size=len(coords))
    sets = [coords[part < 0.3], coords[(part >= 0.3) & (part < 0.35)], coords[part >= 0.35]]
    tr, va, te = (tenfold.Tensor((c, full[tuple(c.T)], shape)) for c in sets)
    als = tenfold.complete(tr, R, val=va, test=te, l2=1e-2, n_iter_max=300, tol=0, patience=1000, random_state=12)
    kw = dict(val=va, test=te, method="adam", l2=1e-2, rate=0.05, epoch_iters=200, samples=500, random_state=12,
              threads=1, device="cpu")  # the CPU's runs repeat bit for bit (the GPU's atomics do not)
    a = tenfold.complete(tr, R, **kw)
    b = tenfold.complete(tr, R, **kw)
    scale = np.sqrt(np.mean(full[tuple(sets[2].T)] ** 2))
    assert a.test_rmse < 2e-3 * scale and abs(a.test_rmse - als.test_rmse) < 2e-3 * scale, (a.test_rmse, als.test_rmse)
    assert a.test_rmse == b.test_rmse and a.val_rmse_history == b.val_rmse_history
    assert a.plan.startswith("Adam: CPU, samples of the observed entries")
    # the kept model's RMSEs and objective, by numpy
    m = np.einsum("ir,jr,kr->ijk", *a.factors)
    c = sets[0]
    sse = np.sum((m[tuple(c.T)] - full[tuple(c.T)]) ** 2)
    assert np.isclose(a.train_rmse, np.sqrt(sse / len(c)), rtol=1e-10)
    obj = sse + 1e-2 * sum(np.sum(f ** 2) for f in a.factors)
    assert np.isclose(a.objective_history[a.best_iter - 1], obj, rtol=1e-10)
    ct = sets[2]
    assert np.isclose(a.test_rmse, np.sqrt(np.mean((m[tuple(ct.T)] - full[tuple(ct.T)]) ** 2)), rtol=1e-10)


def test_gpu_device_matches_cpu():
    """device='gpu' (with a GPU): the CPU's RMSEs per iteration and factors to 1e-10."""
    if tenfold.gpu_count() == 0:
        pytest.skip("no GPU")
    coords, vals = random_entries((30, 20, 10), 3000, seed=4)
    n = len(vals)
    tr = tenfold.Tensor((coords[: 8 * n // 10], vals[: 8 * n // 10], (30, 20, 10)))
    va = tenfold.Tensor((coords[8 * n // 10 :], vals[8 * n // 10 :], (30, 20, 10)))
    c = tenfold.complete(tr, 4, val=va, l2=0.5, n_iter_max=8, random_state=3, device="cpu")
    g = tenfold.complete(tr, 4, val=va, l2=0.5, n_iter_max=8, random_state=3, device="gpu")
    assert g.plan.startswith("GPU"), g.plan
    assert c.n_iter == g.n_iter and c.best_iter == g.best_iter
    for h in ("train_rmse_history", "val_rmse_history", "objective_history"):
        np.testing.assert_allclose(getattr(g, h), getattr(c, h), rtol=1e-10, atol=0)
    for A, B in zip(c.factors, g.factors):
        np.testing.assert_allclose(B, A, rtol=1e-10, atol=1e-10 * np.abs(A).max())


def test_two_gpus_match_one():
    """gpus=2 (with two GPUs; TF_TEST_GPUS=2 makes one GPU two): one GPU's RMSEs
    per iteration to 1e-10 and its factors bit for bit; method='adam' to rounding."""
    if tenfold.gpu_count() < 2:
        pytest.skip("fewer than 2 GPUs")
    coords, vals = random_entries((30, 20, 10), 3000, seed=5)
    n = len(vals)
    tr = tenfold.Tensor((coords[: 8 * n // 10], vals[: 8 * n // 10], (30, 20, 10)))
    va = tenfold.Tensor((coords[8 * n // 10 :], vals[8 * n // 10 :], (30, 20, 10)))
    g = tenfold.complete(tr, 4, val=va, l2=0.5, n_iter_max=8, random_state=3, device="gpu")
    m = tenfold.complete(tr, 4, val=va, l2=0.5, n_iter_max=8, random_state=3, device="gpu", gpus=2)
    assert m.plan.startswith("2 GPUs"), m.plan
    assert g.n_iter == m.n_iter and g.best_iter == m.best_iter
    for h in ("train_rmse_history", "val_rmse_history", "objective_history"):
        np.testing.assert_allclose(getattr(m, h), getattr(g, h), rtol=1e-10, atol=0)
    for A, B in zip(g.factors, m.factors):
        np.testing.assert_array_equal(B, A)
    # Adam: every GPU draws every sample and evaluates its part; the sums'
    # order differs from one GPU's, so its epochs agree to rounding
    kw = dict(val=va, l2=0.5, n_iter_max=5, random_state=3, method="adam", rate=0.02, epoch_iters=50)
    g = tenfold.complete(tr, 4, device="gpu", **kw)
    m = tenfold.complete(tr, 4, device="gpu", gpus=2, **kw)
    assert m.plan.startswith("Adam: 2 GPUs"), m.plan
    assert g.n_iter == m.n_iter
    for h in ("train_rmse_history", "val_rmse_history", "objective_history"):
        np.testing.assert_allclose(getattr(m, h), getattr(g, h), rtol=1e-9, atol=0)


def test_gpu_adam():
    """method='adam' on one GPU: the CPU's draws and steps, its epochs to
    rounding (the GPU's gradient is summed by atomics)."""
    if tenfold.gpu_count() < 1:
        pytest.skip("no GPU")
    coords, vals = random_entries((30, 20, 10), 3000, seed=5)
    n = len(vals)
    tr = tenfold.Tensor((coords[: 8 * n // 10], vals[: 8 * n // 10], (30, 20, 10)))
    va = tenfold.Tensor((coords[8 * n // 10 :], vals[8 * n // 10 :], (30, 20, 10)))
    kw = dict(val=va, l2=0.5, n_iter_max=5, random_state=3, method="adam", rate=0.02, epoch_iters=50)
    c = tenfold.complete(tr, 4, device="cpu", **kw)
    g = tenfold.complete(tr, 4, device="gpu", **kw)
    assert g.plan.startswith("Adam: GPU"), g.plan
    assert c.n_iter == g.n_iter
    for h in ("train_rmse_history", "val_rmse_history", "objective_history"):
        np.testing.assert_allclose(getattr(g, h), getattr(c, h), rtol=1e-8, atol=0)


def test_observed_zeros(tmp_path):
    """Entries of value 0 are observed data (issue 46): kept from files,
    tuples and arrays of coordinates, fitted by the numpy ALS on the same
    entries, counted in the RMSEs; tenfold.read drops them unless
    keep_zeros=True."""
    shape, R, l2 = (12, 10, 8), 3, 0.2
    coords, vals = random_entries(shape, 400, seed=11)
    vals[::5] = 0.0  # 80 observed zeros
    path = tmp_path / "z.tns"
    with open(path, "w") as f:
        for c, v in zip(coords, vals):
            f.write(" ".join(str(int(i) + 1) for i in c) + f" {float(v)!r}\n")
    dropped = tenfold.read(str(path), base=1)
    kept = tenfold.read(str(path), base=1, keep_zeros=True)
    assert dropped.nnz == 320 and kept.nnz == 400 and np.sum(kept.values == 0) == 80
    with pytest.raises(tenfold.ArgumentError):
        tenfold.read(str(path), keep_zeros="yes")
    rng = np.random.default_rng(2)
    start = [rng.uniform(-1, 1, (n, R)) for n in shape]
    order = np.lexsort(coords.T[::-1])
    c, v = coords[order], vals[order]
    A, hist = ref_als(c, v, shape, start, l2, 3)
    for train in (str(path), (coords, vals, shape)):
        res = tenfold.complete(train, R, test=train, l2=l2, n_iter_max=3, tol=0.0, patience=100, init=start)
        for k, (rmse, obj) in enumerate(hist):
            assert res.train_rmse_history[k] == pytest.approx(rmse, rel=RTOL), k
            assert res.objective_history[k] == pytest.approx(obj, rel=RTOL), k
        assert res.test_rmse == pytest.approx(np.sqrt(np.mean((v - model(res.factors, c)) ** 2)), rel=RTOL)
    # the same entries without the zeros fit differently: they were used
    res = tenfold.complete(dropped, R, l2=l2, n_iter_max=3, tol=0.0, patience=100, init=start)
    assert abs(res.train_rmse_history[0] - hist[0][0]) > 1e-6
