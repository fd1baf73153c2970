# SPDX-License-Identifier: BSD-3-Clause
# tenfold bench mttkrp: help (models), usage errors, the format x precision
# table and its --json report on the CPU, failures of one run that let the
# others go on, and --device gpu with or without a GPU.
source "$(dirname "$0")/lib/common.bash"

# a small order-3 tensor: 4 x 3 x 5, 8 non-zeros
cat >t.tns <<'T'
1 1 1 1.5
1 2 3 -2
2 1 5 0.5
2 3 2 4
3 2 2 1
3 3 4 -1
4 1 3 2.5
4 2 1 3
T

# bench_usage ARGS...: expect_usage for the two-word command "bench mttkrp"
bench_usage() {
    local desc="tenfold bench mttkrp $*"
    run_tf bench mttkrp "$@"
    if [ "$rc" -ne 2 ]; then bad "$desc: exit $rc, expected 2 (usage); stderr: $(head -c 300 err.txt)"; return; fi
    if [[ "$(sed -n 1p err.txt)" != "tenfold bench mttkrp: "* ]] || [ "$(wc -l <err.txt)" -ne 2 ] ||
       [ "$(sed -n 2p err.txt)" != "try 'tenfold bench mttkrp --help'" ]; then
        bad "$desc: expected the message and the 'try' line, got: $(cat err.txt)"; return
    fi
    if [ -s out.txt ]; then bad "$desc: printed on stdout: $(head -c 200 out.txt)"; return; fi
    ok
}

expect 0 "bench --help" bench --help
check "help names --precision" grep -q -- '--precision LIST' out.txt
check "help names --device" grep -q -- '--device D' out.txt
check "help documents the GPU byte model" grep -q 'T_n' out.txt
check "help documents frac and the copy bandwidth" grep -q 'copy bandwidth' out.txt
expect 0 "bench mttkrp --help" bench mttkrp --help
check "bench mttkrp --help starts with usage" grep -q '^usage: tenfold bench mttkrp' out.txt

bench_usage t.tns --precision half
check "bad --precision names the option" grep -q -- '--precision' err.txt
bench_usage t.tns --precision double,
bench_usage t.tns --precision double,single,double
bench_usage t.tns --device tpu
check "bad --device names the option" grep -q -- '--device' err.txt
bench_usage t.tns --gpu x
bench_usage t.tns --format coo,foo
bench_usage t.tns --reps 0
bench_usage t.tns --warmup -1

# formats x precisions on the CPU: double runs; single is double-only on the
# CPU, so those runs fail with one line each and the exit status is 1
run_tf bench mttkrp t.tns --format coo,csf --precision double,single --device cpu -r 4 --reps 3 --json b.json
if [ "$rc" -eq 1 ]; then ok; else bad "bench coo,csf x double,single: exit $rc, expected 1; stderr: $(cat err.txt)"; fi
check "table header has a precision and a frac column" grep -qE '^format +prec +mode +median ms +min ms +GFLOP/s +GB +GB/s +frac$' out.txt
for f in coo csf; do
    check "$f double: one row per mode" test "$(grep -cE "^$f +double +[123] +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +-$" out.txt)" -eq 3
    check "$f double: the all row" grep -qE "^$f +double +all +[0-9.]+ " out.txt
    check "$f double: build line" grep -qE "^$f +double build [0-9.]+ s \([0-9.]+ M nnz/s, peak host [0-9.]+ [KMGT]?B\), .*\(cpu $f" out.txt
    check "$f single: a failed row in the table" grep -qE "^$f +single failed: .*double precision only" out.txt
    check "$f single: one error line" grep -qxE "tenfold: $f single: .*double precision only" err.txt
done
check "two error lines" test "$(wc -l <err.txt)" -eq 2
check "bench line names the runs" grep -qE '^bench: +rank 4, 1 warm-up \+ 3 timed runs per mode' out.txt
check "no gpu line on the CPU" bash -c '! grep -q "^gpu" out.txt'
check "wrote the JSON report" grep -q '^wrote: b.json' out.txt
if command -v python3 >/dev/null; then
    check "--json: runs per format and precision, models, device, frac" python3 -c '
