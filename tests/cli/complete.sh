# SPDX-License-Identifier: BSD-3-Clause
# tenfold complete / predict / split (tensor completion, issue 46): split's
# three files (counts, the same split again from the seed, training keeping
# the dims), a line per iteration with training and validation RMSE, the
# summary and test RMSE, the JSON report (result.train_rmse / test_rmse,
# iterations[].train_rmse / val_rmse), -o as a factor set that predict
# evaluates (its values equal to the model's, checked in Python), --init,
# the same numbers on 1 and 2 threads; --method adam (its report, its test
# RMSE near ALS's, the same numbers again from the seed); --device gpu (with
# a GPU: its numbers the CPU's to 1e-10; without: one line); --gpus 2 (with
# two GPUs: one GPU's numbers, its factors equal; without: one line); Adam
# on the GPU (the CPU's epochs to 1e-8) and on 2 GPUs (one GPU's to 1e-9); the
# refusals: --gpus with --device cpu, held-out entries outside the training dims, a singular row
# with --l2 0, --rate without --method adam; observed zeros (entries of value
# 0) kept through split, complete (counted, in the RMSEs) and predict.
LIB=$(cd "$(dirname "$0")/lib" && pwd) # common.bash moves to the scratch directory
source "$LIB/common.bash"

"$TF" gen -o full.tns --dims 40,30,20 --nnz 8000 --rank 3 --seed 5 >/dev/null 2>&1 || bad "gen full.tns"

expect 0 "split" split full.tns --fractions 0.8,0.1,0.1 --seed 3 -o s
check "split: the counts line" grep -q '^split: 8000 entries of full.tns (seed 3): 6400 training, 800 validation, 800 test$' out.txt
check "split: three files" test -s s.train.tns -a -s s.val.tns -a -s s.test.tns
no_files "split: no temporaries left" ./s.*.tmp.*
check "split: every entry once" python3 - full.tns s.train.tns s.val.tns s.test.tns <<'PY'
import sys
def load(p): return sorted(tuple(l.split()) for l in open(p) if l.strip() and not l.startswith("#"))
full = load(sys.argv[1]); parts = [load(p) for p in sys.argv[2:]]
assert sorted(sum(parts, [])) == full
assert [len(p) for p in parts] == [6400, 800, 800], [len(p) for p in parts]
PY
expect 0 "split again" split full.tns --seed 3 -o t -q
check "split: the same from the seed" cmp s.train.tns t.train.tns
expect_usage split full.tns -o u --fractions 0.8,0.3,0.1
expect_usage split full.tns -o u --fractions 0.8,0.2

expect 0 "complete" complete s.train.tns --val s.val.tns --test s.test.tns -r 3 --l2 0.01 -i 30 -t 1 -o m --json m.json
check "complete: a line per iteration" grep -qE '^  its =   1 \(.* s\)  train rmse = [0-9.]+  val rmse = [0-9.]+$' out.txt
check "complete: the start line" grep -q '^complete: ALS, rank 3, l2 0.01, max 30 iterations, tol 0.0001, patience 20, seed 20240601, 6400 training / 800 validation / 800 test entries, 1 thread$' out.txt
check "complete: the test line" grep -qE '^test rmse = [0-9.]+ \(800 held-out entries\)$' out.txt
check "complete: the set" test -s m.mode1.mat -a -s m.mode3.mat -a -s m.lambda.mat -a -s m.ktensor -a -s m.set
check "complete: the report" python3 - m.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
o, it, res = r["options"], r["iterations"], r["result"]
assert r["command"] == "complete" and o["rank"] == 3 and o["l2"] == 0.01 and o["method"] == "als", o
assert 1 <= len(it) <= 30 and [i["iter"] for i in it] == list(range(1, len(it) + 1))
assert all(set(i) >= {"train_rmse", "val_rmse", "objective", "seconds"} for i in it)
best = res["best_iteration"]
assert res["train_rmse"] == it[best - 1]["train_rmse"] and res["val_rmse"] == it[best - 1]["val_rmse"]
assert res["val_rmse"] == min(i["val_rmse"] for i in it)
# a planted rank-3 tensor: the held-out entries are predicted well
assert res["test_rmse"] < 0.05 and res["test_rmse"] < 2 * res["train_rmse"], res
# the objective never rises
obj = [i["objective"] for i in it]
assert all(b <= a * (1 + 1e-12) for a, b in zip(obj, obj[1:])), obj
PY

