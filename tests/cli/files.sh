# SPDX-License-Identifier: BSD-3-Clause
# tenfold gen / convert / check / stats / mttkrp on small files: determinism,
# round trips, malformed input, no partial outputs, MTTKRP values.
source "$(dirname "$0")/lib/common.bash"

# ---- gen: deterministic, binary and text agree
expect 0 "gen a.tns" gen -o a.tns --dims 40,30,20 --nnz 2000 --alpha 0.6 --seed 5
expect 0 "gen b.tns (same seed)" gen -o b.tns --dims 40,30,20 --nnz 2000 --alpha 0.6 --seed 5
check "gen twice with the same seed gives identical files" cmp -s a.tns b.tns
check "gen wrote exactly nnz lines" test "$(grep -vc '^#' a.tns)" -eq 2000
expect 0 "gen c.tns (other seed)" gen -o c.tns --dims 40,30,20 --nnz 2000 --alpha 0.6 --seed 6
check "another seed gives another tensor" bash -c '! cmp -s a.tns c.tns'
expect 0 "gen a.bin" gen -o a.bin --dims 40,30,20 --nnz 2000 --alpha 0.6 --seed 5
check "gen .bin is binary (not the text)" bash -c '! cmp -s a.tns a.bin'
expect 0 "gen per-mode alpha, planted model" gen -o p.tns --dims 50,40,30,20 --nnz 5000 --alpha 0,0.3,0.6,0.9 --rank 3 --noise 0.01 --seed 1
check "gen 4-way wrote 5000 lines" test "$(grep -vc '^#' p.tns)" -eq 5000
expect_failure "gen: nnz above the number of cells" "cells" gen -o big.tns --dims 3,3 --nnz 10
no_files "failed gen leaves nothing" big.tns big.tns.tmp.*

# ---- convert: tns -> bin -> tns identical; bin from gen = converted bin content
expect 0 "convert tns -> bin" convert a.tns a2.bin
expect 0 "convert bin -> tns" convert a2.bin a3.tns
check "tns -> bin -> tns round trip is identical" cmp -s a.tns a3.tns
expect 0 "convert gen's bin -> tns" convert a.bin a4.tns
check "gen .bin and gen .tns hold the same tensor" cmp -s a.tns a4.tns
for f in tns-header sptensor; do
    expect 0 "convert --to $f" convert a.tns a.$f --to $f
    expect 0 "convert $f -> tns" convert a.$f back.$f.tns
    check "tns -> $f -> tns round trip is identical" cmp -s a.tns back.$f.tns
done
printf '1 1 0.5\n3 2 -1.25\n2 4 2\n' > m.tns
expect 0 "convert matrix tns -> mtx" convert m.tns m.mtx
check "mtx has the Matrix Market banner" grep -q '^%%MatrixMarket' m.mtx
expect 0 "convert mtx -> tns" convert m.mtx m2.tns
check "tns -> mtx -> tns round trip is identical" cmp -s <(sort m.tns) <(sort m2.tns)

# ---- malformed input: exit 1, one line naming file:line, no output left behind
printf '1 1 1 1.0\n2 2 2 2.0\n3 x 3 3.0\n' > bad.tns
expect_failure "malformed .tns (check)" "bad\.tns:3" check bad.tns
expect_failure "malformed .tns (convert)" "bad\.tns:3" convert bad.tns out.bin
no_files "failed convert leaves no output" out.bin out.bin.tmp.*
expect_failure "malformed .tns (stats)" "bad\.tns:3" stats bad.tns
printf '1 1 1 1.0\n2 2 2\n' > short.tns
expect_failure "wrong field count" "short\.tns:2" check short.tns
printf '1 1 1 1.0\n2 2 2 nan\n' > nan.tns
expect_failure "NaN value" "nan\.tns:2" check nan.tns
printf '1 1 1 1.0\n-2 2 2 1.0\n' > neg.tns
expect_failure "negative index" "neg\.tns:2" check neg.tns
expect_failure "missing file" "nope\.tns" check nope.tns
expect_failure "convert from a missing file" "nope\.tns" convert nope.tns out.tns
no_files "failed convert leaves no output" out.tns out.tns.tmp.*
mkdir -p ro && chmod 500 ro
if [ ! -w ro ]; then
    expect_failure "convert into an unwritable directory" "ro/x\.tns" convert a.tns ro/x.tns
    no_files "nothing written into the unwritable directory" ro/x.tns
