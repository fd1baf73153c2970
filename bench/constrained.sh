#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Non-negative CP side by side on the CPU (issue 44): tenfold's AO-ADMM and
# HALS (`cpd --nonneg --nonneg-method admm|hals`), tensorly's
# non_negative_parafac_hals (dense where the dense tensor fits, and on
# tensorly's sparse backend), SPLATT's AO-ADMM (`splatt cpd --con nonneg`)
# and GenTen's bound-constrained CP-OPT (`genten --method cp-opt --type
# gaussian --lower 0`), each for the same number of iterations, --tol 0,
# on the same threads; prints per tensor one table: seconds per iteration
# (the median of the iterations where a tool reports them, else its time
# over the iterations) and the fit reached, 1 - ||X - M|| / ||X|| for all
# (GenTen reports 1 - ||X - M||^2 / ||X||^2; the table converts it).
#
# Same start: uniform [0, 1) factors drawn here (Python's random, --seed),
# written as tenfold --init files, a tensorly CPTensor and a GenTen
# --initial-file. SPLATT takes no start: it draws its own (--seed).
# Iterations: outer iterations of the alternating methods; GenTen's are
# L-BFGS-B iterations (one function and gradient each, or a few), so its
# fit after N is not the others' work.
#
#   bench/constrained.sh [options] TENSOR...      (.tns, .tns.xz, ... : anything tenfold reads)
#     -r R              rank (default 16)
#     -i N              iterations (default 50)
#     -t T              threads (default 2)
#     --seed S          the start's seed (default 1)
#     --tenfold PATH    the tool (default build/release/tenfold, else build/cpu/tenfold)
#     --splatt PATH     SPLATT's `splatt` with AO-ADMM (its branch wip/ao-admm; never
#                       built or kept in this project); unset: not run
#     --genten PATH     GenTen's `genten`, or a pygenten wheel (bench/genten-prep
#                       downloads one; unpacked with bench/genten-unpack); unset: not run
#     --python PY       a Python with numpy and tensorly (and `sparse` for its sparse
#                       backend); default python3 when it imports tensorly, else not run
#     --dense-max BYTES tensorly dense when the dense tensor takes at most BYTES
#                       (default 2000000000)
#     --no-sparse       no tensorly sparse-backend run
#     --timeout S       per run (default 1800)
#     --tensorly-timeout S  per tensorly run (default 600): past it the run stops and the
#                       table gives its seconds per iteration so far, no fit
#     --out DIR         keep the runs there (default: a temporary directory, removed)
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
RANK=16 ITERS=50 THREADS=2 SEED=1 TF="" SPLATT="" GENTEN="" PY="" DENSE_MAX=2000000000 SPARSE=1 TIMEOUT=1800 TL_TIMEOUT=600 OUT=""
usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2; exit 2; }
tensors=()
while [ $# -gt 0 ]; do
    case $1 in
        -r) RANK=$2; shift 2 ;;
        -i) ITERS=$2; shift 2 ;;
        -t) THREADS=$2; shift 2 ;;
        --seed) SEED=$2; shift 2 ;;
        --tenfold) TF=$2; shift 2 ;;
        --splatt) SPLATT=$2; shift 2 ;;
        --genten) GENTEN=$2; shift 2 ;;
        --python) PY=$2; shift 2 ;;
        --dense-max) DENSE_MAX=$2; shift 2 ;;
        --no-sparse) SPARSE=0; shift ;;
        --timeout) TIMEOUT=$2; shift 2 ;;
        --tensorly-timeout) TL_TIMEOUT=$2; shift 2 ;;
        --out) OUT=$2; shift 2 ;;
        -h|--help) usage ;;
        -*) echo "constrained.sh: unknown option $1" >&2; usage ;;
        *) tensors+=("$1"); shift ;;
    esac
