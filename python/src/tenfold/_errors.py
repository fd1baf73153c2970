# SPDX-License-Identifier: BSD-3-Clause
"""Exceptions: every tf_status of the C library becomes one of these."""
from ._tenfold_cffi import ffi, lib


class Error(Exception):
    """Base class of tenfold's errors; `status` is the C status name."""

    status = "error"


class ArgumentError(Error, ValueError):
    """An invalid argument (TF_ERR_ARG), or input this binding rejects."""

    status = "invalid argument"


class FileError(Error, OSError):
    """A file could not be opened, read or written (TF_ERR_IO)."""

    status = "i/o error"


class ParseError(Error, ValueError):
    """Malformed input file (TF_ERR_PARSE)."""

    status = "parse error"


class RangeError(Error, ValueError):
    """A value outside what tenfold can represent (TF_ERR_RANGE)."""

    status = "out of range"


class OutOfMemoryError(Error, MemoryError):
    """An allocation failed, or the memory limit was reached (TF_ERR_NOMEM)."""

    status = "out of memory"


class NumericError(Error, ArithmeticError):
    """LAPACK failure or non-finite result (TF_ERR_NUMERIC)."""

    status = "numeric error"


class UnavailableError(Error, NotImplementedError):
    """What this build or machine cannot do (TF_ERR_UNAVAILABLE): no CUDA
    backend, no GPU, or several GPUs in one process, which the C library
    refuses with its own message."""

    status = "unavailable"


class DeviceError(Error, RuntimeError):
    """A CUDA / cuBLAS / cuSOLVER error (TF_ERR_DEVICE)."""

    status = "device error"


_BY_STATUS = {
    lib.TF_ERR_ARG: ArgumentError,
    lib.TF_ERR_IO: FileError,
    lib.TF_ERR_PARSE: ParseError,
    lib.TF_ERR_RANGE: RangeError,
    lib.TF_ERR_NOMEM: OutOfMemoryError,
    lib.TF_ERR_NUMERIC: NumericError,
    lib.TF_ERR_UNAVAILABLE: UnavailableError,
    lib.TF_ERR_DEVICE: DeviceError,
}


def check(status):
    """Raises the exception of a failed C call, with its tf_last_error message.

    Must be called on the thread that made the call (the message is per thread).
    """
    if status == lib.TF_OK:
        return
    msg = ffi.string(lib.tf_last_error()).decode("utf-8", "replace")
    cls = _BY_STATUS.get(status, Error)
    raise cls(msg or ffi.string(lib.tf_status_name(status)).decode())
