# SPDX-License-Identifier: BSD-3-Clause
# CLI habits (issue 31 item 5): -q / -v on every command, fits with their
# significant digits, singular counts, the rank warning, the OpenMP wait
# policy the tool defaults to.
source "$(dirname "$0")/lib/common.bash"

"$TF" gen -o g.tns --dims 40,30,20 --nnz 6000 --seed 5 >/dev/null 2>&1 || bad "gen g.tns"
printf '1 2\n3 4\n5 6\n' > F1.mat
printf '1 2\n3 4\n' > F2.mat
printf '1 1 1.0\n2 2 2.0\n3 1 -1.0\n' > m.tns

# ---- -q: errors and the requested outputs only; -v: more
expect 0 "cpd -q" cpd g.tns -r 2 -i 3 -o q -q
check "cpd -q: nothing on stdout" test ! -s out.txt
check "cpd -q: nothing on stderr" test ! -s err.txt
check "cpd -q: the factors are written" test -s q.mode3.mat -a -s q.lambda.mat
expect 0 "cpd --quiet --json -" cpd g.tns -r 2 -i 3 --nowrite --quiet --json -
check "cpd -q --json -: only the report on stdout" grep -q '^{' <(head -1 out.txt)
check "cpd -q --json -: nothing on stderr" test ! -s err.txt
expect 0 "cpd -v" cpd g.tns -r 2 -i 3 --nowrite -v
check "cpd -v: read statistics" grep -qE '^read: +6000 lines, 6000 entries before the fixes' out.txt
check "cpd -v: step times per iteration" grep -qE '^  its = +1 .*\[mttkrp [0-9.]+ +dense [0-9.]+ +fit [0-9.]+ s\]$' out.txt
expect 0 "cpd --verbose" cpd g.tns -r 2 -i 1 --nowrite --verbose
check "cpd --verbose is -v" grep -q '^read: ' out.txt
expect 0 "cpd (normal)" cpd g.tns -r 2 -i 1 --nowrite
check "normal: no read statistics" bash -c '! grep -q "^read:" out.txt'
check "normal: no step times" bash -c '! grep -q "\[mttkrp" out.txt'
expect_usage cpd g.tns -r 2 -q -v
expect_usage check g.tns --quiet --verbose
for c in cpd check stats convert gen mttkrp sddmm ttm "bench mttkrp"; do
    check "$c --help lists -q and -v" bash -c "'$TF' $c --help | grep -q -- '-q, --quiet' && '$TF' $c --help | grep -q -- '-v, --verbose'"