done
[ ${#tensors[@]} -gt 0 ] || usage
if [ -z "$TF" ]; then
    for c in "$HERE/../build/release/tenfold" "$HERE/../build/cpu/tenfold"; do [ -x "$c" ] && { TF=$c; break; }; done
fi
[ -n "$TF" ] && [ -x "$TF" ] || { echo "constrained.sh: no tenfold tool (--tenfold PATH)" >&2; exit 1; }
[ -z "$SPLATT" ] || [ -x "$SPLATT" ] || { echo "constrained.sh: --splatt $SPLATT is not an executable" >&2; exit 1; }
if [ -z "$PY" ] && python3 -c 'import numpy, tensorly' 2>/dev/null; then PY=python3; fi
if [ -n "$PY" ] && ! "$PY" -c 'import numpy, tensorly' 2>/dev/null; then
    echo "constrained.sh: $PY does not import numpy and tensorly" >&2; exit 1
fi
keep=1
if [ -z "$OUT" ]; then OUT=$(mktemp -d); keep=0; fi
mkdir -p "$OUT" || exit 1
OUT=$(cd "$OUT" && pwd)
[ $keep -eq 1 ] || trap 'rm -rf "$OUT"' EXIT
GT=""
if [ -n "${GENTEN:-}" ]; then
    GT=$("$HERE/genten-unpack" "$GENTEN" "$OUT/genten") || exit 1 # a wheel unpacked, or the tool itself
fi
export OMP_NUM_THREADS=$THREADS OPENBLAS_NUM_THREADS=$THREADS MKL_NUM_THREADS=$THREADS
export OMP_PROC_BIND=${OMP_PROC_BIND:-false} # quiets Kokkos (GenTen); the others do not bind

echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -n), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)," \
     "$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//')"
echo "# $("$TF" --version | head -n 1); rank $RANK, $ITERS iterations, --tol 0, $THREADS threads, start seed $SEED"
[ -n "$PY" ] && echo "# tensorly $("$PY" -c 'import tensorly; print(tensorly.__version__)') ($PY)"
[ -n "$SPLATT" ] && echo "# SPLATT: $SPLATT"
[ -n "$GT" ] && echo "# GenTen: $GT"

