# SPDX-License-Identifier: BSD-3-Clause
"""CP-APR (tenfold.cp_apr) against pyttb.cp_apr(algorithm='mu') -- and
'pdnr', the row-wise Newton method, whose per-iteration log-likelihoods
pyttb prints (output['fnVals']) -- from the same start: the log-likelihood after every outer iteration (pyttb run for 1..K
iterations: its output['obj']) and the KKT violations to 1e-9 relative, the
final model, on a planted Poisson tensor and a real count tensor (the shared
enron-igraphdata); the CLI's numbers; results, callbacks and errors."""
import json
import subprocess

import numpy as np
import pytest
from conftest import REPO

import tenfold

RTOL = 1e-9
ENRON = REPO.parent / "shared" / "data" / "enron-igraphdata.tns.xz"


@pytest.fixture(scope="module")
def ttb():
    return pytest.importorskip("pyttb")


def planted_poisson(shape, R, seed):
    """Counts drawn from a rank-R Poisson model (factors of a few large
    entries), the zeros dropped: a sparse count tensor."""
    rng = np.random.default_rng(seed)
    F = [rng.gamma(0.3, 1.0, (n, R)) for n in shape]
    M = np.einsum("ir,jr,kr->ijk", *F) * 3.0
    D = rng.poisson(M).astype(float)
    coords = np.argwhere(D > 0)
    return tenfold.Tensor((coords, D[tuple(coords.T)], shape))


def start(shape, R, seed):
    rng = np.random.default_rng(seed)
    return [rng.uniform(0, 1, (n, R)) for n in shape]


def pyttb_runs(ttb, X, F, R, K):
    """pyttb's log-likelihood after 1..K outer iterations (one run each: it
    reports the final one only), its KKT violations and final model."""
    S = ttb.sptensor(X.coords.astype(np.int64), X.values.reshape(-1, 1), X.shape)
    ll = []
    for k in range(1, K + 1):
        M, _, out = ttb.cp_apr(S, R, init=ttb.ktensor([f.copy() for f in F]), maxiters=k, printitn=0)
        ll.append(out["obj"])
    return ll, list(out["kktViolations"]), M, out


def rel(a, b):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return np.max(np.abs(a - b) / np.abs(b))


def check_against_pyttb(ttb, X, R, K, seed):
    F = start(X.shape, R, seed)
    res = tenfold.cp_apr(X, R, init=[f.copy() for f in F], maxiters=K)
    ll, kkt, M, out = pyttb_runs(ttb, X, F, R, K)
    assert res.n_iter == len(ll) == K and not res.converged
    assert rel(res.loglik_history, ll) <= RTOL, (res.loglik_history, ll)
    assert rel(res.kkt_history, kkt) <= RTOL, (res.kkt_history, kkt)
    assert res.loglik == res.loglik_history[-1]
    assert res.inner_iterations == out["nTotalIters"]
    # the model: pyttb's normalize(sort=True, normtype=1) -- unit 1-norm columns, weights decreasing --
    # after which its tt_loglikelihood folded the weights into the first factor (in place)
    ours = [res.factors[0] * res.weights] + res.factors[1:]
    for a, b in zip(ours, M.factor_matrices):
        assert np.max(np.abs(a - b)) <= 1e-8 * np.max(np.abs(b))
    return res


def test_planted_poisson_equals_pyttb(ttb):
    X = planted_poisson((30, 25, 20), 3, seed=4)
    assert X.nnz > 1000
    res = check_against_pyttb(ttb, X, 3, 10, seed=5)
    np.testing.assert_allclose([f.sum(axis=0) for f in res.factors], 1.0, rtol=1e-12)
    assert list(res.weights) == sorted(res.weights, reverse=True)


def test_real_counts_equal_pyttb(ttb):
    if not ENRON.exists():
        pytest.skip(f"{ENRON} is not there")
    X = tenfold.read(ENRON)
    assert np.all(X.values == np.round(X.values))
    check_against_pyttb(ttb, X, 4, 6, seed=7)


