# SPDX-License-Identifier: BSD-3-Clause
# A write to standard output that is lost is a failure (issue 41, item 8):
# with stdout on /dev/full (every write fails with ENOSPC) every command
# that prints exits 1 with "tenfold: error writing standard output: ...",
# instead of 0 with its report gone.
source "$(dirname "$0")/lib/common.bash"

if [ ! -c /dev/full ]; then echo "$NAME: skipped: no /dev/full"; exit 77; fi

printf '1 1 1 1.5\n2 2 2 2.5\n1 2 2 0.5\n2 1 1 3.0\n' > t.tns

# full ARGS...: stdout on /dev/full -> exit 1, the message names the write error
# (outputs named "-" are written by the library: "standard output: write failed: ...")
full() {
    local desc="tenfold $* > /dev/full"
    "$TF" "$@" >/dev/full 2>err.txt
    local rc=$?
    if [ "$rc" -ne 1 ]; then bad "$desc: exit $rc, expected 1; stderr: $(head -c 300 err.txt)"; return; fi
    if ! grep -qxE 'tenfold: (error writing standard output|standard output: write failed): No space left on device' err.txt; then
        bad "$desc: no write error message on stderr: $(head -c 300 err.txt)"; return
    fi
    ok
}

full stats t.tns
full check t.tns
full info
full bench mttkrp -q t.tns -r 2 --reps 1 --warmup 0
full cpd t.tns -r 2 --nowrite
full cpd t.tns -r 2 --nowrite -q --json -
full convert t.tns -
full --help
full --version
full cpd --help       # longer than stdio's buffer: the write fails inside printf
full gen --help

# the same commands to a working stdout succeed (the check is not always on)
for args in "stats t.tns" "check t.tns" "info" "--version" "cpd --help"; do
    # shellcheck disable=SC2086
    expect 0 "tenfold $args > file" $args
done

# a usage error stays a usage error (exit 2), whatever stdout is
"$TF" cpd t.tns -r 0 >/dev/full 2>err.txt
rc=$?
if [ "$rc" -eq 2 ]; then ok; else bad "usage error with stdout on /dev/full: exit $rc, expected 2"; fi

finish
