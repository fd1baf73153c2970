# SPDX-License-Identifier: BSD-3-Clause
# tenfold sddmm / ttm: help, usage errors, benchmark lines, one product
# from given files checked against hand-computed values, atomic outputs.
source "$(dirname "$0")/lib/common.bash"

# S (3 x 4), A (3 x 2), B (4 x 2)
cat >s.mtx <<'M'
%%MatrixMarket matrix coordinate real general
3 4 4
1 1 2
1 4 -1
3 2 4
3 3 0.5
M
printf '1 2\n0 0\n3 4\n' >a.mat
printf '1 0\n0 1\n1 1\n2 -1\n' >b.mat
printf '1 0\n' >short.mat

expect 0 "sddmm --help" sddmm --help
check "sddmm help names -k" grep -q -- '-k, --k K' out.txt
expect 0 "ttm --help" ttm --help
check "ttm help explains the Tensor Toolbox convention" grep -q 'Tensor Toolbox' out.txt
expect_usage sddmm
expect_usage sddmm s.mtx
expect_usage sddmm s.mtx -k 0
expect_usage sddmm s.mtx -k 4 -A a.mat -B b.mat -o p.mtx
expect_usage sddmm s.mtx -A a.mat -o p.mtx
expect_usage sddmm s.mtx -k 4 --precision half
expect_usage sddmm s.mtx -k 4 --device tpu
expect_usage sddmm s.mtx -k 4 --algo sm-l2 --device cpu
expect_usage sddmm s.mtx -k 4 --repeat 0
expect_usage sddmm s.mtx -A a.mat -B b.mat -o p.mtx --repeat 3
expect_usage ttm
expect_usage ttm s.mtx
expect_usage ttm s.mtx --factor a.mat -o y.tns
expect_usage ttm s.mtx --mode 1 --factor a.mat
expect_usage ttm s.mtx --mode x --rank 3

# benchmark lines
expect 0 "sddmm benchmark" sddmm s.mtx -k 8 --reps 3 --device cpu
check "sddmm prints a GFLOP/s row" grep -qE '^tenfold +openmp +[0-9.]+ +[0-9.]+ +[0-9.]+$' out.txt
expect 0 "sddmm --repeat" sddmm s.mtx -k 8 --reps 3 --device cpu --repeat 5
check "sddmm --repeat: one-shot calls" grep -qE '^repeat 5: one-shot [0-9.]+ ms per call' out.txt
check "sddmm --repeat: plan runs and the build" grep -qE '^repeat 5: plan +[0-9.]+ ms per run .* \+ build [0-9.]+ ms once$' out.txt
check "sddmm --repeat: the saving" grep -qE '^repeat 5: saving +-?[0-9.]+ ms per call' out.txt
expect 0 "ttm benchmark, all modes" ttm s.mtx -r 5 --reps 3 --device cpu
check "ttm prints one row per mode" test "$(grep -cE '^cpu +[12] +[0-9]+ ' out.txt)" -eq 2

# one SDDMM: A B^T = [[1 2 3 0] [0 0 0 0] [3 4 7 2]]; P at (1,1) (1,4) (3,2) (3,3) = 1 0 4 7
expect 0 "sddmm -A -B -o" sddmm s.mtx -A a.mat -B b.mat -o p.mtx --device cpu
printf '1 1 1\n1 4 0\n3 2 4\n3 3 7\n' >p_want.txt
grep -v '^%' p.mtx | tail -n +2 >p_got.txt
same_numbers "sddmm result" p_got.txt p_want.txt 1e-12
check "p.mtx header names the shape" bash -c "grep -v '^%' p.mtx | head -1 | grep -qE '^3 4 4\$'"
# alpha, beta, --scale: 2 * (A B^T) o S - S = 2*[2 0 16 3.5] - [2 -1 4 0.5] = 2 1 28 6.5
expect 0 "sddmm --scale --alpha --beta" sddmm s.mtx -A a.mat -B b.mat -o q.mtx --scale --alpha 2 --beta -1 --device cpu
printf '1 1 2\n1 4 1\n3 2 28\n3 3 6.5\n' >q_want.txt
grep -v '^%' q.mtx | tail -n +2 >q_got.txt
same_numbers "sddmm scaled result" q_got.txt q_want.txt 1e-12
expect_failure "sddmm with a short A" '^tenfold: -A short\.mat has 1 rows, expected 3' sddmm s.mtx -A short.mat -B b.mat -o bad.mtx --device cpu
expect_failure "sddmm with a short B names B" '^tenfold: -B short\.mat has 1 rows, expected 4' sddmm s.mtx -A a.mat -B short.mat -o bad.mtx --device cpu
awk 'NR <= 4 { print $1 }' b.mat > b1.mat
expect_failure "sddmm with K mismatch names both files" '^tenfold: -A a\.mat has 2 columns and -B b1\.mat has 1' sddmm s.mtx -A a.mat -B b1.mat -o bad.mtx --device cpu
expect_failure "sddmm with a missing A" 'missing.mat' sddmm s.mtx -A missing.mat -B b.mat -o bad.mtx --device cpu
no_files "no output after a failure" bad.mtx
check "no temporary file left" bash -c '! ls | grep -q "\.tmp\."'

