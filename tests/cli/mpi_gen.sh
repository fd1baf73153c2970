# SPDX-License-Identifier: BSD-3-Clause
# Rank-local --gen (issue 49): on 2 and 3 CPU ranks each rank generates only its
# part (tf_generate_part), and the parts are the one-process tensor's
# keep_part slices bit for bit, each rank drawing the whole candidate
# sequence or a share of it (TF_GEN_RANKS_DRAW; tenfold gen on ranks writes them: planted,
# noisy, counts, uniform values; parts smaller than a block of values; tiny
# dims where candidates repeat; every cell taken; keys wider than 64 bits);
# cpd --gen on ranks gives one process's fits and factors; the generator's
# peak on each rank is at most 1.1x the one-process peak over the ranks (5M
# non-zeros); nnz above the cells fails with one line on every rank, no hang.
# Skipped (77) without MPI in the build or without mpirun.
LIB=$(cd "$(dirname "$0")/lib" && pwd) # common.bash moves to the scratch directory
source "$LIB/common.bash"
source "$LIB/mpi.bash"

# same_parts N ORDER ARGS...: the parts of N ranks, in order, are the one-process file's non-zeros
same_parts() {
    local n=$1 order=$2; shift 2
    rm -f whole.tns part.*
    "$TF" gen -q -o whole.tns "$@" -t 2 >/dev/null 2>&1 || { bad "gen $*: one process"; return; }
    ranks "$n" gen -q -o part.tns "$@"
    if [ "$rc" -ne 0 ]; then bad "gen $* on $n ranks: exit $rc; $(head -c 300 err.txt)"; return; fi
    local files=""
    for ((r = 0; r < n; ++r)); do
        [ -f part.part$r.tns ] || { bad "gen $* on $n ranks: no part.part$r.tns"; return; }
        files="$files part.part$r.tns"
    done
    # the coordinate lines (a part file may add a dims header)
    check "gen $* on $n ranks: the parts are the whole's" \
        cmp -s <(cat $files | awk -v f=$((order + 1)) 'NF == f') <(awk -v f=$((order + 1)) 'NF == f' whole.tns)
}

# each rank drawing the whole sequence (the default on one host) and a share of it
for draw in whole share; do
export TF_GEN_RANKS_DRAW=$draw
for n in 2 3; do
    same_parts $n 3 --dims 300,200,100 --nnz 20000 --alpha 0.6 --rank 3 --seed 2
    same_parts $n 3 --dims 2000,300,400 --nnz 300000 --alpha 0.8 --rank 3 --noise 0.1 --seed 9
    same_parts $n 3 --dims 2000,300,400 --nnz 300000 --alpha 0.8 --rank 3 --counts 4 --seed 9
    same_parts $n 3 --dims 2000,300,400 --nnz 150000 --alpha 0.8 --counts 3 --seed 4
    same_parts $n 3 --dims 40,30,3 --nnz 500 --seed 3
    same_parts $n 3 --dims 10,10,5 --nnz 500
    same_parts $n 3 --dims 4000000000,4000000000,1000 --nnz 50000 --alpha 0.9 --counts 3
    same_parts $n 2 --dims 3,3 --nnz 9 --alpha 0.9
done
same_parts 5 3 --dims 300,200,100 --nnz 100000 --alpha 0.5 --rank 2 # parts under a block of values
done
unset TF_GEN_RANKS_DRAW

# cpd --gen on ranks: one process's run
spec=dims=300x200x100,nnz=20000,alpha=0.6,seed=2,rank=3
expect 0 "cpd --gen: one process" cpd --gen "$spec" -r 5 -i 8 --tol 0 -t 1 --device cpu -o one --json one.json
for n in 2 3; do
    ranks $n cpd --gen "$spec" -r 5 -i 8 --tol 0 -t 1 -o r$n --json r$n.json
    if [ "$rc" -ne 0 ]; then bad "cpd --gen on $n ranks: exit $rc; $(head -c 300 err.txt)"; continue; fi
    check "cpd --gen on $n ranks: the input line names the spec and the peak" \
        grep -qE "^input:  generated $spec in [0-9.]+ s \([0-9.]+ M non-zeros/s, peak host [0-9.]+ [KMGT]?B\)$" out.txt
    check "cpd --gen on $n ranks: fits and factors equal one process's to 1e-9" compare_runs one r$n 1e-9
done

# the generator's peak per rank (tenfold gen's figures): at most 1.1x the whole's over the ranks
big="--dims 400000,200000,50000 --nnz 5M --alpha 0.7 --seed 7"
expect 0 "gen 5M: one process" gen -v -o big.bin $big -t 1
one=$(sed -n 's/^memory:    generator peak host \(.*\)$/\1/p' out.txt)
for n in 2 3; do
    ranks $n gen -o bigp.bin $big
    if [ "$rc" -ne 0 ]; then bad "gen 5M on $n ranks: exit $rc; $(head -c 300 err.txt)"; continue; fi
    check "gen 5M on $n ranks: every rank's generator peak <= 1.1x one process's / $n ($one)" python3 - "$one" $n <<'PY'
import re, sys
unit = {"B": 1, "KB": 2**10, "MB": 2**20, "GB": 2**30, "TB": 2**40}
def size(s):
    v, u = s.split()
    return float(v) * unit[u]
one, n = size(sys.argv[1]), int(sys.argv[2])
peaks = [size(m) for m in re.findall(r"generator peak host ([0-9.]+ [KMGT]?B)", open("out.txt").read())]
assert len(peaks) == n, peaks
assert max(peaks) <= 1.1 * one / n, (peaks, one / n)
PY
done

# nnz above the cells: one line on every rank, no hang
ranks 3 gen -o bad.tns --dims 10,10,5 --nnz 501
check "gen: nnz above the cells fails on 3 ranks" test "$rc" -ne 0
check "gen: ... with one line" test "$(grep -c 'nnz 501 is more than the 500 cells' err.txt)" -eq 1
check "gen: ... and no part written" test ! -e bad.part0.tns

finish
