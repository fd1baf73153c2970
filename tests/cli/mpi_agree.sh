# SPDX-License-Identifier: BSD-3-Clause
# MPI ranks that must agree (issue 41). Ranks given another input (MPMD `:`:
# other dims, the same dims with other values), another -i, -r or --device,
# or another command fail on every rank with one line "tenfold: ranks
# disagree: rank R has FIELD ..., rank 0 has ..." and exit 1, never a crash
# or a hang; so do ranks reading standard input. A tenfold .bin read in parts
# (3 ranks) is accepted and refused as one process does: a duplicate across a
# part boundary is summed (the same fits), a wrong checksum is refused (also
# with a bad index in the file: the checksum is said first), and a bad index
# is named by its non-zero in the file (the first over all parts); a .bin of
# several checksum blocks per section is read in parts and one flipped byte
# in it is found. A stopped rank (SIGSTOP) fails the others within
# TF_MPI_TIMEOUT, naming it. Skipped (77) without MPI in the build or mpirun.
LIB=$(cd "$(dirname "$0")/lib" && pwd) # tfbin.py (common.bash moves to the scratch directory)
source "$(dirname "$0")/lib/common.bash"

RANKS_TIMEOUT=60
source "$LIB/mpi.bash"
# disagree DESC NRANKS PATTERN: after `each`: every rank exited 1, within the
# time (no hang), and stderr is one line "tenfold: ranks disagree: ..." matching PATTERN
disagree() {
    local desc=$1 n=$2 pattern=$3 r codes=""
    if [ "$rc" -eq 124 ]; then bad "$desc: hangs"; return; fi
    for ((r = 0; r < n; ++r)); do codes+="$(cat rc.$r 2>/dev/null || echo none) "; done
    if [ "$codes" != "$(printf '1 %.0s' $(seq "$n"))" ]; then bad "$desc: rank exit codes $codes; $(head -c 300 err.txt)"; return; fi
    if [ "$(wc -l <err.txt)" -ne 1 ]; then bad "$desc: expected one stderr line, got: $(head -c 600 err.txt)"; return; fi
    if ! grep -qE -- "^tenfold: ranks disagree: $pattern" err.txt; then bad "$desc: $(cat err.txt)"; return; fi
    ok
}

"$TF" gen -o small.tns --dims 300,200,100 --nnz 3000 --seed 2 >/dev/null 2>&1 || bad "gen small.tns"
"$TF" gen -o other.tns --dims 50,40,30 --nnz 1000 --seed 3 >/dev/null 2>&1 || bad "gen other.tns"
"$TF" gen -o same.tns --dims 300,200,100 --nnz 3000 --seed 7 >/dev/null 2>&1 || bad "gen same.tns"
"$TF" convert other.tns other.bin >/dev/null 2>&1 || bad "convert other.bin"
"$TF" gen -o m.mtx --dims 300,200 --nnz 2000 --seed 4 >/dev/null 2>&1 || bad "gen m.mtx"
run="-r 2 -i 5 --tol 0 -t 1 --nowrite"

