# SPDX-License-Identifier: BSD-3-Clause
# Input edge cases: one index base per file and --base on every command that
# reads a tensor, the notes and report fields that say the base, a .mtx
# without its banner, compressed and piped input (streamed), garbage
# rejected early, check/stats on a mode of length near 2^32; issue 41:
# sums of duplicates that overflow (double, and single precision), dense
# matrices bounded like tensors (/dev/zero), one header rule for files and
# pipes, the start of a text (BOM, CR-only, compression that is not read),
# standard output named so.
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
# ---- issue 41 item 3: a sum of duplicates that is not finite fails at read time, naming both lines
printf '1 1 1 1e308\n1 1 1 1e308\n2 2 2 1\n' > dup.tns
expect_failure "check: duplicates whose sum overflows" \
    "^tenfold: dup\.tns:2: field 4: coordinate 1 1 1 again \(first on line 1; duplicates are summed\): .*found 1e\+308: the sum overflows the double range" \
    check dup.tns
printf '1 2\n3 4\n' > F2.mat
expect_failure "cpd: the same at read time" "dup\.tns:2: field 4: coordinate 1 1 1 again" cpd dup.tns -r 1 -i 1 --nowrite
expect_failure "convert: the same" "dup\.tns:2: field 4: coordinate 1 1 1 again" convert dup.tns dup2.tns
no_files "convert wrote nothing" dup2.tns
expect_failure "mttkrp: the same" "dup\.tns:2: field 4:" mttkrp dup.tns --mode 1 --factors -,F2.mat,F2.mat -o M2.mat
printf '# a comment\n\n1 1 1 -1e308\n2 2 2 1\n# another\n1 1 1 -1e308\n' > dupc.tns
expect_failure "comment lines: the file's own line numbers" "dupc\.tns:6: field 4: coordinate 1 1 1 again \(first on line 3;" check dupc.tns
printf '%%%%MatrixMarket matrix coordinate real general\n%% c\n3 3 3\n1 2 1e308\n2 2 1\n1 2 1e308\n' > dup.mtx
expect_failure ".mtx: the same" "dup\.mtx:6: field 3: coordinate 1 2 again \(first on line 4;" check dup.mtx
printf '%%%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 3e38\n2 2 1\n1 1 3e38\n' > dup32.mtx
expect 0 "in double a sum of 6e38 is fine" check dup32.mtx
expect_failure "sddmm --precision single: a sum beyond the float range" \
    "dup32\.mtx:5: field 3: coordinate 1 1 again \(first on line 3; 2 entries, summed\): expected a sum that fits single precision .* the sum is 6e\+38" \
    sddmm dup32.mtx -A F2.mat -B F2.mat -o P.mtx --precision single --device cpu
no_files "sddmm wrote nothing" P.mtx
expect 0 "sddmm in double takes it" sddmm dup32.mtx -A F2.mat -B F2.mat -o P.mtx --device cpu
printf '1 1 1 4e38\n2 2 2 1\n' > big32.tns
expect_failure "ttm --precision single: a value beyond the float range" \
    "big32\.tns:1: field 4: expected a value that fits single precision" ttm big32.tns --mode 1 --factor F2.mat -o Y.tns --precision single

# ---- issue 41 item 7: /dev/zero as a dense matrix is rejected at once (bounded lines)
printf '%%%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n2 2 2\n' > good.mtx
printf '1 1 1 1\n2 2 2 2\n' > s3.tns
zero_mat() { # DESC ARGS...: within 10 s, exit 1, one line naming /dev/zero's line 1
    local desc=$1; shift
    timeout 10 "$TF" "$@" >out.txt 2>err.txt
    rc=$?
    if [ "$rc" -eq 1 ] && [ "$(wc -l <err.txt)" -eq 1 ] &&
        grep -q '^tenfold: /dev/zero:1: line 1 is longer than 1 MiB (not a text file?)$' err.txt; then ok
    else bad "$desc: exit $rc (124: still running after 10 s): $(head -c 300 err.txt)"; fi
}
zero_mat "sddmm -A /dev/zero" sddmm good.mtx -A /dev/zero -B F2.mat -o P0.mtx --device cpu
zero_mat "mttkrp --factors -,/dev/zero,..." mttkrp s3.tns --mode 1 --factors -,/dev/zero,F2.mat -o M0.mat
zero_mat "ttm --factor /dev/zero" ttm s3.tns --mode 1 --factor /dev/zero -o Y0.tns
no_files "no output from them" P0.mtx M0.mat Y0.tns

