# SPDX-License-Identifier: BSD-3-Clause
# tenfold cpd / bench mttkrp / mttkrp --gpus (issue 28): bad specs are usage errors; more GPUs than
# the machine has fail with one line naming the option; on a machine with two
# GPUs or more, --gpus 2 runs, says so (plan, parts line, JSON) and its fits
# equal one GPU's to 1e-9 -- also with every mode cut longest-first (TF_PARTITION=longest:
# the fits, and the factors in the caller's row order) -- and mttkrp --gpus 2 gives the
# float64 reference's numbers, contiguous and longest-first.
source "$(dirname "$0")/lib/common.bash"

"$TF" gen -o small.tns --dims 300,200,100 --nnz 20000 --alpha 0.6 --rank 3 --seed 2 >/dev/null 2>&1 || bad "gen small.tns"
expect_usage cpd small.tns -r 3 --gpus 0
expect_usage cpd small.tns -r 3 --gpus x
expect_usage cpd small.tns -r 3 --gpus 1,1
expect_usage cpd small.tns -r 3 --gpus 17
expect_usage cpd small.tns -r 3 --gpus 2 --device cpu
expect 2 "bench mttkrp --gpus 0" bench mttkrp small.tns --gpus 0
check "bench mttkrp --gpus 0: says what is expected" grep -q "^tenfold bench mttkrp: --gpus: expected a count" err.txt
expect 2 "bench mttkrp --gpus 2 --device cpu" bench mttkrp small.tns --gpus 2 --device cpu

# mttkrp on the GPUs: the factor files of a small run first
"$TF" cpd small.tns -r 4 -i 2 --device cpu -o f >/dev/null 2>&1 || bad "cpd -o f (factor files)"
expect_usage mttkrp small.tns --mode 1 --factors -,f.mode2.mat,f.mode3.mat -o M.mat --gpus 2 --device cpu
expect_usage mttkrp small.tns --mode 1 --factors -,f.mode2.mat,f.mode3.mat -o M.mat --format reference --device gpu
expect_usage mttkrp small.tns --mode 1 --factors -,f.mode2.mat,f.mode3.mat -o M.mat --device gpu --memory-limit x

gpus=$("$TF" info 2>/dev/null | sed -n 's/^gpus: *\([0-9]*\) found.*/\1/p')
n=$(( ${gpus:-0} + 1 ))
expect 1 "--gpus beyond the machine" cpd small.tns -r 3 -i 2 --nowrite --gpus $n
check "--gpus beyond the machine: one line naming the option" grep -q "^tenfold: --gpus: " err.txt
check "--gpus beyond the machine: says how many there are" grep -q "this machine has ${gpus:-0}\|no CUDA" err.txt

if [ "${gpus:-0}" -ge 2 ]; then
    export NCCL_NVLS_ENABLE=0
    expect 0 "one GPU" cpd small.tns -r 5 -i 8 --tol 0 --device gpu --nowrite --json one.json
    expect 0 "two GPUs" cpd small.tns -r 5 -i 8 --tol 0 --gpus 2 -v --nowrite --json two.json
    check "two GPUs: the plan says so" grep -Eq "^plan: 2 GPUs, (peer copies|NCCL), overlapped: " out.txt
    check "two GPUs: the parts line" grep -q "^parts: 2, shard imbalance" out.txt
    check "two GPUs: fits equal one GPU's to 1e-9" python3 - <<'PY'
import json
a, b = json.load(open("one.json")), json.load(open("two.json"))
fa = [i["fit"] for i in a["iterations"]]
fb = [i["fit"] for i in b["iterations"]]
assert b["parts"]["count"] == 2 and b["parts"]["exchange_seconds"] > 0
assert len(fa) == len(fb) and max(abs(x - y) for x, y in zip(fa, fb)) <= 1e-9, (fa, fb)
PY
    # every mode cut longest-first (relabeled inside the run): the same fits, the rows in the caller's order
    TF_PARTITION=longest expect 0 "two GPUs, longest-first" cpd small.tns -r 5 -i 8 --tol 0 --gpus 2 -v -o lpt \
        --json lpt.json
    check "two GPUs, longest-first: -v says so" \
        grep -q "^partition: mode 1 longest-first .*, mode 2 longest-first .*, mode 3 longest-first" out.txt
    expect 0 "one GPU, written" cpd small.tns -r 5 -i 8 --tol 0 --device gpu -o one --json one.json
    check "two GPUs, longest-first: fits and factors equal one GPU's to 1e-9" python3 - <<'PY'
