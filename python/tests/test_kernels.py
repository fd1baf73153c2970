# SPDX-License-Identifier: BSD-3-Clause
"""MTTKRP, SpTTM and SDDMM against float64 numpy references."""
import numpy as np
import pytest

import tenfold
from conftest import random_coo

LETTERS = "abcdefghij"


def mttkrp_ref(D, factors, mode):
    N = D.ndim
    others = [m for m in range(N) if m != mode]
    spec = LETTERS[:N] + "," + ",".join(LETTERS[m] + "z" for m in others) + "->" + LETTERS[mode] + "z"
    return np.einsum(spec, D, *[factors[m] for m in others])


@pytest.mark.parametrize("shape, nnz", [((12, 9, 7), 150), ((5, 4, 3, 6), 100), ((40, 30), 200)])
def test_mttkrp(shape, nnz):
    X = tenfold.Tensor(random_coo(shape, nnz, seed=2))
    rng = np.random.default_rng(3)
    F = [rng.standard_normal((d, 5)) for d in shape]
    D = X.to_dense()
    for mode in range(len(shape)):
        got = tenfold.mttkrp(X, F, mode)
        np.testing.assert_allclose(got, mttkrp_ref(D, F, mode), rtol=1e-12, atol=1e-12)
    # any input form, and a negative mode
    np.testing.assert_allclose(tenfold.mttkrp(D, F, -1), mttkrp_ref(D, F, len(shape) - 1), rtol=1e-12)


def test_mttkrp_bad_inputs(small3):
    X = tenfold.Tensor(small3)
    F = [np.ones((d, 4)) for d in X.shape]
    with pytest.raises(tenfold.ArgumentError, match="factor 1: 8 rows, expected 9"):
        tenfold.mttkrp(X, [F[0], np.ones((8, 4)), F[2]], 0)
    with pytest.raises(tenfold.ArgumentError, match="factor 2: 3 columns"):
        tenfold.mttkrp(X, [F[0], F[1], np.ones((7, 3))], 0)
    with pytest.raises(tenfold.ArgumentError, match="2 matrices for a tensor of 3 modes"):
        tenfold.mttkrp(X, F[:2], 0)
    with pytest.raises(tenfold.ArgumentError, match="mode"):
        tenfold.mttkrp(X, F, 3)
    bad = np.ones((9, 4))
    bad[2, 1] = np.nan
    with pytest.raises(tenfold.ArgumentError, match=r"factor 1: entry \(2, 1\) is nan"):
        tenfold.mttkrp(X, [F[0], bad, F[2]], 0)
    with pytest.raises(tenfold.ArgumentError, match="dtype"):
        tenfold.mttkrp(X, [F[0], F[1].astype(str), F[2]], 0)
    with pytest.raises(tenfold.ArgumentError, match="2-D"):
        tenfold.mttkrp(X, [F[0], np.ones(9), F[2]], 0)


def test_ttm(small3):
    X = tenfold.Tensor(small3)
    D = X.to_dense()
    rng = np.random.default_rng(4)
    for mode in range(3):
        U = rng.standard_normal((X.shape[mode], 6))
        Y = tenfold.ttm(X, U, mode)
        assert isinstance(Y, tenfold.Tensor) and Y.shape[mode] == 6
        ref = np.moveaxis(np.tensordot(D, U, axes=([mode], [0])), -1, mode)
        np.testing.assert_allclose(Y.to_dense(), ref, rtol=1e-12, atol=1e-12)
    with pytest.raises(tenfold.ArgumentError, match="U: 5 rows, expected 12"):
        tenfold.ttm(X, np.ones((5, 2)), 0)


def sddmm_ref(rows, cols, vals, A, B, alpha, beta, scale):
    dots = np.einsum("ij,ij->i", A[rows], B[cols])
    return alpha * dots * (vals if scale else 1.0) + beta * vals


