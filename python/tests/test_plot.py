# SPDX-License-Identifier: BSD-3-Clause
"""tenfold.plot and `python -m tenfold plot` (matplotlib is optional)."""
import json
import subprocess
import sys

import pytest

import tenfold
from conftest import REPO

PNG = b"\x89PNG\r\n\x1a\n"


def test_plot_result(tmp_path, small3):
    pytest.importorskip("matplotlib")
    res = tenfold.cp_als(small3, 3, n_iter_max=8, tol=0.0)
    out = tmp_path / "fit.png"
    tenfold.plot(res, out)
    assert out.read_bytes()[:8] == PNG


def test_plot_cli_report(tmp_path, cli):
    pytest.importorskip("matplotlib")
    rep = tmp_path / "r.json"
    subprocess.run([cli, "cpd", str(REPO / "data/uber-apr14.tns.xz"), "-r", "4", "-i", "5", "--device", "cpu",
                    "--nowrite", "-q", "--json", str(rep)], check=True)
    out = tmp_path / "fit.png"
    r = subprocess.run([sys.executable, "-m", "tenfold", "plot", str(rep), "-o", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert out.read_bytes()[:8] == PNG


def test_plot_bad_report(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"command": "stats"}))
    with pytest.raises(tenfold.ArgumentError, match="tenfold cpd --json"):
        tenfold.plot(bad)
    with pytest.raises(tenfold.ArgumentError, match="cannot read"):
        tenfold.plot(tmp_path / "missing.json")
    r = subprocess.run([sys.executable, "-m", "tenfold", "plot", str(bad)], capture_output=True, text=True)
    assert r.returncode == 1 and "tenfold cpd --json" in r.stderr
