# SPDX-License-Identifier: BSD-3-Clause
# tenfold CLI conventions: --help/--version, usage errors (exit 2, one
# message line + the 'try' line), unknown commands and flags.
source "$(dirname "$0")/lib/common.bash"

# --help and --version at the top level, on stdout, exit 0
for h in --help -h help; do
    expect 0 "tenfold $h" "$h"
    check "tenfold $h prints the command list" grep -q "^  cpd " out.txt
done
expect 0 "tenfold --version" --version
check "--version prints the version" grep -qE '^tenfold [0-9]+\.[0-9]+\.[0-9]+$' out.txt

# every command's --help exits 0 and prints its usage on stdout
for c in cpd check stats convert gen mttkrp info bench complete predict split; do
    expect 0 "tenfold $c --help" "$c" --help
    check "tenfold $c --help starts with usage" grep -q "^usage: tenfold $c" out.txt
    check "tenfold $c --help prints nothing on stderr" test ! -s err.txt
done
expect 0 "tenfold cpd -h" cpd -h

# no command, unknown command, unknown top-level option
expect 2 "tenfold without arguments" 
check "no command: usage on stderr" grep -q '^usage: tenfold' err.txt
for c in frobnicate --frob; do
    expect 2 "tenfold $c" "$c"
    check "tenfold $c: message" grep -qE "^tenfold: unknown (command|option) '$c'" err.txt
    check "tenfold $c: try line" grep -qx "try 'tenfold --help'" err.txt
done

printf '1 1 1 1.5\n2 2 2 2.5\n' > t.tns

# unknown flags
expect_usage cpd t.tns -r 2 --bogus
expect_usage cpd t.tns -r 2 -Q
expect_usage check t.tns --frob
expect_usage stats t.tns --fix x.tns
expect_usage convert t.tns o.tns --format tns
expect_usage gen -o g.tns --dims 2,2 --nnz 2 --density 0.5
expect_usage mttkrp t.tns --mode 1 --factors a,b,c -o o.mat --rank 2
expect_usage info --verbose
expect_usage complete t.tns -r 2 --bogus
expect_usage predict m t.tns -o o.tns --bogus
expect_usage split t.tns -o s --bogus

# missing arguments and option values
expect_usage cpd
expect_usage cpd t.tns
expect_usage cpd t.tns -r
expect_usage cpd t.tns -r 2 --json
expect_usage check
expect_usage stats
expect_usage convert t.tns
expect_usage gen --dims 2,2 --nnz 2
expect_usage gen -o g.tns --nnz 2
expect_usage gen -o g.tns --dims 2,2
expect_usage mttkrp t.tns --factors a,b,c -o o.mat
expect_usage mttkrp t.tns --mode 1 -o o.mat
expect_usage mttkrp t.tns --mode 1 --factors a,b,c
expect_usage complete
expect_usage complete t.tns
expect_usage predict m
expect_usage predict m t.tns
expect_usage split t.tns

# info: version, commit, compiler, BLAS/LAPACK, CUDA (issue 31)
expect 0 "info" info
check "info: version line" grep -qE '^tenfold [0-9]+\.[0-9]+\.[0-9]+$' out.txt
check "info: commit, compiler and BLAS lines" bash -c 'grep -qE "^commit: +[0-9a-f]+|^commit: +unknown" out.txt && grep -qE "^compiler: +[A-Za-z]+ [0-9]" out.txt && grep -qE "^blas: +[^ ]" out.txt'
check "--version agrees with info" bash -c '[ "$("$0" --version)" = "$(head -1 out.txt)" ]' "$TF"
# with the CUDA module: how factor rows go among GPUs (TF_EXCHANGE)
if grep -q '^module: *loaded' out.txt; then
    check "info: the exchange line (auto)" grep -q '^exchange: auto (' out.txt
    TF_EXCHANGE=host "$TF" info >info_x.txt 2>&1
    check "info: TF_EXCHANGE=host says host" grep -q '^exchange: host (' info_x.txt
fi

# distribution is not a format: amped is gone from --format (several GPUs
# come from the context, not the format)
expect_usage cpd t.tns -r 2 --format amped
expect 2 "bench --format amped is a usage error" bench mttkrp t.tns --format fcoo,amped
if "$TF" cpd --help | grep -q amped || "$TF" bench mttkrp --help | grep -q amped; then
    bad "a --help still names amped"
else ok; fi

# too many positional arguments, flags given a value
expect_usage cpd t.tns t.tns -r 2
expect_usage check t.tns t.tns
expect_usage cpd t.tns -r 2 --nowrite=yes

# bad numbers and choices
expect_usage cpd t.tns -r abc
expect_usage cpd t.tns -r 0
expect_usage cpd t.tns -r 16385   # TF_MAX_RANK + 1: a usage error, not a library failure
check "the rank limit is in cpd --help" bash -c "'$TF' cpd --help | grep -q '1\.\.16384'"
expect_usage cpd t.tns -r 2.5
expect_usage cpd t.tns -r -3
expect_usage cpd t.tns -r 2 -i 10x
expect_usage cpd t.tns -r 2 --tol nan
expect_usage cpd t.tns -r 2 --tol -1
expect_usage cpd t.tns -r 2 --seed 99999999999999999999999
expect_usage cpd t.tns -r 2 -t many
expect_usage cpd t.tns -r 2 --device tpu
expect_usage cpd t.tns -r 2 --format xyz
# csf-short (the CSF trees with their fibres by length) is a format of its own
for c in "bench mttkrp" cpd mttkrp; do
    expect 0 "tenfold $c --help" $c --help
    check "tenfold $c --help names csf-short" grep -q "csf-short" out.txt
done
expect 0 "bench --format csf-short" bench mttkrp t.tns --format csf,csf-short --device cpu -r 2 --reps 1 --warmup 0
check "bench --format csf-short runs" grep -qE '^csf-short +double +all ' out.txt
check "bench --format csf-short's plan says so" grep -qE 'cpu csf-short \([0-9]+ of 3 trees by fibre length\)' out.txt
expect_usage cpd t.tns -r 2 --precision half
expect_usage convert t.tns o.x --to foo
expect_usage gen -o g.tns --dims 2,x --nnz 2
expect_usage gen -o g.tns --dims 2 --nnz 2
expect_usage gen -o g.tns --dims 2,2 --nnz 0
expect_usage gen -o g.tns --dims 2,2 --nnz 2 --alpha 1
expect_usage gen -o g.tns --dims 2,2 --nnz 2 --alpha 0.1,0.2,0.3
expect_usage gen -o g.tns --dims 2,2 --nnz 2 --noise 0.1
expect_usage gen -o g.tns --dims 2,2 --nnz 2 --rank two
expect_usage mttkrp t.tns --mode 0 --factors a,b,c -o o.mat
expect_usage mttkrp t.tns --mode 4 --factors a,b,c -o o.mat
expect_usage mttkrp t.tns --mode 1 --factors a,b -o o.mat
expect_usage mttkrp t.tns --mode 1 --factors a,b,c -o o.mat --format blocked

# option spellings: --opt=value, -rVALUE, and '--' before a positional
expect 0 "cpd --rank=2 -i1 --nowrite" cpd t.tns --rank=2 -i1 --nowrite
expect 0 "cpd -- FILE" cpd -r 1 -i 1 --nowrite -- t.tns
no_files "usage errors write nothing" g.tns o.tns o.mat o.x x.tns t.mode1.mat
finish
