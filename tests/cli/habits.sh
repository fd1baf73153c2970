# SPDX-License-Identifier: BSD-3-Clause
# CLI habits (issue 31 item 5): the OpenMP wait policy the tool defaults to.
source "$(dirname "$0")/lib/common.bash"

# ---- OpenMP threads wait passively unless the user chose a policy (libgomp
# shows its settings with OMP_DISPLAY_ENV; the last block is the one in force)
spincount() { # ENV... : GOMP_SPINCOUNT of `tenfold info` run with ENV
    env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT OMP_DISPLAY_ENV=verbose "$@" "$TF" info 2>&1 >/dev/null |
        sed -n "s/^ *GOMP_SPINCOUNT = '\([0-9]*\)'.*/\1/p" | tail -1
}
if [ -n "$(spincount)" ]; then
    check "no policy set: passive (spin count 0)" test "$(spincount)" = 0
    check "OMP_WAIT_POLICY=ACTIVE is kept" test "$(spincount OMP_WAIT_POLICY=ACTIVE)" != 0
    check "GOMP_SPINCOUNT is kept" test "$(spincount GOMP_SPINCOUNT=1234)" = 1234
    check "the tool still runs with the policy set" test "$(env -u OMP_WAIT_POLICY "$TF" --version | head -c 7)" = tenfold
fi
finish
