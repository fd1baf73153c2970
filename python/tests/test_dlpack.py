# SPDX-License-Identifier: BSD-3-Clause
"""GPU arrays through DLPack: sddmm, SDDMMPlan.run and mttkrp with PyTorch
CUDA tensors and CuPy arrays (each skipped, and reported as skipped, where
the library, a GPU or tenfold's CUDA backend is missing), against numpy
float64 references; and the capsule parsing and its errors everywhere,
through a stand-in producer that claims CUDA memory for a host array."""
import ctypes

import numpy as np
import pytest

import tenfold
from conftest import random_coo
from test_kernels import mttkrp_ref, sddmm_ref

ffi = tenfold._ops.ffi


# ---------------------------------------------------------------- a stand-in producer


class FakeCuda:
    """A host numpy array exported through DLPack as if it were CUDA memory
    of device 0 (kDLCUDA): exercises the parsing without a GPU. strides: in
    elements (None: C-contiguous, NULL in the capsule); code/bits: the dtype
    told (default: the array's)."""

    _new_capsule = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)(
        ("PyCapsule_New", ctypes.pythonapi))

    def __init__(self, a, strides=None, code=2, bits=None, versioned=True, read_only=False):
        self.a = np.ascontiguousarray(a)
        self.strides, self.code, self.bits = strides, code, bits or self.a.dtype.itemsize * 8
        self.versioned, self.read_only = versioned, read_only
        self.exports = []  # what the capsules point into, kept alive with this object

    def __dlpack_device__(self):
        return (2, 0)

    def __dlpack__(self, stream=None, max_version=None):
        assert stream == 1  # tenfold asks for the legacy default stream
        versioned = self.versioned and max_version is not None and max_version[0] >= 1
        m = ffi.new("DLManagedTensorVersioned *" if versioned else "DLManagedTensor *")
        if versioned:
            m.version.major, m.version.minor = 1, 0
            m.flags = 1 if self.read_only else 0
        shape = ffi.new("int64_t[]", list(self.a.shape))
        strides = ffi.new("int64_t[]", list(self.strides)) if self.strides is not None else ffi.NULL
        m.dl_tensor.data = ffi.cast("void *", self.a.ctypes.data)
        m.dl_tensor.device.device_type, m.dl_tensor.device.device_id = 2, 0
        m.dl_tensor.ndim = self.a.ndim
        m.dl_tensor.dtype.code, m.dl_tensor.dtype.bits, m.dl_tensor.dtype.lanes = self.code, self.bits, 1
        m.dl_tensor.shape, m.dl_tensor.strides = shape, strides
        self.exports.append((m, shape, strides))
        name = b"dltensor_versioned" if versioned else b"dltensor"
        return self._new_capsule(int(ffi.cast("uintptr_t", m)), name, None)


