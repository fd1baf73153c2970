# SPDX-License-Identifier: BSD-3-Clause
# tenfold cpd on several MPI ranks (issue 28): CPU ranks, 2 and 3 of them, give
# the single process's fits (every iteration) and factors to 1e-9, with a
# heavy slice at a rank boundary, and 5 ranks on a mode of 3 rows; every rank
# holds only its part of the non-zeros (a .bin read at the part's offsets, on 3
# ranks: the same result); rank 0 alone prints and writes; AO-ADMM (--nonneg,
# --l1) and HALS (--nonneg) on 2 and 3 ranks are one process's runs too; with a GPU, 2 GPU ranks (--device gpu;
# on one GPU both on it, TF_TEST_GPUS=2, the rows through the host) equal one GPU to 1e-9, also with the rows cut
# longest-first (TF_PARTITION=longest), with TF_EXCHANGE=host (fp32 too: 2 GPUs of one process), and AO-ADMM on
# them with the same inner iterations; without a GPU, --device gpu fails on every rank with one line, as
# does fp32 on CPU ranks, and no rank hangs. Skipped
# (77) without MPI in the build or without mpirun.
LIB=$(cd "$(dirname "$0")/lib" && pwd) # common.bash moves to the scratch directory
source "$LIB/common.bash"
source "$LIB/mpi.bash"

"$TF" gen -o small.tns --dims 300,200,100 --nnz 20000 --alpha 0.6 --rank 3 --seed 2 >/dev/null 2>&1 || bad "gen small.tns"
# heavy slices: mode 1 skewed hard (alpha 0.95 over 50 rows), so a rank boundary falls next to a heavy row
"$TF" gen -o heavy.tns --dims 50,400,300 --nnz 20000 --alpha 0.95,0.3,0.3 --rank 3 --seed 5 >/dev/null 2>&1 ||
    bad "gen heavy.tns"

# compare ONE TWO: fits of every iteration and the factor files agree to 1e-9
compare() { compare_runs "$1" "$2" 1e-9; }

for t in small heavy; do
    expect 0 "$t: one process" cpd $t.tns -r 5 -i 8 --tol 0 -t 1 --device cpu -o one_$t --json one_$t.json
    for n in 2 3; do
        ranks $n cpd $t.tns -r 5 -i 8 --tol 0 -t 1 -o r${n}_$t --json r${n}_$t.json
        if [ "$rc" -ne 0 ]; then bad "$t on $n ranks: exit $rc; $(head -c 300 err.txt)"; continue; fi
        check "$t on $n ranks: the run says how many ranks" grep -q "^ranks: $n (MPI)" out.txt
        check "$t on $n ranks: printed once" test "$(grep -c '^final fit' out.txt)" -eq 1
        check "$t on $n ranks: written once" test "$(grep -c '^wrote: r' out.txt)" -eq 2
        check "$t on $n ranks: the plan names the ranks" grep -q "^plan: .*$n ranks" out.txt
        check "$t on $n ranks: nothing on stderr" test ! -s err.txt
        check "$t on $n ranks: fits and factors equal one process's to 1e-9" compare one_$t r${n}_$t
    done
done

# AO-ADMM (--nonneg, --l1) on CPU ranks: the residuals summed over the ranks, the same run as one process's
expect 0 "AO-ADMM: one process" cpd small.tns -r 5 -i 8 --tol 0 -t 1 --device cpu --nonneg --l1 0.1@2 -o one_admm \
    --json one_admm.json
for n in 2 3; do
    ranks $n cpd small.tns -r 5 -i 8 --tol 0 -t 1 --nonneg --l1 0.1@2 -o r${n}_admm --json r${n}_admm.json
    if [ "$rc" -ne 0 ]; then bad "AO-ADMM on $n ranks: exit $rc; $(head -c 300 err.txt)"; continue; fi
    check "AO-ADMM on $n ranks: fits and factors equal one process's to 1e-9" compare one_admm r${n}_admm
    check "AO-ADMM on $n ranks: the inner iterations equal one process's" python3 -c '
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
assert a["result"]["inner_iterations"] == b["result"]["inner_iterations"] > 0' one_admm.json r${n}_admm.json
done
# HALS (--nonneg alone: auto's choice) on CPU ranks: the sweeps' changes summed over the ranks
expect 0 "HALS: one process" cpd small.tns -r 5 -i 8 --tol 0 -t 1 --device cpu --nonneg -o one_hals --json one_hals.json
for n in 2 3; do
    ranks $n cpd small.tns -r 5 -i 8 --tol 0 -t 1 --nonneg -o r${n}_hals --json r${n}_hals.json
    if [ "$rc" -ne 0 ]; then bad "HALS on $n ranks: exit $rc; $(head -c 300 err.txt)"; continue; fi
    check "HALS on $n ranks: fits and factors equal one process's to 1e-9" compare one_hals r${n}_hals
    check "HALS on $n ranks: HALS ran, the sweeps equal one process's" python3 -c '
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
assert a["options"]["algorithm"] == b["options"]["algorithm"] == "HALS"
assert a["result"]["inner_iterations"] == b["result"]["inner_iterations"] > 0' one_hals.json r${n}_hals.json
done

