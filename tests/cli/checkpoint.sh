# SPDX-License-Identifier: BSD-3-Clause
# Checkpoints and resume (issue 49 item 4): for every iterative method --
# CP-ALS, AO-ADMM (its duals in the state), HALS, CP-APR (every mode's Phi),
# GCP-Adam (its moments and schedule; epochs as iterations), Tucker -- 4 iterations with --checkpoint and a --resume to 10 end with the
# same bits as 10 straight (the fits of every iteration, the factor files);
# a resume from a finished checkpoint gives its result; runs SIGKILLed while
# they write checkpoints leave one that resumes to the same bits; another
# rank, tensor, method or option is one line and exit 1; the flags' usage
# errors; with a GPU, --device gpu (CP-ALS, CP-APR with its Phi, Tucker) and --gpus 2 resume to the fits of a
# straight run (1e-12), AO-ADMM on a GPU is refused (skipped without one).
source "$(dirname "$0")/lib/common.bash"

"$TF" gen -o x.tns --dims 60,50,40 --nnz 5000 --rank 3 --seed 2 >/dev/null 2>&1 || bad "gen x.tns"
"$TF" gen -o y.tns --dims 60,50,40 --nnz 5000 --rank 3 --seed 3 >/dev/null 2>&1 || bad "gen y.tns"
"$TF" gen -o c.tns --dims 60,50,40 --nnz 5000 --rank 3 --seed 2 --counts 4 >/dev/null 2>&1 || bad "gen c.tns"

# the fits line of a checkpoint's state (every iteration's, %.17g)
fits() { grep '^fits ' "$1.state"; }
# same_bits A B SUFFIX...: A.SUFFIX and B.SUFFIX are the same bytes, for each suffix
same_bits() {
    local a=$1 b=$2; shift 2
    local s
    for s in "$@"; do cmp -s "$a.$s" "$b.$s" || return 1; done
}
CP_FILES="mode1.mat mode2.mat mode3.mat lambda.mat"
TK_FILES="mode1.mat mode2.mat mode3.mat core.tensor"

