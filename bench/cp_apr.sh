#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# CP-APR on the CPU: tenfold (cpd --method apr) beside pyttb's cp_apr
# (algorithm 'mu', the same algorithm: the same log-likelihoods from the same
# start) and GenTen (no CP-APR: its Poisson GCP by CP-OPT, --method cp-opt
# --type poisson --lower 0, the anchor), from one start (issue 45).
#
# usage: bench/cp_apr.sh TENFOLD TENSOR [TENSOR...]
#   TENFOLD  the tool (build/cpu/tenfold)
#   TENSOR   count tensors: .tns or .tns.xz (e.g. ../shared/data/enron-igraphdata.tns.xz)
#   PYTHON   (environment) a python with pyttb and numpy (a venv outside the
#            project: python3 -m venv V && V/bin/pip install pyttb); unset: no pyttb
#   GENTEN   (environment) GenTen's `genten` tool, or a pygenten wheel (pip
#            download pygenten==0.1.5 --no-deps -d DIR), unpacked and patched by
#            bench/genten-unpack (the pip-installed tool of 0.1.5 dies at start,
#            see there); unset: no GenTen
#
# Settings: ALGORITHM=mu (tenfold's --apr-algorithm and pyttb's algorithm=:
# mu or pdnr, the row-wise Newton method), TARGET (a log-likelihood: the
# summary adds the seconds tenfold's run took to reach it, the build aside,
# so that runs of mu and pdnr compare), RANK=8, ITERS=20 (outer iterations of tenfold and pyttb),
# GENTEN_ITERS (GenTen's L-BFGS-B iterations, default ITERS: an iteration of
# CP-OPT gains less than one of CP-APR, so a larger count shows the time it
# takes to a likelihood as high), INNER=10 (tenfold's and pyttb's inner iterations),
# THREADS (tenfold -t, GenTen's OMP_NUM_THREADS; default: the CPUs), OUT (a
# directory for the start, the reports and logs; default: a temporary one,
# removed), RUN_TIMEOUT=1800 seconds per run, DEVICE (tenfold's --device:
# cpu, the default, or gpu). The start: GenTen's random guess
# (seed 1) when it is there, else numpy's uniform factors (seed 1), written
# as tenfold's --init files; every tool starts from it. Per tensor one row per
# tool: seconds in all and per outer iteration (tenfold: the tf_cp_apr call;
# pyttb: the cp_apr call; GenTen: its history's time from its start to its
# last iteration), the final log-likelihood (GenTen's: minus its loss, whose log
# has a 1e-10 floor), and for pyttb the largest relative difference of
# tenfold's log-likelihood from pyttb's (its 'obj' of the whole run). This
# script builds and installs nothing.
set -u
if [ $# -lt 2 ]; then
    sed -n '7,16p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
TF=$1
shift
ALGORITHM=${ALGORITHM:-mu}
case $ALGORITHM in mu|pdnr) ;; *) echo "cp_apr: ALGORITHM is mu or pdnr, not '$ALGORITHM'" >&2; exit 2 ;; esac
TARGET=${TARGET:-}
RANK=${RANK:-8}
ITERS=${ITERS:-20}
GENTEN_ITERS=${GENTEN_ITERS:-$ITERS}
INNER=${INNER:-10}
THREADS=${THREADS:-$(nproc)}
RUN_TIMEOUT=${RUN_TIMEOUT:-1800}
DEVICE=${DEVICE:-cpu}
PY=${PYTHON:-}
HERE=$(cd "$(dirname "$0")" && pwd)
[ -x "$TF" ] || { echo "cp_apr: $TF is not an executable" >&2; exit 1; }
command -v python3 >/dev/null || { echo "cp_apr: python3 is needed (it reads the reports)" >&2; exit 1; }
if [ -n "$PY" ] && ! "$PY" -c 'import pyttb, numpy' 2>/dev/null; then
    echo "cp_apr: $PY has no pyttb (python3 -m venv V && V/bin/pip install pyttb)" >&2
    exit 1
fi
if [ -n "${OUT:-}" ]; then
    mkdir -p "$OUT" || exit 1
else
    OUT=$(mktemp -d) || exit 1
    trap 'rm -rf "$OUT"' EXIT