# a tenfold .bin: each rank reads only its part (at its offsets) and holds only it
"$TF" convert heavy.tns heavy.bin >/dev/null 2>&1 || bad "convert heavy.bin"
ranks 3 cpd heavy.bin -r 5 -i 8 --tol 0 -t 1 -o r3_bin --json r3_bin.json
if [ "$rc" -ne 0 ]; then bad "heavy.bin on 3 ranks: exit $rc; $(head -c 300 err.txt)"; else
    check "heavy.bin on 3 ranks: a rank holds a third" grep -q "^tensor: .*(this rank holds " out.txt
    check "heavy.bin on 3 ranks: fits and factors equal one process's to 1e-9" compare one_heavy r3_bin
fi
# the parts' all-to-all and the rows' all-gather in many small rounds (TF_MPI_ROUND bytes)
TF_MPI_ROUND=1000 ranks 3 cpd heavy.bin -r 5 -i 8 --tol 0 -t 1 -o r3_round --json r3_round.json
if [ "$rc" -ne 0 ]; then bad "heavy.bin on 3 ranks, small rounds: exit $rc; $(head -c 300 err.txt)"; else
    check "heavy.bin on 3 ranks, small rounds: equal to one process's to 1e-9" compare one_heavy r3_round
fi

# more ranks than a mode has rows: some ranks own no rows of it (empty shards)
"$TF" gen -o tiny.tns --dims 40,30,3 --nnz 500 --seed 3 >/dev/null 2>&1 || bad "gen tiny.tns"
expect 0 "tiny: one process" cpd tiny.tns -r 2 -i 5 --tol 0 -t 1 --device cpu -o one_tiny --json one_tiny.json
ranks 5 cpd tiny.tns -r 2 -i 5 --tol 0 -t 1 -o r5_tiny --json r5_tiny.json
check "tiny on 5 ranks (empty shards): runs" test "$rc" -eq 0
check "tiny on 5 ranks: fits and factors equal one process's to 1e-9" compare one_tiny r5_tiny

# a matrix with heavy rows and dense A, B for SDDMM over ranks (below)
"$TF" gen -o m.mtx --dims 300,200 --nnz 5000 --alpha 0.95,0.3 --seed 4 >/dev/null 2>&1 || bad "gen m.mtx"
python3 - <<'PY'
import random
random.seed(1)
for f, n in (("a.txt", 300), ("b.txt", 200)):
    open(f, "w").write("".join(" ".join("%.17g" % random.uniform(-1, 1) for _ in range(6)) + "\n" for _ in range(n)))
PY

# GPU ranks (--device gpu): one GPU each, NCCL shares the rows (or, two ranks on one GPU
# -- TF_TEST_GPUS=2 on a machine with one -- host staging over MPI); without GPUs a
# clear failure on every rank, not a hang
gpu_ranks
if [ "$gpus" -eq 0 ]; then
    ranks 2 cpd small.tns -r 3 -i 2 --device gpu --nowrite
    check "2 ranks with --device gpu and no GPU fail" test "$rc" -ne 0 -a "$rc" -ne 124
    check "2 ranks with --device gpu and no GPU: the reason" grep -qE "no CUDA device|no CUDA backend|no usable NVIDIA GPU" err.txt
