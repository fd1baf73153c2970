#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Sparse Tucker (HOOI) seconds per iteration: tenfold against pyttb's
# tucker_als and, where it runs, tensorly's sparse tucker (issue 47).
#
# usage: bench/tucker.sh TENFOLD PYTHON DATA_DIR
#   TENFOLD   the tool (build/cpu/tenfold): `tenfold tucker` is timed too
#   PYTHON    a Python with the tenfold package, pyttb and (optional)
#             tensorly + sparse installed (e.g. a venv: pip install ./python
#             pyttb tensorly sparse); nothing of theirs is in this repository
#   DATA_DIR  the shared tensors (../shared/data): enron-igraphdata,
#             collegemsg, uber-apr14, nycflights13 (.tns.xz)
#
# Per tensor one row per tool: seconds per iteration (the median of
# iterations 2..ITERS, from each tool's own per-iteration times where it
# reports them, else the run's time / ITERS), the whole run, and the fit
# after ITERS iterations. tenfold (Python API and the tool) and pyttb start
# from the same factors (uniform [0,1), one seed) with tol 0, so their fits
# must agree (a 'same fit' column says whether they do to 1e-9); tensorly's
# tucker starts from its own 'svd' init ('random' where 'svd' fails on its
# sparse backend; it takes no given factors there), so its fit is shown for
# reference only.
# Settings (environment): ITERS=10, THREADS (default: all cores),
# RUN_TIMEOUT=600 seconds per tool and tensor, TENSORLY=1 (0: skip it),
# MEMORY_KB=8388608: the whole run's address space (ulimit -v), so a tool
# that densifies (pyttb took 16 GB on collegemsg before it was stopped) fails
# with MemoryError in its row instead of taking the machine.
set -euo pipefail
if [ $# -ne 3 ]; then
    sed -n '3,/^set -euo/p' "$0" | sed '$d;s/^# \{0,1\}//' >&2
    exit 2
fi
TENFOLD=$1 PY=$2 DATA=$3
export ITERS=${ITERS:-10} RUN_TIMEOUT=${RUN_TIMEOUT:-600} TENSORLY=${TENSORLY:-1} TENFOLD DATA
ulimit -v "${MEMORY_KB:-8388608}"
exec "$PY" - <<'EOF'
import json, os, signal, statistics, subprocess, sys, tempfile, time

import numpy as np

ITERS = int(os.environ["ITERS"])
DATA, TENFOLD = os.environ["DATA"], os.environ["TENFOLD"]
TIMEOUT = int(os.environ["RUN_TIMEOUT"])
THREADS = int(os.environ["THREADS"]) if os.environ.get("THREADS") else None
CASES = [("enron-igraphdata", [8, 8, 8]), ("collegemsg", [8, 8, 8]), ("uber-apr14", [5, 5, 10, 10]),
         ("nycflights13", [5, 5, 3, 5, 5])]

import tenfold  # noqa: E402


class Timeout(Exception):
    pass


def alarm(_s, _f):
    raise Timeout()


signal.signal(signal.SIGALRM, alarm)


def timed(fn):
    signal.alarm(TIMEOUT)
    try:
        t0 = time.perf_counter()
        out = fn()
        return out, time.perf_counter() - t0
    finally:
        signal.alarm(0)


def per_iter(times):
    t = times[1:] if len(times) > 1 else times
    return statistics.median(t)


print(f"# {ITERS} iterations, tol 0, threads {THREADS or 'all'} ({os.cpu_count()} CPUs here); seconds")
print(f"{'tensor':18s} {'ranks':14s} {'tool':22s} {'s/iter':>9s} {'run s':>9s} {'fit':>12s}  same fit")
for name, ranks in CASES:
    path = os.path.join(DATA, name + ".tns.xz")
    if not os.path.exists(path):
        print(f"{name:18s} (not found)")
        continue
    T = tenfold.read(path)
    rng = np.random.default_rng(47)
    start = [rng.random((T.shape[n], ranks[n])) for n in range(T.ndim)]
    rk = ",".join(map(str, ranks))
    rows = []
    # tenfold, Python API
    res, secs = timed(lambda: tenfold.tucker(T, ranks, n_iter_max=ITERS, tol=0.0, init=start, threads=THREADS))
    its = []
    res_iters = tenfold.tucker(T, ranks, n_iter_max=ITERS, tol=0.0, init=start, threads=THREADS,
                               callback=lambda it: its.append(it.seconds) and False)
    ref_fit = res.fit
    rows.append(("tenfold (python)", per_iter(its), secs, res.fit, None))
    # tenfold, the tool (its own start: the set above written as --init files)
    with tempfile.TemporaryDirectory() as d:
        stem = os.path.join(d, "start")
        for n, u in enumerate(start):
            np.savetxt(f"{stem}.mode{n + 1}.mat", u, fmt="%.17e")
        cmd = [TENFOLD, "tucker", path, "-r", rk, "-i", str(ITERS), "--tol", "0", "--init", stem,
               "--json", os.path.join(d, "r.json"), "-q"] + (["-t", str(THREADS)] if THREADS else [])
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, timeout=TIMEOUT)
        wall = time.perf_counter() - t0
        rep = json.load(open(os.path.join(d, "r.json")))
        rows.append(("tenfold tucker (CLI)", per_iter([i["seconds"] for i in rep["iterations"]]), wall,
                     rep["result"]["fit"], abs(rep["result"]["fit"] - ref_fit) < 1e-9))
    # pyttb
    try:
        import pyttb as ttb
        X = ttb.sptensor(np.asarray(T.coords, dtype=np.int64), np.asarray(T.values).reshape(-1, 1), T.shape)
        (M, _, out), secs = timed(lambda: ttb.tucker_als(X, ranks, stoptol=0.0, maxiters=ITERS,
                                                         init=[u.copy() for u in start], printitn=0))
        rows.append(("pyttb tucker_als", secs / ITERS, secs, out["fit"], bool(abs(out["fit"] - ref_fit) < 1e-9)))
    except Timeout:
        rows.append(("pyttb tucker_als", float("nan"), float("nan"), float("nan"), f"timeout {TIMEOUT} s"))
    except Exception as e:  # noqa: BLE001 (MemoryError under MEMORY_KB too)
        rows.append(("pyttb tucker_als", float("nan"), float("nan"), float("nan"), f"failed: {type(e).__name__}"))
    # tensorly, sparse backend
    if os.environ["TENSORLY"] == "1":
        try:
            import sparse
            from tensorly.contrib.sparse import decomposition as spdec
            S = sparse.COO(np.asarray(T.coords).T, np.asarray(T.values), shape=T.shape)
            try:  # its 'svd' start fails on the sparse backend of some versions: then 'random'
                init = "svd"
                (tt, secs) = timed(lambda: spdec.tucker(S, rank=ranks, n_iter_max=ITERS, tol=0, init=init))
            except Timeout:
                raise
            except Exception:  # noqa: BLE001
                init = "random"
                (tt, secs) = timed(lambda: spdec.tucker(S, rank=ranks, n_iter_max=ITERS, tol=0, init=init))
            core, factors = tt
            core = core.todense() if hasattr(core, "todense") else np.asarray(core)
            fit = 1 - np.sqrt(abs(float(T.values @ T.values) - float((core ** 2).sum()))) / np.sqrt(T.values @ T.values)
            rows.append(("tensorly sparse tucker", secs / ITERS, secs, fit, f"(own start: {init})"))
        except Timeout:
            rows.append(("tensorly sparse tucker", float("nan"), float("nan"), float("nan"), f"timeout {TIMEOUT} s"))
        except Exception as e:  # noqa: BLE001
            rows.append(("tensorly sparse tucker", float("nan"), float("nan"), float("nan"),
                         f"failed: {type(e).__name__}: {str(e)[:60]}"))
    for tool, spi, run, fit, same in rows:
        s = "" if same is None else ("yes" if same is True else "NO" if same is False else same)
        print(f"{name:18s} {rk:14s} {tool:22s} {spi:9.4f} {run:9.3f} {fit:12.9f}  {s}", flush=True)
EOF
