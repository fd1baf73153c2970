#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# CP-APR on GPUs (issue 45): one GPU against two (--gpus 2) on a generated
# skewed count tensor, and one GPU with its copies streamed from host memory
# (--memory-limit), then the 1B-non-zero skewed count tensor on two GPUs,
# each run's time per outer iteration beside the bound it is measured
# against.
#
# usage: bench/cp_apr_gpu.sh TENFOLD
#   TENFOLD  the tool, built with CUDA (build/release/tenfold)
#
# Settings: SPEC (the 1-vs-2-GPU tensor, a `--gen` spec; default
# dims=4000000x2000000x400000,nnz=100000000,alpha=0.7,seed=7,counts=3),
# BIG (the two-GPU tensor; default the same at 1B non-zeros,
# dims=20000000x10000000x2000000,nnz=1000000000,alpha=0.7,seed=7,counts=3;
# empty: skipped), BIG_GPUS (the GPU counts the big tensor runs on, default
# "2"; "1 2" adds one GPU), SMALL=1 (0: only the big tensor), RANK=16, ITERS=5 (outer iterations), INNER=10, HBM (bytes
# per second of one GPU's memory, default 4.8e12: an H200), STREAM_LIMIT (the
# --memory-limit of the streamed run, default 3G: less than the 100M
# tensor's 6 GB of copies; empty: skipped), H2D (host-to-device bytes per
# second, default 5e10: the streamed run's bound), RUN_TIMEOUT=590
# seconds per run, OUT (a directory for the reports; default a temporary
# one, removed). One row per run: the plan, the build seconds, the median
# seconds of outer iterations 2.. (the first has no scooch), their Phi /
# dense / log-likelihood seconds per iteration, the inner iterations per
# outer iteration and the bound: the bytes the Phi passes must read per
# outer iteration -- per pass a mode's copy of the non-zeros (N index
# arrays of 4 bytes and the values, 8) -- over the GPUs' memory bandwidth
# (the factor rows the pass gathers come on top: the bound is a floor);
# streamed, the same bytes over the host-to-device rate instead.
# The final log-likelihoods of the 1- and 2-GPU runs are printed side by
# side (they agree to about 1e-10). This script builds and installs nothing.
set -u
if [ $# -ne 1 ]; then
    sed -n '7,8p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
TF=$1
SPEC=${SPEC:-dims=4000000x2000000x400000,nnz=100000000,alpha=0.7,seed=7,counts=3}
BIG=${BIG-dims=20000000x10000000x2000000,nnz=1000000000,alpha=0.7,seed=7,counts=3}
BIG_GPUS=${BIG_GPUS:-2}
SMALL=${SMALL:-1}
RANK=${RANK:-16}
ITERS=${ITERS:-5}
INNER=${INNER:-10}
HBM=${HBM:-4.8e12}
STREAM_LIMIT=${STREAM_LIMIT-3G}
H2D=${H2D:-5e10}
RUN_TIMEOUT=${RUN_TIMEOUT:-590}
[ -x "$TF" ] || { echo "cp_apr_gpu: $TF is not an executable" >&2; exit 1; }
if [ -n "${OUT:-}" ]; then
    mkdir -p "$OUT" || exit 1
else
    OUT=$(mktemp -d) || exit 1
    trap 'rm -rf "$OUT"' EXIT
fi
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -n), $(nproc) CPUs; $("$TF" --version | head -n 1)"
"$TF" info 2>/dev/null | grep -E '^(gpus|gpu [0-9])' | sed 's/^/# /'
echo "# rank $RANK, $ITERS outer iterations of at most $INNER inner, tol 0 (every inner iteration runs)"
echo "| tensor | run | plan | build s | s / outer iteration | phi s | dense s | loglik s | inner / outer | bound s | final log-likelihood |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"

# run NAME SPEC GPUS [LIMIT]: one run (GPUS 1: --device gpu; else --gpus
# GPUS; LIMIT: --memory-limit, streamed), its row
run() {
    local name=$1 spec=$2 gpus=$3 limit=${4:-} dev
    if [ "$gpus" -eq 1 ]; then dev=(--device gpu); else dev=(--gpus "$gpus"); fi
    [ -n "$limit" ] && dev+=(--memory-limit "$limit")
    local json=$OUT/$name-$gpus${limit:+-$limit}.json log=$OUT/$name-$gpus${limit:+-$limit}.log
    if ! timeout "$RUN_TIMEOUT" "$TF" cpd --gen "$spec" -r "$RANK" --method apr -i "$ITERS" --tol 0 \
        --inner "$INNER" "${dev[@]}" --nowrite -q --json "$json" >"$log" 2>&1; then
        echo "| $name | $gpus GPU(s)${limit:+, limit $limit} | failed: $(tail -n 1 "$log") | | | | | | | | |"
        return
    fi
    local rate=$HBM
    [ -n "$limit" ] && rate=$H2D
    python3 - "$json" "$name" "$gpus" "$spec" "$rate" "$limit" <<'PY'
import json, statistics, sys
path, name, gpus, spec, hbm, limit = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], float(sys.argv[5]), sys.argv[6]
r = json.load(open(path))
it = r["iterations"]
later = it[1:] or it
per = statistics.median(i["seconds"] for i in later)
t = r["timing_seconds"]
n = len(it)
kv = dict(p.split("=") for p in spec.split(","))
order = len(kv["dims"].split("x"))
nnz = float(kv["nnz"])
inner = statistics.median(i["inner_iterations"] for i in later)  # passes per outer iteration, all modes
# every pass reads its mode's copy once: N index arrays (4 B) and the values (8 B)
bound = inner * nnz * (4 * order + 8) / (hbm * gpus)
print("| %s | %d GPU%s%s | %s | %.1f | %.3f | %.3f | %.3f | %.3f | %g | %.3f | %.10g |" % (
    name, gpus, "s" if gpus > 1 else "", ", --memory-limit " + limit if limit else "", r["plan"], t["build"], per, t["phi"] / n, t["dense"] / n,
    t["loglik"] / n, inner, bound, r["result"]["log_likelihood"]))
PY
}

if [ "$SMALL" = 1 ]; then
    run small "$SPEC" 1
    run small "$SPEC" 2
    [ -n "$STREAM_LIMIT" ] && run small "$SPEC" 1 "$STREAM_LIMIT"
fi
if [ -n "$BIG" ]; then
    for g in $BIG_GPUS; do run big "$BIG" "$g"; done
fi
exit 0