done
expect 0 "check -q of a clean file" check g.tns -q
check "check -q: silent" test ! -s out.txt -a ! -s err.txt
printf '1 1 1 1.0\n1 1 1 2.0\n2 2 2 0\n' > dup.tns
expect 0 "check -q of a file with warnings" check dup.tns -q
check "check -q: the warning lines only" bash -c "[ \"\$(cut -c1-8 out.txt | sort -u)\" = 'warning:' ] && [ \$(wc -l <out.txt) -eq 2 ]"
expect 0 "check -v" check g.tns -v
check "check -v: read statistics" grep -q '^read: ' out.txt
expect 0 "stats -q" stats g.tns -q
check "stats -q: the table comes first" grep -qE '^mode +length' <(head -1 out.txt)
check "stats -q: the memory table" grep -q '^memory:' out.txt
check "stats -q: no header lines" bash -c '! grep -qE "^(input|tensor|fixes):" out.txt'
expect 0 "stats -v" stats g.tns -v
check "stats -v: read statistics" grep -q '^read: ' out.txt
expect 0 "convert -q" convert g.tns g.bin -q
check "convert -q: silent" test ! -s out.txt -a ! -s err.txt -a -s g.bin
expect 0 "convert -v" convert g.bin g2.tns -v
check "convert -v: read statistics of a .bin" grep -qE '^read: +tenfold binary, 6000 entries' out.txt
expect 0 "convert -q --to tns (dims lost): no warning" convert g.tns lost.tns --to tns -q
check "convert -q: the dims warning is suppressed" test ! -s err.txt
expect 0 "gen -q" gen -o q.tns --dims 5,5 --nnz 5 -q
check "gen -q: silent" test ! -s out.txt -a ! -s err.txt -a -s q.tns
expect 0 "mttkrp -q" mttkrp m.tns --mode 1 --factors -,F2.mat -o M.mat -q
check "mttkrp -q: silent" test ! -s out.txt -a ! -s err.txt -a -s M.mat
expect 0 "mttkrp -v" mttkrp m.tns --mode 1 --factors -,F2.mat -o M.mat -v
check "mttkrp -v: the plan's build time and memory" grep -qE '^plan: +cpu .*, built in [0-9.]+ s, [0-9.]+ [KMG]?B$' out.txt
expect 0 "ttm -q (benchmark)" ttm g.tns -r 4 --mode 1 --reps 2 --warmup 0 -q --device cpu
check "ttm -q: the table only" bash -c "grep -qE '^dev +mode' <(head -1 out.txt) && [ \$(wc -l <out.txt) -eq 2 ]"
expect 0 "ttm -q (one product)" ttm m.tns --mode 2 --factor F2.mat -o Y.tns -q
check "ttm -q: silent" test ! -s out.txt -a ! -s err.txt -a -s Y.tns
printf '%%%%MatrixMarket matrix coordinate real general\n3 2 3\n1 1 1.0\n2 2 2.0\n3 1 -1.0\n' > S.mtx
expect 0 "sddmm -q (benchmark)" sddmm S.mtx -k 4 --reps 2 --warmup 0 -q --device cpu
check "sddmm -q: the table only" bash -c "grep -qE '^impl +algo' <(head -1 out.txt) && [ \$(wc -l <out.txt) -eq 2 ]"
expect 0 "sddmm -v (one product)" sddmm S.mtx -A F1.mat -B F2.mat -o P.mtx -v
check "sddmm -v: read statistics" grep -qE '^read: +[0-9]+ lines' out.txt
expect 0 "bench -q" bench mttkrp g.tns -r 4 --format coo --reps 1 --warmup 0 -q
check "bench -q: the table only" bash -c "grep -qE '^format +prec' <(head -1 out.txt) && ! grep -qE '^(input|bench|cpu):' out.txt"

