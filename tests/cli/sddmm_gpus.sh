# SPDX-License-Identifier: BSD-3-Clause
# tenfold sddmm --gpus (issue 30): bad specs are usage errors; more GPUs than
# the machine has, or a build without the CUDA backend, fail with one line
# naming the option; with two GPUs or more the benchmark prints the build
# apart and one line per GPU (rows, non-zeros, time), and one product on two
# GPUs equals the CPU's.
source "$(dirname "$0")/lib/common.bash"

"$TF" gen -o s.mtx --dims 400,300 --nnz 6000 --alpha 0.7 --seed 4 >/dev/null 2>&1 || bad "gen s.mtx"
expect_usage sddmm s.mtx -k 8 --gpus 0
expect_usage sddmm s.mtx -k 8 --gpus x
expect_usage sddmm s.mtx -k 8 --gpus 0,0
expect_usage sddmm s.mtx -k 8 --gpus 17
expect_usage sddmm s.mtx -k 8 --gpus 2 --device cpu
expect_usage sddmm s.mtx -k 8 --gpus 2 --gpu 1
expect 0 "sddmm --help names --gpus" sddmm --help
check "sddmm --help: --gpus" grep -q -- '--gpus G' out.txt

gpus=$("$TF" info 2>/dev/null | sed -n 's/^gpus: *\([0-9]*\) found.*/\1/p')
n=$(( ${gpus:-0} + 1 ))
expect_failure "--gpus beyond the machine" '^tenfold: --gpus: .*(this machine has '"${gpus:-0}"'|not available|no CUDA)' \
    sddmm s.mtx -k 8 --gpus $n
expect_failure "--gpus naming a GPU beyond the machine" '^tenfold: --gpus' sddmm s.mtx -k 8 --gpus 0,$n
if [ "${gpus:-0}" -eq 0 ]; then
    expect_failure "--gpus all without a GPU" '^tenfold: --gpus( all)?: (no CUDA device|not available)' \
        sddmm s.mtx -k 8 --gpus all
fi

# SDDMM's panels name physical GPUs (the caller's arrays live on them): not under TF_TEST_GPUS
if [ "${gpus:-0}" -ge 2 ] && [ -z "${TF_TEST_GPUS:-}" ]; then
    expect 0 "sddmm --gpus 2 benchmark" sddmm s.mtx -k 32 --gpus 2 --reps 3 --precision single
    check "--gpus 2: the build apart" grep -qE '^build: [0-9.]+ ms once' out.txt
    check "--gpus 2: a line per GPU" test "$(grep -cE '^[01] +[01] +[0-9]+\.\.[0-9]+ +[0-9]+ \(' out.txt)" -eq 2
    check "--gpus 2: the whole" grep -qE '^all +- +- +[0-9]+ ' out.txt
    expect 0 "sddmm --gpus 1,0 --repeat" sddmm s.mtx -k 8 --gpus 1,0 --reps 2 --repeat 3
    check "--gpus 1,0: panel 0 on GPU 1" grep -qE '^0 +1 ' out.txt
    # one product on two GPUs against the CPU's
    "$TF" cpd s.mtx -r 4 -i 1 --device cpu -o f >/dev/null 2>&1 || bad "cpd -o f (dense A and B)"
    expect 0 "sddmm -A -B -o on the CPU" sddmm s.mtx -A f.mode1.mat -B f.mode2.mat -o cpu.mtx --device cpu
    expect 0 "sddmm -A -B -o on 2 GPUs" sddmm s.mtx -A f.mode1.mat -B f.mode2.mat -o two.mtx --gpus 2
    check "-o on 2 GPUs: says so" grep -q '^panels: 2 GPUs' out.txt
    grep -v '^%' cpu.mtx >cpu.txt
    grep -v '^%' two.mtx >two.txt
    same_numbers "sddmm on 2 GPUs equals the CPU's" two.txt cpu.txt 1e-12
fi
finish
