#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Sparse Tucker (HOOI) on the CPU, one GPU and two GPUs (issue 47): seconds
# per iteration and the TTMc's share of it, from `tenfold tucker --json`.
#
# usage: bench/tucker_gpu.sh TENFOLD DATA_DIR [OUT_DIR]
#   TENFOLD   the tool of a CUDA build (build/gpu/tenfold)
#   DATA_DIR  the shared tensors (../shared/data): enron-igraphdata,
#             collegemsg, uber-apr14, nycflights13 (.tns.xz)
#   OUT_DIR   where the reports go (default: a temporary directory)
#
# Per tensor and device one row: seconds per iteration (the median of
# iterations 2..ITERS), the TTMc's, the vectors' and the core's share of
# it, the fit after ITERS iterations (tol 0, the same seed: the devices'
# fits must agree to 1e-10; a 'same fit' column says whether they do) and
# the build (sorted copies / trees) seconds. Then the generated tensor of
# 1B non-zeros (scripts/gpu-check 'scale': dims 20M x 10M x 2M, alpha 0.7)
# at ranks 16,16,16 on the GPU(s): the CPU only with BIG_CPU=1 (hours).
# Two GPUs: --gpus 2 (each GPU owns rows of Y_(n); a refusal is shown as
# its one line).
# Settings (environment): CASES (NAME:RANKS words of the shared tensors;
# default the six below; empty: only the 1B tensor), ITERS=5, BIG=1 (0: skip the 1B tensor), BIG_NNZ
# (default 1000000000), BIG_ITERS=3, BIG_CPU=0, RUN_TIMEOUT=1800 seconds a run.
set -uo pipefail
if [ $# -lt 2 ]; then
    sed -n '3,/^set -uo/p' "$0" | sed '$d;s/^# \{0,1\}//' >&2
    exit 2
fi
TF=$1 DATA=$2
OUT=${3:-$(mktemp -d)}
mkdir -p "$OUT"
ITERS=${ITERS:-5} BIG=${BIG:-1} BIG_ITERS=${BIG_ITERS:-3} BIG_CPU=${BIG_CPU:-0}
BIG_NNZ=${BIG_NNZ:-1000000000} RUN_TIMEOUT=${RUN_TIMEOUT:-1800}
export NCCL_NVLS_ENABLE=0

row() { # NAME RANKS DEVICE JSON [BASE_JSON]
    python3 - "$@" <<'PY'
import json, statistics, sys
name, ranks, dev, path = sys.argv[1:5]
base = sys.argv[5] if len(sys.argv) > 5 else None
try:
    r = json.load(open(path))
except Exception:
    print(f"{name:18s} {ranks:12s} {dev:6s} {'failed (see ' + path + '.err)':>40s}")
    sys.exit(0)
it = r["iterations"]
tail = it[1:] if len(it) > 1 else it
s = statistics.median(x["seconds"] for x in tail)
share = lambda k: 100.0 * sum(x[k] for x in tail) / max(sum(x["seconds"] for x in tail), 1e-30)
same = ""
if base:
    try:
        b = json.load(open(base))["iterations"]
        same = "yes" if all(abs(x["fit"] - y["fit"]) <= 1e-10 for x, y in zip(it, b)) and len(it) == len(b) else "NO"
    except Exception:
        same = "-"
print(f"{name:18s} {ranks:12s} {dev:6s} {s:9.4f} {share('ttmc_seconds'):6.1f}% {share('vectors_seconds'):6.1f}% "
      f"{share('core_seconds'):5.1f}% {r['result']['fit']:12.8f} {r['timing_seconds']['build']:8.2f}  {same:4s} "
      f"{r['result'].get('plan', '')}")
PY
}

run() { # JSON ARGS...: one tucker run, its stderr beside the report
    local json=$1
    shift
    rm -f "$json"
    timeout "$RUN_TIMEOUT" "$TF" tucker "$@" -q --json "$json" 2>"$json.err" || true
}

echo "# tenfold tucker, $ITERS iterations (1B: $BIG_ITERS), tol 0; seconds per iteration (median of 2..), shares of it"
printf '%-18s %-12s %-6s %9s %7s %7s %6s %12s %8s  %-4s %s\n' tensor ranks device s/iter ttmc vectors core fit build same plan
CASES=${CASES-enron-igraphdata:8,8,8 collegemsg:8,8,8 uber-apr14:5,5,10,10 nycflights13:5,5,3,5,5 \
enron-igraphdata:16,16,16 uber-apr14:16,16,16,16}
for c in $CASES; do
    name=${c%%:*} ranks=${c#*:}
    f="$DATA/$name.tns.xz"
    [ -f "$f" ] || { echo "$name: $f not found, skipped"; continue; }
    tag="$OUT/$name.${ranks//,/-}"
    run "$tag.cpu.json" "$f" -r "$ranks" -i "$ITERS" --tol 0 --device cpu
    row "$name" "$ranks" cpu "$tag.cpu.json"
    run "$tag.gpu.json" "$f" -r "$ranks" -i "$ITERS" --tol 0 --device gpu
    row "$name" "$ranks" gpu "$tag.gpu.json" "$tag.cpu.json"
    run "$tag.gpu2.json" "$f" -r "$ranks" -i "$ITERS" --tol 0 --gpus 2
    if [ -s "$tag.gpu2.json" ]; then row "$name" "$ranks" 2gpus "$tag.gpu2.json" "$tag.cpu.json"
    else printf '%-18s %-12s %-6s %s\n' "$name" "$ranks" 2gpus "$(head -1 "$tag.gpu2.json.err")"; fi
done

if [ "$BIG" = 1 ]; then
    spec="dims=20000000x10000000x2000000,nnz=$BIG_NNZ,alpha=0.7,seed=7"
    tag="$OUT/big"
    echo "# --gen $spec, ranks 16,16,16"
    run "$tag.gpu.json" --gen "$spec" -r 16,16,16 -i "$BIG_ITERS" --tol 0 --device gpu
    row "gen ${BIG_NNZ}" 16,16,16 gpu "$tag.gpu.json"
    run "$tag.gpu2.json" --gen "$spec" -r 16,16,16 -i "$BIG_ITERS" --tol 0 --gpus 2
    if [ -s "$tag.gpu2.json" ]; then row "gen ${BIG_NNZ}" 16,16,16 2gpus "$tag.gpu2.json" "$tag.gpu.json"
    else printf '%-18s %-12s %-6s %s\n' "gen ${BIG_NNZ}" 16,16,16 2gpus "$(head -1 "$tag.gpu2.json.err")"; fi
    if [ "$BIG_CPU" = 1 ]; then
        run "$tag.cpu.json" --gen "$spec" -r 16,16,16 -i "$BIG_ITERS" --tol 0 --device cpu
        row "gen ${BIG_NNZ}" 16,16,16 cpu "$tag.cpu.json" "$tag.gpu.json"
    fi
fi
echo "# reports: $OUT"
