# SPDX-License-Identifier: BSD-3-Clause
# tenfold cpd --method apr (CP-APR, issue 45): a line per outer iteration
# with the log-likelihood and the KKT violation, the summary, the JSON report
# (result.log_likelihood, iterations[].log_likelihood / kkt_violation), -o and
# --init STEM (a run continued from its factors does not lose likelihood),
# convergence on a loose --tol, --gen counts, the same numbers on 1 and 2
# threads, --apr-algorithm pdnr (its lines, report, threads, convergence,
# refusals), --gpus 2 (with two GPUs: one GPU's and the CPU's numbers), and the
# refusals: values that are not counts (the first one named) and the options
# CP-APR does not take.
LIB=$(cd "$(dirname "$0")/lib" && pwd) # common.bash moves to the scratch directory
source "$LIB/common.bash"

"$TF" gen -o counts.tns --dims 60,50,40 --nnz 6000 --rank 3 --counts 4 --seed 3 >/dev/null 2>&1 || bad "gen counts.tns"

expect 0 "apr runs" cpd counts.tns -r 3 --method apr -i 5 -t 1 --device cpu -o a --json a.json
check "apr: a line per outer iteration" test "$(grep -c '^  its = .*loglik = .*kkt = .*inner = ' out.txt)" -eq 5
check "apr: the start line" grep -q '^cpd: CP-APR (Poisson, multiplicative updates), rank 3, max 5 outer' out.txt
check "apr: the final line" grep -q '^final log-likelihood: .* after 5 iterations (stopped at the iteration limit' out.txt
check "apr: the plan" grep -q '^plan: CPU, the non-zeros by each mode' out.txt
check "apr: the timing line" grep -q '^timing (s): read .* phi .* loglik ' out.txt
check "apr: the factors" test -s a.mode1.mat -a -s a.mode3.mat -a -s a.lambda.mat -a -s a.ktensor
check "apr: the report" python3 - a.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
o, it, res = r["options"], r["iterations"], r["result"]
assert o["algorithm"] == "CP-APR" and o["max_inner"] == 10 and o["kappa"] == 0.01 and o["tol"] == 1e-4, o
assert o["max_iters"] == 5 and len(it) == 5 and [i["iter"] for i in it] == [1, 2, 3, 4, 5]
assert all(set(i) >= {"log_likelihood", "kkt_violation", "inner_iterations", "scooched", "seconds"} for i in it)
assert "fit" not in it[0] and "fit" not in res
assert res["log_likelihood"] == it[-1]["log_likelihood"] and res["kkt_violation"] == it[-1]["kkt_violation"]
assert res["iterations"] == 5 and res["converged"] is False
assert res["inner_iterations"] == sum(i["inner_iterations"] for i in it)
# multiplicative updates never lower the likelihood (the scooch aside: none on iteration 1)
assert it[1]["log_likelihood"] > it[0]["log_likelihood"]
t = r["timing_seconds"]
assert all(k in t for k in ("read", "build", "phi", "dense", "loglik", "cpd_total", "write", "wall"))
PY
# the columns have unit 1-norm (pyttb's normtype=1), lambda decreasing
check "apr: 1-norm columns, lambda sorted" python3 - a <<'PY'
import sys
def load(p): return [[float(x) for x in l.split()] for l in open(p) if l.strip() and not l.startswith("#")]
lam = [r[0] for r in load(sys.argv[1] + ".lambda.mat")]
assert lam == sorted(lam, reverse=True), lam
for m in (1, 2, 3):
    a = load("%s.mode%d.mat" % (sys.argv[1], m))
    for r in range(3):
        assert abs(sum(row[r] for row in a) - 1) < 1e-12
PY