# ---- ranks that disagree: one line, exit 1 on every rank, no hang
each -np 2 T cpd small.tns $run : -np 1 T cpd other.tns $run
disagree "other dims on rank 2" 3 "rank 2 has dims 50 x 40 x 30, rank 0 has 300 x 200 x 100$"
each -np 2 T cpd small.tns $run : -np 1 T cpd other.bin $run   # issue 41: heap corruption
disagree "other dims on rank 2 (a .bin read in parts)" 3 "rank 2 has dims 50 x 40 x 30, rank 0 has 300 x 200 x 100$"
each -np 1 T cpd small.tns $run : -np 2 T cpd same.tns $run
disagree "same dims, other values on ranks 1-2" 3 "rank 1 has checksum [0-9a-f]{16}, rank 0 has [0-9a-f]{16}$"
each -np 2 T cpd small.tns $run : -np 1 T cpd small.tns $run -i 7
disagree "another -i on rank 2" 3 "rank 2 has -i/--iters 7, rank 0 has 5$"
each -np 1 T cpd small.tns $run : -np 1 T cpd small.tns $run -r 3
disagree "another -r on rank 1" 2 "rank 1 has -r/--rank 3, rank 0 has 2$"
each -np 1 T cpd small.tns $run : -np 2 T cpd small.tns $run --device cpu
disagree "another --device on ranks 1-2" 3 "rank 1 has --device cpu, rank 0 has auto$"
each -np 2 T cpd small.tns $run : -np 1 T sddmm m.mtx -k 4
disagree "another command (sddmm) on rank 2" 3 "rank 2 has command sddmm, rank 0 has cpd$"
each -np 1 T cpd small.tns $run : -np 1 T info
disagree "another command (info, not a command of ranks) on rank 1" 2 "rank 1 has command info, rank 0 has cpd$"
each -np 2 T sddmm m.mtx -k 4 --reps 2 -t 1 : -np 1 T sddmm m.mtx -k 8 --reps 2 -t 1
disagree "sddmm: another -k on rank 2" 3 "rank 2 has -k 8, rank 0 has 4$"
# GPU ranks compare first too (before any GPU or NCCL set-up)
each -np 1 T cpd small.tns $run --device gpu : -np 1 T cpd small.tns $run --device gpu -i 3
disagree "GPU ranks: another -i on rank 1" 2 "rank 1 has -i/--iters 3, rank 0 has 5$"
# ranks agreeing on a command of one process run it as before
each -np 2 T info
check "info on 2 ranks: both run" test "$(cat rc.0 rc.1 2>/dev/null | tr -d '\n')" = 00
# standard input: only rank 0 would get it
each -np 2 T cpd - $run <small.tns
if [ "$rc" -ne 124 ] && [ "$(cat rc.0 rc.1 2>/dev/null | tr -d '\n')" = 11 ] && [ "$(wc -l <err.txt)" -eq 1 ] &&
    grep -q "^tenfold: cpd: reading standard input ('-') is not possible on MPI ranks: .*convert it to a file" err.txt
then ok; else bad "cpd - on 2 ranks: $(cat rc.* 2>/dev/null | tr '\n' ' '); $(head -c 300 err.txt)"; fi
# and mpirun itself exits non-zero
ranks 3 cpd small.tns $run : -np 1 "$TF" cpd small.tns $run -i 6
check "mpirun of disagreeing ranks exits non-zero" test "$rc" -ne 0 -a "$rc" -ne 124

# ---- a tenfold .bin read in parts decides as one process
# the test's .bin writer (tfbin.py) writes what tenfold writes, checksum included
"$TF" convert small.tns small.bin >/dev/null 2>&1 || bad "convert small.bin"
PYTHONPATH=$LIB python3 -c 'import tfbin; d, c, v = tfbin.read_tns("small.tns"); tfbin.write("small_py.bin", [300, 200, 100], c, v)' ||
    bad "tfbin.py"
check "tfbin.py writes tenfold's .bin" cmp -s small.bin small_py.bin
PYTHONPATH=$LIB python3 - <<'PY' || bad "write the test .bin files"
import tfbin
dims = [300, 200, 100]
_, c, v = tfbin.read_tns("small.tns")
n = len(v) + 1
j = n // 3 - 1  # rank 1 of 3 starts at n // 3: non-zeros j and j + 1 straddle the boundary
dc, dv = c[:j + 1] + [c[j]] + c[j + 1:], v[:j + 1] + [5.0] + v[j + 1:]
tfbin.write("dup.bin", dims, dc, dv)
# bad indices in part 2 (non-zero 1600) and part 3 (2500): the file's first is said
bc = list(c)
bc[1599] = (bc[1599][0], 200 + 3, bc[1599][2])
bc[2499] = (300, bc[2499][1], bc[2499][2])
tfbin.write("badidx.bin", dims, bc, v)
tfbin.write("badsum.bin", dims, c, v, bad_checksum=True)
tfbin.write("badboth.bin", dims, bc, v, bad_checksum=True)
PY
compare() { # ONE TWO: the fits of every iteration agree to 1e-9
    python3 - "$1" "$2" <<'PY'
import json, sys
fa, fb = ([i["fit"] for i in json.load(open(p + ".json"))["iterations"]] for p in sys.argv[1:3])
assert len(fa) == len(fb) and max(abs(x - y) for x, y in zip(fa, fb)) <= 1e-9, (fa, fb)
PY
}
expect 0 "dup.bin: one process" cpd dup.bin -r 3 -i 6 --tol 0 -t 1 --device cpu --nowrite --json one_dup.json
grep '^fixes:' out.txt >one_fixes.txt
check "dup.bin: one process sums the duplicate" grep -q "^fixes:  1 duplicate summed" one_fixes.txt
ranks 3 cpd dup.bin -r 3 -i 6 --tol 0 -t 1 --nowrite --json r3_dup.json
if [ "$rc" -ne 0 ]; then bad "dup.bin on 3 ranks: exit $rc; $(head -c 300 err.txt)"; else
    check "dup.bin on 3 ranks (a duplicate across a part boundary): the fits are one process's" compare one_dup r3_dup
    check "dup.bin on 3 ranks: the same fixes line" cmp -s one_fixes.txt <(grep '^fixes:' out.txt)
