# Shared helpers of the CLI shell tests (sourced, not a test itself).
# Arguments of every test: $1 tenfold binary, $2 scratch dir, $3 shared
# data dir, $4 repo data dir. Each test ends with `finish`.
set -u
if [ $# -lt 4 ]; then
    echo "usage: bash $0 TENFOLD SCRATCH SHARED_DATA REPO_DATA" >&2
    exit 2
fi
TF=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SCRATCH=$2
SHARED=$3
REPO=$4
NAME=$(basename "$0" .sh)
if [ ! -x "$TF" ]; then
    echo "$NAME: $TF is not an executable" >&2
    exit 1
fi
rm -rf "$SCRATCH" && mkdir -p "$SCRATCH" && cd "$SCRATCH" || exit 1

pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

# check DESC CMD...: CMD must succeed (exit 0); its output is discarded.
check() {
    local desc=$1; shift
    if "$@" >/dev/null 2>&1; then ok; else bad "$desc"; fi
}

# run_tf ARGS...: runs tenfold, stdout -> out.txt, stderr -> err.txt, exit code -> $rc.
run_tf() {
    "$TF" "$@" >out.txt 2>err.txt
    rc=$?
}

# expect RC DESC ARGS...: runs tenfold with ARGS and checks the exit code.
expect() {
    local want=$1 desc=$2; shift 2
    run_tf "$@"
    if [ "$rc" -eq "$want" ]; then ok; else bad "$desc: exit $rc, expected $want; stderr: $(head -c 300 err.txt)"; fi
}

# expect_usage CMD ARGS...: exit 2, stderr = "tenfold CMD: ..." + "try 'tenfold CMD --help'", nothing on stdout.
expect_usage() {
    local cmd=$1; shift
    local desc="tenfold $cmd $*"
    run_tf "$cmd" "$@"
    if [ "$rc" -ne 2 ]; then bad "$desc: exit $rc, expected 2 (usage); stderr: $(head -c 300 err.txt)"; return; fi
    local first second lines
    first=$(sed -n 1p err.txt); second=$(sed -n 2p err.txt); lines=$(wc -l <err.txt)
    if [[ "$first" != "tenfold $cmd: "* ]]; then bad "$desc: first stderr line is '$first'"; return; fi
    if [ "$second" != "try 'tenfold $cmd --help'" ] || [ "$lines" -ne 2 ]; then
        bad "$desc: expected exactly the 'try' line after the message, got: $(cat err.txt)"; return
    fi
    if [ -s out.txt ]; then bad "$desc: printed on stdout: $(head -c 200 out.txt)"; return; fi
    ok
}

# expect_failure DESC PATTERN ARGS...: exit 1 and one stderr line "tenfold: ..." matching PATTERN (grep -E).
expect_failure() {
    local desc=$1 pattern=$2; shift 2
    run_tf "$@"
    if [ "$rc" -ne 1 ]; then bad "$desc: exit $rc, expected 1; stderr: $(head -c 300 err.txt)"; return; fi
    if [ "$(wc -l <err.txt)" -ne 1 ]; then bad "$desc: expected one stderr line, got: $(cat err.txt)"; return; fi
    if ! grep -q '^tenfold: ' err.txt; then bad "$desc: message does not start with 'tenfold: ': $(cat err.txt)"; return; fi
    if ! grep -qE -- "$pattern" err.txt; then bad "$desc: message does not match /$pattern/: $(cat err.txt)"; return; fi
    ok
}

# no_files DESC GLOB...: none of the globs match (no output, no temporary file left).
no_files() {
    local desc=$1; shift
    local f
    for f in "$@"; do
        if [ -e "$f" ]; then bad "$desc: $f exists"; return; fi
    done
    ok
}

# same_numbers DESC A B TOL: two whitespace-separated numeric files agree
# entrywise to a relative tolerance (|a-b| <= TOL * max(1, |b|)).
same_numbers() {
    local desc=$1 a=$2 b=$3 tol=$4
    if paste -d'\n' <(grep -v '^#' "$a" | tr -s ' \t' '\n\n' | grep -v '^$') \
                    <(grep -v '^#' "$b" | tr -s ' \t' '\n\n' | grep -v '^$') |
        awk -v tol="$tol" 'NR % 2 { x = $1; n++; next }
            { d = x - $1; if (d < 0) d = -d; m = $1 < 0 ? -$1 : $1; if (m < 1) m = 1;
              if (d > tol * m) { bad++ } } END { exit (n == 0 || bad) }'
    then
        local na nb
        na=$(grep -v '^#' "$a" | wc -w); nb=$(grep -v '^#' "$b" | wc -w)
        if [ "$na" -eq "$nb" ]; then ok; else bad "$desc: $na vs $nb numbers"; fi
    else
        bad "$desc: $a and $b differ beyond $tol"
    fi
}

finish() {
    echo "$NAME: $pass passed, $fail failed"
    [ "$fail" -eq 0 ] || exit 1
    exit 0
}