def test_same_numbers_as_cli(cli, tmp_path):
    X = planted_poisson((20, 15, 10), 2, seed=1)
    path = tmp_path / "x.tns"
    tenfold.write(path, X)
    res = tenfold.cp_apr(X, 2, maxiters=5, random_state=3, device="cpu")
    rep = tmp_path / "r.json"
    subprocess.run([cli, "cpd", str(path), "-r", "2", "--method", "apr", "-i", "5", "--seed", "3", "--nowrite", "-q",
                    "--json", str(rep)], check=True)
    r = json.loads(rep.read_text())
    np.testing.assert_allclose(res.loglik_history, [i["log_likelihood"] for i in r["iterations"]], rtol=1e-12)
    np.testing.assert_allclose(res.kkt_history, [i["kkt_violation"] for i in r["iterations"]], rtol=1e-12)


def test_result_and_convergence():
    X = planted_poisson((15, 12, 10), 2, seed=2)
    res = tenfold.cp_apr(X, 2, stoptol=0.5)
    assert res.converged and res.n_iter < 1000 and len(res.loglik_history) == res.n_iter
    assert set(res.timings) == {"build", "phi", "dense", "loglik", "total"}
    assert 0 < res.fit <= 1 and res.fit_history == []
    assert "loglik=" in repr(res)
    w, fs = res
    assert w.shape == (2,) and [f.shape for f in fs] == [(15, 2), (12, 2), (10, 2)]
    again = tenfold.cp_apr(X, 2, stoptol=0.5)
    assert again.loglik_history == res.loglik_history  # the same seed, the same run


def test_callback_stops_and_sees_iterations():
    X = planted_poisson((15, 12, 10), 2, seed=3)
    seen = []

    def cb(info):
        seen.append((info.iter, info.loglik, info.kkt, info.inner_iters))
        return info.iter == 3

    res = tenfold.cp_apr(X, 2, callback=cb)
    assert res.stopped and res.n_iter == 3 and [s[0] for s in seen] == [1, 2, 3]
    assert [s[1] for s in seen] == res.loglik_history


def test_errors():
    X = planted_poisson((10, 9, 8), 2, seed=5)
    vals = X.values.copy()
    vals[4] = 2.5
    bad = tenfold.Tensor((X.coords, vals, X.shape))
    i = tuple(int(c) + 1 for c in X.coords[4])
    with pytest.raises(tenfold.ArgumentError, match=r"CP-APR needs counts .*the non-zero at \(%d, %d, %d\) \(1-based\) "
                       r"is 2\.5" % i):
        tenfold.cp_apr(bad, 2)
    if tenfold.gpu_count() == 0:  # one GPU runs it where there is one
        with pytest.raises(tenfold.UnavailableError):
            tenfold.cp_apr(X, 2, device="gpu")
    with pytest.raises(tenfold.ArgumentError, match="initial factor 1 has -1"):
        F = start(X.shape, 2, 1)
        F[0][0, 0] = -1.0
        tenfold.cp_apr(X, 2, init=F)
    with pytest.raises(tenfold.ArgumentError, match="algorithm"):
        tenfold.cp_apr(X, 2, algorithm="pqnr")
    with pytest.raises(tenfold.UnavailableError, match="pdnr: not available on the GPU"):
        tenfold.cp_apr(X, 2, algorithm="pdnr", device="gpu")
    with pytest.raises(tenfold.ArgumentError, match="mu0"):
        tenfold.cp_apr(X, 2, algorithm="pdnr", mu0=-1)
    with pytest.raises(tenfold.ArgumentError, match="epsDivZero"):
        tenfold.cp_apr(X, 2, epsDivZero=0)
    with pytest.raises(tenfold.ArgumentError, match="maxinneriters"):
        tenfold.cp_apr(X, 2, maxinneriters=0)
    with pytest.raises(tenfold.ArgumentError, match="init"):
        tenfold.cp_apr(X, 2, init="nvecs")


