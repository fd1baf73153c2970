# SPDX-License-Identifier: BSD-3-Clause
# tenfold complete on MPI ranks (issue 46): CPU ranks, 2 and 3 of them, each
# solving the rows it owns, give the single process's training and
# validation RMSE at every iteration, its best iteration and test RMSE (to
# 1e-10) and its factor files (to 1e-10), with --val and --test and without
# them; a mode of length 2 over 3 ranks (a rank without rows in it) too; a
# singular row in the last rank's rows fails every rank with one line (the
# single process's) and no rank hangs; held-out entries outside the dims
# fail alike, as does a file that does not parse or that one rank cannot
# read; the ranks refuse standard input; GPU ranks (--device gpu, one GPU
# each, or both on one GPU through the host) give the one process's run.
# --method adam: 2 and 3 CPU ranks (each evaluating its part of every
# sample, the gradients summed) give the one CPU process's epochs to 1e-9
# (the sums' order differs), GPU ranks to 1e-8 (atomics), a small sample
# and every entry as the sample alike. Skipped (77) without MPI in the build or without
# mpirun.
LIB=$(cd "$(dirname "$0")/lib" && pwd) # common.bash moves to the scratch directory
source "$LIB/common.bash"
source "$LIB/mpi.bash"

"$TF" gen -o full.tns --dims 40,30,20 --nnz 8000 --rank 3 --seed 5 >/dev/null 2>&1 || bad "gen full.tns"
"$TF" split full.tns --seed 3 -o s -q >/dev/null 2>&1 || bad "split full.tns"
# a mode of length 2: three ranks cannot all own a row of it
"$TF" gen -o thin.tns --dims 2,50,40 --nnz 1500 --rank 2 --seed 7 >/dev/null 2>&1 || bad "gen thin.tns"

# same ONE TWO [TOL]: the reports' RMSEs per iteration and the results within
# TOL (default 1e-10, relative), the factor files within TOL of their largest entry
same() {
    python3 - "$1" "$2" "${3:-1e-10}" <<'PY'
import json, math, sys
a, b, tol = sys.argv[1], sys.argv[2], float(sys.argv[3])
ra, rb = json.load(open(a + ".json")), json.load(open(b + ".json"))
def close(u, v):
    if u is None or v is None or (isinstance(u, float) and math.isnan(u)): return u == v or (u != u and v != v)
    return abs(u - v) <= tol * max(abs(u), 1e-300)
ia, ib = ra["iterations"], rb["iterations"]
assert len(ia) == len(ib), (len(ia), len(ib))
for key in ("train_rmse", "val_rmse", "objective"):
    for x, y in zip(ia, ib):
        assert close(x[key], y[key]), (key, x["iter"], x[key], y[key])
for key in ("train_rmse", "val_rmse", "test_rmse", "objective"):
    assert close(ra["result"][key], rb["result"][key]), (key, ra["result"][key], rb["result"][key])
assert ra["result"]["best_iteration"] == rb["result"]["best_iteration"]
def load(p):
    return [[float(x) for x in l.split()] for l in open(p) if l.strip() and not l.startswith("#")]
n = len([k for k in ra["outputs"] if ".mode" in k])
assert n >= 3
for f in ["mode%d" % (m + 1) for m in range(n)] + ["lambda"]:
    x, y = load(a + "." + f + ".mat"), load(b + "." + f + ".mat")
    scale = max(abs(v) for r in x for v in r) or 1.0
    d = max(abs(u - v) for r, s in zip(x, y) for u, v in zip(r, s))
    assert len(x) == len(y) and d <= tol * scale, (f, d, scale)
PY
}

args=(s.train.tns --val s.val.tns --test s.test.tns -r 3 --l2 0.01 -i 25 -t 1)
expect 0 "one process" complete "${args[@]}" -o one --json one.json
for n in 2 3; do
    ranks $n complete "${args[@]}" -o r$n --json r$n.json
    if [ "$rc" -ne 0 ]; then bad "$n ranks: exit $rc; $(head -c 300 err.txt)"; continue; fi
    check "$n ranks: printed once" test "$(grep -c '^test rmse = ' out.txt)" -eq 1
    check "$n ranks: the ranks line (-t 1: every rank's team)" \
        grep -qx "ranks: $n (MPI), the CPU backend on each, 1 thread each" out.txt
    check "$n ranks: the plan names the ranks" grep -q "^plan: CPU, per-row Cholesky, $n ranks" out.txt
    check "$n ranks: nothing on stderr" test ! -s err.txt
    check "$n ranks: RMSEs and factors equal one process's" same one r$n
