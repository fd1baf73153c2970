# SPDX-License-Identifier: BSD-3-Clause
"""CP-ALS: the CLI's fits, results, starts, callbacks, Ctrl-C, errors."""
import json
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import tenfold
from conftest import REPO, random_coo

UBER = REPO / "data" / "uber-apr14.tns.xz"


def test_same_fits_as_cli(cli, tmp_path):
    X = tenfold.read(UBER)
    res = tenfold.cp_als(X, 8, n_iter_max=6, tol=0.0, random_state=11, device="cpu")
    rep = tmp_path / "r.json"
    subprocess.run([cli, "cpd", str(UBER), "-r", "8", "-i", "6", "--tol", "0", "--seed", "11", "--device", "cpu",
                    "--nowrite", "-q", "--json", str(rep)], check=True)
    cli_fits = [it["fit"] for it in json.loads(rep.read_text())["iterations"]]
    assert len(cli_fits) == res.n_iter == 6
    np.testing.assert_allclose(res.fit_history, cli_fits, rtol=1e-12, atol=0)
    assert res.fit == res.fit_history[-1]


def test_default_seed_is_the_cli_default(small3):
    a = tenfold.cp_als(small3, 3, n_iter_max=4)
    b = tenfold.cp_als(small3, 3, n_iter_max=4, random_state=20240601)
    c = tenfold.cp_als(small3, 3, n_iter_max=4, random_state=1)
    assert a.fit_history == b.fit_history and a.fit_history != c.fit_history


def test_result_matches_direct_fit():
    # a planted rank-2 dense tensor, recovered
    rng = np.random.default_rng(0)
    F = [rng.random((d, 2)) + 0.1 for d in (8, 7, 6)]
    D = np.einsum("ir,jr,kr->ijk", *F)
    res = tenfold.cp_als(D, 2, n_iter_max=200, tol=1e-12, random_state=2)
    model = np.einsum("r,ir,jr,kr->ijk", res.weights, *res.factors)
    direct = 1 - np.linalg.norm(D - model) / np.linalg.norm(D)
    assert res.fit == pytest.approx(direct, abs=1e-9)
    assert res.fit > 0.99
    assert res.weights.shape == (2,) and [f.shape for f in res.factors] == [(8, 2), (7, 2), (6, 2)]
    np.testing.assert_allclose([np.linalg.norm(f[:, 0]) for f in res.factors], 1.0)
    assert set(res.timings) == {"init", "build", "mttkrp", "dense", "fit", "setup", "finish", "total"} and len(res.timings["mttkrp"]) == 3
    w, fs = res  # unpacks like a CPTensor


def test_converged_flag(small3):
    res = tenfold.cp_als(small3, 2, n_iter_max=500, tol=1e-3)
    assert res.converged and res.n_iter < 500 and len(res.fit_history) == res.n_iter


def test_init_continues_a_run(small3):
    first = tenfold.cp_als(small3, 3, n_iter_max=5, tol=0.0)
    for start in (first, (first.weights, first.factors), [f * w for f, w in zip(first.factors, (first.weights, 1, 1))]):
        more = tenfold.cp_als(small3, 3, n_iter_max=3, tol=0.0, init=start)
        assert more.fit_history[0] >= first.fit - 1e-12


def test_callback_stops_the_run(small3):
    seen = []

    def cb(info):
        seen.append((info.iter, info.fit))
        return info.iter == 3

    res = tenfold.cp_als(small3, 3, n_iter_max=50, tol=0.0, callback=cb)
    assert res.n_iter == 3 and res.stopped and not res.converged
    assert [s[0] for s in seen] == [1, 2, 3] and res.fit == seen[-1][1]


def test_callback_exception_propagates(small3):
    calls = []

    def cb(info):
        calls.append(info.iter)
        if info.iter == 2:
            raise RuntimeError("from the callback")

    with pytest.raises(RuntimeError, match="from the callback"):
        tenfold.cp_als(small3, 3, n_iter_max=50, tol=0.0, callback=cb)
    assert calls == [1, 2]