# one TTM on mode 2 of S with U = b.mat (4 x 2): rows of S times U
# row 1: 2*U(1,:) - U(4,:) = (0, 1); row 3: 4*U(2,:) + 0.5*U(3,:) = (0.5, 4.5)
expect 0 "ttm --factor -o" ttm s.mtx --mode 2 --factor b.mat -o y.tns --device cpu
printf '1 2 1\n3 1 0.5\n3 2 4.5\n' >y_want.txt
same_numbers "ttm result" y.tns y_want.txt 1e-12
expect_failure "ttm with a factor of the wrong height" 'expected 4' ttm s.mtx --mode 2 --factor a.mat -o bad.tns --device cpu
no_files "no ttm output after a failure" bad.tns
if [ -d "$SHARED" ] && [ -f "$SHARED/collegemsg.tns.xz" ]; then
    expect 0 "ttm benchmark on a real tensor" ttm "$SHARED/collegemsg.tns.xz" -r 16 --mode 3 --reps 3 --device cpu
    check "real tensor ttm row" grep -qE '^cpu +3 +[0-9]+ ' out.txt
fi
if [ "$("$TF" info 2>/dev/null | grep -c 'CUDA.*no\|cuda.*off\|without CUDA')" -gt 0 ]; then
    expect_failure "sddmm --device gpu without CUDA" 'CUDA' sddmm s.mtx -k 4 --device gpu --reps 1
fi
# on a GPU, a ttm benchmark past its memory limit exits 1 with one line on stderr
# (it used to print its failure in the table only, issue 26)
if "$TF" info 2>/dev/null | grep -qE '^gpus: +[1-9]'; then
    awk 'BEGIN { for (i = 1; i <= 3000; ++i) printf "%d %d %d 1.5\n", i % 50 + 1, (7 * i) % 40 + 1, (13 * i) % 30 + 1 }' > big.tns
    expect 1 "ttm --device gpu under a 1K limit" ttm big.tns --mode 1 -r 2 --device gpu --memory-limit 1K --reps 1
    check "ttm under a 1K limit: one line on stderr" grep -qE '^tenfold: ttm mode 1 on the GPU: .*limit' err.txt
    # computing one product under --device auto: past the limit it runs on the CPU and says so
    expect 0 "sddmm -A -B -o under a 1-byte limit (auto)" sddmm s.mtx -A a.mat -B b.mat -o p_lim.mtx --memory-limit 1
    check "sddmm under the limit: a note" grep -qE '^note: .*limit.*running on the CPU' out.txt
    grep -v '^%' p_lim.mtx | tail -n +2 >p_lim.txt
    same_numbers "sddmm result on the CPU fallback" p_lim.txt p_want.txt 1e-12
    expect 0 "ttm --factor -o under a 1-byte limit (auto)" ttm s.mtx --mode 2 --factor b.mat -o y_lim.tns --memory-limit 1
    check "ttm under the limit: a note" grep -qE '^note: .*limit.*running on the CPU' out.txt
    same_numbers "ttm result on the CPU fallback" y_lim.tns y_want.txt 1e-12
fi
# --memory-limit is a size on sddmm and ttm too
run_tf sddmm s.mtx -k 4 --memory-limit 3Q
check "sddmm --memory-limit 3Q is a usage error" test "$rc" -eq 2
run_tf ttm s.mtx --mode 1 -r 2 --memory-limit x
check "ttm --memory-limit x is a usage error" test "$rc" -eq 2
check "sddmm --help documents --memory-limit" bash -c '"$0" sddmm --help | grep -q -- --memory-limit' "$TF"
finish
