# SPDX-License-Identifier: BSD-3-Clause
"""tenfold.cp_als, pyttb.cp_als and tensorly's parafac side by side (issue 29, "Measure").

Installs nothing; the packages it compares come from (a venv, e.g. scripts/test-python's
build/pyvenv, which has them all):

    pip install ./python pyttb tensorly sparse

    python bench/python/py_compare.py FILE... [--rank 16] [--iters 30] [--reps 3]
        [--tenfold-reps 11] [--libs tenfold,pyttb,tensorly-sparse,tensorly-dense]
        [--dense-iters N] [--dense-reps N] [--max-dense-gb 6] [--max-others 0.05] [--seed 0] [--json OUT]

The libraries, each in a fresh subprocess (so its peak memory is its own):
  tenfold          tenfold.cp_als(X, R, n_iter_max, tol=0, init=start, device='cpu')
  pyttb            pyttb.cp_als(X.to_pyttb(), R, maxiters, stoptol=0, init=ktensor(start))
  tensorly-sparse  tensorly.contrib.sparse.decomposition.parafac(X.to_sparse(), R, n_iter_max,
                   init=CPTensor(start), tol=0): tensorly's sparse backend (pydata sparse COO)
  tensorly-dense   tensorly.decomposition.parafac(X.to_dense(), ...): the numpy backend on the
                   densified tensor (skipped above --max-dense-gb of dense values)
  tensorly-coo     (not in the default --libs) tensorly.decomposition.parafac(X.to_sparse(), ...):
                   the numpy backend given the sparse.COO (numpy functions dispatch to sparse)
All get the same start (uniform [0, 1) factors from numpy's default_rng(seed), weights 1), rank
and number of iterations, no convergence test, the default tenalg backend, every core of the
host (OpenMP / OpenBLAS threads). Timed: the decomposition call only, after one untimed
1-iteration call (sparse's numba kernels compile on their first call; tensorly-dense has no
warm-up: nothing compiles and one dense iteration is long); the tensor is read and converted
to the library's type before. --dense-iters caps tensorly-dense's iterations (then its total
is not comparable: compare seconds per iteration). Memory: the worker's peak resident set
(ru_maxrss) less its resident set once the input is read and converted (before the first
call: code that a library loads on its first call counts).
The host may be shared: each timed run waits for a quiet 3 s (other processes using at most
--max-others of the CPUs, /proc/stat less this process's CPU time), and a run during which
others took more does not count (up to 3 x --reps runs; "not quiet" when too few were); the
"others" column is the most they took during a counted run, "CPU s" this process's CPU time.
Fit: 1 - ||X - M|| / ||X|| of each result, recomputed here in one way over the non-zeros
(same start and same ALS updates: the three should agree to many digits).
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np


def rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def busy_s():
    """Seconds of CPU time the whole host has spent (all processes, all CPUs)."""
    with open("/proc/stat") as f:
        t = [int(x) for x in f.readline().split()[1:]]
    return (sum(t[:8]) - t[3] - t[4]) / os.sysconf("SC_CLK_TCK")  # less idle and iowait


class Others:
    """The share of the host's CPUs that other processes took while this block ran."""

    def __enter__(self):
        self.b, self.c, self.t = busy_s(), time.process_time(), time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.wall = time.perf_counter() - self.t
        self.cpu = time.process_time() - self.c
        self.share = max(0.0, busy_s() - self.b - self.cpu) / (self.wall * os.cpu_count())


def wait_quiet(limit, most_s=900):
    """Waits (at most most_s) for a 3-second stretch in which others take <= limit of the CPUs."""
    t0 = time.perf_counter()
    while True:
        with Others() as o:
            time.sleep(3)
        if o.share <= limit or time.perf_counter() - t0 > most_s:
            return o.share


def fit_of(X, weights, factors):
    """1 - ||X - M|| / ||X|| for the Kruskal tensor M = (weights, factors), over X's non-zeros."""
    factors = [np.asarray(f.todense() if hasattr(f, "todense") else f, dtype=np.float64) for f in factors]
    w = np.asarray(weights.todense() if hasattr(weights, "todense") else weights, dtype=np.float64).reshape(-1)
    P = np.ones((X.nnz, w.shape[0]))
    for m, f in enumerate(factors):
        P *= f[X.coords[:, m]]
    G = np.ones((w.shape[0], w.shape[0]))
    for f in factors:
        G *= f.T @ f
    x2 = float(X.values @ X.values)
    r2 = x2 - 2 * float(X.values @ (P @ w)) + float(w @ G @ w)
    return 1 - np.sqrt(max(r2, 0.0)) / np.sqrt(x2)


