# SPDX-License-Identifier: BSD-3-Clause
# tenfold cpd --nonneg / --l1 / --l2 (issue 44: AO-ADMM and HALS on the CP
# update seam of issue 42): the run says which method ran (--nonneg-method
# auto: HALS for non-negativity alone, AO-ADMM with a penalty; and why), its
# constraints per mode and the inner iterations (text and JSON); no factor
# entry is negative under --nonneg (all modes, listed modes, with --l1, both
# methods); larger --l1, more zeros; --l2 shrinks the weights; a plain run
# stays CP-ALS; bad values are one usage line naming the option and what it
# takes; a GPU run (one GPU, two where there are) equals the CPU's, and without a
# GPU fails before the input is read, never running unconstrained; HALS on a GPU
# is refused before the read; --device auto runs a small one on the CPU.
source "$(dirname "$0")/lib/common.bash"

"$TF" gen -o small.tns --dims 30,20,10 --nnz 1500 --alpha 0.4 --rank 3 --seed 2 >/dev/null 2>&1 ||
    bad "gen small.tns"
have_python=0
command -v python3 >/dev/null && have_python=1

# no_negative STEM MODES: no entry of STEM.mode<m>.mat (m in MODES) or STEM.lambda.mat is below 0 (nor -0)
no_negative() {
    local stem=$1 f; shift
    for f in "$@" lambda; do
        [ "$f" = lambda ] || f=mode$f
        if [ ! -s "$stem.$f.mat" ] || grep -v '^#' "$stem.$f.mat" | tr -s ' \t' '\n\n' | grep -q '^-'; then
            return 1
        fi
    done
}

expect 0 "cpd --nonneg" cpd small.tns -r 4 -i 20 --nonneg -o nn --json nn.json
cp out.txt nn.txt
check "--nonneg: the update line names HALS, every mode and why auto chose it" \
    grep -qx 'update: HALS (mode 1 nonneg; mode 2 nonneg; mode 3 nonneg), at most 5 column sweeps, tol 1e-08; --nonneg-method auto: non-negativity alone: HALS.*' nn.txt
check "--nonneg: each iteration line has its sweeps" grep -qE '^  its = +1 .* inner = [1-9][0-9]*$' nn.txt
check "--nonneg: the summary has the sweeps" grep -qE '^HALS: [1-9][0-9]* column sweeps \(' nn.txt
check "--nonneg: no factor entry below zero" no_negative nn 1 2 3
if [ "$have_python" -eq 1 ]; then
    check "--nonneg --json: algorithm, its choice, constraints per mode, sweeps summed" python3 -c '
import json
r = json.load(open("nn.json"))
o = r["options"]
assert o["algorithm"] == "HALS" and o["nonneg_method"] == "auto" and o["hals_max_inner"] == 5 and o["hals_tol"] == 1e-8
assert o["algorithm_choice"].startswith("non-negativity alone: HALS") and "admm_max_inner" not in o
assert [c["mode"] for c in o["constraints"]] == [1, 2, 3]
assert all(c["nonneg"] and c["l1"] == 0 and c["l2"] == 0 for c in o["constraints"])
n = r["result"]["inner_iterations"]
assert n > 0 and n == sum(i["inner_iterations"] for i in r["iterations"])'
fi
expect 0 "cpd --nonneg --nonneg-method admm" cpd small.tns -r 4 -i 20 --nonneg --nonneg-method admm -o nna --json nna.json
check "--nonneg-method admm: the update line names AO-ADMM and every mode" \
    grep -qx 'update: AO-ADMM (mode 1 nonneg; mode 2 nonneg; mode 3 nonneg), at most 25 inner iterations, tol 0.01' out.txt
check "--nonneg-method admm: the summary has the inner iterations" grep -qE '^AO-ADMM: [1-9][0-9]* inner iterations \(' out.txt
check "--nonneg-method admm: no factor entry below zero" no_negative nna 1 2 3
if [ "$have_python" -eq 1 ]; then
    check "--nonneg-method admm --json: algorithm AO-ADMM, its limits" python3 -c '