import json
r = json.load(open("b.json"))
assert r["command"] == "bench mttkrp" and r["input"]["nnz"] == 8 and r["input"]["dims"] == [4, 3, 5]
o = r["options"]
assert o["device"] == "cpu" and o["rank"] == 4 and o["reps"] == 3 and o["warmup"] is None
assert r["gpu"] is None
assert "T_mode" in r["models"]["bytes_gpu"] and "order" in r["models"]["bytes_cpu"] and "frac" in r["models"]
res = r["results"]
assert [(x["format"], x["precision"]) for x in res] == [("coo", "double"), ("csf", "double"), ("coo", "single"), ("csf", "single")]
for x in res:
    assert x["device"] == "cpu"
    if x["precision"] == "single":
        assert not x["ok"] and "double precision only" in x["error"]
        continue
    assert x["ok"] and x["used_format"] == x["format"] and x["warmup"] == 1 and x["build_seconds"] >= 0 and x["build_nnz_per_second"] > 0 and x["build_peak_host_bytes"] > 0
    assert len(x["modes"]) == 3 and [m["mode"] for m in x["modes"]] == [1, 2, 3]
    for m in x["modes"] + [x["all_modes"]]:
        assert m["median_ms"] > 0 and m["frac"] is None and m["gbytes_per_s"] > 0
    # flops = nnz R N; CPU bytes = nnz (4N + 8) + nnz (N-1) R 8 + I_n R 8
    assert abs(x["modes"][0]["gflop"] * 1e9 - 8 * 4 * 3) < 1e-6
    assert abs(x["modes"][2]["gbytes"] * 1e9 - (8 * 20 + 8 * 2 * 4 * 8 + 5 * 4 * 8)) < 1e-6
'
fi

# double only, default formats on the CPU: everything runs, exit 0
expect 0 "bench --device cpu, defaults" bench mttkrp t.tns --device cpu --reps 2 --warmup 0
check "default CPU formats are coo and csf" test "$(grep -cE '^(coo|csf) +double +all ' out.txt)" -eq 2
check "--warmup 0 is used" grep -qE '^bench: +rank 16, 0 warm-up' out.txt

# a GPU-only format next to a CPU one: fcoo fails (no GPU) or runs (GPU); csf runs either way
have_gpu=0
if "$TF" info 2>/dev/null | grep -qE '^gpus: +[1-9]'; then have_gpu=1; fi
run_tf bench mttkrp t.tns --format csf,fcoo --reps 2
check "csf still runs next to fcoo" grep -qE '^csf +double +all ' out.txt
if [ $have_gpu = 1 ]; then
    if [ "$rc" -eq 0 ]; then ok; else bad "csf,fcoo with a GPU: exit $rc; stderr: $(cat err.txt)"; fi
    check "fcoo runs on the GPU" grep -qE '^fcoo +double build .*\(gpu fcoo' out.txt
    check "gpu line with the copy bandwidth" grep -qE '^gpu 0: .*copy bandwidth \(read \+ write\) [0-9.]+ GB/s' out.txt
else
    if [ "$rc" -eq 1 ]; then ok; else bad "csf,fcoo without a GPU: exit $rc, expected 1"; fi
    check "fcoo fails with one line" test "$(grep -c '^tenfold: fcoo double: ' err.txt)" -eq 1 -a "$(wc -l <err.txt)" -eq 1
fi

# --device gpu: runs on a GPU; without one, one line before the file is read
if [ $have_gpu = 1 ]; then
    expect 0 "bench --device gpu" bench mttkrp t.tns --device gpu --format coo,fcoo,blco,auto --precision double,single -r 4 --reps 3 --json g.json
    check "eight GPU runs" test "$(grep -cE '^(coo|fcoo|blco|auto) +(double|single) +all +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+$' out.txt)" -eq 8
    if command -v python3 >/dev/null; then
        check "--json: GPU runs with copy bandwidth and frac" python3 -c '
import json
r = json.load(open("g.json"))
assert r["gpu"]["copy_bandwidth_bytes_per_s"] > 0 and r["gpu"]["name"]
assert len(r["results"]) == 8
for x in r["results"]:
    assert x["ok"] and x["device"] == "gpu" and x["warmup"] == 3 and x["all_modes"]["frac"] > 0
'
    fi
else
    expect_failure "bench --device gpu without a GPU" '^tenfold: --device gpu: (no CUDA device is present|this build of tenfold has no CUDA backend)' \
        bench mttkrp t.tns --device gpu
    expect_failure "only GPU formats without a GPU" '^tenfold: --format fcoo,blco: GPU formats' bench mttkrp missing.tns --format fcoo,blco
    check "nothing on stdout" test ! -s out.txt
fi
finish
