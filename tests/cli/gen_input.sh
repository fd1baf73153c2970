# SPDX-License-Identifier: BSD-3-Clause
# --gen SPEC in place of FILE: every command that reads a tensor gets the
# tensor `tenfold gen` writes with the same flags, the input line names the
# spec and the rate, the JSON reports say so, and a bad SPEC is a one-line
# usage error naming its field.
source "$(dirname "$0")/lib/common.bash"

spec='dims=40x30x20,nnz=3000,alpha=0.6,seed=5'
expect 0 "gen g.tns" gen -o g.tns --dims 40,30,20 --nnz 3000 --alpha 0.6 --seed 5
cp out.txt gen_out.txt
check "gen reports the rate" grep -qE '^generated: .* in [0-9.]+ s \([0-9.]+ M non-zeros/s\)$' gen_out.txt
check "gen prints the equivalent --gen spec" grep -qx "as --gen:  $spec" gen_out.txt

# convert: the generated tensor is the file's, bit for bit
expect 0 "convert --gen" convert --gen "$spec" c.tns
check "convert --gen writes the tensor gen writes" cmp -s g.tns c.tns
check "the input line names the spec and the rate" \
    grep -qE "^input:  generated $spec in [0-9.]+ s \([0-9.]+ M non-zeros/s, peak host [0-9.]+ [KMGT]?B\)$" out.txt
expect 0 "convert --gen=SPEC after OUT" convert c2.tns --gen="$spec"
check "--gen=SPEC after OUT is the same" cmp -s g.tns c2.tns
expect 0 "gen, per-mode alpha and a planted model" gen -o p.bin --dims 20,10,8,6 --nnz 700 --alpha 0.1,0.2,0.3,0.45 --rank 2 --noise 0.1 --seed 3 -t 1
pspec=$(sed -n 's/^as --gen:  //p' out.txt)
check "the spec keeps per-mode alpha, rank and noise" test "$pspec" = 'dims=20x10x8x6,nnz=700,alpha=0.1x0.2x0.3x0.45,seed=3,rank=2,noise=0.1'
expect 0 "convert --gen (4-way, planted)" convert --gen "$pspec" p2.bin -t 2
check "the printed spec makes the same tensor" cmp -s p.bin p2.bin
expect 0 "size suffixes" convert --gen dims=2kx1kx500,nnz=3k,seed=9 k.bin
expect 0 "gen with plain numbers" gen -o k2.bin --dims 2000,1000,500 --nnz 3000 --seed 9
check "dims=2kx1kx500,nnz=3k is 2000 x 1000 x 500 with 3000 non-zeros" cmp -s k.bin k2.bin

# stats and check: the same report as on the file, after the input line
# (a generated tensor has no fixes line)
expect 0 "stats FILE" stats g.tns
tail -n +2 out.txt | grep -v "^fixes:" > stats_file.txt
expect 0 "stats --gen" stats --gen "$spec"
tail -n +2 out.txt > stats_gen.txt
check "stats --gen = stats FILE" cmp -s stats_file.txt stats_gen.txt
expect 0 "check --gen" check --gen "$spec"
check "check --gen: valid" grep -q '^valid:   yes (0 warnings)' out.txt
check "check --gen: no fixes line, no lines read" bash -c '! grep -qE "^(fixes|entries):" out.txt'

# cpd: the same fits; the default stem is gen; the JSON report names the spec
fits() { sed -n 's/^ *its = *\([0-9]*\) ([^)]*) *\(fit = .*\)$/\1 \2/p' "$1"; }
expect 0 "cpd FILE" cpd g.tns -r 3 -i 4 --tol 0 -o file
fits out.txt > fits_file.txt
expect 0 "cpd --gen" cpd --gen "$spec" -r 3 -i 4 --tol 0 --json r.json
fits out.txt > fits_gen.txt
check "cpd --gen prints 4 iterations" test "$(wc -l < fits_gen.txt)" -eq 4
check "cpd --gen = cpd FILE" cmp -s fits_file.txt fits_gen.txt
check "cpd --gen: default stem gen" test -f gen.mode1.mat -a -f gen.lambda.mat
if command -v python3 >/dev/null; then
    check "cpd --json: input.generated, file null, rate, generator peak" python3 -c '
import json
i = json.load(open("r.json"))["input"]
assert i["file"] is None and i["format"] == "generated", i
assert i["generated"] == "'"$spec"'", i
assert i["nnz_per_second"] > 0 and i["read_seconds"] >= 0, i
assert i["generator_peak_bytes"] > 0, i'
fi

# mttkrp, bench mttkrp, ttm
for m in 1 2 3; do
    n=$(echo 40 30 20 | cut -d' ' -f$m)
    awk -v n=$n -v s=$m 'BEGIN { srand(s); for (i = 0; i < n; ++i) printf "%.6f %.6f\n", rand(), rand() }' > F$m.mat
done
expect 0 "mttkrp FILE" mttkrp g.tns --mode 2 --factors F1.mat,F2.mat,F3.mat -o m_file.mat
expect 0 "mttkrp --gen" mttkrp --gen "$spec" --mode 2 --factors F1.mat,F2.mat,F3.mat -o m_gen.mat
check "mttkrp --gen = mttkrp FILE" cmp -s m_file.mat m_gen.mat
expect 0 "bench mttkrp --gen" bench mttkrp --gen "$spec" --format csf --device cpu -r 4 --reps 2 --json b.json
check "bench --gen prints the generated input" grep -q "^input:  generated $spec" out.txt
if command -v python3 >/dev/null; then
    check "bench --json: input.generated, path null" python3 -c '
import json
i = json.load(open("b.json"))["input"]
assert i["path"] is None and i["generated"] == "'"$spec"'" and i["nnz"] == 3000, i'
fi
expect 0 "ttm --gen" ttm --gen "$spec" -r 3 --mode 1 --reps 2 --device cpu
check "ttm --gen prints the generated input" grep -q "^input:  generated $spec" out.txt

# usage errors: one message naming the field, then the 'try' line
expect_usage stats --gen 'dims=40x30x20,nnz=many'
check "bad nnz is named" grep -q -- '--gen nnz' err.txt
expect_usage stats --gen 'dims=40x0x20,nnz=10'
check "bad dims are named" grep -q -- '--gen dims' err.txt
expect_usage stats --gen 'dims=40x30x20,nnz=10,alpha=1'
check "alpha 1 is named" grep -q -- '--gen alpha' err.txt
expect_usage stats --gen 'dims=40x30x20,nnz=10,alpha=0.1x0.2'
expect_usage stats --gen 'dims=40x30x20,nnz=10,colour=red'
check "an unknown field is named" grep -q "unknown field 'colour'" err.txt
expect_usage stats --gen 'dims=40x30x20'
check "a missing nnz is named" grep -q 'missing nnz' err.txt
expect_usage stats --gen 'nnz=10'
expect_usage stats --gen 'dims=40x30x20,nnz=10,nnz=20'
expect_usage stats --gen 'dims=40x30x20,nnz=10,noise=0.1'
expect_usage stats --gen '40,30,20'
expect_usage stats g.tns --gen "$spec"
check "FILE and --gen together" grep -q 'takes the place of the input file' err.txt
expect_usage stats --gen "$spec" --gen "$spec"
expect_usage convert --gen "$spec" a.tns b.tns
expect_usage gen --gen "$spec" -o x.tns
# a valid spec the generator refuses: runtime error, exit 1
expect_failure "more non-zeros than cells" "cells" stats --gen 'dims=3x3,nnz=10'
finish
