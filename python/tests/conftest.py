# SPDX-License-Identifier: BSD-3-Clause
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def repo():
    return REPO


@pytest.fixture
def cli():
    """The tenfold tool: $TENFOLD_CLI, else a build in the source tree, else PATH."""
    cands = [os.environ.get("TENFOLD_CLI"), REPO / "build/release/tenfold", shutil.which("tenfold")]
    for c in cands:
        if c and os.access(c, os.X_OK):
            return str(c)
    pytest.skip("no tenfold tool built (set TENFOLD_CLI)")


def random_coo(shape, nnz, seed=0):
    """Distinct random coordinates (nnz x N) and values in [1, 2)."""
    rng = np.random.default_rng(seed)
    flat = rng.choice(int(np.prod(shape)), size=nnz, replace=False)
    coords = np.stack(np.unravel_index(flat, shape), axis=1)
    return coords, 1.0 + rng.random(nnz), tuple(shape)


@pytest.fixture
def small3():
    return random_coo((12, 9, 7), 150, seed=1)