expect 0 "predict" predict m s.test.tns -o p.tns
check "predict: the line" grep -q '^predict: 800 values of the rank-3 model m at the coordinates of s.test.tns$' out.txt
check "predict: the model's values; their RMSE is the report's" python3 - m p.tns s.test.tns m.json <<'PY'
import json, sys, math
stem, pred, test, rep = sys.argv[1:]
def mat(p): return [[float(x) for x in l.split()] for l in open(p) if l.strip() and not l.startswith("#")]
A = [mat("%s.mode%d.mat" % (stem, m)) for m in (1, 2, 3)]
lam = [r[0] for r in mat(stem + ".lambda.mat")]
def load(p): return [l.split() for l in open(p) if l.strip() and not l.startswith("#") and len(l.split()) == 4]
P, T = load(pred), load(test)
assert len(P) == len(T) == 800
sse = 0.0
for p, t in zip(P, T):
    assert p[:3] == t[:3]
    i = [int(x) - 1 for x in p[:3]]
    m = sum(lam[r] * A[0][i[0]][r] * A[1][i[1]][r] * A[2][i[2]][r] for r in range(3))
    assert abs(float(p[3]) - m) <= 1e-12 * (1 + abs(m)), (p, m)
    sse += (float(t[3]) - m) ** 2
got = json.load(open(rep))["result"]["test_rmse"]
assert abs(math.sqrt(sse / 800) - got) <= 1e-9 * (1 + got), (math.sqrt(sse / 800), got)
PY

# --init: the rank from the files; 1 and 2 threads alike
expect 0 "complete --init" complete s.train.tns --val s.val.tns --init m -i 3 -t 1 --json i1.json -q
expect 0 "complete --init, 2 threads" complete s.train.tns --val s.val.tns --init m -i 3 -t 2 --json i2.json -q
check "complete: 1 and 2 threads alike, rank from --init" python3 - i1.json i2.json <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
assert a["options"]["rank"] == 3
assert [i["train_rmse"] for i in a["iterations"]] == [i["train_rmse"] for i in b["iterations"]]
assert [i["val_rmse"] for i in a["iterations"]] == [i["val_rmse"] for i in b["iterations"]]
PY

# --method adam: a line per epoch, the report's fields as ALS's, the test
# RMSE near ALS's (the same objective), the same numbers again from the seed
# (on the CPU, whose runs repeat bit for bit; the GPU's sums by atomics do not)
expect 0 "complete --method adam" complete s.train.tns --val s.val.tns --test s.test.tns -r 3 --l2 0.01 -i 40 \
    --method adam --rate 0.05 --epoch-iters 200 --samples 640 -t 1 --device cpu -o a --json a.json
check "complete adam: the start line" grep -q '^complete: Adam (Gaussian loss, observed entries), rank 3, l2 0.01, max 40 iterations' out.txt
check "complete adam: a line per epoch" grep -qE '^  its =   1 \(.* s\)  train rmse = [0-9.]+  val rmse = [0-9.]+' out.txt
check "complete adam: the report" python3 - a.json m.json <<'PY'
import json, sys
r, als = (json.load(open(f)) for f in sys.argv[1:])
o, it, res = r["options"], r["iterations"], r["result"]
assert o["method"] == "adam" and o["rate"] == 0.05 and o["epoch_iters"] == 200 and o["samples"] == 640, o
assert r["plan"].startswith("Adam: CPU, samples of the observed entries"), r["plan"]
assert 1 <= len(it) <= 40 and all(set(i) >= {"train_rmse", "val_rmse", "rate", "failed"} for i in it)
best = res["best_iteration"]
assert res["val_rmse"] == it[best - 1]["val_rmse"] and not it[best - 1]["failed"]
assert res["val_rmse"] <= min(i["val_rmse"] for i in it if not i["failed"]) + 1e-4  # --tol's slack
# the same objective as ALS's: the held-out entries predicted about as well
assert res["test_rmse"] < 0.05 and res["test_rmse"] < 1.5 * als["result"]["test_rmse"] + 0.01, (res, als["result"])
PY
expect 0 "complete adam again" complete s.train.tns --val s.val.tns --test s.test.tns -r 3 --l2 0.01 -i 40 \
    --method adam --rate 0.05 --epoch-iters 200 --samples 640 -t 1 --device cpu --json b.json -q
