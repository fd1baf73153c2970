# SPDX-License-Identifier: BSD-3-Clause
"""The Kruskal and sparse tensor helpers (tenfold/_helpers.py) against pyttb
on the same data -- small random tensors and the bundled uber-apr14 -- to
1e-10 relative (skipped where pyttb is not installed), and their errors."""
import warnings

import numpy as np
import pytest
from conftest import REPO

import tenfold

RTOL = 1e-10


@pytest.fixture(scope="module")
def ttb():
    return pytest.importorskip("pyttb")


@pytest.fixture(scope="module")
def uber():
    return tenfold.read(REPO / "data/uber-apr14.tns.xz")


def rand_tensor(shape, nnz, seed):
    """A canonical Tensor with distinct random coordinates and values of both signs."""
    rng = np.random.default_rng(seed)
    flat = rng.choice(int(np.prod(shape)), size=nnz, replace=False)
    coords = np.stack(np.unravel_index(flat, shape), axis=1)
    vals = rng.uniform(-1, 1, nnz)
    return tenfold.Tensor((coords, vals, tuple(shape)))


def rand_kt(shape, R, seed, negative=False):
    rng = np.random.default_rng(seed)
    w = rng.uniform(0.5, 3.0, R) * (np.where(rng.random(R) < 0.5, -1, 1) if negative else 1)
    return w, [rng.standard_normal((n, R)) for n in shape]


def sp(ttb, X):
    return ttb.sptensor(X.coords.astype(np.int64), X.values.reshape(-1, 1), X.shape)


def kt(ttb, K):
    w, fs = K
    return ttb.ktensor([np.asfortranarray(f) for f in fs], np.array(w, dtype=float))


def rel(a, b):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    assert a.shape == b.shape, (a.shape, b.shape)
    nb = np.linalg.norm(b)
    return np.linalg.norm(a - b) / (nb if nb > 0 else 1.0)


def assert_kt(ours, theirs):
    w, fs = ours
    assert rel(w, theirs.weights) <= RTOL
    assert len(fs) == len(theirs.factor_matrices)
    for a, b in zip(fs, theirs.factor_matrices):
        assert rel(a, b) <= RTOL


def dense_of(ttb, x):
    if isinstance(x, tenfold.Tensor):
        return x.to_dense()
    if isinstance(x, ttb.sptensor):
        return x.full().double()
    if isinstance(x, ttb.tensor):
        return x.double()
    return np.asarray(x, dtype=float)


def assert_same(ttb, ours, theirs):
    """A helper's result (Tensor, vector or float) equals pyttb's (sptensor,
    tensor, vector or float): densely when small, else entry by entry."""
    if np.ndim(theirs) == 0 and not isinstance(theirs, (ttb.sptensor, ttb.tensor)):
        assert isinstance(ours, float)
        assert abs(ours - theirs) <= RTOL * max(abs(theirs), 1e-300), (ours, theirs)
        return
    shape = theirs.shape if hasattr(theirs, "shape") else np.shape(theirs)
    if np.prod(shape) <= 2**22:
        assert rel(dense_of(ttb, ours), dense_of(ttb, theirs).reshape(tuple(shape))) <= RTOL
        return
    assert isinstance(ours, tenfold.Tensor) and isinstance(theirs, ttb.sptensor)
    T = tenfold.as_tensor(theirs)  # canonical: sorted, zeros dropped
    assert ours.shape == T.shape and ours.nnz == T.nnz
    assert np.array_equal(ours.coords, T.coords)
    assert rel(ours.values, T.values) <= RTOL


SHAPES = [((12, 9, 7), 150, 1), ((6, 5, 4, 7), 300, 2), ((40, 30), 500, 3)]


@pytest.fixture(params=range(len(SHAPES)), ids=["3-way", "4-way", "matrix"])
def X(request):
    shape, nnz, seed = SHAPES[request.param]
    return rand_tensor(shape, nnz, seed)


# ----------------------------------------------------------------- Kruskal

