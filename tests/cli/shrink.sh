# SPDX-License-Identifier: BSD-3-Clause
# Issue 41 item 4: a text file cut short while tenfold reads it (truncate
# while check or cpd reads it) ends in a complete read or one clear error
# line naming the file -- never a signal (a mapped file gave SIGBUS: exit
# 135, 138 on some systems).
source "$(dirname "$0")/lib/common.bash"

"$TF" gen -o big.tns --dims 200000,100000,20000 --nnz 3000000 --alpha 0.7 >/dev/null 2>&1 || bad "gen big.tns"
delays=(0.02 0.05 0.1 0.15 0.2 0.3 0.05 0.1)
shrank=0
for i in "${!delays[@]}"; do
    cp big.tns x.tns
    if [ $((i % 2)) -eq 1 ]; then cmd=(cpd x.tns -r 2 -i 1 --nowrite -q); else cmd=(check x.tns -q); fi
    "$TF" "${cmd[@]}" >out.txt 2>err.txt &
    pid=$!
    sleep "${delays[$i]}"
    truncate -s 1000 x.tns
    wait "$pid"
    rc=$?
    if [ "$rc" -eq 0 ]; then
        ok # read whole before the cut
    elif [ "$rc" -eq 1 ] && [ "$(wc -l <err.txt)" -eq 1 ] && grep -q '^tenfold: x\.tns' err.txt; then
        ok
        grep -q 'x\.tns: the file shrank while it was read (was [0-9]* bytes, ended after [0-9]*)$' err.txt &&
            shrank=$((shrank + 1))
    else
        bad "try $((i + 1)): ${cmd[0]} ended with exit $rc (over 128: a signal): $(head -c 300 err.txt)"
    fi
done
echo "shrink: the reader saw the file shrink in $shrank of ${#delays[@]} tries (the others read it whole or after the cut)"
rm -f big.tns x.tns
finish
