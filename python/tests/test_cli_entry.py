# SPDX-License-Identifier: BSD-3-Clause
"""pip install puts the `tenfold` command beside the interpreter (issue 43 item 1):
it runs the tool the package was built with, on the bundled tensor too."""
import os
import subprocess
import sys

import pytest

import tenfold

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "data", "uber-apr14.tns.xz")


def _command():
    exe = os.path.join(os.path.dirname(sys.executable), "tenfold")
    if not os.path.exists(exe):
        pytest.skip(f"no console script at {exe} (not installed by pip into this environment)")
    return exe


def test_console_script_runs_the_packaged_tool():
    out = subprocess.run([_command(), "--version"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("tenfold ")
    assert tenfold.__version__ in out.stdout


def test_console_script_cpd_on_the_bundled_tensor():
    out = subprocess.run([_command(), "cpd", DATA, "-r", "2", "-i", "2", "--device", "cpu", "--nowrite"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "final fit:" in out.stdout


def test_console_script_passes_the_exit_code():
    out = subprocess.run([_command(), "cpd", "/nonexistent/x.tns", "-r", "2"], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 1
    assert out.stderr.startswith("tenfold: ")