# ---- issue 41 item 10: one header rule -- more than 64 MiB of comments fails from a file and a pipe alike
comments() { awk -v n="$1" 'BEGIN { s = sprintf("%99s", ""); gsub(/ /, "#", s); for (i = 0; i < n; ++i) print s; print "1 1 1 1" }'; }
comments 680000 > hdr.tns   # 68 MB of comment lines (64 MiB = 67.1 MB)
expect_failure "68 MB of comments from a file" \
    "^tenfold: hdr\.tns:671089: the header \(with the comment and blank lines before it\) is not complete within the first 64 MiB$" \
    check hdr.tns
sed 's/^tenfold: hdr\.tns//' err.txt > hdr-file.txt
comments 680000 | "$TF" check - >out.txt 2>err.txt
rc=$?
sed 's/^tenfold: <stdin>//' err.txt > hdr-pipe.txt
if [ "$rc" -eq 1 ] && cmp -s hdr-file.txt hdr-pipe.txt; then ok; else bad "the same from a pipe: exit $rc, $(cat err.txt)"; fi
comments 650000 > hdr2.tns   # 65 MB: within the limit
expect 0 "65 MB of comments from a file" check hdr2.tns
comments 650000 | "$TF" check - >out.txt 2>err.txt
check "65 MB of comments from a pipe" test $? -eq 0
rm -f hdr.tns hdr2.tns

# ---- issue 41 item 11: the start of a text, and standard output by its name
printf '1 1 1 1\n2 2 2 2\n' > s.tns
if command -v xz >/dev/null; then
    xz --format=lzma -c s.tns > s.tns.lzma
    expect_failure ".lzma is named" "^tenfold: s\.tns\.lzma: an lzma-compressed file \(not supported: use xz\)$" check s.tns.lzma
    xz -c s.tns | gzip -c > s.tns.xz.gz
    expect_failure "xz inside gzip is named" "^tenfold: s\.tns\.xz\.gz: xz-compressed data inside gzip: decompress it first" check s.tns.xz.gz
    xz --format=lzma -c F2.mat > F2.mat.lzma
    expect_failure "an .lzma matrix too" "F2\.mat\.lzma: an lzma-compressed file" ttm s3.tns --mode 1 --factor F2.mat.lzma -o Y.tns
fi
printf '\xef\xbb\xbfsptensor\n3\n2 2 2\n2\n1 1 1 1\n2 2 2 2\n' > bom.tns
expect 0 "a UTF-8 BOM before sptensor is skipped" check bom.tns
check "read as sptensor" grep -q '^input:  bom\.tns (sptensor' out.txt
printf '\xef\xbb\xbf1 2\n3 4\n' > bom.mat
expect 0 "a BOM in a dense matrix too" ttm s3.tns --mode 1 --factor bom.mat -o Y.tns
printf '1 1 1 1\r2 2 2 2\r' > cr.tns
expect_failure "CR-only line ends are named" "^tenfold: cr\.tns:1: lines end with CR only" check cr.tns
printf '1 2\r3 4\r' > cr.mat
expect_failure "CR-only in a matrix" "^tenfold: cr\.mat:1: lines end with CR only" ttm s3.tns --mode 1 --factor cr.mat -o Y.tns
if [ -w /dev/full ]; then
    "$TF" convert s.tns - >/dev/full 2>err.txt
    rc=$?
    if [ "$rc" -eq 1 ] && grep -q '^tenfold: standard output: write failed' err.txt && ! grep -q '/dev/fd' err.txt; then ok
    else bad "convert to a full standard output: exit $rc: $(cat err.txt)"; fi
fi
finish
