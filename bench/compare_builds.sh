#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Two builds of the tool side by side in alternating pairs (base, new, base,
# new) on the runs a refactoring must not slow down, on a GPU machine:
#   cpd     CP-ALS, R 32, 20 iterations, tol 0: uber-apr14, wordnet30, a 20M
#           skewed --gen tensor; fp64 and fp32; one GPU
#   big     a --gen tensor of BIG_NNZ (default 1G) non-zeros, 5 iterations, on
#           1 and 2 GPUs (one pair: the generation dominates)
#   ranks   2 MPI ranks of one GPU each on the 20M tensor (when mpirun exists)
#   sddmm   SDDMM plans, K 32, on a generated power-law matrix, 1 and 2 GPUs
# Per run: the median iteration (cpd: the `its =` times after the first) or the
# plan's median run time (sddmm), and the final fit; per case one
# line "CASE base X new Y ratio R fits same|DIFFER". Exit 1 when fits differ.
#
#   bench/compare_builds.sh BASE_TOOL NEW_TOOL DATA_DIR [CASES]   (CASES: cpd,big,ranks,sddmm)
set -u
base=$1 new=$2 data=$3 cases=${4:-cpd,big,ranks,sddmm}
want() { [[ ",$cases," == *",$1,"* ]]; }
BIG_NNZ=${BIG_NNZ:-1G}
DEVICE=${DEVICE:-gpu} # cpu: to try the script on a machine without a GPU
SKEW="--gen dims=2Mx1Mx200k,nnz=20M,alpha=0.7,seed=7"
MPIRUN="mpirun --allow-run-as-root --oversubscribe"
export NCCL_NVLS_ENABLE=0
bad=0
real() { find "$data" -maxdepth 2 -name "$1*" | head -1; }
# run TOOL ARGS...: prints "SECONDS FIT" (median iteration after the first, final fit)
# The iteration times come from the JSON report (`iterations[].seconds`, full
# precision; the text prints milliseconds), the fit from the text.
JSON=$(mktemp /tmp/compare_builds.XXXXXX.json) # the runs' reports, one at a time
trap 'rm -f "$JSON"' EXIT
cpd_run() {
  rm -f "$JSON"
  local out; out=$("$@" --json "$JSON" 2>&1)
  local fit; fit=$(echo "$out" | grep -oE "^final fit: [0-9.e+-]+" | head -1 | awk '{print $3}')
  local med; med=$(python3 -c '
import json, sys
try:
    t = [it["seconds"] for it in json.load(open(sys.argv[1]))["iterations"]][1:]
except Exception:
    t = []
t.sort()
print("%.6f" % (t[len(t) // 2] if len(t) % 2 else (t[len(t) // 2 - 1] + t[len(t) // 2]) / 2) if t else "NA")
' "$JSON")
  [ -z "$fit" ] && { echo "$out" | tail -3 >&2; fit=NA; }
  echo "$med $fit"
}
sddmm_run() {
  local out; out=$("$@" 2>&1)
  # one GPU: the "tenfold ALGO median min GFLOP/s" row; several: the "all" row's median
  local t; t=$(echo "$out" | awk '$1 == "tenfold" && $3 ~ /^[0-9.]+$/ {print $3; exit} $1 == "all" {print $(NF-1); exit}')
  [ -z "$t" ] && { echo "$out" | tail -3 >&2; t=NA; }
  echo "$t -"
}
# case NAME PAIRS KIND ARGS...: alternating pairs, medians over the pairs
compare() {
  local name=$1 pairs=$2 kind=$3; shift 3
  local tb=() tn=() fb="" fn=""
  for ((p = 0; p < pairs; ++p)); do
    for side in base new; do
      local tool=$base; [ $side = new ] && tool=$new
      local r
      # shellcheck disable=SC2086
      if [ "$kind" = sddmm ]; then r=$(sddmm_run "$tool" sddmm "$@"); else r=$(cpd_run $PREFIX "$tool" cpd "$@"); fi
      if [ $side = base ]; then tb+=("${r% *}"); fb="${r#* }"; else tn+=("${r% *}"); fn="${r#* }"; fi
    done
  done
  local mb mn
  mb=$(printf '%s\n' "${tb[@]}" | sort -g | head -1)
  mn=$(printf '%s\n' "${tn[@]}" | sort -g | head -1)
  local same=same; [ "$fb" != "$fn" ] && { same="DIFFER ($fb vs $fn)"; bad=1; }
  awk -v n="$name" -v b="$mb" -v w="$mn" -v s="$same" 'BEGIN {
    r = (b > 0 && w > 0) ? sprintf("%.3f", w / b) : "NA";
    printf "%-34s base %-9s new %-9s new/base %-6s fits %s\n", n, b, w, r, s }'
}
PREFIX=""
if want cpd; then
  for t in uber-apr14 wordnet30; do
    f=$(real $t); [ -n "$f" ] || { echo "$t: not found in $data"; continue; }
    for prec in double single; do
      compare "cpd $t $prec" 2 cpd "$f" -r 32 -i 20 --tol 0 --device $DEVICE --precision $prec --nowrite
    done
  done
  for prec in double single; do
    compare "cpd skew20M $prec" 2 cpd $SKEW -r 32 -i 20 --tol 0 --device $DEVICE --precision $prec --nowrite
  done
fi
if want big; then
  for g in 1 2; do
    compare "cpd gen $BIG_NNZ $g GPU(s)" 1 cpd --gen dims=20Mx10Mx2M,nnz=$BIG_NNZ,alpha=0.7,seed=3 -r 32 -i 5 --tol 0 \
      --device $DEVICE --gpus $g --nowrite
  done
fi
if want ranks && command -v mpirun > /dev/null; then
  PREFIX="$MPIRUN -np 2 -x NCCL_NVLS_ENABLE"
  compare "cpd skew20M 2 MPI ranks" 2 cpd $SKEW -r 32 -i 20 --tol 0 --device $DEVICE --nowrite
  PREFIX=""
fi
if want sddmm; then
  for g in 1 2; do
    compare "sddmm plan K32 $g GPU(s)" 2 sddmm --gen dims=2Mx2M,nnz=200M,alpha=0.7,seed=5 -k 32 --device $DEVICE --gpus $g
  done
fi
exit $bad
