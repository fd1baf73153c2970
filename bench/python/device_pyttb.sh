#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# tenfold's Python package against pyttb (issue 48) on the device host, offline:
# a venv over the system's numpy / scipy / matplotlib / scikit-build-core, cffi,
# pycparser, numpy_groupies and pyttb from .devdeps/wheels, tenfold's package built
# there CPU-only, then bench/python/py_overhead.py on the six shared tensors
# (RESULTS.md "Python against pyttb on the 16-core device host").
#
# usage (from the repository root, .devdeps carried):
#   bench/python/device_pyttb.sh [DATA_DIR [PY_OVERHEAD_ARGS...]]
#     DATA_DIR  the .tns.xz files (default .devdata)
#     ARGS      default: --reps 5 --rank 16 --iters 20 --methods (--methods: on the first tensor)
#   TENSORS="uber-apr14 ..." the tensors; PYTHON the interpreter (python3); VENV a
#   venv to make or reuse (default: a temporary one). The output is also written
#   to $OUT/device_pyttb.txt where $OUT is set.
set -euo pipefail
cd "$(dirname "$0")/../.."
data=${1:-.devdata}
[ $# -gt 0 ] && shift
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(--reps 5 --rank 16 --iters 20 --methods)
TENSORS=${TENSORS:-uber-apr14 nycflights13 enron-igraphdata collegemsg lastfm-2k-tags wordnet30-relations}
PY=${PYTHON:-python3}
[ -n "${OUT:-}" ] && exec > >(tee "$OUT/device_pyttb.txt") 2>&1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
venv=${VENV:-$tmp/venv}
if ! "$venv/bin/python" -c 'import tenfold, pyttb' 2>/dev/null; then
    # --without-pip: no ensurepip needed; the .pth adds the creating interpreter's own
    # site-packages (python3 may itself be a venv, whose packages --system-site-packages misses)
    "$PY" -m venv --without-pip --system-site-packages "$venv"
    sp=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    "$PY" -c 'import site; print("\n".join(site.getsitepackages()))' > "$sp/_device_parent.pth"
    pip=("$venv/bin/python" -m pip -q --disable-pip-version-check --no-input install --no-index
         --find-links .devdeps/wheels)
    "${pip[@]}" cffi pycparser numpy_groupies pyttb
    # the shared library links the system's liblzma / zlib, with .devdeps' headers where it has none
    defs=(-Ccmake.define.TF_ENABLE_CUDA=OFF -Cbuild-dir="$tmp/pybuild")
    for lib in lzma:liblzma.so.5:LIBLZMA zlib:libz.so.1:ZLIB; do
        IFS=: read -r hdr so var <<< "$lib"
        [ -f "/usr/include/$hdr.h" ] && continue
        # (ls fails for the paths that are missing: under pipefail, || true)
        so=$(ls /usr/lib/x86_64-linux-gnu/$so /lib/x86_64-linux-gnu/$so /usr/lib64/$so 2>/dev/null | head -1 || true)
        [ -n "$so" ] || { echo "device_pyttb: no shared $hdr library on this host" >&2; exit 1; }
        defs+=(-Ccmake.define.${var}_INCLUDE_DIR="$PWD/.devdeps/root/usr/include" -Ccmake.define.${var}_LIBRARY="$so")
    done
    CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) "${pip[@]}" --no-build-isolation "${defs[@]}" ./python \
        > "$tmp/build.log" 2>&1 || { tail -n 30 "$tmp/build.log"; exit 1; }
fi
"$venv/bin/python" -c 'import sys, numpy, scipy, pyttb, tenfold
print("# Python", sys.version.split()[0], "numpy", numpy.__version__, "scipy", scipy.__version__,
      "pyttb", pyttb.__version__, "tenfold", tenfold.__version__, "CUDA", tenfold.build_info()["cuda_toolkit"] or "none")'
files=()
for t in $TENSORS; do files+=("$data/$t.tns.xz"); done
echo "# $(nproc) CPUs; py_overhead.py ${args[*]} on $TENSORS"
"$venv/bin/python" bench/python/py_overhead.py "${files[@]}" "${args[@]}"
