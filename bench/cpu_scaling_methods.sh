#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The new methods' seconds per iteration on the CPU backend over thread
# counts, in the default environment and under OpenMP binding, as
# bench/cpu_scaling.sh does for CP-ALS (issue 48).
#
# usage: bench/cpu_scaling_methods.sh TENFOLD DATA_DIR [OUT_DIR]
#   TENFOLD   the tool (build/cpu/tenfold)
#   DATA_DIR  holds the tensors named in TENSORS as NAME.tns.xz, NAME.tns or
#             NAME.bin (uber-apr14, nycflights13: ../shared/data; .devdata on the device)
#   OUT_DIR   where the generated skewed tensor, the completion splits and the
#             reports go (default: a temporary directory, removed at the end; a
#             given one is kept, and its tensors and splits reused)
#   GENTEN    (environment) GenTen's `genten` tool, or a pygenten wheel: its
#             gcp-sgd (Adam) beside `gcp` on the same samples, epochs and rate,
#             OMP_NUM_THREADS=t; unset: tenfold alone
#
# Methods (METHODS="admm hals apr gcp complete tucker"), each tenfold
# --device cpu at rank RANK=16, --seed 1, every iteration run (--tol 0, or
# --patience for complete): admm = cpd --nonneg --nonneg-method admm
# (AO-ADMM); hals = cpd --nonneg --nonneg-method hals; apr = cpd --method apr
# (mu, --inner INNER=10; count tensors); gcp = cpd --method gcp --loss poisson,
# EPOCHS=4 epochs of EPOCH_ITERS=1000 iterations with bench/gcp.sh's samples
# (GenTen's defaults for 100 epochs: max(3 nnz/100, 1000) and max(nnz/100,
# 100000) per kind, capped at nnz), seconds per epoch; complete = tenfold
# complete on the tensor's split 0.8,0.1,0.1 (tenfold split --seed 1: the
# training entries, --val the validation ones); tucker = tucker -r
# min(TUCKER_RANK=8, I_n) per mode. Per method and tensor one table: per
# environment the median seconds per iteration (epoch for gcp) of iterations
# 2..N of the --json report's iterations[].seconds at each thread count, the
# speedup from the first to the last count and its efficiency, and whether
# more threads were ever slower than fewer (by more than 5 %: "no (t=16
# +12%)"); then the results of its runs (fit, log-likelihood, loss estimate
# or validation RMSE: median, count, relative spread) and the failed runs.
#
# Settings (environment): TENSORS="uber-apr14 nycflights13 skew" (skew: the
# skewed tensor of bench/cpu_scaling.sh, 2M x 1M x 200k at SKEW_NNZ=20M,
# generated into OUT_DIR, run by the methods of SKEW_METHODS="admm hals
# tucker" only, SKEW_ITERS=4 iterations; apr and gcp, when named there, on
# the same non-zeros with counts of mean 4), THREADS="1 2 4 8 16 32" (those above
# the CPUs left out), ENVS="default spread" (see bench/cpu_scaling.sh:
# default unsets the caller's OMP_* variables; spread = OMP_PROC_BIND=spread
# OMP_PLACES=threads; also close, active, spread-active), ITERS=10,
# RUN_TIMEOUT=300 seconds per run, DEADLINE=450: no run starts later than
# this many seconds after the script (its cell shows '-'; each table is
# printed when its runs end). Split METHODS over several calls with one
# OUT_DIR for more time.
set -u
if [ $# -lt 2 ]; then
    sed -n '7,16p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
TF=$1
DATA=$2
METHODS=${METHODS:-admm hals apr gcp complete tucker}
TENSORS=${TENSORS:-uber-apr14 nycflights13 skew}
SKEW_METHODS=${SKEW_METHODS-admm hals tucker}
THREADS=${THREADS:-1 2 4 8 16 32}
ENVS=${ENVS:-default spread}
RANK=${RANK:-16}
TUCKER_RANK=${TUCKER_RANK:-8}
ITERS=${ITERS:-10}
SKEW_ITERS=${SKEW_ITERS:-4}
SKEW_NNZ=${SKEW_NNZ:-20M}
INNER=${INNER:-10}
EPOCHS=${EPOCHS:-4}
EPOCH_ITERS=${EPOCH_ITERS:-1000}
RUN_TIMEOUT=${RUN_TIMEOUT:-300}
DEADLINE=${DEADLINE:-450}
HERE=$(cd "$(dirname "$0")" && pwd)
T0=$(date +%s)
SCALING_NAME=cpu_scaling_methods
. "$HERE/lib/scaling.bash"
[ -x "$TF" ] || { echo "$SCALING_NAME: $TF is not an executable" >&2; exit 1; }
command -v python3 >/dev/null || { echo "$SCALING_NAME: python3 is needed (it reads the reports)" >&2; exit 1; }
for m in $METHODS; do
    case $m in admm|hals|apr|gcp|complete|tucker) ;;
        *) echo "$SCALING_NAME: unknown method '$m' in METHODS (admm, hals, apr, gcp, complete, tucker)" >&2; exit 2 ;;
    esac