def test_capsule_parsing_and_errors(small3):
    X = tenfold.Tensor(small3)
    F = [np.random.default_rng(m).random((d, 4)) for m, d in enumerate(X.shape)]
    fake = [FakeCuda(f) for f in F]
    with pytest.raises(tenfold.ArgumentError, match="factor 1: expected float64 or float32 values"):
        tenfold.mttkrp(X, [fake[0], FakeCuda(F[1].astype(np.int64), code=0), fake[2]], 0)
    with pytest.raises(tenfold.ArgumentError, match="factor 2: not row-major"):
        tenfold.mttkrp(X, [fake[0], fake[1], FakeCuda(F[2], strides=(1, 7))], 0)
    with pytest.raises(tenfold.ArgumentError, match="factor 1: 8 rows, expected 9"):
        tenfold.mttkrp(X, [fake[0], FakeCuda(F[1][:8]), fake[2]], 0)
    with pytest.raises(tenfold.ArgumentError, match="factor 2: float32 values, expected float64"):
        tenfold.mttkrp(X, [fake[0], fake[1], FakeCuda(F[2].astype(np.float32))], 0)
    with pytest.raises(tenfold.ArgumentError, match="factor 0: expected a 2-D array, got 1-D"):
        tenfold.mttkrp(X, [FakeCuda(F[0][:, 0]), fake[1], fake[2]], 0)
    with pytest.raises(tenfold.ArgumentError, match="device='cpu' with GPU arrays"):
        tenfold.mttkrp(X, fake, 0, device="cpu")
    # a producer tenfold cannot allocate with: out= is asked for
    with pytest.raises(tenfold.ArgumentError, match="pass out="):
        tenfold.mttkrp(X, fake, 0)
    with pytest.raises(tenfold.ArgumentError, match=r"out: 11 rows, expected 12"):
        tenfold.mttkrp(X, fake, 0, out=FakeCuda(np.zeros((11, 4))))
    with pytest.raises(tenfold.ArgumentError, match=r"out: the array is read-only"):
        tenfold.mttkrp(X, fake, 0, out=FakeCuda(np.zeros((12, 4)), read_only=True))
    # a producer from before DLPack 1.0 (no max_version, a "dltensor" capsule) parses alike
    with pytest.raises(tenfold.ArgumentError, match=r"factor 1: 8 rows, expected 9"):
        tenfold.mttkrp(X, [fake[0], FakeCuda(F[1][:8], versioned=False), fake[2]], 0)
    # all parsed: the C library gets host memory said to be GPU memory, which
    # it refuses (CUDA build with a GPU) or has no GPU backend / GPU for
    with pytest.raises((tenfold.ArgumentError, tenfold.UnavailableError), match="not GPU memory|GPU|CUDA"):
        tenfold.mttkrp(X, fake, 0, out=FakeCuda(np.zeros((12, 4))))
    # rows further apart than the columns (a slice of a wider array) parse too
    with pytest.raises((tenfold.ArgumentError, tenfold.UnavailableError), match="not GPU memory|GPU|CUDA"):
        tenfold.mttkrp(X, [fake[0], FakeCuda(F[1], strides=(4, 1)), fake[2]], 0, out=FakeCuda(np.zeros((12, 4))))
    # sddmm: a plan on the GPU (none here: UnavailableError), or no library to make P with
    S = random_coo((10, 8), 20)
    with pytest.raises((tenfold.ArgumentError, tenfold.UnavailableError), match="pass out=|GPU|CUDA"):
        tenfold.sddmm(S, FakeCuda(np.ones((10, 3))), FakeCuda(np.ones((8, 3))))


# ---------------------------------------------------------------- PyTorch and CuPy on the GPU


def _torch():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no CUDA device")
    return torch


def _cupy():
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("CuPy sees no CUDA device")
    except Exception as e:  # noqa: BLE001
        pytest.skip(f"CuPy sees no CUDA device ({e})")
    return cupy


class Lib:
    """One GPU array library: to / from the device, what its arrays are."""

    def __init__(self, name):
        if tenfold.gpu_count() == 0:
            pytest.skip("tenfold has no GPU (a CPU-only build, or no CUDA device)")
        self.name = name
        self.mod = _torch() if name == "torch" else _cupy()

    def dev(self, a):
        if self.name == "torch":
            return self.mod.from_numpy(np.ascontiguousarray(a)).cuda()
        return self.mod.asarray(a)

    def host(self, x):
        return x.cpu().numpy() if self.name == "torch" else self.mod.asnumpy(x)

    def full(self, shape, value, dtype):
        if self.name == "torch":
            return self.mod.full(shape, value, dtype=getattr(self.mod, np.dtype(dtype).name), device="cuda")
        return self.mod.full(shape, value, dtype=dtype)

    def check_on_device(self, x, dtype, shape):
        if self.name == "torch":
            assert isinstance(x, self.mod.Tensor) and x.is_cuda and x.device.index == 0
            assert x.dtype == getattr(self.mod, np.dtype(dtype).name)
        else:
            assert isinstance(x, self.mod.ndarray) and x.device.id == 0 and x.dtype == dtype
        assert tuple(x.shape) == shape


