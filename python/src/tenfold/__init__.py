# SPDX-License-Identifier: BSD-3-Clause
"""tenfold: sparse tensor decomposition (CP-ALS, CP-APR, Tucker, completion) and sparse-dense kernels
(MTTKRP, SDDMM, SpTTM, TTMc) on the CPU and CUDA GPUs, over the C library libtenfold.

>>> import tenfold
>>> res = tenfold.cp_als(tenfold.read("data/uber-apr14.tns.xz"), rank=16)
"""
import os as _os

# OpenMP threads wait passively unless the user chose a policy, as in the
# tool (cli/main.c): spinning threads made CP-ALS 5-6x slower on 2 cores.
# libgomp reads the variable once, when it is loaded -- by the import below
# (unless another module loaded it first) -- so it is set for that moment only.
_passive = "OMP_WAIT_POLICY" not in _os.environ and "GOMP_SPINCOUNT" not in _os.environ
if _passive:
    _os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
try:
    from ._tenfold_cffi import ffi as _ffi, lib as _lib
finally:
    if _passive:
        del _os.environ["OMP_WAIT_POLICY"]

from ._errors import (ArgumentError, DeviceError, Error, FileError, NumericError, OutOfMemoryError,
                      ParseError, RangeError, UnavailableError)
from ._plot import plot
from ._ops import CPResult, IterInfo, SDDMMPlan, cp_als, mttkrp, nvecs, read, sddmm, ttm, write
from ._nonneg import non_negative_parafac, non_negative_parafac_hals
from ._apr import APRIterInfo, cp_apr
from ._complete import CompleteIterInfo, CompletionResult, complete, predict
from ._gcp import GCPEpochInfo, gcp
from ._tensor import Tensor, as_tensor
from ._tucker import TuckerIter, TuckerResult, ttmc, tucker
from ._helpers import (arrange, collapse, fixsigns, full, innerprod, model_values, normalize, norm, permute, scale,
                       score, subtensor, ttm_chain, ttv)
__version__ = _ffi.string(_lib.tf_version()).decode()


def gpu_count():
    """Number of usable CUDA devices (0 in a CPU-only build or without a GPU)."""
    return int(_lib.tf_gpu_count())


def build_info():
    """What this build is made of: version, commit, compiler, BLAS/LAPACK, CUDA."""
    b = _ffi.new("tf_build_info *")
    _lib.tf_get_build_info(b)
    s = lambda p: _ffi.string(p).decode() if p else ""  # noqa: E731
    return {"version": s(b.version), "commit": s(b.commit), "compiler": s(b.compiler),
            "blas_lapack": s(b.blas_lapack), "cuda_toolkit": s(b.cuda_toolkit),
            "cuda_runtime": b.cuda_runtime, "cuda_driver": b.cuda_driver}


__all__ = ["Tensor", "as_tensor", "read", "write", "cp_als", "cp_apr", "non_negative_parafac",
           "non_negative_parafac_hals", "CPResult", "IterInfo", "APRIterInfo", "nvecs", "mttkrp", "ttm", "sddmm",
           "SDDMMPlan", "plot", "gpu_count", "build_info", "Error", "ArgumentError", "FileError", "ParseError", "RangeError",
           "OutOfMemoryError", "NumericError", "UnavailableError", "DeviceError"]
__all__ += ["gcp", "GCPEpochInfo"]  # Generalized CP (_gcp.py)
__all__ += ["tucker", "TuckerResult", "TuckerIter", "ttmc"]  # sparse Tucker (_tucker.py)
__all__ += ["complete", "predict", "CompletionResult", "CompleteIterInfo"]  # completion (_complete.py)
__all__ += ["model_values", "innerprod", "norm", "full", "normalize", "arrange", "fixsigns", "score", "ttv",
            "collapse", "scale", "permute", "subtensor", "ttm_chain"]  # the helpers (_helpers.py)