def test_ctrl_c_stops_cleanly(tmp_path):
    # A long run in a child process; SIGINT after it started: KeyboardInterrupt
    # comes out of cp_als after the current iteration, and the process goes on.
    script = tmp_path / "long.py"
    script.write_text(f"""
import faulthandler, os, signal, sys, threading, time
faulthandler.dump_traceback_later(100, exit=True)  # a hang shows every thread's stack (stderr) before the timeout
signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C's default, also where SIGINT came in ignored (a background job)
import tenfold
X = tenfold.read({str(UBER)!r})
iters = []
def cb(info):
    iters.append(info.iter)
    if info.iter == 2:
        threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGINT)).start()
try:
    tenfold.cp_als(X, 16, n_iter_max=100000, tol=0.0, callback=cb, device="cpu")
    print("not interrupted")
except KeyboardInterrupt:
    print("interrupted after", len(iters), "iterations")
    r = tenfold.cp_als(X, 2, n_iter_max=2)
    print("then ran again:", r.n_iter)
""")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "interrupted after" in out.stdout and "then ran again: 2" in out.stdout, out.stdout + out.stderr
    n = int(out.stdout.split("interrupted after")[1].split()[0])
    assert 2 <= n < 1000


def test_gil_released():
    # A pure-Python spinner beside cp_als (1 OpenMP thread, so a core is free):
    # between the first and last iteration callbacks the library runs, and the
    # spinner keeps its pace only if tf_cpd released the GIL. Held, it would get
    # a switch interval (1 ms here) per callback of ~20+ ms iterations.
    X = tenfold.read(UBER)
    ticks = [0]
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            ticks[0] += 1

    old = sys.getswitchinterval()
    sys.setswitchinterval(0.001)
    t = threading.Thread(target=spin)
    t.start()
    marks = []
    try:
        t0, k0 = time.perf_counter(), ticks[0]
        time.sleep(0.2)
        rate = (ticks[0] - k0) / (time.perf_counter() - t0)  # alone, main thread asleep
        tenfold.cp_als(X, 32, n_iter_max=12, tol=0.0, device="cpu", threads=1,
                       callback=lambda it: marks.append((time.perf_counter(), ticks[0])))
    finally:
        stop.set()
        t.join()
        sys.setswitchinterval(old)
    (ta, ka), (tb, kb) = marks[0], marks[-1]
    share = (kb - ka) / (tb - ta) / rate
    assert share > 0.4, f"the spinner ran at {share:.0%} of its pace while tf_cpd ran ({(tb - ta) / 11 * 1e3:.1f} ms/iteration)"


def test_several_gpus(small3):
    """gpus=2: one GPU's fit where the machine has two GPUs, else a clear error."""
    try:
        r2 = tenfold.cp_als(small3, 2, gpus=2, n_iter_max=5, tol=0)
    except tenfold.Error as e:
        assert "2 GPUs asked for" in str(e) or "CUDA" in str(e), str(e)
        return
    r1 = tenfold.cp_als(small3, 2, device="gpu", n_iter_max=5, tol=0)
    assert abs(r1.fit - r2.fit) <= 1e-9


def test_gpu_without_one(small3):
    if tenfold.gpu_count() > 0:
        pytest.skip("a GPU is present")
    with pytest.raises(tenfold.UnavailableError):
        tenfold.cp_als(small3, 2, device="gpu")


@pytest.mark.parametrize("kw, match", [
    ({"rank": 0}, "rank"), ({"rank": 2.5}, "rank"), ({"n_iter_max": 0}, "n_iter_max"),
    ({"tol": -1.0}, "tolerance"), ({"tol": "x"}, "tol"), ({"device": "tpu"}, "device"),
    ({"precision": "half"}, "precision"), ({"init": "hosvd"}, "init"), ({"random_state": -1}, "random_state"),
    ({"memory_limit": "lots"}, "memory_limit"), ({"callback": 3}, "callback"),
    ({"init": [np.ones((12, 2)), np.ones((9, 2))]}, "2 factors"),
    ({"init": [np.ones((12, 3)), np.ones((9, 3)), np.ones((7, 3))]}, "expected the rank 2"),
    ({"init": [np.ones((12, 2)), np.full((9, 2), np.nan), np.ones((7, 2))]}, "is nan"),
])
def test_bad_arguments(small3, kw, match):
    kw = {"rank": 2, **kw}
    with pytest.raises(tenfold.ArgumentError, match=match):
        tenfold.cp_als(small3, **kw)