for x in "${tensors[@]}"; do
    name=$(basename "$x"); name=${name%%.*}
    base=$OUT/$name
    # the tensor as 1-based text (SPLATT, GenTen and the Python reader take it), its shape
    if ! "$TF" convert "$x" "$base.tns" -q; then echo "# $name: tenfold convert failed" >&2; continue; fi
    dims=$(awk '{ for (i = 1; i < NF; ++i) if ($i > d[i]) d[i] = $i; n = NF - 1 }
                END { for (i = 1; i <= n; ++i) printf "%s%d", (i > 1 ? "," : ""), d[i] }' "$base.tns")
    # the start, uniform [0, 1): tenfold --init files (lambda 1), a GenTen ktensor
    python3 - "$base.start" "$dims" "$RANK" "$SEED" <<'EOF'
import random, sys
stem, dims, R, seed = sys.argv[1], [int(d) for d in sys.argv[2].split(",")], int(sys.argv[3]), int(sys.argv[4])
rng = random.Random(seed)
F = [[[rng.random() for _ in range(R)] for _ in range(n)] for n in dims]
for m, f in enumerate(F):
    with open(f"{stem}.mode{m + 1}.mat", "w") as out:
        out.writelines(" ".join(repr(v) for v in row) + "\n" for row in f)
with open(f"{stem}.lambda.mat", "w") as out:
    out.writelines("1.0\n" for _ in range(R))
with open(f"{stem}.ktensor", "w") as out:
    out.write(f"ktensor\n{len(dims)}\n{' '.join(map(str, dims))}\n{R}\n{' '.join(['1.0'] * R)}\n")
    for f in F:
        out.write(f"matrix\n2\n{len(f)} {R}\n")
        out.writelines(" ".join(repr(v) for v in row) + "\n" for row in f)
EOF
    for m in admm hals; do
        timeout "$TIMEOUT" "$TF" cpd "$base.tns" -r "$RANK" -i "$ITERS" --tol 0 -t "$THREADS" --device cpu --nonneg \
            --nonneg-method $m --init "$base.start" --nowrite -q --json "$base.tenfold-$m.json" \
            >"$base.tenfold-$m.txt" 2>&1 || echo "# $name: tenfold ($m) failed: $(tail -n 1 "$base.tenfold-$m.txt")"
    done
    if [ -n "$PY" ]; then
        for backend in dense sparse; do
            [ $backend = sparse ] && [ $SPARSE -eq 0 ] && continue
            timeout "$TL_TIMEOUT" "$PY" - "$base" "$RANK" "$ITERS" "$backend" "$DENSE_MAX" >"$base.tensorly-$backend.txt" 2>&1 <<'EOF'
import json, signal, sys, time
import numpy as np
import tensorly as tl
import tensorly.decomposition._nn_cp as nn_cp
from tensorly.cp_tensor import CPTensor
from tensorly.decomposition import non_negative_parafac_hals
base, R, iters, backend, dense_max = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
d = np.loadtxt(base + ".tns", ndmin=2)
N = d.shape[1] - 1
coords, vals = d[:, :N].astype(np.int64).T - 1, d[:, N]
shape = tuple(int(c) + 1 for c in coords.max(axis=1))
start = [np.loadtxt(f"{base}.start.mode{m + 1}.mat", ndmin=2) for m in range(N)]
fn = non_negative_parafac_hals
if backend == "dense":
    if np.prod(shape, dtype=float) * 8 > dense_max:
        print(json.dumps({"skipped": "the dense tensor takes %.3g GB" % (np.prod(shape, dtype=float) * 8e-9)}))
        sys.exit(0)
    X = np.zeros(shape)
    X[tuple(coords)] = vals
else:
    try:
        import sparse
        from tensorly.contrib.sparse.core import wrap
    except ImportError as e:
        print(json.dumps({"skipped": "no sparse backend (%s)" % e}))
        sys.exit(0)
    X = sparse.COO(coords, vals, shape=shape)
    fn = wrap(non_negative_parafac_hals)
# its progress, for a run stopped by the time limit: an iteration is N MTTKRPs
calls, mttkrp = [], nn_cp.unfolding_dot_khatri_rao
def counted(*a, **k):
    out = mttkrp(*a, **k)
    calls.append(time.perf_counter())
    return out
nn_cp.unfolding_dot_khatri_rao = counted
def stopped(*_):
    done = len(calls) // N
    print(json.dumps({"partial": True, "iterations": done,
                      "seconds": (calls[done * N - 1] - t) if done else time.perf_counter() - t}), flush=True)
    sys.exit(0)
signal.signal(signal.SIGTERM, stopped)
t = time.perf_counter()
# tol 1e-300: its errors are recorded (tol 0 records none), and it never stops early but at a fixed point
cp, errors = fn(X, R, n_iter_max=iters, init=CPTensor((np.ones(R), start)), tol=1e-300, return_errors=True)
secs = time.perf_counter() - t
print(json.dumps({"seconds": secs, "iterations": len(errors), "fit": 1.0 - float(errors[-1])}))
EOF
        done
    fi
    if [ -n "$SPLATT" ]; then
        ( cd "$OUT" && timeout "$TIMEOUT" "$SPLATT" cpd "$base.tns" -r "$RANK" -i "$ITERS" --tol 0 -t "$THREADS" \
            --seed "$SEED" --con nonneg --nowrite ) >"$base.splatt.txt" 2>&1 || echo "# $name: SPLATT failed: $(tail -n 1 "$base.splatt.txt")"
    fi
    if [ -n "$GT" ]; then
        timeout "$TIMEOUT" "$GT" --input "$base.tns" --index-base 1 --rank "$RANK" --method cp-opt --type gaussian \
            --lower 0 --maxiters "$ITERS" --tol 0 --initial-file "$base.start.ktensor" --printitn 0 \
            --history-file "$base.genten.hist" >"$base.genten.txt" 2>&1 || echo "# $name: GenTen failed: $(tail -n 1 "$base.genten.txt")"
    fi
    python3 - "$base" "$name" "$ITERS" "${PY:+tensorly}" "${SPLATT:+splatt}" "${GT:+genten}" <<'EOF'
import json, math, os, re, statistics, sys
base, name, iters = sys.argv[1], sys.argv[2], int(sys.argv[3])
rows = []
for m, what in (("admm", "AO-ADMM"), ("hals", "HALS")):
    try:
        r = json.load(open(f"{base}.tenfold-{m}.json"))
        its = r["iterations"]
        rows.append(("tenfold", r["options"]["algorithm"] + f" (--nonneg-method {m})", "shared", len(its),
                     statistics.median(i["seconds"] for i in its), r["result"]["fit"]))
    except (OSError, ValueError, KeyError):
        rows.append(("tenfold", what, "shared", None, None, None))
if "tensorly" in sys.argv[4:]:
    for b in ("dense", "sparse"):
        p = f"{base}.tensorly-{b}.txt"
        if not os.path.exists(p):
            continue
        try:
            r = json.loads(open(p).read().strip().split("\n")[-1])
        except ValueError:
            r = {"skipped": "failed: " + open(p).read().strip().split("\n")[-1][:60]}
        if "skipped" in r:
            rows.append(("tensorly " + b, "HALS: " + r["skipped"], "shared", None, None, None))
        elif r.get("partial"):
            rows.append(("tensorly " + b, "HALS (stopped at the time limit)", "shared", r["iterations"],
                         r["seconds"] / r["iterations"] if r["iterations"] else None, None))
        else:
            rows.append(("tensorly " + b, "HALS", "shared", r["iterations"], r["seconds"] / r["iterations"], r["fit"]))
if "splatt" in sys.argv[4:]:
    txt = open(f"{base}.splatt.txt", errors="replace").read()
    its = re.findall(r"its = +(\d+) \(([\d.]+)s\) +(fit|rel-err) = +([-\w.+]+)", txt)
    if its:
        v = float(its[-1][3])
        fit = v if its[-1][2] == "fit" else 1.0 - v
        note = "AO-ADMM" + (" (DPOTRF failed: not a fit)" if "DPOTRF returned" in txt else "")
        rows.append(("SPLATT", note, "its own", len(its), statistics.median(float(t) for _, t, _, _ in its), fit))
    else:
        rows.append(("SPLATT", "AO-ADMM: no iterations in its output", "its own", None, None, None))
if "genten" in sys.argv[4:]:
    try:
        lines = [l.split() for l in open(f"{base}.genten.hist") if l.strip() and l.split()[0].isdigit()]
        n, t, gfit = int(lines[-1][0]), float(lines[-1][6]), float(lines[-1][2])
        # GenTen's fit is 1 - ||X - M||^2 / ||X||^2
        rows.append(("GenTen", "CP-OPT, L-BFGS-B, lower 0", "shared", n, t / max(n, 1),
                     1.0 - math.sqrt(max(1.0 - gfit, 0.0))))
    except (OSError, ValueError, IndexError):
        rows.append(("GenTen", "CP-OPT: no history", "shared", None, None, None))
print(f"\n{name}: {iters} iterations")
print("| tool | method | start | iterations | s / iteration | fit |")
print("|---|---|---|---|---|---|")
for tool, what, start, n, s, f in rows:
    cell = lambda v, fmt: "-" if v is None else fmt % v
    print(f"| {tool} | {what} | {start} | {cell(n, '%d')} | {cell(s, '%.4g')} | {cell(f, '%.6f')} |")
EOF
done