@pytest.mark.parametrize("alpha, beta, scale", [(1.0, 0.0, False), (2.0, 0.5, False), (-1.0, 1.0, True)])
def test_sddmm_tuple_and_tensor(alpha, beta, scale):
    coords, vals, shape = random_coo((30, 25), 120, seed=5)
    rng = np.random.default_rng(6)
    A, B = rng.standard_normal((30, 7)), rng.standard_normal((25, 7))
    ref = sddmm_ref(coords[:, 0], coords[:, 1], vals, A, B, alpha, beta, scale)
    c, P, s = tenfold.sddmm((coords, vals, shape), A, B, alpha=alpha, beta=beta, scale=scale)
    assert s == shape and np.array_equal(c, coords)
    np.testing.assert_allclose(P, ref, rtol=1e-12, atol=1e-12)  # in S's own order
    T = tenfold.Tensor((coords, vals, shape))
    PT = tenfold.sddmm(T, A, B, alpha=alpha, beta=beta, scale=scale)
    assert isinstance(PT, tenfold.Tensor)
    refT = sddmm_ref(T.coords[:, 0], T.coords[:, 1], T.values, A, B, alpha, beta, scale)
    np.testing.assert_allclose(PT.values, refT, rtol=1e-12, atol=1e-12)


def test_sddmm_dense():
    rng = np.random.default_rng(7)
    S = np.where(rng.random((10, 8)) < 0.3, rng.random((10, 8)), 0.0)
    A, B = rng.standard_normal((10, 3)), rng.standard_normal((8, 3))
    P = tenfold.sddmm(S, A, B, scale=True)
    assert isinstance(P, np.ndarray)
    np.testing.assert_allclose(P, (A @ B.T) * S, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("fmt", ["csr", "coo", "csc"])
def test_sddmm_scipy(fmt):
    sp = pytest.importorskip("scipy.sparse")
    S = sp.random(40, 30, density=0.1, format=fmt, random_state=8)
    rng = np.random.default_rng(9)
    A, B = rng.standard_normal((40, 4)), rng.standard_normal((30, 4))
    P = tenfold.sddmm(S, A, B, alpha=3.0, beta=1.0)
    assert type(P) is type(S) and P.format == fmt
    ref = 3.0 * (A @ B.T) * (S.toarray() != 0) + S.toarray()
    np.testing.assert_allclose(P.toarray(), ref, rtol=1e-12, atol=1e-12)


def test_sddmm_bad_inputs():
    S = random_coo((10, 8), 20)
    with pytest.raises(tenfold.ArgumentError, match="A: 9 rows, expected 10"):
        tenfold.sddmm(S, np.ones((9, 3)), np.ones((8, 3)))
    with pytest.raises(tenfold.ArgumentError, match="A has 3 columns, B 2"):
        tenfold.sddmm(S, np.ones((10, 3)), np.ones((8, 2)))
    with pytest.raises(tenfold.ArgumentError, match="expected a matrix"):
        tenfold.sddmm(random_coo((4, 4, 4), 5), np.ones((4, 1)), np.ones((4, 1)))
    with pytest.raises(tenfold.ArgumentError, match="device"):
        tenfold.sddmm(S, np.ones((10, 3)), np.ones((8, 3)), device="tpu")


class _DeviceArray:
    """Stands in for a CUDA array (PyTorch / CuPy) as DLPack describes it."""

    def __dlpack_device__(self):
        return (2, 0)  # kDLCUDA, device 0


def test_mixed_host_and_device_arrays_refused_clearly(small3):
    X = tenfold.Tensor(small3)
    F = [np.ones((d, 2)) for d in X.shape]
    with pytest.raises(tenfold.ArgumentError, match="factor 0 is a host array but factor 1 is on cuda:0"):
        tenfold.mttkrp(X, [F[0], _DeviceArray(), F[2]], 0)
    S = random_coo((10, 8), 20)
    with pytest.raises(tenfold.ArgumentError, match="B is a host array but A is on cuda:0"):
        tenfold.sddmm(S, _DeviceArray(), np.ones((8, 3)))
    with pytest.raises(tenfold.ArgumentError, match="out is a host array but A is on cuda:0"):
        tenfold.sddmm(S, _DeviceArray(), _DeviceArray(), out=np.empty(20))
    # GPU arrays elsewhere (cp_als starts, ttm) are refused as such
    with pytest.raises(tenfold.UnavailableError, match="U: a device array"):
        tenfold.ttm(X, _DeviceArray(), 0)


def test_host_dlpack_arrays(small3):
    X = tenfold.Tensor(small3)
    F = [np.random.default_rng(m).random((d, 2)) for m, d in enumerate(X.shape)]

    class Host:  # only the DLPack protocol, like a CPU torch tensor
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, **kw):
            return self.a.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    # one device for both (under auto a GPU machine may take either for a tensor this small)
    got = tenfold.mttkrp(X, [Host(f) for f in F], 1, device="cpu")
    np.testing.assert_array_equal(got, tenfold.mttkrp(X, F, 1, device="cpu"))


