# SPDX-License-Identifier: BSD-3-Clause
# tenfold tucker (issue 47): iteration lines and the final fit; -o STEM writes
# the set (STEM.mode<N>.mat, STEM.core.tensor, STEM.set) and --json the report
# (result.fit = the last iterations[].fit); --init STEM continues from the
# files (ranks from their columns), --init hosvd is deterministic; one -r for
# every mode; one-line errors naming the option (wrong number of ranks, a rank
# above a mode's length or the product of the others, --device gpu, the
# memory limit, --init files that do not fit); a failure leaves no file.
source "$(dirname "$0")/lib/common.bash"

"$TF" gen -o small.tns --dims 30,20,10 --nnz 1500 --alpha 0.4 --rank 3 --seed 2 >/dev/null 2>&1 ||
    bad "gen small.tns"
fits() { sed -n 's/^ *its = *\([0-9]*\) ([^)]*) *\(fit = .*\)$/\1 \2/p' "$1"; }

expect 0 "tucker -r 4,3,2 -o -- json" tucker small.tns -r 4,3,2 -i 5 --tol 0 -o tk --json tk.json
cp out.txt tk.txt
check "5 iteration lines" test "$(fits tk.txt | wc -l)" -eq 5
check "the tucker line names the ranks" grep -qE '^tucker: ranks 4 x 3 x 2, max 5 iterations' tk.txt
check "the final fit line" grep -qE '^final fit: 0\.[0-9]+ after 5 iterations' tk.txt
check "the timing line" grep -qE '^timing \(s\): read [0-9.]+  init [0-9.]+  build [0-9.]+  ttmc [0-9.]+  vectors' tk.txt
check "the set's files" test -f tk.mode1.mat -a -f tk.mode2.mat -a -f tk.mode3.mat -a -f tk.core.tensor -a -f tk.set
check "no lock or temporary left" bash -c '! ls tk.lock tk*.tmp.* 2>/dev/null | grep -q .'
check "mode 2's factor is 20 x 3" test "$(wc -l <tk.mode2.mat)" -eq 20 -a "$(head -1 tk.mode2.mat | wc -w)" -eq 3
check "the core file: tensor, 3, 4 3 2, 24 values" bash -c \
    '[ "$(sed -n 1p tk.core.tensor)" = tensor ] && [ "$(sed -n 2p tk.core.tensor)" = 3 ] &&
     [ "$(sed -n 3p tk.core.tensor)" = "4 3 2" ] && [ "$(wc -l <tk.core.tensor)" -eq 27 ]'
if command -v python3 >/dev/null; then
    check "--json: result.fit is the last iteration's, 5 iterations, ranks, outputs" python3 -c '
import json
r = json.load(open("tk.json"))
assert r["command"] == "tucker" and r["options"]["ranks"] == [4, 3, 2]
assert len(r["iterations"]) == 5 and r["result"]["fit"] == r["iterations"][-1]["fit"]
assert 0 < r["result"]["fit"] < 1 and r["timing_seconds"]["ttmc"] > 0
assert len(r["outputs"]) == 4 and r["outputs"][-1] == "tk.core.tensor"'
fi

expect 0 "tucker again, 1 thread" tucker small.tns -r 4,3,2 -i 5 --tol 0 -t 1
check "the same seed, the same fits (1 thread or 2)" cmp -s <(fits tk.txt) <(fits out.txt)
expect 0 "tucker --init tk (ranks from the files)" tucker small.tns --init tk -i 2 --tol 0
check "--init STEM: the start line" grep -q 'start tk.mode{1..3}.mat' out.txt
check "--init STEM: ranks from the files" grep -qE '^tucker: ranks 4 x 3 x 2' out.txt
check "--init of a converged set starts at its fit" bash -c "[ \"\$(fits out.txt | head -1 | cut -c1-18)\" = \"\$(fits tk.txt | tail -1 | sed 's/^5/1/' | cut -c1-18)\" ]"
expect 0 "tucker --init hosvd" tucker small.tns -r 3 --init hosvd -i 3 --tol 0
cp out.txt h1.txt
expect 0 "tucker --init nvecs, another seed" tucker small.tns -r 3,3,3 --init nvecs -i 3 --tol 0 --seed 7
check "--init hosvd is deterministic, nvecs the same, one -r for every mode" cmp -s <(fits h1.txt) <(fits out.txt)

