# SPDX-License-Identifier: BSD-3-Clause
# Input edge cases: one index base per file and --base on every command that
# reads a tensor, the notes and report fields that say the base, a .mtx
# without its banner, compressed and piped input (streamed), garbage
# rejected early, check/stats on a mode of length near 2^32.
source "$(dirname "$0")/lib/common.bash"

# ---- one base per file
printf '0 1 1.0\n1 2 2.0\n' > zb.tns
expect 0 "check a 0-based file" check zb.tns
check "a 0 in mode 1 makes the whole file 0-based: dims 2 x 3" grep -q 'dims 2 x 3,' out.txt
check "check notes the 0-based file" grep -qE '^note: +the file is 0-based \(an index is 0\)' out.txt
check "0 warnings" grep -q '^valid:   yes (0 warnings)' out.txt
expect 0 "stats a 0-based file" stats zb.tns
check "stats says the base" grep -qE '^fixes: .*indices 0-based \(detected: an index is 0\)' out.txt
printf '1 1 1.0\n2 3 2.0\n' > ob.tns
expect 0 "stats a 1-based file" stats ob.tns
check "stats says 1-based" grep -qE '^fixes: .*indices 1-based \(detected: no index is 0\)' out.txt
check "check of a 1-based file has no base note" bash -c "'$TF' check ob.tns | grep -vq 'note: +the file'"

# ---- --base
expect_failure "--base 1 with an index 0 names file:line:field" "zb\.tns:1: field 1: .*1-based.*found '0'" \
    check zb.tns --base 1
expect 0 "--base 0 on a file without a 0" check ob.tns --base 0
check "--base 0: dims grow by one" grep -q 'dims 3 x 4,' out.txt
check "--base 0 is noted" grep -qE '^note: +the file is read 0-based \(--base 0\)' out.txt
expect 0 "--base 1" stats ob.tns --base 1
check "--base 1 is reported" grep -q 'indices 1-based (from --base)' out.txt
expect 0 "--base auto" check zb.tns --base auto
expect_usage check zb.tns --base 2
printf '2\n3 3\n1 1 1.0\n1 3 2.0\n' > decl.tns
expect_failure "--base 0: index = declared length" "decl\.tns:4: field 2: expected an index of at most 2" \
    check decl.tns --base 0
printf '2\n3 3\n1 1 1.0\n1 3 2.0\n0 2 1.0\n' > decl0.tns
expect_failure "auto: a later 0 makes line 4 invalid" "decl0\.tns:4: field 2: .*0-based" check decl0.tns
xz -c decl0.tns > decl0.tns.xz 2>/dev/null &&
    expect_failure "the same, streamed from xz" "decl0\.tns\.xz:4: field 2: .*0-based" check decl0.tns.xz
for cmd in cpd check stats convert mttkrp ttm sddmm "bench mttkrp"; do
    check "$cmd --help lists --base" bash -c "'$TF' $cmd --help | grep -q -- '--base auto|0|1'"
done
expect 0 "convert --base 0" convert ob.tns ob0.tns --base 0
check "convert --base 0 shifted the indices" grep -qE '^2 2 1(\.0*)?$' ob0.tns
printf '1 2\n3 4\n5 6\n7 8\n' > F4.mat
expect 0 "mttkrp --base 0" mttkrp ob.tns --base 0 --mode 1 --factors -,F4.mat -o M.mat --format reference
check "mttkrp --base 0: 3 rows" test "$(grep -vc '^#' M.mat)" -eq 3
"$TF" gen -o g.tns --dims 20,10,5 --nnz 300 --seed 4 >/dev/null 2>&1 || bad "gen g.tns"
awk '{ print $1 - 1, $2 - 1, $3 - 1, $4 }' g.tns > g0.tns
expect 0 "cpd reads a 0-based file" cpd g0.tns -r 2 -i 2 --nowrite --json g0.json
check "cpd's JSON: index_base 0" grep -q '"index_base": *0' g0.json
check "cpd's JSON: detected" grep -q '"index_base_from": *"detected"' g0.json
expect 0 "cpd --base 1" cpd g.tns -r 2 -i 2 --nowrite --json g1.json --base 1
check "cpd's JSON: index_base 1 from the option" grep -q '"index_base_from": *"option"' g1.json
expect_usage cpd g.tns -r 2 --base x

# ---- Matrix Market: always 1-based, the banner is required for .mtx
printf '3 3 2\n2 1 3\n3 1 -1\n' > nb.mtx
expect_failure ".mtx without the banner" "nb\.mtx:1: expected the %%MatrixMarket banner, found '3'" check nb.mtx
gzip -c nb.mtx > nb.mtx.gz
expect_failure ".mtx.gz without the banner" "nb\.mtx\.gz:1: expected the %%MatrixMarket banner" stats nb.mtx.gz
cp nb.mtx nb.tns
expect 0 "the same text as .tns is FROSTT" check nb.tns
printf '%%%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 3\n' > m.mtx
expect 0 "a .mtx with --base 0 is still 1-based" stats m.mtx --base 0
check ".mtx says why" grep -q 'indices 1-based (Matrix Market)' out.txt

# ---- compressed and piped input: the same result as the plain file
expect 0 "check g.tns" check g.tns
sed -n 2p out.txt > plain.txt
gzip -c g.tns > g.tns.gz
expect 0 "check g.tns.gz" check g.tns.gz
check "gzip: same tensor line" bash -c "sed -n 2p out.txt | cmp -s - plain.txt"
run_tf check /dev/stdin < g.tns.gz
check "gzip through a pipe: same tensor line" bash -c "sed -n 2p out.txt | cmp -s - plain.txt"
cat g.tns | "$TF" check /dev/stdin > pipe.txt 2>&1
check "plain text through a pipe: same tensor line" bash -c "sed -n 2p pipe.txt | cmp -s - plain.txt"
head -c 40000000 /dev/zero | gzip -1 > zeros.tns.gz
expect_failure "gzip of 40 MB of zeros is rejected early" "zeros\.tns\.gz:1: line 1 is longer than 1 MiB" check zeros.tns.gz

# ---- a mode of length near 2^32: check and stats count slices in O(nnz)
printf 'sptensor\n3\n4000000000 3 3\n3\n4000000000 1 1 1.0\n1 3 3 2.0\n7 3 3 2.0\n' > huge.tns
expect 0 "check a tensor with a mode of 4e9" check huge.tns
check "check: dims" grep -q 'dims 4000000000 x 3 x 3,' out.txt
check "check: empty slices of the long mode" grep -qE '^note: +mode 1 has 3999999997 empty slices of 4000000000' out.txt
check "check: valid" grep -q '^valid:   yes' out.txt
expect 0 "stats a tensor with a mode of 4e9" stats huge.tns
check "stats: the long mode's row" grep -qE '^ +1 +4000000000 +3 +1 +1\.0 +1 ' out.txt
check "stats: mode 2 row" grep -qE '^ +2 +3 +2 +1 +1\.5 +2 +1\.33 ' out.txt
finish
