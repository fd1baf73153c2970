# SPDX-License-Identifier: BSD-3-Clause
# The partitioner's longest-first schedule on CPU MPI ranks (src/front/partition.c,
# issue 42): a short mode with a heavy row in the middle (5 rows: 15 15 40 15 15 % of
# the non-zeros) is cut longest-first on 2 ranks without being asked (contiguous 70 %
# of the non-zeros on one rank, longest-first 55 %), and -v / the JSON report say so;
# forced (TF_PARTITION=longest) on 2 and 3 ranks, from the random start and from
# --init files, the fits equal one process's to 1e-10 (relative) every iteration and
# the factors, in the caller's row order, to 1e-9; TF_PARTITION=contiguous keeps
# every mode contiguous; ranks asked for different schedules refuse to run. Skipped
# (77) without MPI in the build or without mpirun.
LIB=$(cd "$(dirname "$0")/lib" && pwd) # common.bash moves to the scratch directory
source "$LIB/common.bash"
source "$LIB/mpi.bash"

# mode 1: 5 rows, row 3 (1-based) heavy; modes 2 and 3 uniform; distinct coordinates
python3 - <<'PY' || bad "write mid.tns"
import random
random.seed(7)
share = [0.15, 0.15, 0.40, 0.15, 0.15]
nnz = 4000
with open("mid.tns", "w") as f:
    for i, s in enumerate(share):
        seen = set()
        while len(seen) < int(nnz * s):
            seen.add((random.randrange(60), random.randrange(40)))
        for j, k in sorted(seen):
            f.write("%d %d %d %.6f\n" % (i + 1, j + 1, k + 1, random.uniform(0.1, 1.0)))
PY
"$TF" gen -o heavy.tns --dims 50,400,300 --nnz 20000 --alpha 0.95,0.3,0.3 --rank 3 --seed 5 >/dev/null 2>&1 ||
    bad "gen heavy.tns"

# compare ONE TWO: fits of every iteration to 1e-10 relative, factor files to 1e-9 of their largest entry
compare() { compare_runs "$1" "$2" 1e-10; }
# schedules RUN: the schedule of every mode in RUN.json, space-separated
schedules() {
    python3 -c 'import json, sys; print(" ".join(m["schedule"] for m in json.load(open(sys.argv[1] + ".json"))["parts"]["modes"]))' "$1"
}

args=(-r 4 -i 8 --tol 0 -t 1)
expect 0 "mid: one process" cpd mid.tns "${args[@]}" --device cpu -o one_mid --json one_mid.json

# auto: mode 1 longest-first without being asked
ranks 2 cpd mid.tns "${args[@]}" -v -o auto2 --json auto2.json
if [ "$rc" -ne 0 ]; then bad "mid on 2 ranks: exit $rc; $(head -c 300 err.txt)"; else
    check "mid on 2 ranks: -v says mode 1 went longest-first" grep -q "^partition: mode 1 longest-first" out.txt
    check "mid on 2 ranks: the JSON says so" test "$(schedules auto2 | cut -d' ' -f1)" = longest-first
    check "mid on 2 ranks: longest-first's imbalance (2200 of 4000 non-zeros on a rank: 10 %)" python3 -c '
import json; m = json.load(open("auto2.json"))["parts"]["modes"][0]["imbalance"]; assert abs(m - 0.10) < 1e-9, m'
    check "mid on 2 ranks: fits and factors equal one process's" compare one_mid auto2
fi
# contiguous forced: every mode contiguous, the same result
TF_PARTITION=contiguous ranks 2 cpd mid.tns "${args[@]}" -o cont2 --json cont2.json
if [ "$rc" -ne 0 ]; then bad "mid on 2 ranks, contiguous: exit $rc; $(head -c 300 err.txt)"; else
    check "mid on 2 ranks, contiguous: every mode contiguous" test "$(schedules cont2)" = "contiguous contiguous contiguous"
    check "mid on 2 ranks, contiguous: 70 % of the non-zeros on a rank" python3 -c '
import json; m = json.load(open("cont2.json"))["parts"]["modes"][0]["imbalance"]; assert abs(m - 0.40) < 1e-9, m'
    check "mid on 2 ranks, contiguous: equal to one process's" compare one_mid cont2
fi

# longest-first forced on every mode: 2 and 3 ranks, two tensors, the random start
expect 0 "heavy: one process" cpd heavy.tns "${args[@]}" --device cpu -o one_heavy --json one_heavy.json
for t in mid heavy; do
    for n in 2 3; do
        TF_PARTITION=longest ranks $n cpd $t.tns "${args[@]}" -o lpt${n}_$t --json lpt${n}_$t.json
        if [ "$rc" -ne 0 ]; then bad "$t on $n ranks, longest-first: exit $rc; $(head -c 300 err.txt)"; continue; fi
        check "$t on $n ranks, longest-first: every mode" \
            test "$(schedules lpt${n}_$t)" = "longest-first longest-first longest-first"
        check "$t on $n ranks, longest-first: fits and factors equal one process's" compare one_$t lpt${n}_$t
    done
done
# from --init files (one process's result as the start)
expect 0 "mid from --init: one process" cpd mid.tns -r 4 -i 4 --tol 0 -t 1 --device cpu --init one_mid -o init1 \
    --json init1.json
TF_PARTITION=longest ranks 3 cpd mid.tns -r 4 -i 4 --tol 0 -t 1 --init one_mid -o init3 --json init3.json
if [ "$rc" -ne 0 ]; then bad "mid from --init on 3 ranks: exit $rc; $(head -c 300 err.txt)"; else
    check "mid from --init on 3 ranks, longest-first: equal to one process's" compare init1 init3
fi

# ranks asked for different schedules: one line, every rank fails, none hangs
cat > differ.sh <<SH
#!/bin/sh
[ "\$OMPI_COMM_WORLD_RANK" = 1 ] && export TF_PARTITION=longest
exec "$TF" "\$@"
SH
chmod +x differ.sh
timeout "${RANKS_TIMEOUT:-120}" $MPIRUN -np 2 ./differ.sh cpd mid.tns -r 2 -i 2 --nowrite >out.txt 2>err.txt
rc=$?
check "ranks with different TF_PARTITION: fail" test "$rc" -ne 0 -a "$rc" -ne 124
check "ranks with different TF_PARTITION: say so" grep -q "ranks disagree: rank 1 has TF_PARTITION longest" err.txt
finish
