# SPDX-License-Identifier: BSD-3-Clause
# tenfold cpd --method gcp (GCP, issue 46): a line per epoch with the loss
# estimate, the summary, the JSON report (iterations[].loss_estimate,
# result.loss_estimate), -o, the same numbers for the same seed, the dense
# loss mode (its loss never rises), and the refusals: values the loss does
# not take (named), the dense mode on the GPU (before the tensor is read),
# the options GCP does not take, GCP's options without --method gcp; with a
# GPU, a run on it (its estimates the CPU's); with two, --gpus 2 (one GPU's
# numbers), without, --gpus 2 failing in one line.
LIB=$(cd "$(dirname "$0")/lib" && pwd) # common.bash moves to the scratch directory
source "$LIB/common.bash"

"$TF" gen -o counts.tns --dims 60,50,40 --nnz 6000 --rank 3 --counts 4 --seed 3 >/dev/null 2>&1 || bad "gen counts.tns"

expect 0 "gcp runs" cpd counts.tns -r 3 --method gcp --loss poisson --epochs 4 --epoch-iters 20 --rate 0.01 -t 2 \
    --device cpu -o g --json g.json
check "gcp: a line per epoch" test "$(grep -c '^  epoch = .*loss estimate = .*rate = ' out.txt)" -eq 4
check "gcp: the start line" grep -q '^cpd: GCP-Adam, poisson loss, stratified sampling, rank 3, max 4 epochs of 20 iterations, rate 0.01' out.txt
check "gcp: the final line" grep -q '^final loss estimate: .* after 4 epochs' out.txt
check "gcp: the samples" grep -q 'samples per iteration: 4500 non-zeros, 4500 zeros' out.txt
check "gcp: the plan" grep -q '^plan: CPU, stratified samples' out.txt
check "gcp: the timing line" grep -q '^timing (s): read .* sample .* gradient .* step ' out.txt
check "gcp: the factors" test -s g.mode1.mat -a -s g.mode3.mat -a -s g.lambda.mat -a -s g.ktensor
check "gcp: the report" python3 - g.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
o, it, res = r["options"], r["iterations"], r["result"]
assert o["algorithm"] == "GCP-Adam" and o["loss"] == "poisson" and o["epoch_iters"] == 20 and o["rate"] == 0.01, o
assert o["samples_nonzero"] == 4500 and o["samples_zero"] == 4500 and o["fsamples_nonzero"] == 6000, o
assert o["max_iters"] == 4 and len(it) == 4 and [i["iter"] for i in it] == [1, 2, 3, 4]
assert all(set(i) >= {"loss_estimate", "rate", "failed", "seconds"} for i in it)
assert res["loss_estimate"] == it[-1]["loss_estimate"] and res["loss_estimate"] < res["loss_initial"]
good = [i["loss_estimate"] for i in it if not i["failed"]]
assert good == sorted(good, reverse=True), good
assert res["adam_iterations"] == 80
t = r["timing_seconds"]
assert all(k in t for k in ("read", "build", "sample", "gradient", "step", "estimate", "cpd_total", "wall"))
PY
check "gcp: non-negative factors (Poisson)" python3 - g <<'PY'
import sys
def load(p): return [[float(x) for x in l.split()] for l in open(p) if l.strip() and not l.startswith("#")]
for m in (1, 2, 3):
    assert min(min(r) for r in load("%s.mode%d.mat" % (sys.argv[1], m))) >= 0
PY

# the same seed: the same estimates, on 2 threads and 1 (the samples do not depend on the threads)
expect 0 "gcp again" cpd counts.tns -r 3 --method gcp --loss poisson --epochs 4 --epoch-iters 20 --rate 0.01 -t 2 \
    --device cpu --nowrite --json g2.json
check "gcp: one seed, one run" python3 - g.json g2.json <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
assert [i["loss_estimate"] for i in a["iterations"]] == [i["loss_estimate"] for i in b["iterations"]]
PY
expect 0 "gcp on 1 thread" cpd counts.tns -r 3 --method gcp --loss poisson --epochs 4 --epoch-iters 20 --rate 0.01 -t 1 \
    --device cpu --nowrite --json g1.json
check "gcp: 1 and 2 threads to rounding" python3 - g.json g1.json <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
assert a["result"]["loss_initial"] == b["result"]["loss_initial"]
for x, y in zip(a["iterations"], b["iterations"]):
    assert abs(x["loss_estimate"] - y["loss_estimate"]) <= 1e-6 * abs(y["loss_estimate"]), (x, y)
PY

# --sampling semi-stratified: the start line, the plan, the report; the
# same estimates from the seed, on 1 and 2 threads to rounding; its loss
# estimate (the stratified fixed sample) falls like the stratified run's
expect 0 "gcp semi-stratified" cpd counts.tns -r 3 --method gcp --loss poisson --epochs 4 --epoch-iters 20 --rate 0.01 \
    -t 2 --sampling semi-stratified --device cpu --nowrite --json s.json