def test_model_values_innerprod(ttb, X):
    K = rand_kt(X.shape, 5, 11)
    m = tenfold.model_values(X, K)
    want = kt(ttb, K).full().double()[tuple(X.coords.T)]
    assert rel(m, want) <= RTOL
    ip = tenfold.innerprod(K, X)
    ref = kt(ttb, K).innerprod(sp(ttb, X))
    assert abs(ip - ref) <= RTOL * abs(ref)
    assert tenfold.innerprod(X, K) == ip  # either order
    # weights of None (tensorly) count as ones; a CPResult, a pyttb.ktensor
    assert abs(tenfold.innerprod(kt(ttb, K), X) - ip) <= RTOL * abs(ip)
    ones = (np.ones(5), K[1])
    assert abs(tenfold.innerprod((None, K[1]), X) - tenfold.innerprod(ones, X)) == 0


def test_tensorly_cptensor(X):
    tl_cp = pytest.importorskip("tensorly.cp_tensor")
    K = rand_kt(X.shape, 3, 4)
    cp = tl_cp.CPTensor((K[0], list(K[1])))
    assert tenfold.innerprod(cp, X) == tenfold.innerprod(K, X)
    assert tenfold.norm(cp) == tenfold.norm(K)
    assert rel(tenfold.full(cp), tl_cp.cp_to_tensor(cp)) <= RTOL


def test_innerprod_uber(ttb, uber):
    K = rand_kt(uber.shape, 16, 5)
    ip = tenfold.innerprod(K, uber)
    ref = kt(ttb, K).innerprod(sp(ttb, uber))
    assert abs(ip - ref) <= RTOL * abs(ref)
    m = tenfold.model_values(uber, K)
    want = np.ones((uber.nnz, 16)) * K[0]
    for n, f in enumerate(K[1]):
        want *= f[uber.coords[:, n]]
    assert rel(m, want.sum(axis=1)) <= RTOL
    assert abs(np.dot(m, uber.values) - ip) <= RTOL * abs(ip)


def test_innerprod_other_pairs(ttb, X):
    A, B = rand_kt(X.shape, 4, 1), rand_kt(X.shape, 3, 2)
    ref = kt(ttb, A).innerprod(kt(ttb, B))
    assert abs(tenfold.innerprod(A, B) - ref) <= RTOL * abs(ref)
    Y = rand_tensor(X.shape, 100, 9)
    Z = tenfold.Tensor((np.vstack([X.coords[:40], Y.coords[:10]]),
                        np.concatenate([np.arange(1.0, 41.0), np.ones(10)]), X.shape))
    ref = sp(ttb, X).innerprod(sp(ttb, Z))
    assert abs(tenfold.innerprod(X, Z) - ref) <= RTOL * abs(ref)


def test_norm(ttb, X):
    K = rand_kt(X.shape, 6, 3, negative=True)
    ref = kt(ttb, K).norm()
    assert abs(tenfold.norm(K) - ref) <= RTOL * ref
    assert abs(tenfold.norm(X) - sp(ttb, X).norm()) <= RTOL * sp(ttb, X).norm()


def test_norm_uber(ttb, uber):
    K = rand_kt(uber.shape, 16, 4)
    assert abs(tenfold.norm(K) - kt(ttb, K).norm()) <= RTOL * kt(ttb, K).norm()
    assert abs(tenfold.norm(uber) - sp(ttb, uber).norm()) <= RTOL * sp(ttb, uber).norm()


def test_full(ttb, X):
    K = rand_kt(X.shape, 4, 5)
    assert rel(tenfold.full(K), kt(ttb, K).full().double()) <= RTOL
    # a CPResult
    res = tenfold.cp_als(X, 3, n_iter_max=3, device="cpu")
    assert rel(tenfold.full(res), res.to_pyttb().full().double()) <= RTOL


def test_full_refuses_large():
    K = (np.ones(2), [np.ones((1024, 2)), np.ones((1024, 2)), np.ones((256, 2))])  # 2**28 entries
    with pytest.raises(tenfold.ArgumentError, match="force=True"):
        tenfold.full(K)


@pytest.mark.parametrize("kw", [{}, {"sort": True}, {"weight_factor": 1}, {"weight_factor": "all"},
                                {"normtype": 1}, {"mode": 2}, {"sort": True, "weight_factor": 0}])
