# SPDX-License-Identifier: BSD-3-Clause
# The ranks' default teams (issue 49): under `mpirun --bind-to none` every rank
# of a host sees all its CPUs, and a team each of all of them oversubscribed the
# host as many times as it has ranks. Without -t and OMP_NUM_THREADS each rank
# now takes its share (the CPUs over the ranks, the remainder to the lowest):
# the ranks line says every rank's team, the cpd line why; -t and
# OMP_NUM_THREADS are taken as asked; ranks bound to a core each keep theirs.
# Skipped (77) without MPI in the build or without mpirun.
LIB=$(cd "$(dirname "$0")/lib" && pwd) # common.bash moves to the scratch directory
source "$LIB/common.bash"
source "$LIB/mpi.bash"
unset OMP_NUM_THREADS # mpi.bash's one thread a rank: the default is under test here

ncpu=$(nproc) # this process's CPUs: the ranks' under --bind-to none
half=$(((ncpu + 1) / 2))
spec=dims=300x200x100,nnz=20000,alpha=0.6,seed=2,rank=3
"$TF" gen -q -o g.tns --dims 300,200,100 --nnz 20000 --alpha 0.6 --seed 2 -t 1 || bad "gen g.tns"

# on N ranks under BIND (none, core): tenfold cpd INPUT ARGS... -v; out.txt, err.txt, $rc
cpd_ranks() {
    local n=$1 bind=$2 input=$3; shift 3
    timeout "${RANKS_TIMEOUT:-120}" $MPIRUN --bind-to "$bind" -np "$n" "$TF" cpd $input -r 3 -i 2 --tol 0 \
        --nowrite -v "$@" >out.txt 2>err.txt
    rc=$?
}
# the ranks line's teams: "LO HI" ("N threads each" or "LO-HI threads each")
teams() {
    sed -n 's/^ranks: [0-9]* (MPI), the CPU backend on each, \([0-9]*\)-\{0,1\}\([0-9]*\) threads\{0,1\} each$/\1 \2/p' \
        out.txt | awk '{ print $1, ($2 == "" ? $1 : $2) }'
}
# rank 0's team on the cpd line
team0() { sed -n 's/^cpd: .*, \([0-9]*\) threads\{0,1\}[ ,].*/\1/p' out.txt; }

# ---- the default: each rank its share of the host's CPUs
for input in "--gen $spec" g.tns; do
    what="cpd ${input%% *} on 2 ranks (--bind-to none)"
    cpd_ranks 2 none "$input"
    if [ "$rc" -ne 0 ]; then bad "$what: exit $rc; $(head -c 300 err.txt)"; continue; fi
    read -r lo hi <<<"$(teams)"
    if [ -z "${hi:-}" ]; then bad "$what: no ranks line with threads: $(grep '^ranks' out.txt)"; continue; fi
    check "$what: every rank's team at most half the $ncpu CPUs ($lo-$hi)" test "$hi" -le "$half"
    check "$what: the teams fit the CPUs ($lo + $hi)" test "$ncpu" -lt 2 -o $((lo + hi)) -le "$ncpu"
    check "$what: the cpd line says why" \
        grep -qE "^cpd: .*, $hi threads? \([0-9]+ CPUs? shared by 2 ranks on this host\), format " out.txt
    cpus=$(sed -n 's/^cpd: .* threads\{0,1\} (\([0-9]*\) CPUs\{0,1\} shared by 2 ranks.*/\1/p' out.txt)
    check "$what: the CPUs shared are this process's at most (${cpus:-none})" test "${cpus:-99999}" -le "$ncpu"
    check "$what: rank 0 takes the remainder" test "$(team0)" -eq $(((${cpus:-0} + 1) / 2 > 1 ? (${cpus:-0} + 1) / 2 : 1))
done

# OpenBLAS's own pthreads (the eigensolvers'): held to the share as well
# (another BLAS, or OpenBLAS on OpenMP: nothing to check)
cpd_ranks 2 none "--gen $spec"
blas=$(sed -n 's/^threads: .*; BLAS OpenBLAS (pthreads) \([0-9]*\) threads\{0,1\}[;,].*/\1/p' out.txt)
if [ -n "$blas" ]; then
    read -r lo hi <<<"$(teams)"
    check "OpenBLAS's threads on 2 ranks held to the share ($blas <= ${hi:-?})" test "$blas" -le "${hi:-0}"
fi

# 3 ranks: the same, the teams within a thread of each other
RANKS_TIMEOUT=180 cpd_ranks 3 none "--gen $spec"
read -r lo hi <<<"$(teams)"
check "3 ranks: exit 0" test "$rc" -eq 0
check "3 ranks: teams of at most a third of the CPUs, rounded up (${lo:-}-${hi:-})" \
    test "${hi:-99999}" -le $(((ncpu + 2) / 3 > 1 ? (ncpu + 2) / 3 : 1))
check "3 ranks: within one thread" test $((${hi:-0} - ${lo:-0})) -le 1
check "3 ranks: the cpd line" grep -qE "^cpd: .* threads? \([0-9]+ CPUs? shared by 3 ranks on this host\)" out.txt

# ---- what was asked, as asked: -t, OMP_NUM_THREADS
cpd_ranks 2 none "--gen $spec" -t 3
check "-t 3 on 2 ranks: exit 0" test "$rc" -eq 0
check "-t 3 on 2 ranks: 3 threads each" grep -qx "ranks: 2 (MPI), the CPU backend on each, 3 threads each" out.txt
check "-t 3 on 2 ranks: the cpd line says 3, no share" grep -qE "^cpd: .*, 3 threads, format " out.txt
OMP_NUM_THREADS=3 cpd_ranks 2 none "--gen $spec"
check "OMP_NUM_THREADS=3 on 2 ranks: exit 0" test "$rc" -eq 0
check "OMP_NUM_THREADS=3 on 2 ranks: 3 threads each" \
    grep -qx "ranks: 2 (MPI), the CPU backend on each, 3 threads each" out.txt
check "OMP_NUM_THREADS=3 on 2 ranks: no share" grep -qE "^cpd: .*, 3 threads, format " out.txt

# ---- ranks bound to a core each: their own CPU, nothing shared
if [ "$ncpu" -ge 2 ]; then
    cpd_ranks 2 core "--gen $spec"
    check "--bind-to core: exit 0 ($(head -c 200 err.txt))" test "$rc" -eq 0
    check "--bind-to core: 1 thread each" grep -qx "ranks: 2 (MPI), the CPU backend on each, 1 thread each" out.txt
    check "--bind-to core: nothing shared" grep -qE "^cpd: .*, 1 thread, format " out.txt
fi

finish
