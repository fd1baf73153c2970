# SPDX-License-Identifier: BSD-3-Clause
# Sourced by bench/cpu_scaling.sh and bench/cpu_scaling_methods.sh (issue 48):
# the parts of a thread-scaling run they share. The caller sets SCALING_NAME
# (the script's name in messages), TF (the tenfold tool), T0 (the start,
# date +%s) and DEADLINE (seconds); bench/lib/scaling.py has the tables' side.

# the caller's OpenMP / OpenBLAS / Kokkos settings removed: "${CLEAN[@]}" CMD
CLEAN=(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT -u OMP_PROC_BIND -u OMP_PLACES -u OMP_WAIT_POLICY
       -u GOMP_SPINCOUNT -u GOMP_CPU_AFFINITY -u OMP_DYNAMIC -u OPENBLAS_NUM_THREADS -u KOKKOS_NUM_THREADS)

env_of() { # NAME -> the environment's assignments
    case $1 in
        default) echo "" ;;
        spread) echo "OMP_PROC_BIND=spread OMP_PLACES=threads" ;;
        close) echo "OMP_PROC_BIND=close OMP_PLACES=cores" ;;
        active) echo "OMP_WAIT_POLICY=active" ;;
        spread-active) echo "OMP_PROC_BIND=spread OMP_PLACES=threads OMP_WAIT_POLICY=active" ;;
        *) echo "$SCALING_NAME: unknown environment '$1' (default, spread, close, active, spread-active)" >&2; exit 2 ;;
    esac
}

scaling_machine() { # the machine's and the tool's lines of the report
    echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -n), $("${CLEAN[@]}" nproc) CPUs in the mask," \
         "$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//')"
    echo "# $("$TF" --version | head -n 1), source $(git -C "$(dirname "${BASH_SOURCE[0]}")/../.." describe --always --dirty 2>/dev/null || echo '(no git)')"
    local topo
    topo=$(lscpu 2>/dev/null | grep -E '^(Thread\(s\) per core|Core\(s\) per socket|Socket\(s\)|NUMA node\(s\)|L3 cache):' |
           sed 's/  */ /g' | paste -sd ';' -)
    [ -n "$topo" ] && echo "# $topo"
    return 0
}

scaling_info_threads() { # ENV... -> `tenfold info --threads` under each
    local e
    for e in "$@"; do
        echo "# info --threads under '$e':"
        "${CLEAN[@]}" $(env_of "$e") "$TF" info --threads 2>&1 | cut -c1-200 | sed 's/^/#   /'
    done
}

scaling_skew() { # OUT NNZ [counts] -> the 20M-style skewed tensor OUT/skew-NNZ.bin (made once; its dims
                  # shrink with NNZ); counts: the same non-zeros with counts of mean 4, OUT/skew-NNZ.counts.bin
    local nnz scale dims skew=$1/skew-$2.bin values=()
    [ "${3:-}" = counts ] && { skew=$1/skew-$2.counts.bin; values=(--counts 4); }
    nnz=$(echo "$2" | awk '{ n = $1; m = 1; if (n ~ /[kK]$/) m = 1e3; if (n ~ /M$/) m = 1e6;
                            sub(/[kKM]$/, "", n); printf "%d", n * m }')
    scale=$(awk -v n="$nnz" 'BEGIN { printf "%.6f", n / 2e7 }')
    dims=$(awk -v s="$scale" 'BEGIN { printf "%d,%d,%d", 2e6 * s + 1, 1e6 * s + 1, 2e5 * s + 1 }')
    if [ ! -s "$skew" ]; then
        "${CLEAN[@]}" "$TF" gen -o "$skew" --dims "$dims" --nnz "$nnz" --alpha 0.7 "${values[@]}" -q ||
            { echo "$SCALING_NAME: tenfold gen failed" >&2; return 1; }
    fi
    echo "$skew"
}

past_deadline() { # true once DEADLINE seconds have passed since T0
    [ $(( $(date +%s) - T0 )) -ge "$DEADLINE" ]
}