@pytest.fixture(params=["torch", "cupy"])
def gpulib(request):
    return Lib(request.param)


TOL = {np.float64: 1e-12, np.float32: 2e-5}


def _close(got, ref, dtype):
    scale = np.abs(ref).max() + 1e-300
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, ref, rtol=TOL[dtype], atol=TOL[dtype] * scale)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("alpha, beta, scale", [(1.0, 0.0, False), (-1.5, 0.75, True)])
def test_sddmm_gpu(gpulib, dtype, alpha, beta, scale):
    coords, vals, shape = random_coo((300, 200), 4000, seed=21)
    order = np.random.default_rng(22).permutation(len(vals))  # not in CSR order: P must come in S's
    coords, vals = coords[order], vals[order]
    rng = np.random.default_rng(23)
    A, B = rng.standard_normal((300, 16)), rng.standard_normal((200, 16))
    ref = sddmm_ref(coords[:, 0], coords[:, 1], vals, A.astype(dtype).astype(np.float64),
                    B.astype(dtype).astype(np.float64), alpha, beta, scale)
    Ad, Bd = gpulib.dev(A.astype(dtype)), gpulib.dev(B.astype(dtype))
    P = tenfold.sddmm((coords, vals, shape), Ad, Bd, alpha=alpha, beta=beta, scale=scale)
    gpulib.check_on_device(P, dtype, (4000,))
    _close(gpulib.host(P), ref, dtype)
    out = gpulib.full((4000,), np.nan, dtype)
    assert tenfold.sddmm((coords, vals, shape), Ad, Bd, alpha=alpha, beta=beta, scale=scale, out=out) is out
    _close(gpulib.host(out), ref, dtype)


def test_sddmm_gpu_scipy_and_padded_rows(gpulib):
    sp = pytest.importorskip("scipy.sparse")
    S = sp.random(120, 90, density=0.05, format="csr", random_state=24)  # CSR: no reordering
    rng = np.random.default_rng(25)
    Aw, B = rng.standard_normal((120, 12)), rng.standard_normal((90, 7))
    ref = 1.0 * (Aw[:, :7] @ B.T) * (S.toarray() != 0)
    P = tenfold.sddmm(S, gpulib.dev(Aw)[:, :7], gpulib.dev(B))  # A's rows 12 apart: copied on the device
    Pc = S.tocoo()
    got = np.zeros(S.shape)
    got[S.nonzero()] = gpulib.host(P)
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)
    assert len(Pc.data) == P.shape[0]


@pytest.mark.parametrize("precision, dtype", [("double", np.float64), ("single", np.float32)])
def test_sddmm_plan_gpu(gpulib, precision, dtype):
    coords, vals, shape = random_coo((200, 150), 3000, seed=26)
    order = np.random.default_rng(27).permutation(len(vals))
    coords, vals = coords[order], vals[order]
    rng = np.random.default_rng(28)
    with tenfold.SDDMMPlan((coords, vals, shape), 32, alpha=2.0, device="gpu", precision=precision) as plan:
        assert plan.device == "gpu"
        for _ in range(3):  # new A and B every run
            A, B = rng.standard_normal((200, 32)).astype(dtype), rng.standard_normal((150, 32)).astype(dtype)
            ref = sddmm_ref(coords[:, 0], coords[:, 1], vals, A.astype(np.float64), B.astype(np.float64), 2.0,
                            0.0, False)
            P = plan.run(gpulib.dev(A), gpulib.dev(B))
            gpulib.check_on_device(P, dtype, (3000,))
            _close(gpulib.host(P), ref, dtype)
            # host arrays still work on the same plan, and give the same values
            np.testing.assert_allclose(plan.run(A.astype(np.float64) if precision == "double" else A, B),
                                       gpulib.host(P).astype(np.float64), rtol=TOL[dtype], atol=TOL[dtype])
        other = np.float32 if dtype == np.float64 else np.float64
        with pytest.raises(tenfold.ArgumentError, match=f"A: {np.dtype(other).name} values, expected"):
            plan.run(gpulib.dev(A.astype(other)), gpulib.dev(B))
        with pytest.raises(tenfold.ArgumentError, match="B: 149 rows, expected 150"):
            plan.run(gpulib.dev(A), gpulib.dev(B[:149]))
        with pytest.raises(tenfold.ArgumentError, match="A: not row-major"):
            plan.run(gpulib.dev(np.ascontiguousarray(A.T)).T, gpulib.dev(B))
        with pytest.raises(tenfold.ArgumentError, match="out: 2999 rows, expected 3000"):
            plan.run(gpulib.dev(A), gpulib.dev(B), out=gpulib.full((2999,), 0.0, dtype))
        with pytest.raises(tenfold.ArgumentError, match="B is a host array but A is on cuda:0"):
            plan.run(gpulib.dev(A), B)
        with pytest.raises(tenfold.ArgumentError, match="like: P is in GPU memory"):
            plan.like(P)
    with tenfold.SDDMMPlan((coords, vals, shape), 32, device="cpu") as cpu_plan:
        with pytest.raises(tenfold.ArgumentError, match="GPU arrays need a plan on the GPU"):
            cpu_plan.run(gpulib.dev(A), gpulib.dev(B))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape, nnz", [((60, 40, 9), 2000), ((12, 9, 7, 5), 800)])
