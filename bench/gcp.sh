#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# GCP-Adam on the CPU: tenfold (cpd --method gcp) beside GenTen's gcp-sgd
# (Adam step), the same tensor, loss, rank, sample sizes, epoch iterations,
# rate and threads (issue 46). Each runs EPOCHS epochs; the row per tool is
# its seconds per epoch (tenfold: its epochs' own times; GenTen: the time
# of its last epoch line over the epochs) and its loss estimates.
#
# usage: bench/gcp.sh TENFOLD TENSOR [TENSOR...]
#   TENFOLD  the tool (build/cpu/tenfold)
#   TENSOR   count tensors, .tns or .tns.xz (../shared/data/uber-apr14.tns.xz)
#   GENTEN   (environment) GenTen's `genten` tool, or a pygenten wheel (bench/genten-prep
#            fetches one; bench/genten-unpack unpacks it); unset: no GenTen
#
# Settings: LOSS=poisson, RANK=16, EPOCHS=3, EPOCH_ITERS=1000, RATE=1e-3,
# GNZ/GZ (gradient samples per iteration) and FNZ/FZ (the estimate's fixed
# sample): default GenTen's for 100 epochs (its default maxiters):
# max(ceil(3 nnz / 100), 1000) and max(ceil(nnz / 100), 100000), capped at
# nnz; SAMPLING=stratified (or semi-stratified: both tools' --sampling);
# THREADS (tenfold -t, GenTen's OMP_NUM_THREADS; default the CPUs),
# OUT (a directory for the logs; default a temporary one, removed),
# RUN_TIMEOUT=3600 seconds per run. Builds and installs nothing.
set -u
if [ $# -lt 2 ]; then
    sed -n '9,13p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
TF=$1
shift
LOSS=${LOSS:-poisson}
RANK=${RANK:-16}
EPOCHS=${EPOCHS:-3}
EPOCH_ITERS=${EPOCH_ITERS:-1000}
RATE=${RATE:-1e-3}
SAMPLING=${SAMPLING:-stratified}
THREADS=${THREADS:-$(nproc)}
RUN_TIMEOUT=${RUN_TIMEOUT:-3600}
HERE=$(cd "$(dirname "$0")" && pwd)
[ -x "$TF" ] || { echo "gcp: $TF is not an executable" >&2; exit 1; }
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
echo "# $("$TF" --version | head -n 1); loss $LOSS, rank $RANK, $EPOCHS epochs of $EPOCH_ITERS iterations, rate $RATE, $SAMPLING sampling, $THREADS threads"

for tensor in "$@"; do
    name=$(basename "$tensor"); name=${name%.xz}; name=${name%.tns}
    text=$OUT/$name.tns
    case $tensor in # GenTen reads plain text
        *.xz) [ -s "$text" ] || xz -dc "$tensor" >"$text" || { echo "gcp: cannot read $tensor" >&2; exit 1; } ;;
        *) text=$tensor ;;
    esac
    nnz=$(grep -vc '^#' "$text")
    gnz=${GNZ:-$(( (3 * nnz + 99) / 100 ))}; [ "$gnz" -lt 1000 ] && gnz=1000; [ "$gnz" -gt "$nnz" ] && gnz=$nnz
    fnz=${FNZ:-$(( (nnz + 99) / 100 ))}; [ "$fnz" -lt 100000 ] && fnz=100000; [ "$fnz" -gt "$nnz" ] && fnz=$nnz
    gz=${GZ:-$gnz}
    fz=${FZ:-$fnz}
    echo "# $name: $nnz non-zeros; samples per iteration $gnz + $gz, estimate $fnz + $fz"
    timeout "$RUN_TIMEOUT" "$TF" cpd "$text" --method gcp --loss "$LOSS" -r "$RANK" --epochs "$EPOCHS" \
        --epoch-iters "$EPOCH_ITERS" --rate "$RATE" --samples "$gnz,$gz" --fsamples "$fnz,$fz" -t "$THREADS" \
        --sampling "$SAMPLING" --seed 1 --device cpu --nowrite --json "$OUT/$name.tenfold.json" >"$OUT/$name.tenfold.txt" 2>&1 ||
        { echo "gcp: tenfold on $name failed" >&2; tail -3 "$OUT/$name.tenfold.txt" >&2; }
    if [ -n "$GT" ]; then
        timeout "$RUN_TIMEOUT" env OMP_NUM_THREADS="$THREADS" OMP_PROC_BIND=false "$GT" --input "$text" --index-base 1 \
            --rank "$RANK" --method gcp-sgd --type "$LOSS" --sampling "$SAMPLING" --step adam --rate "$RATE" \
            --maxiters "$EPOCHS" --epochiters "$EPOCH_ITERS" --gnzs "$gnz" --gzs "$gz" --fnzs "$fnz" --fzs "$fz" \
            --seed 1 --gcp-seed 1 >"$OUT/$name.genten.txt" 2>&1 ||
            { echo "gcp: GenTen on $name failed" >&2; tail -3 "$OUT/$name.genten.txt" >&2; }
    fi
    python3 - "$OUT" "$name" <<'PY'
import json, re, sys
out, name = sys.argv[1:3]
try:
    r = json.load(open("%s/%s.tenfold.json" % (out, name)))
    it = r["iterations"]
    per = sum(i["seconds"] for i in it) / len(it)
    print("%-14s tenfold  %7.3f s/epoch  estimates %s" % (name, per, " ".join("%.6e" % i["loss_estimate"] for i in it)))
except (OSError, ValueError, KeyError, ZeroDivisionError):
    pass
try:
    text = open("%s/%s.genten.txt" % (out, name)).read()
    ep = re.findall(r"Epoch\s+(\d+): f-est =\s*(\S+), step =\s*\S+, time =\s*(\S+) sec", text)
    if ep:
        per = float(ep[-1][2]) / int(ep[-1][0])
        print("%-14s GenTen   %7.3f s/epoch  estimates %s" % (name, per, " ".join("%.6e" % float(e[1]) for e in ep)))
except OSError:
    pass
PY
done