def worker(a):
    import tenfold

    X = tenfold.read(a.file)
    rng = np.random.default_rng(a.seed)
    start = [rng.random((n, a.rank)) for n in X.shape]
    out = {"lib": a.worker, "iters": a.iters, "nnz": X.nnz, "shape": list(X.shape)}

    if a.worker == "tenfold":
        out["version"] = tenfold.__version__

        def run(iters):
            res = tenfold.cp_als(X, a.rank, n_iter_max=iters, tol=0.0, init=[f.copy() for f in start],
                                 device="cpu")
            return res.weights, res.factors, res.fit
    elif a.worker == "pyttb":
        import pyttb

        out["version"] = pyttb.__version__
        S = X.to_pyttb()

        def run(iters):
            K0 = pyttb.ktensor([np.asfortranarray(f) for f in start], np.ones(a.rank))
            M, _, info = pyttb.cp_als(S, a.rank, maxiters=iters, stoptol=0.0, init=K0, printitn=0)
            return M.weights, M.factor_matrices, float(info["fit"])
    elif a.worker in ("tensorly-sparse", "tensorly-dense", "tensorly-coo"):
        import tensorly
        from tensorly.cp_tensor import CPTensor

        if a.worker == "tensorly-sparse":
            import sparse
            from tensorly.contrib.sparse.decomposition import parafac

            out["version"] = f"tensorly {tensorly.__version__}, sparse {sparse.__version__}"
            S = X.to_sparse()
        elif a.worker == "tensorly-coo":
            import sparse
            from tensorly.decomposition import parafac

            out["version"] = f"tensorly {tensorly.__version__}, sparse {sparse.__version__}"
            S = X.to_sparse()
        else:
            from tensorly.decomposition import parafac

            out["version"] = f"tensorly {tensorly.__version__}, numpy {np.__version__}"
            S = X.to_dense()

        def run(iters):
            # parafac updates the start's factor list in place: a fresh one each call
            cp = parafac(S, a.rank, n_iter_max=iters, init=CPTensor((np.ones(a.rank), [f.copy() for f in start])),
                         tol=0)
            return cp.weights, cp.factors, None
    else:
        raise SystemExit(f"unknown library {a.worker}")

    out["rss_before_mb"] = rss_mb()
    if a.worker != "tensorly-dense":
        t0 = time.perf_counter()
        run(1)
        out["first_call_1_iter_s"] = time.perf_counter() - t0
    runs = []  # (wall s, CPU s of this process, others' share of the CPUs)
    while sum(r[2] <= a.max_others for r in runs) < a.reps and len(runs) < 3 * a.reps:
        wait_quiet(a.max_others)
        with Others() as o:
            weights, factors, own = run(a.iters)
        runs.append((o.wall, o.cpu, o.share))
    out["peak_above_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - out["rss_before_mb"]
    out["runs"] = runs
    quiet = [r for r in runs if r[2] <= a.max_others]
    out["times"] = [r[0] for r in (quiet or runs)]
    out["cpu_times"] = [r[1] for r in (quiet or runs)]
    out["quiet"] = len(quiet) >= a.reps
    out["fit"] = fit_of(X, weights, factors)
    out["own_fit"] = own
    print(json.dumps(out))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("files", nargs="+")
    p.add_argument("--rank", type=int, default=16)
    p.add_argument("--iters", type=int, default=30)
    p.add_argument("--reps", type=int, default=3, help="timed runs of pyttb and tensorly")
    p.add_argument("--tenfold-reps", type=int, default=11)
    p.add_argument("--dense-iters", type=int, default=None, help="tensorly-dense's iterations (default --iters)")
    p.add_argument("--dense-reps", type=int, default=None, help="tensorly-dense's timed runs (default --reps)")
    p.add_argument("--max-dense-gb", type=float, default=6.0)
    p.add_argument("--libs", default="tenfold,pyttb,tensorly-sparse,tensorly-dense")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-others", type=float, default=0.05,
                   help="a timed run counts when other processes took at most this share of the CPUs")
    p.add_argument("--json", help="also write every worker's record here")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--file", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.worker:
        return worker(a)

    records = []
    for path in a.files:
        print(f"\n{path}: rank {a.rank}, {a.iters} iterations, tol 0, seed {a.seed}", flush=True)
        print("| library | s (median) | CPU s | runs | s / iteration | x tenfold | fit | own fit | memory MB | first call |"
              " others |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |", flush=True)
        base = None
        for lib in a.libs.split(","):
            iters, reps = a.iters, {"tenfold": a.tenfold_reps}.get(lib, a.reps)
            if lib == "tensorly-dense":
                iters, reps = a.dense_iters or a.iters, a.dense_reps or a.reps
            cmd = [sys.executable, __file__, "x", "--worker", lib, "--file", path, "--rank", str(a.rank),
                   "--iters", str(iters), "--reps", str(reps), "--seed", str(a.seed), "--max-others", str(a.max_others)]
            if lib == "tensorly-dense":
                import tenfold

                gb = np.prod(tenfold.read(path).shape, dtype=np.float64) * 8 / 1e9
                if gb > a.max_dense_gb:
                    print(f"| {lib} | skipped: {gb:.1f} GB dense > --max-dense-gb {a.max_dense_gb} | | | | | | | | | |")
                    continue
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                print(f"| {lib} | failed (exit {r.returncode}): {r.stderr.strip().splitlines()[-1:]} | | | | | | | | | |",
                      flush=True)
                continue
            rec = json.loads(r.stdout.strip().splitlines()[-1])
            rec["file"] = path
            records.append(rec)
            med = float(np.median(rec["times"]))
            per_iter = med / rec["iters"]
            if lib == "tenfold":
                base = per_iter
            ratio = f"{per_iter / base:.0f}x" if base and lib != "tenfold" else ""
            own = "" if rec["own_fit"] is None else f"{rec['own_fit']:.6f}"
            first = f"{rec['first_call_1_iter_s']:.2f} s" if "first_call_1_iter_s" in rec else ""
            others = max(r[2] for r in rec["runs"] if r[0] in rec["times"])
            flag = "" if rec["quiet"] else " (not quiet)"
            print(f"| {lib} ({rec['version']}) | {med:.3f} | {np.median(rec['cpu_times']):.3f} | {len(rec['times'])} x "
                  f"{rec['iters']} it{flag} | {per_iter:.4f} | {ratio} | {rec['fit']:.6f} | {own} "
                  f"| {rec['peak_above_mb']:.0f} | {first} | {100 * others:.0f} % |", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(records, f, indent=1)


if __name__ == "__main__":
    main()