def test_normalize(ttb, kw):
    K = rand_kt((7, 6, 5), 4, 6, negative=True)
    before = [f.copy() for f in K[1]]
    ours = tenfold.normalize(K, **kw)
    theirs = kt(ttb, K).normalize(**kw)
    assert_kt(ours, theirs)
    assert all(np.array_equal(a, b) for a, b in zip(K[1], before))  # the input is not changed


@pytest.mark.parametrize("kw", [{}, {"permutation": [2, 0, 3, 1]}, {"weight_factor": 2}])
def test_arrange(ttb, kw):
    K = rand_kt((7, 6, 5), 4, 7, negative=True)
    ours = tenfold.arrange(K, **kw)
    theirs = kt(ttb, K)
    theirs.arrange(**kw)
    assert_kt(ours, theirs)


def test_fixsigns(ttb):
    K = rand_kt((8, 7, 6, 5), 5, 8)
    ours = tenfold.fixsigns(K)
    assert_kt(ours, kt(ttb, K).fixsigns())
    assert rel(tenfold.full(ours), tenfold.full(K)) <= RTOL  # the model is unchanged


def test_fixsigns_other(ttb):
    K = rand_kt((8, 7, 6, 5), 4, 9)
    w, fs = K
    flipped = [f.copy() for f in fs]
    flipped[0][:, 1] *= -1  # pairs of flips: component 1 in modes 0 and 2, component 3 in all four
    flipped[2][:, 1] *= -1
    for f in flipped:
        f[:, 3] *= -1
    other = (w, flipped)
    ours = tenfold.fixsigns(K, other)
    theirs = kt(ttb, K).fixsigns(kt(ttb, other))
    assert_kt(ours, theirs)
    for a, b in zip(ours[1], tenfold.normalize(other)[1]):
        assert rel(a, b) <= RTOL  # now lined up with other


def test_fixsigns_odd():
    """Three modes of four against other: pairs only (the Tensor Toolbox's rule), so the model stays."""
    K = rand_kt((8, 7, 6, 5), 2, 10)
    flipped = [f.copy() for f in K[1]]
    for n in range(3):
        flipped[n][:, 0] *= -1
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        ours = tenfold.fixsigns(K, (K[0], flipped))
    assert any("Trouble fixing signs" in str(x.message) for x in seen)
    assert rel(tenfold.full(ours), tenfold.full(K)) <= RTOL


@pytest.mark.parametrize("penalty", [True, False])
@pytest.mark.parametrize("RA,RB", [(4, 4), (6, 4)])
def test_score(ttb, penalty, RA, RB):
    rng = np.random.default_rng(RA * 10 + RB)
    A = rand_kt((9, 8, 7), RA, 12)
    pick = rng.permutation(RA)[:RB]
    B = (A[0][pick] * rng.uniform(0.8, 1.2, RB), [f[:, pick] + 0.05 * rng.standard_normal((f.shape[0], RB))
                                                  for f in A[1]])
    s, perm = tenfold.score(A, B, weight_penalty=penalty)
    ref = kt(ttb, A).score(kt(ttb, B), weight_penalty=penalty)
    assert abs(s - ref[0]) <= RTOL * abs(ref[0])
    assert np.array_equal(perm, ref[3])
    assert np.array_equal(perm[:RB], pick)
    s1, _ = tenfold.score(A, A)
    assert abs(s1 - 1.0) <= 1e-12


# ----------------------------------------------------------------- sparse

def mode_sets(N):
    return [[0], [N - 1], list(range(N - 1)), list(range(N))] + ([[0, 2]] if N > 2 else [])


def test_ttv(ttb, X):
    rng = np.random.default_rng(13)
    S = sp(ttb, X)
    vecs = [rng.standard_normal(n) for n in X.shape]
    for modes in mode_sets(X.ndim):
        ours = tenfold.ttv(X, [vecs[m] for m in modes], modes=modes)
        theirs = S.ttv([vecs[m] for m in modes], modes)
        assert_same(ttb, ours, theirs)
        assert_same(ttb, tenfold.ttv(X, vecs, modes=modes), theirs)  # one vector per mode of X
    assert_same(ttb, tenfold.ttv(X, vecs[1:], exclude=[0]), S.ttv(vecs[1:], exclude_dims=[0]))
    assert_same(ttb, tenfold.ttv(X, vecs[0], 0), S.ttv(vecs[0], 0))
    assert_same(ttb, tenfold.ttv(X, list(vecs[0]), 0), S.ttv(vecs[0], 0))