import json
a, b = json.load(open("one.json")), json.load(open("lpt.json"))
fa = [i["fit"] for i in a["iterations"]]
fb = [i["fit"] for i in b["iterations"]]
assert [m["schedule"] for m in b["parts"]["modes"]] == ["longest-first"] * 3
assert len(fa) == len(fb) and max(abs(x - y) for x, y in zip(fa, fb)) <= 1e-9, (fa, fb)
def load(p):
    return [[float(x) for x in l.split()] for l in open(p) if l.strip() and not l.startswith("#")]
for f in ["mode1", "mode2", "mode3", "lambda"]:
    x, y = load("one." + f + ".mat"), load("lpt." + f + ".mat")
    scale = max(abs(v) for r in x for v in r) or 1.0
    assert len(x) == len(y) and max(abs(u - v) for r, s in zip(x, y) for u, v in zip(r, s)) <= 1e-9 * scale, f
PY
    for m in 1 2 3; do
        fl="f.mode1.mat,f.mode2.mat,f.mode3.mat"
        expect 0 "mttkrp mode $m, reference" mttkrp small.tns --mode $m --factors $fl -o R$m.mat --format reference
        expect 0 "mttkrp mode $m, --gpus 2" mttkrp small.tns --mode $m --factors $fl -o G$m.mat --gpus 2
        TF_PARTITION=longest expect 0 "mttkrp mode $m, --gpus 2, longest-first" mttkrp small.tns --mode $m \
            --factors $fl -o L$m.mat --gpus 2
        for g in G L; do
            check "mttkrp mode $m on 2 GPUs ($g): the reference's numbers to 1e-12" python3 - R$m.mat $g$m.mat <<'PY'
import sys
def load(p):
    return [[float(x) for x in l.split()] for l in open(p) if l.strip() and not l.startswith("#")]
a, b = load(sys.argv[1]), load(sys.argv[2])
scale = max(abs(v) for r in a for v in r) or 1.0
assert len(a) == len(b) and max(abs(u - v) for r, s in zip(a, b) for u, v in zip(r, s)) <= 1e-12 * scale
PY
        done
    done
    # one GPU, the F-COO copies streamed (every chunk) under a memory limit: the same numbers
    TF_STREAM=always TF_STREAM_RESIDENT=0 expect 0 "mttkrp streamed under --memory-limit" mttkrp small.tns --mode 1 \
        --factors f.mode1.mat,f.mode2.mat,f.mode3.mat -o S1.mat --device gpu --format fcoo --memory-limit 64M -v
    check "mttkrp under --memory-limit: the plan streams" grep -q "^plan: .*streamed" out.txt
    check "mttkrp streamed: the reference's numbers to 1e-12" python3 - R1.mat S1.mat <<'PY'
import sys
def load(p):
    return [[float(x) for x in l.split()] for l in open(p) if l.strip() and not l.startswith("#")]
a, b = load(sys.argv[1]), load(sys.argv[2])
scale = max(abs(v) for r in a for v in r) or 1.0
assert len(a) == len(b) and max(abs(u - v) for r, s in zip(a, b) for u, v in zip(r, s)) <= 1e-12 * scale
PY
    expect 0 "bench mttkrp --gpus 2" bench mttkrp small.tns --gpus 2 -r 8 --reps 3
    check "bench mttkrp --gpus 2: the plan names the GPUs" grep -q "2 GPUs: gpu fcoo" out.txt
fi
finish
