# SPDX-License-Identifier: BSD-3-Clause
# tenfold cpd --init nvecs (issue 43): the start of the leading singular vectors
# of the unfoldings prints its fits, is deterministic (no seed: --seed changes
# nothing), equals --init svd, differs from the random start (--init random is
# the default), reports its time (timing line, JSON); a rank above a mode's
# length works; a stem named nvecs is reached as ./nvecs; the help says so.
source "$(dirname "$0")/lib/common.bash"

"$TF" gen -o small.tns --dims 30,20,10 --nnz 1500 --alpha 0.4 --rank 3 --seed 2 >/dev/null 2>&1 ||
    bad "gen small.tns"
fits() { sed -n 's/^ *its = *\([0-9]*\) ([^)]*) *\(fit = .*\)$/\1 \2/p' "$1"; }
differ() { ! cmp -s "$1" "$2"; }

expect 0 "cpd --init nvecs" cpd small.tns -r 4 -i 6 --tol 0 --init nvecs -o nv --json nv.json
cp out.txt nv.txt
check "--init nvecs prints 6 iteration lines" test "$(fits nv.txt | wc -l)" -eq 6
check "the cpd line names the start" grep -qE '^cpd: rank 4, .*start nvecs \(leading singular vectors of modes 2\.\.3\)' nv.txt
check "the timing line has the nvecs time" grep -qE '^timing \(s\): read [0-9.]+  nvecs [0-9.]+  build' nv.txt
check "the factors are written" test -f nv.mode1.mat -a -f nv.mode3.mat -a -f nv.lambda.mat
if command -v python3 >/dev/null; then
    check "--json: options.init is nvecs, timing_seconds.init > 0 and within cpd_total" python3 -c '
import json
r = json.load(open("nv.json"))
t = r["timing_seconds"]
assert r["options"]["init"] == "nvecs" and len(r["iterations"]) == 6
assert 0 < t["init"] <= t["cpd_total"]'
fi

expect 0 "cpd --init nvecs again, another seed, 1 thread" cpd small.tns -r 4 -i 6 --tol 0 --init nvecs --seed 99 -t 1 --nowrite
check "--init nvecs is deterministic (seed and threads change nothing)" cmp -s <(fits nv.txt) <(fits out.txt)
expect 0 "cpd --init svd" cpd small.tns -r 4 -i 6 --tol 0 --init svd --nowrite
check "--init svd is --init nvecs" cmp -s <(fits nv.txt) <(fits out.txt)
expect 0 "cpd (random start)" cpd small.tns -r 4 -i 6 --tol 0 --nowrite --json rnd.json
cp out.txt rnd.txt
check "the random start gives other fits" differ <(fits nv.txt) <(fits rnd.txt)
check "the random start's timing line has no nvecs time" bash -c "! grep -q ' nvecs ' rnd.txt"
expect 0 "cpd --init random" cpd small.tns -r 4 -i 6 --tol 0 --init random --nowrite
check "--init random is the default" cmp -s <(fits rnd.txt) <(fits out.txt)
if command -v python3 >/dev/null; then
    check "--json of the random start: options.init null, timing_seconds.init 0" python3 -c '
import json
r = json.load(open("rnd.json"))
assert r["options"]["init"] is None and r["timing_seconds"]["init"] == 0'
fi

# rank 12 > mode 3's length 10: its columns past 10 are the random start's
expect 0 "cpd --init nvecs, rank above a mode's length" cpd small.tns -r 12 -i 3 --init nvecs --nowrite
check "rank 12: 3 iterations" test "$(fits out.txt | wc -l)" -eq 3
check "rank 12: the rank warning" grep -q 'exceeds the length of mode 3' err.txt

# a stem named nvecs: ./nvecs reads the files
expect 0 "cpd -o nvecs" cpd small.tns -r 4 -i 2 -o nvecs
expect 0 "cpd --init ./nvecs" cpd small.tns -i 2 --init ./nvecs --nowrite
check "--init ./nvecs starts from the files" grep -q 'start ./nvecs.mode{1..3}.mat' out.txt
expect_usage cpd small.tns --init nvecs
check "--init nvecs without -r: the usage error names -r" grep -q 'missing -r R' err.txt

# the bundled real tensor
if [ -f "$REPO/uber-apr14.tns.xz" ]; then
    expect 0 "uber-apr14 --init nvecs" cpd "$REPO/uber-apr14.tns.xz" -r 8 -i 4 --tol 0 --init nvecs --nowrite
    fits out.txt >uber.fits
    check "uber-apr14 --init nvecs: 4 iterations, fit rising" \
        awk '{ f = $4 } NR > 1 && f < p { bad = 1 } { p = f } END { exit bad || NR != 4 }' uber.fits
fi

check "cpd --help names --init nvecs and svd" bash -c "'$TF' cpd --help | grep -q -- '--init nvecs' && '$TF' cpd --help | grep -q -- '--init svd is'"
finish
