# SPDX-License-Identifier: BSD-3-Clause
"""python -m tenfold plot REPORT.json -o fit.png"""
import argparse
import sys

from ._errors import Error
from ._plot import plot


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m tenfold")
    sub = p.add_subparsers(dest="command", required=True)
    pp = sub.add_parser("plot", help="draw the fit per iteration and the time breakdown of a `tenfold cpd --json` report")
    pp.add_argument("report", help="the JSON report of `tenfold cpd --json REPORT`")
    pp.add_argument("-o", "--output", default="fit.png", help="image file (format by extension; default fit.png)")
    a = p.parse_args(argv)
    try:
        plot(a.report, a.output)
    except (Error, ImportError) as e:
        print(f"python -m tenfold plot: {e}", file=sys.stderr)
        return 1
    print(a.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