done
# Adam: a sample of 400 entries a step, and every entry (--samples above the count)
adam=(s.train.tns --val s.val.tns --test s.test.tns -r 3 --l2 0.01 -i 8 -t 1 --method adam --rate 0.02
      --epoch-iters 50)
for smp in 400 100000; do
    expect 0 "adam, one process, samples $smp" complete "${adam[@]}" --samples $smp --device cpu -o aone$smp \
        --json aone$smp.json
    for n in 2 3; do
        ranks $n complete "${adam[@]}" --samples $smp -o a$n-$smp --json a$n-$smp.json
        if [ "$rc" -ne 0 ]; then bad "adam on $n ranks: exit $rc; $(head -c 300 err.txt)"; continue; fi
        check "adam on $n ranks: the plan" grep -q "^plan: Adam: CPU of $n MPI ranks, samples of the observed entries" out.txt
        check "adam on $n ranks, samples $smp: one process's epochs" same aone$smp a$n-$smp 1e-9
    done
done
# without held-out entries: the training RMSE decides (and stops: a low patience)
expect 0 "one process, training only" complete s.train.tns -r 4 --l2 1 -i 40 --patience 2 --tol 1e-3 -t 1 -o tone \
    --json tone.json
ranks 2 complete s.train.tns -r 4 --l2 1 -i 40 --patience 2 --tol 1e-3 -t 1 -o tr2 --json tr2.json
if [ "$rc" -ne 0 ]; then bad "training only on 2 ranks: exit $rc; $(head -c 300 err.txt)"; else
    check "training only on 2 ranks: one process's run" same tone tr2
fi
# a rank with no rows of mode 1 (2 rows over 3 ranks)
expect 0 "thin, one process" complete thin.tns -r 2 --l2 0.1 -i 10 -t 1 -o thin1 --json thin1.json
ranks 3 complete thin.tns -r 2 --l2 0.1 -i 10 -t 1 -o thin3 --json thin3.json
if [ "$rc" -ne 0 ]; then bad "thin on 3 ranks: exit $rc; $(head -c 300 err.txt)"; else
    check "thin on 3 ranks: one process's run" same thin1 thin3
fi

# a row with one entry and --l2 0 among the last rank's rows of mode 1: every rank fails, rank 0 says it
printf '1 1 1 1\n1 2 2 2\n1 3 3 1\n2 1 2 1\n2 2 3 2\n2 3 1 1\n3 1 3 2\n3 2 1 1\n3 3 2 1\n4 2 2 3\n' > sing.tns
expect_failure "singular, one process" 'row 4 of mode 1 has a singular system \(1 observed entry for rank 2, pivot 2\)' \
    complete sing.tns -r 2 --l2 0 -i 3
for n in 2 3; do
    ranks $n complete sing.tns -r 2 --l2 0 -i 3
    check "singular on $n ranks: fails, no hang" test "$rc" -ne 0 -a "$rc" -ne 124
    check "singular on $n ranks: one line, the single process's" \
        test "$(grep -c '^tenfold: complete: row 4 of mode 1 has a singular system (1 observed entry for rank 2, pivot 2): give an L2 penalty > 0 (--l2)$' err.txt)" -eq 1 -a "$(grep -c '^tenfold' err.txt)" -eq 1
done
# held-out entries outside the training dims: every rank alike, one line
printf '1 1 1 1\n41 1 1 2\n' > far.tns
ranks 2 complete s.train.tns --test far.tns -r 2 -i 2
check "outside the dims on 2 ranks: fails, no hang" test "$rc" -eq 1
check "outside the dims on 2 ranks: one line" \
    test "$(grep -c "^tenfold: complete: test entry 2 has mode-1 index 41, outside the training tensor's 1..40$" err.txt)" -eq 1 -a "$(grep -c '^tenfold' err.txt)" -eq 1
# a file that does not parse (on every rank): one line, no hang
printf '1 1 1 x\n' > junk.tns
ranks 3 complete s.train.tns --val junk.tns -r 2 -i 2
check "a bad --val file on 3 ranks: fails, no hang" test "$rc" -eq 1
check "a bad --val file on 3 ranks: one line" \
    test "$(grep -c "^tenfold: junk.tns:1: field 4: expected a number, found 'x'$" err.txt)" -eq 1 -a "$(grep -c '^tenfold' err.txt)" -eq 1