def test_ttv_uber(ttb, uber):
    rng = np.random.default_rng(14)
    S = sp(ttb, uber)
    vecs = [rng.uniform(0, 1, n) for n in uber.shape]
    for modes in ([1], [0, 1], [0, 1, 3], [0, 1, 2, 3]):
        assert_same(ttb, tenfold.ttv(uber, vecs, modes=modes), S.ttv([vecs[m] for m in modes], modes))


@pytest.mark.parametrize("op", ["sum", "max", "min"])
def test_collapse(ttb, X, op):
    fn = {"sum": np.sum, "max": np.max, "min": np.min}[op]
    S = sp(ttb, X)
    for modes in mode_sets(X.ndim):
        assert_same(ttb, tenfold.collapse(X, modes, fn), S.collapse(np.array(modes), fn))
    assert_same(ttb, tenfold.collapse(X, op=op), S.collapse(None, fn))


@pytest.mark.parametrize("op", ["sum", "max"])
def test_collapse_uber(ttb, uber, op):
    fn = {"sum": np.sum, "max": np.max}[op]
    S = sp(ttb, uber)
    for modes in ([3], [2, 3], [0, 1, 2]):
        assert_same(ttb, tenfold.collapse(uber, modes, op), S.collapse(np.array(modes), fn))


def test_scale(ttb, X):
    rng = np.random.default_rng(15)
    S = sp(ttb, X)
    for m in range(X.ndim):
        v = rng.standard_normal(X.shape[m])
        v[::3] = 0.0  # entries scaled to zero are dropped
        assert_same(ttb, tenfold.scale(X, v, mode=m), S.scale(v, m))
    assert_same(ttb, tenfold.scale(X, -2.5), S * -2.5)


def test_scale_permute_uber(ttb, uber):
    S = sp(ttb, uber)
    v = np.linspace(0.5, 2.0, uber.shape[2])
    assert_same(ttb, tenfold.scale(uber, v, mode=2), S.scale(v, 2))
    assert_same(ttb, tenfold.permute(uber, [3, 1, 0, 2]), S.permute(np.array([3, 1, 0, 2])))


def test_permute(ttb, X):
    S = sp(ttb, X)
    for order in (list(range(X.ndim))[::-1], [*range(1, X.ndim), 0]):
        ours = tenfold.permute(X, order)
        assert_same(ttb, ours, S.permute(np.array(order)))
        assert np.array_equal(ours.coords, tenfold.Tensor(ours).coords)  # sorted


def test_subtensor(ttb, X):
    S = sp(ttb, X)
    N = X.ndim
    boxes = [tuple(slice(1, d - 1) for d in X.shape), tuple(slice(None) for _ in X.shape),
             (slice(2, 5),) + (slice(None),) * (N - 2) + (slice(-3, None),),
             (1,) + (slice(None),) * (N - 1)]
    if N > 2:
        boxes.append((2, slice(0, 4)) + (3,) * (N - 2))
    for box in boxes:
        assert_same(ttb, tenfold.subtensor(X, box), S[box])
    assert_same(ttb, tenfold.subtensor(X, tuple(c for c in X.coords[0])), S[tuple(int(c) for c in X.coords[0])])


def test_subtensor_uber(ttb, uber):
    S = sp(ttb, uber)
    box = (slice(0, 10), slice(None), slice(100, 400), slice(5, 1000))
    assert_same(ttb, tenfold.subtensor(uber, box), S[box])


def test_ttm_chain(ttb, X):
    rng = np.random.default_rng(16)
    S = sp(ttb, X)
    V = [rng.standard_normal((3, n)) for n in X.shape]  # pyttb's R x I
    for modes in mode_sets(X.ndim):
        ours = tenfold.ttm_chain(X, [V[m] for m in modes], modes, transpose=True)
        theirs = S.ttm([V[m] for m in modes], modes)
        assert_same(ttb, ours, theirs)
        assert isinstance(ours, np.ndarray) == (len(modes) == X.ndim)
        ours_u = tenfold.ttm_chain(X, [V[m].T for m in modes], modes)  # tenfold's I x R
        assert_same(ttb, ours_u, theirs)