fi
chmod 700 ro

# ---- check: duplicates summed, zeros dropped, 0-based modes, empty slices, --fix
printf '# duplicates and a zero\n1 1 1 1.0\n2 3 1 5.0\n1 1 1 2.0\n2 2 2 0\n\n1 3 2 4\n' > dup.tns
expect 0 "check a file with duplicates" check dup.tns --fix fixed.tns
check "check reports the duplicate" grep -qE '^warning: 1 duplicate coordinate' out.txt
check "check reports the zero" grep -qE '^warning: 1 explicit zero' out.txt
check "check says valid" grep -q '^valid:   yes' out.txt
check "check reports an empty slice" grep -qE '^note: +mode 2 has 1 empty slice' out.txt
check "--fix wrote 3 non-zeros" test "$(grep -vc '^#' fixed.tns)" -eq 3
check "--fix summed the duplicate" grep -qE '^1 1 1 3(\.0*)?$' fixed.tns
expect 0 "check the fixed file" check fixed.tns
check "fixed file has no duplicate left" bash -c '! grep -q duplicate out.txt'
printf '0 0 1 1.0\n1 2 2 2.0\n' > zb.tns
expect 0 "check a 0-based file" check zb.tns
check "check reports a 0-based file" grep -qE '^note: +the file is 0-based' out.txt
check "one base per file: dims 2 x 3 x 3" grep -q 'dims 2 x 3 x 3' out.txt

# ---- declared dims are never lost silently by plain .tns
printf '3\n2 2 2\n1 1 1 1.5\n' > one.tns   # ParTI header: 2 x 2 x 2, one non-zero
expect 0 "check --fix keeps declared dims" check one.tns --fix one_fixed.tns
check "check --fix notes the header form" grep -qE '^note: +one_fixed\.tns: plain \.tns would shrink dims \(mode 1: 2 -> 1, mode 2: 2 -> 1, mode 3: 2 -> 1\)' out.txt
expect 0 "check the --fix output" check one_fixed.tns
check "--fix output reads back as 2 x 2 x 2" grep -qE '\b2 x 2 x 2\b' out.txt
expect 0 "convert keeps declared dims (by extension)" convert one.tns one_conv.tns
check "convert notes the header form" grep -qE '^note: .*one_conv\.tns.*tns-header' out.txt
check "convert says what it wrote" grep -qE '^wrote: +one_conv\.tns \(tns-header\)' out.txt
expect 0 "stats of the converted file" stats one_conv.tns
check "converted file reads back as 2 x 2 x 2" grep -qE '\b2 x 2 x 2\b' out.txt
expect 0 "convert --to tns writes plain FROSTT" convert one.tns one_plain.tns --to tns
check "--to tns warns and names the lost dims" grep -qE '^tenfold: warning: one_plain\.tns: .*mode 3: 2 -> 1.*tns-header, sptensor and bin keep them' err.txt
check "--to tns output is plain (one line)" test "$(wc -l < one_plain.tns)" -eq 1
expect 0 "convert a tensor whose dims are implied" convert a.tns a5.tns
check "no note when nothing is lost" bash -c '! grep -q "^note:" out.txt && test ! -s err.txt'

# ---- stats
expect 0 "stats" stats p.tns
check "stats prints one row per mode" test "$(grep -cE '^ +[1-4] +[0-9]+ +[0-9]+' out.txt)" -eq 4
check "stats prints COO memory" grep -qE '^  COO +[0-9.]+ KB +exact' out.txt
check "stats prints CSF estimates" grep -q 'CSF rooted at mode 4 .*estimate' out.txt

