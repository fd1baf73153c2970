# The MPI set-up shared by tests/cli/mpi*.sh (sourced after common.bash):
# skipped (77) without MPI in the build or mpirun; one OpenMP thread a rank;
# `ranks N ARGS...` runs tenfold on N ranks (stdout -> out.txt, stderr ->
# err.txt, exit code -> $rc) within RANKS_TIMEOUT seconds (default 120).
if ! "$TF" info 2>/dev/null | grep -q '^mpi: *yes' || ! command -v mpirun >/dev/null; then
    echo "$NAME: skipped (no MPI in this build, or no mpirun)"
    exit 77
fi
# A sanitizer build: OpenMPI keeps what MPI_Init allocates to the end; those
# leaks, and its progress thread's (libevent), are not ours (full stacks, so the
# suppressions see the MPI frames)
printf 'leak:MPI_Init_thread\nleak:MPI_Finalize\nleak:libmpi.so\nleak:libopen-pal.so\nleak:libopen-rte.so\nleak:libevent\n' > lsan.supp
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$PWD/lsan.supp:print_suppressions=0"
export OMP_NUM_THREADS=1
# OpenMPI on one machine: no remote launcher needed (a CI box may have no ssh), and no
# cross-process memory attach (containers forbid it and OpenMPI would say so on stderr)
export OMPI_MCA_plm=${OMPI_MCA_plm:-isolated}
export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-none}
MPIRUN="mpirun --allow-run-as-root --oversubscribe"
ranks() {
    local n=$1; shift
    timeout "${RANKS_TIMEOUT:-120}" $MPIRUN -np "$n" "$TF" "$@" >out.txt 2>err.txt
    rc=$?
}
# each ARGS...: an mpirun command line (app contexts joined by ':', `T` for
# tenfold) where every rank's exit code lands in rc.RANK; mpirun is told not
# to end the others when one exits non-zero, so every rank says its own.
printf '#!/bin/sh\n"$@"\nrc=$?\necho $rc > "rc.$OMPI_COMM_WORLD_RANK"\nexit $rc\n' > each.sh
chmod +x each.sh
each() {
    rm -f rc.*
    local args=() a
    for a in "$@"; do if [ "$a" = T ]; then args+=(./each.sh "$TF"); else args+=("$a"); fi; done
    timeout 60 $MPIRUN --mca orte_abort_on_non_zero_status 0 "${args[@]}" >out.txt 2>err.txt
    rc=$?
}
# codes N: every rank's exit code after `each`, space-separated ("none" for a rank that left none)
codes() {
    local r out=""
    for ((r = 0; r < $1; ++r)); do out+="$(cat rc.$r 2>/dev/null || echo none) "; done
    echo "$out"
}
# compare_runs ONE TWO FIT_REL: the --json reports ONE.json, TWO.json have as many
# iterations and fits within FIT_REL (relative) at each; the factor files ONE.mode{1,2,3}.mat
# and ONE.lambda.mat equal TWO's to 1e-9 of their largest entry
compare_runs() {
    python3 - "$1" "$2" "$3" <<'PY'
import json, sys
a, b, tol = sys.argv[1], sys.argv[2], float(sys.argv[3])
ra, rb = json.load(open(a + ".json")), json.load(open(b + ".json"))
fa = [i["fit"] for i in ra["iterations"]]
fb = [i["fit"] for i in rb["iterations"]]
assert len(fa) == len(fb) and max(abs(x - y) / abs(x) for x, y in zip(fa, fb)) <= tol, (fa, fb)
def load(p):
    return [[float(x) for x in l.split()] for l in open(p) if l.strip() and not l.startswith("#")]
for f in ["mode1", "mode2", "mode3", "lambda"]:
    x, y = load(a + "." + f + ".mat"), load(b + "." + f + ".mat")
    scale = max(abs(v) for r in x for v in r) or 1.0
    d = max(abs(u - v) for r, s in zip(x, y) for u, v in zip(r, s))
    assert len(x) == len(y) and d <= 1e-9 * scale, (f, d, scale)
PY
}
# gpu_ranks: $gpus, the GPUs two GPU ranks can take (0: none, 1: one GPU, which it makes
# two by exporting TF_TEST_GPUS=2 -- src/gpu/runtime/device.cu -- so both ranks run on it),
# and SHARED_GPU=1 where the ranks share a physical GPU: NCCL refuses that, so the exchange
# goes through the host (TF_EXCHANGE=auto picks host staging, src/gpu/exec/exchange_host.cu)
gpu_ranks() {
    local phys
    phys=$(env -u TF_TEST_GPUS "$TF" info 2>/dev/null | sed -n 's/^gpus: *\([0-9]*\) found.*/\1/p')
    gpus=$("$TF" info 2>/dev/null | sed -n 's/^gpus: *\([0-9]*\) found.*/\1/p')
    phys=${phys:-0}
    gpus=${gpus:-0}
    if [ "$phys" -eq 1 ] && [ -z "${TF_TEST_GPUS:-}" ]; then
        export TF_TEST_GPUS=2
        gpus=2
    fi
    SHARED_GPU=0
    if [ "$phys" -ge 1 ] && [ "$phys" -lt 2 ]; then SHARED_GPU=1; fi
    export NCCL_NVLS_ENABLE=0
}
# plan_transport: the plan line of a run of 2 GPU ranks (out.txt) names them, and where
# SHARED_GPU says the rows went through the host because the ranks share one GPU
# ("host staging (shared GPU)")
plan_transport() {
    if [ "$SHARED_GPU" -eq 1 ]; then grep -q "^plan: 2 GPUs (MPI ranks).*host staging (shared GPU)" out.txt
    else grep -q "^plan: 2 GPUs (MPI ranks)" out.txt; fi
}