fi
GT=""
if [ -n "${GENTEN:-}" ]; then
    GT=$("$HERE/genten-unpack" "$GENTEN" "$OUT/genten") || exit 1 # a wheel unpacked, or the tool itself
fi
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -n), $(nproc) CPUs," \
     "$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $("$TF" --version | head -n 1); $ALGORITHM, rank $RANK, $ITERS iterations (GenTen $GENTEN_ITERS), inner $INNER, $THREADS threads, tenfold on the $DEVICE"
[ -n "$PY" ] && echo "# pyttb $("$PY" -c 'import pyttb; print(pyttb.__version__)') ($PY)"
[ -n "$GT" ] && echo "# GenTen: $GT --method cp-opt --type poisson --lower 0 (Kokkos OpenMP)"

for tensor in "$@"; do
    name=$(basename "$tensor"); name=${name%.xz}; name=${name%.tns}
    text=$OUT/$name.tns
    case $tensor in # GenTen and pyttb read plain text
        *.xz) [ -s "$text" ] || xz -dc "$tensor" >"$text" || { echo "cp_apr: cannot read $tensor" >&2; exit 1; } ;;
        *) text=$tensor ;;
    esac
    start=$OUT/$name.start
    rm -f "$start".* "$OUT/$name".tenfold.* "$OUT/$name".pyttb.* "$OUT/$name".genten.* # a kept OUT's earlier runs
    if [ -n "$GT" ]; then # GenTen's random guess, as tenfold's --init files
        timeout "$RUN_TIMEOUT" env OMP_NUM_THREADS=1 "$GT" --input "$text" --index-base 1 --rank "$RANK" --maxiters 1 \
            --printitn 0 --seed 1 --initial-guess-output-file "$start.txt" >"$OUT/$name.start.log" 2>&1 ||
            { echo "cp_apr: GenTen's start of $name failed" >&2; tail -3 "$OUT/$name.start.log" >&2; exit 1; }
        awk -v stem="$start" '
            NR == 5 { for (i = 1; i <= NF; ++i) print $i > (stem ".lambda.mat") }
            /^matrix/ { ++m; getline; getline; next }
            m > 0 && NF > 0 { print > (stem ".mode" m ".mat") }' "$start.txt"
    elif [ -n "$PY" ]; then
        "$PY" - "$text" "$RANK" "$start" <<'EOF' || exit 1
import sys, numpy as np
d = np.loadtxt(sys.argv[1], ndmin=2)
shape = d[:, :-1].astype(np.int64).max(0)
rng = np.random.default_rng(1)
for m, n in enumerate(shape):
    np.savetxt("%s.mode%d.mat" % (sys.argv[3], m + 1), rng.uniform(0, 1, (n, int(sys.argv[2]))), fmt="%.17e")
EOF
    fi
    init=(--seed 1)
    [ -s "$start.mode1.mat" ] && init=(--init "$start")
    timeout "$RUN_TIMEOUT" "$TF" cpd "$text" --method apr --apr-algorithm "$ALGORITHM" -r "$RANK" -i "$ITERS" --inner "$INNER" -t "$THREADS" \
        "${init[@]}" --device "$DEVICE" --nowrite --json "$OUT/$name.tenfold.json" >"$OUT/$name.tenfold.txt" 2>&1 ||
        { echo "cp_apr: tenfold on $name failed" >&2; tail -3 "$OUT/$name.tenfold.txt" >&2; }
    if [ -n "$PY" ]; then
        timeout "$RUN_TIMEOUT" "$PY" - "$text" "$RANK" "$ITERS" "$INNER" "$start" "$ALGORITHM" >"$OUT/$name.pyttb.json" \
            2>"$OUT/$name.pyttb.log" <<'EOF' || { echo "cp_apr: pyttb on $name failed" >&2; tail -3 "$OUT/$name.pyttb.log" >&2; }
import json, os, sys, time
import numpy as np, pyttb as ttb
path, R, iters, inner, start, alg = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
d = np.loadtxt(path, ndmin=2)
subs = d[:, :-1].astype(np.int64) - 1
X = ttb.sptensor(subs, d[:, -1:], tuple(int(n) for n in subs.max(0) + 1))
F = [np.loadtxt("%s.mode%d.mat" % (start, m + 1), ndmin=2) for m in range(X.ndims)]
w = np.loadtxt(start + ".lambda.mat", ndmin=1) if os.path.exists(start + ".lambda.mat") else np.ones(R)
t = time.perf_counter()
M, _, out = ttb.cp_apr(X, R, algorithm=alg, init=ttb.ktensor(F, w), maxiters=iters, maxinneriters=inner,
                       printitn=0)
