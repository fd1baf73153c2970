#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# CP-ALS seconds per iteration of the CPU backend over thread counts, in the
# default environment and under OpenMP binding, beside GenTen's (issue 48).
#
# usage: bench/cpu_scaling.sh TENFOLD DATA_DIR [OUT_DIR]
#   TENFOLD   the tool (build/cpu/tenfold)
#   DATA_DIR  holds uber-apr14.tns.xz and nycflights13.tns.xz (.devdata on the device)
#   OUT_DIR   where the generated 20M tensor, its text and GenTen copies and the
#             reports go (default: a temporary directory, removed at the end; a
#             given one is kept, and the generated tensors in it reused)
#   GENTEN    (environment) GenTen's `genten` tool, or a pygenten wheel, which is
#             unpacked into OUT_DIR/genten (bench/genten-prep downloads it into
#             .devdeps/genten/); unset: tenfold alone
#   ALTO      (environment) ALTO's `cpd64` (IntelLabs/ALTO, built outside the
#             project; a .xz of it is unpacked into OUT_DIR), run from its own
#             binary copy of each tensor (written once by `cpd64 -f 1`) and its own
#             random start (-x 1): seconds per iteration only; unset: no ALTO
#
# Per tensor, environment and tool one row: the median seconds per iteration
# (iterations 2..N: the first one is left out) at each thread count, the
# speedup from the first to the last count and its efficiency, and whether
# more threads were ever slower than fewer (by more than 5 %: "no (t=16
# +12%)"). uber and nycflights13 start both tools from the same factors
# (GenTen's random guess, written once) and a row compares the final fits
# (GenTen prints 7 digits); the 20M skewed tensor starts each from its own
# seed. Then tenfold's teams (`cpd -v`) per thread count, and for the 20M
# tensor where an iteration's time goes (MTTKRP, dense steps, fit) at the
# first and last count. About 6 minutes on a 32-core host with GenTen.
#
# Settings (environment): THREADS="1 2 4 8 16 32", RANK=16, ITERS=20 (real
# tensors), SKEW_ITERS=6 (the 20M tensor), SKEW_NNZ=20M (2M for a quick run
# on a small machine; its dims shrink with it), ENVS="default spread active"
# for the real tensors and SKEW_ENVS="default spread" for the 20M one
# (default: none of the caller's OMP_* variables; spread =
# OMP_PROC_BIND=spread OMP_PLACES=threads, as Kokkos asks; active =
# OMP_WAIT_POLICY=active, threads spinning instead of sleeping between
# steps; spread-active = both; close = OMP_PROC_BIND=close
# OMP_PLACES=cores), GENTEN_SKEW_THREADS="8 32" (GenTen's
# thread counts on the 20M tensor, "all" for THREADS, "" for none),
# RUN_TIMEOUT=300 seconds per run, DEADLINE=450: no run starts later than this
# many seconds after the script (each tensor's table is printed when its runs
# end, the 20M tensor last). "default" unsets the OMP_* variables of
# the caller; GenTen and ALTO get OMP_NUM_THREADS=t (ALTO on the 20M tensor
# at GENTEN_SKEW_THREADS too).
set -u
if [ $# -lt 2 ]; then
    sed -n '6,15p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
TF=$1
DATA=$2
THREADS=${THREADS:-1 2 4 8 16 32}
RANK=${RANK:-16}
ITERS=${ITERS:-20}
SKEW_ITERS=${SKEW_ITERS:-6}
SKEW_NNZ=${SKEW_NNZ:-20M}
ENVS=${ENVS:-default spread active}
SKEW_ENVS=${SKEW_ENVS:-default spread}
GENTEN_SKEW_THREADS=${GENTEN_SKEW_THREADS-8 32}
[ "$GENTEN_SKEW_THREADS" = all ] && GENTEN_SKEW_THREADS=$THREADS
RUN_TIMEOUT=${RUN_TIMEOUT:-300}
DEADLINE=${DEADLINE:-450}
HERE=$(cd "$(dirname "$0")" && pwd)
T0=$(date +%s)
[ -x "$TF" ] || { echo "cpu_scaling: $TF is not an executable" >&2; exit 1; }
for f in uber-apr14.tns.xz nycflights13.tns.xz; do
    [ -r "$DATA/$f" ] || { echo "cpu_scaling: $DATA/$f is missing" >&2; exit 1; }
done
command -v python3 >/dev/null || { echo "cpu_scaling: python3 is needed (it reads the reports)" >&2; exit 1; }
if [ $# -ge 3 ]; then
    OUT=$3
    mkdir -p "$OUT" || exit 1
else
    OUT=$(mktemp -d) || exit 1
    trap 'rm -rf "$OUT"' EXIT
fi

SCALING_NAME=cpu_scaling
. "$HERE/lib/scaling.bash"
for e in $ENVS $SKEW_ENVS; do env_of "$e" >/dev/null || exit 2; done

# ---- GenTen
GT=""
if [ -n "${GENTEN:-}" ]; then
    GT=$("$HERE/genten-unpack" "$GENTEN" "$OUT/genten") || exit 1 # a wheel unpacked, or the tool itself
fi

# ---- ALTO
AL=""
if [ -n "${ALTO:-}" ]; then
    case $ALTO in
        *.xz) mkdir -p "$OUT/alto" && xz -dc "$ALTO" >"$OUT/alto/cpd64" && chmod +x "$OUT/alto/cpd64" || exit 1
              AL=$OUT/alto/cpd64 ;;
        *) AL=$ALTO ;;
    esac
    [ -x "$AL" ] || { echo "cpu_scaling: ALTO's tool $AL is not an executable" >&2; exit 1; }