elif [ "$gpus" -ge 2 ]; then
    for t in small heavy; do
        expect 0 "$t: one GPU" cpd $t.tns -r 5 -i 8 --tol 0 --device gpu -o g1_$t --json g1_$t.json
        ranks 2 cpd $t.tns -r 5 -i 8 --tol 0 --device gpu -o g2_$t --json g2_$t.json
        if [ "$rc" -ne 0 ]; then bad "$t on 2 GPU ranks: exit $rc; $(head -c 300 err.txt)"; continue; fi
        check "$t on 2 GPU ranks: the run says so" grep -q "^ranks: 2 (MPI), one GPU each" out.txt
        check "$t on 2 GPU ranks: the plan names the GPUs and the transport" plan_transport
        check "$t on 2 GPU ranks: printed once" test "$(grep -c '^final fit' out.txt)" -eq 1
        check "$t on 2 GPU ranks: fits and factors equal one GPU's to 1e-9" compare g1_$t g2_$t
        TF_PARTITION=longest ranks 2 cpd $t.tns -r 5 -i 8 --tol 0 --device gpu -o gl_$t --json gl_$t.json
        if [ "$rc" -ne 0 ]; then bad "$t on 2 GPU ranks, longest-first: exit $rc; $(head -c 300 err.txt)"; continue; fi
        check "$t on 2 GPU ranks, longest-first: equal to one GPU's to 1e-9" compare g1_$t gl_$t
    done
    # the host-staged exchange forced (TF_EXCHANGE=host): one GPU's run to the same 1e-9,
    # and in single precision (fp32 rows all-gathered as bytes) 2 GPUs' fits
    TF_EXCHANGE=host ranks 2 cpd small.tns -r 5 -i 8 --tol 0 --device gpu -o gx_small --json gx_small.json
    if [ "$rc" -ne 0 ]; then bad "2 GPU ranks, TF_EXCHANGE=host: exit $rc; $(head -c 300 err.txt)"; else
        check "2 GPU ranks, TF_EXCHANGE=host: the plan says so" grep -q "^plan: 2 GPUs (MPI ranks), host staging (TF_EXCHANGE)" out.txt
        check "2 GPU ranks, TF_EXCHANGE=host: fits and factors equal one GPU's to 1e-9" compare g1_small gx_small
    fi
    expect 0 "fp32: 2 GPUs in one process" cpd small.tns -r 5 -i 8 --tol 0 --device gpu --gpus 2 --precision single \
        -o gp_f32 --json gp_f32.json
    TF_EXCHANGE=host ranks 2 cpd small.tns -r 5 -i 8 --tol 0 --device gpu --precision single -o gx_f32 --json gx_f32.json
    if [ "$rc" -ne 0 ]; then bad "fp32 on 2 GPU ranks, TF_EXCHANGE=host: exit $rc; $(head -c 300 err.txt)"; else
        check "fp32 on 2 GPU ranks, TF_EXCHANGE=host: 2 GPUs' fits to 1e-5" python3 -c '
import json, sys
a, b = ([i["fit"] for i in json.load(open(f))["iterations"]] for f in sys.argv[1:])
assert len(a) == len(b) == 8 and max(abs(x - y) / abs(x) for x, y in zip(a, b)) <= 1e-5, (a, b)' gp_f32.json gx_f32.json
    fi
    if [ -z "${TF_TEST_GPUS:-}" ]; then
        # a launcher that binds one GPU per rank (srun --gpus-per-task=1 sets CUDA_VISIBLE_DEVICES
        # per task; here a wrapper from OMPI_COMM_WORLD_LOCAL_RANK): each rank takes the one GPU it
        # sees (src/ranks/local.c); two ranks shown the same one GPU: refused, naming it
        printf '#!/bin/sh\nCUDA_VISIBLE_DEVICES=$OMPI_COMM_WORLD_LOCAL_RANK exec "$@"\n' > bind.sh
        printf '#!/bin/sh\nCUDA_VISIBLE_DEVICES=0 exec "$@"\n' > one.sh
        chmod +x bind.sh one.sh
        timeout 120 $MPIRUN -np 2 ./bind.sh "$TF" cpd small.tns -r 5 -i 8 --tol 0 --device gpu -o gb_small \
            --json gb_small.json >out.txt 2>err.txt
        rc=$?
        if [ "$rc" -ne 0 ]; then bad "2 GPU ranks bound a GPU each: exit $rc; $(head -c 300 err.txt)"; else
            check "2 GPU ranks bound a GPU each: equal to one GPU's to 1e-9" compare g1_small gb_small
        fi
        timeout 120 $MPIRUN -np 2 ./one.sh "$TF" cpd small.tns -r 5 -i 2 --device gpu --nowrite >out.txt 2>err.txt
        rc=$?
        check "2 GPU ranks shown one GPU: fail" test "$rc" -ne 0 -a "$rc" -ne 124
        check "2 GPU ranks shown one GPU: say why" grep -q "rank 1: it sees 1 GPU, shared with 1 ranks before it" err.txt
    fi # (not under TF_TEST_GPUS: CUDA_VISIBLE_DEVICES names physical GPUs)
    # AO-ADMM on GPU ranks: the residual sums gathered over the ranks (NCCL), one GPU's run
    expect 0 "AO-ADMM: one GPU" cpd small.tns -r 5 -i 8 --tol 0 --device gpu --nonneg --l1 0.1@2 -o g1_admm \
        --json g1_admm.json
    ranks 2 cpd small.tns -r 5 -i 8 --tol 0 --device gpu --nonneg --l1 0.1@2 -o g2_admm --json g2_admm.json
    if [ "$rc" -ne 0 ]; then bad "AO-ADMM on 2 GPU ranks: exit $rc; $(head -c 300 err.txt)"; else
        check "AO-ADMM on 2 GPU ranks: fits and factors equal one GPU's to 1e-9" compare g1_admm g2_admm
        check "AO-ADMM on 2 GPU ranks: the inner iterations equal one GPU's" python3 -c '
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
assert [i["inner_iterations"] for i in a["iterations"]] == [i["inner_iterations"] for i in b["iterations"]]
assert a["result"]["inner_iterations"] == b["result"]["inner_iterations"] > 0' g1_admm.json g2_admm.json
    fi
    expect 0 "sddmm: one GPU" sddmm m.mtx -A a.txt -B b.txt -o pg1.mtx --device gpu
    ranks 2 sddmm m.mtx -A a.txt -B b.txt -o pg2.mtx --device gpu
    if [ "$rc" -ne 0 ]; then bad "sddmm on 2 GPU ranks: exit $rc; $(head -c 300 err.txt)"; else
        check "sddmm on 2 GPU ranks: P equals one GPU's to 1e-12" python3 - <<'PY'