import json
o = json.load(open("nna.json"))["options"]
assert o["algorithm"] == "AO-ADMM" and o["nonneg_method"] == "admm" and o["admm_max_inner"] == 25
assert o["admm_tol"] == 0.01 and "algorithm_choice" not in o and "hals_max_inner" not in o'
fi
expect 0 "cpd --nonneg 2,3 --nonneg-method hals --l1 0.5@2 --hals-inner 3 --hals-tol 0" \
    cpd small.tns -r 4 -i 10 --nonneg 2,3 --nonneg-method hals --l1 0.5@2 --l2 1@1 --hals-inner 3 --hals-tol 0 -o hl
check "--nonneg-method hals with l1 and l2: the update line" \
    grep -qx 'update: HALS (mode 1 l2 1; mode 2 nonneg, l1 0.5; mode 3 nonneg), at most 3 column sweeps, tol 0' out.txt
check "--hals-inner 3 --hals-tol 0: 3 sweeps per non-negative mode" grep -qE '^  its = +1 .* inner = 6$' out.txt
check "--nonneg-method hals: modes 2 and 3 non-negative" no_negative hl 2 3
expect 0 "cpd --nonneg --hals-inner 2 (implies hals)" cpd small.tns -r 4 -i 2 --nonneg --hals-inner 2 --nowrite
check "--hals-inner implies HALS" grep -qE '^update: HALS .* at most 2 column sweeps, tol 1e-08$' out.txt

# modes listed (separate or inline value), and combined with --l1 and --l2
expect 0 "cpd --nonneg 1,3 --l1 0.5@2 --l2 0.1" cpd small.tns -r 4 -i 10 --nonneg 1,3 --l1 0.5@2 --l2 0.1 -o some --json some.json
check "--nonneg 1,3 --l1 0.5@2 --l2 0.1: the update line (auto: AO-ADMM for the penalties)" \
    grep -qx 'update: AO-ADMM (mode 1 nonneg, l2 0.1; mode 2 l1 0.5, l2 0.1; mode 3 nonneg, l2 0.1), at most 25 inner iterations, tol 0.01; --nonneg-method auto: l1 / l2 penalties: AO-ADMM' out.txt
check "--nonneg 1,3: modes 1 and 3 non-negative" no_negative some 1 3
expect 0 "cpd --nonneg=2 --admm-inner 5 --admm-tol 0.001" cpd small.tns -r 4 -i 5 --nonneg=2 --admm-inner 5 --admm-tol 0.001 -o two --json two.json
check "--nonneg=2: mode 2 alone (--admm-inner implies AO-ADMM)" grep -qx 'update: AO-ADMM (mode 1 none; mode 2 nonneg; mode 3 none), at most 5 inner iterations, tol 0.001' out.txt
check "--nonneg=2: mode 2 non-negative" no_negative two 2
if [ "$have_python" -eq 1 ]; then
    check "--json: the constraints as given, at most 5 inner iterations a mode" python3 -c '
import json
c = json.load(open("some.json"))["options"]["constraints"]
assert [(x["nonneg"], x["l1"], x["l2"]) for x in c] == [(True, 0, 0.1), (False, 0.5, 0.1), (True, 0, 0.1)], c
r = json.load(open("two.json"))
assert [x["nonneg"] for x in r["options"]["constraints"]] == [False, True, False]
assert all(0 < i["inner_iterations"] <= 5 for i in r["iterations"])'
fi

# --l1: more zeros as it grows; --l2: smaller weights
zeros() { cat "$1".mode*.mat | tr -s ' \t' '\n\n' | grep -cE '^[+-]?0(\.0*)?(e[+-]?0+)?$'; }
sumsq() { tr -s ' \t' '\n\n' < "$1.lambda.mat" | awk 'NF { s += $1 * $1 } END { printf "%.17g\n", s }'; }
prev_z=-1; prev_n=
for l in 0.01 1 10; do
    expect 0 "cpd --nonneg --l1 $l" cpd small.tns -r 4 -i 30 --nonneg --l1 $l -o l1_$l -q
    z=$(zeros l1_$l)
    check "--l1 $l: no fewer zeros ($z) than the smaller penalty ($prev_z)" test "$z" -ge "$prev_z"
    prev_z=$z