# ---- '-' is standard input on every reading command; the format comes from the content
expect 0 "check g.tns" check g.tns
sed -n 2p out.txt > tensor_line.txt
cat g.tns | "$TF" check - >out.txt 2>err.txt
check "check - (a pipe): read" grep -qE '^input: +<stdin> \(tns, ' out.txt
check "check - (a pipe): the same tensor" bash -c "sed -n 2p out.txt | cmp -s - tensor_line.txt"
gzip -c g.tns | "$TF" stats - -q >out.txt 2>err.txt
check "stats - of gzip through a pipe" grep -qE '^ +1 +40 +40 ' out.txt
"$TF" convert g.tns - --to bin -q | "$TF" check - >out.txt 2>err.txt
check "tenfold binary through a pipe: told by its magic" grep -qE '^input: +<stdin> \(bin, ' out.txt
check "binary through a pipe: the same tensor" bash -c "sed -n 2p out.txt | cmp -s - tensor_line.txt"
cat S.mtx | "$TF" check - >out.txt 2>err.txt
check "Matrix Market through a pipe: told by its banner" grep -qE '^input: +<stdin> \(mtx, ' out.txt
"$TF" convert g.tns plain_out.tns -q
cat g.tns | "$TF" convert - - -q >piped_out.tns 2>err.txt
check "convert - -: standard input to standard output" cmp -s piped_out.tns plain_out.tns
"$TF" check - < g.tns >out.txt 2>err.txt
check "a file redirected to standard input" bash -c "sed -n 2p out.txt | cmp -s - tensor_line.txt"
(read -r line; "$TF" check -) < g.tns >out.txt 2>err.txt
check "standard input part-way through a file: from where it stands" grep -q 'nnz 5999,' out.txt
printf '1 1 1\n2 x 1\n' | "$TF" check - >out.txt 2>err.txt
check "errors name <stdin>:line" grep -qx "tenfold: <stdin>:2: field 2: expected a non-negative integer index, found 'x'" err.txt
cat g.tns | "$TF" cpd - -r 2 -i 1 -q
check "cpd -: the default stem is ./stdin" test -s stdin.mode1.mat -a -s stdin.lambda.mat
cat g.tns | "$TF" bench mttkrp - -r 2 --format coo --reps 1 --warmup 0 -q >out.txt 2>err.txt
check "bench mttkrp -" grep -qE '^coo +double +all ' out.txt
cat m.tns | "$TF" mttkrp - --mode 1 --factors -,F2.mat -o M2.mat -q
check "mttkrp -: the same product" cmp -s M.mat M2.mat
cat F2.mat | "$TF" ttm m.tns --mode 2 --factor - -o Y2.tns -q
check "ttm --factor -: a matrix from standard input" cmp -s Y.tns Y2.tns
cat F1.mat | "$TF" sddmm S.mtx -A - -B F2.mat -o P2.mtx -q
check "sddmm -A -" cmp -s P.mtx P2.mtx
expect_usage sddmm - -A - -B F2.mat -o x.mtx
expect_usage ttm - --mode 1 --factor - -o x.tns
expect_failure "empty standard input" "^tenfold: <stdin>: empty file" check - </dev/null
for c in cpd check stats convert mttkrp sddmm ttm "bench mttkrp"; do
    check "$c --help says '-' is standard input" bash -c "'$TF' $c --help | grep -q \"named '-' is standard input\""
done

# ---- a progress line for a read of more than a second: with -v, or on a terminal; never with -q
slow() { head -n 3000 g.tns; sleep 1.6; tail -n +3001 g.tns; } # a pipe that stalls
slow | "$TF" check - -v >out.txt 2>err.txt
check "-v: the progress line on stderr" grep -q $'^\r<stdin>: reading' err.txt
check "-v: it ends with the bytes read and a newline" bash -c "tail -c 40 err.txt | grep -qE 'reading 164\.3 KB, [0-9.]+ s$'"
check "-v: one line" test "$(wc -l <err.txt)" -eq 1
check "-v: the report is whole" grep -q 'nnz 6000,' out.txt
slow | "$TF" check - >out.txt 2>err.txt
check "stderr not a terminal, no -v: no progress line" test ! -s err.txt
slow | "$TF" stats - -q >out.txt 2>err.txt
check "-q: no progress line" test ! -s err.txt
"$TF" check g.tns -v >out.txt 2>err.txt
check "a read under a second: no progress line" test ! -s err.txt
if command -v script >/dev/null && script -qec true /dev/null >/dev/null 2>&1; then
    script -qec "bash -c 'head -n 3000 g.tns; sleep 1.6; tail -n +3001 g.tns' | '$TF' check - >/dev/null" /dev/null > tty.txt 2>&1
    check "a terminal: the line is drawn in place" grep -q $'\r<stdin>: reading, 1\.' tty.txt
    check "a terminal: and erased at the end" bash -c "tail -c 2 tty.txt | od -c | grep -q '\\r'"
    script -qec "bash -c 'head -n 3000 g.tns; sleep 1.6; tail -n +3001 g.tns' | '$TF' check - -q >/dev/null" /dev/null > tty.txt 2>&1
    check "a terminal with -q: nothing" test ! -s tty.txt
fi

