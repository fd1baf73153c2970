#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# CP-ALS seconds per iteration of the CPU backend over thread counts, in the
# default environment and under OpenMP binding (issue 48: with
# OMP_PROC_BIND=spread OMP_PLACES=threads every thread once ran on one CPU).
#
# usage: bench/cpu_scaling.sh TENFOLD DATA_DIR [OUT_DIR]
#   TENFOLD   the tool (build/cpu/tenfold)
#   DATA_DIR  holds uber-apr14.tns.xz and nycflights13.tns.xz
#   OUT_DIR   where the generated 20M tensor and the JSON reports go (default:
#             a temporary directory, removed at the end; a given one is kept,
#             and its skew tensor reused)
#
# Prints a table of the median seconds per iteration (iterations 2..N: the
# first one is left out) for each tensor, environment and thread count, and
# the tool's own threads line (`cpd -v`) of each environment at the most
# threads. About 3 minutes on a 32-core host.
#
# Settings (environment): THREADS="1 2 4 8 16 32", RANK=16, ITERS=20 (real
# tensors), SKEW_ITERS=6 (the 20M tensor), SKEW_NNZ=20M (2M for a quick run
# on a small machine; its dims shrink with it), ENVS="default spread" (also:
# active = OMP_WAIT_POLICY=active, spread-active = both), RUN_TIMEOUT=300
# seconds per run. "default" unsets the OMP_* variables of the caller.
set -u
if [ $# -lt 2 ]; then
    sed -n '6,12p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
TF=$1
DATA=$2
THREADS=${THREADS:-1 2 4 8 16 32}
RANK=${RANK:-16}
ITERS=${ITERS:-20}
SKEW_ITERS=${SKEW_ITERS:-6}
SKEW_NNZ=${SKEW_NNZ:-20M}
ENVS=${ENVS:-default spread}
RUN_TIMEOUT=${RUN_TIMEOUT:-300}
[ -x "$TF" ] || { echo "cpu_scaling: $TF is not an executable" >&2; exit 1; }
for f in uber-apr14.tns.xz nycflights13.tns.xz; do
    [ -r "$DATA/$f" ] || { echo "cpu_scaling: $DATA/$f is missing" >&2; exit 1; }
done
if [ $# -ge 3 ]; then
    OUT=$3
    mkdir -p "$OUT" || exit 1
else
    OUT=$(mktemp -d) || exit 1
    trap 'rm -rf "$OUT"' EXIT
fi

CLEAN=(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT -u OMP_PROC_BIND -u OMP_PLACES -u OMP_WAIT_POLICY
       -u GOMP_SPINCOUNT -u GOMP_CPU_AFFINITY -u OMP_DYNAMIC -u OPENBLAS_NUM_THREADS)
env_of() { # NAME -> the environment's assignments
    case $1 in
        default) echo "" ;;
        spread) echo "OMP_PROC_BIND=spread OMP_PLACES=threads" ;;
        active) echo "OMP_WAIT_POLICY=active" ;;
        spread-active) echo "OMP_PROC_BIND=spread OMP_PLACES=threads OMP_WAIT_POLICY=active" ;;
        *) echo "cpu_scaling: unknown environment '$1' (default, spread, active, spread-active)" >&2; exit 2 ;;
    esac
}
for e in $ENVS; do env_of "$e" >/dev/null || exit 2; done

# median seconds of iterations 2.. of a cpd --json report ("-" if none)
median_iter() {
    sed -n '/"iterations": \[/,/^  \]/p' "$1" 2>/dev/null | grep -E '^ *"seconds": ' | tr -d ' ,' | cut -d: -f2 |
        tail -n +2 | sort -g |
        awk '{ a[NR] = $1 } END { if (NR == 0) { print "-"; exit }
             m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; printf "%.3g\n", m }'
}

# ---- the machine and the tool
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -n), $("${CLEAN[@]}" nproc) CPUs in the mask," \
     "$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//')"
"$TF" --version | sed 's/^/# /'
for e in $ENVS; do
    echo "# info --threads under '$e':"
    "${CLEAN[@]}" $(env_of "$e") "$TF" info --threads 2>&1 | sed 's/^/#   /'
done

# ---- the skewed tensor: 20M non-zeros on 2M x 1M x 200k (dims scale with SKEW_NNZ)
nnz=$(echo "$SKEW_NNZ" | awk '{ n = $1; m = 1; if (n ~ /[kK]$/) m = 1e3; if (n ~ /M$/) m = 1e6;
                                 sub(/[kKM]$/, "", n); printf "%d", n * m }')
scale=$(awk -v n="$nnz" 'BEGIN { printf "%.6f", n / 2e7 }')
dims=$(awk -v s="$scale" 'BEGIN { printf "%d,%d,%d", 2e6 * s + 1, 1e6 * s + 1, 2e5 * s + 1 }')
skew=$OUT/skew-$SKEW_NNZ.bin
if [ ! -s "$skew" ]; then
    "${CLEAN[@]}" "$TF" gen -o "$skew" --dims "$dims" --nnz "$nnz" --alpha 0.7 -q ||
        { echo "cpu_scaling: tenfold gen failed" >&2; exit 1; }
fi

# ---- the runs
tensors=("$DATA/uber-apr14.tns.xz" "$DATA/nycflights13.tns.xz" "$skew")
printf '\n# CP-ALS rank %s, median seconds per iteration (iterations 2..N; %s real, %s for the skew tensor)\n' \
    "$RANK" "$ITERS" "$SKEW_ITERS"
printf '%-16s %-14s' tensor env
for t in $THREADS; do printf ' %9s' "t=$t"; done
printf '\n'
declare -A vline
for x in "${tensors[@]}"; do
    name=$(basename "$x" | cut -d. -f1)
    iters=$ITERS
    [ "$x" = "$skew" ] && iters=$SKEW_ITERS
    for e in $ENVS; do
        printf '%-16s %-14s' "$name" "$e"
        for t in $THREADS; do
            rep=$OUT/$name.$e.t$t.json
            timeout "$RUN_TIMEOUT" "${CLEAN[@]}" $(env_of "$e") "$TF" cpd "$x" -r "$RANK" -i "$iters" --tol 0 -t "$t" \
                --device cpu --nowrite -v --json "$rep" >"$OUT/$name.$e.t$t.txt" 2>&1
            printf ' %9s' "$(median_iter "$rep")"
            vline[$e]=$(grep -m1 '^threads: ' "$OUT/$name.$e.t$t.txt")
        done
        printf '\n'
    done
done
printf '\n'
for e in $ENVS; do echo "# cpd -v at the last run under '$e': ${vline[$e]:-}"; done
