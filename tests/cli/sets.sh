# SPDX-License-Identifier: BSD-3-Clause
# cpd's factor set is switched in one step (STEM.set, the manifest, renamed
# last of the temporaries and first of the renames): a writer killed
# (SIGKILL) before or between the renames leaves a set that --init reads
# whole, old or new, and the next run removes what it left; SIGTERM during
# the renames finishes them and exits 0; a second writer of the stem fails
# on the lock; a report that cannot be written leaves the previous set; an
# output naming an input or another output is a usage error (every command
# that writes); output names up to NAME_MAX; --json of a path that is not
# UTF-8 is valid JSON.
source "$(dirname "$0")/lib/common.bash"

if ! command -v python3 >/dev/null; then
    echo "sets: python3 is needed (to read the reports)" >&2
    exit 77
fi
json_ok() { python3 -c 'import json, sys; json.load(open(sys.argv[1], "rb"))' "$1" 2>/dev/null; }
"$TF" gen -o small.tns --dims 30,20,10 --nnz 1500 --rank 3 --seed 2 >/dev/null 2>&1 || bad "gen small.tns"
# write STEM SEED [ARGS...]: a set from small.tns (one thread: the same seed gives the same files)
write() {
    local stem=$1 seed=$2; shift 2
    "$TF" cpd small.tns -r 3 -i 2 --tol 0 -t 1 --seed "$seed" -o "$stem" -q "$@"
}
# fit STEM: the first fit of a run started from --init STEM -- a number that
# depends on the factors --init read (of modes 2..N: mode 1 is computed first)
fit() {
    "$TF" cpd small.tns --init "$1" -i 1 --tol 0 -t 1 --nowrite -q --json - 2>/dev/null |
        python3 -c 'import json, sys; print(repr(json.load(sys.stdin)["iterations"][0]["fit"]))'
}
# clean STEM: nothing of a writer is left (no temporary, no lock)
clean() { ! ls -a | grep -qE "^$1\.(.*\.tmp\.[0-9]+\.[0-9]+|lock)\$"; }
same_set() { # STEM REF: the visible files are REF's
    local f
    for f in mode1.mat mode2.mat mode3.mat lambda.mat ktensor; do cmp -s "$1.$f" "$2.$f" || return 1; done
}
copy_plain() { # STEM DEST: the visible files, without the manifest (what a reader of the files alone sees)
    local f
    for f in mode1.mat mode2.mat mode3.mat lambda.mat ktensor; do cp "$1.$f" "$2.$f"; done
}

write ref_old 1 || bad "the old set"
write ref_new 2 || bad "the new set"
f_old=$(fit ref_old)
f_new=$(fit ref_new)
check "the two starts give different fits ($f_old, $f_new)" test -n "$f_old" -a "$f_old" != "$f_new"

# ---- SIGKILL / SIGTERM between the renames (strace slows every rename down)
RN=rename,renameat,renameat2
if ! command -v strace >/dev/null || ! strace -f -qq -o /dev/null true 2>/dev/null; then
    echo "sets: strace is missing or may not trace here: the kills between renames are left out" \
         "(test_output kills the writer at every step of the switch)"
