# SPDX-License-Identifier: BSD-3-Clause
"""The checkpoint keywords of the iterative methods (cp_als, cp_apr, tucker,
non_negative_parafac, non_negative_parafac_hals): checkpoint=STEM,
checkpoint_every=..., resume=STEM -> a tf_checkpoint (tenfold/checkpoint.h)."""
from __future__ import annotations

import os
import re
from typing import Any, List, Optional, Sequence, Union

import numpy as np

from ._errors import ArgumentError
from ._tenfold_cffi import ffi

Every = Union[None, int, str, Sequence[Union[int, str]]]

_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0}


def _stem(v: Any, what: str, keep: List[Any]) -> Any:
    if not isinstance(v, (str, os.PathLike)) or not os.fspath(v):
        raise ArgumentError(f"{what}: expected the stem of a checkpoint (a path without its .state), got {v!r}")
    p = ffi.new("char[]", os.fsencode(v))
    keep.append(p)
    return p


def _checkpoint(checkpoint: Any, checkpoint_every: Every, resume: Any, keep: List[Any]) -> Optional[Any]:
    """A tf_checkpoint * for the keywords, or None when neither checkpoint nor
    resume is given; keep holds what it points to. checkpoint_every: N
    (iterations), 'Ts' / 'Tm' / 'Th' (time), or a pair of them; None: after
    every iteration (and always after the last)."""
    if checkpoint is None and resume is None:
        if checkpoint_every is not None:
            raise ArgumentError("checkpoint_every: only with checkpoint=STEM")
        return None
    if checkpoint_every is not None and checkpoint is None:
        raise ArgumentError("checkpoint_every: only with checkpoint=STEM")
    c = ffi.new("tf_checkpoint *")
    if checkpoint is not None:
        c.path = _stem(checkpoint, "checkpoint", keep)
    if resume is not None:
        c.resume = _stem(resume, "resume", keep)
    items = [] if checkpoint_every is None else (
        list(checkpoint_every) if isinstance(checkpoint_every, (list, tuple)) else [checkpoint_every])
    for e in items:
        if isinstance(e, (int, np.integer)) and not isinstance(e, bool) and 1 <= e < 2**32 and not c.every_iters:
            c.every_iters = int(e)
            continue
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([smh])\s*", e) if isinstance(e, str) else None
        if m and float(m.group(1)) > 0 and not c.every_seconds:
            c.every_seconds = float(m.group(1)) * _UNITS[m.group(2)]
            continue
        raise ArgumentError(f"checkpoint_every: expected N (iterations, >= 1), a time such as '5m', '30s' or '1h', "
                            f"or one of each, got {checkpoint_every!r}")
    keep.append(c)
    return c
