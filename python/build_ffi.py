# SPDX-License-Identifier: BSD-3-Clause
"""Writes the cffi (API mode) C source of tenfold._tenfold_cffi.

The declarations come from include/tenfold.h itself, run through the C
preprocessor at build time, so no struct layout is written twice; the C
compiler then checks every field against the real header. Run by
python/CMakeLists.txt:  build_ffi.py CC HEADER OUT.c
"""
import re
import subprocess
import sys

import cffi


def cdef_from_header(cc, header):
    text = open(header, encoding="utf-8").read()
    # The integer macros (TF_MAX_ORDER, TF_BASE_AUTO, ...): '...' lets the
    # compiler supply their values.
    macros = [
        f"#define {name} ..."
        for name, value in re.findall(r"^#define (TF_\w+)[ \t]+(\S.*)$", text, re.M)
        if not value.lstrip("(").startswith('"')
    ]
    # System headers are left out: cffi knows size_t and the stdint types.
    body = re.sub(r"^#include .*$", "", text, flags=re.M)
    out = subprocess.run([cc, "-E", "-P", "-x", "c", "-"], input=body, capture_output=True, text=True, check=True)
    return "\n".join(macros) + "\n" + out.stdout


def main():
    cc, header, out = sys.argv[1:4]
    ffi = cffi.FFI()
    ffi.cdef(cdef_from_header(cc, header))
    # Trampolines for the C callbacks (tenfold/_ops.py defines them).
    ffi.cdef('extern "Python" void _tf_py_cpd_iter(const tf_cpd_iter *, void *);')
    ffi.set_source("tenfold._tenfold_cffi", '#include "tenfold.h"')
    ffi.emit_c_code(out)


if __name__ == "__main__":
    main()
