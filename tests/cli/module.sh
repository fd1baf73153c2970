# SPDX-License-Identifier: BSD-3-Clause
# The CUDA module (issue 31 item 4, "light start"): a CUDA build loads
# libtenfold_cuda.so only when something needs the GPU. Commands that run on
# the CPU never load it (the dynamic loader's own trace, LD_DEBUG=files,
# says which files a run opened); `info` does, and says from where; without
# the module the tool works as a CPU-only build and says why. Skipped in
# CPU-only builds.
source "$(dirname "$0")/lib/common.bash"

expect 0 "info" info
if ! grep -q '^module: ' out.txt; then
    echo "$NAME: a CPU-only build (no CUDA module), skipped"
    exit 77
fi
check "info loads the module (a CUDA build here)" grep -qE '^module: +loaded /.*libtenfold_cuda\.so$' out.txt
check "info: CUDA backend yes" grep -qE '^build: +CUDA backend yes \(toolkit' out.txt

# loads ARGS...: the run's trace of the files it opened names the module
loads() { LD_DEBUG=files "$TF" "$@" >out.txt 2>trace.txt; grep -q 'file=.*libtenfold_cuda\.so' trace.txt; }
does_not_load() { LD_DEBUG=files "$TF" "$@" >out.txt 2>trace.txt && grep -q 'file=' trace.txt &&
                  ! grep -q 'libtenfold_cuda\.so' trace.txt; }
printf '1 1 1 1.0\n2 1 2 2.0\n1 2 2 3.0\n2 2 1 4.0\n3 3 3 5.0\n' >x.tns
check "info loads it" loads info
check "--version does not" does_not_load --version
check "cpd --device cpu does not" does_not_load cpd x.tns -r 2 -i 2 --nowrite --device cpu
check "a small cpd under --device auto does not" does_not_load cpd x.tns -r 2 -i 2 --nowrite
for c in "check x.tns" "stats x.tns" "convert x.tns y.bin" "gen -o g.tns --dims 5,5,5 --nnz 20"; do
    # shellcheck disable=SC2086
    check "$c does not" does_not_load $c
done

# no module: a CPU-only build that says why
export TF_CUDA_MODULE=$PWD/nonexistent/libtenfold_cuda.so
expect 0 "info without the module" info
check "info: not available" grep -qE '^build: +CUDA backend yes \(toolkit .*\), not available$' out.txt
check "info: the reason names TF_CUDA_MODULE" grep -qE '^module: +TF_CUDA_MODULE=.*nonexistent.* does not exist$' out.txt
check "info: no GPUs" grep -qE '^gpus: +0 found' out.txt
expect 0 "cpd without the module runs on the CPU" cpd x.tns -r 2 -i 2 --nowrite
check "cpd: the device line says why" grep -qE '^device: cpu \(no CUDA backend: its module TF_CUDA_MODULE=' out.txt
check "cpd: on the CPU" grep -qE '^plan: cpu ' out.txt
expect_failure "cpd --device gpu without the module" 'no CUDA backend: its module TF_CUDA_MODULE=.*does not exist' \
    cpd x.tns -r 2 -i 2 --nowrite --device gpu
# a file that is not a module: it fails to load, and the message carries the loader's
printf 'not an ELF file\n' >bogus.so
export TF_CUDA_MODULE=$PWD/bogus.so
expect 0 "info with a broken module" info
check "info: did not load, with the loader's reason" grep -qE '^module: +/.*bogus\.so did not load: .+' out.txt
printf '%%%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1.0\n2 3 2.0\n3 2 3.0\n' >s.mtx
expect_failure "sddmm --device gpu with a broken module" 'bogus\.so did not load' sddmm s.mtx -k 2 --device gpu --reps 1
unset TF_CUDA_MODULE
finish
