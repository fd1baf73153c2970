# SPDX-License-Identifier: BSD-3-Clause
# Checkpoints on MPI ranks (issue 49 item 4): on 2 CPU ranks (each holding
# only its part of the non-zeros) rank 0 alone writes the checkpoint; 4
# iterations with --checkpoint and a --resume to 10 end with the bits of 10
# straight on the ranks, for CP-ALS, AO-ADMM (the duals gathered from the
# ranks), HALS, CP-APR (every mode's Phi gathered) and GCP-Adam (its moments
# and schedule, every rank holding them whole); the checkpoint is in
# the caller's row order, so a single process resumes the ranks' checkpoint
# and ends with the ranks' fits (1e-9), also with the rows cut longest-first
# (TF_PARTITION=longest: the model and the duals mapped back to the caller's labels); a time-based checkpoint is decided by
# rank 0's clock (no rank waits for another); with a GPU (one: both ranks on it), 2 GPU ranks resume
# CP-ALS to the straight run's fits (1e-12) and refuse AO-ADMM's. Skipped (77) without MPI in the
# build or without mpirun.
LIB=$(cd "$(dirname "$0")/lib" && pwd) # common.bash moves to the scratch directory
source "$LIB/common.bash"
source "$LIB/mpi.bash"

"$TF" gen -o x.tns --dims 300,200,100 --nnz 20000 --alpha 0.6 --rank 3 --seed 2 >/dev/null 2>&1 || bad "gen x.tns"
"$TF" gen -o c.tns --dims 300,200,100 --nnz 20000 --alpha 0.6 --rank 3 --seed 2 --counts 4 >/dev/null 2>&1 ||
    bad "gen c.tns"
fits() { grep '^fits ' "$1.state"; }
same_bits() {
    local a=$1 b=$2; shift 2
    local s
    for s in mode1.mat mode2.mat mode3.mat lambda.mat; do cmp -s "$a.$s" "$b.$s" || return 1; done
}
close_fits() {
    python3 - "$1.state" "$2.state" "$3" <<'PY'
import sys
f = [[float(x) for x in l.split()[1:]] for p in sys.argv[1:3] for l in open(p) if l.startswith("fits ")]
assert len(f) == 2 and len(f[0]) == len(f[1]), f
assert max(abs(a - b) / abs(a) for a, b in zip(*f)) <= float(sys.argv[3]), f
PY
}