def vals(f):
    return [float(l.split()[2]) for l in open(f) if not l.startswith("%")][1:]
a, b = vals("pg1.mtx"), vals("pg2.mtx")
assert len(a) == len(b) == 5000
# relative to the largest |P|: the ranks' panels may tune to other kernels (another
# summation order), and a value near zero by cancellation has no relative accuracy
assert max(abs(x - y) for x, y in zip(a, b)) <= 1e-12 * max(abs(x) for x in a)
PY
    fi
fi
# SDDMM over ranks: one row panel each (a heavy row at the cut), P all-gathered;
# the file rank 0 writes equals one process's
expect 0 "sddmm: one process" sddmm m.mtx -A a.txt -B b.txt -o p1.mtx --device cpu -t 1
for n in 2 3 7; do
    ranks $n sddmm m.mtx -A a.txt -B b.txt -o p$n.mtx -t 1
    if [ "$rc" -ne 0 ]; then bad "sddmm on $n ranks: exit $rc; $(head -c 300 err.txt)"; continue; fi
    check "sddmm on $n ranks: says so once" test "$(grep -c '^ranks: '$n' (MPI)' out.txt)" -eq 1
    check "sddmm on $n ranks: P equals one process's" cmp -s p1.mtx p$n.mtx
done
# P all-gathered in rounds of 64 bytes from each rank
TF_MPI_ROUND=64 ranks 3 sddmm m.mtx -A a.txt -B b.txt -o p3r.mtx -t 1
check "sddmm on 3 ranks, 64-byte rounds: P equals one process's" cmp -s p1.mtx p3r.mtx
ranks 3 sddmm m.mtx -k 8 --reps 3 --warmup 1 -t 1
check "sddmm benchmark on 3 ranks: runs" test "$rc" -eq 0
check "sddmm benchmark on 3 ranks: a line per rank" test "$(grep -cE '^[0-2] +[0-9]+ [0-9]+ \(' out.txt)" -eq 3
check "sddmm benchmark on 3 ranks: the whole run" grep -q "^all .*all-gather of P" out.txt
ranks 2 sddmm m.mtx -k 8 --gpus 2
check "sddmm on 2 ranks with --gpus 2: fails" test "$rc" -ne 0 -a "$rc" -ne 124
check "sddmm on 2 ranks with --gpus 2: says why" grep -q "takes one GPU per rank" err.txt

# CPU ranks run in double precision: fp32 without --device gpu fails at once
ranks 2 cpd small.tns -r 3 -i 2 --precision single --nowrite
check "2 CPU ranks in fp32 fail" test "$rc" -ne 0 -a "$rc" -ne 124
# the nvecs start needs the whole tensor, which no rank holds: a clear failure
ranks 2 cpd small.tns -r 3 -i 2 --init nvecs --nowrite
check "2 ranks, --init nvecs: fails" test "$rc" -ne 0 -a "$rc" -ne 124
check "2 ranks, --init nvecs: says it is not available on MPI ranks" grep -q "init nvecs is not available on MPI ranks" err.txt
# a missing input on every rank: a failure, not a hang
ranks 2 cpd missing.tns -r 3 -i 2 --nowrite
check "2 ranks, missing input: fails" test "$rc" -ne 0 -a "$rc" -ne 124
check "2 ranks, missing input: names the file" grep -q "missing.tns" err.txt
finish
