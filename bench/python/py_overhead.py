# SPDX-License-Identifier: BSD-3-Clause
"""Where the time of a tenfold Python call goes, against pyttb (issue 48).

    python bench/python/py_overhead.py FILE... [--rank 16] [--iters 20] [--reps 5]
        [--pyttb-reps 1] [--no-pyttb] [--methods] [--threads N]

Per tensor, tenfold.cp_als(X, R, n_iter_max=iters, tol=0, init=START, device='cpu')
from three inputs -- the pyttb.sptensor a pyttb user holds, a (coords int64 nnz x N,
values, shape) numpy tuple, the file path -- each call's wall time split into
  conv    the input turned into the C tensor (tenfold's _tensor_arg: checks,
          int64 -> uint32 indices, the canonical test or sort; the file: the read)
  build   the plan (timings['build'] of tf_cpd)
  iters   the iterations (tf_cpd's t_total less its build and start)
  result  the C result copied back and its signs fixed (_from_c_ktensor, fixsigns)
  python  the rest: option structs, the context, the per-iteration history
          callback, the CPResult
and pyttb.cp_als(S, R, maxiters=iters, stoptol=0, init=ktensor(START)) on the
same sptensor, the same start (uniform [0, 1) from default_rng(0), weights 1).
Medians of --reps calls (pyttb: --pyttb-reps), after one untimed call each.
--methods: cp_apr, tucker, gcp, complete on the first FILE, their Python
overhead share (wall less the C call's t_total), and pyttb's cp_apr /
tucker_als / gcp_opt beside them.
"""
import argparse
import time

import numpy as np

import tenfold
from tenfold import _helpers, _ops


class Timed:
    """Wraps module.name, summing its wall time into self.s."""

    def __init__(self, module, name):
        self.module, self.name, self.s = module, name, 0.0
        self.orig = getattr(module, name)

        def wrapper(*a, **k):
            t0 = time.perf_counter()
            try:
                return self.orig(*a, **k)
            finally:
                self.s += time.perf_counter() - t0

        setattr(module, name, wrapper)

    def take(self):
        s, self.s = self.s, 0.0
        return s


def med(v):
    return float(np.median(v))


def cp_als_split(X_in, rank, iters, start, reps):
    conv = Timed(_ops, "_tensor_arg")
    res_c = Timed(_ops, "_from_c_ktensor")
    fix = Timed(_helpers, "fixsigns_inplace")
    _ops.fixsigns_inplace = _helpers.fixsigns_inplace  # the name CPResult.fixsigns reads
    rows = []
    try:
        for k in range(reps + 1):
            init = [f.copy() for f in start]
            t0 = time.perf_counter()
            res = tenfold.cp_als(X_in, rank, n_iter_max=iters, tol=0.0, init=init, device="cpu")
            wall = time.perf_counter() - t0
            t = res.timings
            a = conv.take()
            d = res_c.take() + fix.take()
            it = t["total"] - t["build"] - t["init"]
            if k:
                rows.append((wall, a, t["build"], it, d, wall - a - t["total"] - d))
    finally:
        _ops._tensor_arg, _ops._from_c_ktensor = conv.orig, res_c.orig
        _helpers.fixsigns_inplace = _ops.fixsigns_inplace = fix.orig
    return [med(c) for c in zip(*rows)], res


def pyttb_cp_als(S, rank, iters, start, reps):
    import pyttb

    times = []
    for k in range(reps + 1):
        K0 = pyttb.ktensor([np.asfortranarray(f) for f in start], np.ones(rank))
        t0 = time.perf_counter()
        M, _, info = pyttb.cp_als(S, rank, maxiters=iters, stoptol=0.0, init=K0, printitn=0)
        if k:
            times.append(time.perf_counter() - t0)
    return med(times), float(info["fit"])