# ---- fits keep 6 significant digits (a fit of 0.0033 is not printed as 0.003324)
if command -v python3 >/dev/null; then
awk 'BEGIN { srand(7) } { print $1, $2, $3, rand() - 0.5 }' g.tns > pm.tns
expect 0 "cpd of random signs" cpd pm.tns -r 1 -i 3 --tol 0 --nowrite --json pm.json
check "the final fit shows 6 significant digits" python3 -c '
import json, re
exact = json.load(open("pm.json"))["result"]["fit"]
shown = float(re.search(r"^final fit: (\S+)", open("out.txt").read(), re.M).group(1))
assert 0 < exact < 0.05 and abs(shown - exact) <= 1e-5 * exact, (shown, exact)'
check "iteration fits show 6 significant digits" python3 -c '
import json, re
its = json.load(open("pm.json"))["iterations"]
shown = [float(x) for x in re.findall(r"^  its = .* fit = (\S+)", open("out.txt").read(), re.M)]
assert len(shown) == len(its) == 3
for s, i in zip(shown, its): assert abs(s - i["fit"]) <= 1e-5 * abs(i["fit"]), (s, i["fit"])'
fi

# ---- singular counts
expect 0 "cpd -t 1 -i 1" cpd g.tns -r 2 -i 1 -t 1 --nowrite
check "cpd: '1 thread', 'max 1 iteration'" grep -qE '^cpd: rank 2, max 1 iteration, .* 1 thread, ' out.txt
check "cpd: 'after 1 iteration'" grep -qE '^final fit: .* after 1 iteration \(' out.txt
check "cpd: the plan says '1 thread'" grep -qE '^plan: cpu csf, 1 thread$' out.txt
expect 0 "bench -t 1 --reps 1" bench mttkrp g.tns -r 2 --format coo -t 1 --reps 1 --warmup 0 --device cpu
check "bench: '1 timed run per mode', '1 thread'" bash -c "grep -qE '^bench: .* 1 timed run per mode' out.txt && grep -qE '^cpu: +1 thread$' out.txt"
expect 0 "ttm --reps 1 -t 1" ttm g.tns -r 2 --mode 1 --reps 1 --warmup 0 -t 1 --device cpu
check "ttm: '1 timed run', '1 thread'" grep -qE '^ttm: .*cpu, 1 thread, 1 timed run after' out.txt
printf '1 1 1 1.0\n' > one.tns
expect 0 "check of a one-line file" check one.tns
check "check: 'read from 1 line'" grep -qE '^entries: 1 read from 1 line,' out.txt

# ---- a rank above the shortest mode's length: one warning line, not under -q
expect 0 "cpd -r 25 on a 40 x 30 x 20 tensor" cpd g.tns -r 25 -i 1 --nowrite
check "the rank warning names the mode" grep -qE '^tenfold: warning: rank 25 exceeds the length of mode 3 \(20\)' err.txt
check "one line" test "$(wc -l <err.txt)" -eq 1
expect 0 "cpd -r 20: no warning" cpd g.tns -r 20 -i 1 --nowrite
check "rank = shortest length: no warning" test ! -s err.txt
expect 0 "cpd -r 25 -q" cpd g.tns -r 25 -i 1 --nowrite -q
check "-q: no warning" test ! -s err.txt

# ---- OpenMP threads wait passively unless the user chose a policy (libgomp
# shows its settings with OMP_DISPLAY_ENV; the last block is the one in force)
spincount() { # ENV... : GOMP_SPINCOUNT of `tenfold info` run with ENV
    env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT OMP_DISPLAY_ENV=verbose "$@" "$TF" info 2>&1 >/dev/null |
        sed -n "s/^ *GOMP_SPINCOUNT = '\([0-9]*\)'.*/\1/p" | tail -1
}
if [ -n "$(spincount)" ]; then
    check "no policy set: passive (spin count 0)" test "$(spincount)" = 0
    check "OMP_WAIT_POLICY=ACTIVE is kept" test "$(spincount OMP_WAIT_POLICY=ACTIVE)" != 0
    check "GOMP_SPINCOUNT is kept" test "$(spincount GOMP_SPINCOUNT=1234)" = 1234
    check "the tool still runs with the policy set" test "$(env -u OMP_WAIT_POLICY "$TF" --version | head -c 7)" = tenfold
fi
finish
