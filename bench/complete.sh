#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Tensor completion by ALS on the CPU: tenfold complete beside SPLATT's
# `complete -a als` (the sc16 branch of ShadenSmith/splatt: its completion
# code), same split, rank, regularisation and start (issue 46).
#
# usage: bench/complete.sh TENFOLD SPLATT RATINGS
#   TENFOLD  the tool (build/dev/tenfold)
#   SPLATT   SPLATT's binary with `complete` (built under /tmp from the sc16
#            branch: ./configure && make; its tests need a patch, its binary not)
#   RATINGS  MovieLens-style ratings "user item rating timestamp" per line (e.g.
#            ml-100k's u.data; fetched by you, never part of the project)
#
# Settings: RANK=10, L2=100 (SPLATT's ALS default --reg), SEED=1 (the split's
# and SPLATT's srand), THREADS (default 2), OUT (a directory for the files and
# logs; default a temporary one, removed), DAY=86400 (the time mode's bin, in
# seconds). The tensor is user x item x time bin, the rating the value; split
# 80/10/10 by `tenfold split --seed SEED`. SPLATT draws its start with glibc's
# rand() after srand(SEED); bench/complete_splatt_start.py writes the same
# numbers as tenfold --init files, so both run ALS from one start. Rows: the
# iterations run, the model kept (its iteration), its validation and test RMSE,
# seconds per iteration (tenfold: its solves and RMSE passes per iteration;
# SPLATT: its printed time at the last epoch over the epochs, which covers
# the same), and tenfold from its own random start. This script builds and
# installs nothing.
set -u
if [ $# -lt 3 ]; then
    sed -n '7,13p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
TF=$1 SPLATT=$2 RATINGS=$3
RANK=${RANK:-10} L2=${L2:-100} SEED=${SEED:-1} THREADS=${THREADS:-2} DAY=${DAY:-86400}
HERE=$(cd "$(dirname "$0")" && pwd)
if [ -n "${OUT:-}" ]; then mkdir -p "$OUT"; W=$OUT; else W=$(mktemp -d); trap 'rm -rf "$W"' EXIT; fi

awk -v day="$DAY" '{ if (NR == 1 || $4 < t0) t0 = $4; r[NR] = $0 }
    END { for (i = 1; i <= NR; ++i) { split(r[i], f); printf "%d %d %d %s\n", f[1], f[2], int((f[4] - t0) / day) + 1, f[3] } }' \
    "$RATINGS" > "$W/ratings.tns" || exit 1
"$TF" split "$W/ratings.tns" --fractions 0.8,0.1,0.1 --seed "$SEED" -o "$W/r" -q || exit 1
python3 "$HERE/complete_splatt_start.py" "$W/r.train.tns" "$RANK" "$SEED" "$W/start" || exit 1

(cd "$W" && "$SPLATT" complete r.train.tns r.val.tns r.test.tns -a als -r "$RANK" --reg "$L2" --seed "$SEED" \
    -t "$THREADS" --nowrite > splatt.log 2>&1) || { echo "SPLATT failed: see $W/splatt.log" >&2; exit 1; }
"$TF" complete "$W/r.train.tns" --val "$W/r.val.tns" --test "$W/r.test.tns" --init "$W/start" -r "$RANK" \
    --l2 "$L2" -t "$THREADS" --json "$W/same.json" > "$W/same.log" 2>&1 || exit 1
"$TF" complete "$W/r.train.tns" --val "$W/r.val.tns" --test "$W/r.test.tns" -r "$RANK" --seed "$SEED" \
    --l2 "$L2" -t "$THREADS" --json "$W/own.json" > "$W/own.log" 2>&1 || exit 1

python3 - "$W" <<'PY'
import json, re, sys
w = sys.argv[1]
log = open(f"{w}/splatt.log").read()
epochs = [(int(e), float(vl), float(t)) for e, vl, t in
          re.findall(r"epoch:\s*(\d+)\s+loss: \S+\s+RMSE-tr: \S+\s+RMSE-vl: (\S+)\s+time: ([0-9.]+)s", log)]
best = re.search(r"BEST VALIDATION RMSE: ([0-9.]+) .*\(epoch (\d+)\)", log)
test = float(re.search(r"TEST RMSE: ([0-9.]+)", log).group(1))
last = epochs[-1]
sp = {"iters": last[0], "best": int(best.group(2)), "val": float(best.group(1)), "test": test,
      "per_iter": last[2] / last[0]}
print(f"{'run':28s} {'iters':>5s} {'kept':>5s} {'val RMSE':>9s} {'test RMSE':>9s} {'s/iter':>8s}")
print(f"{'SPLATT complete -a als':28s} {sp['iters']:5d} {sp['best']:5d} {sp['val']:9.5f} {sp['test']:9.5f} "
      f"{sp['per_iter']:8.4f}")
for name, f in (("tenfold, SPLATT's start", "same"), ("tenfold, its own start", "own")):
    r = json.load(open(f"{w}/{f}.json"))
    res, t = r["result"], r["timing_seconds"]
    print(f"{name:28s} {res['iterations']:5d} {res['best_iteration']:5d} {res['val_rmse']:9.5f} "
          f"{res['test_rmse']:9.5f} {t['per_iteration']:8.4f}")
    if f == "same":
        print(f"  test RMSE vs SPLATT: {100 * (res['test_rmse'] - sp['test']) / sp['test']:+.2f} %, "
              f"per iteration {sp['per_iter'] / t['per_iteration']:.2f}x faster")
PY
