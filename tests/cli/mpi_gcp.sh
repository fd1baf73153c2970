# SPDX-License-Identifier: BSD-3-Clause
# tenfold cpd --method gcp on MPI ranks (issue 46): every rank draws the
# same samples (a function of the seed and the sample's index) and
# evaluates the ones it owns, the loss estimate and the gradient summed over
# the ranks: 2 and 3 CPU ranks give one process's loss estimate at every
# epoch (to 1e-10: the sums go in another order) and its factors (to 1e-8),
# for the Poisson and the Gaussian loss, stratified and semi-stratified
# sampling, a .tns (every rank reads its part
# of the canonical tensor) and a .bin (read at the part's offsets), failed
# epochs included; with a GPU (one: both ranks on it, the gradients summed
# through the host), 2 GPU ranks (--device gpu) equal one GPU, also with
# TF_EXCHANGE=host; the refusals: --dense-loss on ranks (before the read), --device
# gpu without a GPU, a value the loss does not take in the last rank's part
# (every rank fails, rank 0 says it in one line, no hang). Skipped (77)
# without MPI in the build or without mpirun.
LIB=$(cd "$(dirname "$0")/lib" && pwd) # common.bash moves to the scratch directory
source "$LIB/common.bash"
source "$LIB/mpi.bash"

"$TF" gen -o counts.tns --dims 50,400,300 --nnz 20000 --alpha 0.95,0.3,0.3 --rank 3 --counts 5 --seed 5 \
    >/dev/null 2>&1 || bad "gen counts.tns"
"$TF" convert counts.tns counts.bin >/dev/null 2>&1 || bad "convert counts.bin"
"$TF" gen -o real.tns --dims 40,60,50 --nnz 8000 --rank 3 --seed 8 >/dev/null 2>&1 || bad "gen real.tns"

# same ONE TWO: the reports' loss estimates per epoch (and the failed
# epochs) within 1e-10, the factors within 1e-8 of their largest entry
same() {
    python3 - "$1" "$2" <<'PY'
import json, sys
a, b = sys.argv[1], sys.argv[2]
ra, rb = json.load(open(a + ".json")), json.load(open(b + ".json"))
x = [i["loss_estimate"] for i in ra["iterations"]]
y = [i["loss_estimate"] for i in rb["iterations"]]
assert len(x) == len(y) and len(x) > 0, (x, y)
assert max(abs(u - v) / abs(u) for u, v in zip(x, y)) <= 1e-10, (x, y)
assert [i["failed"] for i in ra["iterations"]] == [i["failed"] for i in rb["iterations"]]
assert ra["result"]["adam_iterations"] == rb["result"]["adam_iterations"]
def load(p):
    return [[float(x) for x in l.split()] for l in open(p) if l.strip() and not l.startswith("#")]
for f in ["mode1", "mode2", "mode3", "lambda"]:
    x, y = load(a + "." + f + ".mat"), load(b + "." + f + ".mat")
    d = max(abs(u - v) for r, s in zip(x, y) for u, v in zip(r, s))
    assert len(x) == len(y) and d <= 1e-8 * max(abs(v) for r in x for v in r), (f, d)
PY
}

# a run of LOSS on FILE in one process (stem one_$tag) and on 2 and 3 ranks
compare() {
    local tag=$1 file=$2; shift 2
    expect 0 "$tag: one process" cpd "$file" -t 1 --device cpu -o one_$tag --json one_$tag.json "$@"
    for n in 2 3; do
        ranks $n cpd "$file" -t 1 -o r${n}_$tag --json r${n}_$tag.json "$@"
        if [ "$rc" -ne 0 ]; then bad "$tag on $n ranks: exit $rc; $(head -c 300 err.txt)"; continue; fi
        check "$tag on $n ranks: printed once" test "$(grep -c '^final loss estimate' out.txt)" -eq 1
        check "$tag on $n ranks: the plan names the ranks" grep -q "^plan: CPU of $n MPI ranks" out.txt
        check "$tag on $n ranks: nothing on stderr" test ! -s err.txt
        check "$tag on $n ranks: loss estimates and factors equal one process's" same one_$tag r${n}_$tag
    done
}