fi
for f in badidx badsum badboth; do
    expect 1 "$f.bin: one process" cpd $f.bin $run --device cpu
    cp err.txt one_$f.txt
    each -np 3 T cpd $f.bin $run
    codes=$(cat rc.0 rc.1 rc.2 2>/dev/null | tr -d '\n')
    if [ "$rc" -eq 124 ] || [ "$codes" != 111 ]; then bad "$f.bin on 3 ranks: exit codes $codes; $(head -c 300 err.txt)"
    else check "$f.bin on 3 ranks: one process's one line" cmp -s one_$f.txt err.txt; fi
done
check "badidx.bin: the file's non-zero 1600 is named" grep -q "badidx.bin: non-zero 1600: mode 2 index 203 is outside 0..199" one_badidx.txt
check "badsum.bin: the checksum is refused" grep -q "badsum.bin: tenfold binary: checksum mismatch" one_badsum.txt
check "badboth.bin: the checksum is said first" grep -q "badboth.bin: tenfold binary: checksum mismatch" one_badboth.txt

# several checksum blocks (1 MiB) a section, parts cutting blocks: accepted as one process's; a flipped byte found
"$TF" gen -o big.bin --dims 300,200,100 --nnz 300000 --seed 4 >/dev/null 2>&1 || bad "gen big.bin"
expect 0 "big.bin: one process" cpd big.bin -r 2 -i 3 --tol 0 -t 1 --device cpu --nowrite --json one_big.json
ranks 3 cpd big.bin -r 2 -i 3 --tol 0 -t 1 --nowrite --json r3_big.json
if [ "$rc" -ne 0 ]; then bad "big.bin on 3 ranks: exit $rc; $(head -c 300 err.txt)"; else
    check "big.bin on 3 ranks: the fits are one process's" compare one_big r3_big
fi
python3 -c '
import os
d = bytearray(open("big.bin", "rb").read()); d[len(d) - 1500000] ^= 4  # a value in the second values block
open("bigflip.bin", "wb").write(d)'
ranks 3 cpd bigflip.bin $run
check "bigflip.bin on 3 ranks: refused" test "$rc" -ne 0 -a "$rc" -ne 124
check "bigflip.bin on 3 ranks: checksum mismatch, said once" test "$(grep -c 'bigflip.bin: tenfold binary: checksum mismatch' err.txt)" -eq 1

# ---- a stopped rank: the others end within TF_MPI_TIMEOUT (5 s), naming it
TF_MPI_TIMEOUT=5 $MPIRUN -np 3 "$TF" cpd small.tns -r 4 -i 1000000 --tol 0 -t 1 --nowrite >stop_out.txt 2>stop_err.txt &
mp=$!
for ((i = 0; i < 100; ++i)); do grep -q 'its = ' stop_out.txt 2>/dev/null && break; sleep 0.2; done
stopped=""
for p in $(pgrep -P $mp); do
    if tr '\0' '\n' </proc/$p/environ 2>/dev/null | grep -q '^OMPI_COMM_WORLD_RANK=1$'; then stopped=$p; fi
done
if [ -z "$stopped" ]; then bad "SIGSTOP: rank 1's process not found"; kill $mp 2>/dev/null; else
    kill -STOP "$stopped"
    start=$SECONDS
    for ((i = 0; i < 100; ++i)); do kill -0 $mp 2>/dev/null || break; sleep 0.2; done
    took=$((SECONDS - start))
    if kill -0 $mp 2>/dev/null; then
        bad "SIGSTOP: the other ranks still run after ${took} s"
        kill -CONT "$stopped" 2>/dev/null; kill -KILL "$stopped" 2>/dev/null; kill $mp 2>/dev/null
    fi
    wait $mp
    src=$?
    check "SIGSTOP: mpirun fails" test "$src" -ne 0
    check "SIGSTOP: within the bound (${took} s)" test "$took" -le 12
    if grep -q "tenfold: MPI: rank 1 did not answer within 5 s .*TF_MPI_TIMEOUT" stop_err.txt; then ok
    else bad "SIGSTOP: the message names rank 1 and the bound; stderr: $(head -c 600 stop_err.txt)"; fi
    kill -KILL "$stopped" 2>/dev/null
fi
finish