@pytest.mark.parametrize("shape", [(12, 9, 7), (6, 5, 4, 3)])
def test_to_tensorly(shape):
    # a tensorly CPTensor of tenfold's model: the same weights and factors, which
    # tensorly's cp_to_tensor reconstructs to the model's values and whose error,
    # measured by tensorly, is tenfold's fit
    tl = pytest.importorskip("tensorly")
    from tensorly.cp_tensor import CPTensor

    X = tenfold.Tensor(random_coo(shape, 100, seed=2))
    res = tenfold.cp_als(X, 3, n_iter_max=5, tol=0.0)
    cp = res.to_tensorly()
    assert isinstance(cp, CPTensor) and cp.rank == 3 and cp.shape == shape
    assert cp.weights is res.weights
    assert len(cp.factors) == len(shape) and cp.factors is not res.factors
    for a, b in zip(cp.factors, res.factors):
        assert a is b  # no copies
    letters = "ijkl"[:len(shape)]
    model = np.einsum(f"r,{','.join(c + 'r' for c in letters)}->{letters}", res.weights, *res.factors)
    full = tl.cp_to_tensor(cp)
    assert full.shape == shape
    np.testing.assert_allclose(full, model, rtol=1e-13, atol=1e-14)
    D = X.to_dense()
    np.testing.assert_allclose(1 - tl.norm(D - full) / tl.norm(D), res.fit, rtol=1e-10)
    np.testing.assert_allclose(tl.cp_norm(cp), np.linalg.norm(model), rtol=1e-12)
    # and back in: a start for tenfold
    more = tenfold.cp_als(X, 3, n_iter_max=2, tol=0.0, init=cp)
    assert more.fit_history[0] >= res.fit - 1e-12


def test_same_als_as_tensorly_parafac(small3):
    # the same start, the same ALS updates: tensorly's parafac (numpy backend, on the
    # dense tensor) reaches tenfold's model and fits iteration by iteration
    tl = pytest.importorskip("tensorly")
    from tensorly.cp_tensor import CPTensor
    from tensorly.decomposition import parafac

    X = tenfold.Tensor(small3)
    rng = np.random.default_rng(4)
    start = [rng.random((n, 3)) for n in X.shape]
    res = tenfold.cp_als(X, 3, n_iter_max=8, tol=0.0, init=[f.copy() for f in start])
    cp, errors = parafac(X.to_dense(), 3, n_iter_max=8, tol=0, init=CPTensor((np.ones(3), [f.copy() for f in start])),
                         return_errors=True)
    np.testing.assert_allclose(1 - np.asarray(errors), res.fit_history, rtol=1e-9)
    np.testing.assert_allclose(tl.cp_to_tensor(res.to_tensorly()), tl.cp_to_tensor(cp), rtol=1e-8, atol=1e-10)
    # and tensorly's result is a start for tenfold
    more = tenfold.cp_als(X, 3, n_iter_max=1, tol=0.0, init=cp)
    assert more.fit_history[0] >= res.fit - 1e-9


def test_to_pyttb(small3):
    pytest.importorskip("pyttb")
    res = tenfold.cp_als(small3, 3, n_iter_max=5)
    K = res.to_pyttb()
    np.testing.assert_allclose(K.full().data, np.einsum("r,ir,jr,kr->ijk", res.weights, *res.factors))
    more = tenfold.cp_als(small3, 3, n_iter_max=2, tol=0.0, init=K)
    assert more.fit_history[0] >= res.fit - 1e-12


def test_cuda_module_beside_the_library():
    # a CUDA build of the wheel carries libtenfold_cuda.so next to libtenfold.so
    if not tenfold.build_info()["cuda_toolkit"]:
        pytest.skip("a CPU-only build")
    from tenfold import _ffi, _lib

    where = _ffi.new("char[4096]")
    state = _lib.tf_cuda_module(0, where, 4096)
    assert state in (_lib.TF_CUDA_MODULE_FOUND, _lib.TF_CUDA_MODULE_LOADED), _ffi.string(where).decode()


def test_gpu_fits_match_cpu():
    if tenfold.gpu_count() == 0:
        pytest.skip("no GPU")
    X = tenfold.read(UBER)
    cpu = tenfold.cp_als(X, 8, n_iter_max=10, tol=0.0, random_state=5, device="cpu")
    gpu = tenfold.cp_als(X, 8, n_iter_max=10, tol=0.0, random_state=5, device="gpu")
    np.testing.assert_allclose(gpu.fit_history, cpu.fit_history, rtol=1e-8)
