# SPDX-License-Identifier: BSD-3-Clause
"""The tables' side of bench/cpu_scaling.sh and bench/cpu_scaling_methods.sh
(issue 48): a report's median seconds per iteration, the cells, and the tail
of a row (first->last speedup, efficiency, more threads never slower)."""
import json
import statistics


def report(path):
    """a tenfold --json report, or None where there is none (a run that failed or was not run)"""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def median_seconds(r, key='seconds'):
    """the median of iterations[].KEY over iterations 2.. (the first one is left out), or None"""
    s = [i[key] for i in (r or {}).get('iterations', [])[1:] if i.get(key) is not None]
    return statistics.median(s) if s else None


def fmt(v):
    return '-' if v is None else ('%.3g' % v)


def tail(threads, times):
    """speedup from the first to the last thread count with a time, its efficiency, never slower"""
    have = [(t, v) for t, v in zip(threads, times) if v]
    if len(have) < 2:
        return '', ''
    (t0, v0), (t1, v1) = have[0], have[-1]
    sp = v0 / v1
    eff = sp / (t1 / t0)
    worst, where = 0.0, None
    for k in range(1, len(have)):
        best_before = min(v for _, v in have[:k])
        if have[k][1] > best_before * 1.05 and have[k][1] / best_before - 1 > worst:
            worst, where = have[k][1] / best_before - 1, have[k][0]
    mono = 'yes' if where is None else 'no (t=%d +%.0f%%)' % (where, 100 * worst)
    return '%5.1fx %3.0f%%' % (sp, 100 * eff), mono


def header(threads, first='%-8s %-8s' % ('tool', 'env')):
    """the column line of a table"""
    return first + ''.join(' %8s' % ('t=%d' % t) for t in threads) + '  %-11s %s' % ('first->last', 'more threads never slower')


def row(threads, times, first):
    """one row: FIRST, the cells, the tail"""
    sp, mono = tail(threads, times)
    return first + ''.join(' %8s' % fmt(v) for v in times) + '  %-11s %s' % (sp, mono)