else
    # slow DELAY_US SYSCALLS ARGS...: tenfold ARGS under strace, each of SYSCALLS delayed; sets $spid, $tfpid
    slow() {
        local delay=$1 calls=$2; shift 2
        rm -f tf.pid
        # (LeakSanitizer cannot work under ptrace: in a sanitizer build it would turn exit 0 into 1)
        ( # a subshell that exits with strace's code: no "Killed" note from this shell
            ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}detect_leaks=0" \
                strace -f -qq -o /dev/null -e trace="$calls" -e inject="$calls":delay_exit="$delay" \
                bash -c 'echo $$ >tf.pid; exec "$@"' _ "$TF" "$@" >bg.txt 2>&1
            exit $?
        ) 2>/dev/null &
        spid=$!
        local i
        for ((i = 0; i < 500; ++i)); do [ -s tf.pid ] && break; sleep 0.01; done
        tfpid=$(cat tf.pid 2>/dev/null)
    }
    # until TEST...: polls (10 ms) until TEST succeeds; at most 30 s or until the writer ends
    until_() {
        local i
        for ((i = 0; i < 3000; ++i)); do
            "$@" && return 0
            kill -0 "$tfpid" 2>/dev/null || return 1
            sleep 0.01
        done
        return 1
    }
    end_bg() { # the exit code of the strace'd writer -> $rc
        local i
        for ((i = 0; i < 600; ++i)); do kill -0 "$spid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$tfpid" "$spid" 2>/dev/null
        wait "$spid"
        rc=$?
    }
    mode2_new_mode3_old() { cmp -s k.mode2.mat ref_new.mode2.mat && cmp -s k.mode3.mat ref_old.mode3.mat; }
    # a temporary of mode2 (the places of mode1, lambda and ktensor are probed with a temporary too)
    temp_there() { ls | grep -qE '^k\.mode2\.mat\.tmp\.[0-9]+\.[0-9]+$'; }

    # killed between the renames: mode1-2 new, mode3 / lambda / ktensor old
    write k 1
    slow 700000 "$RN" cpd small.tns -r 3 -i 2 --tol 0 -t 1 --seed 2 -o k -q
    if until_ mode2_new_mode3_old; then
        kill -9 "$tfpid"
        end_bg
        copy_plain k mixed
        check "killed between renames: the files alone are a mix (the case the manifest is for)" \
            test "$(fit mixed)" != "$f_new" -a "$(fit mixed)" != "$f_old"
        check "killed between renames: --init reads the whole new set ($(fit k) = $f_new)" test "$(fit k)" = "$f_new"
        check "killed between renames: the temporaries are there until the next run" \
            bash -c "ls | grep -qE '^k\.mode3\.mat\.tmp\.[0-9]+\.[0-9]+\$'"
        check "killed between renames: so is the lock file" test -e k.lock
        write k 3
        check "the next run: no temporary, no lock left" clean k
        write k 2
        check "the next run wrote its own set whole" same_set k ref_new
    else
        end_bg
        bad "never caught the writer between the renames of mode2 and mode3 (exit $rc): $(tail -2 bg.txt)"
    fi

    # killed before the switch (the temporaries written, the manifest not renamed)
    write k 1
    slow 300000 fsync cpd small.tns -r 3 -i 2 --tol 0 -t 1 --seed 2 -o k -q
    if until_ temp_there; then
        kill -9 "$tfpid"
        end_bg
        check "killed before the switch: --init reads the whole old set" test "$(fit k)" = "$f_old"
        check "killed before the switch: the files are the old ones" same_set k ref_old
        check "killed before the switch: temporaries and lock left" bash -c "ls | grep -q '\.tmp\.' && test -e k.lock"
        "$TF" cpd small.tns -r 3 -i 2 -t 1 --seed 2 -o k -q --json k.json
        check "the next run: no temporary, no lock left" clean k
    else
        end_bg
        bad "never caught the writer with a temporary before the switch (exit $rc): $(tail -2 bg.txt)"
    fi

    # SIGTERM during the renames: the switch is finished, exit 0
    write k 1
    slow 500000 "$RN" cpd small.tns -r 3 -i 2 --tol 0 -t 1 --seed 2 -o k -q --json k.json
    if until_ cmp -s k.mode1.mat ref_new.mode1.mat; then
        kill -TERM "$tfpid"
        end_bg
        check "SIGTERM during the renames: exit 0 (got $rc)" test "$rc" -eq 0
        check "SIGTERM during the renames: the new set, whole" same_set k ref_new
        check "SIGTERM during the renames: the report switched with it" json_ok k.json
        check "SIGTERM during the renames: nothing left" clean k
    else
        end_bg
        bad "never caught the writer during the renames (exit $rc): $(tail -2 bg.txt)"
    fi
    # SIGTERM before the switch: exit 143, the old set, nothing left
    write k 1
    slow 300000 fsync cpd small.tns -r 3 -i 2 --tol 0 -t 1 --seed 2 -o k -q
    if until_ temp_there; then
        kill -TERM "$tfpid"
        end_bg
        check "SIGTERM before the switch: exit 143 (got $rc)" test "$rc" -eq 143
        check "SIGTERM before the switch: the old set" same_set k ref_old
        check "SIGTERM before the switch: nothing left" clean k
    else
        end_bg
        bad "never caught the writer before the switch (exit $rc): $(tail -2 bg.txt)"
    fi
fi