def _plan_ref(coords, vals, A, B, alpha=1.0, beta=0.0, scale=False):
    return sddmm_ref(coords[:, 0], coords[:, 1], vals, A, B, alpha, beta, scale)


@pytest.mark.parametrize("alpha, beta, scale", [(1.0, 0.0, False), (-1.5, 0.75, True)])
def test_sddmm_plan_many_runs(alpha, beta, scale):
    coords, vals, shape = random_coo((40, 30), 200, seed=11)
    order = np.random.default_rng(12).permutation(len(vals))  # not in CSR order: P comes back in S's
    coords, vals = coords[order], vals[order]
    rng = np.random.default_rng(13)
    with tenfold.SDDMMPlan((coords, vals, shape), 5, alpha=alpha, beta=beta, scale=scale, device="cpu") as plan:
        assert plan.nnz == 200 and plan.K == 5 and plan.device == "cpu"
        out = np.full(200, np.nan)
        for _ in range(4):  # new A and B every run
            A, B = rng.standard_normal((40, 5)), rng.standard_normal((30, 5))
            ref = _plan_ref(coords, vals, A, B, alpha, beta, scale)
            P = plan.run(A, B)
            np.testing.assert_allclose(P, ref, rtol=1e-12, atol=1e-12)
            _, one, _ = tenfold.sddmm((coords, vals, shape), A, B, alpha=alpha, beta=beta, scale=scale, device="cpu")
            np.testing.assert_array_equal(P, one)  # the one-shot call runs the same kernel
            out[:] = np.nan
            assert plan.run(A, B, out=out) is out
            np.testing.assert_array_equal(out, P)


@pytest.mark.parametrize("kind", ["sorted32", "sorted64", "unsorted", "duplicates"])
def test_sddmm_plan_csr_straight(kind):
    """A scipy CSR S is taken as its arrays (no COO): every index type, and
    rows with unsorted columns or duplicates, give S's order and S's pattern."""
    sp = pytest.importorskip("scipy.sparse")
    rng = np.random.default_rng(21)
    S = sp.random(35, 28, density=0.15, format="csr", random_state=22)
    indptr, indices, data = S.indptr.copy(), S.indices.copy(), S.data.copy()
    if kind == "sorted64":
        indptr, indices = indptr.astype(np.int64), indices.astype(np.int64)
    elif kind == "unsorted":  # each row's columns reversed
        for r in range(S.shape[0]):
            a, b = indptr[r], indptr[r + 1]
            indices[a:b], data[a:b] = indices[a:b][::-1].copy(), data[a:b][::-1].copy()
    elif kind == "duplicates":  # the first entry of every non-empty row twice
        rows = np.repeat(np.arange(S.shape[0]), np.diff(indptr))
        first = indptr[:-1][np.diff(indptr) > 0]
        keep = np.sort(np.concatenate([np.arange(len(indices)), first]))
        indices, data, rows = indices[keep], data[keep], rows[keep]
        indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=S.shape[0]))])
    C = sp.csr_matrix((data, indices, indptr), shape=S.shape)
    coo_rows = np.repeat(np.arange(C.shape[0]), np.diff(C.indptr))  # C's own order
    A, B = rng.standard_normal((35, 6)), rng.standard_normal((28, 6))
    ref = sddmm_ref(coo_rows, C.indices, C.data, A, B, 2.0, 0.5, False)
    with tenfold.SDDMMPlan(C, 6, alpha=2.0, beta=0.5, device="cpu") as plan:
        assert plan.nnz == C.nnz
        P = plan.run(A, B)
        np.testing.assert_allclose(P, ref, rtol=1e-12, atol=1e-12)
        L = plan.like(P)
        assert L.format == "csr" and L.shape == C.shape
        np.testing.assert_allclose(L.toarray(), sp.csr_matrix((ref, C.indices, C.indptr), shape=C.shape).toarray(),
                                   rtol=1e-12, atol=1e-12)
    P1 = tenfold.sddmm(C, A, B, alpha=2.0, beta=0.5, device="cpu")  # the one-shot call: the same
    np.testing.assert_allclose(P1.toarray(), L.toarray(), rtol=1e-12, atol=1e-12)
    bad = C.copy()
    bad.data[3] = np.nan
    with pytest.raises(tenfold.ArgumentError, match="entry 3 is nan"):
        tenfold.SDDMMPlan(bad, 6, device="cpu")