# --init STEM: the run goes on from a's factors (no scooch on its first iteration: no loss)
expect 0 "apr --init" cpd counts.tns --method apr --init a -i 2 -t 1 --device cpu --nowrite --json b.json
check "apr --init: R from the files" grep -q 'rank 3, max 2 outer' out.txt
check "apr --init: the likelihood goes on from a's" python3 - a.json b.json <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
last, first = a["result"]["log_likelihood"], b["iterations"][0]["log_likelihood"]
assert first >= last - 1e-9 * abs(last), (last, first)
PY

# 1 and 2 threads: the same numbers
expect 0 "apr on 2 threads" cpd counts.tns -r 3 --method apr -i 5 -t 2 --device cpu --nowrite --json a2.json
check "apr: 1 and 2 threads alike" python3 - a.json a2.json <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
assert [i["log_likelihood"] for i in a["iterations"]] == [i["log_likelihood"] for i in b["iterations"]]
PY

# a loose tolerance converges; the defaults are pyttb's (1000 outer iterations)
expect 0 "apr converges" cpd counts.tns -r 2 --method apr --tol 0.5 --inner 3 --kappa 0 -t 1 --nowrite
check "apr: converged" grep -q '^final log-likelihood: .*(converged: every mode' out.txt
check "apr: the default limit" grep -q 'max 1000 outer iterations of at most 3 inner per mode, tol 0.5 (KKT), kappa 0,' out.txt
expect 0 "apr on --gen counts" cpd --gen dims=30x20x10,nnz=2000,counts=3 -r 2 --method apr -i 2 --nowrite -q

# refusals: not counts (the first in the canonical order, its index and value), options
printf '1 1 1 2\n2 1 3 -1\n1 2 2 1.5\n' > bad.tns
expect_failure "apr: not counts" 'cpd: CP-APR needs counts \(integers >= 0\): the non-zero at \(1, 2, 2\) \(1-based\) is 1\.5$' \
    cpd bad.tns -r 2 --method apr --nowrite
no_files "apr: nothing written on failure" bad.mode1.mat bad.set
# several GPUs: with two or more, --gpus 2 runs (the plan says so) and its
# likelihoods, KKT violations and factors equal one GPU's and the CPU's to
# 1e-10; with fewer it fails with one line before reading
gpus=$("$TF" info 2>/dev/null | sed -n 's/^gpus: *\([0-9]*\) found.*/\1/p')
if [ "${gpus:-0}" -ge 2 ]; then
    expect 0 "apr on one GPU" cpd counts.tns -r 3 --method apr -i 5 --device gpu -o g1 --json g1.json
    expect 0 "apr on 2 GPUs" cpd counts.tns -r 3 --method apr -i 5 --gpus 2 -o g2 --json g2.json
    check "apr on 2 GPUs: the plan" grep -q '^plan: 2 GPUs' out.txt
    check "apr: 2 GPUs = 1 GPU = CPU to 1e-10" python3 - a g1 g2 <<'PY'
import json, sys
def load(p): return [[float(x) for x in l.split()] for l in open(p) if l.strip() and not l.startswith("#")]
runs = sys.argv[1:]
rep = [json.load(open(r + ".json")) for r in runs]
for key in ("log_likelihood", "kkt_violation"):
    ref = [i[key] for i in rep[0]["iterations"]]
    for r in rep[1:]:
        got = [i[key] for i in r["iterations"]]
        assert len(got) == len(ref) and all(abs(u - v) <= 1e-10 * abs(v) + 1e-13 for u, v in zip(got, ref)), (key, got, ref)
for f in ("mode1", "mode2", "mode3", "lambda"):
    ref = load(runs[0] + "." + f + ".mat")
    for r in runs[1:]:
        got = load(r + "." + f + ".mat")
        assert max(abs(u - v) for x, y in zip(got, ref) for u, v in zip(x, y)) <= 1e-10 * max(abs(v) for y in ref for v in y), f
PY
else
    run_tf cpd counts.tns -r 2 --method apr --gpus 2 --nowrite
    check "apr --gpus 2 without two GPUs: fails with one line" test "$rc" -ne 0 -a "$(wc -l <err.txt)" -eq 1
