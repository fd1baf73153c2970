# SPDX-License-Identifier: BSD-3-Clause
# Thread counts far beyond the machine (issue 41, item 9): OMP_NUM_THREADS =
# 65536 crashed every command in GOMP_parallel (libgomp's start data for a
# team is an alloca on the caller's stack); now the library starts at most
# tf_thread_limit() threads (4 per online CPU, at least 64) and the tool
# says so once.
source "$(dirname "$0")/lib/common.bash"

printf '1 1 1 1.5\n2 2 2 2.5\n1 2 2 0.5\n2 1 1 3.0\n' > t.tns
note='^tenfold: note: (OMP_NUM_THREADS=65536|-t 4096) is more threads than tenfold starts on this machine: using [0-9]+'

OMP_NUM_THREADS=65536 "$TF" check t.tns >out.txt 2>err.txt
rc=$?
if [ "$rc" -eq 0 ] && grep -q '^valid: *yes' out.txt; then ok; else bad "OMP_NUM_THREADS=65536 check: exit $rc: $(head -c 300 err.txt)"; fi
check "OMP_NUM_THREADS=65536: one note" bash -c "[ \$(grep -cE '$note' err.txt) -eq 1 ]"

OMP_NUM_THREADS=65536 "$TF" cpd t.tns -r 2 --nowrite >out.txt 2>err.txt
rc=$?
if [ "$rc" -eq 0 ] && grep -q 'final fit' out.txt; then ok; else bad "OMP_NUM_THREADS=65536 cpd: exit $rc: $(head -c 300 err.txt)"; fi

OMP_NUM_THREADS=65536 "$TF" stats t.tns -q >out.txt 2>err.txt
rc=$?
if [ "$rc" -eq 0 ] && [ ! -s err.txt ]; then ok; else bad "OMP_NUM_THREADS=65536 stats -q: exit $rc, stderr: $(head -c 300 err.txt)"; fi

expect 0 "check -t 4096" check t.tns -t 4096
check "-t 4096: the note" grep -qE "$note" err.txt

# a count the machine takes: no note
expect 0 "check -t 2" check t.tns -t 2
check "-t 2: no note" bash -c '! grep -q "note:" err.txt'
OMP_NUM_THREADS=3 "$TF" check t.tns >out.txt 2>err.txt
check "OMP_NUM_THREADS=3: no note" bash -c '! grep -q "note:" err.txt'

finish