def test_sddmm_plan_types_and_precision():
    sp = pytest.importorskip("scipy.sparse")
    S = sp.random(50, 20, density=0.2, format="csc", random_state=14)  # CSC: not row-major
    rng = np.random.default_rng(15)
    plan = tenfold.SDDMMPlan(S, 8, precision="single", device="cpu")
    for _ in range(3):
        A, B = rng.standard_normal((50, 8)), rng.standard_normal((20, 8))
        ref = 1.0 * (A @ B.T) * (S.toarray() != 0)
        P = plan.like(plan.run(A, B))
        assert type(P) is type(S) and P.format == "csc"
        np.testing.assert_allclose(P.toarray(), ref, rtol=1e-5, atol=1e-5)
        # float32 arrays are taken as they are
        P32 = plan.run(A.astype(np.float32), B.astype(np.float32))
        np.testing.assert_allclose(plan.like(P32).toarray(), ref, rtol=1e-5, atol=1e-5)
    plan.close()
    assert "closed" in repr(plan)


def test_sddmm_plan_bad_inputs():
    coords, vals, shape = random_coo((10, 8), 20, seed=16)
    S = (coords, vals, shape)
    with pytest.raises(tenfold.ArgumentError, match="K: expected an integer >= 1"):
        tenfold.SDDMMPlan(S, 0)
    with pytest.raises(tenfold.ArgumentError, match="expected a matrix"):
        tenfold.SDDMMPlan(random_coo((4, 4, 4), 5), 2)
    plan = tenfold.SDDMMPlan(S, 3, device="cpu")
    with pytest.raises(tenfold.ArgumentError, match="A: 9 rows, expected 10"):
        plan.run(np.ones((9, 3)), np.ones((8, 3)))
    with pytest.raises(tenfold.ArgumentError, match="B: 4 columns, expected 3 .the plan's K."):
        plan.run(np.ones((10, 3)), np.ones((8, 4)))
    with pytest.raises(tenfold.ArgumentError, match="out: expected"):
        plan.run(np.ones((10, 3)), np.ones((8, 3)), out=np.empty(19))
    with pytest.raises(tenfold.ArgumentError, match="not finite|finite"):
        plan.run(np.full((10, 3), np.nan), np.ones((8, 3)))
    with pytest.raises(tenfold.ArgumentError, match="holds floats; this plan computes in double"):
        # a float32 array on a double plan reaches C as float only through the C API: check its message
        d = tenfold._ops.ffi.new("tf_dense *")
        a32 = np.ones((10, 3), dtype=np.float32)
        d.data = tenfold._ops.ffi.cast("float *", tenfold._ops.ffi.from_buffer(a32))
        d.rows, d.cols, d.ld, d.precision = 10, 3, 3, tenfold._ops.lib.TF_SINGLE
        b = np.ones((8, 3))
        db = tenfold._ops.ffi.new("tf_dense *")
        db.data = tenfold._ops.ffi.cast("double *", tenfold._ops.ffi.from_buffer(b))
        db.rows, db.cols, db.ld = 8, 3, 3
        p = np.empty(plan.nnz)
        dp = tenfold._ops.ffi.new("tf_dense *")
        dp.data = tenfold._ops.ffi.cast("double *", tenfold._ops.ffi.from_buffer(p))
        dp.rows, dp.cols = plan.nnz, 1
        tenfold._ops.check(tenfold._ops.lib.tf_sddmm_plan_run(plan._plan, d, db, dp, tenfold._ops.ffi.NULL))
    with pytest.raises(tenfold.ArgumentError, match="B is a host array but A is on cuda:0"):
        plan.run(_DeviceArray(), np.ones((8, 3)))
    with pytest.raises(tenfold.ArgumentError, match="like: P is in GPU memory"):
        plan.like(_DeviceArray())
    plan.close()
    plan.close()  # twice is fine
    with pytest.raises(tenfold.ArgumentError, match="the plan is closed"):
        plan.run(np.ones((10, 3)), np.ones((8, 3)))