fi
expect_usage cpd counts.tns -r 2 --method apr --nonneg
expect_usage cpd counts.tns -r 2 --method apr --l1 0.1
expect_usage cpd counts.tns -r 2 --method apr --init nvecs
expect_usage cpd counts.tns -r 2 --method apr --precision single
expect_usage cpd counts.tns -r 2 --method apr --format csf
expect_usage cpd counts.tns -r 2 --inner 3
expect_usage cpd counts.tns -r 2 --kappa 0.1
expect_usage cpd counts.tns -r 2 --method apx
expect_usage cpd counts.tns -r 2 --method apr --inner 0

# --apr-algorithm pdnr: the row-wise Newton method (pyttb's 'pdnr'; its numbers: python/tests/test_cp_apr.py)
expect 0 "apr pdnr runs" cpd counts.tns -r 3 --method apr --apr-algorithm pdnr -i 5 -t 1 -o p --json p.json
check "pdnr: the start line" grep -q '^cpd: CP-APR (Poisson, row-wise projected damped Newton, pdnr), rank 3, max 5 outer iterations of at most 10 Newton steps per row' out.txt
check "pdnr: a line per outer iteration" test "$(grep -c '^  its = .*loglik = .*kkt = .*inner = ' out.txt)" -eq 5
check "pdnr: the steps line" grep -q '^CP-APR: [0-9]* Newton steps over the rows (at most 10 per row and iteration)' out.txt
check "pdnr: the CPU" grep -q '^plan: CPU, the non-zeros by each mode' out.txt
check "pdnr: the factors" test -s p.mode1.mat -a -s p.lambda.mat
expect 0 "apr pdnr on 2 threads" cpd counts.tns -r 3 --method apr --apr-algorithm pdnr -i 5 -t 2 --nowrite --json p2.json
check "pdnr: the report; 1 and 2 threads alike; it gains on mu" python3 - p.json p2.json a.json <<'PY'
import json, sys
p, p2, a = (json.load(open(f)) for f in sys.argv[1:])
assert p["options"]["apr_algorithm"] == "pdnr" and a["options"]["apr_algorithm"] == "mu"
ll = [i["log_likelihood"] for i in p["iterations"]]
assert ll == [i["log_likelihood"] for i in p2["iterations"]]
assert ll[-1] > ll[0] and ll[-1] > a["result"]["log_likelihood"], (ll, a["result"]["log_likelihood"])
assert p["result"]["inner_iterations"] == sum(i["inner_iterations"] for i in p["iterations"])
PY
expect 0 "pdnr converges" cpd counts.tns -r 2 --method apr --apr-algorithm pdnr --tol 0.05 -t 1 --nowrite
check "pdnr: converged" grep -q '^final log-likelihood: .*(converged: every row' out.txt
# (a build without CUDA, or a machine without a GPU, refuses --device gpu itself)
expect_failure "pdnr: not on the GPU" '(^tenfold: cpd: pdnr: not available on the GPU yet \(--device cpu\)$|--device: (not available|no usable NVIDIA GPU))' \
    cpd counts.tns -r 2 --method apr --apr-algorithm pdnr --device gpu -o pg
no_files "pdnr on the GPU: nothing written" pg.mode1.mat pg.set
expect_failure "pdnr: no checkpoints" 'checkpoints are not available for CP-APR.s pdnr yet' \
    cpd counts.tns -r 2 --method apr --apr-algorithm pdnr --checkpoint ck --nowrite
expect_usage cpd counts.tns -r 2 --method apr --apr-algorithm pqnr
expect_usage cpd counts.tns -r 2 --method apr --apr-algorithm pdnr --kappa 0.1
expect_usage cpd counts.tns -r 2 --apr-algorithm pdnr
expect 0 "cpd --help" cpd --help
check "cpd --help: --method apr" grep -q -- '--method M' out.txt
finish
