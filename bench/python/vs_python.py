# SPDX-License-Identifier: BSD-3-Clause
"""tenfold.cp_als against the tool and pyttb.cp_als (issue 29, "Measure").

    python bench/python/vs_python.py FILE [--rank 16] [--iters 30] [--cli build/release/tenfold] [--pyttb]

Prints, for CP-ALS at the same rank and iteration count (tol 0, same seed):
the tool's cpd_total (from its JSON report), tenfold.cp_als's wall time
around the call (tensor already read; conversion, context, callbacks
included) and its overhead over the library's own t_total, and with
--pyttb, pyttb.cp_als's wall time on the same tensor.
"""
import argparse
import json
import subprocess
import tempfile
import time

import numpy as np

import tenfold


def main():
    p = argparse.ArgumentParser()
    p.add_argument("file")
    p.add_argument("--rank", type=int, default=16)
    p.add_argument("--iters", type=int, default=30)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--cli", default="build/release/tenfold")
    p.add_argument("--pyttb", action="store_true")
    a = p.parse_args()
    X = tenfold.read(a.file)
    cli, walls, lib = [], [], []
    for _ in range(a.reps):
        with tempfile.NamedTemporaryFile(suffix=".json") as f:
            subprocess.run([a.cli, "cpd", a.file, "-r", str(a.rank), "-i", str(a.iters), "--tol", "0", "--device",
                            "cpu", "--nowrite", "-q", "--json", f.name], check=True)
            cli.append(json.load(open(f.name))["timing_seconds"]["cpd_total"])
        t0 = time.perf_counter()
        res = tenfold.cp_als(X, a.rank, n_iter_max=a.iters, tol=0.0, device="cpu")
        walls.append(time.perf_counter() - t0)
        lib.append(res.timings["total"])
    med = lambda v: float(np.median(v))  # noqa: E731
    print(f"{a.file}: {X!r}, rank {a.rank}, {a.iters} iterations, median of {a.reps}")
    print(f"  tenfold cpd (cpd_total)     {med(cli):8.3f} s")
    print(f"  tenfold.cp_als (wall)       {med(walls):8.3f} s   ({100 * (med(walls) / med(cli) - 1):+.1f} % vs the tool)")
    print(f"  of which Python overhead    {med(np.subtract(walls, lib)) * 1e3:8.2f} ms over tf_cpd's t_total")
    if a.pyttb:
        import pyttb

        S = X.to_pyttb()
        t0 = time.perf_counter()
        _, _, info = pyttb.cp_als(S, a.rank, maxiters=a.iters, stoptol=0.0, printitn=0)
        t = time.perf_counter() - t0
        print(f"  pyttb.cp_als (wall, once)   {t:8.3f} s   ({t / med(walls):.0f}x tenfold.cp_als; fit {info['fit']:.4f}"
              f" vs {res.fit:.4f})")


if __name__ == "__main__":
    main()