done
check "--l1 10 zeros more entries than --l1 0.01" test "$(zeros l1_10)" -gt "$(zeros l1_0.01)"
for l in 0 1 100; do
    expect 0 "cpd --l2 $l" cpd small.tns -r 4 -i 30 --l2 $l -o l2_$l -q
done
check "--l2: the weights shrink as it grows" awk -v a="$(sumsq l2_0)" -v b="$(sumsq l2_1)" -v c="$(sumsq l2_100)" \
    'BEGIN { exit !(a > b && b > c) }'

# a plain run stays CP-ALS: no update line, no inner counts
expect 0 "cpd (ALS)" cpd small.tns -r 4 -i 5 --nowrite --json als.json
check "ALS: no update line" bash -c '! grep -qE "^update:|inner =|^AO-ADMM" out.txt'
if [ "$have_python" -eq 1 ]; then
    check "ALS --json: algorithm CP-ALS, no constraints, no inner iterations" python3 -c '
import json
r = json.load(open("als.json"))
assert r["options"]["algorithm"] == "CP-ALS" and "constraints" not in r["options"]
assert "inner_iterations" not in r["result"] and "inner_iterations" not in r["iterations"][0]'
fi

# the bundled real tensor
if [ -f "$REPO/uber-apr14.tns.xz" ]; then
    expect 0 "uber-apr14 --nonneg" cpd "$REPO/uber-apr14.tns.xz" -r 8 -i 5 --nonneg -o uber -q
    check "uber-apr14 --nonneg: no factor entry below zero" no_negative uber 1 2 3 4
fi

# usage errors: one line naming the option and what it takes
usage_says() {
    local pattern=$1; shift
    expect_usage "$@"
    if grep -qE -- "$pattern" err.txt; then ok; else bad "tenfold $*: message does not match /$pattern/: $(head -1 err.txt)"; fi
}
modes_msg="expected 1-based modes like 1,3 \(numbers 1\.\.16, comma-separated\), got"
usage_says "^tenfold cpd: --nonneg: $modes_msg '0'$" cpd small.tns -r 2 --nonneg 0
usage_says "^tenfold cpd: --nonneg: $modes_msg '1,,3'$" cpd small.tns -r 2 --nonneg 1,,3
usage_says "^tenfold cpd: --nonneg: $modes_msg '17'$" cpd small.tns -r 2 --nonneg 17
usage_says "^tenfold cpd: --nonneg: $modes_msg '2x'$" cpd small.tns -r 2 --nonneg 2x
usage_says "^tenfold cpd: --nonneg: $modes_msg 'one'$" cpd small.tns -r 2 --nonneg=one
usage_says "^tenfold cpd: --l1 LAMBDA: expected a finite number >= 0, got 'abc'$" cpd small.tns -r 2 --l1 abc
usage_says "^tenfold cpd: --l1 LAMBDA: expected a finite number >= 0, got '-1'$" cpd small.tns -r 2 --l1 -1
usage_says "^tenfold cpd: --l2 LAMBDA: expected a finite number >= 0, got 'inf'$" cpd small.tns -r 2 --l2 inf
usage_says "^tenfold cpd: --l1: expected LAMBDA\[@MODES\] \(a number >= 0, then optionally @ and 1-based modes like 1,3\), got '@2'$" \
    cpd small.tns -r 2 --l1 @2
usage_says "^tenfold cpd: --l1: $modes_msg '0.1@'$" cpd small.tns -r 2 --l1 0.1@
usage_says "^tenfold cpd: --l2: $modes_msg '0.1@0'$" cpd small.tns -r 2 --l2 0.1@0
usage_says "^tenfold cpd: --admm-inner: expected an integer in" cpd small.tns -r 2 --nonneg --admm-inner 0
usage_says "^tenfold cpd: --admm-tol: expected a number in \[0, 1\), got '1'$" cpd small.tns -r 2 --nonneg --admm-tol 1
usage_says "^tenfold cpd: --admm-inner: sets AO-ADMM's inner iterations, which run only with --nonneg, --l1 or --l2$" \
    cpd small.tns -r 2 --admm-inner 5