def methods(path, a):
    """cp_apr, tucker, gcp, complete: Python overhead share, and pyttb's time where it has one."""
    X = tenfold.read(path)
    S = X.to_pyttb() if not a.no_pyttb else None
    rng = np.random.default_rng(0)
    R = 8
    start = [rng.random((n, R)) for n in X.shape]
    Xcount = tenfold.Tensor((X.coords, np.maximum(1.0, np.round(np.abs(X.values))), X.shape))
    Scount = Xcount.to_pyttb() if S is not None else None
    tr = [min(8, n) for n in X.shape]
    cases = [
        ("cp_apr (mu, 10 outer)", lambda: tenfold.cp_apr(Xcount, R, maxiters=10, stoptol=0.0,
                                                          init=[f.copy() for f in start], device="cpu"),
         lambda: __import__("pyttb").cp_apr(Scount, R, algorithm="mu", maxiters=10, stoptol=0.0,
                                            init=__import__("pyttb").ktensor([np.asfortranarray(f) for f in start],
                                                                             np.ones(R)), printitn=0)),
        (f"tucker {tr} (10 iters)", lambda: tenfold.tucker(X, tr, n_iter_max=10, tol=0.0, device="cpu"),
         lambda: __import__("pyttb").tucker_als(S, tr, maxiters=10, stoptol=0.0, printitn=0)),
        ("gcp gaussian (5 epochs x 100)", lambda: tenfold.gcp(X, R, epoch_iters=100, max_epochs=5,
                                                              init=[f.copy() for f in start], device="cpu"),
         None),
        ("complete als (10 iters)", lambda: tenfold.complete(X, R, n_iter_max=10, tol=0.0, device="cpu"), None),
    ]
    print(f"\n{path}: {X!r}, the other methods (Tensor input; medians of {a.reps})")
    print("| method | tenfold wall s | C t_total s | Python overhead | share | pyttb s | x |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, tf_call, py_call in cases:
        walls, tots = [], []
        for k in range(a.reps + 1):
            t0 = time.perf_counter()
            res = tf_call()
            w = time.perf_counter() - t0
            if k:
                walls.append(w)
                tots.append(res.timings["total"])
        w, tt = med(walls), med(tots)
        py = ""
        ratio = ""
        if py_call is not None and S is not None:
            t0 = time.perf_counter()
            py_call()
            p = time.perf_counter() - t0
            py, ratio = f"{p:.3f}", f"{p / w:.0f}x"
        print(f"| {name} | {w:.4f} | {tt:.4f} | {1e3 * (w - tt):.2f} ms | {100 * (w - tt) / w:.1f} % | {py} "
              f"| {ratio} |", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("files", nargs="+")
    p.add_argument("--rank", type=int, default=16)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--pyttb-reps", type=int, default=1)
    p.add_argument("--no-pyttb", action="store_true")
    p.add_argument("--methods", action="store_true")
    a = p.parse_args()
    print(f"tenfold {tenfold.__version__}, rank {a.rank}, {a.iters} iterations, tol 0, same start; "
          f"medians of {a.reps} (ms)")
    print("| tensor | input | wall | conv | build | iters | result | python | not iters | pyttb s | x pyttb | fit |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for path in a.files:
        X = tenfold.read(path)
        rng = np.random.default_rng(0)
        start = [rng.random((n, a.rank)) for n in X.shape]
        S = X.to_pyttb()
        tup = (np.ascontiguousarray(X.coords, dtype=np.int64), X.values.copy(), X.shape)
        py_s, py_fit = (float("nan"), float("nan")) if a.no_pyttb else pyttb_cp_als(S, a.rank, a.iters, start,
                                                                                    a.pyttb_reps)
        name = path.rsplit("/", 1)[-1].split(".")[0]
        for label, inp in (("pyttb sptensor", S), ("numpy tuple", tup), ("Tensor", X), ("file", path)):
            (wall, conv, build, it, res_s, pyo), res = cp_als_split(inp, a.rank, a.iters, start, a.reps)
            x = f"{py_s / wall:.0f}x" if label == "pyttb sptensor" and py_s == py_s else ""
            ps = f"{py_s:.3f}" if label == "pyttb sptensor" else ""
            print(f"| {name} ({X.nnz:,}) | {label} | {1e3 * wall:.1f} | {1e3 * conv:.1f} | {1e3 * build:.1f} | "
                  f"{1e3 * it:.1f} | {1e3 * res_s:.2f} | {1e3 * pyo:.2f} | {100 * (1 - it / wall):.0f} % | {ps} "
                  f"| {x} | "
                  f"{res.fit:.6f}{'' if label != 'pyttb sptensor' or py_fit != py_fit else f' / {py_fit:.6f}'} |",
                  flush=True)
    if a.methods:
        methods(a.files[0], a)


if __name__ == "__main__":
    main()
