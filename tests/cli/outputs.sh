# SPDX-License-Identifier: BSD-3-Clause
# Where outputs go: '-' is standard output (progress then on stderr),
# symlinks keep their link, FIFOs are written directly, directories are
# refused; cpd's factor files are one set (all or nothing, also on SIGINT /
# SIGTERM; sets.sh has the switch, the lock and kills); output places are checked before the input is read; -o DIR/;
# --no-ktensor; the timing line's wall includes the write.
source "$(dirname "$0")/lib/common.bash"
set -m # background jobs keep SIGINT (a non-interactive shell ignores it in them)

json_ok() { python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$1" 2>/dev/null; }
now_ms() { date +%s%3N; }
sig_tmp() { ls -a | grep -q '^sig\..*\.tmp'; }

"$TF" gen -o small.tns --dims 30,20,10 --nnz 1500 --rank 3 --seed 2 >/dev/null 2>&1 || bad "gen small.tns"

# ---- '-' is standard output; progress goes to stderr
"$TF" cpd small.tns -r 3 -i 3 --tol 0 --nowrite --json - >rep.json 2>err.txt
rc=$?
check "cpd --json - exits 0" test "$rc" -eq 0
if command -v python3 >/dev/null; then
    check "cpd --json -: stdout is exactly one JSON document" json_ok rep.json
fi
check "cpd --json -: iteration lines on stderr" grep -q 'its = ' err.txt
check "cpd --json -: timing on stderr" grep -q '^timing (s)' err.txt
no_files "no file named '-'" ./-
"$TF" gen -o - --dims 30,20,10 --nnz 500 --seed 4 >g1.tns 2>err.txt
check "gen -o - exits 0" test $? -eq 0
check "gen -o -: report on stderr" grep -q '^generated:' err.txt
expect 0 "gen -o file" gen -o g2.tns --dims 30,20,10 --nnz 500 --seed 4
check "gen -o - writes the tensor to stdout" cmp -s g1.tns g2.tns
"$TF" convert small.tns - >c1.tns 2>err.txt
check "convert IN - exits 0" test $? -eq 0
check "convert IN -: the tensor on stdout" cmp -s c1.tns small.tns
check "convert IN -: report on stderr" grep -q '^wrote:' err.txt
"$TF" check small.tns --fix - >f1.tns 2>err.txt
check "check --fix -: the tensor on stdout" cmp -s f1.tns small.tns
check "check --fix -: report on stderr" grep -q '^valid:' err.txt
printf '1 1 1 1\n2 1 2 2\n1 2 2 3\n' >x.tns
printf '1 2\n3 4\n' >B.mat
printf '5 6\n7 8\n' >C.mat
"$TF" mttkrp x.tns --mode 1 --factors -,B.mat,C.mat -o - >m1.mat 2>err.txt
check "mttkrp -o -: report on stderr" grep -q '^mttkrp:' err.txt
expect 0 "mttkrp -o file" mttkrp x.tns --mode 1 --factors -,B.mat,C.mat -o m2.mat
check "mttkrp -o -: the matrix on stdout" cmp -s m1.mat m2.mat
no_files "still no file named '-'" ./-

# ---- symlinks: the link stays, its target is replaced; dangling links; chains
echo old >target.json
ln -s target.json link.json
expect 0 "cpd --json through a symlink" cpd small.tns -r 3 -i 2 --nowrite --json link.json
check "the symlink is still a symlink" test -L link.json
check "its target holds the report" grep -q '"command"' target.json
ln -s made.tns dangling.tns
expect 0 "gen to a dangling symlink" gen -o dangling.tns --dims 30,20,10 --nnz 500 --seed 4
check "the dangling link is kept" test -L dangling.tns
check "its target was created" cmp -s made.tns g2.tns
mkdir -p sub && ln -s sub/chain2.tns chain1.tns && ln -s final.tns sub/chain2.tns
expect 0 "convert to a chain of symlinks" convert small.tns chain1.tns
check "both links kept" test -L chain1.tns -a -L sub/chain2.tns
check "the chain's end holds the tensor" cmp -s sub/final.tns small.tns
check "no temporary left next to links" bash -c '! ls -a . sub | grep -q "\.tmp"'

# ---- a symlink to /dev/stdout (our own link, never /dev/stdout itself)
ln -s /dev/stdout to_stdout.json
"$TF" cpd small.tns -r 3 -i 2 --nowrite --json to_stdout.json >via_link.json 2>err.txt
check "cpd --json LINK-TO-STDOUT exits 0" test $? -eq 0
check "the link to /dev/stdout is not replaced" test -L to_stdout.json
if command -v python3 >/dev/null; then
    check "the report came out on stdout, clean" json_ok via_link.json
fi
check "progress went to stderr" grep -q 'its = ' err.txt

# ---- FIFOs are written directly, their reader gets everything
mkfifo pipe.tns
timeout 20 cat pipe.tns >from_fifo.tns &
reader=$!
timeout 20 "$TF" convert small.tns pipe.tns >/dev/null 2>err.txt
rc=$?
wait $reader
check "convert into a FIFO exits 0 (stderr: $(head -c 200 err.txt))" test "$rc" -eq 0
check "the FIFO's reader got the tensor" cmp -s from_fifo.tns small.tns
check "the FIFO is still a FIFO" test -p pipe.tns

# ---- directories are refused, naming the path
mkdir -p adir
expect_failure "convert into a directory" "adir: is a directory" convert small.tns adir
expect_failure "gen -o a directory" "adir: is a directory" gen -o adir --dims 3,3 --nnz 2

# ---- cpd -o DIR/ and -o DIR: the default stem inside
mkdir -p outdir
expect 0 "cpd -o outdir/" cpd small.tns -r 3 -i 2 -o outdir/
check "-o outdir/ writes outdir/small.mode1.mat" test -f outdir/small.mode1.mat -a -f outdir/small.ktensor
no_files "-o outdir/ writes no hidden files" outdir/.mode1.mat outdir/.ktensor
mkdir -p outdir2
expect 0 "cpd -o outdir2 (an existing directory)" cpd small.tns -r 3 -i 2 -o outdir2
check "-o outdir2 writes outdir2/small.lambda.mat" test -f outdir2/small.lambda.mat
expect_usage cpd small.tns -r 3 -o -

# ---- --no-ktensor; wall includes the write
expect 0 "cpd --no-ktensor" cpd small.tns -r 3 -i 2 -o nk --no-ktensor --json nk.json
check "--no-ktensor writes the .mat files" test -f nk.mode3.mat -a -f nk.lambda.mat
no_files "--no-ktensor writes no .ktensor" nk.ktensor
if command -v python3 >/dev/null; then
    check "--no-ktensor: the report lists 4 outputs, wall >= write > 0" python3 -c '
import json
r = json.load(open("nk.json"))
t = r["timing_seconds"]
assert len(r["outputs"]) == 4 and not any(o.endswith(".ktensor") for o in r["outputs"])
assert t["write"] > 0 and t["wall"] >= t["write"] + t["cpd_total"]'
fi
line=$(grep '^timing (s)' out.txt)
check "timing line has write and wall: $line" \
    awk '{ for (i = 1; i < NF; ++i) { if ($i == "write") w = $(i + 1); if ($i == "wall") a = $(i + 1) } }
         END { exit !(w != "" && a + 0 >= w + 0) }' <<<"$line"
check "cpd --help explains STEM.ktensor and --no-ktensor" bash -c "'$TF' cpd --help | grep -q -- '--no-ktensor' && '$TF' cpd --help | grep -q 'doubles the output'"

# ---- a set is all or nothing: a directory in the way of one file
expect 0 "cpd: the old set" cpd small.tns -r 3 -i 2 --seed 1 -o set
for f in set.mode1.mat set.mode2.mat set.mode3.mat set.lambda.mat set.ktensor; do cp "$f" "old.$f"; done
rm set.mode3.mat && mkdir set.mode3.mat
expect_failure "cpd: a directory in the way of STEM.mode3.mat" "set\.mode3\.mat" cpd small.tns -r 3 -i 2 --seed 9 -o set
for f in set.mode1.mat set.mode2.mat set.lambda.mat set.ktensor; do
    check "failed set: $f unchanged" cmp -s "$f" "old.$f"
done
check "failed set: no temporary left" bash -c '! ls -a | grep -q "^set\..*\.tmp"'
rmdir set.mode3.mat && cp old.set.mode3.mat set.mode3.mat
rm set.lambda.mat && mkdir set.lambda.mat
expect_failure "cpd: a directory in the way of STEM.lambda.mat (found before computing)" "set\.lambda\.mat" \
    cpd small.tns -r 3 -i 2 --seed 9 -o set
check "caught before computing: no iteration printed" bash -c '! grep -q "its =" out.txt'
check "failed set: mode1 unchanged" cmp -s set.mode1.mat old.set.mode1.mat
rmdir set.lambda.mat && cp old.set.lambda.mat set.lambda.mat

# ---- outputs are checked before the (long) work: < 1 s, before any iteration
"$TF" gen -o big.bin --dims 100000,100000,100000 --nnz 2M --seed 3 >/dev/null 2>&1 || bad "gen big.bin"
early() { # DESC PATTERN ARGS...: exit 1, the message, < 1 s, no iteration line
    local desc=$1 pattern=$2; shift 2
    local t0; t0=$(now_ms)
    expect_failure "$desc" "$pattern" "$@"
    local ms=$(($(now_ms) - t0))
    check "$desc: failed in ${ms} ms (< 1000)" test "$ms" -lt 1000
    check "$desc: nothing computed" bash -c '! grep -q "its =" out.txt'
}
early "cpd -o /nonexistent/d/x" "/nonexistent/d: cannot write there" cpd big.bin -r 8 -i 1000 --tol 0 -o /nonexistent/d/x
early "cpd --json /nonexistent/x.json" "/nonexistent: cannot write there" cpd big.bin -r 8 -i 1000 --tol 0 --nowrite --json /nonexistent/x.json
early "convert to /nonexistent/x.tns" "/nonexistent: cannot write there" convert big.bin /nonexistent/x.tns
early "check --fix /nonexistent/x.tns" "/nonexistent: cannot write there" check big.bin --fix /nonexistent/x.tns
early "gen -o /nonexistent/x.bin" "/nonexistent: cannot write there" gen -o /nonexistent/x.bin --dims 1000000,1000000,1000000 --nnz 100M
early "mttkrp -o /nonexistent/m.mat" "/nonexistent: cannot write there" mttkrp x.tns --mode 1 --factors -,B.mat,C.mat -o /nonexistent/m.mat
early "ttm -o /nonexistent/y.tns" "/nonexistent: cannot write there" ttm x.tns --mode 1 --factor B.mat -o /nonexistent/y.tns
printf '%%%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n2 2 2\n' >s.mtx
early "sddmm -o /nonexistent/p.mtx" "/nonexistent: cannot write there" sddmm s.mtx -A B.mat -B C.mat -o /nonexistent/p.mtx

# ---- SIGTERM / SIGINT: exit 143 / 130, no temporary left, the old set intact
# run_bg STEM ARGS...: cpd on big.bin in the background, output in bg.txt; sets $pid.
run_bg() {
    local stem=$1; shift
    "$TF" cpd big.bin -r 8 -o "$stem" "$@" >bg.txt 2>&1 &
    pid=$!
}
# wait_for TEST...: polls (10 ms) until TEST succeeds or the process ends; at most 60 s.
wait_for() {
    local i
    for ((i = 0; i < 6000; ++i)); do
        "$@" && return 0
        kill -0 "$pid" 2>/dev/null || return 1
        sleep 0.01
    done
    return 1
}
# finish_bg: the exit code of $pid (killed after 60 s at most) -> $rc.
finish_bg() {
    local i
    for ((i = 0; i < 600; ++i)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null
    wait "$pid"
    rc=$?
}
set_same() { # STEM: the set equals old.STEM.*
    local f
    for f in mode1.mat mode2.mat mode3.mat lambda.mat ktensor; do cmp -s "$1.$f" "old.$1.$f" || return 1; done
}
set_whole() { # STEM: the set is the old one, or new in every file (a signal during the renames finishes them)
    local f same=0
    for f in mode1.mat mode2.mat mode3.mat lambda.mat ktensor; do cmp -s "$1.$f" "old.$1.$f" && same=$((same + 1)); done
    [ "$same" -eq 5 ] || [ "$same" -eq 0 ]
}

expect 0 "cpd big: the old set" cpd big.bin -r 8 -i 1 --seed 1 -o sig
for f in mode1.mat mode2.mat mode3.mat lambda.mat ktensor; do cp "sig.$f" "old.sig.$f"; done
# SIGTERM while computing
run_bg sig -i 1000 --tol 0 --seed 2
if wait_for grep -qs 'its =' bg.txt; then
    kill -TERM "$pid"
    finish_bg
    check "SIGTERM while computing: exit 143 (got $rc)" test "$rc" -eq 143
    check "SIGTERM while computing: the old set intact" set_same sig
    check "SIGTERM while computing: no temporary left" bash -c '! ls -a | grep -q "\.tmp"'
    check "SIGTERM while computing: the lock file is removed" test ! -e sig.lock
else
    finish_bg
    bad "cpd never printed an iteration line (exit $rc): $(tail -3 bg.txt)"
fi
# SIGINT while writing the factor files: signal as soon as a temporary exists
caught=0
for attempt in 1 2 3; do
    run_bg sig -i 1 --seed 3
    if wait_for sig_tmp; then
        kill -INT "$pid"
        finish_bg
        caught=1
        break
    fi
    finish_bg # finished before a temporary was seen: the set is new, start again
    for f in mode1.mat mode2.mat mode3.mat lambda.mat ktensor; do cp "old.sig.$f" "sig.$f"; done
done
if [ "$caught" -eq 1 ]; then
    # before the switch: exit 130 and the old set; once it began: finished, exit 0, the new set
    int_ok() { if [ "$rc" -eq 130 ]; then set_same sig; else [ "$rc" -eq 0 ] && ! cmp -s sig.mode1.mat old.sig.mode1.mat; fi; }
    check "SIGINT while writing: exit 130 with the old set or 0 with a new one (got $rc)" int_ok
    check "SIGINT while writing: no temporary left" bash -c '! ls -a | grep -q "\.tmp"'
    check "SIGINT while writing: no lock left" test ! -e sig.lock
    check "SIGINT while writing: the set is whole (old, or new in every file)" set_whole sig
else
    bad "never caught cpd while it was writing its factor files"
fi
finish