check "gcp semi: the start line" grep -q '^cpd: GCP-Adam, poisson loss, semi-stratified sampling, rank 3' out.txt
check "gcp semi: the plan" grep -q '^plan: CPU, semi-stratified samples' out.txt
check "gcp semi: the samples" grep -q 'samples per iteration: 4500 non-zeros, 4500 uniform entries (semi-stratified)' out.txt
expect 0 "gcp semi, 1 thread" cpd counts.tns -r 3 --method gcp --loss poisson --epochs 4 --epoch-iters 20 --rate 0.01 \
    -t 1 --sampling semi-stratified --device cpu --nowrite --json s1.json
expect 0 "gcp semi again" cpd counts.tns -r 3 --method gcp --loss poisson --epochs 4 --epoch-iters 20 --rate 0.01 \
    -t 2 --sampling semi-stratified --device cpu --nowrite --json s2.json
check "gcp semi: the report, one seed one run, threads" python3 - s.json s1.json s2.json g.json <<'PY'
import json, sys
a, b, c, g = (json.load(open(f)) for f in sys.argv[1:])
assert a["options"]["sampling"] == "semi-stratified" and g["options"]["sampling"] == "stratified"
assert a["options"]["samples_zero"] == 4500
la = [i["loss_estimate"] for i in a["iterations"]]
assert la == [i["loss_estimate"] for i in c["iterations"]]
for x, y in zip(la, [i["loss_estimate"] for i in b["iterations"]]):
    assert abs(x - y) <= 1e-6 * abs(y), (x, y)
assert la != [i["loss_estimate"] for i in g["iterations"]]
assert a["result"]["loss_initial"] == g["result"]["loss_initial"]  # the same fixed sample
assert a["result"]["loss_estimate"] < 0.99 * a["result"]["loss_initial"], a["result"]
PY
expect_usage cpd counts.tns -r 2 --method gcp --loss gaussian --sampling uniform
expect_usage cpd counts.tns -r 2 --sampling semi-stratified
expect_usage cpd counts.tns -r 2 --method gcp --loss gaussian --dense-loss --sampling semi-stratified

# the dense loss over every entry: L-BFGS, its loss never rises
"$TF" gen -o small.tns --dims 8,7,6 --nnz 80 --rank 2 --seed 5 >/dev/null 2>&1 || bad "gen small.tns"
expect 0 "gcp --dense-loss" cpd small.tns -r 2 --method gcp --loss gaussian --dense-loss --epochs 200 -t 1 \
    --nowrite --json d.json
check "gcp dense: the start line" grep -q '^cpd: GCP, gaussian loss over every entry (dense, L-BFGS), rank 2' out.txt
check "gcp dense: the plan" grep -q '^plan: CPU, dense loss over all 336 entries' out.txt
check "gcp dense: the loss falls" python3 - d.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
l = [i["loss_estimate"] for i in r["iterations"]]
assert r["options"]["dense_loss"] is True and l == sorted(l, reverse=True) and l[-1] < r["result"]["loss_initial"], l
PY
expect 0 "gcp bernoulli on --gen" cpd --gen dims=30x20x10,nnz=500 -r 2 --method gcp --loss gaussian --epochs 1 \
    --epoch-iters 5 --samples 100,200 --fsamples 300,300 --nowrite -q

# refusals
printf '1 1 1 2\n2 1 3 1\n1 2 2 1.5\n' > bad.tns
expect_failure "gcp: not counts" 'gcp: the poisson loss needs counts \(integers >= 0\): the non-zero at \(1, 2, 2\) \(1-based\) is 1\.5$' \
    cpd bad.tns -r 2 --method gcp --loss poisson --nowrite
expect_failure "gcp: not 0/1" 'gcp: the bernoulli-odds loss needs 0 or 1: the non-zero at \(1, 1, 1\) \(1-based\) is 2$' \
    cpd bad.tns -r 2 --method gcp --loss bernoulli --nowrite
no_files "gcp: nothing written on failure" bad.mode1.mat bad.set
expect_failure "gcp: dense on the GPU" '^tenfold: gcp: --dense-loss runs on the CPU only \(--device cpu; its tensors have at most 2\^26 entries\)$' \
    cpd missing.tns -r 2 --method gcp --loss gaussian --dense-loss --device gpu --nowrite

# one GPU, where there is one: the plan says so, and the estimates are the
# CPU's (the same samples; the GPU's gradient sums by atomics: to 1e-8)
gpus=$("$TF" info 2>/dev/null | sed -n 's/^gpus: *\([0-9]*\) found.*/\1/p')
if [ "${gpus:-0}" -ge 1 ]; then
    expect 0 "gcp on the GPU" cpd counts.tns -r 3 --method gcp --loss poisson --epochs 4 --epoch-iters 20 --rate 0.01 \
        --device gpu --nowrite --json gg.json
    check "gcp gpu: the plan" grep -q '^plan: GPU .*, stratified samples drawn on the GPU' out.txt
    expect 0 "gcp semi-stratified on the GPU" cpd counts.tns -r 3 --method gcp --loss poisson --epochs 4 --epoch-iters 20 \
        --rate 0.01 -t 2 --sampling semi-stratified --device gpu --nowrite --json sg.json
    check "gcp semi gpu: the plan" grep -q '^plan: GPU .*, semi-stratified samples drawn on the GPU' out.txt
    check "gcp semi gpu: the CPU's estimates (1e-8)" python3 - s.json sg.json <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