def test_nvecs(ttb, X):
    S = sp(ttb, X)
    for n in range(X.ndim):
        r = 2
        ours = tenfold.nvecs(X, n, r)
        theirs = np.real(S.nvecs(n, r))
        assert ours.shape == theirs.shape
        # the same leading subspace (pyttb's eigs branch leaves the columns in ARPACK's order)
        assert rel(ours @ ours.T, theirs @ theirs.T) <= 1e-8
        big = ours[np.argmax(np.abs(ours), axis=0), np.arange(r)]
        assert np.all(big > 0)  # flipsign


# ----------------------------------------------------------------- errors

def test_errors(X):
    K = rand_kt(X.shape, 3, 1)
    bad = (K[0], [K[1][0][:-1]] + K[1][1:])
    with pytest.raises(tenfold.ArgumentError, match="shape"):
        tenfold.innerprod(bad, X)
    with pytest.raises(tenfold.ArgumentError, match="columns"):
        tenfold.norm((np.ones(2), K[1]))
    with pytest.raises(tenfold.ArgumentError, match="Kruskal"):
        tenfold.full("not a ktensor")
    with pytest.raises(tenfold.ArgumentError, match="modes"):
        tenfold.ttv(X, [np.ones(X.shape[0])], modes=[X.ndim])
    with pytest.raises(tenfold.ArgumentError, match="entries"):
        tenfold.ttv(X, [np.ones(X.shape[0] + 1)], modes=[0])
    with pytest.raises(tenfold.ArgumentError, match="twice"):
        tenfold.collapse(X, [0, 0])
    with pytest.raises(tenfold.ArgumentError, match="op"):
        tenfold.collapse(X, [0], np.mean)
    with pytest.raises(tenfold.ArgumentError, match="mode"):
        tenfold.scale(X, np.ones(X.shape[0]))
    with pytest.raises(tenfold.ArgumentError, match="permutation"):
        tenfold.permute(X, [0] * X.ndim)
    with pytest.raises(tenfold.ArgumentError, match="empty"):
        tenfold.subtensor(X, (slice(3, 3),) + (slice(None),) * (X.ndim - 1))
    with pytest.raises(tenfold.ArgumentError, match="step"):
        tenfold.subtensor(X, (slice(0, 4, 2),) + (slice(None),) * (X.ndim - 1))
    with pytest.raises(tenfold.ArgumentError, match="outside"):
        tenfold.subtensor(X, (X.shape[0],) + (slice(None),) * (X.ndim - 1))
    with pytest.raises(tenfold.ArgumentError, match="components"):
        tenfold.score(rand_kt(X.shape, 2, 1), rand_kt(X.shape, 3, 2))
    with pytest.raises(tenfold.ArgumentError, match="permutation"):
        tenfold.arrange(K, [0, 0, 1])


def test_fixsigns_ties_nan_layouts(ttb):
    """The C pass (tf_ktensor_fixsigns) on ties, a NaN and arrays that are not C-contiguous, as pyttb."""
    from tenfold import _helpers

    w, fs = rand_kt((9, 7, 6, 5), 4, 11, negative=True)
    fs[0][2, 1], fs[0][5, 1] = -50.0, 50.0  # a tie: the first (negative) wins
    fs[1][3, 2] = np.nan  # the largest: not negative
    theirs = kt(ttb, (w, fs)).fixsigns()
    wide = np.zeros((fs[2].shape[0], 2 * fs[2].shape[1]))
    wide[:, ::2] = fs[2]
    ours = [np.asfortranarray(fs[0]), fs[1].copy(), wide[:, ::2], fs[3].copy()]  # F order, C, a strided view, C
    _helpers.fixsigns_inplace(ours)
    for a, b in zip(ours, theirs.factor_matrices):
        assert np.array_equal(a, b, equal_nan=True)
    assert np.array_equal(wide[:, ::2], ours[2])  # written back into the caller's view