# ---- two writers of one stem: the second fails on the lock, the first's set is whole
"$TF" gen -o med.bin --dims 5000,4000,3000 --nnz 300k --seed 3 >/dev/null 2>&1 || bad "gen med.bin"
"$TF" cpd med.bin -r 4 -i 20 --tol 0 -o conc >first.txt 2>&1 &
first=$!
for ((i = 0; i < 3000; ++i)); do grep -qs 'its =' first.txt && break; kill -0 $first 2>/dev/null || break; sleep 0.01; done
kill -STOP $first 2>/dev/null # it holds the lock while it waits
expect_failure "a second writer of the stem" "^tenfold: conc: another tenfold run is writing this factor set \(pid $first\)$" \
    cpd small.tns -r 3 -i 2 -o conc
check "the second writer stopped before its work" bash -c '! grep -q "its =" out.txt'
kill -CONT $first 2>/dev/null
wait $first
check "the first writer exits 0" test $? -eq 0
check "the first writer's set is whole (the .mat files and the .ktensor hold the same numbers)" python3 -c '
t = open("conc.ktensor").read().split("\n")
order = int(t[1]); rank = int(t[3]); lam = [float(x) for x in t[4].split()]
assert [float(x) for x in open("conc.lambda.mat").read().split()] == lam
i = 5
for m in range(order):
    rows = int(t[i + 2].split()[0]); vals = [float(x) for l in t[i + 3:i + 3 + rows] for x in l.split()]
    assert [float(x) for x in open("conc.mode%d.mat" % (m + 1)).read().split()] == vals, m
    i += 3 + rows
'
check "the first writer: nothing left" clean conc

# ---- a report that cannot be written stops the run before the switch
if [ -w /dev/full ]; then
    write full 1
    expect_failure "--json /dev/full" "/dev/full" cpd small.tns -r 3 -i 2 -t 1 --seed 2 -o full --json /dev/full
    check "--json /dev/full: the previous set is whole" same_set full ref_old
    check "--json /dev/full: nothing left" clean full
fi
mkdir -p rodir && write rodir/r 1 && chmod 500 rodir
if [ ! -w rodir ]; then
    expect_failure "a set in a read-only directory" "rodir" cpd small.tns -r 3 -i 2 -o rodir/r
fi
chmod 700 rodir

# ---- an output may not be an input or another output (usage error, nothing touched)
sum() { md5sum "$@" | cut -d' ' -f1 | tr -d '\n'; }
cp small.tns x.tns
s0=$(sum x.tns)
expect_usage cpd x.tns -r 3 --nowrite --json x.tns
check "--json naming the input: the input is untouched" test "$(sum x.tns)" = "$s0"
check "the message names both" grep -q -- "--json x.tns is the same file as the input x.tns" err.txt
ln -sf x.tns xlink.json && ln -f x.tns xhard.json
expect_usage cpd x.tns -r 3 --nowrite --json xlink.json
expect_usage cpd x.tns -r 3 --nowrite --json xhard.json
mkdir -p sub
expect_usage cpd x.tns -r 3 --nowrite --json ./sub/../x.tns
expect_usage cpd - -r 3 --nowrite --json x.tns <x.tns
check "all of them: the input is untouched" test "$(sum x.tns)" = "$s0"
mkdir -p o && write o/same 1
s1=$(sum o/same.mode1.mat o/same.set)
expect_usage cpd small.tns -r 3 -o o/same --json o/same.mode1.mat
check "the message names the factor file" grep -q -- "--json o/same.mode1.mat is the same file as the factor file o/same.mode1.mat" err.txt
expect_usage cpd small.tns -r 3 -o o/same --json o/./same.mode9.mat
expect_usage cpd small.tns -r 3 -o o/same --json o/same.set
expect_usage cpd small.tns -r 3 -o o/same --json o/same.lock
expect_usage cpd small.tns -r 3 -o o/same --no-ktensor --json o/same.ktensor
expect_usage cpd o/same.mode1.mat -r 3 -o o/same
check "the set is untouched" test "$(sum o/same.mode1.mat o/same.set)" = "$s1"
expect 0 "--json /dev/null is no file" cpd small.tns -r 3 -i 1 -o o/other --json /dev/null
# --init STEM -o STEM is one set's switch: allowed; --init's files as another output: not
write a 1
expect 0 "--init a -o a (the same set)" cpd small.tns --init a -i 2 -t 1 -o a -q
check "--init a -o a: the set was replaced, whole" test "$(fit a)" != "$f_old"
check "--init a -o a: nothing left" clean a
expect 0 "--init a -o ./a (the same set, another spelling)" cpd small.tns --init a -i 1 -o ./a -q
expect_usage cpd small.tns --init a -i 1 --json a.lambda.mat
mkdir -p b && ln -sf ../a.mode2.mat b/x.mode2.mat
s2=$(sum a.mode2.mat)
expect_usage cpd small.tns --init a -i 1 -o b/x
check "the message names --init's file" grep -q "the factor file b/x.mode2.mat is the same file as the --init file a.mode2.mat" err.txt
check "--init's file is untouched" test "$(sum a.mode2.mat)" = "$s2"
# the other commands that write
printf '1 1 1 1\n2 1 2 2\n1 2 2 3\n' >m.tns
printf '1 2\n3 4\n' >B.mat
printf '5 6\n7 8\n' >C.mat
printf '%%%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n2 2 2\n' >s.mtx
sums=$(sum m.tns B.mat C.mat s.mtx x.tns)
expect_usage convert x.tns ./x.tns
expect_usage convert x.tns xlink.json
expect_usage check x.tns --fix xhard.json
expect_usage mttkrp m.tns --mode 1 --factors -,B.mat,C.mat -o C.mat
expect_usage mttkrp m.tns --mode 1 --factors -,B.mat,C.mat -o m.tns
expect_usage ttm m.tns --mode 1 --factor B.mat -o m.tns
expect_usage ttm m.tns --mode 1 --factor B.mat -o B.mat
expect_usage sddmm s.mtx -A B.mat -B C.mat -o s.mtx
expect_usage sddmm s.mtx -A B.mat -B C.mat -o B.mat
run_tf bench mttkrp x.tns -r 2 --json x.tns
check "bench mttkrp --json naming the input: usage error (exit $rc)" test "$rc" -eq 2
check "bench mttkrp: the message" grep -q -- "--json x.tns is the same file as the input x.tns" err.txt
check "no input was touched" test "$(sum m.tns B.mat C.mat s.mtx x.tns)" = "$sums"
expect 0 "convert to /dev/null" convert x.tns /dev/null
expect 0 "mttkrp reading and writing other files" mttkrp m.tns --mode 1 --factors -,B.mat,C.mat -o M1.mat