# ---- mttkrp: a hand-computed case. X(1,1,1)=1, X(2,1,2)=2, X(1,2,2)=3;
# B = [1 2; 3 4], C = [5 6; 7 8] -> M1 = [68 108; 14 32]
printf '1 1 1 1\n2 1 2 2\n1 2 2 3\n' > x.tns
printf '1 2\n3 4\n' > B.mat
printf '5 6\n7 8\n' > C.mat
printf '68 108\n14 32\n' > M1.expected
for f in reference coo csf auto; do
    expect 0 "mttkrp --format $f" mttkrp x.tns --mode 1 --factors -,B.mat,C.mat -o M1.$f.mat --format $f
    same_numbers "mttkrp $f = hand-computed" M1.$f.mat M1.expected 1e-14
done
# mode 3 with any file in its own place: M3(k,r) = sum X(i,j,k) A(i,r) B(j,r), A = [1 1; 2 0]
printf '1 1\n2 0\n' > A.mat
printf '1 2\n13 12\n' > M3.expected
expect 0 "mttkrp mode 3" mttkrp x.tns --mode 3 --factors A.mat,B.mat,A.mat -o M3.mat
same_numbers "mttkrp mode 3 = hand-computed" M3.mat M3.expected 1e-14
# a generated 4-way tensor: every format equals the float64 reference
dims=(50 40 30 20)
for m in 0 1 2 3; do
    awk -v n=${dims[$m]} -v s=$m 'BEGIN { srand(s + 1); for (i = 0; i < n; ++i) printf "%.6f %.6f %.6f\n", rand(), rand(), rand() }' > F$((m + 1)).mat
done
for mode in 1 2 3 4; do
    facs=F1.mat,F2.mat,F3.mat,F4.mat
    expect 0 "mttkrp reference mode $mode" mttkrp p.tns --mode $mode --factors $facs -o R$mode.mat --format reference
    for f in coo csf; do
        expect 0 "mttkrp $f mode $mode" mttkrp p.tns --mode $mode --factors $facs -o $f$mode.mat --format $f -t 2
        same_numbers "mttkrp $f mode $mode = reference" $f$mode.mat R$mode.mat 1e-12
    done
    check "mttkrp mode $mode has ${dims[$((mode - 1))]} rows" test "$(grep -vc '^#' R$mode.mat)" -eq "${dims[$((mode - 1))]}"
done
expect_failure "mttkrp: factor with the wrong number of rows" "F1\.mat.*rows" mttkrp p.tns --mode 1 --factors -,F1.mat,F3.mat,F4.mat -o bad.mat
printf '1\n3\n' > narrow.mat
expect_failure "mttkrp: factors of different ranks" "columns" mttkrp x.tns --mode 1 --factors -,B.mat,narrow.mat -o bad.mat
expect_failure "mttkrp: missing factor file" "nope\.mat" mttkrp x.tns --mode 1 --factors -,B.mat,nope.mat -o bad.mat
# the file with the wrong column count is the one named, wherever it is in the list
awk 'BEGIN { for (i = 0; i < 40; ++i) printf "%.6f %.6f\n", i / 40, 1 - i / 40 }' > F2cols2.mat
expect_failure "mttkrp: the narrow factor is named (not a later one)" "^tenfold: factor F2cols2\.mat has 2 columns, expected 3" \
    mttkrp p.tns --mode 1 --factors -,F2cols2.mat,F3.mat,F4.mat -o bad.mat
expect_failure "mttkrp: mode N's own file settles a tie" "^tenfold: factor narrow\.mat has 1 columns, expected 2" \
    mttkrp x.tns --mode 1 --factors B.mat,narrow.mat,C.mat -o bad.mat
expect_failure "mttkrp: a tie names both files" "narrow\.mat has 1, C\.mat has 2" \
    mttkrp x.tns --mode 1 --factors -,narrow.mat,C.mat -o bad.mat
no_files "failed mttkrp leaves no output" bad.mat bad.mat.tmp.*
finish
