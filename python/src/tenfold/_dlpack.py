# SPDX-License-Identifier: BSD-3-Clause
"""Arrays in GPU memory through DLPack (PyTorch, CuPy, ...).

An array counts as a GPU array when its ``__dlpack_device__()`` names CUDA
memory (kDLCUDA = 2, or kDLCUDAManaged = 13). Its pointer, shape, strides,
dtype and device are read from the capsule that ``__dlpack__`` returns (the
structures declared to cffi in build_ffi.py; the capsule through the Python
C API), without importing the array's library. The capsule is borrowed: it
is kept, and with it the producer's array, for as long as tenfold uses the
pointer, and then dropped unconsumed, so the producer's own capsule
destructor releases it.

Streams: tenfold asks for every array on stream 1, DLPack's name for CUDA's
legacy default stream, so the producer orders the work pending on its
current stream before that point; the C library starts after it (on its own
stream) and returns once the results are written, so they may be used on
any stream at once.

Results are made by the library of the GPU array they follow (PyTorch:
``Tensor.new_empty``; CuPy: ``cupy.empty`` on the array's device), found
from the array's type among the modules already imported, or written into
an ``out`` array the caller gives.
"""
from __future__ import annotations

import ctypes
import sys
from typing import Any, Optional, Sequence, Tuple

import numpy as np

from ._errors import ArgumentError
from ._tenfold_cffi import ffi, lib

CUDA, CUDA_MANAGED = 2, 13  # kDLCUDA, kDLCUDAManaged
_GPU_TYPES = (CUDA, CUDA_MANAGED)
_LEGACY_STREAM = 1  # DLPack's value for CUDA's legacy default stream
_FLOAT = 2  # kDLFloat
_READ_ONLY = 1  # DLPACK_FLAG_BITMASK_READ_ONLY

# Prototypes of our own (not ctypes.pythonapi's shared attributes, which other code may set up differently).
_is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(("PyCapsule_IsValid", ctypes.pythonapi))
_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))


def gpu_device(a: Any) -> Optional[Tuple[int, int]]:
    """(DLPack device type, device id) of a GPU array; None for anything else
    (numpy and other host arrays, lists, objects without DLPack)."""
    if isinstance(a, np.ndarray) or not hasattr(a, "__dlpack_device__"):
        return None
    try:
        kind, dev = a.__dlpack_device__()
    except Exception:  # noqa: BLE001 -- not a usable DLPack array: the host path says why
        return None
    return (int(kind), int(dev)) if int(kind) in _GPU_TYPES else None


def _where(d: Optional[Tuple[int, int]]) -> str:
    if d is None:
        return "a host array"
    return f"on cuda:{d[1]}" if d[0] == CUDA else f"in CUDA managed memory (device {d[1]})"


def common_device(named: Sequence[Tuple[str, Any]]) -> Optional[Tuple[int, int]]:
    """The GPU all the named arrays are on, or None when none is a GPU array;
    a mix of host and GPU arrays, or of two GPUs, is an ArgumentError."""
    devs = [(what, gpu_device(a)) for what, a in named if a is not None]
    gpu = [(what, d) for what, d in devs if d is not None]
    if not gpu:
        return None
    what0, d0 = gpu[0]
    for what, d in devs:
        if d is None or d[1] != d0[1]:
            raise ArgumentError(f"{what} is {_where(d)} but {what0} is {_where(d0)}: pass every array on the "
                                "same device (host arrays: numpy; GPU arrays: one CUDA device)")
    return d0