compare poisson counts.tns -r 4 --method gcp --loss poisson --epochs 4 --epoch-iters 40
compare poisson_bin counts.bin -r 4 --method gcp --loss poisson --epochs 4 --epoch-iters 40 --samples 3000,2000
compare gaussian real.tns -r 3 --method gcp --loss gaussian --epochs 4 --epoch-iters 40 --fsamples 5000,7000
# semi-stratified sampling: the same draws on the ranks too (.tns and .bin)
compare semi counts.tns -r 4 --method gcp --loss poisson --epochs 4 --epoch-iters 40 --sampling semi-stratified
compare semi_bin counts.bin -r 4 --method gcp --loss poisson --epochs 4 --epoch-iters 40 --sampling semi-stratified
# a rate so high that epochs fail: the restores and the decay alike on the ranks
compare failing counts.tns -r 4 --method gcp --loss gaussian --epochs 5 --epoch-iters 30 --rate 3 --fails 3
check "failing: epochs failed" python3 -c "
import json; assert any(i['failed'] for i in json.load(open('one_failing.json'))['iterations'])"

# refusals on ranks: every rank alike, before the read, one line, no hang
ranks 2 cpd counts.tns -r 2 --method gcp --loss poisson --dense-loss --nowrite
check "--dense-loss on 2 ranks: fails, no hang" test "$rc" -ne 0 -a "$rc" -ne 124
check "--dense-loss on 2 ranks: one line" \
    test "$(grep -c '^tenfold: gcp: --dense-loss is not available on MPI ranks' err.txt)" -eq 1
# GPU ranks (--device gpu): one GPU each, every rank's GPU the whole tensor
# (each reads its part, the parts gathered) and its part of every sample,
# the gradients summed by NCCL, or through the host (two ranks on one GPU:
# TF_TEST_GPUS=2 on a machine with one; TF_EXCHANGE=host): one GPU's
# estimates and factors (1e-10, 1e-8); without a GPU every rank fails with
# one line, no hang
gpu_ranks
if [ "$gpus" -eq 0 ]; then
    ranks 2 cpd counts.tns -r 2 --method gcp --loss poisson --device gpu --nowrite
    check "--device gpu on 2 ranks: fails, no hang" test "$rc" -ne 0 -a "$rc" -ne 124
    check "--device gpu on 2 ranks without a GPU: the reason" grep -qE "no CUDA device|no CUDA backend|no usable NVIDIA GPU" err.txt
elif [ "$gpus" -ge 2 ]; then
    for tag in poisson gaussian; do
        f=counts.tns
        [ $tag = gaussian ] && f=real.tns
        G="$f -r 4 --method gcp --loss $tag --epochs 4 --epoch-iters 40 -t 1"
        expect 0 "$tag: one GPU" cpd $G --device gpu -o g1_$tag --json g1_$tag.json
        ranks 2 cpd $G --device gpu -o g2_$tag --json g2_$tag.json
        if [ "$rc" -ne 0 ]; then bad "$tag on 2 GPU ranks: exit $rc; $(head -c 300 err.txt)"; continue; fi
        check "$tag on 2 GPU ranks: the run says so" grep -q "^ranks: 2 (MPI), one GPU each" out.txt
        check "$tag on 2 GPU ranks: the plan names the GPUs" grep -q "^plan: 2 GPUs (MPI ranks), fp64, stratified samples split" out.txt
        check "$tag on 2 GPU ranks: printed once" test "$(grep -c '^final loss estimate' out.txt)" -eq 1
        check "$tag on 2 GPU ranks: the transport" plan_transport
        check "$tag on 2 GPU ranks: loss estimates and factors equal one GPU's" same g1_$tag g2_$tag
    done
    G="counts.tns -r 4 --method gcp --loss poisson --epochs 4 --epoch-iters 40 -t 1"
    TF_EXCHANGE=host ranks 2 cpd $G --device gpu -o gx --json gx.json
    if [ "$rc" -ne 0 ]; then bad "2 GPU ranks, TF_EXCHANGE=host: exit $rc; $(head -c 300 err.txt)"; else
        check "2 GPU ranks, TF_EXCHANGE=host: the plan says so" grep -q "summed by host staging (TF_EXCHANGE)" out.txt
        check "2 GPU ranks, TF_EXCHANGE=host: loss estimates and factors equal one GPU's" same g1_poisson gx
    fi
fi
# a value the Poisson loss does not take, in the last rank's part
printf '1 1 1 2\n1 2 2 1\n2 1 3 1\n2 2 2 3\n3 1 1 2.5\n3 3 3 1\n' > bad.tns
"$TF" convert bad.tns bad.bin >/dev/null 2>&1 || bad "convert bad.bin"
for f in bad.tns bad.bin; do
    ranks 2 cpd $f -r 2 --method gcp --loss poisson --nowrite
    check "$f on 2 ranks: fails, no hang" test "$rc" -ne 0 -a "$rc" -ne 124
    check "$f on 2 ranks: one line naming the value" test "$(grep -c '^tenfold: gcp: the poisson loss needs counts (integers >= 0): the non-zero at (3, 1, 1) (1-based) is 2.5$' err.txt)" -eq 1
done
finish