expect_usage tucker small.tns -r 4,3
check "two ranks for three modes: the message" grep -q -- '-r: 2 ranks given for a tensor of 3 modes (expected 3, or one for every mode)' err.txt
expect_usage tucker small.tns -r 4,3,11
check "a rank above the mode's length" grep -q -- '-r: the rank of mode 3 is 11, larger than the mode.s length 10' err.txt
expect_usage tucker small.tns -r 1,1,2
check "a rank above the product of the others" grep -q -- 'the rank of mode 3 is 2, more than the product of the other ranks (1)' err.txt
expect_usage tucker small.tns
check "no ranks" grep -q 'missing -r' err.txt
expect_usage tucker small.tns -r 2,x,2
expect_usage tucker small.tns -r 2 --gpus 2 --device cpu
if "$TF" info 2>/dev/null | grep -qE '^gpus: +[1-9]'; then
    # one GPU: the fits of the CPU's to 1e-10 from the same start (test_gpu_tucker checks more)
    expect 0 "--device gpu" tucker small.tns -r 2,3,2 -i 4 --tol 0 --device gpu -v --json gpu.json -o gpu
    check "--device gpu: where it ran" grep -q '^ran on: gpu (GPU 0, fp64' out.txt
    expect 0 "--device cpu, the same start" tucker small.tns -r 2,3,2 -i 4 --tol 0 --device cpu --json cpu.json
    check "--device gpu: the CPU's fits" python3 - gpu.json cpu.json <<'PY'
import json, sys
g, c = (json.load(open(f)) for f in sys.argv[1:])
assert g["options"]["device"] == "gpu" and g["result"]["plan"].startswith("GPU 0"), g["result"]["plan"]
for a, b in zip(g["iterations"], c["iterations"]):
    assert abs(a["fit"] - b["fit"]) <= 1e-10, (a["fit"], b["fit"])
PY
    if "$TF" info 2>/dev/null | grep -qE '^gpus: +([2-9]|[1-9][0-9])'; then
        expect 0 "--gpus 2" tucker small.tns -r 2,3,2 -i 4 --tol 0 --gpus 2 --json gpus.json
        check "--gpus 2: the CPU's fits" python3 - gpus.json cpu.json <<'PY'
import json, sys
g, c = (json.load(open(f)) for f in sys.argv[1:])
assert g["result"]["plan"].startswith("2 GPUs"), g["result"]["plan"]
for a, b in zip(g["iterations"], c["iterations"]):
    assert abs(a["fit"] - b["fit"]) <= 1e-10, (a["fit"], b["fit"])
PY
    fi
else
    expect_failure "--device gpu without a GPU" 'tenfold: --device: (not available|no usable NVIDIA GPU)' \
        tucker small.tns -r 2 --device gpu -o gpu
    no_files "--device gpu wrote nothing" gpu.mode1.mat gpu.set
fi
expect_failure "--memory-limit 1K" 'Y_\(1\) is 30 x 6 doubles .* over the limit' tucker small.tns -r 2,3,2 --memory-limit 1K -o mem
no_files "the memory failure wrote nothing" mem.mode1.mat mem.set mem.lock
expect_failure "--init of files with other columns than -r" 'tk.mode1.mat has 4 columns, expected 2 \(-r\)' \
    tucker small.tns --init tk -r 2
expect_failure "--init of a missing set" '--init nope: ' tucker small.tns --init nope
expect_usage tucker small.tns -r 2 -o tk --json tk.mode1.mat

if [ -f "$SHARED/enron-igraphdata.tns.xz" ]; then
    expect 0 "enron-igraphdata -r 5,5,8" tucker "$SHARED/enron-igraphdata.tns.xz" -r 5,5,8 -i 3 --tol 0 -q --json en.json
    check "-q prints nothing" test ! -s out.txt
    check "the report is there" test -s en.json
fi
expect 0 "tucker --help" tucker --help
check "the help names the core file format" grep -q "export_data 'tensor' format" out.txt
finish