check "complete adam: the same from the seed" python3 - a.json b.json <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
assert [i["val_rmse"] for i in a["iterations"]] == [i["val_rmse"] for i in b["iterations"]]
assert a["result"]["test_rmse"] == b["result"]["test_rmse"]
PY

# observed zeros: 0-valued lines are entries of split, complete and predict
python3 - full.tns z.tns <<'PY'
import sys
out = open(sys.argv[2], "w")
for k, l in enumerate(l for l in open(sys.argv[1]) if l.strip() and not l.startswith("#")):
    f = l.split()
    out.write(" ".join(f[:3] + (["0"] if k % 10 == 3 else [f[3]])) + "\n")  # 800 zeros
PY
expect 0 "split with zeros" split z.tns --seed 3 -o zs
check "split: the zeros counted" grep -q '^split: 8000 entries of z.tns (seed 3; of value 0, kept: 800): 6400 training, 800 validation, 800 test$' out.txt
check "split: the zeros in the files" python3 - zs.train.tns zs.val.tns zs.test.tns <<'PY'
import sys
z = [sum(1 for l in open(p) if l.split() and float(l.split()[3]) == 0) for p in sys.argv[1:]]
assert sum(z) == 800 and all(z), z
open("zeros.txt", "w").write(" ".join(map(str, z)))
PY
expect 0 "complete with zeros" complete zs.train.tns --val zs.val.tns --test zs.test.tns -r 3 --l2 0.01 -i 5 -t 1 -o zm --json zm.json
check "complete: the zeros kept line" grep -q "^observed zeros kept: $(awk '{printf "%s training / %s validation / %s", $1, $2, $3}' zeros.txt) test entries of value 0\$" out.txt
check "complete: the fixes line" grep -q 'explicit zeros kept (observed entries)' out.txt
expect 0 "predict with zeros" predict zm zs.test.tns -o zp.tns
check "complete: zeros in the counts and RMSEs, predict at them" python3 - zm zs.train.tns zs.test.tns zp.tns zm.json zeros.txt <<'PY'
import json, sys, math
stem, train, test, pred, rep, zeros = sys.argv[1:]
z = [int(x) for x in open(zeros).read().split()]
def mat(p): return [[float(x) for x in l.split()] for l in open(p) if l.strip() and not l.startswith("#")]
A = [mat("%s.mode%d.mat" % (stem, m)) for m in (1, 2, 3)]
def load(p): return [l.split() for l in open(p) if l.strip() and not l.startswith("#") and len(l.split()) == 4]
def model(e):
    i = [int(x) - 1 for x in e[:3]]
    return sum(A[0][i[0]][r] * A[1][i[1]][r] * A[2][i[2]][r] for r in range(3))
r = json.load(open(rep))
assert r["input"]["zeros_kept"] == z[0] and r["input"]["zeros_dropped"] == 0, r["input"]
o = r["options"]
assert [o["train_zeros_kept"], o["val_zeros_kept"], o["test_zeros_kept"]] == z, o
assert r["tensor"]["nnz"] == 6400 and o["val_nnz"] == 800 and o["test_nnz"] == 800
for f, key in ((train, "train_rmse"), (test, "test_rmse")):
    E = load(f)
    rmse = math.sqrt(sum((float(e[3]) - model(e)) ** 2 for e in E) / len(E))
    got = r["result"][key]
    assert abs(rmse - got) <= 1e-9 * (1 + got), (key, rmse, got)
P = load(pred)
assert len(P) == 800 and [p[:3] for p in P] == [e[:3] for e in load(test)]
PY

# refusals
# the GPU: with one, --device gpu runs there (the plan and the report say
# so) and its RMSEs per iteration, test RMSE and factors equal the CPU's to
# 1e-10, a singular row failing with the CPU's message; without one it fails
# with one line
gpus=$("$TF" info 2>/dev/null | sed -n 's/^gpus: *\([0-9]*\) found.*/\1/p')
if [ "${gpus:-0}" -ge 1 ]; then
    expect 0 "complete on the CPU" complete s.train.tns --val s.val.tns --test s.test.tns -r 3 --l2 0.01 -i 30 -t 1 \
        --device cpu -o c --json c.json
    expect 0 "complete on the GPU" complete s.train.tns --val s.val.tns --test s.test.tns -r 3 --l2 0.01 -i 30 \
        --device gpu -o g --json g.json
    check "complete on the GPU: the plan" grep -q '^plan: GPU 0, fp64' out.txt
    check "complete: GPU = CPU to 1e-10" python3 - c g <<'PY'
