# SPDX-License-Identifier: BSD-3-Clause
"""The run registry of the iteration callbacks, shared by every method
(cp_als, cp_apr, gcp, complete, tucker): C calls a run's callback on the
thread that called the method, so the run on each thread is known, and an
exception raised in a user's callback -- Ctrl-C's KeyboardInterrupt too --
stops the C loop after that iteration (the stop flag C polls) and is raised
by the method once C has returned."""
from __future__ import annotations

import threading

_runs = {}  # thread id -> the run on it


def enter_run(state):
    """Makes state this thread's run; returns the run it replaces (a method
    called from another's callback), for leave_run."""
    tid = threading.get_ident()
    prev = _runs.get(tid)
    _runs[tid] = state
    return prev


def leave_run(prev):
    """Gives the thread back to the run enter_run replaced (or to none)."""
    tid = threading.get_ident()
    if prev is None:
        _runs.pop(tid, None)
    else:
        _runs[tid] = prev


def on_callback_error(exc):
    """cffi's onerror of every callback: the first exception is kept on the
    thread's run and its stop flag (``stop[0]``) is raised."""
    st = _runs.get(threading.get_ident())
    if st is not None:
        if st.error is None:
            st.error = exc
        st.stop[0] = 1
