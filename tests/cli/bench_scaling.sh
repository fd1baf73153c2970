# SPDX-License-Identifier: BSD-3-Clause
# bench/cpu_scaling_methods.sh (and bench/cpu_scaling.sh, through their shared
# bench/lib/scaling.*) run: every method's table on a generated counts tensor
# and the skewed one, one or two threads, a few iterations; its usage errors.
# cpu_scaling.sh on the shared uber and nycflights13 where they are.
BENCH=$(cd "$(dirname "$0")/../../bench" && pwd)
source "$(dirname "$0")/lib/common.bash"
command -v python3 >/dev/null || { echo "bench_scaling: no python3 (the scripts read the reports with it)"; exit 77; }

mkdir -p data
check "gen a small counts tensor" "$TF" gen -o data/small.tns --dims 40,30,20,6 --nnz 3000 --counts 3 --seed 7 -q
threads="1 2"
[ "$(nproc)" -ge 2 ] || threads=1
methods="admm hals apr gcp complete tucker"
deadline=600

# scale ARGS...: the methods' script with the small settings, stdout -> out.txt, stderr -> err.txt, exit -> $rc
scale() {
    THREADS=$threads ENVS="default spread" ITERS=3 EPOCHS=2 EPOCH_ITERS=20 SKEW_NNZ=4k SKEW_ITERS=3 \
        SKEW_METHODS="admm apr tucker" TENSORS="small skew" METHODS=$methods DEADLINE=$deadline RUN_TIMEOUT=60 \
        bash "$BENCH/cpu_scaling_methods.sh" "$@" >out.txt 2>err.txt
    rc=$?
}

scale "$TF" data runs
if [ "$rc" -ne 0 ]; then
    bad "cpu_scaling_methods.sh: exit $rc; stderr: $(head -c 300 err.txt)"
else
    ok
    # one table per method and tensor: the small one for all, skew for SKEW_METHODS (apr on its counts)
    for m in "CP AO-ADMM" "CP HALS" "CP-APR mu" "GCP-Adam poisson" "completion ALS" "Tucker HOOI"; do
        check "a table of $m on the small tensor" grep -q "^# small, 40 x 30 x 20 x 6, 3000 non-zeros: $m" out.txt
    done
    check "the Tucker ranks clipped to the dims" grep -q "Tucker HOOI rank 8,8,8,6," out.txt
    for m in "CP AO-ADMM" "CP-APR mu" "Tucker HOOI"; do
        check "a table of $m on the skewed tensor" grep -q "^# skew.*: $m" out.txt
    done
    check "apr on the skewed tensor's counts" grep -q "^# skew (its counts), .*: CP-APR mu" out.txt
    check "no HALS on the skewed tensor" bash -c "! grep -q '^# skew.*CP HALS' out.txt"
    check "9 tables" test "$(grep -c '^# .* non-zeros: ' out.txt)" -eq 9
    check "18 rows of tenfold (2 environments)" test "$(grep -c '^tenfold  ' out.txt)" -eq 18
    check "every row has a time at every count" test "$(awk '/^tenfold / && ($3 == "-" || $4 == "-")' out.txt)" = ""
    check "no run failed" bash -c "! grep -q '^failed: ' out.txt"
    check "no run skipped" bash -c "! grep -q 'not run' out.txt"
    if [ "$threads" != 1 ]; then
        check "the rows end in the speedup and never-slower columns" \
            test "$(grep '^tenfold ' out.txt | grep -vE '[0-9.]+x +[0-9]+% (yes|no \(t=2 \+[0-9]+%\))$')" = ""
    fi
    check "a result line with values under each table" test "$(grep -c '^[a-z_]*: tenfold [-0-9]' out.txt)" -eq 9
    for k in fit log_likelihood loss_estimate val_rmse; do
        check "the results' line $k" grep -q "^$k: tenfold [-0-9.e+]* ([0-9]* runs, spread" out.txt
    done
    check "the kept OUT_DIR has the reports" test -s runs/small.tucker.tenfold.default.t1.json
    check "and the split" test -s runs/small.split.train.tns
fi

# a second run into the same OUT_DIR reuses it; a past DEADLINE runs nothing and says so
methods=hals
deadline=0
scale "$TF" data runs
check "past DEADLINE: exit 0" test "$rc" -eq 0
check "past DEADLINE: says so" grep -q '^# hals, small, default, t=1: not run (past DEADLINE=0 s)' out.txt
check "past DEADLINE: no earlier report of the method left" test ! -e runs/small.hals.tenfold.default.t1.json
check "past DEADLINE: the other methods' reports kept" test -s runs/small.tucker.tenfold.default.t1.json

# usage errors: exit 2 (no arguments, an unknown method or environment), 1 (a missing tensor or tool)
scale
check "no arguments: exit 2" test "$rc" -eq 2
check "no arguments: the usage" grep -q '^usage: bench/cpu_scaling_methods.sh TENFOLD DATA_DIR' err.txt
methods="hals svd"
scale "$TF" data
check "unknown method: exit 2" test "$rc" -eq 2
check "unknown method: named" grep -q "unknown method 'svd'" err.txt
THREADS=1 ENVS=bound TENSORS=small METHODS=hals bash "$BENCH/cpu_scaling_methods.sh" "$TF" data >out.txt 2>err.txt
rc=$?
check "unknown environment: exit 2" test "$rc" -eq 2
check "unknown environment: named" grep -q "cpu_scaling_methods: unknown environment 'bound'" err.txt
THREADS=1 TENSORS=absent METHODS=hals bash "$BENCH/cpu_scaling_methods.sh" "$TF" data >out.txt 2>err.txt
rc=$?
check "missing tensor: exit 1" test "$rc" -eq 1
check "missing tensor: named" grep -q "data has no absent.tns.xz" err.txt
THREADS=1 TENSORS=small METHODS=hals bash "$BENCH/cpu_scaling_methods.sh" ./no-tool data >out.txt 2>err.txt
rc=$?
check "missing tool: exit 1" test "$rc" -eq 1

# cpu_scaling.sh (CP-ALS) through the same helpers, where the shared tensors are
if [ -r "$SHARED/uber-apr14.tns.xz" ] && [ -r "$SHARED/nycflights13.tns.xz" ]; then
    THREADS=$threads ITERS=3 SKEW_ITERS=3 SKEW_NNZ=4k ENVS=default SKEW_ENVS=spread DEADLINE=600 \
        bash "$BENCH/cpu_scaling.sh" "$TF" "$SHARED" >out.txt 2>err.txt
    rc=$?
    check "cpu_scaling.sh: exit 0" test "$rc" -eq 0
    check "cpu_scaling.sh: three tables" test "$(grep -c '^# .* non-zeros: CP-ALS rank 16' out.txt)" -eq 3
    check "cpu_scaling.sh: the skewed tensor under spread" grep -q '^tenfold  spread ' out.txt
    check "cpu_scaling.sh: the machine line" grep -q '^# .* CPUs in the mask' out.txt
    check "cpu_scaling.sh: info --threads" grep -q "^# info --threads under 'default':" out.txt
fi
finish
