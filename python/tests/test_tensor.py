# SPDX-License-Identifier: BSD-3-Clause
"""Tensor construction, conversions, files and bad inputs."""
import numpy as np
import pytest

import tenfold
from conftest import random_coo


def test_from_tuple_is_canonical():
    coords = np.array([[2, 1], [0, 0], [2, 1], [1, 1], [0, 1]])
    vals = np.array([1.0, 2.0, 3.0, 0.0, -1.0])
    X = tenfold.Tensor((coords, vals, (3, 2)))
    assert X.shape == (3, 2) and X.nnz == 3
    np.testing.assert_array_equal(X.coords, [[0, 0], [0, 1], [2, 1]])
    np.testing.assert_array_equal(X.values, [2.0, -1.0, 4.0])  # summed, zero dropped, sorted


def test_dense_roundtrip(small3):
    coords, vals, shape = small3
    X = tenfold.Tensor(small3)
    D = X.to_dense()
    assert D.shape == shape and D[tuple(coords.T)].tolist() == vals.tolist()
    Y = tenfold.Tensor(D)
    np.testing.assert_array_equal(Y.coords, X.coords)
    np.testing.assert_array_equal(Y.values, X.values)


def test_scipy():
    sp = pytest.importorskip("scipy.sparse")
    M = sp.random(30, 20, density=0.1, format="csr", random_state=1)
    X = tenfold.Tensor(M)
    assert X.shape == (30, 20) and X.nnz == M.nnz
    np.testing.assert_allclose(X.to_dense(), M.toarray())
    np.testing.assert_allclose(X.to_scipy().toarray(), M.toarray())


def test_pydata_sparse(small3):
    sparse = pytest.importorskip("sparse")
    S = sparse.COO(np.asarray(small3[0]).T, small3[1], shape=small3[2])
    X = tenfold.Tensor(S)
    np.testing.assert_allclose(X.to_dense(), S.todense())
    np.testing.assert_allclose(X.to_sparse().todense(), S.todense())


def test_pyttb(small3):
    pyttb = pytest.importorskip("pyttb")
    S = pyttb.sptensor(np.asarray(small3[0]), small3[1].reshape(-1, 1), small3[2])
    X = tenfold.Tensor(S)
    np.testing.assert_allclose(X.to_dense(), S.full().data)
    np.testing.assert_allclose(X.to_pyttb().full().data, S.full().data)


@pytest.mark.parametrize("ext", ["tns", "bin", "tns.gz"])
def test_write_read(tmp_path, small3, ext):
    X = tenfold.Tensor(small3)
    p = tmp_path / f"x.{ext}"
    if ext == "tns.gz":
        import gzip

        tenfold.write(tmp_path / "x.tns", X)
        p.write_bytes(gzip.compress((tmp_path / "x.tns").read_bytes()))
    else:
        tenfold.write(p, X)
    Y = tenfold.read(p)
    assert Y.shape == X.shape
    np.testing.assert_array_equal(Y.coords, X.coords)
    np.testing.assert_array_equal(Y.values, X.values)


def test_write_mtx_and_base(tmp_path):
    X = tenfold.Tensor(([[0, 1], [2, 0]], [1.5, -2.0], (3, 2)))
    tenfold.write(tmp_path / "m.mtx", X)
    assert (tmp_path / "m.mtx").read_text().startswith("%%MatrixMarket")
    np.testing.assert_array_equal(tenfold.read(tmp_path / "m.mtx").to_dense(), X.to_dense())
    (tmp_path / "b.tns").write_text("1 2 1.0\n2 1 2.0\n")
    assert tenfold.read(tmp_path / "b.tns").shape == (2, 2)  # auto: 1-based
    assert tenfold.read(tmp_path / "b.tns", base=0).shape == (3, 3)


def test_missing_file(tmp_path):
    with pytest.raises(tenfold.FileError) as e:
        tenfold.read(tmp_path / "nope.tns")
    assert "nope.tns" in str(e.value)
    assert isinstance(e.value, tenfold.Error)


def test_malformed_file(tmp_path):
    p = tmp_path / "bad.tns"
    p.write_text("1 2 1.0\n1 x 2.0\n")
    with pytest.raises(tenfold.ParseError, match=r"bad\.tns:2"):
        tenfold.read(p)


def test_write_to_directory(tmp_path):
    with pytest.raises(tenfold.Error, match=str(tmp_path)):
        tenfold.write(tmp_path, tenfold.Tensor(random_coo((3, 3), 4)))


@pytest.mark.parametrize("data, match", [
    (([[0, 3]], [1.0], (2, 3)), r"mode 1 index 3 is outside 0\.\.2"),
    (([[0, -1]], [1.0], (2, 3)), r"mode 1 index -1"),
    (([[0, 1]], [np.nan], (2, 3)), r"entry 0 is nan"),
    (([[0, 1]], [np.inf], (2, 3)), r"must be finite"),
    (([[0, 1]], [1.0, 2.0], (2, 3)), r"coords has 1 rows, values 2"),
    (([[0, 1]], [1.0], (2, 3, 4)), r"3 lengths for coordinates of 2 modes"),
    (([[0.5, 1]], [1.0], (2, 3)), r"expected integers"),
    (([[0, 1]], ["a"], (2, 3)), r"expected real numbers"),
    (([[0, 1]], [1j], (2, 3)), r"expected real numbers"),
    (([0, 1], [1.0], (2, 3)), r"nnz x N"),
    (([[0]], [1.0], (2,)), r"1 modes"),
    (([[0, 1]], [1.0], (0, 3)), r"mode 0 has length 0"),
    (np.zeros((2, 2), dtype=complex), r"expected real numbers"),
    ("x.tns", r"expected a tenfold.Tensor"),
])
def test_bad_tensor(data, match):
    with pytest.raises(tenfold.ArgumentError, match=match):
        tenfold.Tensor(data)


def test_bad_options(tmp_path):
    X = tenfold.Tensor(random_coo((3, 3), 4))
    with pytest.raises(tenfold.ArgumentError, match="format"):
        tenfold.write(tmp_path / "x.tns", X, format="csv")
    with pytest.raises(tenfold.ArgumentError, match="base"):
        tenfold.read(tmp_path / "x.tns", base=2)


def test_import_leaves_the_environment_alone():
    # __init__ sets OMP_WAIT_POLICY only while libgomp loads
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    out = subprocess.run([sys.executable, "-c", "import os, tenfold; print(os.environ.get('OMP_WAIT_POLICY'))"],
                         capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "None"