# a file that rank 1 alone cannot read: every rank stops, one line naming it
printf 'if [ "${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}" = 1 ]; then f=nofile.tns; else f=s.train.tns; fi\nexec "%s" complete "$f" -r 2 -i 2\n' "$TF" > one_bad.sh
timeout "${RANKS_TIMEOUT:-120}" $MPIRUN -np 2 bash one_bad.sh >out.txt 2>err.txt
rc=$?
check "unreadable on rank 1 alone: fails, no hang" test "$rc" -eq 1
check "unreadable on rank 1 alone: one line naming it" \
    test "$(grep -c '^tenfold: ranks disagree: rank 1 has read nofile.tns: cannot open' err.txt)" -eq 1 -a "$(grep -c '^tenfold' err.txt)" -eq 1
# standard input: ranks 1.. get none
ranks 2 complete - -r 2 <s.train.tns
check "standard input on 2 ranks: fails, no hang" test "$rc" -eq 1
check "standard input on 2 ranks: one line" test "$(grep -c '^tenfold: complete: reading standard input' err.txt)" -eq 1 -a "$(grep -c '^tenfold' err.txt)" -eq 1
# --gpus above 1 on ranks: one GPU per rank, said once before any read
ranks 2 complete s.train.tns -r 2 -i 2 --gpus 2
check "--gpus 2 on 2 ranks: fails, no hang" test "$rc" -eq 1
check "--gpus 2 on 2 ranks: one line" \
    test "$(grep -c '^tenfold: complete: --gpus: a run on 2 MPI ranks takes one GPU per rank (--device gpu)$' err.txt)" -eq 1 -a "$(grep -c '^tenfold' err.txt)" -eq 1
# GPU ranks (--device gpu): one GPU each, NCCL shares the rows (two ranks on
# one GPU -- TF_TEST_GPUS=2 on a machine with one -- through the host); their
# RMSEs and factors equal one process's (to 1e-10), also with TF_EXCHANGE=host;
# without a GPU they fail on every rank, no hang.
gpu_ranks
if [ "$gpus" -ge 2 ]; then
    ranks 2 complete "${args[@]}" --device gpu -o g2 --json g2.json
    if [ "$rc" -ne 0 ]; then bad "2 GPU ranks: exit $rc; $(head -c 300 err.txt)"; else
        check "2 GPU ranks: the ranks line" grep -q "^ranks: 2 (MPI), one GPU each$" out.txt
        check "2 GPU ranks: the plan names them and the transport" plan_transport
        check "2 GPU ranks: printed once" test "$(grep -c '^test rmse = ' out.txt)" -eq 1
        check "2 GPU ranks: one process's run" same one g2
    fi
    TF_EXCHANGE=host ranks 2 complete "${args[@]}" --device gpu -o gx --json gx.json
    if [ "$rc" -ne 0 ]; then bad "2 GPU ranks, TF_EXCHANGE=host: exit $rc; $(head -c 300 err.txt)"; else
        check "2 GPU ranks, TF_EXCHANGE=host: the plan says so" grep -q "^plan: 2 GPUs (MPI ranks).*host staging (TF_EXCHANGE)" out.txt
        check "2 GPU ranks, TF_EXCHANGE=host: one process's run" same one gx
    fi
    for smp in 400 100000; do
        ranks 2 complete "${adam[@]}" --samples $smp --device gpu -o ag$smp --json ag$smp.json
        if [ "$rc" -ne 0 ]; then bad "adam on 2 GPU ranks: exit $rc; $(head -c 300 err.txt)"; continue; fi
        check "adam on 2 GPU ranks: the plan" grep -q "^plan: Adam: 2 GPUs (MPI ranks), fp64, observed-entry samples" out.txt
        check "adam on 2 GPU ranks, samples $smp: the CPU process's epochs" same aone$smp ag$smp 1e-8
    done
else
    ranks 2 complete s.train.tns -r 2 -i 2 --device gpu
    check "GPU ranks without a GPU: fail, no hang" test "$rc" -ne 0 -a "$rc" -ne 124
fi
# the single-process commands stay so: every rank runs predict alone (the same values)
ranks 2 predict one s.test.tns -o p2.tns -q
check "predict under mpirun: runs" test "$rc" -eq 0 -a -s p2.tns
finish
