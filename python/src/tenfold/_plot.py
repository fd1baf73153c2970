# SPDX-License-Identifier: BSD-3-Clause
"""tenfold.plot and `python -m tenfold plot`: the fit per iteration and the time breakdown."""
from __future__ import annotations

import json
import os
from typing import Any, Optional

from ._errors import ArgumentError


def _series(run):
    """(fits, title, [(label, seconds)]) from a CPResult, a report dict or a report file."""
    if hasattr(run, "fit_history"):
        t = run.timings
        parts = [("build", t["build"])] + [(f"MTTKRP mode {m + 1}", s) for m, s in enumerate(t["mttkrp"])]
        parts += [("dense", t["dense"]), ("fit", t["fit"])]
        return list(run.fit_history), f"rank {run.rank}, {run.plan}", parts
    if isinstance(run, (str, os.PathLike)):
        try:
            with open(run, encoding="utf-8") as f:
                run = json.load(f)
        except OSError as e:
            raise ArgumentError(f"plot: cannot read {os.fspath(run)}: {e.strerror}") from None
        except json.JSONDecodeError as e:
            raise ArgumentError(f"plot: {os.fspath(run)} is not JSON ({e})") from None
    if not isinstance(run, dict) or run.get("command") != "cpd" or "iterations" not in run:
        raise ArgumentError("plot: expected a cp_als result or a `tenfold cpd --json` report")
    fits = [it["fit"] for it in run["iterations"]]
    t = run.get("timing_seconds", {})
    parts = [(k, t.get(k)) for k in ("read", "build")]
    parts += [(f"MTTKRP mode {m + 1}", s) for m, s in enumerate(t.get("mttkrp_per_mode") or [])]
    parts += [(k, t.get(k)) for k in ("dense", "fit", "write")]
    opts = run.get("options", {})
    title = f"rank {opts.get('rank')}, {run.get('plan', '')}"
    return fits, title, [(k, v) for k, v in parts if v is not None]


def plot(run: Any, path: Optional[str] = None) -> Any:
    """Draws the fit per iteration and where the time went, for a cp_als result
    or a `tenfold cpd --json` report (a dict or a file name); saves it to path
    (format by extension) when given. Returns the matplotlib Figure. Needs
    matplotlib.

    >>> tenfold.plot(tenfold.cp_als(X, 16), "fit.png")
    """
    fits, title, parts = _series(run)
    try:
        import matplotlib

        if path is not None:
            matplotlib.use("Agg")  # headless: no display needed to write a file
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("tenfold.plot needs matplotlib (pip install matplotlib)") from None
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4), gridspec_kw={"width_ratios": [3, 2]})
    a.plot(range(1, len(fits) + 1), fits, marker="o", markersize=3)
    a.xaxis.get_major_locator().set_params(integer=True)
    a.set_xlabel("iteration")
    a.set_ylabel("fit")
    a.set_title(f"CP-ALS fit ({title})" if title else "CP-ALS fit")
    a.grid(alpha=0.3)
    labels = [k for k, _ in parts][::-1]
    b.barh(labels, [v for _, v in parts][::-1])
    b.set_xlabel("seconds")
    b.set_title("time")
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=110)
        plt.close(fig)
    return fig
