# SPDX-License-Identifier: BSD-3-Clause
"""The `tenfold` command a pip install puts on the PATH: the package carries the
tool built with it (``_tenfold_cli``, beside its libraries and CUDA module) and
this entry point runs it in place of the Python process."""
import os
import sys


def tool_path() -> str:
    """Where the package's own `tenfold` tool is."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "_tenfold_cli")


def main() -> int:
    exe = tool_path()
    if not os.access(exe, os.X_OK):
        print(f"tenfold: the package has no command-line tool at {exe} (reinstall it: pip install ./python)",
              file=sys.stderr)
        return 1
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(exe, ["tenfold", *sys.argv[1:]])
    return 1  # not reached: execv replaces the process or raises


if __name__ == "__main__":
    sys.exit(main())
