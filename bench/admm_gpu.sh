#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Constrained CP on a GPU (issue 44): a non-negative (AO-ADMM) iteration
# against an unconstrained CP-ALS iteration of the same run, on uber-apr14
# and a generated skewed tensor, fp64 and fp32.
#
# usage: bench/admm_gpu.sh TENFOLD DATA
#   TENFOLD  the tool, built with CUDA (build/release/tenfold)
#   DATA     the folder of the shared tensors (uber-apr14.tns.xz)
#
# Settings: RANK=32, ITERS=12, SPEC (the generated tensor, a --gen spec;
# default dims=2000000x1000000x200000,nnz=20000000,alpha=0.7,seed=7; empty:
# skipped), EXTRA (more cpd options for every run, e.g. "--gpus 2"), OUT (a
# folder for the JSON reports; default a temporary one, removed). Each run
# is `tenfold cpd -r RANK -i ITERS --tol 0 --device gpu --nowrite` with
# --nonneg (--nonneg-method admm) or without; one row per (tensor,
# precision): the median seconds of iterations 2.. of each, their ratio
# (the issue's goal: <= 1.5), the constrained run's inner iterations per
# mode update and its dense seconds per iteration (the JSON's
# timing_seconds.dense over the iterations), and both fits. This script
# builds and installs nothing.
set -u
if [ $# -ne 2 ]; then
    sed -n '7,9p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
TF=$1
DATA=$2
RANK=${RANK:-32}
ITERS=${ITERS:-12}
SPEC=${SPEC-dims=2000000x1000000x200000,nnz=20000000,alpha=0.7,seed=7}
EXTRA=${EXTRA:-}
if [ -n "${OUT:-}" ]; then
    mkdir -p "$OUT" || exit 1
    W=$OUT
else
    W=$(mktemp -d) || exit 1
    trap 'rm -rf "$W"' EXIT
fi
run() { # NAME INPUT... : one cpd run, its JSON in $W/NAME.json
    local name=$1
    shift
    # shellcheck disable=SC2086
    timeout 590 "$TF" cpd "$@" -r "$RANK" -i "$ITERS" --tol 0 --device gpu --nowrite $EXTRA \
        --json "$W/$name.json" >"$W/$name.log" 2>&1 || { echo "$name: failed: $(tail -1 "$W/$name.log")" >&2; return 1; }
}
summary() { # ALS_JSON ADMM_JSON LABEL
    python3 - "$@" <<'PY'
import json, statistics, sys
a, c = (json.load(open(p)) for p in sys.argv[1:3])
med = lambda d: statistics.median(it["seconds"] for it in d["iterations"][1:])
n = len(c["iterations"])
inner = c["result"].get("inner_iterations", 0) / (n * c["tensor"]["order"])
dense = c["timing_seconds"]["dense"] / n
print(f"| {sys.argv[3]} | {med(a)*1e3:.3f} | {med(c)*1e3:.3f} | {med(c)/med(a):.2f} | {inner:.1f} | "
      f"{dense*1e3:.3f} | {a['result']['fit']:.6f} | {c['result']['fit']:.6f} |")
PY
}
echo "| tensor, precision | CP-ALS ms/it | --nonneg ms/it | ratio (goal <= 1.5) | inner per update | dense ms/it (nonneg) | fit ALS | fit nonneg |"
echo "|---|---|---|---|---|---|---|---|"
inputs=("uber" "$DATA/uber-apr14.tns.xz")
[ -n "$SPEC" ] && inputs+=("skew" "--gen $SPEC")
for ((k = 0; k < ${#inputs[@]}; k += 2)); do
    name=${inputs[k]}
    # shellcheck disable=SC2206
    input=(${inputs[k + 1]})
    for prec in double single; do
        run "$name-$prec-als" "${input[@]}" --precision "$prec" &&
            run "$name-$prec-admm" "${input[@]}" --precision "$prec" --nonneg --nonneg-method admm &&
            summary "$W/$name-$prec-als.json" "$W/$name-$prec-admm.json" "$name $prec"
    done
done