fi

# ---- the machine and the tools
scaling_machine
[ -n "$GT" ] && echo "# GenTen: $GT (Kokkos OpenMP; OMP_NUM_THREADS=t)"
[ -n "$AL" ] && echo "# ALTO: $AL (OpenMP; OMP_NUM_THREADS=t; its binary input, its own start)"
scaling_info_threads $ENVS

# ---- the tensors: the real ones as text (GenTen reads no .xz), the skewed one generated
skew=$(scaling_skew "$OUT" "$SKEW_NNZ") || exit 1
if [ -n "$GT$AL" ]; then
    for n in uber-apr14 nycflights13; do
        [ -s "$OUT/$n.tns" ] || "${CLEAN[@]}" "$TF" convert "$DATA/$n.tns.xz" "$OUT/$n.tns" -q ||
            { echo "cpu_scaling: tenfold convert of $n failed" >&2; exit 1; }
    done
fi
# ALTO's binary copy of a text tensor: alto_copy TEXT NAME (cpd64 -f 1 writes <N>D_<nnz>.bin in its cwd)
alto_copy() {
    [ -s "$OUT/$2.abin" ] && return 0
    mkdir -p "$OUT/alto-$2" && (cd "$OUT/alto-$2" && rm -f ./*.bin &&
        timeout "$RUN_TIMEOUT" "${CLEAN[@]}" OMP_NUM_THREADS=4 "$AL" -i "$1" -r 2 -m 1 -f 1 >copy.log 2>&1) &&
        mv "$OUT/alto-$2"/*.bin "$OUT/$2.abin" ||
        { echo "cpu_scaling: ALTO's copy of $2 failed" >&2; tail -n 3 "$OUT/alto-$2/copy.log" >&2; return 1; }
}
if [ -n "$AL" ]; then
    for n in uber-apr14 nycflights13; do alto_copy "$OUT/$n.tns" "$n" || exit 1; done
    if [ -n "$GENTEN_SKEW_THREADS" ] && [ ! -s "$OUT/skew.abin" ]; then
        { "${CLEAN[@]}" "$TF" convert "$skew" "$OUT/skew-$SKEW_NNZ.alto.tns" -q && alto_copy "$OUT/skew-$SKEW_NNZ.alto.tns" skew; } ||
            exit 1
        rm -f "$OUT/skew-$SKEW_NNZ.alto.tns"
    fi
fi
if [ -n "$GT" ]; then
    for n in uber-apr14 nycflights13; do
        # the shared start: GenTen's random guess (seed 1), as tenfold's --init files
        if [ ! -s "$OUT/$n.start.txt" ]; then
            timeout "$RUN_TIMEOUT" "${CLEAN[@]}" OMP_NUM_THREADS=1 "$GT" --input "$OUT/$n.tns" --index-base 1 \
                --rank "$RANK" --maxiters 1 --printitn 0 --seed 1 --initial-guess-output-file "$OUT/$n.start.txt" \
                >"$OUT/$n.start.log" 2>&1 || { echo "cpu_scaling: GenTen's start of $n failed" >&2; tail -3 "$OUT/$n.start.log" >&2; exit 1; }
        fi
        awk -v stem="$OUT/$n.start" '
            NR == 5 { for (i = 1; i <= NF; ++i) print $i > (stem ".lambda.mat") }
            /^matrix/ { ++m; getline; getline; next }
            m > 0 && NF > 0 { print > (stem ".mode" m ".mat") }' "$OUT/$n.start.txt"
    done
    if [ -n "$GENTEN_SKEW_THREADS" ] && [ ! -s "$OUT/skew-$SKEW_NNZ.gbin" ]; then
        # GenTen's binary copy (reading 20M lines of text took GenTen longer than its runs)
        if ! { "${CLEAN[@]}" "$TF" convert "$skew" "$OUT/skew-$SKEW_NNZ.tns" -q &&
               "$(dirname "$GT")/convert_tensor" --input-file "$OUT/skew-$SKEW_NNZ.tns" --input-index-base 1 \
                   --output-file "$OUT/skew-$SKEW_NNZ.gbin" --output-format sparse --output-type binary \
                   >"$OUT/skew-convert.log" 2>&1; }; then
            echo "cpu_scaling: the skew tensor's GenTen copy failed" >&2
            tail -n 3 "$OUT/skew-convert.log" >&2
            exit 1
        fi
        rm -f "$OUT/skew-$SKEW_NNZ.tns"
    fi
fi
echo "# prepared in $(( $(date +%s) - T0 )) s"

# ---- the runs: OUT/NAME.TOOL.ENV.tT.{json,hist,txt} (a kept OUT_DIR's earlier ones removed first)
rm -f "$OUT"/*.tenfold.*.t*.* "$OUT"/*.genten.*.t*.* "$OUT"/*.alto.*.t*.*
run_tenfold() { # NAME INPUT ITERS ENV T [INIT_STEM]
    local base=$OUT/$1.tenfold.$4.t$5 init=()
    [ -n "${6:-}" ] && init=(--init "$6")
    timeout "$RUN_TIMEOUT" "${CLEAN[@]}" $(env_of "$4") "$TF" cpd "$2" -r "$RANK" -i "$3" --tol 0 -t "$5" \
        "${init[@]}" --device cpu --nowrite -v --json "$base.json" >"$base.txt" 2>&1
}
run_genten() { # NAME INPUT ITERS ENV T [START_FILE]
    local base=$OUT/$1.genten.$4.t$5 start=(--seed 1) idx=()
    [ -n "${6:-}" ] && start=(--initial-file "$6")
    case $2 in *.tns) idx=(--index-base 1) ;; esac
    timeout "$RUN_TIMEOUT" "${CLEAN[@]}" $(env_of "$4") OMP_NUM_THREADS="$5" "$GT" --input "$2" "${idx[@]}" \
        --rank "$RANK" --maxiters "$3" --tol 0 --printitn 0 "${start[@]}" --timings \
        --history-file "$base.hist" >"$base.txt" 2>&1
}
run_alto() { # NAME ITERS ENV T
    timeout "$RUN_TIMEOUT" "${CLEAN[@]}" $(env_of "$3") OMP_NUM_THREADS="$4" "$AL" -b "$OUT/$1.abin" -r "$RANK" \
        -m "$2" -x 1 >"$OUT/$1.alto.$3.t$4.txt" 2>&1
}
# the table of one tensor (NAME: nycflights13, uber-apr14 or skew), from the reports in OUT
table() {
    PYTHONPATH="$HERE/lib${PYTHONPATH:+:$PYTHONPATH}" python3 - "$OUT" "$RANK" "$ITERS" "$SKEW_ITERS" "$SKEW_NNZ" "$THREADS" "$ENVS" "$SKEW_ENVS" "${GT:+genten}" "$1" "${AL:+alto}" <<'EOF'
import json, os, re, statistics, sys
from scaling import fmt, header, row
out, rank, iters, skew_iters, skew_nnz, threads, real_envs, skew_envs, with_genten, only, with_alto = sys.argv[1:12]
threads = [int(t) for t in threads.split()]
tools = ['tenfold'] + (['genten'] if with_genten else []) + (['alto'] if with_alto else [])

def tenfold(name, env, t):
    """(median s/iter of iterations 2.., final fit, report) or None"""
    try:
        r = json.load(open('%s/%s.tenfold.%s.t%d.json' % (out, name, env, t)))
    except (OSError, ValueError):
        return None
    s = [i['seconds'] for i in r['iterations'][1:]]
    return (statistics.median(s) if s else None, r['result']['fit'], r)

def genten(name, env, t):
    """(median s/iter of iterations 2.., final fit) or None, from --history-file"""
    try:
        lines = open('%s/%s.genten.%s.t%d.hist' % (out, name, env, t)).read().split('\n')
    except OSError:
        return None
    rows, seen = [], set()
    for line in lines[1:]:
        f = line.split()
        if len(f) < 7 or not f[0].isdigit() or f[0] in seen:
            continue  # the last row repeats the last iteration with its totals
        seen.add(f[0])
        rows.append((int(f[0]), float(f[2]), float(f[6])))
    s = [rows[k][2] - rows[k - 1][2] for k in range(2, len(rows))]  # iteration k = time[k] - time[k-1], k >= 2
    return (statistics.median(s) if s else None, rows[-1][1] if rows else None)

def alto(name, env, t):
    """(median s/iter of iterations 2.., None) or None, from ALTO's `it: k fit: F ... time(for MTTKRP): S s (M s)`"""
    try:
        txt = open('%s/%s.alto.%s.t%d.txt' % (out, name, env, t)).read()
    except OSError:
        return None
    rows = [(int(m.group(1)), float(m.group(2)))
            for m in re.finditer(r'^it: (\d+)\s.*time\(for MTTKRP\): (\S+) s', txt, re.M)]
    s = [r[1] for r in rows if r[0] >= 1]
    return (statistics.median(s) if s else None, None)

names = [('nycflights13', iters), ('uber-apr14', iters), ('skew-' + skew_nnz, skew_iters)]
for name, it in names:
    key = 'skew' if name.startswith('skew') else name
    if key != only:
        continue
    envs = (skew_envs if key == 'skew' else real_envs).split()
    r1 = next((tenfold(key, e, t) for e in envs for t in threads if tenfold(key, e, t)), None)
    desc = ''
    if r1:
        ten = r1[2]['tensor']
        desc = ', %s, %s non-zeros' % (' x '.join(str(d) for d in ten.get('dims', [])), ten.get('nnz', '?'))
    same = ' from the same start' if key != 'skew' and with_genten else ''
    print('\n# %s%s: CP-ALS rank %s, %s iterations%s; median s/iter of iterations 2..%s' % (name, desc, rank, it, same, it))
    print(header(threads))
    fits = {tool: [] for tool in tools}
    for e in envs:
        for tool in tools:
            res = [{'tenfold': tenfold, 'genten': genten, 'alto': alto}[tool](key, e, t) for t in threads]
            times = [r[0] if r else None for r in res]
            fits[tool] += [r[1] for r in res if r and r[1] is not None]
            if tool != 'tenfold' and not any(times):
                continue
            print(row(threads, times, '%-8s %-8s' % (tool, e)))
    line = []
    for tool in tools:
        f = fits[tool]
        if f:
            spread = (max(f) - min(f)) / abs(statistics.mean(f)) if statistics.mean(f) else 0
            line.append('%s %.10g (%d runs, spread %.1e)' % (tool, statistics.median(f), len(f), spread))
    if 'genten' in tools and fits['tenfold'] and fits['genten'] and key != 'skew':
        a, b = statistics.median(fits['tenfold']), statistics.median(fits['genten'])
        line.append('agree to 7 digits: %s' % ('yes' if abs(a - b) <= 5e-7 * abs(b) + 1e-12 else 'NO (%.2e apart)' % abs(a - b)))
    print('fits: ' + '; '.join(line))
    # the teams of the first environment, from the threads line of cpd -v
    teams, dense = [], []
    for t in threads:
        try:
            txt = open('%s/%s.tenfold.%s.t%d.txt' % (out, key, envs[0], t)).read()
            m = re.search(r'^threads: MTTKRP (\d+) of \d+ \(OpenMP\), dense steps up to (\d+)', txt, re.M)
            teams.append(m.group(1) if m else '?')
            dense.append(m.group(2) if m else '?')
        except OSError:
            teams.append('-')
            dense.append('-')
    print('tenfold teams (%s): MTTKRP %s; dense steps up to %s' % (envs[0], ' '.join(teams), ' '.join(dense)))
    if key == 'skew':
        for e in envs:
            parts = []
            for t in (threads[0], threads[-1]):
                r = tenfold(key, e, t)
                if not r:
                    continue
                ts, n = r[2]['timing_seconds'], r[2]['result']['iterations']
                parts.append('t=%d mttkrp %.3g dense %.3g fit %.3g' % (t, ts['mttkrp'] / n, ts['dense'] / n, ts['fit'] / n))
            print('tenfold s/iter by step (%s, all iterations): %s' % (e, '; '.join(parts)))
EOF
}

for name in nycflights13 uber-apr14 skew; do
    if [ $name = skew ]; then x=$skew; it=$SKEW_ITERS; gx=$OUT/skew-$SKEW_NNZ.gbin; stem=""; gstart=""; gthreads=$GENTEN_SKEW_THREADS
    else x=$DATA/$name.tns.xz; it=$ITERS; gx=$OUT/$name.tns; stem=$OUT/$name.start; gstart=$OUT/$name.start.txt; gthreads=$THREADS; fi
    [ -n "$GT" ] || stem=""
    envs=$ENVS
    [ $name = skew ] && envs=$SKEW_ENVS
    for e in $envs; do
        for t in $THREADS; do
            if past_deadline; then
                echo "# $name, $e, t=$t: not run (past DEADLINE=$DEADLINE s)"
                continue
            fi
            run_tenfold "$name" "$x" "$it" "$e" "$t" "$stem"
            if [ -n "$GT" ] && [[ " $gthreads " == *" $t "* ]]; then run_genten "$name" "$gx" "$it" "$e" "$t" "$gstart"; fi
            if [ -n "$AL" ] && [[ " $gthreads " == *" $t "* ]]; then run_alto "$name" "$it" "$e" "$t"; fi
        done
    done
    table "$name"
done
for e in $SKEW_ENVS; do
    last=${THREADS##* }
    echo "# cpd -v at t=$last under '$e': $(grep -m1 '^threads: ' "$OUT/skew.tenfold.$e.t$last.txt" 2>/dev/null | cut -c1-300)"
done
echo "# done in $(( $(date +%s) - T0 )) s"