# ---- output names up to NAME_MAX (255 bytes): the temporary name fits too
n250=$(printf 'g%.0s' {1..246}).tns
expect 0 "gen -o a 250-byte name" gen -o "$n250" --dims 30,20,10 --nnz 100 --seed 1
check "the 250-byte file is there" test -s "$n250"
n255=$(printf 'c%.0s' {1..251}).tns
expect 0 "convert to a 255-byte name" convert small.tns "$n255"
check "the 255-byte file is the tensor" cmp -s "$n255" small.tns
stem=$(printf 's%.0s' {1..240})
j250=$(printf 'j%.0s' {1..245}).json
expect 0 "cpd -o a 240-byte stem (251-byte files) --json a 250-byte name" cpd small.tns -r 3 -i 1 -o "$stem" --json "$j250"
check "its files are there" test -s "$stem.lambda.mat" -a -s "$stem.mode3.mat" -a -s "$stem.set"
check "its report is JSON" json_ok "$j250"
check "no temporary left" bash -c '! ls -a | grep -q "\.tmp"'
expect_failure "a name over NAME_MAX fails before the work" "File name too long" gen -o "$(printf 'x%.0s' {1..256})" --dims 3,3 --nnz 2

# ---- --json of a path that is not UTF-8: valid JSON, the bytes replaced
cp small.tns "$(printf 'in\351.tns')"
expect 0 "cpd with non-UTF-8 names" cpd "$(printf 'in\351.tns')" -r 3 -i 1 -o "$(printf 'st\377')" --json "$(printf 'rep\376\377.json')"
check "the report is valid JSON" json_ok "$(printf 'rep\376\377.json')"
check "the bytes are U+FFFD" python3 -c '
import json, sys
r = json.load(open(sys.argv[1], "rb"))
assert r["input"]["file"] == "in\ufffd.tns", r["input"]["file"]
assert r["outputs"][0] == "st\ufffd.mode1.mat", r["outputs"]' "$(printf 'rep\376\377.json')"
printf 'caf\303\251' >name.txt
expect 0 "cpd with UTF-8 names" cpd small.tns -r 3 -i 1 -o "$(cat name.txt)" --json "$(cat name.txt).json"
check "UTF-8 names are kept as they are" python3 -c '
import json, sys
assert json.load(open(sys.argv[1], "rb"))["outputs"][0] == "caf\u00e9.mode1.mat"' "$(cat name.txt).json"
finish