done
for e in $ENVS; do env_of "$e" >/dev/null || exit 2; done
input_of() { # NAME -> its file in DATA_DIR
    local f
    for f in "$DATA/$1.tns.xz" "$DATA/$1.tns" "$DATA/$1.bin"; do
        [ -r "$f" ] && { echo "$f"; return 0; }
    done
    echo "$SCALING_NAME: $DATA has no $1.tns.xz, $1.tns or $1.bin" >&2
    return 1
}
for n in $TENSORS; do [ "$n" = skew ] || input_of "$n" >/dev/null || exit 1; done
ncpu=$("${CLEAN[@]}" nproc)
threads=""
for t in $THREADS; do [ "$t" -le "$ncpu" ] && threads="$threads $t"; done
threads=${threads# }
[ -n "$threads" ] || { echo "$SCALING_NAME: no count of THREADS='$THREADS' is within the $ncpu CPUs" >&2; exit 2; }
if [ $# -ge 3 ]; then
    OUT=$3
    mkdir -p "$OUT" || exit 1
else
    OUT=$(mktemp -d) || exit 1
    trap 'rm -rf "$OUT"' EXIT
fi

GT=""
if [ -n "${GENTEN:-}" ]; then
    GT=$("$HERE/genten-unpack" "$GENTEN" "$OUT/genten") || exit 1 # a wheel unpacked, or the tool itself
fi

scaling_machine
echo "# methods: $METHODS; tensors: $TENSORS (skew: $SKEW_METHODS); threads $threads; environments $ENVS"
[ -n "$GT" ] && echo "# GenTen: $GT --method gcp-sgd --step adam (Kokkos OpenMP; OMP_NUM_THREADS=t)"
scaling_info_threads $ENVS

# ---- the tensors: their files, dims and non-zeros (tenfold stats), the splits and GenTen's text made once
declare -A file dims nnz
for n in $TENSORS; do
    if [ "$n" = skew ]; then
        file[$n]=$(scaling_skew "$OUT" "$SKEW_NNZ") || exit 1
        if [[ " $METHODS " == *" apr "* && " $SKEW_METHODS " == *" apr "* ]] ||
           [[ " $METHODS " == *" gcp "* && " $SKEW_METHODS " == *" gcp "* ]]; then
            file[skew-counts]=$(scaling_skew "$OUT" "$SKEW_NNZ" counts) || exit 1
        fi
    else
        file[$n]=$(input_of "$n")
    fi
    line=$("${CLEAN[@]}" "$TF" stats "${file[$n]}" 2>&1 | grep -m1 '^tensor: ') ||
        { echo "$SCALING_NAME: tenfold stats of ${file[$n]} failed" >&2; exit 1; }
    dims[$n]=$(echo "$line" | sed -n 's/.*dims \([0-9x ]*\), nnz.*/\1/p' | tr -d ' ' | tr x ,)
    nnz[$n]=$(echo "$line" | sed -n 's/.*nnz \([0-9]*\).*/\1/p')
    [ -n "${dims[$n]}" ] && [ -n "${nnz[$n]}" ] || { echo "$SCALING_NAME: no dims in tenfold stats of ${file[$n]}" >&2; exit 1; }
    if [[ " $METHODS " == *" complete "* ]] && { [ "$n" != skew ] || [[ " $SKEW_METHODS " == *" complete "* ]]; } &&
       [ ! -s "$OUT/$n.split.val.tns" ]; then
        "${CLEAN[@]}" "$TF" split "${file[$n]}" --fractions 0.8,0.1,0.1 --seed 1 -o "$OUT/$n.split" -q ||
            { echo "$SCALING_NAME: tenfold split of $n failed" >&2; exit 1; }
    fi
    if [ -n "$GT" ] && [[ " $METHODS " == *" gcp "* ]] && [ "$n" != skew ] && [ ! -s "$OUT/$n.tns" ]; then
        "${CLEAN[@]}" "$TF" convert "${file[$n]}" "$OUT/$n.tns" -q ||
            { echo "$SCALING_NAME: tenfold convert of $n failed" >&2; exit 1; }
    fi
done
echo "# prepared in $(( $(date +%s) - T0 )) s"

# ---- the runs: OUT/NAME.METHOD.TOOL.ENV.tT.{json,txt,failed} (a kept OUT_DIR's earlier ones of METHODS removed first)
for m in $METHODS; do rm -f "$OUT"/*."$m".tenfold.*.t*.* "$OUT"/*."$m".genten.*.t*.*; done
samples() { # NAME -> gcp's "GNZ FNZ"
    local n=${nnz[$1]} g f
    g=$(( (3 * n + 99) / 100 )); [ "$g" -lt 1000 ] && g=1000; [ "$g" -gt "$n" ] && g=$n
    f=$(( (n + 99) / 100 )); [ "$f" -lt 100000 ] && f=100000; [ "$f" -gt "$n" ] && f=$n
    echo "$g $f"
}
tucker_ranks() { # NAME -> min(TUCKER_RANK, I_n) per mode
    echo "${dims[$1]}" | tr , '\n' | awk -v r="$TUCKER_RANK" '{ printf "%s%d", (NR > 1 ? "," : ""), ($1 < r ? $1 : r) }'
}
run_tenfold() { # METHOD NAME ITERS ENV T
    local base=$OUT/$2.$1.tenfold.$4.t$5 x=${file[$2]} cmd g f
    [ "$2" = skew ] && { [ "$1" = apr ] || [ "$1" = gcp ]; } && x=${file[skew-counts]} # Poisson: counts
    case $1 in
        admm|hals) cmd=(cpd "$x" --nonneg --nonneg-method "$1" -r "$RANK" -i "$3" --tol 0) ;;
        apr) cmd=(cpd "$x" --method apr --apr-algorithm mu --inner "$INNER" -r "$RANK" -i "$3" --tol 0) ;;
        gcp) read -r g f < <(samples "$2")
             cmd=(cpd "$x" --method gcp --loss poisson -r "$RANK" --epochs "$3" --epoch-iters "$EPOCH_ITERS"
                  --samples "$g,$g" --fsamples "$f,$f") ;;
        complete) cmd=(complete "$OUT/$2.split.train.tns" --val "$OUT/$2.split.val.tns" -r "$RANK" -i "$3"
                       --patience "$3") ;;
        tucker) cmd=(tucker "$x" -r "$(tucker_ranks "$2")" -i "$3" --tol 0) ;;
    esac
    [ "$1" = complete ] || [ "$1" = tucker ] || cmd+=(--nowrite)
    timeout "$RUN_TIMEOUT" "${CLEAN[@]}" $(env_of "$4") "$TF" "${cmd[@]}" --seed 1 -t "$5" --device cpu \
        --json "$base.json" >"$base.txt" 2>&1 || echo "rc $?" >"$base.failed"
}
run_genten() { # gcp NAME EPOCHS ENV T
    local base=$OUT/$2.$1.genten.$4.t$5 g f
    read -r g f < <(samples "$2")
    timeout "$RUN_TIMEOUT" "${CLEAN[@]}" $(env_of "$4") OMP_NUM_THREADS="$5" "$GT" --input "$OUT/$2.tns" --index-base 1 \
        --rank "$RANK" --method gcp-sgd --type poisson --sampling stratified --step adam --rate 1e-3 \
        --maxiters "$3" --epochiters "$EPOCH_ITERS" --gnzs "$g" --gzs "$g" --fnzs "$f" --fzs "$f" \
        --seed 1 --gcp-seed 1 >"$base.txt" 2>&1 || echo "rc $?" >"$base.failed"
}
# the table of one method on one tensor, from the reports in OUT
table() { # METHOD NAME ITERS
    PYTHONPATH="$HERE/lib${PYTHONPATH:+:$PYTHONPATH}" python3 - "$OUT" "$1" "$2" "$3" "$threads" "$ENVS" \
        "${dims[$2]}" "${nnz[$2]}" "$RANK" "$(tucker_ranks "$2")" "${GT:+genten}" <<'EOF'
import os, re, statistics, sys
from scaling import header, median_seconds, report, row
out, method, name, iters, threads, envs, dims, nnz, rank, tranks, with_genten = sys.argv[1:12]
threads = [int(t) for t in threads.split()]
what = {'admm': ('CP AO-ADMM (--nonneg)', 'fit'), 'hals': ('CP HALS (--nonneg)', 'fit'),
        'apr': ('CP-APR mu', 'log_likelihood'), 'gcp': ('GCP-Adam poisson', 'loss_estimate'),
        'complete': ('completion ALS on the 0.8 split', 'val_rmse'), 'tucker': ('Tucker HOOI', 'fit')}[method]
step = 'epoch' if method == 'gcp' else 'iteration'
size = 'rank %s' % (tranks if method == 'tucker' else rank)
tools = ['tenfold'] + (['genten'] if with_genten and method == 'gcp' else [])

def genten(env, t):
    """median seconds per epoch of epochs 2.. from GenTen's cumulative 'Epoch k: ... time = S sec', None"""
    try:
        text = open('%s/%s.%s.genten.%s.t%d.txt' % (out, name, method, env, t)).read()
    except OSError:
        return None, None
    ep = {int(k): (float(f), float(s)) for k, f, s in
          re.findall(r'Epoch\s+(\d+): f-est =\s*(\S+), step =\s*\S+, time =\s*(\S+) sec', text)}
    d = [ep[k][1] - ep[k - 1][1] for k in sorted(ep) if k >= 2 and k - 1 in ep]
    return (statistics.median(d) if d else None), (ep[max(ep)][0] if ep else None)

counts = ' (its counts)' if name == 'skew' and method in ('apr', 'gcp') else ''
print('\n# %s%s, %s, %s non-zeros: %s %s, %s %ss; median s/%s of %ss 2..%s'
      % (name, counts, ' x '.join(dims.split(',')), nnz, what[0], size, iters, step, step, step, iters))
print(header(threads))
results, failed, nonfinite = {tool: [] for tool in tools}, [], {tool: 0 for tool in tools}
for e in envs.split():
    for tool in tools:
        times = []
        for t in threads:
            base = '%s/%s.%s.%s.%s.t%d' % (out, name, method, tool, e, t)
            if os.path.exists(base + '.failed'):
                failed.append('%s %s t=%d (%s, see %s.txt)' % (tool, e, t, open(base + '.failed').read().strip(), base))
            if tool == 'genten':
                v, res = genten(e, t)
            else:
                r = report(base + '.json')
                v, res = median_seconds(r), (r or {}).get('result', {}).get(what[1])
                if r and res is None:
                    nonfinite[tool] += 1  # a report writes null for inf and NaN
            times.append(v)
            if res is not None:
                results[tool].append(res)
        if tool != 'tenfold' and not any(times):
            continue
        print(row(threads, times, '%-8s %-8s' % (tool, e)))
line = []
for tool in tools:
    f = results[tool]
    if f:
        m = statistics.mean(f)
        spread = (max(f) - min(f)) / abs(m) if m else 0
        line.append('%s %.10g (%d runs, spread %.1e)' % (tool, statistics.median(f), len(f), spread))
    if nonfinite[tool]:
        line.append('%s not finite in %d runs' % (tool, nonfinite[tool]))
print('%s: %s' % (what[1], '; '.join(line) if line else 'none'))
for f in failed:
    print('failed: ' + f)
EOF
}

for m in $METHODS; do
    for n in $TENSORS; do
        it=$ITERS
        [ "$m" = gcp ] && it=$EPOCHS
        if [ "$n" = skew ]; then
            [[ " $SKEW_METHODS " == *" $m "* ]] || continue
            it=$SKEW_ITERS
        fi
        for e in $ENVS; do
            for t in $threads; do
                if past_deadline; then
                    echo "# $m, $n, $e, t=$t: not run (past DEADLINE=$DEADLINE s)"
                    continue
                fi
                run_tenfold "$m" "$n" "$it" "$e" "$t"
                if [ -n "$GT" ] && [ "$m" = gcp ] && [ "$n" != skew ]; then run_genten "$m" "$n" "$it" "$e" "$t"; fi
            done
        done
        table "$m" "$n" "$it"
    done
done
echo "# done in $(( $(date +%s) - T0 )) s"
