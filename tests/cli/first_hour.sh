# A new user's first runs (issue 43): the final fit says what fit means and,
# when the iteration limit stopped a run whose fit still rose, what to try;
# a converged run says so with its tolerance; --device gpu / --gpus on a
# machine without a usable GPU fail before the input is read (a missing
# input file is not what they complain about), in one line.
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
finish
