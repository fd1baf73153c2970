# SPDX-License-Identifier: BSD-3-Clause
# What the options say about values they cannot take (issue 41, items 10
# and 11): one number parser with one wording for every option -- ranges
# as they are ([0, 1) for alpha, in gen's --alpha and --gen alpha alike),
# "a finite number" for unbounded ones, "too small" / "too large" for
# values a double or a size cannot hold -- and the meaning of --gpus 3,,
# --memory-limit 0 and 1, --factors ,, and an --init start whose scale
# CP-ALS cannot work from.
source "$(dirname "$0")/lib/common.bash"

printf '1 1 1 1.5\n2 2 2 2.5\n1 2 2 0.5\n2 1 1 3.0\n' > t.tns

# usage_says PATTERN CMD ARGS...: a usage error whose message matches PATTERN (grep -E)
usage_says() {
    local pattern=$1; shift
    expect_usage "$@"
    if grep -qE -- "$pattern" err.txt; then ok; else bad "tenfold $*: message does not match /$pattern/: $(head -1 err.txt)"; fi
}

# numbers a double cannot hold: named so, not "expected a number in [0, 1]"
usage_says "--tol: '1e-400' is too small: below [0-9.e+-]+, the smallest normal double \(give 0 for zero\); expected a number in \[0, 1\]$" \
    cpd t.tns -r 2 --tol 1e-400
usage_says "--tol: '1e-310' is too small" cpd t.tns -r 2 --tol 1e-310   # subnormal
usage_says "--tol: '1e400' is too large: beyond" cpd t.tns -r 2 --tol 1e400
usage_says "--tol: expected a number in \[0, 1\], got '2'$" cpd t.tns -r 2 --tol 2
expect 0 "--tol 0 is zero" cpd t.tns -r 2 -i 2 --tol 0 --nowrite -q
# unbounded options take finite numbers, and say so
usage_says "--beta: expected a finite number, got 'inf'$" sddmm s.mtx -k 2 --beta inf
usage_says "--alpha: expected a finite number, got 'nan'$" sddmm s.mtx -k 2 --alpha nan
usage_says "--beta: '-1e999' is too large in magnitude" sddmm s.mtx -k 2 --beta -1e999
# alpha: [0, 1) everywhere (the help, gen --alpha, --gen alpha, the library)
usage_says "--alpha: expected a number in \[0, 1\), got '1'$" gen -o g.tns --dims 5,5 --nnz 3 --alpha 1
usage_says "--alpha: expected a number in \[0, 1\), got '1.5'$" gen -o g.tns --dims 5,5 --nnz 3 --alpha 1.5
usage_says "--alpha: expected a number in \[0, 1\), got '1'$" gen -o g.tns --dims 5,5 --nnz 3 --alpha 0.5,1
usage_says "--gen alpha: expected a number in \[0, 1\), got '1'$" stats --gen dims=5x5,nnz=3,alpha=1
check "gen --help says [0, 1)" bash -c '"$0" gen --help | grep -q "skew in \[0, 1)"' "$TF"
expect 0 "gen --alpha 0.999" gen -o g.tns --dims 50,50 --nnz 30 --alpha 0.999 -q

# sizes: too large is "too large", 0 is not a limit, tiny limits are taken
usage_says "--memory-limit: '99999P' is too large: at most 2\^63 - 1 bytes" cpd t.tns -r 2 --memory-limit 99999P
usage_says "--memory-limit: '9E' is too large" cpd t.tns -r 2 --memory-limit 9E
usage_says "--memory-limit: 0 would mean no limit, which is the default" cpd t.tns -r 2 --memory-limit 0
usage_says "--memory-limit: expected a size such as 8G" cpd t.tns -r 2 --memory-limit 5X
if ! "$TF" info 2>/dev/null | grep -qE '^gpus: +[1-9]'; then
    expect 0 "--memory-limit 1 on the CPU" cpd t.tns -r 2 -i 2 --nowrite --device cpu --memory-limit 1
    check "--memory-limit on the CPU: a note that it is ignored" \
        grep -qx 'tenfold: note: --memory-limit limits GPU memory; this run is on the CPU, which ignores it' err.txt
    expect 0 "--memory-limit 1 -q" cpd t.tns -r 2 -i 2 --nowrite --device cpu --memory-limit 1 -q
    check "--memory-limit -q: no note" test ! -s err.txt
fi
expect 0 "--memory-limit 1P is a size" cpd t.tns -r 2 -i 2 --nowrite --device cpu --memory-limit 1P -q

# --gpus 3, is GPU 3 (as --help says): never a usage error about the empty entry
run_tf cpd t.tns -r 2 --nowrite --gpus 3,
if [ "$rc" -ne 2 ] && ! grep -q "expected an integer" err.txt; then ok; else bad "--gpus 3,: exit $rc: $(head -1 err.txt)"; fi
check "cpd --help: '3,' is GPU 3" bash -c '"$0" cpd --help | grep -q "'"'"'3,'"'"' is GPU 3"' "$TF"
usage_says "--gpus: expected an integer in 0..1023, got ''" cpd t.tns -r 2 --gpus 3,,
usage_says "--gpus: expected an integer in 0..1023, got ''" cpd t.tns -r 2 --gpus ,3

# --factors: an empty entry says what --factors takes (it said "no input file given")
usage_says "--factors: entry 1 of ',,' is empty: expected one factor file per mode, F1,F2,..." \
    mttkrp t.tns --mode 1 --factors ,, -o m.mat
usage_says "--factors: entry 3 of 'a,b,' is empty" mttkrp t.tns --mode 1 --factors a,b, -o m.mat

# --init: a start whose scale underflows or overflows the Grams is an error naming the file
"$TF" gen -o s.tns --dims 20,15,10 --nnz 300 --rank 2 -q || exit 1
expect 0 "cpd -o good" cpd s.tns -r 2 -o good -q
scaled() { # scaled STEM VALUE: every factor entry VALUE times a bit of variety
    for m in 1 2 3; do
        awk -v v="$2" '{ for (i = 1; i <= NF; i++) $i = v * (1 + 0.1 * i + 0.01 * NR); print }' good.mode$m.mat >"$1.mode$m.mat"
    done
}
scaled tiny 1e-300
expect_failure "--init of 1e-300" \
    "^tenfold: --init tiny: tiny\.mode[23]\.mat: column 1 has norm about 1e-29[0-9], too small: .* underflows a double" \
    cpd s.tns --init tiny --nowrite
scaled huge 1e300
expect_failure "--init of 1e300" \
    "^tenfold: --init huge: huge\.mode[23]\.mat: column 1 has norm about 1e30[0-9], too large: .* overflows a double" \
    cpd s.tns --init huge --nowrite
scaled small 1e-100 # each factor in range, their product not
expect_failure "--init of 1e-100 (the product underflows)" "small\.mode[23]\.mat: .* underflows" cpd s.tns --init small --nowrite
scaled fine 1e-40
expect 0 "--init of 1e-40 works" cpd s.tns --init fine --nowrite -q
expect 0 "--init of the run's own result" cpd s.tns --init good --nowrite -q

finish