def pyttb_pdnr(ttb, X, F, R, K, capsys, **kw):
    """pyttb's pdnr for K outer iterations: its log-likelihood after each
    (output['fnVals'], negated: computed when it prints), KKT violations,
    Newton steps per iteration and final model."""
    S = ttb.sptensor(X.coords.astype(np.int64), X.values.reshape(-1, 1), X.shape)
    def run(k):
        return ttb.cp_apr(S, R, algorithm="pdnr", init=ttb.ktensor([f.copy() for f in F]), maxiters=k, printitn=1,
                          **kw)

    M, _, out = run(K)
    ll = -out["fnVals"]
    if not kw.get("inexact", True):  # pyttb computes fnVals only when inexact: one run per iteration count
        ll = [run(k)[2]["obj"] for k in range(1, len(out["fnVals"]) + 1)]
    capsys.readouterr()
    return ll, out["kktViolations"], out["nInnerIters"], M, out


def check_pdnr(ttb, capsys, X, R, K, seed, **kw):
    F = start(X.shape, R, seed)
    seen = []
    res = tenfold.cp_apr(X, R, algorithm="pdnr", init=[f.copy() for f in F], maxiters=K, device="cpu",
                         callback=lambda i: seen.append(i.inner_iters), **kw)
    ll, kkt, inner, M, out = pyttb_pdnr(ttb, X, F, R, K, capsys, **kw)
    assert res.n_iter == len(ll), (res.n_iter, len(ll))
    assert rel(res.loglik_history, ll) <= RTOL, (res.loglik_history, ll)
    assert rel(res.kkt_history, kkt) <= RTOL, (res.kkt_history, kkt)
    assert seen == list(inner)  # Newton steps per outer iteration, summed over the rows
    assert abs(res.loglik - out["obj"]) <= RTOL * abs(out["obj"])
    ours = [res.factors[0] * res.weights] + res.factors[1:]
    for a, b in zip(ours, M.factor_matrices):
        assert np.max(np.abs(a - b)) <= 1e-7 * np.max(np.abs(b))
    return res


def test_pdnr_planted_poisson_equals_pyttb(ttb, capsys):
    X = planted_poisson((30, 25, 20), 3, seed=4)
    res = check_pdnr(ttb, capsys, X, 3, 8, seed=5)
    assert res.loglik_history[-1] > res.loglik_history[0]


def test_pdnr_exact_and_converged_equal_pyttb(ttb, capsys):
    X = planted_poisson((12, 10, 9), 2, seed=8)
    res = check_pdnr(ttb, capsys, X, 2, 200, seed=9, stoptol=1e-3)
    assert res.converged and res.n_iter < 200
    check_pdnr(ttb, capsys, X, 2, 4, seed=9, inexact=False, maxinneriters=5, mu0=1e-3)


def test_pdnr_real_counts_equal_pyttb(ttb, capsys):
    if not ENRON.exists():
        pytest.skip(f"{ENRON} is not there")
    X = tenfold.read(ENRON)
    # a slice: the first 40 senders' and receivers' (pyttb's row loop is Python)
    keep = (X.coords[:, 0] < 40) & (X.coords[:, 1] < 40)
    Y = tenfold.Tensor((X.coords[keep], X.values[keep], (40, 40) + tuple(X.shape[2:])))
    assert Y.nnz > 500
    check_pdnr(ttb, capsys, Y, 4, 4, seed=7)


def test_pdnr_threads_same_bits():
    X = planted_poisson((40, 30, 20), 3, seed=6)
    a = tenfold.cp_apr(X, 3, algorithm="pdnr", maxiters=5, threads=1, device="cpu")
    b = tenfold.cp_apr(X, 3, algorithm="pdnr", maxiters=5, threads=2, device="cpu")
    assert a.loglik_history == b.loglik_history and a.kkt_history == b.kkt_history
