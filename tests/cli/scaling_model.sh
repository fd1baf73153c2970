# SPDX-License-Identifier: BSD-3-Clause
# bench/scaling_model.py (issue 49 item 6, docs/SCALING.md): the model of time
# per iteration past one node. Its one-GPU predictions reproduce the measured
# one-GPU points exactly (they calibrate it), every measured point of the
# validation table lies within 10 %, the parts add up to the whole, more link
# bandwidth never makes an iteration slower, the MTTKRP share falls as 1/P,
# the bounds are ordered (hierarchical + overlap <= ring <= flat without
# overlap), the socket run's link rate inverts the exchange formula, and bad
# input is one line on stderr with exit 2. Python 3 alone (no numpy).
MODEL=$(cd "$(dirname "$0")/../../bench" && pwd)/scaling_model.py
LIB=$(cd "$(dirname "$0")/lib" && pwd) # common.bash moves to the scratch directory
source "$LIB/common.bash"

if ! command -v python3 >/dev/null; then
    echo "$NAME: skipped (no python3)"
    exit 77
fi

check "model: the tables print" python3 "$MODEL"
python3 "$MODEL" >tables.txt 2>&1 || bad "model: the tables exit 0"
check "model: the validation table" grep -q '^| H200 | fp64 | 4 | peer | 0.097 | ' tables.txt
check "model: the 4 x 8 prediction" grep -q '^| dims x10 (200Mx100Mx20M) | fp64 | .*does not fit' tables.txt
check "model: the node sweep" grep -q '^| 4 | 32 | ' tables.txt
python3 "$MODEL" --json >model.json 2>err.txt || bad "model --json: $(head -c 300 err.txt)"

check "model: one GPU reproduces its measured point, all within 10 %" python3 - model.json <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))["validation"]
assert len(v) >= 10, len(v)
ones = [r for r in v if r["gpus"] == 1]
assert len(ones) >= 3
for r in ones:
    assert abs(r["model"] - r["measured"]) < 1e-12, r
    assert r["exchange"] == 0 and r["exchange_exposed"] == 0, r
for r in v:
    assert abs(r["rel_error"]) < 0.10, r
    assert r["model"] <= r["model_no_overlap"] + 1e-15, r
PY

check "model: parts add up, bounds ordered, the 10B prediction" python3 - model.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["prediction"] + d["sweep"]:
    assert r["low"] <= r["expected"] <= r["high"], r
    for how, p in r["parts"].items():
        whole = p["mttkrp"] + p["dense"] + p["sync"]
        assert abs(p["t_overlap"] - (whole + p["exchange_exposed"])) < 1e-12, (how, p)
        assert abs(p["t_none"] - (whole + p["exchange"])) < 1e-12, (how, p)
        assert 0 <= p["exchange_exposed"] <= p["exchange"] + 1e-15, (how, p)
    assert r["parts"]["hierarchical"]["exchange"] <= r["parts"]["ring"]["exchange"] <= r["parts"]["flat"]["exchange"]
p = d["prediction"]
assert [r["nnz"] for r in p] == [10e9] * 4 and all(r["nodes"] == 4 and r["gpus_per_node"] == 8 for r in p)
# past one node the exchange falls no faster than 1/P, the MTTKRP as 1/P
s = d["sweep"]
m = [r["parts"]["ring"]["mttkrp"] * r["nodes"] for r in s]
assert max(m) - min(m) < 1e-9 * max(m), m
x = [r["parts"]["ring"]["exchange"] for r in s]
assert all(b >= a - 1e-15 for a, b in zip(x, x[1:])), x
t = [r["expected"] for r in s]
assert all(b < a for a, b in zip(t, t[1:])), t
PY

# more bandwidth never slower; twice the non-zeros on twice the GPUs: the MTTKRP unchanged
check "model: monotonic in the link rates" python3 - "$MODEL" <<'PY'
import json, subprocess, sys
def run(*a):
    out = subprocess.run([sys.executable, sys.argv[1], "--predict", "--json"] + list(a),
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)
for flag in ("--net-gbs", "--nv-gbs"):
    prev = None
    for bw in ("5", "25", "50", "100", "400", "1000"):
        r = run("--nodes", "4", "--gpus-per-node", "8", flag, bw)
        t = (r["low"], r["expected"], r["high"])
        if prev:
            assert all(b <= a for a, b in zip(prev, t)), (flag, bw, prev, t)
        prev = t
    assert prev[0] < run("--nodes", "4", "--gpus-per-node", "8", flag, "5")["low"]
a = run("--nnz", "5e9", "--nodes", "2", "--dims", "1e6,1e6,1e6")
b = run("--nnz", "10e9", "--nodes", "4", "--dims", "1e6,1e6,1e6")
assert abs(a["parts"]["ring"]["mttkrp"] - b["parts"]["ring"]["mttkrp"]) < 1e-12
# fp32 moves half the bytes of fp64
c = run("--fp32", "--nodes", "4")
d = run("--nodes", "4")
assert abs(2 * c["parts"]["flat"]["exchange"] - d["parts"]["flat"]["exchange"]) < 1e-9
PY

check "model: the socket run's link rate inverts the exchange" python3 - "$MODEL" <<'PY'
import importlib.util, sys
spec = importlib.util.spec_from_file_location("m", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
dims = m.T1B["dims"]
rate = m.socket_rate(2.0, 1e9, dims, 32, 8)
x = sum(m.exchange(i * 32 * 8, 2, 1, 300e9, rate * 1e9, "ring") for i in dims)
assert abs(x - 2.0) < 1e-9, (rate, x)
PY
python3 "$MODEL" --socket-run 2.0 >sock.txt 2>&1 || bad "model --socket-run"
check "model: --socket-run prints the rate" grep -q '^socket transport: 2.05 GB/s per rank$' sock.txt

for args in "--rank 0" "--nodes 0" "--dims 5" "--dims a,b" "--net-gbs -1" "--socket-run 0" "--bogus"; do
    # shellcheck disable=SC2086
    python3 "$MODEL" $args >out.txt 2>err.txt
    rc=$?
    if [ "$rc" -ne 2 ] || [ "$(wc -l <err.txt)" -ne 1 ] || ! grep -q '^scaling_model.py: ' err.txt || [ -s out.txt ]; then
        bad "model $args: exit $rc (expected 2), stderr: $(head -c 300 err.txt)"
    else
        ok
    fi
done

finish