import json, sys
c, g = sys.argv[1:]
rc, rg = (json.load(open(f + ".json")) for f in (c, g))
assert rc["options"]["device"] == "cpu" and rg["options"]["device"] == "gpu", (rc["options"], rg["options"])
def close(a, b): return abs(a - b) <= 1e-10 * max(abs(a), abs(b), 1e-300)
ic, ig = rc["iterations"], rg["iterations"]
assert len(ic) == len(ig), (len(ic), len(ig))
for a, b in zip(ic, ig):
    for k in ("train_rmse", "val_rmse", "objective"):
        assert close(a[k], b[k]), (a["iter"], k, a[k], b[k])
assert close(rc["result"]["test_rmse"], rg["result"]["test_rmse"]), (rc["result"], rg["result"])
def mat(p): return [[float(x) for x in l.split()] for l in open(p) if l.strip() and not l.startswith("#")]
for m in (1, 2, 3):
    A, B = mat(f"{c}.mode{m}.mat"), mat(f"{g}.mode{m}.mat")
    for ra, rb in zip(A, B):
        s = max(max(abs(x) for x in ra), 1e-12)
        assert all(abs(x - y) <= 1e-10 * s for x, y in zip(ra, rb)), (m, ra, rb)
PY
    printf '1 1 1 2\n2 2 2 1\n2 1 2 1\n' > tiny.tns
    expect_failure "complete on the GPU: singular with --l2 0" 'row 1 of mode 1 has a singular system \(1 observed entry for rank 2, pivot 2\): give an L2 penalty > 0 \(--l2\)$' \
        complete tiny.tns -r 2 --l2 0 --device gpu
else
    run_tf complete s.train.tns -r 2 --device gpu -o nogpu
    check "complete --device gpu without a GPU: fails with one line" test "$rc" -ne 0 -a "$(wc -l <err.txt)" -eq 1
    no_files "complete --device gpu without a GPU: nothing written" nogpu.mode1.mat nogpu.set
fi
# several GPUs (--gpus 2; TF_TEST_GPUS=2 makes one GPU two): one GPU's run,
# the factor files the same numbers, a singular row with the one GPU's
# message; without two GPUs, one line before any read and nothing written
if [ "${gpus:-0}" -ge 2 ]; then
    expect 0 "complete on 2 GPUs" complete s.train.tns --val s.val.tns --test s.test.tns -r 3 --l2 0.01 -i 30 \
        --gpus 2 -o g2 --json g2.json
    check "complete on 2 GPUs: the plan" grep -q '^plan: 2 GPUs, fp64' out.txt
    check "complete: 2 GPUs = one GPU (RMSEs to 1e-10, factors equal)" python3 - g g2 <<'PY'
import json, sys
a, b = sys.argv[1:]
ra, rb = (json.load(open(f + ".json")) for f in (a, b))
assert rb["options"]["device"] == "gpu", rb["options"]
def close(x, y): return abs(x - y) <= 1e-10 * max(abs(x), abs(y), 1e-300)
ia, ib = ra["iterations"], rb["iterations"]
assert len(ia) == len(ib), (len(ia), len(ib))
for x, y in zip(ia, ib):
    for k in ("train_rmse", "val_rmse", "objective"):
        assert close(x[k], y[k]), (x["iter"], k, x[k], y[k])
assert close(ra["result"]["test_rmse"], rb["result"]["test_rmse"]), (ra["result"], rb["result"])
def mat(p): return [[float(v) for v in l.split()] for l in open(p) if l.strip() and not l.startswith("#")]
for m in (1, 2, 3):
    assert mat(f"{a}.mode{m}.mat") == mat(f"{b}.mode{m}.mat"), m
PY
    expect_failure "complete on 2 GPUs: singular with --l2 0" 'row 1 of mode 1 has a singular system \(1 observed entry for rank 2, pivot 2\): give an L2 penalty > 0 \(--l2\)$' \
        complete tiny.tns -r 2 --l2 0 --gpus 2
else
    run_tf complete s.train.tns -r 2 --gpus 2 -o nogpus
    check "complete --gpus 2 without two GPUs: fails with one line" test "$rc" -ne 0 -a "$(wc -l <err.txt)" -eq 1
    no_files "complete --gpus 2 without two GPUs: nothing written" nogpus.mode1.mat nogpus.set
