#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Tensor completion on one GPU beside the CPU (issue 46): seconds per
# iteration of `tenfold complete --device gpu` and `--device cpu` from the
# same start, and their RMSEs (which agree to rounding). METHOD=als
# (default) or adam (GCP-Adam: an iteration is an epoch of EPOCH_ITERS,
# default 1000, steps of SAMPLES entries, default GCP's 3 % of the training
# entries, at RATE, default 1e-3).
#
# usage: bench/complete_gpu.sh TENFOLD [RATINGS]
#   TENFOLD  the tool of a CUDA build (build/cuda/tenfold)
#   RATINGS  MovieLens-style ratings "user item rating timestamp" per line
#            (e.g. ml-100k's u.data, as bench/complete.sh; fetched by you,
#            never part of the project); without it only the synthetic case
#
# Cases: the ratings as user x item x day (split 80/10/10 by `tenfold split
# --seed 1`), and a synthetic ratings-like tensor made by `tenfold gen`:
# 400,000 users x 40,000 items x 1,000 days, NNZ (default 10M) entries,
# power-law skew 0.5 / 0.8 / 0.3 (a few items and days hold most entries:
# long rows, the two-pass path), values from a planted rank-8 model with
# 10 % noise; each at RANKS (default "10 32"). Every run does ITERS (default
# 10) iterations (no early stop), L2 (default 1), THREADS CPU threads
# (default: all cores). Prints per case the seconds per iteration (solves
# plus the validation pass: the report's timing_seconds.per_iteration), the
# GPU's speed-up, the backend set-up (sort) seconds and the largest relative
# difference of the per-iteration validation RMSEs. OUT keeps the files (a
# directory; default a temporary one, removed). Builds and installs nothing.
set -u
if [ $# -lt 1 ]; then
    sed -n '7,12p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
TF=$1 RATINGS=${2:-}
RANKS=${RANKS:-"10 32"} ITERS=${ITERS:-10} L2=${L2:-1} NNZ=${NNZ:-10M} THREADS=${THREADS:-0} DAY=86400
if [ -n "${OUT:-}" ]; then mkdir -p "$OUT"; W=$OUT; else W=$(mktemp -d); trap 'rm -rf "$W"' EXIT; fi
"$TF" info 2>/dev/null | grep -q '^gpus: *[1-9]' || { echo "complete_gpu.sh: no GPU (tenfold info)" >&2; exit 1; }
TOPT=()
[ "$THREADS" != 0 ] && TOPT=(-t "$THREADS")
METHOD=${METHOD:-als}
case "$METHOD" in
    als) ;;
    adam) TOPT+=(--method adam --epoch-iters "${EPOCH_ITERS:-1000}" --rate "${RATE:-1e-3}")
          [ -n "${SAMPLES:-}" ] && TOPT+=(--samples "$SAMPLES") ;;
    *) echo "complete_gpu.sh: METHOD must be als or adam, not '$METHOD'" >&2; exit 2 ;;
esac

cases=()
if [ -n "$RATINGS" ]; then
    awk -v day="$DAY" '{ if (NR == 1 || $4 < t0) t0 = $4; r[NR] = $0 }
        END { for (i = 1; i <= NR; ++i) { split(r[i], f); printf "%d %d %d %s\n", f[1], f[2], int((f[4] - t0) / day) + 1, f[3] } }' \
        "$RATINGS" > "$W/ratings.tns" || exit 1
    "$TF" split "$W/ratings.tns" --fractions 0.8,0.1,0.1 --seed 1 -o "$W/ml" -q || exit 1
    cases+=(ml)
fi
"$TF" gen -o "$W/syn.tns" --dims 400000,40000,1000 --nnz "$NNZ" --alpha 0.5,0.8,0.3 --rank 8 --noise 0.1 \
    --seed 3 -q || exit 1
"$TF" split "$W/syn.tns" --fractions 0.8,0.1,0.1 --seed 1 -o "$W/syn" -q || exit 1
rm -f "$W/syn.tns"
cases+=(syn)

for c in "${cases[@]}"; do
    for R in $RANKS; do
        for dev in cpu gpu; do
            "$TF" complete "$W/$c.train.tns" --val "$W/$c.val.tns" --test "$W/$c.test.tns" -r "$R" --l2 "$L2" \
                -i "$ITERS" --patience 1000000 --tol 0 --seed 1 --device "$dev" "${TOPT[@]}" \
                --json "$W/$c.$R.$dev.json" > "$W/$c.$R.$dev.log" 2>&1 ||
                { echo "complete_gpu.sh: $c rank $R on the $dev failed: see $W/$c.$R.$dev.log" >&2; exit 1; }
        done
    done
done

echo "# tenfold complete, method $METHOD, $ITERS iterations, l2 $L2${TOPT[*]:+, options ${TOPT[*]}}"
python3 - "$W" "$RANKS" "${cases[@]}" <<'PY'
import json, sys
w, ranks, cases = sys.argv[1], sys.argv[2].split(), sys.argv[3:]
print(f"{'case':6s} {'rank':>4s} {'entries':>10s} {'CPU s/iter':>10s} {'GPU s/iter':>10s} {'speed-up':>8s} "
      f"{'GPU build s':>11s} {'val RMSE diff':>13s} {'test RMSE':>9s}")
for c in cases:
    for R in ranks:
        cpu, gpu = (json.load(open(f"{w}/{c}.{R}.{d}.json")) for d in ("cpu", "gpu"))
        assert gpu["options"]["device"] == "gpu", gpu["plan"]
        tc, tg = cpu["timing_seconds"]["per_iteration"], gpu["timing_seconds"]["per_iteration"]
        diff = max(abs(a["val_rmse"] - b["val_rmse"]) / abs(a["val_rmse"])
                   for a, b in zip(cpu["iterations"], gpu["iterations"]))
        n = cpu["tensor"]["nnz"]
        print(f"{c:6s} {R:>4s} {str(n):>10s} {tc:10.4f} {tg:10.4f} {tc / tg:7.1f}x "
              f"{gpu['timing_seconds'].get('build', float('nan')):11.3f} {diff:13.2e} {gpu['result']['test_rmse']:9.5f}")
PY