usage_says "^tenfold cpd: option --l1 needs a value$" cpd small.tns -r 2 --l1
usage_says "^tenfold cpd: --nonneg-method: expected one of auto\|admm\|hals, got 'mu'$" cpd small.tns -r 2 --nonneg --nonneg-method mu
usage_says "^tenfold cpd: --nonneg-method: chooses how the constraints are imposed, which run only with --nonneg, --l1 or --l2$" \
    cpd small.tns -r 2 --nonneg-method hals
usage_says "^tenfold cpd: --hals-inner: sets HALS's column sweeps, which run only with --nonneg, --l1 or --l2$" \
    cpd small.tns -r 2 --hals-inner 3
usage_says "^tenfold cpd: --hals-tol: expected a number in \[0, 1\), got '2'$" cpd small.tns -r 2 --nonneg --hals-tol 2
usage_says "^tenfold cpd: --admm-inner: sets AO-ADMM's inner iterations, but --nonneg-method hals runs HALS" \
    cpd small.tns -r 2 --nonneg --nonneg-method hals --admm-inner 3
usage_says "^tenfold cpd: --hals-tol: sets HALS's column sweeps, but --nonneg-method admm runs AO-ADMM" \
    cpd small.tns -r 2 --nonneg --nonneg-method admm --hals-tol 0.1
usage_says "^tenfold cpd: --admm-tol and --hals-inner: set the limits of two methods; choose one with --nonneg-method admm\|hals$" \
    cpd small.tns -r 2 --nonneg --admm-tol 0.1 --hals-inner 3
expect_failure "--nonneg-method hals with --l1 on a mode without --nonneg" \
    "^tenfold: cpd: --nonneg-method hals: --l1 on mode 1, which is not --nonneg \(HALS imposes l1 on non-negative modes only; --nonneg-method admm imposes it anywhere\)$" \
    cpd small.tns -r 2 --nonneg 2 --l1 0.1 --nonneg-method hals --nowrite
# a mode the tensor does not have: known once it is read
expect_failure "--nonneg 4 on 3 modes" "^tenfold: cpd: --nonneg: mode 4, but the tensor has 3 modes \(1\.\.3\)$" \
    cpd small.tns -r 2 --nonneg 1,4 --nowrite
expect_failure "--l2 on mode 5" "^tenfold: cpd: --l2: mode 5, but the tensor has 3 modes" cpd small.tns -r 2 --l2 1@5 --nowrite

