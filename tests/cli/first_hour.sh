# A new user's first runs (issue 43): the final fit says what fit means and,
# when the iteration limit stopped a run whose fit still rose, what to try;
# a converged run says so with its tolerance; --device gpu / --gpus on a
# machine without a usable GPU fail before the input is read (a missing
# input file is not what they complain about), in one line; a SIGINT the
# process raises itself (OpenBLAS's failed thread start) exits 1, not 130.
source "$(dirname "$0")/lib/common.bash"

"$TF" gen -o small.tns --dims 40,30,20 --nnz 3000 --rank 3 --seed 4 >/dev/null 2>&1 || bad "gen small.tns"

expect 0 "cpd stopped at the limit" cpd small.tns -r 4 -i 3 --tol 0 --nowrite
if grep -q '^final fit: .* after 3 iterations (stopped at the iteration limit, -i 3)$' out.txt &&
   grep -q '^  fit = 1 - ||X - M|| / ||X|| (M: the rank-4 model; 1 is exact' out.txt; then ok
else bad "final fit lines: $(grep -A3 '^final fit' out.txt)"; fi
# --tol 0: no delta exceeds it?  every positive delta does: the hint names -i 12 and -r 8
if grep -q 'the fit was still rising (last delta .* > --tol 0)' out.txt && grep -q -- '(-i 12)' out.txt &&
   grep -q -- '(-r 8)' out.txt; then ok
else bad "the hint after the limit: $(grep -A4 '^final fit' out.txt)"; fi

expect 0 "cpd converged" cpd small.tns -r 2 -i 200 --tol 1e-3 --nowrite
if grep -q '^final fit: .* (converged: |delta fit| < --tol 0.001)$' out.txt && ! grep -q 'still rising' out.txt; then ok
else bad "converged line: $(grep -A3 '^final fit' out.txt)"; fi

# no usable GPU: --device gpu fails before reading (the input does not even exist)
if "$TF" info 2>/dev/null | grep -qE '^gpus: +[1-9]'; then
    echo "$NAME: a GPU is present: the no-GPU checks are skipped"
else
    for cmd in "cpd missing.tns -r 2 --device gpu" "cpd missing.tns -r 2 --gpus 2" \
               "mttkrp missing.tns --mode 1 --factors a,b,c -o m.mat --device gpu" \
               "ttm missing.tns --mode 1 --rank 4 --device gpu"; do
        # shellcheck disable=SC2086
        expect_failure "$cmd" 'tenfold: --(device|gpus): (not available|no usable NVIDIA GPU)' $cmd
        if grep -q 'missing.tns' err.txt; then bad "$cmd: read the input first: $(cat err.txt)"; else ok; fi
    done
fi
# A SIGINT the process raises itself (OpenBLAS does when it cannot start its
# threads) is a failure (exit 1, one line), not a Ctrl-C (130): a preloaded
# BLAS whose dgemm / dsyrk / dpotrf raise it, as OpenBLAS's thread start does
if command -v cc >/dev/null; then
    cat > raise_blas.c <<'C'
#include <signal.h>
void dgemm_(void) { raise(SIGINT); }
void dsyrk_(void) { raise(SIGINT); }
void dpotrf_(void) { raise(SIGINT); }
C
    if cc -shared -fPIC -o raise_blas.so raise_blas.c 2>/dev/null; then
        # (a sanitizer build's runtime would refuse to come after the preload: told not to check)
        ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" LD_PRELOAD=$PWD/raise_blas.so \
            "$TF" cpd small.tns -r 4 -i 2 --device cpu -o raised >out.txt 2>err.txt
        rc=$?
        if [ "$rc" -eq 1 ] && grep -q '^tenfold: a library in this process raised SIGINT (OpenBLAS' err.txt; then ok
        else bad "self-raised SIGINT: exit $rc, stderr: $(cat err.txt)"; fi
        no_files "self-raised SIGINT leaves no output" raised.mode1.mat raised.*tmp* raised.lock
        # a real SIGINT from outside still reads as one: 130
        LD_PRELOAD= "$TF" gen -o big.tns --dims 3000,3000,3000 --nnz 3000000 --seed 1 >/dev/null 2>&1 &
        pid=$!; sleep 0.3; kill -INT "$pid" 2>/dev/null; wait "$pid"; rc=$?
        if [ "$rc" -eq 130 ] || [ "$rc" -eq 0 ]; then ok; else bad "SIGINT from outside: exit $rc"; fi
    else
        echo "$NAME: cc cannot build a shared library: the self-raised SIGINT check is skipped"
    fi
fi
finish