def test_mttkrp_gpu(gpulib, dtype, shape, nnz):
    X = tenfold.Tensor(random_coo(shape, nnz, seed=29))
    rng = np.random.default_rng(30)
    F = [rng.standard_normal((d, 16)).astype(dtype) for d in shape]
    Fd = [gpulib.dev(f) for f in F]
    D = X.to_dense()
    for mode in range(len(shape)):
        ref = mttkrp_ref(D, [f.astype(np.float64) for f in F], mode)
        M = tenfold.mttkrp(X, Fd, mode)
        gpulib.check_on_device(M, dtype, (shape[mode], 16))
        _close(gpulib.host(M), ref, dtype)
        out = gpulib.full((shape[mode], 16), np.nan, dtype)
        assert tenfold.mttkrp(X, Fd, mode, out=out) is out
        _close(gpulib.host(out), ref, dtype)


def test_mttkrp_gpu_bad_inputs(gpulib, small3):
    X = tenfold.Tensor(small3)
    F = [np.ones((d, 4)) for d in X.shape]
    Fd = [gpulib.dev(f) for f in F]
    with pytest.raises(tenfold.ArgumentError, match="factor 1 is a host array but factor 0 is on cuda:0"):
        tenfold.mttkrp(X, [Fd[0], F[1], Fd[2]], 0)
    with pytest.raises(tenfold.ArgumentError, match="factor 2: float32 values, expected float64"):
        tenfold.mttkrp(X, [Fd[0], Fd[1], gpulib.dev(F[2].astype(np.float32))], 0)
    with pytest.raises(tenfold.ArgumentError, match="factor 1: expected float64 or float32"):
        tenfold.mttkrp(X, [Fd[0], gpulib.dev(F[1].astype(np.int32)), Fd[2]], 0)
    with pytest.raises(tenfold.ArgumentError, match="factor 2: not row-major"):
        tenfold.mttkrp(X, [Fd[0], Fd[1], gpulib.dev(np.ones((4, 7))).T], 0)
    with pytest.raises(tenfold.ArgumentError, match="out: 5 columns, expected 4"):
        tenfold.mttkrp(X, Fd, 0, out=gpulib.full((12, 5), 0.0, np.float64))
    with pytest.raises(tenfold.ArgumentError, match="device='cpu' with GPU arrays"):
        tenfold.mttkrp(X, Fd, 0, device="cpu")
    if gpulib.name == "torch":
        g = gpulib.dev(F[1]).requires_grad_()
        with pytest.raises(tenfold.ArgumentError, match="factor 1: its __dlpack__ failed"):
            tenfold.mttkrp(X, [Fd[0], g, Fd[2]], 0)
