#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# CP-ALS seconds per iteration and per MTTKRP pass of the CPU backend beside
# ALTO's (IntelLabs/ALTO, `cpd64`, built outside the project) over thread
# counts, on uber-apr14 and nycflights13 (issue 48: tenfold >= 1.2x ALTO).
#
# usage: bench/alto.sh TENFOLD ALTO_CPD DATA_DIR [OUT_DIR]
#   TENFOLD   the tool (build/cpu/tenfold)
#   ALTO_CPD  ALTO's cpd64 (its `make`, OpenBLAS; outside the repository)
#   DATA_DIR  holds uber-apr14.tns.xz and nycflights13.tns.xz
#   OUT_DIR   where the text and binary copies and the logs go (default: a
#             temporary directory, removed at the end)
#
# Per tensor and thread count one row: the median over RUNS runs of each
# run's median over iterations 2..ITERS, for the whole iteration and for its
# MTTKRPs (all modes), tenfold (`cpd --json`: iterations[].seconds,
# timing_seconds.mttkrp) and ALTO (its per-iteration "time(for MTTKRP):
# TOTAL s (MTTKRP s)" lines), and ALTO's iteration over tenfold's. Both get
# OMP_NUM_THREADS=t and no other OMP_* variable of the caller. An ALTO run
# that fails (it crashed at random on the 2-core machine) is retried twice.
#
# Settings (environment): THREADS="1 2 4 8 16 32", RANK=16, ITERS=50, RUNS=3.
set -u
if [ $# -lt 3 ]; then
    sed -n '7,12p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
TF=$1
ALTO=$2
DATA=$3
THREADS=${THREADS:-1 2 4 8 16 32}
RANK=${RANK:-16}
ITERS=${ITERS:-50}
RUNS=${RUNS:-3}
[ -x "$TF" ] || { echo "alto.sh: $TF is not an executable" >&2; exit 1; }
[ -x "$ALTO" ] || { echo "alto.sh: $ALTO is not an executable" >&2; exit 1; }
command -v python3 >/dev/null || { echo "alto.sh: python3 is needed (it reads the reports)" >&2; exit 1; }
if [ $# -ge 4 ]; then
    OUT=$4
    mkdir -p "$OUT" || exit 1
else
    OUT=$(mktemp -d) || exit 1
    trap 'rm -rf "$OUT"' EXIT
fi
CLEAN=(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT -u OMP_PROC_BIND -u OMP_PLACES -u OMP_WAIT_POLICY
       -u GOMP_SPINCOUNT -u GOMP_CPU_AFFINITY -u OMP_DYNAMIC -u OPENBLAS_NUM_THREADS)

echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -n), $("${CLEAN[@]}" nproc) CPUs in the mask," \
     "$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//')"
echo "# $("$TF" --version | head -n 1); ALTO $ALTO; rank $RANK, $ITERS iterations, median of $RUNS runs"
printf '%-13s %3s %12s %12s %12s %12s %11s\n' tensor t "tenfold s/it" "tf MTTKRP" "ALTO s/it" \
       "ALTO MTTKRP" "ALTO/tf"

# one number per run: "ITER MTTKRP" (seconds, medians over iterations 2..)
tf_run() {
    python3 -c '
import json, statistics as st, sys
d = json.load(open(sys.argv[1]))
it = [x["seconds"] for x in d["iterations"][1:]] or [x["seconds"] for x in d["iterations"]]
print(st.median(it), d["timing_seconds"]["mttkrp"] / len(d["iterations"]))' "$1"
}
alto_run() {
    python3 -c '
import re, statistics as st, sys
t = re.findall(r"time\(for MTTKRP\):\s*([0-9.]+) s \(([0-9.]+) s\)", open(sys.argv[1]).read())[1:]
if not t: sys.exit(1)
print(st.median(float(a) for a, b in t), st.median(float(b) for a, b in t))' "$1"
}
median_of() { python3 -c 'import statistics as st, sys; print("%.5f" % st.median(map(float, sys.argv[1:])))' "$@"; }

for n in uber-apr14 nycflights13; do
    [ -s "$OUT/$n.bin" ] || "${CLEAN[@]}" "$TF" convert "$DATA/$n.tns.xz" "$OUT/$n.bin" -q || exit 1
    [ -s "$OUT/$n.tns" ] || "${CLEAN[@]}" "$TF" convert "$DATA/$n.tns.xz" "$OUT/$n.tns" -q || exit 1
    for t in $THREADS; do
        ti=() tm=() ai=() am=()
        for ((r = 0; r < RUNS; ++r)); do
            "${CLEAN[@]}" OMP_NUM_THREADS="$t" "$TF" cpd "$OUT/$n.bin" -r "$RANK" -i "$ITERS" --tol 0 -t "$t" \
                --device cpu --nowrite --json "$OUT/$n.$t.json" -q >/dev/null 2>"$OUT/$n.$t.err" ||
                { echo "alto.sh: tenfold on $n, $t threads failed" >&2; tail -2 "$OUT/$n.$t.err" >&2; exit 1; }
            set -- $(tf_run "$OUT/$n.$t.json")
            ti+=("$1") tm+=("$2")
            for try in 1 2 3; do
                (cd "$OUT" && "${CLEAN[@]}" OMP_NUM_THREADS="$t" "$ALTO" -i "$OUT/$n.tns" -l ALS -r "$RANK" \
                    -m "$ITERS" -x 1 -e 1e-12 >"$OUT/$n.$t.alto" 2>&1) && a=$(alto_run "$OUT/$n.$t.alto") && break
                a=""
            done
            [ -n "$a" ] || { echo "alto.sh: ALTO on $n, $t threads failed 3 times" >&2; tail -2 "$OUT/$n.$t.alto" >&2; exit 1; }
            set -- $a
            ai+=("$1") am+=("$2")
        done
        TI=$(median_of "${ti[@]}") TM=$(median_of "${tm[@]}") AI=$(median_of "${ai[@]}") AM=$(median_of "${am[@]}")
        printf '%-13s %3s %12s %12s %12s %12s %11s\n' "$n" "$t" "$TI" "$TM" "$AI" "$AM" \
               "$(python3 -c "print('%.2fx' % ($AI / $TI))")"
    done
done