method() {
    local m=$1 t=$2; shift 2
    ranks 2 cpd $t -r 4 -t 1 -i 10 --tol 0 -o s_$m --checkpoint sc_$m --checkpoint-every 4 "$@"
    if [ "$rc" -ne 0 ]; then bad "$m: 10 straight on 2 ranks: exit $rc; $(head -c 300 err.txt)"; return; fi
    ranks 2 cpd $t -r 4 -t 1 -i 4 --tol 0 --nowrite --checkpoint pc_$m "$@"
    if [ "$rc" -ne 0 ]; then bad "$m: 4 on 2 ranks: exit $rc; $(head -c 300 err.txt)"; return; fi
    check "$m: one checkpoint of 4 iterations (rank 0 writes)" grep -qx 'iteration 4' pc_$m.state
    ranks 2 cpd $t -r 4 -t 1 -i 10 --tol 0 -o r_$m --resume pc_$m --checkpoint rc_$m "$@"
    if [ "$rc" -ne 0 ]; then bad "$m: resumed on 2 ranks: exit $rc; $(head -c 300 err.txt)"; return; fi
    check "$m: resumed on 2 ranks: printed once" test "$(grep -c '^final' out.txt)" -eq 1
    check "$m: resumed on 2 ranks, the fits of every iteration are the straight run's (bits)" \
        test "$(fits sc_$m)" = "$(fits rc_$m)"
    check "$m: resumed on 2 ranks, the factors are the straight run's (bits)" same_bits s_$m r_$m
    expect 0 "$m: one process resumes the ranks' checkpoint" cpd $t -r 4 -t 1 --device cpu -i 10 --tol 0 \
        --nowrite --resume pc_$m --checkpoint oc_$m "$@"
    check "$m: one process from the ranks' checkpoint: the ranks' fits (1e-9)" close_fits sc_$m oc_$m 1e-9
    no_files "$m: no temporaries left" ./*.tmp.* ./*.lock
}
method als x.tns
method admm x.tns --nonneg --nonneg-method admm --l1 0.01@2
method hals x.tns --nonneg --nonneg-method hals
method apr c.tns --method apr
# GCP-Adam (issue 46): epochs as iterations, Adam's moments and schedule in the state
G="--method gcp --loss poisson --epoch-iters 20 --samples 2000,2000 --rate 0.05"
ranks 2 cpd c.tns -r 3 -t 1 $G --epochs 10 -o s_gcp --checkpoint sc_gcp --checkpoint-every 4
check "gcp: 10 straight on 2 ranks (exit $rc)" test "$rc" -eq 0
ranks 2 cpd c.tns -r 3 -t 1 $G --epochs 4 --nowrite --checkpoint pc_gcp
check "gcp: 4 on 2 ranks (exit $rc)" test "$rc" -eq 0
check "gcp: one checkpoint of 4 epochs (rank 0 writes)" grep -qx 'iteration 4' pc_gcp.state
ranks 2 cpd c.tns -r 3 -t 1 $G --epochs 10 -o r_gcp --resume pc_gcp --checkpoint rc_gcp
check "gcp: resumed on 2 ranks (exit $rc)" test "$rc" -eq 0
check "gcp: resumed on 2 ranks, every estimate is the straight run's (bits)" test "$(fits sc_gcp)" = "$(fits rc_gcp)"
check "gcp: resumed on 2 ranks, the factors are the straight run's (bits)" same_bits s_gcp r_gcp
expect 0 "gcp: one process resumes the ranks' checkpoint" cpd c.tns -r 3 -t 1 --device cpu $G --epochs 10 \
    --nowrite --resume pc_gcp --checkpoint oc_gcp
check "gcp: one process from the ranks' checkpoint: the ranks' estimates (1e-9)" close_fits sc_gcp oc_gcp 1e-9

# every mode's rows cut longest-first (relabelled): the checkpoint in the caller's row order all the same
export TF_PARTITION=longest
method als_longest x.tns
method admm_longest x.tns --nonneg --nonneg-method admm --l1 0.01@2
unset TF_PARTITION

# GPU ranks (a GPU or more; skipped without): CP-ALS resumes to the straight run's fits (1e-12)
gpu_ranks # (one GPU: both ranks on it, the rows through the host)
if [ "$gpus" -ge 2 ]; then
    ranks 2 cpd x.tns -r 4 -t 1 -i 10 --tol 0 --device gpu --nowrite --checkpoint gsc
    check "GPU ranks: 10 straight (exit $rc)" test "$rc" -eq 0
    ranks 2 cpd x.tns -r 4 -t 1 -i 4 --tol 0 --device gpu --nowrite --checkpoint gpc
    check "GPU ranks: 4 (exit $rc)" test "$rc" -eq 0
    ranks 2 cpd x.tns -r 4 -t 1 -i 10 --tol 0 --device gpu --nowrite --resume gpc --checkpoint grc
    check "GPU ranks: resumed (exit $rc)" test "$rc" -eq 0
    check "GPU ranks: resumed, the straight run's fits (1e-12)" close_fits gsc grc 1e-12
    ranks 2 cpd x.tns -r 4 -t 1 -i 3 --device gpu --nonneg --nonneg-method admm --nowrite --checkpoint gac
    check "GPU ranks: AO-ADMM checkpoints refused on every rank (exit $rc)" test "$rc" -eq 1
    check "GPU ranks: AO-ADMM refused: the line says why" grep -q "checkpoints of AO-ADMM are not available" err.txt
else
    echo "$NAME: no GPU: the GPU-rank cases are left out"
fi

# a time-based checkpoint: rank 0's clock decides for both
ranks 2 cpd x.tns -r 4 -t 1 -i 6 --tol 0 --nowrite --checkpoint tc --checkpoint-every 0.01s
check "every 0.01 s on 2 ranks: exit 0" test "$rc" -eq 0
check "every 0.01 s on 2 ranks: the last iteration's checkpoint" grep -qx 'iteration 6' tc.state
# a mismatch fails on every rank alike, one line
ranks 2 cpd x.tns -r 5 -t 1 -i 10 --tol 0 --nowrite --resume pc_als
check "another rank on 2 ranks: exit 1" test "$rc" -eq 1
check "another rank on 2 ranks: the line names it" grep -q "the checkpoint was made with rank '4', this run has '5'" \
    err.txt
finish
