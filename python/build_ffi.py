# SPDX-License-Identifier: BSD-3-Clause
"""Writes the cffi (API mode) C source of tenfold._tenfold_cffi.

The declarations come from include/tenfold.h itself -- with the topic
headers it includes (include/tenfold/*.h) put in its place -- run through
the C preprocessor at build time, so no struct layout is written twice; the
C compiler then checks every field against the real header. Run by
python/CMakeLists.txt:  build_ffi.py CC HEADER OUT.c
"""
import os
import re
import subprocess
import sys

import cffi


def inline_includes(path, seen=None):
    """The header's text with its own headers (#include "...", found beside
    the including file) put in place, each once; system headers left out
    (cffi knows size_t and the stdint types)."""
    seen = set() if seen is None else seen
    out = []
    for line in open(path, encoding="utf-8").read().split("\n"):
        m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
        if m:
            inc = os.path.normpath(os.path.join(os.path.dirname(path), m.group(1)))
            if inc not in seen:
                seen.add(inc)
                out.append(inline_includes(inc, seen))
        elif not re.match(r"\s*#\s*include\b", line):
            out.append(line)
    return "\n".join(out)


def cdef_from_header(cc, header):
    text = inline_includes(header)
    # The integer macros (TF_MAX_ORDER, TF_BASE_AUTO, ...): '...' lets the
    # compiler supply their values.
    macros = [
        f"#define {name} ..."
        for name, value in re.findall(r"^#define (TF_\w+)[ \t]+(\S.*)$", text, re.M)
        if not value.lstrip("(").startswith('"')
    ]
    out = subprocess.run([cc, "-E", "-P", "-x", "c", "-"], input=text, capture_output=True, text=True, check=True)
    # cffi takes declarations only: a static inline function of the header
    # (tf_tuning_default) becomes its prototype; the module, compiled
    # against the real header, calls the inline one.
    decls = re.sub(r"static\s+inline\s+([^;{}]*?\))\s*\{[^{}]*\}", r"\1;", out.stdout)
    return "\n".join(macros) + "\n" + decls


# The DLPack structures (DLPack 1.x, dlpack.h; ABI-stable since 0.x) that
# tenfold/_dlpack.py reads from the capsules of GPU arrays. One text, both
# declared to cffi and compiled into the module, so the compiler checks the
# layout cffi uses.
DLPACK = """
typedef struct { uint32_t major; uint32_t minor; } DLPackVersion;
typedef struct { int32_t device_type; int32_t device_id; } DLDevice;
typedef struct { uint8_t code; uint8_t bits; uint16_t lanes; } DLDataType;
typedef struct {
    void *data;
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t *shape;
    int64_t *strides;
    uint64_t byte_offset;
} DLTensor;
typedef struct DLManagedTensor {
    DLTensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;
typedef struct DLManagedTensorVersioned {
    DLPackVersion version;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensorVersioned *self);
    uint64_t flags;
    DLTensor dl_tensor;
} DLManagedTensorVersioned;
"""


def main():
    cc, header, out = sys.argv[1:4]
    ffi = cffi.FFI()
    ffi.cdef(cdef_from_header(cc, header))
    ffi.cdef(DLPACK)
    # Trampolines for the C callbacks (tenfold/_ops.py defines them).
    ffi.cdef('extern "Python" void _tf_py_cpd_iter(const tf_cpd_iter *, void *);')
    ffi.cdef('extern "Python" void _tf_py_cp_apr_iter(const tf_cp_apr_iter *, void *);')
    ffi.cdef('extern "Python" void _tf_py_gcp_epoch(const tf_gcp_epoch *, void *);')
    ffi.cdef('extern "Python" void _tf_py_tucker_iter(const tf_tucker_iter *, void *);')
    ffi.cdef('extern "Python" void _tf_py_complete_iter(const tf_complete_iter *, void *);')
    ffi.set_source("tenfold._tenfold_cffi", '#include <stdint.h>\n#include "tenfold.h"\n' + DLPACK)
    ffi.emit_c_code(out)


if __name__ == "__main__":
    main()