class GpuArray:
    """A borrowed view of one GPU array: data pointer, shape, row stride ld
    (elements), dtype, device. Keeps the DLPack capsule, and so the array,
    alive until release()."""

    def __init__(self, obj: Any, what: str, ndim: int, writable: bool = False):
        self.obj, self.what = obj, what
        try:
            try:
                cap = obj.__dlpack__(stream=_LEGACY_STREAM, max_version=(1, 0))
            except TypeError:  # a producer from before DLPack 1.0: no max_version
                cap = obj.__dlpack__(stream=_LEGACY_STREAM)
        except Exception as e:  # noqa: BLE001 -- the producer's refusal, as one of ours
            raise ArgumentError(f"{what}: its __dlpack__ failed ({type(e).__name__}: {e})") from None
        self._cap = cap
        flags = 0
        if _is_valid(cap, b"dltensor_versioned"):
            m = ffi.cast("DLManagedTensorVersioned *", _pointer(cap, b"dltensor_versioned"))
            t, flags = m.dl_tensor, int(m.flags)
        elif _is_valid(cap, b"dltensor"):
            t = ffi.cast("DLManagedTensor *", _pointer(cap, b"dltensor")).dl_tensor
        else:
            raise ArgumentError(f"{what}: its __dlpack__ gave no unused DLPack capsule")
        if writable and flags & _READ_ONLY:
            raise ArgumentError(f"{what}: the array is read-only (its DLPack capsule says so)")
        self.device = (int(t.device.device_type), int(t.device.device_id))
        if self.device[0] not in _GPU_TYPES:
            raise ArgumentError(f"{what}: its DLPack capsule says device type {self.device[0]}, not CUDA memory")
        dt = t.dtype
        if dt.code != _FLOAT or dt.bits not in (32, 64) or dt.lanes != 1:
            raise ArgumentError(f"{what}: expected float64 or float32 values, got DLPack dtype (code {dt.code}, "
                                f"{dt.bits} bits, {dt.lanes} lanes)")
        self.dtype = np.dtype(np.float64 if dt.bits == 64 else np.float32)
        if t.ndim != ndim:
            raise ArgumentError(f"{what}: expected a {ndim}-D array, got {t.ndim}-D")
        self.shape = tuple(int(t.shape[k]) for k in range(ndim))
        cols = self.shape[1] if ndim == 2 else 1
        self.ld = cols
        if t.strides != ffi.NULL:  # NULL: C-contiguous
            st = tuple(int(t.strides[k]) for k in range(ndim))
            inner_ok = st[-1] == 1 or self.shape[-1] <= 1
            if ndim == 2 and self.shape[0] > 1:
                self.ld = st[0]
            if not inner_ok or self.ld < cols:
                raise ArgumentError(f"{what}: not row-major (strides {st} elements for shape {self.shape}): pass "
                                    "a C-contiguous array (torch: .contiguous(); cupy: cupy.ascontiguousarray)")
        self.data = int(ffi.cast("uintptr_t", t.data)) + int(t.byte_offset)

    @property
    def single(self) -> bool:
        return self.dtype == np.float32

    def dense(self, out: Any = None) -> Any:
        """A tf_dense over the array (TF_MEMORY_DEVICE); a 1-D array is one column."""
        d = out if out is not None else ffi.new("tf_dense *")
        d.data = ffi.cast("void *", self.data)
        d.rows = self.shape[0]
        d.cols = self.shape[1] if len(self.shape) == 2 else 1
        d.ld = self.ld
        d.precision = lib.TF_SINGLE if self.single else lib.TF_DOUBLE
        d.memory = lib.TF_MEMORY_DEVICE
        return d

    def release(self) -> None:
        """Drops the capsule (unconsumed: its destructor releases the array's export)."""
        self._cap = None


def _library(obj: Any) -> Tuple[str, Any]:
    """('torch' | 'cupy', the module) of a GPU array's type, from the modules
    imported already; ('', None) for other producers."""
    top = (type(obj).__module__ or "").split(".")[0]
    if top in ("torch", "cupy") and top in sys.modules:
        return top, sys.modules[top]
    return "", None


def empty_like(a: GpuArray, shape: Tuple[int, ...]) -> Any:
    """A new array of a's library, dtype and device, of the given shape."""
    name, mod = _library(a.obj)
    if name == "torch":
        return a.obj.new_empty(shape)
    if name == "cupy":
        with mod.cuda.Device(a.device[1]):
            return mod.empty(shape, dtype=a.dtype)
    raise ArgumentError(f"{a.what}: tenfold makes GPU results with PyTorch or CuPy; for a {type(a.obj).__name__}, "
                        f"pass out= (a GPU array of shape {shape} and dtype {a.dtype})")


def scatter(dst: Any, index: np.ndarray, src: Any) -> None:
    """dst[index] = src on the device, by dst's library (index: host integers)."""
    name, mod = _library(dst)
    if name == "torch":
        dst[mod.as_tensor(index, device=dst.device)] = src
    elif name == "cupy":
        with mod.cuda.Device(dst.device.id):
            dst[mod.asarray(index)] = src
    else:
        raise ArgumentError(f"out: a {type(dst).__name__} cannot take values in S's order here (tenfold reorders "
                            "them on the device with PyTorch or CuPy); pass S in CSR order (rows, then columns)")
