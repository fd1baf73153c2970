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
