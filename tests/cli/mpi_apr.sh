# SPDX-License-Identifier: BSD-3-Clause
# tenfold cpd --method apr on MPI ranks (issue 45): CPU ranks, 2 and 3 of
# them, each computing the Phi rows it owns, give the single process's
# log-likelihood and KKT violation at every outer iteration (to 1e-12) and
# its factors (to 1e-9), also when each rank reads only its part of a .bin
# (pdnr too: each rank solves its rows);
# values that are not counts fail on every rank with one line (rank 0's),
# and no rank hangs; with a GPU (one: both ranks on it), 2 GPU ranks
# (--device gpu) give one GPU's and the CPU's numbers to 1e-10. Skipped (77)
# without MPI in the build or without mpirun.
LIB=$(cd "$(dirname "$0")/lib" && pwd) # common.bash moves to the scratch directory
source "$LIB/common.bash"
source "$LIB/mpi.bash"

"$TF" gen -o counts.tns --dims 50,400,300 --nnz 20000 --alpha 0.95,0.3,0.3 --rank 3 --counts 5 --seed 5 \
    >/dev/null 2>&1 || bad "gen counts.tns"
"$TF" convert counts.tns counts.bin >/dev/null 2>&1 || bad "convert counts.bin"

# same ONE TWO: the reports' likelihoods and KKT violations per iteration within 1e-12, the factors within 1e-9
same() {
    python3 - "$1" "$2" <<'PY'
import json, os, sys
a, b = sys.argv[1], sys.argv[2]
ra, rb = json.load(open(a + ".json")), json.load(open(b + ".json"))
for key in ("log_likelihood", "kkt_violation"):
    x = [i[key] for i in ra["iterations"]]
    y = [i[key] for i in rb["iterations"]]
    tol = float(os.environ.get("TOL", "1e-12"))
    assert len(x) == len(y) and max(abs(u - v) / abs(u) for u, v in zip(x, y)) <= tol, (key, x, y)
def load(p):
    return [[float(x) for x in l.split()] for l in open(p) if l.strip() and not l.startswith("#")]
for f in ["mode1", "mode2", "mode3", "lambda"]:
    x, y = load(a + "." + f + ".mat"), load(b + "." + f + ".mat")
    d = max(abs(u - v) for r, s in zip(x, y) for u, v in zip(r, s))
    assert len(x) == len(y) and d <= max(1e-9, float(os.environ.get("TOL", "0"))) * max(abs(v) for r in x for v in r), (f, d)
PY
}

# the same to 1e-10 (GPU runs: their sums go in another order)
same_gpu() { TOL=1e-10 same "$@"; }
same_pdnr() { TOL=1e-9 same "$@"; }

expect 0 "one process" cpd counts.tns -r 4 --method apr -i 6 -t 1 --device cpu -o one --json one.json
for n in 2 3; do
    ranks $n cpd counts.tns -r 4 --method apr -i 6 -t 1 -o r$n --json r$n.json
    if [ "$rc" -ne 0 ]; then bad "$n ranks: exit $rc; $(head -c 300 err.txt)"; continue; fi
    check "$n ranks: printed once" test "$(grep -c '^final log-likelihood' out.txt)" -eq 1
    check "$n ranks: the plan names the ranks" grep -q "^plan: .*$n ranks" out.txt
    check "$n ranks: nothing on stderr" test ! -s err.txt
    check "$n ranks: likelihoods and factors equal one process's" same one r$n
done
ranks 3 cpd counts.bin -r 4 --method apr -i 6 -t 1 -o bin --json bin.json
if [ "$rc" -ne 0 ]; then bad "counts.bin on 3 ranks: exit $rc; $(head -c 300 err.txt)"; else
    check "counts.bin on 3 ranks (each reads its part): one process's run" same one bin
fi

# pdnr (--apr-algorithm pdnr): each rank solves the rows it owns; to 1e-9 (a
# rank's copy orders a row's non-zeros otherwise than X does: the sums round
# apart, and the Newton solves carry it to ~1e-12)
expect 0 "pdnr: one process" cpd counts.tns -r 4 --method apr --apr-algorithm pdnr -i 3 -t 1 --device cpu -o pone \
    --json pone.json
for n in 2 3; do
    ranks $n cpd counts.tns -r 4 --method apr --apr-algorithm pdnr -i 3 -t 1 -o pr$n --json pr$n.json
    if [ "$rc" -ne 0 ]; then bad "pdnr on $n ranks: exit $rc; $(head -c 300 err.txt)"; continue; fi
    check "pdnr on $n ranks: likelihoods and factors equal one process's" same_pdnr pone pr$n
done

# a value that is not a count, in the last rank's part: every rank fails alike, rank 0 says it
printf '1 1 1 2\n1 2 2 1\n2 1 3 1\n2 2 2 3\n3 1 1 2.5\n3 3 3 1\n' > bad.tns
"$TF" convert bad.tns bad.bin >/dev/null 2>&1 || bad "convert bad.bin"
for f in bad.tns bad.bin; do
    ranks 2 cpd $f -r 2 --method apr --nowrite
    check "$f on 2 ranks: fails, no hang" test "$rc" -ne 0 -a "$rc" -ne 124
    check "$f on 2 ranks: one line naming the value" \
        test "$(grep -c '^tenfold: cpd: CP-APR needs counts (integers >= 0): the non-zero at (3, 1, 1) (1-based) is 2.5$' err.txt)" -eq 1
done
# GPU ranks (--device gpu): one GPU each, NCCL shares the rows; their
# likelihoods and factors equal one GPU's (to 1e-10: the Phi rows' sums
# start their chunks elsewhere), also when each rank reads its part of a
# .bin, and with the rows through the host (TF_EXCHANGE=host; on a machine
# with one GPU both ranks run on it, TF_TEST_GPUS=2, and auto picks the
# host); without a GPU they fail on every rank, no hang
gpu_ranks
if [ "$gpus" -ge 2 ]; then
    expect 0 "one GPU" cpd counts.tns -r 4 --method apr -i 6 --device gpu -o g1 --json g1.json
    for f in counts.tns counts.bin; do
        ranks 2 cpd $f -r 4 --method apr -i 6 --device gpu -o g2 --json g2.json
        if [ "$rc" -ne 0 ]; then bad "$f on 2 GPU ranks: exit $rc; $(head -c 300 err.txt)"; continue; fi
        check "$f on 2 GPU ranks: the plan names them and the transport" plan_transport
        check "$f on 2 GPU ranks: printed once" test "$(grep -c '^final log-likelihood' out.txt)" -eq 1
        check "$f on 2 GPU ranks: one GPU's run to 1e-10" same_gpu g1 g2
        check "$f on 2 GPU ranks: the CPU's run to 1e-10" same_gpu one g2
    done
    TF_EXCHANGE=host ranks 2 cpd counts.tns -r 4 --method apr -i 6 --device gpu -o gx --json gx.json
    if [ "$rc" -ne 0 ]; then bad "2 GPU ranks, TF_EXCHANGE=host: exit $rc; $(head -c 300 err.txt)"; else
        check "2 GPU ranks, TF_EXCHANGE=host: the plan says so" grep -q "^plan: 2 GPUs (MPI ranks), fp64, .*, host staging (TF_EXCHANGE)$" out.txt
        check "2 GPU ranks, TF_EXCHANGE=host: one GPU's run to 1e-10" same_gpu g1 gx
    fi
else
    ranks 2 cpd counts.tns -r 2 --method apr --device gpu --nowrite
    check "GPU ranks without a GPU: fail, no hang" test "$rc" -ne 0 -a "$rc" -ne 124
fi
finish
