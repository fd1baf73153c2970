# SPDX-License-Identifier: BSD-3-Clause
# tenfold tucker on MPI ranks (issue 47): CPU ranks, 2 and 3 of them, each
# computing its non-zeros' part of Y_(n) (summed over the ranks), give the
# single process's fit at every iteration (to 1e-10), its factors (to 1e-9
# of their largest entry, each column's sign aligned) and its core, from
# --init random, hosvd (the non-zeros gathered on rank 0) and STEM, on a
# planted tensor and the shared real ones (3- and 4-mode), also when each
# rank reads only its part of a .bin, also a rank without non-zeros; rank 0
# alone prints and writes one set. Bad input (a malformed file, options that
# differ between the ranks, a rank above a mode's length, the memory limit)
# fails on every rank with one line (rank 0's), no hang, no MPI abort; what
# ranks cannot run yet (--device gpu, --checkpoint) is refused alike.
# Skipped (77) without MPI in the build or without mpirun.
LIB=$(cd "$(dirname "$0")/lib" && pwd) # common.bash moves to the scratch directory
source "$LIB/common.bash"
source "$LIB/mpi.bash"

# a planted multilinear rank (3, 3, 3) tensor, every entry present, with a
# little noise (an exact fit's 1 - sqrt(|..|) is rounding noise of 1e-8)
"$TF" gen -o planted.tns --dims 20,15,10 --nnz 3000 --rank 3 --noise 0.005 --seed 4 >/dev/null 2>&1 ||
    bad "gen planted.tns"
"$TF" convert planted.tns planted.bin >/dev/null 2>&1 || bad "convert planted.bin"

# same ONE TWO: the fits per iteration within 1e-10, the factors (columns'
# signs aligned) within 1e-9 of their largest entry, the core likewise
same() {
    python3 - "$1" "$2" <<'PY'
import json, sys
a, b = sys.argv[1], sys.argv[2]
ra, rb = json.load(open(a + ".json")), json.load(open(b + ".json"))
x = [i["fit"] for i in ra["iterations"]]
y = [i["fit"] for i in rb["iterations"]]
assert len(x) == len(y) and max(abs(u - v) for u, v in zip(x, y)) <= 1e-10, ("fits", x, y)
N = len(ra["options"]["ranks"])
def load(p):
    return [[float(v) for v in l.split()] for l in open(p) if l.strip() and not l.startswith("#")]
signs = []
for m in range(1, N + 1):
    u, w = load("%s.mode%d.mat" % (a, m)), load("%s.mode%d.mat" % (b, m))
    assert len(u) == len(w) and len(u[0]) == len(w[0]), ("shape", m)
    s = [1.0 if sum(r[j] * q[j] for r, q in zip(u, w)) >= 0 else -1.0 for j in range(len(u[0]))]
    signs.append(s)
    d = max(abs(r[j] - s[j] * q[j]) for r, q in zip(u, w) for j in range(len(r)))
    assert d <= 1e-9 * max(abs(v) for r in u for v in r), ("factor", m, d)
def core(p):
    lines = [l.strip() for l in open(p) if l.strip()]
    dims = [int(v) for v in lines[2].split()]
    return dims, [float(v) for v in lines[3:]]
(da, ga), (db, gb) = core(a + ".core.tensor"), core(b + ".core.tensor")
assert da == db and len(ga) == len(gb), ("core shape", da, db)
worst = 0.0
for e in range(len(ga)):
    rest, s = e, 1.0
    for m in range(N):
        s *= signs[m][rest % da[m]]
        rest //= da[m]
    worst = max(worst, abs(ga[e] - s * gb[e]))
assert worst <= 1e-9 * max(abs(v) for v in ga), ("core", worst)
PY
}

# runs: NAME FILE ARGS... -- one process as NAME.one, then 2 and 3 ranks, each the same
runs() {
    local name=$1 file=$2; shift 2
    expect 0 "$name: one process" tucker "$file" "$@" -t 1 --device cpu -o $name.one --json $name.one.json
    for n in 2 3; do
        ranks $n tucker "$file" "$@" -t 1 -o $name.r$n --json $name.r$n.json
        if [ "$rc" -ne 0 ]; then bad "$name on $n ranks: exit $rc; $(head -c 300 err.txt)"; continue; fi
        check "$name on $n ranks: printed once" test "$(grep -c '^final fit' out.txt)" -eq 1
        check "$name on $n ranks: the plan names the ranks" grep -q "^ran on: cpu (.*$n MPI ranks" out.txt
        check "$name on $n ranks: nothing on stderr" test ! -s err.txt
        check "$name on $n ranks: one set" test -f $name.r$n.set -a -f $name.r$n.core.tensor
        check "$name on $n ranks: the single process's fits, factors and core" same $name.one $name.r$n
    done
}

runs planted planted.tns -r 3,3,3 -i 6 --tol 0
check "planted: fit >= 0.99" python3 -c '
import json, sys
sys.exit(0 if json.load(open("planted.r3.json"))["result"]["fit"] >= 0.99 else 1)'
runs hosvd planted.tns -r 3,2,3 -i 4 --tol 0 --init hosvd
ranks 3 tucker planted.bin -r 3,2,3 -i 4 --tol 0 --init hosvd -t 1 -o hbin --json hbin.json
if [ "$rc" -ne 0 ]; then bad "planted.bin on 3 ranks: exit $rc; $(head -c 300 err.txt)"; else
    check "planted.bin on 3 ranks (each reads its part), --init hosvd: one process's run" same hosvd.one hbin
fi
runs stem planted.tns -r 3,2,3 -i 3 --tol 0 --init hosvd.one

if [ -f "$SHARED/enron-igraphdata.tns.xz" ]; then
    runs enron "$SHARED/enron-igraphdata.tns.xz" -r 5,5,8 -i 4 --tol 0 --init hosvd
