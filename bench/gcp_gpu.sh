#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# GCP-Adam on one GPU (issue 46): tenfold's cpd --method gcp --device gpu
# beside several GPUs (--gpus N, where present) and the CPU (--device
# cpu), the same tensor, loss, rank, samples,
# seed and epochs: seconds per epoch (each epoch's own time from the JSON
# report: its 1000 iterations -- draw, gradient, Adam step -- and the
# estimate), the parts (gradient, step, estimate) and the loss estimates of
# both (they agree to about 1e-8: the same samples, the GPU's gradient
# summed by atomics). Goal: <= 0.4 s per epoch on one H200 for uber-apr14,
# Poisson, rank 16, 416,744 + 416,744 samples per iteration.
#
# usage: bench/gcp_gpu.sh TENFOLD [TENSOR]
#   TENFOLD  the tool, built with CUDA (build/release/tenfold)
#   TENSOR   default ../shared/data/uber-apr14.tns.xz (beside the repository)
#
# Settings: LOSS=poisson, RANK=16, EPOCHS=3 (the GPU's), CPU_EPOCHS=1 (0:
# no CPU run), EPOCH_ITERS=1000, RATE=1e-3, GNZ=416744, GZ=416744 (gradient
# samples per iteration), FNZ=100000, FZ=100000 (the estimate's; GenTen's
# defaults for this tensor), THREADS (the CPU run's -t; default the CPUs),
# RUN_TIMEOUT=1200 seconds per run, OUT (a directory for the reports;
# default a temporary one, removed), SMEM (space-separated TF_GCP_SMEM
# values, bytes of shared memory per block for short modes' gradient rows,
# each a GPU run of its own; default "default 0": the built-in 32 KiB and
# none, every mode by global atomics), GPUS (space-separated GPU counts
# above 1, each a run with --gpus N where the machine has that many: the
# several-GPU backend, every GPU the whole tensor and its part of every
# sample; default "2"). Builds and installs nothing.
set -u
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    sed -n '13,15p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
TF=$1
HERE=$(cd "$(dirname "$0")" && pwd)
TENSOR=${2:-$HERE/../../shared/data/uber-apr14.tns.xz}
LOSS=${LOSS:-poisson}
RANK=${RANK:-16}
EPOCHS=${EPOCHS:-3}
CPU_EPOCHS=${CPU_EPOCHS:-1}
EPOCH_ITERS=${EPOCH_ITERS:-1000}
RATE=${RATE:-1e-3}
GNZ=${GNZ:-416744}
GZ=${GZ:-416744}
FNZ=${FNZ:-100000}
FZ=${FZ:-100000}
THREADS=${THREADS:-$(nproc)}
RUN_TIMEOUT=${RUN_TIMEOUT:-1200}
[ -x "$TF" ] || { echo "gcp_gpu: $TF is not an executable" >&2; exit 1; }
[ -r "$TENSOR" ] || { echo "gcp_gpu: cannot read $TENSOR" >&2; exit 1; }
if [ -n "${OUT:-}" ]; then
    mkdir -p "$OUT" || exit 1
else
    OUT=$(mktemp -d) || exit 1
    trap 'rm -rf "$OUT"' EXIT
fi
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -n), $(nproc) CPUs; $("$TF" --version | head -n 1)"
"$TF" info 2>/dev/null | grep -E '^(gpus|gpu [0-9])' | sed 's/^/# /'
echo "# $(basename "$TENSOR"): loss $LOSS, rank $RANK, $EPOCH_ITERS iterations per epoch, rate $RATE," \
     "samples per iteration $GNZ + $GZ, estimate $FNZ + $FZ, seed 1"
echo "| device | plan | epochs | s / epoch | gradient s / epoch | step s / epoch | estimate s / epoch | loss estimates |"
echo "|---|---|---|---|---|---|---|---|"

# run DEVICE EPOCHS [SMEM]: one run (DEVICE cpu, gpu or gpusN: --gpus N;
# SMEM: TF_GCP_SMEM), its row
run() {
    local dev=$1 epochs=$2 smem=${3:-default} tag=$1-${3:-default}
    local json=$OUT/$tag.json log=$OUT/$tag.log env=() where=(--device "$1")
    [ "$smem" != default ] && env=(TF_GCP_SMEM="$smem")
    case $dev in gpus*) where=(--gpus "${dev#gpus}") ;; esac
    if ! timeout "$RUN_TIMEOUT" env ${env[@]+"${env[@]}"} "$TF" cpd "$TENSOR" --method gcp --loss "$LOSS" -r "$RANK" \
        --epochs "$epochs" --epoch-iters "$EPOCH_ITERS" --rate "$RATE" --samples "$GNZ,$GZ" --fsamples "$FNZ,$FZ" \
        --seed 1 "${where[@]}" -t "$THREADS" --nowrite -q --json "$json" >"$log" 2>&1; then
        echo "| $dev${3:+ (TF_GCP_SMEM $smem)} | failed: $(tail -n 1 "$log") | | | | | | |"
        return
    fi
    python3 - "$json" "$dev${3:+ (TF_GCP_SMEM $smem)}" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
it, t = r["iterations"], r["timing_seconds"]
n = len(it)
per = sum(i["seconds"] for i in it) / n
print("| %s | %s | %d | %.3f | %.3f | %.3f | %.3f | %s |" % (
    sys.argv[2], r.get("plan", ""), n, per, t["gradient"] / n, t["step"] / n, t["estimate"] / n,
    " ".join("%.10e" % i["loss_estimate"] for i in it)))
PY
}
for smem in ${SMEM:-default 0}; do run gpu "$EPOCHS" "$smem"; done
ngpus=$("$TF" info 2>/dev/null | sed -n 's/^gpus: *\([0-9]*\) found.*/\1/p')
for n in ${GPUS:-2}; do [ "${ngpus:-0}" -ge "$n" ] && run "gpus$n" "$EPOCHS"; done
[ "$CPU_EPOCHS" -gt 0 ] && run cpu "$CPU_EPOCHS"
echo "# the GPU's times of gradient and step are the host's (the launches are asynchronous: the work shows in"
echo "# the estimate's time, which waits for it); s / epoch is exact. Goal: <= 0.4 s per epoch."