# GPUs (issue 44): --device gpu runs AO-ADMM: the CPU's fits, inner iterations and
# factors from the same seed, no negative entry in a --nonneg mode; --gpus 2 (on a
# machine with two GPUs) equals one GPU. Without a GPU, --device gpu fails with one
# line before the input is read (never run unconstrained, nor on the CPU).
gpus=$("$TF" info 2>/dev/null | sed -n 's/^gpus: *\([0-9]*\) found.*/\1/p')
if [ "${gpus:-0}" -eq 0 ]; then
    expect 1 "--nonneg --device gpu without a GPU" cpd missing.tns -r 2 --nonneg --device gpu --nowrite
    check "--device gpu without a GPU: the reason" grep -qE "no CUDA device|no CUDA backend|no usable NVIDIA GPU" err.txt
    no_files "no output of a run without its GPU" missing.* ./*.tmp.*
elif [ "$have_python" -eq 1 ]; then
    # same_run A B TOL: fits of every iteration within TOL (absolute), the same inner
    # iterations per iteration, factor files within TOL of their largest entry
    same_run() {
        python3 - "$1" "$2" "$3" <<'PY'
import json, sys
a, b, tol = sys.argv[1], sys.argv[2], float(sys.argv[3])
ra, rb = json.load(open(a + ".json")), json.load(open(b + ".json"))
fa, fb = [i["fit"] for i in ra["iterations"]], [i["fit"] for i in rb["iterations"]]
assert len(fa) == len(fb) and max(abs(x - y) for x, y in zip(fa, fb)) <= tol, (fa, fb)
ia, ib = [i["inner_iterations"] for i in ra["iterations"]], [i["inner_iterations"] for i in rb["iterations"]]
assert ia == ib and sum(ia) > 0, (ia, ib)
def load(p):
    return [[float(x) for x in l.split()] for l in open(p) if l.strip() and not l.startswith("#")]
for f in ["mode1", "mode2", "mode3", "lambda"]:
    x, y = load(a + "." + f + ".mat"), load(b + "." + f + ".mat")
    scale = max(abs(v) for r in x for v in r) or 1.0
    d = max(abs(u - v) for r, s in zip(x, y) for u, v in zip(r, s))
    assert len(x) == len(y) and d <= tol * scale, (f, d, scale)
PY
    }
    cons=(--nonneg 1,2 --l1 0.2@2 --l2 0.1@3 --admm-tol 0.005)
    expect 0 "AO-ADMM on the CPU" cpd small.tns -r 4 -i 10 --tol 0 "${cons[@]}" --device cpu -o g_cpu --json g_cpu.json
    expect 0 "AO-ADMM on the GPU" cpd small.tns -r 4 -i 10 --tol 0 "${cons[@]}" --device gpu -o g_one --json g_one.json
    check "--device gpu: the plan is the GPU's" grep -qE '^plan: gpu ' out.txt
    check "--device gpu: the update line" \
        grep -qx 'update: AO-ADMM (mode 1 nonneg; mode 2 nonneg, l1 0.2; mode 3 l2 0.1), at most 25 inner iterations, tol 0.005' out.txt
    check "--device gpu: fits, inner iterations and factors equal the CPU's to 1e-9" same_run g_cpu g_one 1e-9
    check "--device gpu: modes 1 and 2 non-negative" no_negative g_one 1 2
    if [ "$gpus" -ge 2 ]; then
        export NCCL_NVLS_ENABLE=0
        expect 0 "AO-ADMM on two GPUs" cpd small.tns -r 4 -i 10 --tol 0 "${cons[@]}" --gpus 2 -o g_two --json g_two.json
        check "--gpus 2: the plan says so" grep -Eq "^plan: 2 GPUs, (peer copies|NCCL): " out.txt
        check "--gpus 2: fits, inner iterations and factors equal one GPU's to 1e-9" same_run g_one g_two 1e-9
        check "--gpus 2: modes 1 and 2 non-negative" no_negative g_two 1 2
    fi
fi
# HALS on a GPU: refused before the input is read (no such file here)
expect_failure "--nonneg-method hals --device gpu" \
    "^tenfold: cpd: HALS is not available on the GPU yet \(AO-ADMM is: --nonneg-method admm; or the CPU: --device cpu\)$" \
    cpd missing.tns -r 2 --nonneg --nonneg-method hals --device gpu --nowrite
no_files "no output of a refused run" missing.* ./*.tmp.*
# --device auto: a problem this small runs on the CPU (the cost rule)
expect 0 "--nonneg --device auto" cpd small.tns -r 2 -i 3 --nonneg --device auto --nowrite
check "--device auto: the plan is the CPU's" grep -qE '^plan: cpu ' out.txt

check "cpd --help names --nonneg, --l1, --l2, --nonneg-method, --admm-inner, --admm-tol, --hals-inner, --hals-tol" bash -c \
    'h=$("$0" cpd --help); for o in "--nonneg \[MODES\]" "--l1 LAMBDA\[@MODES\]" "--l2 LAMBDA\[@MODES\]" "--nonneg-method M" --admm-inner --admm-tol --hals-inner --hals-tol; do grep -qE -- "$o" <<<"$h" || exit 1; done' "$TF"
finish