inner = out["nTotalIters"] if "nTotalIters" in out else sum(out["nInnerIters"])
print(json.dumps({"seconds": time.perf_counter() - t, "iterations": len(out["kktViolations"]), "loglik": out["obj"],
                  "inner": int(inner)}))
EOF
    fi
    if [ -n "$GT" ]; then
        timeout "$RUN_TIMEOUT" env OMP_NUM_THREADS="$THREADS" "$GT" --input "$text" --index-base 1 --rank "$RANK" \
            --method cp-opt --type poisson --lower 0 --maxiters "$GENTEN_ITERS" --printitn 0 --initial-file "$start.txt" \
            --history-file "$OUT/$name.genten.hist" >"$OUT/$name.genten.txt" 2>&1 ||
            { echo "cp_apr: GenTen on $name failed" >&2; tail -3 "$OUT/$name.genten.txt" >&2; }
    fi
    python3 - "$OUT" "$name" "$ALGORITHM" "$TARGET" <<'EOF'
import json, re, sys
out, name, alg, target = sys.argv[1:5]
def load(path):
    try:
        return json.load(open(path))
    except (OSError, ValueError):
        return None
rows = []
tf = load("%s/%s.tenfold.json" % (out, name))
if tf:
    r = tf["result"]
    ll = [i["log_likelihood"] for i in tf["iterations"]]
    note = "%d inner" % r["inner_iterations"]
    if target:  # the time to the given log-likelihood
        acc, reach = 0.0, None
        for it in tf["iterations"]:
            acc += it["seconds"]
            if it["log_likelihood"] >= float(target):
                reach = (it["iter"], acc)
                break
        note += ("; reaches %s at outer iteration %d, %.3f s" % (target, reach[0], reach[1]) if reach
                 else "; does not reach %s" % target)
    rows.append(("tenfold", "CP-APR " + alg, r["iterations"], tf["timing_seconds"]["cpd_total"], r["log_likelihood"],
                 note))
py = load("%s/%s.pyttb.json" % (out, name))
if py:
    note = "%d inner" % py["inner"]
    if tf and len(ll) == py["iterations"]:
        note += "; tenfold's loglik within %.1e" % (abs(ll[-1] - py["loglik"]) / abs(py["loglik"]))
    rows.append(("pyttb", "cp_apr " + alg, py["iterations"], py["seconds"], py["loglik"], note))
try:  # the history: iter, residual (the loss), fit, ||grad||, ..., time (from the start, the read aside)
    hist = [l.split() for l in open("%s/%s.genten.hist" % (out, name))]
    hist = [h for h in hist if h and h[0].isdigit()]
    its, loss, secs = int(hist[-1][0]), float(hist[-1][1]), float(hist[-1][6]) - float(hist[0][6])
    note = "L-BFGS-B iterations; loglik = -loss"
    if tf:  # tenfold's time to GenTen's final log-likelihood (the build and the read aside)
        acc, reach = 0.0, None
        for it in tf["iterations"]:
            acc += it["seconds"]
            if it["log_likelihood"] >= -loss:
                reach = (it["iter"], acc)
                break
        note += ("; tenfold reaches it at outer iteration %d, %.4f s: %.1fx faster" % (reach[0], reach[1],
                 secs / reach[1]) if reach else "; tenfold does not reach it")
    rows.append(("GenTen", "CP-OPT Poisson", its, secs, -loss, note))
except (OSError, IndexError, ValueError):
    pass
print("\n%s (%s)" % (name, tf and "%s, %d non-zeros" % (" x ".join(map(str, tf["tensor"]["dims"])), tf["tensor"]["nnz"])))
print("  %-8s %-15s %6s %10s %12s %18s  %s" % ("tool", "method", "iters", "seconds", "s/iter", "log-likelihood", ""))
for tool, method, its, secs, ll, note in rows:
    print("  %-8s %-15s %6d %10.3f %12.4f %18.10g  %s" % (tool, method, its, secs, secs / max(its, 1), ll, note))
EOF
done