fi
if [ -f "$SHARED/uber-apr14.tns.xz" ]; then
    xz -dc "$SHARED/uber-apr14.tns.xz" > uber.tns && "$TF" convert uber.tns uber.bin >/dev/null 2>&1 ||
        bad "convert uber.bin"
    runs uber uber.bin -r 3,3,4,4 -i 3 --tol 0
fi

# a rank without non-zeros (2 of them over 3 ranks): one process's fits
printf '1 1 1 2\n2 2 2 3\n' > tiny.tns
expect 0 "tiny: one process" tucker tiny.tns -r 1 -i 2 --tol 0 -t 1 --device cpu -q -o tiny.one --json tiny.one.json
ranks 3 tucker tiny.tns -r 1 -i 2 --tol 0 -t 1 -q -o tiny.r3 --json tiny.r3.json
if [ "$rc" -ne 0 ]; then bad "tiny on 3 ranks: exit $rc; $(head -c 300 err.txt)"; else
    check "3 ranks, one without non-zeros: one process's run" same tiny.one tiny.r3
fi

# fails DESC N PATTERN [LINES]: after `each`, every one of N ranks exited non-zero (no
# hang) and stderr is one line (LINES: a usage error's two, the second 'try ...'),
# the first matching PATTERN (nothing else: no MPI abort)
fails() {
    local desc=$1 n=$2 pattern=$3 lines=${4:-1} c
    if [ "$rc" -eq 124 ]; then bad "$desc: hangs"; return; fi
    c=$(codes "$n")
    case " $c" in *" 0 "* | *none*) bad "$desc: rank exit codes $c; $(head -c 300 err.txt)"; return ;; esac
    if [ "$(wc -l <err.txt)" -ne "$lines" ]; then bad "$desc: expected $lines stderr line(s), got: $(head -c 600 err.txt)"; return; fi
    if ! grep -qE -- "$pattern" err.txt; then bad "$desc: $(cat err.txt)"; return; fi
    ok
}
each -np 1 T tucker planted.tns -r 3 -q : -np 1 T tucker planted.tns -r 2 -q
fails "-r differing between the ranks" 2 "^tenfold: ranks disagree: rank 1 has -r/--rank 2, rank 0 has 3$"
each -np 2 T tucker planted.tns -r 3 --memory-limit 1K -o bad
fails "the memory limit on 2 ranks" 2 '^tenfold: tucker: Y_\(.* on each MPI rank .* over the limit'
each -np 3 T tucker planted.tns -r 30,3,3 -o bad
fails "a rank above a mode's length on 3 ranks (a usage error, said once)" 3 \
    "^tenfold tucker: -r: the rank of mode 1 is 30, larger than the mode's length 20" 2
each -np 2 T tucker planted.tns -r 3 --device gpu
fails "--device gpu on 2 ranks" 2 '^tenfold: tucker: not available on GPUs of MPI ranks yet'

# bad input: one line from rank 0, a non-zero exit on every rank, no hang
printf '1 1 1 2\n1 2 2 1\n2 1 3 1\n2 2 2 3\n3 1 1 x\n3 3 3 1\n' > bad.tns
each -np 2 T tucker bad.tns -r 2 -o bad
fails "a malformed file on 2 ranks (every rank)" 2 '^tenfold: bad.tns:5: '
no_files "a malformed file on 2 ranks (every rank) wrote nothing" bad.mode1.mat bad.set bad.lock
ranks 2 tucker bad.tns -r 2 -o bad
check "a malformed file on 2 ranks: fails, no hang" test "$rc" -ne 0 -a "$rc" -ne 124
check "a malformed file on 2 ranks: one line naming the file and line" \
    test "$(grep -c '^tenfold: .*bad.tns:5' err.txt)" -eq 1
no_files "a malformed file on 2 ranks wrote nothing" bad.mode1.mat bad.set bad.lock
ranks 3 tucker planted.tns -r 30,3,3 -o bad
check "a rank above the mode's length on 3 ranks: usage error, no hang" test "$rc" -eq 2
check "a rank above the mode's length on 3 ranks: said once" \
    test "$(grep -c "^tenfold tucker: -r: the rank of mode 1 is 30, larger than the mode's length 20" err.txt)" -eq 1
ranks 2 tucker planted.tns --init nope -o bad
check "--init of a missing set on 2 ranks: fails once, no hang" \
    test "$rc" -ne 0 -a "$rc" -ne 124 -a "$(grep -c '^tenfold: --init nope: ' err.txt)" -eq 1
ranks 2 tucker planted.tns -r 3 --memory-limit 1K -o bad
check "the memory limit on 2 ranks: fails, no hang" test "$rc" -ne 0 -a "$rc" -ne 124
check "the memory limit on 2 ranks: one line, per rank" \
    test "$(grep -c '^tenfold: tucker: Y_(.*on each MPI rank.* over the limit' err.txt)" -eq 1
no_files "the memory failure on 2 ranks wrote nothing" bad.mode1.mat bad.set bad.lock
ranks 2 tucker planted.tns -r 3 --device gpu
check "--device gpu on 2 ranks: refused once, no hang" \
    test "$rc" -ne 0 -a "$rc" -ne 124 -a "$(grep -c '^tenfold: tucker: not available on GPUs of MPI ranks yet' err.txt)" -eq 1
ranks 2 tucker planted.tns -r 3 --checkpoint ck
check "--checkpoint on 2 ranks: refused once, no hang" \
    test "$rc" -ne 0 -a "$rc" -ne 124 -a "$(grep -c '^tenfold: tucker: --checkpoint and --resume are not available on MPI ranks' err.txt)" -eq 1
finish