assert a["result"]["loss_initial"] == b["result"]["loss_initial"] or \
    abs(a["result"]["loss_initial"] - b["result"]["loss_initial"]) <= 1e-12 * abs(a["result"]["loss_initial"])
assert len(a["iterations"]) == len(b["iterations"])
for p, q in zip(a["iterations"], b["iterations"]):
    assert abs(p["loss_estimate"] - q["loss_estimate"]) <= 1e-8 * abs(p["loss_estimate"]), (p, q)
PY
    check "gcp gpu: the CPU's estimates" python3 - g.json gg.json <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
x, y = a["result"]["loss_initial"], b["result"]["loss_initial"]
assert abs(x - y) <= 1e-12 * abs(x), (x, y)
assert len(a["iterations"]) == len(b["iterations"])
for p, q in zip(a["iterations"], b["iterations"]):
    assert abs(p["loss_estimate"] - q["loss_estimate"]) <= 1e-8 * abs(p["loss_estimate"]), (p, q)
    assert p["failed"] == q["failed"], (p, q)
PY
fi
# several GPUs: with two or more, --gpus 2 runs (the plan says so; every GPU
# the whole tensor, its part of every sample) and its estimates and factors
# equal one GPU's to 1e-10, semi-stratified sampling too;
# with fewer GPUs --gpus 2 fails with one line
if [ "${gpus:-0}" -ge 2 ]; then
    G="counts.tns -r 3 --method gcp --loss poisson --epochs 4 --epoch-iters 20 --rate 0.01"
    expect 0 "gcp on one GPU" cpd $G --device gpu -o g1 --json g1.json
    expect 0 "gcp on 2 GPUs" cpd $G --gpus 2 -o g2 --json g2.json
    check "gcp on 2 GPUs: the plan" grep -q '^plan: 2 GPUs, fp64, stratified samples split' out.txt
    check "gcp: 2 GPUs = 1 GPU to 1e-10" python3 - g1 g2 <<'PY'
import json, sys
def load(p): return [[float(x) for x in l.split()] for l in open(p) if l.strip() and not l.startswith("#")]
a, b = (json.load(open(f + ".json")) for f in sys.argv[1:])
x, y = a["result"]["loss_initial"], b["result"]["loss_initial"]
assert abs(x - y) <= 1e-10 * abs(x), (x, y)
assert len(a["iterations"]) == len(b["iterations"]) == 4
for p, q in zip(a["iterations"], b["iterations"]):
    assert abs(p["loss_estimate"] - q["loss_estimate"]) <= 1e-10 * abs(p["loss_estimate"]), (p, q)
    assert p["failed"] == q["failed"], (p, q)
for f in ("mode1", "mode2", "mode3", "lambda"):
    u, v = (load(s + "." + f + ".mat") for s in sys.argv[1:])
    assert max(abs(p - q) for x, y in zip(u, v) for p, q in zip(x, y)) <= 1e-10 * max(abs(p) for x in u for p in x), f
PY
    expect 0 "gcp semi-stratified on one GPU" cpd $G --device gpu --sampling semi-stratified --nowrite --json gs1.json
    expect 0 "gcp semi-stratified on 2 GPUs" cpd $G --gpus 2 --sampling semi-stratified --nowrite --json gs2.json
    check "gcp semi-stratified on 2 GPUs: the plan" grep -q '^plan: 2 GPUs, fp64, semi-stratified samples split' out.txt
    check "gcp semi-stratified: 2 GPUs = 1 GPU to 1e-10" python3 - gs1.json gs2.json <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
assert len(a["iterations"]) == len(b["iterations"]) == 4
for p, q in zip(a["iterations"], b["iterations"]):
    assert abs(p["loss_estimate"] - q["loss_estimate"]) <= 1e-10 * abs(p["loss_estimate"]), (p, q)
PY
else
    run_tf cpd counts.tns -r 2 --method gcp --loss gaussian --gpus 2 --nowrite
    check "gcp --gpus 2 without two GPUs: fails with one line" test "$rc" -ne 0 -a "$(wc -l <err.txt)" -eq 1
fi
expect_usage cpd counts.tns -r 2 --method gcp
expect_usage cpd counts.tns -r 2 --method gcp --loss cauchy
expect_usage cpd counts.tns -r 2 --method gcp --loss gaussian --nonneg
expect_usage cpd counts.tns -r 2 --method gcp --loss gaussian --init nvecs
expect_usage cpd counts.tns -r 2 --method gcp --loss gaussian -i 5
expect_usage cpd counts.tns -r 2 --method gcp --loss gaussian --samples 5
expect_usage cpd counts.tns -r 2 --method gcp --loss gaussian --dense-loss --rate 0.1
expect_usage cpd counts.tns -r 2 --loss gaussian
expect_usage cpd counts.tns -r 2 --method gcp --loss gaussian --epochs 0
expect 0 "cpd --help" cpd --help
check "cpd --help: --method gcp" grep -q -- '--loss L' out.txt
finish