# method NAME FILES ARGS...: straight, stopped at 4 and resumed to 10, resumed from the end
method() {
    local m=$1 files=$2; shift 2
    expect 0 "$m: 10 straight" "$@" -i 10 --tol 0 -o s_$m --checkpoint sc_$m --checkpoint-every 3
    expect 0 "$m: 4 with checkpoints" "$@" -i 4 --tol 0 -o p_$m --checkpoint pc_$m --checkpoint-every 2
    check "$m: the checkpoint of 4 says so" grep -qx 'iteration 4' pc_$m.state
    expect 0 "$m: resumed to 10" "$@" -i 10 --tol 0 -o r_$m --resume pc_$m --checkpoint pc_$m
    check "$m: the run says it resumes" grep -q "^checkpoints: resume from pc_$m" out.txt
    check "$m: resumed, the fits of every iteration are the straight run's (bits)" \
        test "$(fits sc_$m)" = "$(fits pc_$m)"
    check "$m: resumed, the factors are the straight run's (bits)" same_bits s_$m r_$m $files
    check "$m: resumed, the last checkpoint is the straight run's" same_bits sc_$m pc_$m $files
    expect 0 "$m: resumed from the end" "$@" -i 10 --tol 0 -o e_$m --resume sc_$m
    check "$m: resumed from the end: its result" same_bits s_$m e_$m $files
    no_files "$m: no temporaries left" ./*.tmp.* ./*.lock
}
method als "$CP_FILES" cpd x.tns -r 4 -t 2 --device cpu
method admm "$CP_FILES" cpd x.tns -r 4 -t 2 --device cpu --nonneg --nonneg-method admm --l1 0.01@2
check "admm: the state holds every mode's dual" test "$(grep -c '^aux ' pc_admm.state)" -eq 3
method hals "$CP_FILES" cpd x.tns -r 4 -t 2 --device cpu --nonneg --nonneg-method hals
method apr "$CP_FILES" cpd c.tns -r 4 -t 2 --device cpu --method apr
check "apr: the state holds every mode's Phi" test "$(grep -c '^aux ' pc_apr.state)" -eq 3
method tucker "$TK_FILES" tucker x.tns -r 3,4,5 -t 2 --device cpu

# GCP-Adam (issue 46): an epoch is an iteration; the state holds Adam's moments
# (aux: m and v side by side) and schedule (extra: rate, bias corrections, the
# samples' counter, the failed epochs). 4 epochs then resumed to 10 end with
# the bits of 10 straight (every estimate, the factors, the last checkpoint),
# with a rate that keeps and one that fails epochs (restores, decays); a run
# that ended on its failed epochs resumes to its result
G="cpd c.tns -r 3 -t 2 --device cpu --method gcp --loss poisson --epoch-iters 20 --samples 2000,2000 --fails 20"
for rate in 0.05 4; do
    tag=gcp${rate/./}
    expect 0 "$tag: 10 straight" $G --rate $rate --epochs 10 -o s_$tag --checkpoint sc_$tag --checkpoint-every 3 \
        --json s_$tag.json
    expect 0 "$tag: 4 with checkpoints" $G --rate $rate --epochs 4 -o p_$tag --checkpoint pc_$tag --checkpoint-every 2
    check "$tag: the checkpoint of 4 says so" grep -qx 'iteration 4' pc_$tag.state
    check "$tag: the state holds every mode's moments" test "$(grep -c '^aux [123] [0-9]* 6$' pc_$tag.state)" -eq 3
    check "$tag: the state holds the schedule" grep -qE '^extra( [-0-9.e+]+){6}$' pc_$tag.state
    expect 0 "$tag: resumed to 10" $G --rate $rate --epochs 10 -o r_$tag --resume pc_$tag --checkpoint pc_$tag \
        --json r_$tag.json
    check "$tag: the run says it resumes" grep -q "^checkpoints: resume from pc_$tag" out.txt
    check "$tag: resumed, epochs 5 to 10 only" test "$(grep -c '^  epoch = ' out.txt)" -eq 6
    check "$tag: resumed, every estimate is the straight run's (bits)" test "$(fits sc_$tag)" = "$(fits pc_$tag)"
    check "$tag: resumed, the factors are the straight run's (bits)" same_bits s_$tag r_$tag $CP_FILES
    check "$tag: resumed, the last checkpoint is the straight run's" same_bits sc_$tag pc_$tag $CP_FILES
    check "$tag: resumed, the report's epochs and result" python3 - s_$tag.json r_$tag.json <<'PY'
import json, sys
s, r = (json.load(open(f)) for f in sys.argv[1:])
key = lambda i: (i["iter"], i["loss_estimate"], i["rate"], i["failed"])
assert [key(i) for i in r["iterations"]] == [key(i) for i in s["iterations"][4:]], (r["iterations"], s["iterations"])
for k in ("loss_estimate", "loss_initial", "iterations", "adam_iterations", "failed_epochs"):
    assert r["result"][k] == s["result"][k], (k, r["result"], s["result"])
PY
done
check "gcp4: epochs failed (restored, the rate decayed)" python3 -c "
import json; assert sum(i['failed'] for i in json.load(open('s_gcp4.json'))['iterations']) >= 2"
expect 0 "gcp: ended on failed epochs" $G --rate 50 --fails 1 --epochs 10 -o gf --checkpoint gfc
check "gcp: ended on failed epochs early" bash -c "! grep -qx 'iteration 10' gfc.state"
expect 0 "gcp: resumed after the end" $G --rate 50 --fails 1 --epochs 10 -o gf2 --resume gfc
check "gcp: resumed after the end: no epoch" bash -c "! grep -q '^  epoch = ' out.txt"
check "gcp: resumed after the end: the result" same_bits gf gf2 $CP_FILES
expect_failure "gcp: another seed" "pc_gcp005\.state:[0-9]+: the checkpoint was made with options '.*seed [0-9]+', this run has '.*seed 9'" \
    $G --rate 0.05 --epochs 10 --seed 9 --resume pc_gcp005 --nowrite
expect_failure "gcp: another sampling" "the checkpoint was made with options 'sampling stratified', this run has 'sampling semi-stratified'" \
    $G --rate 0.05 --epochs 10 --sampling semi-stratified --resume pc_gcp005 --nowrite
expect_failure "gcp from a CP-APR checkpoint" "the checkpoint was made with method 'cp-apr', this run has 'gcp'" \
    $G --rate 0.05 --epochs 10 --resume pc_apr --nowrite
expect_usage cpd c.tns -r 3 --method gcp --loss poisson --dense-loss --checkpoint k

# a run that converges: its checkpoint says so, and a resume does not iterate
expect 0 "converged run" cpd x.tns -r 4 -t 2 --device cpu -i 200 --tol 1e-3 -o cv --checkpoint cvc
check "converged: the state says so" grep -qx 'converged 1' cvc.state
expect 0 "resumed after convergence" cpd x.tns -r 4 -t 2 --device cpu -i 200 --tol 1e-3 -o cv2 --resume cvc
check "resumed after convergence: no iteration" bash -c "! grep -q '^  its' out.txt"
check "resumed after convergence: the result" same_bits cv cv2 $CP_FILES

# mismatches: one line naming the field, exit 1
expect_failure "another rank" "pc_als\.state:[0-9]+: the checkpoint was made with rank '4', this run has '5'" \
    cpd x.tns -r 5 -t 2 --device cpu -i 10 --resume pc_als --nowrite
expect_failure "another tensor" "the checkpoint was made with tensor '.*checksum [0-9a-f]+', this run has" \
    cpd y.tns -r 4 -t 2 --device cpu -i 10 --resume pc_als --nowrite
expect_failure "another method" "the checkpoint was made with method 'cp-als', this run has 'cp-apr'" \
    cpd c.tns -r 4 -t 2 --device cpu -i 10 --method apr --resume pc_als --nowrite
expect_failure "another constraint" "the checkpoint was made with options '.*l1=0.01.*', this run has" \
    cpd x.tns -r 4 -t 2 --device cpu -i 10 --nonneg --nonneg-method admm --resume pc_admm --nowrite
expect_failure "tucker from a CP checkpoint" "the checkpoint was made with method 'cp-als', this run has 'tucker'" \
    tucker x.tns -r 3,4,5 -t 2 --resume pc_als
expect_failure "a factor set that is not a checkpoint" "s_als\.state: no such file: s_als is a factor set but not" \
    cpd x.tns -r 4 -t 2 --device cpu --resume s_als --nowrite
cp pc_als.state bad_state_copy
sed -i 's/^fits .*/fits 1 2/' pc_als.state
expect_failure "a state cut short" "pc_als\.state: 2 fits for 10 iterations" \
    cpd x.tns -r 4 -t 2 --device cpu --resume pc_als --nowrite
mv bad_state_copy pc_als.state

# usage errors
expect_usage cpd x.tns -r 4 --checkpoint-every 3
expect_usage cpd x.tns -r 4 --checkpoint k --checkpoint-every 0
expect_usage cpd x.tns -r 4 --checkpoint k --checkpoint-every 3x
expect_usage cpd x.tns -r 4 --checkpoint k --checkpoint-every 1m,2m
expect_usage cpd x.tns -r 4 --checkpoint k --checkpoint-every 3,
expect_usage cpd x.tns -r 4 --checkpoint k -o k
expect_usage cpd x.tns -r 4 --resume k --init s_als
expect_usage cpd x.tns -r 4 --checkpoint ''
expect_usage tucker x.tns -r 3,4,5 --resume k --init s_tucker
expect 0 "every 2 iterations and 1 minute" cpd x.tns -r 4 -t 2 --device cpu -i 3 --nowrite --checkpoint tm \
    --checkpoint-every 2,1m
check "every 2 and 1m: said" grep -q "^checkpoints: checkpoint to tm every 2 iterations and every 60 s" out.txt

# SIGKILL while checkpoints are written (large factors: a write takes longer than an
# iteration), at several moments: the checkpoint left resumes to the straight run's bits
"$TF" gen -o big.tns --dims 30000,200,100 --nnz 60000 --rank 3 --seed 4 >/dev/null 2>&1 || bad "gen big.tns"
expect 0 "big: straight" cpd big.tns -r 8 -t 2 --device cpu -i 12 --tol 0 -o bs --checkpoint bsc
for delay in 0.05 0.3 0.7; do
    rm -f bk.*
    "$TF" cpd big.tns -r 8 -t 2 --device cpu -i 12 --tol 0 --nowrite --checkpoint bk -q >/dev/null 2>&1 &
    pid=$!
    for ((i = 0; i < 600; ++i)); do [ -e bk.state ] && break; sleep 0.05; done
    sleep "$delay"
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    if ! grep -q '^iteration ' bk.state 2>/dev/null && ! ls bk.state.tmp.* >/dev/null 2>&1; then
        bad "killed after $delay s: no checkpoint"; continue
    fi
    expect 0 "killed after $delay s: resumed" cpd big.tns -r 8 -t 2 --device cpu -i 12 --tol 0 -o bk_r \
        --resume bk --checkpoint bk
    check "killed after $delay s: resumed to the straight run's factors" same_bits bs bk_r $CP_FILES
    check "killed after $delay s: and fits" test "$(fits bsc)" = "$(fits bk)"
    no_files "killed after $delay s: the next write removed what the killed one left" ./bk.*.tmp.* ./bk.lock
done

# GPUs (skipped without): --device gpu and --gpus 2 resume to a straight run's fits (1e-12)
gpus=$("$TF" info 2>/dev/null | sed -n 's/^gpus: *\([0-9]*\) found.*/\1/p')
close_fits() { # STEM STEM [TOL, default 1e-12]
    python3 - "$1.state" "$2.state" "${3:-1e-12}" <<'PY'
import sys
f = [[float(x) for x in l.split()[1:]] for p in sys.argv[1:3] for l in open(p) if l.startswith("fits ")]
assert len(f) == 2 and len(f[0]) == len(f[1]), f
assert max(abs(a - b) / max(abs(a), 1e-300) for a, b in zip(*f)) <= float(sys.argv[3]), f
PY
}
if [ "${gpus:-0}" -ge 1 ]; then
    for g in "--device gpu" "--device gpu --method apr"; do
        t=x.tns; [[ "$g" == *apr* ]] && t=c.tns
        tag=$(echo "$g" | tr -dc 'a-z')
        expect 0 "$g: straight" cpd $t -r 4 $g -i 10 --tol 0 --nowrite --checkpoint gs_$tag
        expect 0 "$g: 4" cpd $t -r 4 $g -i 4 --tol 0 --nowrite --checkpoint gp_$tag
        expect 0 "$g: resumed" cpd $t -r 4 $g -i 10 --tol 0 --nowrite --resume gp_$tag --checkpoint gp_$tag
        check "$g: resumed, the straight run's fits (1e-12)" close_fits gs_$tag gp_$tag
    done
    expect 0 "tucker --device gpu: straight" tucker x.tns -r 3,4,5 --device gpu -i 10 --tol 0 --checkpoint gs_tk
    expect 0 "tucker --device gpu: 4" tucker x.tns -r 3,4,5 --device gpu -i 4 --tol 0 --checkpoint gp_tk
    expect 0 "tucker --device gpu: resumed" tucker x.tns -r 3,4,5 --device gpu -i 10 --tol 0 --resume gp_tk \
        --checkpoint gp_tk
    check "tucker --device gpu: resumed, the straight run's fits (1e-12)" close_fits gs_tk gp_tk
    # GCP-Adam on the GPU (its gradient sums by atomics: the estimates to 1e-9, not bits), semi-stratified too
    for smp in stratified semi-stratified; do
        GG="cpd c.tns -r 3 --device gpu --method gcp --loss poisson --epoch-iters 20 --samples 2000,2000 --rate 0.05 --sampling $smp --nowrite"
        expect 0 "gcp $smp --device gpu: straight" $GG --epochs 10 --checkpoint ggs_$smp
        expect 0 "gcp $smp --device gpu: 4" $GG --epochs 4 --checkpoint ggp_$smp
        check "gcp $smp --device gpu: the state holds every mode's moments" test "$(grep -c '^aux [123] [0-9]* 6$' ggp_$smp.state)" -eq 3
        expect 0 "gcp $smp --device gpu: resumed" $GG --epochs 10 --resume ggp_$smp --checkpoint ggp_$smp
        check "gcp $smp --device gpu: resumed, the straight run's estimates (1e-9)" close_fits ggs_$smp ggp_$smp 1e-9
    done
    expect_failure "AO-ADMM checkpoints on a GPU" "checkpoints of AO-ADMM are not available on this backend" \
        cpd x.tns -r 4 --device gpu --nonneg --nonneg-method admm -i 3 --nowrite --checkpoint ga
else
    echo "$NAME: no GPU: the --device gpu cases are left out"
fi
if [ "${gpus:-0}" -ge 2 ]; then
    expect 0 "--gpus 2: straight" cpd x.tns -r 4 --gpus 2 -i 10 --tol 0 --nowrite --checkpoint g2s
    expect 0 "--gpus 2: 4" cpd x.tns -r 4 --gpus 2 -i 4 --tol 0 --nowrite --checkpoint g2p
    expect 0 "--gpus 2: resumed" cpd x.tns -r 4 --gpus 2 -i 10 --tol 0 --nowrite --resume g2p --checkpoint g2p
    check "--gpus 2: resumed, the straight run's fits (1e-12)" close_fits g2s g2p
    # the factors are written in the caller's row order: one GPU resumes a 2-GPU checkpoint to close fits
    # (a checkpoint of its own at iteration 4: g2p has reached 10 above)
    expect 0 "--gpus 2: 4 again" cpd x.tns -r 4 --gpus 2 -i 4 --tol 0 --nowrite --checkpoint g2h
    expect 0 "--gpus 2 checkpoint resumed on one GPU" cpd x.tns -r 4 --device gpu -i 10 --tol 0 --nowrite \
        --resume g2h --checkpoint g1p
    check "--gpus 2 -> one GPU: fits within 1e-9" python3 -c "
import sys
f=[[float(x) for x in l.split()[1:]] for p in ['g2s.state','g1p.state'] for l in open(p) if l.startswith('fits ')]
assert max(abs(a-b)/abs(a) for a,b in zip(*f)) <= 1e-9, f"
    G2="cpd c.tns -r 3 --gpus 2 --method gcp --loss poisson --epoch-iters 20 --samples 2000,2000 --rate 0.05 --nowrite"
    expect 0 "gcp --gpus 2: straight" $G2 --epochs 10 --checkpoint gg2s
    expect 0 "gcp --gpus 2: 4" $G2 --epochs 4 --checkpoint gg2p
    expect 0 "gcp --gpus 2: resumed" $G2 --epochs 10 --resume gg2p --checkpoint gg2p
    check "gcp --gpus 2: resumed, the straight run's estimates (1e-9)" close_fits gg2s gg2p 1e-9
else
    echo "$NAME: fewer than 2 GPUs: the --gpus 2 cases are left out"
fi
finish