fi
run_tf complete s.train.tns -r 2 --gpus 2 --device cpu
check "complete: --gpus with --device cpu is a usage error" test "$rc" -eq 2
# Adam on the GPU: the CPU's draws, the gradient by atomics (sums in
# another order): the CPU's epochs to 1e-8, with a small sample and with
# every entry; on 2 GPUs one GPU's to 1e-9; without a GPU one line, nothing written
adam=(s.train.tns --val s.val.tns --test s.test.tns -r 3 --l2 0.01 -i 8 -t 1 --method adam --rate 0.02
      --epoch-iters 50)
adam_same() { # A B TOL
    python3 - "$@" <<'PY'
import json, sys
a, b, tol = sys.argv[1], sys.argv[2], float(sys.argv[3])
ra, rb = (json.load(open(f + ".json")) for f in (a, b))
def close(x, y): return abs(x - y) <= tol * max(abs(x), abs(y), 1e-300)
ia, ib = ra["iterations"], rb["iterations"]
assert len(ia) == len(ib) and len(ia) >= 3, (len(ia), len(ib))
for x, y in zip(ia, ib):
    for k in ("train_rmse", "val_rmse", "objective"):
        assert close(x[k], y[k]), (x["iter"], k, x[k], y[k])
assert close(ra["result"]["test_rmse"], rb["result"]["test_rmse"]), (ra["result"], rb["result"])
PY
}
if [ "${gpus:-0}" -ge 1 ]; then
    for smp in 400 100000; do
        expect 0 "adam on the CPU, samples $smp" complete "${adam[@]}" --samples $smp --device cpu -o ac$smp --json ac$smp.json
        expect 0 "adam on the GPU, samples $smp" complete "${adam[@]}" --samples $smp --device gpu -o ag$smp --json ag$smp.json
        check "adam on the GPU: the plan" grep -q '^plan: Adam: GPU 0, fp64, observed-entry samples' out.txt
        check "adam: GPU = CPU to 1e-8, samples $smp" adam_same ac$smp ag$smp 1e-8
        if [ "${gpus:-0}" -ge 2 ]; then
            expect 0 "adam on 2 GPUs, samples $smp" complete "${adam[@]}" --samples $smp --gpus 2 -o a2g$smp --json a2g$smp.json
            check "adam on 2 GPUs: the plan" grep -q '^plan: Adam: 2 GPUs, fp64, observed-entry samples' out.txt
            check "adam: 2 GPUs = one GPU to 1e-9, samples $smp" adam_same ag$smp a2g$smp 1e-9
        fi
    done
else
    run_tf complete s.train.tns -r 2 --method adam --device gpu -o noadam
    check "adam --device gpu without a GPU: fails with one line" test "$rc" -ne 0 -a "$(wc -l <err.txt)" -eq 1
    no_files "adam --device gpu without a GPU: nothing written" noadam.mode1.mat noadam.set
fi
printf '1 1 1 2\n41 2 2 1\n' > far.tns
expect_failure "complete: held-out entry outside the dims" 'complete: test entry 2 has mode-1 index 41, outside the training tensor.s 1\.\.40$' \
    complete s.train.tns -r 2 --test far.tns -o bad
no_files "complete: nothing written on failure" bad.mode1.mat bad.set
printf '1 1 1 2\n2 2 2 1\n2 1 2 1\n' > tiny.tns
expect_failure "complete: singular with --l2 0" 'row 1 of mode 1 has a singular system \(1 observed entry for rank 2, pivot 2\): give an L2 penalty > 0 \(--l2\)$' \
    complete tiny.tns -r 2 --l2 0
printf '1 1 2\n' > far2.tns
expect_failure "predict: order" 'predict: far2.tns has 2 modes, the model m 3$' predict m far2.tns -o q.tns
expect_failure "predict: outside the model" 'predict: far.tns: tf_complete_predict: entry 2 has mode-1 index 41, outside the model.s 1\.\.40$' \
    predict m far.tns -o q.tns
no_files "predict: nothing written on failure" q.tns
expect_usage complete s.train.tns
expect_usage complete s.train.tns -r 2 --l2 -1
expect_usage complete s.train.tns -r 2 --method sgd
expect_usage complete s.train.tns -r 2 --rate 0.1
expect_usage complete s.train.tns -r 2 --method adam --epoch-iters 0
expect_usage predict m s.test.tns
finish
